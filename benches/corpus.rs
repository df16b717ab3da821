//! The benchmark corpus: realistic Qwen Code session JSONL (FORMATS.md section 5), generated
//! from a seed so every machine benchmarks the same bytes.
//!
//! Layout below the corpus folder:
//! - `sessions/projects/<dashed cwd>/chats/<sessionId>.jsonl`: ~2,000 sessions of mixed sizes
//!   (most small, some multi-MB), a few of them damaged (torn tail, glued records, NUL padding);
//! - `big/<sessionId>.jsonl`: one long session of about 1 GiB;
//! - `manifest.json`: what was generated; the corpus is reused when it matches.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Bumped whenever the generator changes its output, so an old corpus is regenerated.
const GENERATOR: &str = "qwen-jsonl-v1";
const MARKER: &str = ".sessiontool-bench-corpus";
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Full-size corpus: files and total bytes; the big file is as large again.
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
    pub big_file: String,
    pub big_bytes: u64,
    pub big_records: u64,
    /// Damaged corpus files: (path relative to `sessions/`, what was done to it).
    pub damaged: Vec<(String, String)>,
}

pub struct Corpus {
    pub root: PathBuf,
    pub manifest: Manifest,
}

impl Corpus {
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn big_file(&self) -> PathBuf {
        self.root.join(&self.manifest.big_file)
    }

    /// Every corpus file with its size, sorted by path.
    pub fn session_files(&self) -> io::Result<Vec<(PathBuf, u64)>> {
        list_files(&self.sessions_dir())
    }

    /// Whether a corpus file (absolute, below `sessions/`) is one of the damaged ones.
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
            "corpus: reusing {} ({} files, {:.1} MB + big file {:.1} MB)",
            root.display(),
            m.files,
            m.corpus_bytes as f64 / 1e6,
            m.big_bytes as f64 / 1e6
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
    for sub in ["sessions", "big", "convert-subset"] {
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
        "corpus: {} files, {:.1} MB, {} records; big file {:.1} MB, {} records ({:.1} s)",
        manifest.files,
        manifest.corpus_bytes as f64 / 1e6,
        manifest.corpus_records,
        manifest.big_bytes as f64 / 1e6,
        manifest.big_records,
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
    let Ok(files) = list_files(&root.join("sessions")) else {
        return false;
    };
    let bytes: u64 = files.iter().map(|(_, n)| n).sum();
    let big = fs::metadata(root.join(&m.big_file)).map(|md| md.len()).ok();
    files.len() == m.files && bytes == m.corpus_bytes && big == Some(m.big_bytes)
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
    let sessions = root.join("sessions");
    let outs: Vec<FileOut> = sizes
        .par_iter()
        .enumerate()
        .map(|(i, &size)| write_session_file(&sessions, seed, i as u64, size as u64))
        .collect::<io::Result<_>>()?;

    let big_dir = root.join("big");
    fs::create_dir_all(&big_dir)?;
    let mut g = SessionGen::new(mix(seed, u64::MAX), 7);
    let big_name = format!("big/{}.jsonl", g.session_id);
    let mut w = BufWriter::with_capacity(1 << 20, File::create(root.join(&big_name))?);
    let target = (total as u64).max(1 << 20);
    let (mut big_bytes, mut big_records) = (0u64, 0u64);
    let mut buf = Vec::with_capacity(1 << 20);
    while big_bytes < target {
        buf.clear();
        big_records += g.turn(&mut buf);
        w.write_all(&buf)?;
        big_bytes += buf.len() as u64;
    }
    w.flush()?;

    Ok(Manifest {
        generator: GENERATOR.into(),
        seed,
        scale,
        files: outs.len(),
        corpus_bytes: outs.iter().map(|o| o.bytes).sum(),
        corpus_records: outs.iter().map(|o| o.records).sum(),
        big_file: big_name,
        big_bytes,
        big_records,
        damaged: outs
            .iter()
            .filter_map(|o| o.damage.map(|d| (o.rel.clone(), d.to_string())))
            .collect(),
    })
}

fn write_session_file(dir: &Path, seed: u64, index: u64, size: u64) -> io::Result<FileOut> {
    let mut g = SessionGen::new(mix(seed, index), index);
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
            let n = 4096 * (1 + g.rng.below(16) as usize);
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
fn dashed(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

// ----------------------------------------------------------------------------------------------
// A tiny seeded PRNG (xorshift64*, seeded through splitmix64).

fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(mix(seed, 0x5EED) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

// ----------------------------------------------------------------------------------------------
// One session: turns of user prompt, assistant records with thoughts and tool calls, tool
// results, system records; the occasional rewind makes a branch.

const PROJECTS: &[(&str, &str)] = &[
    ("/home/dana/projects/pomodoro", "fix/timer-tests"),
    (
        "/Users/andy/workspace/projects/qwen-code",
        "feat/session-management",
    ),
    ("/home/李明/项目/番茄钟", "功能/声音"),
    ("/srv/app/backend", "main"),
    ("/home/sam/src/rust-analyzer-plugins", "perf/interning"),
    ("/Users/maría/dev/tienda-web", "develop"),
    ("/home/ci/work/monorepo/packages/core", "release/2.3"),
    (
        "/home/dana/projects/pomodoro/.worktrees/sound",
        "feat/sound",
    ),
    ("/opt/data/pipelines", "main"),
    ("/home/kenji/コード/ゲーム", "main"),
    ("C:/Users/Olek/Projects/invoice-gen", "bugfix/rounding"),
    ("/home/user/projects/api-gateway", "feat/rate-limit"),
];
const VERSIONS: &[&str] = &["0.4.1", "0.5.2", "0.15.6", "2.0.43"];
const MODELS: &[&str] = &["qwen3-coder-plus", "qwen3-coder-flash", "qwen3-max"];
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "test", "function", "file", "value", "should", "update", "timer", "config", "error",
    "return", "module", "import", "async", "handler", "request", "response", "session", "record",
    "parse", "branch", "commit", "build", "tests", "pass", "fails", "because", "which", "when",
    "then", "we", "I", "will", "check", "first", "let", "me", "look", "at", "this", "that", "it",
    "is", "a", "to", "of", "and", "in", "for", "with", "on", "from", "now", "instead", "state",
    "component", "render", "cache", "index", "query", "database", "migration", "schema", "field",
    "type", "interface", "struct", "trait", "closure", "iterator", "buffer", "stream", "socket",
    "timeout", "retry", "logger", "warning", "deprecated", "refactor", "rename", "extract",
    "inline", "the", "a", "is", "to", "and", "of", "in", "that", "it", "can", "not", "be",
];
#[rustfmt::skip]
const CJK: &[&str] = &[
    "计时器", "测试", "文件", "修复", "提交", "分支", "会话", "记录", "错误", "函数", "配置",
    "请", "帮我", "检查", "一下", "我们", "需要", "运行", "通过", "失败", "，", "。", "的", "了",
    "テスト", "ファイル", "修正", "してください",
];
#[rustfmt::skip]
const SPICE: &[&str] = &[
    "🍅", "⏱️", "👍🏽", "✅", "❌", "🚀", "💪🏾", "☕", "café", "naïve", "Größe", "Ελληνικά",
    "привет", "مرحبا", "שלום", "𝄞", "—", "…", "→", "“quoted”", "e\u{301}",
];
#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "remaining", "endAt", "phase", "config", "items", "result", "ctx", "opts", "handler", "buf",
    "session_id", "parentUuid", "records", "path", "value", "count", "tick", "state", "retries",
];
#[rustfmt::skip]
const FILES: &[&str] = &[
    "src/timer.js", "src/app.ts", "src/lib.rs", "src/main.rs", "test/timer.test.js",
    "packages/core/src/services/chatRecordingService.ts", "README.md", "package.json",
    "Cargo.toml", "src/records/jsonl.rs", "api/handlers/users.go", "scripts/deploy.sh",
];

struct SessionGen {
    rng: Rng,
    session_id: String,
    cwd: String,
    version: &'static str,
    branch: &'static str,
    model: &'static str,
    /// Milliseconds since the Unix epoch.
    now: u64,
    last: Option<String>,
    /// Recent record ids, for rewinds (branches).
    recent: Vec<String>,
    prompt_tokens: u64,
    calls: u64,
    /// The tool name and file of the call awaiting its result.
    pending_tool: Option<(&'static str, String)>,
    cjk: bool,
}

impl SessionGen {
    fn new(seed: u64, index: u64) -> SessionGen {
        let mut rng = Rng::new(seed);
        let session_id = uuid(&mut rng);
        let (cwd, branch) = PROJECTS[(index as usize * 7 + rng.below(3) as usize) % PROJECTS.len()];
        let cjk = cwd.contains("李明") || cwd.contains("コード") || rng.chance(0.05);
        SessionGen {
            session_id,
            cwd: cwd.to_string(),
            version: rng.pick(VERSIONS),
            branch,
            model: rng.pick(MODELS),
            // Somewhere in 2025.
            now: 1_735_689_600_000 + rng.below(330 * 86_400_000),
            last: None,
            recent: Vec::new(),
            prompt_tokens: rng.range(6_000, 14_000),
            calls: 0,
            pending_tool: None,
            cjk,
            rng,
        }
    }

    /// Appends one turn (user prompt, model work, answer) as JSONL; returns the record count.
    fn turn(&mut self, out: &mut Vec<u8>) -> u64 {
        let mut n = 0;
        if self.last.is_none() {
            if self.rng.chance(0.3) {
                self.system_slash(out, "/init");
                n += 2;
            }
        } else if self.rng.chance(0.015) && self.recent.len() > 4 {
            self.system_rewind(out);
            n += 1;
        } else if self.rng.chance(0.01) {
            self.system_compression(out);
            n += 1;
        }
        self.user(out);
        n += 1;
        let steps = match self.rng.below(10) {
            0..=2 => 0,
            3..=6 => self.rng.range(1, 3),
            _ => self.rng.range(3, 9),
        };
        for _ in 0..steps {
            n += self.assistant(out, true);
            n += self.tool_result(out);
        }
        n += self.assistant(out, false);
        if self.rng.chance(0.35) {
            self.system_telemetry(out);
            n += 1;
        }
        if self.rng.chance(0.03) {
            self.system_title(out);
            n += 1;
        }
        n
    }

    // -- record envelope ------------------------------------------------------------------------

    /// Writes `{"uuid":..,"parentUuid":..,...,"gitBranch":..` (unclosed) and advances the chain.
    fn open(&mut self, out: &mut Vec<u8>, ty: &str, subtype: Option<&str>) -> String {
        let id = uuid(&mut self.rng);
        let parent = self.last.clone();
        self.open_with(out, &id, parent.as_deref(), ty, subtype);
        self.advance(id.clone());
        id
    }

    fn open_with(
        &mut self,
        out: &mut Vec<u8>,
        id: &str,
        parent: Option<&str>,
        ty: &str,
        subtype: Option<&str>,
    ) {
        self.now += self.rng.range(5, 40_000);
        out.extend_from_slice(b"{\"uuid\":\"");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b"\",\"parentUuid\":");
        match parent {
            Some(p) => jstr(out, p),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"sessionId\":\"");
        out.extend_from_slice(self.session_id.as_bytes());
        out.extend_from_slice(b"\",\"timestamp\":\"");
        out.extend_from_slice(timestamp(self.now).as_bytes());
        out.extend_from_slice(b"\",\"type\":");
        jstr(out, ty);
        if let Some(s) = subtype {
            out.extend_from_slice(b",\"subtype\":");
            jstr(out, s);
        }
        out.extend_from_slice(b",\"cwd\":");
        jstr(out, &self.cwd);
        out.extend_from_slice(b",\"version\":");
        jstr(out, self.version);
        out.extend_from_slice(b",\"gitBranch\":");
        jstr(out, self.branch);
    }

    fn advance(&mut self, id: String) {
        if self.recent.len() >= 64 {
            self.recent.drain(..32);
        }
        self.recent.push(id.clone());
        self.last = Some(id);
    }

    // -- records --------------------------------------------------------------------------------

    fn user(&mut self, out: &mut Vec<u8>) {
        self.open(out, "user", None);
        out.extend_from_slice(b",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":");
        let len = if self.rng.chance(0.05) {
            // A pasted stack trace or file.
            self.rng.log_range(1_500.0, 12_000.0) as usize
        } else {
            self.rng.log_range(20.0, 600.0) as usize
        };
        let text = if len > 1_500 {
            let mut t = self.prose(120);
            t.push_str("\n\n```\n");
            t.push_str(&self.code(len));
            t.push_str("```\n");
            t
        } else {
            self.prose(len)
        };
        jstr(out, &text);
        out.extend_from_slice(b"}]}}\n");
        self.prompt_tokens += (len as u64) / 3 + 20;
    }

    /// An assistant record: thought, text, maybe a function call; usage metadata. Returns the
    /// number of records (a streamed answer is sometimes split over records sharing one uuid).
    fn assistant(&mut self, out: &mut Vec<u8>, call: bool) -> u64 {
        let mut n = 1;
        let thought = self.rng.chance(0.6).then(|| {
            let len = self.rng.log_range(60.0, 900.0) as usize;
            self.prose(len)
        });
        let id = uuid(&mut self.rng);
        let parent = self.last.clone();
        if let Some(t) = &thought
            && self.rng.chance(0.04)
        {
            // Qwen writes the thought first, then the rest under the same uuid.
            self.open_with(out, &id, parent.as_deref(), "assistant", None);
            out.extend_from_slice(b",\"model\":");
            jstr(out, self.model);
            out.extend_from_slice(b",\"message\":{\"role\":\"model\",\"parts\":[{\"text\":");
            jstr(out, t);
            out.extend_from_slice(b",\"thought\":true}]}}\n");
            n += 1;
        }
        self.open_with(out, &id, parent.as_deref(), "assistant", None);
        self.advance(id);
        out.extend_from_slice(b",\"model\":");
        jstr(out, self.model);
        out.extend_from_slice(b",\"message\":{\"role\":\"model\",\"parts\":[");
        let mut first = true;
        if let Some(t) = &thought
            && n == 1
        {
            out.extend_from_slice(b"{\"text\":");
            jstr(out, t);
            out.extend_from_slice(b",\"thought\":true}");
            first = false;
        }
        if !call || self.rng.chance(0.5) {
            if !first {
                out.push(b',');
            }
            let len = if call {
                self.rng.log_range(20.0, 200.0)
            } else {
                self.rng.log_range(40.0, 1_800.0)
            } as usize;
            let mut text = self.prose(len);
            if !call && self.rng.chance(0.15) {
                text.push_str("\n\n```\n");
                let len = self.rng.log_range(200.0, 3_000.0) as usize;
                text.push_str(&self.code(len));
                text.push_str("```");
            }
            out.extend_from_slice(b"{\"text\":");
            jstr(out, &text);
            out.push(b'}');
            first = false;
        }
        if call {
            if !first {
                out.push(b',');
            }
            self.calls += 1;
            let (name, args) = self.tool_call();
            out.extend_from_slice(b"{\"functionCall\":{\"id\":\"");
            out.extend_from_slice(self.call_id().as_bytes());
            out.extend_from_slice(b"\",\"name\":");
            jstr(out, name);
            out.extend_from_slice(b",\"args\":");
            out.extend_from_slice(args.as_bytes());
            out.extend_from_slice(b"}}");
        }
        out.extend_from_slice(b"]}");
        let candidates = self.rng.range(20, 900);
        let cached = self.prompt_tokens - self.prompt_tokens % 256;
        let thoughts = thought.as_ref().map(|t| t.len() as u64 / 4);
        let total = self.prompt_tokens + candidates + thoughts.unwrap_or(0);
        out.extend_from_slice(
            format!(
                ",\"usageMetadata\":{{\"promptTokenCount\":{},\"candidatesTokenCount\":{},\
                 \"totalTokenCount\":{},\"cachedContentTokenCount\":{}",
                self.prompt_tokens, candidates, total, cached
            )
            .as_bytes(),
        );
        if let Some(t) = thoughts {
            out.extend_from_slice(format!(",\"thoughtsTokenCount\":{t}").as_bytes());
        }
        out.extend_from_slice(b"},\"contextWindowSize\":1000000}\n");
        self.prompt_tokens += candidates;
        n
    }

    fn call_id(&self) -> String {
        format!("call_{:016x}", mix(self.now, self.calls))
    }

    /// The tool of the current call and its `args` object (JSON).
    fn tool_call(&mut self) -> (&'static str, String) {
        let file = format!("{}/{}", self.cwd, self.rng.pick(FILES));
        let mut args = Vec::new();
        let name = match self.rng.below(20) {
            0..=6 => {
                args.extend_from_slice(b"{\"absolute_path\":");
                jstr(&mut args, &file);
                args.push(b'}');
                "read_file"
            }
            7..=11 => {
                let cmd = self.rng.pick(&[
                    "npm test",
                    "cargo test --workspace",
                    "git status --short",
                    "go test ./...",
                    "ls -la src",
                    "grep -rn \"TODO\" src | head -20",
                    "python3 -m pytest -q tests/",
                ]);
                args.extend_from_slice(b"{\"command\":");
                jstr(&mut args, cmd);
                args.extend_from_slice(b",\"description\":");
                let d = self.prose(40);
                jstr(&mut args, &d);
                args.push(b'}');
                "run_shell_command"
            }
            12..=14 => {
                let (old_len, new_len) = (
                    self.rng.log_range(40.0, 1_000.0) as usize,
                    self.rng.log_range(40.0, 1_200.0) as usize,
                );
                args.extend_from_slice(b"{\"file_path\":");
                jstr(&mut args, &file);
                args.extend_from_slice(b",\"old_string\":");
                let s = self.code(old_len);
                jstr(&mut args, &s);
                args.extend_from_slice(b",\"new_string\":");
                let s = self.code(new_len);
                jstr(&mut args, &s);
                args.push(b'}');
                "replace"
            }
            15 => {
                args.extend_from_slice(b"{\"file_path\":");
                jstr(&mut args, &file);
                args.extend_from_slice(b",\"content\":");
                let len = self.rng.log_range(200.0, 6_000.0) as usize;
                let s = self.code(len);
                jstr(&mut args, &s);
                args.push(b'}');
                "write_file"
            }
            16..=17 => {
                args.extend_from_slice(b"{\"pattern\":");
                let p = format!("{}\\s*\\(", self.rng.pick(IDENTS));
                jstr(&mut args, &p);
                args.extend_from_slice(b",\"path\":");
                jstr(&mut args, &self.cwd);
                args.push(b'}');
                "search_file_content"
            }
            18 => {
                args.extend_from_slice(b"{\"path\":");
                jstr(&mut args, &self.cwd);
                args.push(b'}');
                "list_directory"
            }
            _ => {
                args.extend_from_slice(b"{\"todos\":[");
                for i in 0..self.rng.range(2, 6) {
                    if i > 0 {
                        args.push(b',');
                    }
                    let c = self.prose(60);
                    args.extend_from_slice(
                        format!("{{\"id\":\"{}\",\"content\":", i + 1).as_bytes(),
                    );
                    jstr(&mut args, &c);
                    let st = self.rng.pick(&["pending", "in_progress", "completed"]);
                    args.extend_from_slice(format!(",\"status\":\"{st}\"}}").as_bytes());
                }
                args.extend_from_slice(b"]}");
                "todo_write"
            }
        };
        // Remember the name for the result record.
        self.pending_tool = Some((name, file));
        (name, String::from_utf8(args).expect("valid UTF-8"))
    }

    fn tool_result(&mut self, out: &mut Vec<u8>) -> u64 {
        let (name, file) = self
            .pending_tool
            .take()
            .unwrap_or(("read_file", String::new()));
        let call_id = self.call_id();
        let error = self.rng.chance(0.06);
        let (output, display) = if error {
            let e = format!("File not found: {file}");
            (e.clone(), e)
        } else {
            match name {
                "read_file" => {
                    let len = if self.rng.chance(0.005) {
                        self.rng.log_range(20_000.0, 150_000.0)
                    } else {
                        self.rng.log_range(150.0, 4_500.0)
                    } as usize;
                    (self.code(len), String::new())
                }
                "run_shell_command" => {
                    let out = self.shell_output();
                    let tail: String = out
                        .chars()
                        .rev()
                        .take(300)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    (out, tail)
                }
                "replace" | "write_file" => {
                    let diff = self.diff(&file);
                    (
                        format!("Successfully modified file: {file} (1 replacements)."),
                        diff,
                    )
                }
                "search_file_content" => {
                    let mut s = String::from("Found matches:\n---\n");
                    for _ in 0..self.rng.range(1, 30) {
                        let l = self.code(80);
                        s.push_str(&format!(
                            "File: {}\nL{}: {}\n---\n",
                            self.rng.pick(FILES),
                            self.rng.range(1, 900),
                            l.lines().next().unwrap_or("")
                        ));
                    }
                    let d = format!("Found {} matches", s.matches("File:").count());
                    (s, d)
                }
                "list_directory" => {
                    let mut s = format!("Directory listing for {}:\n", self.cwd);
                    for _ in 0..self.rng.range(3, 40) {
                        s.push_str(self.rng.pick(FILES));
                        s.push('\n');
                    }
                    let d = format!("Listed {} item(s).", s.lines().count() - 1);
                    (s, d)
                }
                _ => (
                    "Todos have been modified successfully.".to_string(),
                    String::new(),
                ),
            }
        };
        self.open(out, "tool_result", None);
        out.extend_from_slice(
            b",\"message\":{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"",
        );
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(b"\",\"name\":");
        jstr(out, name);
        out.extend_from_slice(if error {
            b",\"response\":{\"error\":"
        } else {
            b",\"response\":{\"output\":"
        });
        jstr(out, &output);
        out.extend_from_slice(b"}}}]},\"toolCallResult\":{\"callId\":\"");
        out.extend_from_slice(call_id.as_bytes());
        out.extend_from_slice(if error {
            b"\",\"status\":\"error\",\"resultDisplay\":"
        } else {
            b"\",\"status\":\"success\",\"resultDisplay\":"
        });
        if (name == "replace" || name == "write_file") && !error {
            out.extend_from_slice(b"{\"fileDiff\":");
            jstr(out, &display);
            out.extend_from_slice(b",\"fileName\":");
            jstr(out, file.rsplit('/').next().unwrap_or(&file));
            out.push(b'}');
        } else {
            jstr(out, &display);
        }
        if error {
            out.extend_from_slice(b",\"error\":{},\"errorType\":\"file_not_found\"");
        }
        out.extend_from_slice(b"}}\n");
        self.prompt_tokens += output.len() as u64 / 4;
        1
    }

    fn system_rewind(&mut self, out: &mut Vec<u8>) {
        // Branch: the rewind record hangs below an earlier record, not below the last one.
        let back = self.rng.range(2, self.recent.len().min(12) as u64) as usize;
        let parent = self.recent[self.recent.len() - back].clone();
        let id = uuid(&mut self.rng);
        self.open_with(out, &id, Some(&parent), "system", Some("rewind"));
        out.extend_from_slice(
            format!(",\"systemPayload\":{{\"truncatedCount\":{back}}}}}\n").as_bytes(),
        );
        self.advance(id);
    }

    fn system_compression(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("chat_compression"));
        let summary = format!(
            "<state_snapshot>\n<overall_goal>{}</overall_goal>\n<key_knowledge>{}</key_knowledge>\n<recent_actions>{}</recent_actions>\n</state_snapshot>",
            self.prose(120),
            self.prose(600),
            self.prose(400)
        );
        let new = self.rng.range(4_000, 12_000);
        out.extend_from_slice(
            format!(
                ",\"systemPayload\":{{\"info\":{{\"originalTokenCount\":{},\"newTokenCount\":{new},\"compressionStatus\":1}},\"compressedHistory\":[{{\"role\":\"user\",\"parts\":[{{\"text\":",
                self.prompt_tokens
            )
            .as_bytes(),
        );
        jstr(out, &summary);
        out.extend_from_slice(
            b"}]},{\"role\":\"model\",\"parts\":[{\"text\":\"Got it. Thanks for the additional context!\"}]}],\"summary\":",
        );
        jstr(out, &summary);
        out.extend_from_slice(b"}}\n");
        self.prompt_tokens = new;
    }

    fn system_slash(&mut self, out: &mut Vec<u8>, cmd: &str) {
        for phase in ["invocation", "result"] {
            self.open(out, "system", Some("slash_command"));
            out.extend_from_slice(b",\"systemPayload\":{\"phase\":");
            jstr(out, phase);
            out.extend_from_slice(b",\"rawCommand\":");
            jstr(out, cmd);
            out.extend_from_slice(b"}}\n");
        }
    }

    fn system_telemetry(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("ui_telemetry"));
        let ts = timestamp(self.now);
        let (i, o) = (self.prompt_tokens, self.rng.range(10, 900));
        out.extend_from_slice(
            format!(
                ",\"systemPayload\":{{\"uiEvent\":{{\"event.name\":\"api_response\",\"event.timestamp\":\"{ts}\",\"response_id\":\"chatcmpl-{:08x}\",\"model\":\"{}\",\"status_code\":200,\"duration_ms\":{},\"input_token_count\":{i},\"output_token_count\":{o},\"cached_content_token_count\":{},\"thoughts_token_count\":0,\"tool_token_count\":0,\"total_token_count\":{},\"prompt_id\":\"{:012x}#{}\",\"auth_type\":\"openai\"}}}}}}\n",
                self.rng.next() as u32,
                self.model,
                self.rng.range(300, 30_000),
                i - i % 256,
                i + o,
                self.rng.next() >> 16,
                self.rng.range(1, 40)
            )
            .as_bytes(),
        );
    }

    fn system_title(&mut self, out: &mut Vec<u8>) {
        self.open(out, "system", Some("custom_title"));
        let t = self.prose(40);
        out.extend_from_slice(b",\"systemPayload\":{\"customTitle\":");
        jstr(out, t.trim_end_matches('.'));
        out.extend_from_slice(b",\"titleSource\":\"auto\"}}\n");
    }

    // -- text -----------------------------------------------------------------------------------

    /// Prose of about `len` bytes: words, some code spans, unicode now and then.
    fn prose(&mut self, len: usize) -> String {
        let mut s = String::with_capacity(len + 32);
        let mut sentence = 0;
        while s.len() < len {
            if self.cjk && self.rng.chance(0.6) {
                s.push_str(self.rng.pick(CJK));
            } else {
                if !s.is_empty() {
                    s.push(' ');
                }
                let r = self.rng.below(100);
                if r < 3 {
                    s.push_str(self.rng.pick(SPICE));
                } else if r < 7 {
                    s.push('`');
                    s.push_str(self.rng.pick(IDENTS));
                    s.push('`');
                } else if r < 9 {
                    s.push('"');
                    s.push_str(self.rng.pick(WORDS));
                    s.push('"');
                } else {
                    s.push_str(self.rng.pick(WORDS));
                }
            }
            sentence += 1;
            if sentence > 6 && self.rng.chance(0.12) {
                s.push_str(if self.rng.chance(0.1) { ".\n\n" } else { "." });
                sentence = 0;
            }
        }
        s.push('.');
        s
    }

    /// Code of about `len` bytes: quotes, backslashes, tabs and newlines to escape.
    fn code(&mut self, len: usize) -> String {
        let mut s = String::with_capacity(len + 128);
        let mut depth = 0usize;
        while s.len() < len {
            let tabs = self.rng.chance(0.1);
            for _ in 0..depth {
                s.push_str(if tabs { "\t" } else { "    " });
            }
            let a = self.rng.pick(IDENTS);
            let b = self.rng.pick(IDENTS);
            let w = self.rng.pick(WORDS);
            match self.rng.below(12) {
                0 => s.push_str(&format!(
                    "const {a} = {b}(\"{w}\", {});",
                    self.rng.below(1000)
                )),
                1 => s.push_str(&format!(
                    "if ({a} === null) {{ throw new Error(\"{w} not found: \" + {b}); }}"
                )),
                2 => {
                    s.push_str("// ");
                    let p = self.prose(50);
                    s.push_str(&p);
                }
                3 => s.push_str(&format!(
                    "return {a}.replace(/\\s+/g, \"\\t\").split(\"\\n\");"
                )),
                4 => {
                    s.push_str(&format!(
                        "fn {a}(&self, {b}: &str) -> Result<Vec<u8>, Error> {{"
                    ));
                    depth += 1;
                }
                5 => s.push_str(&format!("println!(\"{{}}: {{:?}}\\n\", {a}, {b});")),
                6 => s.push_str(&format!("let path = \"C:\\\\Users\\\\{w}\\\\{a}.txt\";")),
                7 if depth > 0 => {
                    depth -= 1;
                    s.truncate(s.len() - if tabs { 1 } else { 4 });
                    s.push('}');
                }
                8 => {
                    s.push_str(&format!("for (const {a} of {b}) {{"));
                    depth += 1;
                }
                9 => s.push_str(&format!(
                    "{a}.{b} = {{ \"{w}\": [{}, {}], 'ok': true }};",
                    self.rng.below(99),
                    self.rng.below(99)
                )),
                10 if self.cjk || self.rng.chance(0.1) => s.push_str(&format!(
                    "log.info(\"{} {}\");",
                    self.rng.pick(CJK),
                    self.rng.pick(SPICE)
                )),
                _ => s.push_str(&format!("{a} += {b}.len(); // {w}")),
            }
            s.push('\n');
            depth = depth.min(6);
        }
        s
    }

    fn shell_output(&mut self) -> String {
        let mut s = String::from("Command: npm test\nDirectory: (root)\nStdout: \n");
        for _ in 0..self.rng.range(3, 30) {
            let ok = self.rng.chance(0.9);
            let line = format!(
                " {} test/{}.test.js > {} > {}\n",
                if ok {
                    "\u{1b}[32m✓\u{1b}[39m"
                } else {
                    "\u{1b}[31m×\u{1b}[39m"
                },
                self.rng.pick(IDENTS),
                self.rng.pick(WORDS),
                self.prose(40)
            );
            s.push_str(&line);
        }
        let code = self.rng.below(2);
        s.push_str(&format!(
            "\n Tests  {} passed\nStderr: (empty)\nError: (none)\nExit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: {}",
            self.rng.range(1, 300),
            self.rng.range(1000, 99999)
        ));
        s
    }

    fn diff(&mut self, file: &str) -> String {
        let name = file.rsplit('/').next().unwrap_or(file);
        let mut s = format!(
            "Index: {name}\n===================================================================\n--- {name}\tCurrent\n+++ {name}\tProposed\n@@ -{},{} +{},{} @@\n",
            self.rng.range(1, 400),
            self.rng.range(1, 20),
            self.rng.range(1, 400),
            self.rng.range(1, 20)
        );
        let len = self.rng.log_range(100.0, 2_000.0) as usize;
        for line in self.code(len).lines() {
            s.push(match self.rng.below(4) {
                0 => '-',
                1 => '+',
                _ => ' ',
            });
            s.push_str(line);
            s.push('\n');
        }
        s
    }
}

/// A random version-4 UUID, lower-case hex.
fn uuid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next(), rng.next());
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

/// ISO 8601 UTC with milliseconds, as Qwen writes it: `2025-12-06T10:30:07.318Z`.
fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ms % 1000
    )
}

/// Appends `s` as a JSON string literal.
fn jstr(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1F => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
