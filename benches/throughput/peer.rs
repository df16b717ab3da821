//! The peer: casr (cross_agent_session_resumer), built from its source outside this repository
//! and given with `--casr PATH`. It converts a session file into another tool's store:
//! `casr resume <target> <session-id> --source <file>` writes below the target tool's home
//! (`CODEX_HOME`, `CLAUDE_HOME`, `GEMINI_HOME`), then reads what it wrote back to verify it.
//! Every run gets an empty home of its own, so nothing reaches the real stores.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Peer {
    pub bin: PathBuf,
    /// `casr 0.3.0 (eb1e4a7 ...)`.
    pub version: String,
    /// Pass casr's own defaults (history capped at 200k tokens, tool outputs at 4,000
    /// characters, reasoning dropped) instead of converting everything.
    pub budget: bool,
}

impl Peer {
    /// The peer at `bin`, or why it cannot run.
    pub fn new(bin: &Path, budget: bool) -> Result<Peer, String> {
        let out = Command::new(bin)
            .arg("--version")
            .output()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        if !out.status.success() {
            return Err(format!("{} --version: {}", bin.display(), out.status));
        }
        Ok(Peer {
            bin: bin.to_path_buf(),
            version: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            budget,
        })
    }

    /// `0.3.0` out of the version line.
    pub fn short_version(&self) -> &str {
        self.version.split_whitespace().nth(1).unwrap_or("?")
    }

    /// The command converting `file` (session `id`) for `target` (`cod`, `gmi`, `cc`).
    pub fn convert_argv(&self, target: &str, id: &str, file: &Path) -> io::Result<Vec<OsString>> {
        let file = std::path::absolute(file)?;
        let mut argv: Vec<OsString> = vec![
            self.bin.clone().into(),
            "resume".into(),
            target.into(),
            id.into(),
            "--source".into(),
            file.into(),
            "--json".into(),
        ];
        if !self.budget {
            // Everything, as sessiontool converts it.
            for a in [
                "--max-context-tokens",
                "0",
                "--max-tool-output",
                "0",
                "--keep-reasoning",
            ] {
                argv.push(a.into());
            }
        }
        Ok(argv)
    }

    /// The environment of a run: every store below `home`.
    pub fn env(home: &Path) -> Vec<(String, String)> {
        let h = |sub: &str| home.join(sub).display().to_string();
        vec![
            ("HOME".into(), home.display().to_string()),
            ("CLAUDE_HOME".into(), h(".claude")),
            ("CODEX_HOME".into(), h(".codex")),
            ("GEMINI_HOME".into(), h(".gemini")),
            ("XDG_CONFIG_HOME".into(), h(".config")),
            ("XDG_DATA_HOME".into(), h(".local/share")),
            ("NO_COLOR".into(), "1".into()),
        ]
    }

    /// The casr sub-command in the tables.
    pub fn label(&self, target: &str) -> String {
        let how = if self.budget {
            "its default budget"
        } else {
            "everything"
        };
        format!(
            "casr {} `resume {target}` (peer, {how})",
            self.short_version()
        )
    }
}
