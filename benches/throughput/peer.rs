//! The peer: casr (cross_agent_session_resumer), built from its source outside this repository.
//! The bench finds it, in this order: `--casr PATH`; `--casr-src DIR` (a clone of its
//! repository, built here with `cargo build --release`); the `CASR` environment variable; `casr`
//! on `PATH`. Without one, every peer row says "peer not built".
//!
//! What casr does that matches a sessiontool job (from its README and `--help`):
//! - one session file to another tool: `casr resume <target> <session-id> --source <file>`
//!   reads the file, converts it, writes it below the target tool's home (`CODEX_HOME`,
//!   `CLAUDE_HOME`, `GEMINI_HOME`) and reads what it wrote back to verify it. Its defaults cut
//!   the history to 200k tokens, tool outputs to 4,000 characters and drop reasoning; the bench
//!   turns that off (`--max-context-tokens 0 --max-tool-output 0 --keep-reasoning`) so both
//!   convert everything, unless `--casr-budget`.
//! - list: `casr list --workspace <project>` reads every session of that project in full.
//!
//! casr has no Qwen Code reader, and for a source and target of the same tool it writes nothing
//! (its pipeline returns before the write): those rows say so instead of a figure.
//! Every run gets an empty home of its own, so nothing reaches the real stores.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming the casr binary.
pub const ENV: &str = "CASR";

pub struct Peer {
    pub bin: PathBuf,
    /// How it was found: `--casr`, `--casr-src DIR`, `$CASR`, `PATH`.
    pub found_by: String,
    /// `casr 0.3.0 (eb1e4a7 ...)`.
    pub version: String,
    /// Pass casr's own defaults (history capped at 200k tokens, tool outputs at 4,000
    /// characters, reasoning dropped) instead of converting everything.
    pub budget: bool,
}

/// Where the peer was looked for, and the outcome: the peer, or why there is none (a message
/// for the report: "peer not built: ...").
pub fn find(bin: Option<&Path>, src: Option<&Path>, budget: bool) -> Result<Option<Peer>, String> {
    if let Some(bin) = bin {
        return Peer::new(bin, "--casr", budget).map(Some);
    }
    if let Some(src) = src {
        let bin = build_from_source(src)?;
        return Peer::new(&bin, &format!("built from {}", src.display()), budget).map(Some);
    }
    if let Some(bin) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        return Peer::new(Path::new(&bin), &format!("${ENV}"), budget).map(Some);
    }
    match on_path("casr") {
        Some(bin) => Peer::new(&bin, "PATH", budget).map(Some),
        None => Ok(None),
    }
}

/// `cargo build --release` in a clone of casr's repository (its own toolchain file picks the
/// compiler); the binary it leaves in `target/release/casr`.
fn build_from_source(src: &Path) -> Result<PathBuf, String> {
    if !src.join("Cargo.toml").is_file() {
        return Err(format!(
            "--casr-src {}: no Cargo.toml (give a clone of cross_agent_session_resumer)",
            src.display()
        ));
    }
    eprintln!("peer: cargo build --release in {} ...", src.display());
    let status = Command::new("cargo")
        .args(["build", "--release", "--bin", "casr"])
        .current_dir(src)
        // The bench runs under `cargo bench`, whose variables would point the build elsewhere.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .status()
        .map_err(|e| format!("--casr-src: cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "--casr-src {}: cargo build --release failed ({status})",
            src.display()
        ));
    }
    Ok(src.join("target/release/casr"))
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl Peer {
    /// The peer at `bin`, or why it cannot run.
    pub fn new(bin: &Path, found_by: &str, budget: bool) -> Result<Peer, String> {
        let out = Command::new(bin)
            .arg("--version")
            .output()
            .map_err(|e| format!("{} ({found_by}): {e}", bin.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} ({found_by}) --version: {}",
                bin.display(),
                out.status
            ));
        }
        Ok(Peer {
            bin: bin.to_path_buf(),
            found_by: found_by.to_string(),
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

    /// The command listing the sessions of project `cwd` (each read in full, as casr does).
    pub fn list_argv(&self, cwd: &str) -> Vec<OsString> {
        vec![
            self.bin.clone().into(),
            "--json".into(),
            "list".into(),
            "--workspace".into(),
            cwd.into(),
        ]
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
    pub fn label(&self, what: &str) -> String {
        let how = if self.budget {
            ", its default budget"
        } else if what.starts_with("resume") {
            ", everything"
        } else {
            ""
        };
        format!("casr {} `{what}` (peer{how})", self.short_version())
    }
}
