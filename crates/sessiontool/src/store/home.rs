//! Where each tool keeps its store: the home folder and the tools' own environment overrides.
//!
//! `Home::from_env` follows the tools: `$HOME`, then each tool's variable when it is set and
//! not empty. `Home::at(dir)` (the command line's `--home DIR`) puts every store under `dir`
//! and ignores those variables, so tests and dry runs never reach the real stores.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The environment variables that move a tool's store, as the tools read them (each tool's
/// module declares its own: [`ToolStore::overrides`](super::tools::ToolStore::overrides)).
pub fn overrides() -> Vec<&'static str> {
    let mut vars: Vec<&'static str> = Vec::new();
    for var in super::tools::all().iter().flat_map(|t| t.overrides()) {
        if !vars.contains(var) {
            vars.push(var);
        }
    }
    vars
}

#[derive(Debug, Clone)]
pub struct Home {
    dir: PathBuf,
    overrides: BTreeMap<&'static str, PathBuf>,
    /// `--home DIR`: nothing outside DIR is looked at, not even where a tool's own
    /// configuration points (Codex's `sqlite_home`).
    isolated: bool,
}

impl Home {
    /// `dir` as the home of every tool, without environment overrides.
    pub fn at(dir: impl Into<PathBuf>) -> Home {
        Home {
            dir: dir.into(),
            overrides: BTreeMap::new(),
            isolated: true,
        }
    }

    /// The user's home (`$HOME`) with the overrides set in the environment; `None` without
    /// a home.
    pub fn from_env() -> Option<Home> {
        let dir = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
        let mut home = Home::at(dir);
        home.isolated = false;
        for var in overrides() {
            if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                home.overrides.insert(var, PathBuf::from(value));
            }
        }
        Some(home)
    }

    /// `--home DIR` when given, else the environment's.
    pub fn from_arg(dir: Option<&Path>) -> Option<Home> {
        match dir {
            Some(dir) => Some(Home::at(dir)),
            None => Home::from_env(),
        }
    }

    /// The same home with one override set (for tests and callers that know better).
    pub fn with_override(mut self, var: &'static str, path: impl Into<PathBuf>) -> Home {
        self.overrides.insert(var, path.into());
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The overrides in force, for messages that say where a store was looked for.
    pub fn overrides(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        self.overrides.iter().map(|(k, v)| (*k, v.as_path()))
    }

    fn var_or(&self, var: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
        self.overrides.get(var).cloned().unwrap_or_else(default)
    }

    /// `~/.gemini` (`$GEMINI_CLI_HOME/.gemini`).
    pub fn gemini(&self) -> PathBuf {
        self.var_or("GEMINI_CLI_HOME", || self.dir.clone())
            .join(".gemini")
    }

    /// `~/.qwen` (`$QWEN_RUNTIME_DIR`).
    pub fn qwen(&self) -> PathBuf {
        self.var_or("QWEN_RUNTIME_DIR", || self.dir.join(".qwen"))
    }

    /// `~/.claude` (`$CLAUDE_CONFIG_DIR`).
    pub fn claude(&self) -> PathBuf {
        self.var_or("CLAUDE_CONFIG_DIR", || self.dir.join(".claude"))
    }

    /// llxprt-code's `tmp` folders, newest layout first: `$LLXPRT_LOG_HOME/tmp` (default
    /// `~/.local/state/llxprt-code/tmp`, v0.10+) and `~/.llxprt/tmp` (v0.9).
    pub fn llxprt_tmps(&self) -> [PathBuf; 2] {
        [
            self.var_or("LLXPRT_LOG_HOME", || {
                self.dir.join(".local/state/llxprt-code")
            })
            .join("tmp"),
            self.dir.join(".llxprt/tmp"),
        ]
    }

    /// `~/.pi/agent` (`$PI_CODING_AGENT_DIR`).
    pub fn pi(&self) -> PathBuf {
        self.var_or("PI_CODING_AGENT_DIR", || self.dir.join(".pi/agent"))
    }

    /// `~/.codex` (`$CODEX_HOME`).
    pub fn codex(&self) -> PathBuf {
        self.var_or("CODEX_HOME", || self.dir.join(".codex"))
    }

    /// Where Codex keeps its SQLite databases when `$CODEX_SQLITE_HOME` says so.
    pub fn codex_sqlite_home(&self) -> Option<PathBuf> {
        self.overrides.get("CODEX_SQLITE_HOME").cloned()
    }

    /// Whether only this home's folder may be looked at (`--home DIR`).
    pub fn isolated(&self) -> bool {
        self.isolated
    }

    /// The Go agent's folder, `$XDG_CONFIG_HOME/agent` (default `~/.config/agent`).
    pub fn agent(&self) -> PathBuf {
        self.var_or("XDG_CONFIG_HOME", || self.dir.join(".config"))
            .join("agent")
    }

    /// `~/.simple-agent`.
    pub fn simple_agent(&self) -> PathBuf {
        self.dir.join(".simple-agent")
    }

    /// OpenCode's data folder, `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`),
    /// where its databases are (`opencode.db`, `opencode-<channel>.db`).
    pub fn opencode(&self) -> PathBuf {
        self.var_or("XDG_DATA_HOME", || self.dir.join(".local/share"))
            .join("opencode")
    }

    /// The database `$OPENCODE_DB` names, as OpenCode resolves it (an absolute path, or one
    /// relative to its data folder); `None` when it is not set or is `:memory:`.
    pub fn opencode_db_override(&self) -> Option<PathBuf> {
        let db = self.overrides.get("OPENCODE_DB")?;
        if db.as_os_str() == ":memory:" {
            return None;
        }
        Some(match db.is_absolute() {
            true => db.clone(),
            false => self.opencode().join(db),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_at_ignores_overrides_and_with_override_sets_one() {
        let home = Home::at("/h");
        assert_eq!(home.gemini(), Path::new("/h/.gemini"));
        assert_eq!(home.qwen(), Path::new("/h/.qwen"));
        assert_eq!(home.claude(), Path::new("/h/.claude"));
        assert_eq!(home.pi(), Path::new("/h/.pi/agent"));
        assert_eq!(home.codex(), Path::new("/h/.codex"));
        assert_eq!(home.agent(), Path::new("/h/.config/agent"));
        assert_eq!(home.simple_agent(), Path::new("/h/.simple-agent"));
        assert_eq!(home.opencode(), Path::new("/h/.local/share/opencode"));
        assert_eq!(home.opencode_db_override(), None);
        assert_eq!(
            home.llxprt_tmps(),
            [
                PathBuf::from("/h/.local/state/llxprt-code/tmp"),
                PathBuf::from("/h/.llxprt/tmp")
            ]
        );
        let home = home
            .with_override("GEMINI_CLI_HOME", "/g")
            .with_override("CODEX_HOME", "/c")
            .with_override("LLXPRT_LOG_HOME", "/l");
        assert_eq!(home.gemini(), Path::new("/g/.gemini"));
        assert_eq!(home.codex(), Path::new("/c"));
        assert_eq!(home.llxprt_tmps()[0], Path::new("/l/tmp"));
        let home = home
            .with_override("XDG_DATA_HOME", "/d")
            .with_override("OPENCODE_DB", "alt.db");
        assert_eq!(home.opencode(), Path::new("/d/opencode"));
        assert_eq!(
            home.opencode_db_override().unwrap(),
            Path::new("/d/opencode/alt.db")
        );
    }
}
