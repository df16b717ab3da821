//! The single-session inputs: one long session per format (Claude Code, Qwen Code, Codex) and
//! nominal size (100 MB, 1 GB, ... times `--scale`), each generated from the seed straight into
//! its tool's store layout below a home folder of its own, so `list --home` finds it where the
//! tool keeps it:
//!
//! - `inputs/claude-<N>MB/home/.claude/projects/<dashed cwd>/<sessionId>.jsonl`
//! - `inputs/qwen-<N>MB/home/.qwen/projects/<dashed cwd>/chats/<sessionId>.jsonl`
//! - `inputs/codex-<N>MB/home/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
//!
//! `input.json` beside `home/` says what was generated; an input is reused when it matches.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::claude::ClaudeGen;
use crate::codex::CodexGen;
use crate::corpus::dashed;
use crate::qwen::QwenGen;
use crate::text::{mix, timestamp};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fmt {
    Claude,
    Qwen,
    Codex,
}

impl Fmt {
    pub const ALL: [Fmt; 3] = [Fmt::Claude, Fmt::Qwen, Fmt::Codex];

    /// The short name used in job ids and folder names.
    pub fn key(self) -> &'static str {
        match self {
            Fmt::Claude => "claude",
            Fmt::Qwen => "qwen",
            Fmt::Codex => "codex",
        }
    }

    /// sessiontool's format name.
    pub fn format(self) -> &'static str {
        match self {
            Fmt::Claude => "claude-jsonl",
            Fmt::Qwen => "qwen-jsonl",
            Fmt::Codex => "codex-jsonl",
        }
    }

    pub fn tool(self) -> &'static str {
        match self {
            Fmt::Claude => "Claude Code",
            Fmt::Qwen => "Qwen Code",
            Fmt::Codex => "Codex CLI",
        }
    }

    /// Bumped whenever the generator's output changes, so an old input is regenerated.
    fn generator(self) -> &'static str {
        match self {
            Fmt::Claude => "claude-jsonl-v1",
            // The same generator as the corpus and the old "big" file.
            Fmt::Qwen => "qwen-jsonl-v1",
            Fmt::Codex => "codex-jsonl-v1",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InputManifest {
    pub generator: String,
    pub format: String,
    pub seed: u64,
    pub scale: f64,
    pub nominal_mb: u64,
    pub bytes: u64,
    /// Lines (every line is one record).
    pub records: u64,
    /// The session file, relative to the input's folder.
    pub file: String,
    pub session_id: String,
    pub cwd: String,
}

pub struct Input {
    pub fmt: Fmt,
    pub nominal_mb: u64,
    /// The home folder holding the tool's store with this one session.
    pub home: PathBuf,
    pub file: PathBuf,
    pub m: InputManifest,
}

impl Input {
    /// `claude-100`: the dataset's name in job ids.
    pub fn key(&self) -> String {
        format!("{}-{}", self.fmt.key(), self.nominal_mb)
    }
}

/// Opens the input for `fmt` at `nominal_mb` (times `scale`), generating it when missing or
/// made with other settings.
pub fn ensure(root: &Path, fmt: Fmt, nominal_mb: u64, seed: u64, scale: f64) -> io::Result<Input> {
    let dir = root
        .join("inputs")
        .join(format!("{}-{nominal_mb}MB", fmt.key()));
    let manifest_path = dir.join("input.json");
    let old: Option<InputManifest> = fs::read(&manifest_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if let Some(m) = old
        && m.generator == fmt.generator()
        && m.seed == seed
        && m.scale == scale
        && fs::metadata(dir.join(&m.file)).is_ok_and(|md| md.len() == m.bytes)
    {
        eprintln!(
            "input: reusing {} ({:.1} MB, {} records)",
            dir.join(&m.file).display(),
            m.bytes as f64 / 1e6,
            m.records
        );
        return Ok(Input {
            fmt,
            nominal_mb,
            home: dir.join("home"),
            file: dir.join(&m.file),
            m,
        });
    }
    if dir.exists() {
        fs::remove_dir_all(&dir)?;
    }
    fs::create_dir_all(&dir)?;
    let target = ((nominal_mb as f64 * 1e6 * scale) as u64).max(64 << 10);
    let started = std::time::Instant::now();
    eprintln!(
        "input: generating a {} session of {:.1} MB into {} ...",
        fmt.tool(),
        target as f64 / 1e6,
        dir.display()
    );
    // One seed per format, the same for every size: a smaller input is the start of a larger.
    let seed_of = |f: u64| mix(seed, u64::MAX - f);
    let m = match fmt {
        Fmt::Claude => {
            let mut g = ClaudeGen::new(seed_of(1));
            let rel = format!(
                "home/.claude/projects/{}/{}.jsonl",
                dashed(&g.cwd),
                g.session_id
            );
            let (bytes, records) = write(&dir.join(&rel), target, |buf| g.turn(buf))?;
            manifest(
                fmt,
                seed,
                scale,
                nominal_mb,
                rel,
                bytes,
                records,
                &g.session_id,
                &g.cwd,
            )
        }
        Fmt::Qwen => {
            // The seed and project of the corpus's old "big" file.
            let mut g = QwenGen::new(mix(seed, u64::MAX), 7);
            let rel = format!(
                "home/.qwen/projects/{}/chats/{}.jsonl",
                dashed(&g.cwd),
                g.session_id
            );
            let (bytes, records) = write(&dir.join(&rel), target, |buf| {
                g.turn(buf);
            })?;
            manifest(
                fmt,
                seed,
                scale,
                nominal_mb,
                rel,
                bytes,
                records,
                &g.session_id,
                &g.cwd,
            )
        }
        Fmt::Codex => {
            let mut g = CodexGen::new(seed_of(3));
            // rollout-2025-10-21T20-02-50-<id>.jsonl in sessions/2025/10/21/ (UTC here).
            let t = timestamp(g.started);
            let (date, time) = (&t[..10], t[11..19].replace(':', "-"));
            let rel = format!(
                "home/.codex/sessions/{}/rollout-{date}T{time}-{}.jsonl",
                date.replace('-', "/"),
                g.session_id
            );
            let (bytes, records) = write(&dir.join(&rel), target, |buf| g.turn(buf))?;
            manifest(
                fmt,
                seed,
                scale,
                nominal_mb,
                rel,
                bytes,
                records,
                &g.session_id,
                &g.cwd,
            )
        }
    };
    fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&m).map_err(io::Error::other)?,
    )?;
    eprintln!(
        "input: {:.1} MB, {} records ({:.1} s)",
        m.bytes as f64 / 1e6,
        m.records,
        started.elapsed().as_secs_f64()
    );
    Ok(Input {
        fmt,
        nominal_mb,
        home: dir.join("home"),
        file: dir.join(&m.file),
        m,
    })
}

#[allow(clippy::too_many_arguments)]
fn manifest(
    fmt: Fmt,
    seed: u64,
    scale: f64,
    nominal_mb: u64,
    file: String,
    bytes: u64,
    records: u64,
    session_id: &str,
    cwd: &str,
) -> InputManifest {
    InputManifest {
        generator: fmt.generator().into(),
        format: fmt.format().into(),
        seed,
        scale,
        nominal_mb,
        bytes,
        records,
        file,
        session_id: session_id.into(),
        cwd: cwd.into(),
    }
}

/// Writes turns from `turn` into `path` until it holds at least `target` bytes (whole turns).
/// Returns (bytes, lines).
fn write(path: &Path, target: u64, mut turn: impl FnMut(&mut Vec<u8>)) -> io::Result<(u64, u64)> {
    fs::create_dir_all(path.parent().expect("has a parent"))?;
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let (mut bytes, mut lines) = (0u64, 0u64);
    let mut buf = Vec::with_capacity(1 << 20);
    while bytes < target {
        buf.clear();
        turn(&mut buf);
        lines += memchr::memchr_iter(b'\n', &buf).count() as u64;
        w.write_all(&buf)?;
        bytes += buf.len() as u64;
    }
    w.flush()?;
    Ok((bytes, lines))
}
