//! The home the tools keep their stores under: its folder and the tools' environment overrides
//! in force. Which variables a tool reads and which folders it keeps are its module's to say
//! ([`ToolStore::overrides`], [`ToolStore::folder`]); `Home` names no tool.
//!
//! `Home::from_env` follows the tools: `$HOME`, then each tool's variable when it is set and
//! not empty. `Home::at(dir)` (the command line's `--home DIR`) puts every store under `dir`
//! and ignores those variables, so tests and dry runs never reach the real stores.
//!
//! [`ToolStore::overrides`]: super::tools::ToolStore::overrides
//! [`ToolStore::folder`]: super::tools::ToolStore::folder

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

    /// The folder the environment variable `var` names, when it is one of the overrides in
    /// force (a tool's module reads its own variables:
    /// [`ToolStore::overrides`](super::tools::ToolStore::overrides)).
    pub fn override_of(&self, var: &str) -> Option<&Path> {
        self.overrides.get(var).map(PathBuf::as_path)
    }

    /// The folder `var` names when it is set, else `default` (a folder under [`dir`](Home::dir)).
    pub fn override_or(&self, var: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
        self.override_of(var)
            .map(Path::to_path_buf)
            .unwrap_or_else(default)
    }

    /// Whether only this home's folder may be looked at (`--home DIR`).
    pub fn isolated(&self) -> bool {
        self.isolated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each tool's folders under a home, moved by its variables: `tools`' tests.
    #[test]
    fn home_at_ignores_the_environment_and_with_override_sets_one() {
        let home = Home::at("/h");
        assert!(home.isolated());
        assert_eq!(home.overrides().count(), 0);
        assert_eq!(home.override_of("CODEX_HOME"), None);
        assert_eq!(
            home.override_or("CODEX_HOME", || home.dir().join(".codex")),
            Path::new("/h/.codex")
        );
        let home = home.with_override("CODEX_HOME", "/c");
        assert_eq!(home.override_of("CODEX_HOME"), Some(Path::new("/c")));
        assert_eq!(
            home.override_or("CODEX_HOME", || unreachable!()),
            Path::new("/c")
        );
        assert_eq!(home.override_of("CLAUDE_CONFIG_DIR"), None);
        assert_eq!(
            home.overrides().collect::<Vec<_>>(),
            [("CODEX_HOME", Path::new("/c"))]
        );
    }
}
