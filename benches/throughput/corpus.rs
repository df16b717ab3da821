//! The benchmark corpus: realistic Qwen Code session JSONL (FORMATS.md section 5), generated
//! from a seed so every machine benchmarks the same bytes.
//!
//! Layout below the corpus folder:
//! - `home/.qwen/projects/<dashed cwd>/chats/<sessionId>.jsonl`: ~2,000 sessions of mixed sizes
//!   (most small, some multi-MB), a few of them damaged (torn tail, glued records, NUL padding),
//!   laid out as Qwen Code's store in a home folder (`list --home`);
//! - `manifest.json`: what was generated; the corpus is reused when it matches;
//! - `inputs/`: the single-session inputs (`sessions.rs`).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::qwen::QwenGen;
use crate::text::{Rng, mix};

/// Bumped whenever the generator changes its output, so an old corpus is regenerated.
const GENERATOR: &str = "qwen-corpus-v2";
const MARKER: &str = ".sessiontool-bench-corpus";
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Full-size corpus: files and total bytes.
const FULL_FILES: f64 = 2000.0;
const FULL_BYTES: f64 = GIB;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Manifest {
    pub generator: String,
    pub seed: u64,
    pub scale: f64,
    pub files: usize,
    pub corpus_bytes: u64,
    /// Complete records written to the corpus (lines, counting each of two glued records).
    pub corpus_records: u64,
    /// Damaged corpus files: (path relative to `home/.qwen/`, what was done to it).
    pub damaged: Vec<(String, String)>,
}

pub struct Corpus {
    pub root: PathBuf,
    pub manifest: Manifest,
}

impl Corpus {
    /// The home folder whose `.qwen` store holds the corpus.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.home().join(".qwen")
    }

    /// Every corpus file with its size, sorted by path.
    pub fn session_files(&self) -> io::Result<Vec<(PathBuf, u64)>> {
        list_files(&self.sessions_dir())
    }

    /// Whether a corpus file (absolute, below `home/.qwen/`) is one of the damaged ones.
    pub fn is_damaged(&self, path: &Path) -> bool {
        let rel = path.strip_prefix(self.sessions_dir()).unwrap_or(path);
        let rel = rel.to_string_lossy();
        self.manifest.damaged.iter().any(|(p, _)| *p == rel)
    }
}

/// Opens the corpus in `root`, generating it first when it is missing or was made with other
/// settings. Refuses to touch a non-empty folder that is not a corpus.
pub fn ensure(root: &Path, seed: u64, scale: f64) -> io::Result<Corpus> {
    if let Some(m) = read_manifest(root)
        && m.generator == GENERATOR
        && m.seed == seed
        && m.scale == scale
        && on_disk_matches(root, &m)
    {
        eprintln!(
            "corpus: reusing {} ({} files, {:.1} MB)",
            root.display(),
            m.files,
            m.corpus_bytes as f64 / 1e6,
        );
        return Ok(Corpus {
            root: root.to_path_buf(),
            manifest: m,
        });
    }
    if root.exists() && !root.join(MARKER).exists() && fs::read_dir(root)?.next().is_some() {
        return Err(io::Error::other(format!(
            "{} exists, is not empty and is not a benchmark corpus; pick another --corpus",
            root.display()
        )));
    }
    fs::create_dir_all(root)?;
    File::create(root.join(MARKER))?;
    let _ = fs::remove_file(root.join("manifest.json"));
    for sub in ["home", "sessions", "big", "convert-subset"] {
        let p = root.join(sub);
        if p.exists() {
            fs::remove_dir_all(&p)?;
        }
    }
    let started = std::time::Instant::now();
    eprintln!(
        "corpus: generating into {} (seed {seed}, scale {scale}) ...",
        root.display()
    );
    let manifest = generate(root, seed, scale)?;
    fs::write(
        root.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).map_err(io::Error::other)?,
    )?;
    eprintln!(
        "corpus: {} files, {:.1} MB, {} records ({:.1} s)",
        manifest.files,
        manifest.corpus_bytes as f64 / 1e6,
        manifest.corpus_records,
        started.elapsed().as_secs_f64()
    );
    Ok(Corpus {
        root: root.to_path_buf(),
        manifest,
    })
}

fn read_manifest(root: &Path) -> Option<Manifest> {
    let bytes = fs::read(root.join("manifest.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn on_disk_matches(root: &Path, m: &Manifest) -> bool {
    let Ok(files) = list_files(&root.join("home/.qwen")) else {
        return false;
    };
    let bytes: u64 = files.iter().map(|(_, n)| n).sum();
    files.len() == m.files && bytes == m.corpus_bytes
}

pub fn list_files(dir: &Path) -> io::Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_file() {
            let len = entry.metadata().map_err(io::Error::other)?.len();
            out.push((entry.into_path(), len));
        }
    }
    Ok(out)
}

// ----------------------------------------------------------------------------------------------
// Generation

struct FileOut {
    rel: String,
    bytes: u64,
    records: u64,
    damage: Option<&'static str>,
}

fn generate(root: &Path, seed: u64, scale: f64) -> io::Result<Manifest> {
    let n_files = ((FULL_FILES * scale).round() as usize).max(8);
    let total = FULL_BYTES * scale;
    // Sizes: most sessions small, some medium, a few multi-MB; scaled to the total.
    let mut rng = Rng::new(seed);
    let mut sizes: Vec<f64> = (0..n_files)
        .map(|_| {
            let r = rng.unit();
            if r < 0.80 {
                rng.log_range(8e3, 250e3)
            } else if r < 0.97 {
                rng.log_range(250e3, 2.5e6)
            } else {
                rng.log_range(2.5e6, 25e6)
            }
        })
        .collect();
    let sum: f64 = sizes.iter().sum();
    for s in &mut sizes {
        *s *= total / sum;
    }
    let sessions = root.join("home/.qwen");
    let outs: Vec<FileOut> = sizes
        .par_iter()
        .enumerate()
        .map(|(i, &size)| write_session_file(&sessions, seed, i as u64, size as u64))
        .collect::<io::Result<_>>()?;

    Ok(Manifest {
        generator: GENERATOR.into(),
        seed,
        scale,
        files: outs.len(),
        corpus_bytes: outs.iter().map(|o| o.bytes).sum(),
        corpus_records: outs.iter().map(|o| o.records).sum(),
        damaged: outs
            .iter()
            .filter_map(|o| o.damage.map(|d| (o.rel.clone(), d.to_string())))
            .collect(),
    })
}

fn write_session_file(dir: &Path, seed: u64, index: u64, size: u64) -> io::Result<FileOut> {
    let mut g = QwenGen::new(mix(seed, index), index);
    let mut buf = Vec::with_capacity(size as usize + 64 * 1024);
    let mut records = 0;
    while (buf.len() as u64) < size {
        records += g.turn(&mut buf);
    }
    // A few damaged files, as a crash leaves them (FORMATS.md section 12).
    let damage = match index % 197 {
        13 => Some("torn tail"),
        41 => Some("glued records"),
        77 => Some("NUL padding"),
        _ => None,
    };
    match damage {
        Some("torn tail") => {
            // Cut the last line in the middle: no newline, not valid JSON.
            let last_start = line_starts(&buf).last().copied().unwrap_or(0);
            let cut = last_start + (buf.len() - last_start) / 2;
            buf.truncate(cut);
            records -= 1;
        }
        Some("glued records") => {
            // Two records on one line (`}{`), and a torn record with the next one appended.
            let starts = line_starts(&buf);
            if starts.len() >= 6 {
                let a = starts[starts.len() / 3];
                buf.remove(a - 1);
                let starts = line_starts(&buf);
                let b = starts[2 * starts.len() / 3];
                let prev = starts[starts.iter().position(|&s| s == b).unwrap() - 1];
                let keep = prev + (b - prev) / 2;
                buf.drain(keep..b);
                records -= 1;
            }
        }
        Some("NUL padding") => {
            let n = 4096 * (1 + g.t.rng.below(16) as usize);
            buf.resize(buf.len() + n, 0);
        }
        _ => {}
    }
    let rel = format!("projects/{}/chats/{}.jsonl", dashed(&g.cwd), g.session_id);
    let path = dir.join(&rel);
    fs::create_dir_all(path.parent().expect("has a parent"))?;
    fs::write(&path, &buf)?;
    Ok(FileOut {
        rel,
        bytes: buf.len() as u64,
        records,
        damage,
    })
}

fn line_starts(buf: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        memchr::memchr_iter(b'\n', buf)
            .map(|i| i + 1)
            .filter(|&i| i < buf.len()),
    );
    v
}

/// Qwen Code's project folder name: every character outside `[a-zA-Z0-9]` becomes `-`.
pub fn dashed(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}
