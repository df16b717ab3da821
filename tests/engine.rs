//! The two-pass engine (`sessiontool::engine`) against the whole-session path
//! (`convert::convert_whole`): for every input the engine takes and every target it covers,
//! the same bytes, the same diagnostics in the same order, the same losses, the same errors.
//! Inputs: every fixture and every real sample (read in place, by path), each also forced
//! through the Claude Code reader; generated sessions with branches, duplicate uuids, damaged
//! lines, sidechains, compact boundaries, lossy values, Python separators and more. Each is
//! converted from memory and from a file, with the engine's default sizes and with tiny ones
//! (a block per line, a run per record: every boundary crossed), and same-format conversions
//! also with every entry rebuilt instead of copied.

mod common;

use std::path::{Path, PathBuf};

use sessiontool::convert::{self, Conversion, ConvertError};
use sessiontool::engine::{self, Bytes, FileOutput, FileSource, Job, PlanError, Source, Tuning};
use sessiontool::formats::{self, Format, Input, WriteOptions};
use sessiontool::model::Meta;

/// Every format the engine writes sessions of other formats into, from the registry (each
/// format's `stream_target`): every cross-format test here goes through them all.
fn targets() -> Vec<&'static str> {
    let all: Vec<&'static str> = formats::all()
        .iter()
        .filter(|f| f.stream_target().is_some())
        .map(|f| f.name())
        .collect();
    assert!(all.len() >= 5, "{all:?}");
    all
}

fn fmt(name: &str) -> &'static dyn Format {
    formats::by_name(name).unwrap()
}

fn options(leaf: Option<&str>) -> WriteOptions {
    WriteOptions {
        leaf: leaf.map(String::from),
        now: Some("2025-06-01T00:00:00.000Z".into()),
        ..WriteOptions::default()
    }
}

/// The sizes to run with: the defaults and tiny ones; for a large input (tiny sizes would take
/// long in a debug build), the defaults and small ones.
fn tunings(len: usize) -> Vec<Tuning> {
    if len > 1 << 20 {
        return vec![
            Tuning::default(),
            Tuning {
                block_size: 64 << 10,
                run_bytes: 200 << 10,
                rebuild_unchanged: true,
            },
        ];
    }
    vec![
        Tuning::default(),
        Tuning {
            block_size: 1,
            run_bytes: 1,
            rebuild_unchanged: false,
        },
        Tuning {
            block_size: 300,
            run_bytes: 700,
            rebuild_unchanged: true,
        },
    ]
}

/// A conversion's outcome, comparable.
#[derive(Debug, PartialEq)]
enum Outcome {
    Done {
        from: &'static str,
        bytes: String,
        diagnostics: Vec<String>,
        losses: Vec<(String, usize, String)>,
    },
    Failed(String),
}

fn outcome(r: Result<Conversion, ConvertError>) -> Outcome {
    match r {
        Ok(c) => Outcome::Done {
            from: c.from,
            bytes: String::from_utf8_lossy(&c.bytes).into_owned(),
            diagnostics: c.diagnostics.iter().map(|d| format!("{d}")).collect(),
            losses: c
                .losses
                .losses
                .iter()
                .map(|l| (l.code.to_string(), l.count, l.message.clone()))
                .collect(),
        },
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// The engine on `source`, writing into memory or into a file; `None` when it does not cover
/// the conversion.
fn engine_run(
    job: Job,
    adjust: &mut dyn FnMut(&mut Meta),
    to_file: bool,
) -> Option<Result<Conversion, ConvertError>> {
    let name = job.name.to_string();
    let plan = match engine::plan(job, adjust) {
        Ok(Some(plan)) => plan,
        Ok(None) => return None,
        Err(PlanError::Convert(e)) => return Some(Err(e)),
        Err(PlanError::Input(e)) => panic!("{name}: {e}"),
    };
    if !to_file {
        let mut bytes = Vec::new();
        let mut c = plan.write(&mut bytes).unwrap();
        c.bytes = bytes;
        return Some(Ok(c));
    }
    let file = tempfile::tempfile().unwrap();
    let mut out = FileOutput::new(&file);
    let mut c = plan.write(&mut out).unwrap();
    out.finish().unwrap();
    use std::io::{Read, Seek};
    let mut f = &file;
    f.seek(std::io::SeekFrom::Start(0)).unwrap();
    f.read_to_end(&mut c.bytes).unwrap();
    Some(Ok(c))
}

/// Every way the engine runs on `bytes` agrees with the whole-session path; returns whether
/// the engine took it.
fn agree(
    name: &str,
    bytes: &[u8],
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
    adjust: &dyn Fn(&mut Meta),
) -> bool {
    let input = Input {
        name,
        path: None,
        bytes,
    };
    let want = outcome(convert::convert_whole(&input, from, to, options, adjust));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input");
    std::fs::write(&path, bytes).unwrap();
    let file = FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
    let memory = Bytes(bytes);
    let mut took = None;
    let mut all = tunings(bytes.len());
    if options.leaf.is_some() {
        // Leaves cross no other boundary than the default branch does: one tiny run.
        all.remove(0);
        all.truncate(1);
    }
    for tuning in all {
        for (source, to_file) in [(&memory as &dyn Source, false), (&file, true)] {
            if to_file && tuning.block_size == 1 {
                // A file read a byte at a time proves nothing the 300-byte blocks do not, at
                // a system call a byte.
                continue;
            }
            let job = Job {
                name,
                path: None,
                source,
                from,
                to,
                options,
                tuning,
            };
            let got = engine_run(job, &mut |m| adjust(m), to_file);
            match (&took, got.is_some()) {
                (None, t) => took = Some(t),
                (Some(t), g) => assert_eq!(*t, g, "{name}: taken by one run, not another"),
            }
            if let Some(got) = got {
                let got = outcome(got);
                if got != want {
                    panic!(
                        "{name} -> {} ({tuning:?}, file: {to_file}, leaf: {:?}):\n{}",
                        to.name(),
                        options.leaf,
                        difference(&want, &got)
                    );
                }
            }
        }
    }
    took.unwrap_or(false)
}

/// Where two outcomes part, in words.
fn difference(want: &Outcome, got: &Outcome) -> String {
    match (want, got) {
        (
            Outcome::Done {
                bytes: wb,
                diagnostics: wd,
                losses: wl,
                from: wf,
            },
            Outcome::Done {
                bytes: gb,
                diagnostics: gd,
                losses: gl,
                from: gf,
            },
        ) => {
            let mut s = String::new();
            if wf != gf {
                s += &format!("from: {wf} vs {gf}\n");
            }
            if wb != gb {
                let at = wb
                    .bytes()
                    .zip(gb.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(wb.len().min(gb.len()));
                let lo = at.saturating_sub(120);
                s += &format!(
                    "bytes differ at {at} (lengths {} vs {}):\nwant …{}…\ngot  …{}…\n",
                    wb.len(),
                    gb.len(),
                    &wb[lo.min(wb.len())..(at + 120).min(wb.len())],
                    &gb[lo.min(gb.len())..(at + 120).min(gb.len())]
                );
            }
            if wd != gd {
                s += &format!("diagnostics:\nwant {wd:#?}\ngot  {gd:#?}\n");
            }
            if wl != gl {
                s += &format!("losses:\nwant {wl:#?}\ngot  {gl:#?}\n");
            }
            s
        }
        _ => {
            let short = |o: &Outcome| {
                let s = format!("{o:?}");
                s.chars().take(600).collect::<String>()
            };
            format!("want {}\ngot  {}", short(want), short(got))
        }
    }
}

fn no_adjust(_: &mut Meta) {}

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir_files(dir);
    out.sort();
    out
}

fn walkdir_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                out.push(p);
            }
        }
    }
    out
}

/// The node ids a one-branch writer may be asked to follow (`--leaf`) in `bytes` read as
/// Claude Code, and one that is not there.
fn leaves(bytes: &[u8]) -> Vec<Option<String>> {
    leaves_in("claude-jsonl", bytes)
}

/// The node ids of `bytes` read as `format` to name as leaves: of every sixth node or so its
/// whole id and the start of it, as `tree` prints ids (8 characters, or 2, which may name
/// several nodes); and one that is not there.
fn leaves_in(format: &str, bytes: &[u8]) -> Vec<Option<String>> {
    let mut out = vec![None, Some("no-such-node".to_string())];
    if let Ok(o) = fmt(format).read(&Input {
        name: "x",
        path: None,
        bytes,
    }) {
        let n = o.session.nodes.len();
        let step = (n / 6).max(1);
        for (k, node) in o.session.nodes.iter().step_by(step).enumerate() {
            let id = &node.id;
            out.push(Some(id.clone()));
            let start = if k % 2 == 0 { 8 } else { 2 };
            out.push(Some(id.chars().take(start).collect()));
        }
    }
    out
}

/// Every format the engine reads in two passes, from the registry (each format's `two_pass`).
fn readers() -> Vec<&'static str> {
    let all: Vec<&'static str> = formats::all()
        .iter()
        .filter(|f| f.two_pass().is_some())
        .map(|f| f.name())
        .collect();
    assert!(all.len() >= 6, "{all:?}");
    all
}

/// Every fixture (and real sample) of every format the engine reads into every target and back
/// into its own format, with and without a leaf: each conversion the engine takes is
/// the whole path's, byte for byte, diagnostic for diagnostic, loss for loss. A reader or a
/// target the registry gains is held to the whole path here the day it is declared.
#[test]
fn every_reader_converts_its_files_into_every_target_as_the_whole_session_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let samples = common::prerequisite::shared("");
    let mut taken = 0;
    for from in readers() {
        let mut paths = common::fixtures_of(from);
        // The real samples of the tool, when there are some (pi's, Codex's, ...).
        let tool = fmt(from).tool();
        if let Some(samples) = &samples
            && let Ok(dir) = std::fs::read_dir(samples.join(tool))
        {
            let mut more: Vec<PathBuf> = dir
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.is_file()
                        && formats::detect(Some(p), &std::fs::read(p).unwrap())
                            .is_some_and(|f| f.name() == from)
                })
                .collect();
            more.sort();
            paths.extend(more);
        }
        assert!(!paths.is_empty(), "{from}: no files in {}", root.display());
        for path in paths {
            let bytes = std::fs::read(&path).unwrap();
            let name = path.display().to_string();
            // As detected, with no leaf and with one (each format's own tests force it through
            // its reader and try more leaves).
            for to in targets().into_iter().chain([from]) {
                for leaf in leaves_in(from, &bytes).into_iter().step_by(2).take(2) {
                    let o = options(leaf.as_deref());
                    taken += usize::from(agree(&name, &bytes, None, fmt(to), &o, &no_adjust));
                }
            }
        }
    }
    assert!(taken > 300, "{taken} conversions taken");
}

/// Each file, detected and forced through the Claude Code reader, into each target, with
/// every leaf for the one-branch target.
fn check_files(paths: &[PathBuf]) -> usize {
    let claude = fmt("claude-jsonl");
    let mut taken = 0;
    for path in paths {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        for from in [None, Some(claude)] {
            for to in targets() {
                let leaves = if to != "claude-jsonl" {
                    leaves(&bytes)
                } else {
                    vec![None]
                };
                for leaf in leaves {
                    let o = options(leaf.as_deref());
                    if agree(&name, &bytes, from, fmt(to), &o, &no_adjust) {
                        taken += 1;
                    }
                }
            }
        }
    }
    taken
}

#[test]
fn every_fixture_converts_as_the_whole_session_path_converts_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let all = files(&root);
    assert!(all.len() > 100, "{} fixtures", all.len());
    let taken = check_files(&all);
    // Every file is taken when forced through the Claude reader.
    assert!(taken >= all.len() * 2, "{taken} conversions taken");
}

#[test]
fn every_real_sample_converts_as_the_whole_session_path_converts_it() {
    let Some(root) = common::prerequisite::shared("") else {
        return;
    };
    let all = files(&root);
    let claude: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("/claude/"))
        .collect();
    assert!(claude.len() >= 5, "{claude:?}");
    let taken = check_files(&all);
    assert!(taken >= all.len() * 2, "{taken} conversions taken");
}

#[test]
fn a_session_placed_under_another_project_is_rewritten_as_the_whole_session_path_rewrites_it() {
    // convert --store records the project: entries whose cwd was the session's get the new
    // one, the rest stay as they were.
    let claude = fmt("claude-jsonl");
    let mut taken = 0;
    for name in [
        "plain.jsonl",
        "tools.jsonl",
        "sidechain.jsonl",
        "unknown.jsonl",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/claude-jsonl")
            .join(name);
        let bytes = std::fs::read(&path).unwrap();
        let place = |m: &mut Meta| {
            m.cwd = Some("/elsewhere/app".into());
            m.project_hash = Some("abc".into());
        };
        for to in targets() {
            if agree(name, &bytes, Some(claude), fmt(to), &options(None), &place) {
                taken += 1;
            }
        }
    }
    assert_eq!(taken, 4 * targets().len());
}

/// A small deterministic generator (xorshift), so every failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A generated Claude Code session: a tree of entries (branches, sidechains, compact
/// boundaries, tool calls with and without results), uuid-less entries (titles, snapshots),
/// and damage (duplicate uuids, torn and glued lines, invalid JSON and UTF-8, NUL padding,
/// blank lines, CRLF, a BOM, lossy values, values nested too deep, non-objects, Python
/// separators, a missing final newline).
fn generated(seed: u64) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let python = r.chance(10);
    let session = if r.chance(10) {
        None
    } else {
        Some(format!("s-{seed}"))
    };
    let mut uuids: Vec<String> = Vec::new();
    let mut out: Vec<u8> = Vec::new();
    if r.chance(5) {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    let crlf = r.chance(8);
    let n = 1 + r.below(40);
    for k in 0..n {
        let mut line: String;
        let pick = r.below(100);
        let uuid = if !uuids.is_empty() && r.chance(6) {
            uuids[r.below(uuids.len() as u64) as usize].clone()
        } else {
            format!("u{seed}-{k}")
        };
        let parent = match (uuids.len(), r.below(10)) {
            (0, _) => "null".to_string(),
            (_, 0) => "null".into(),
            (_, 1) => "\"missing-parent\"".into(),
            (l, 2..=4) => format!("\"{}\"", uuids[r.below(l as u64) as usize]),
            (l, _) => format!("\"{}\"", uuids[l - 1]),
        };
        let ts = if r.chance(85) {
            format!(
                ",\"timestamp\":\"2025-01-0{}T00:00:{:02}.000Z\"",
                1 + r.below(9),
                k % 60
            )
        } else {
            String::new()
        };
        let sid = match &session {
            Some(s) if r.chance(95) => format!(",\"sessionId\":\"{s}\""),
            _ => String::new(),
        };
        let side = match r.below(20) {
            0 => ",\"isSidechain\":true",
            1 => ",\"isMeta\":true",
            2 => ",\"isSidechain\":false",
            _ => "",
        };
        let cwd = if r.chance(90) {
            ",\"cwd\":\"/w/app\""
        } else {
            ",\"cwd\":\"/w/other\""
        };
        let common = format!(
            "\"parentUuid\":{parent}{side},\"userType\":\"external\"{cwd}{sid},\"version\":\"2.0.24\",\"gitBranch\":\"main\""
        );
        match pick {
            0..=24 => {
                let content = match r.below(4) {
                    0 => format!("\"hello {k} \\u00e9 \\\"q\\\"\""),
                    1 => format!("[{{\"type\":\"text\",\"text\":\"t{k}\"}}]"),
                    2 => format!(
                        "[{{\"tool_use_id\":\"toolu_{}\",\"type\":\"tool_result\",\"content\":\"ok\"{}}}]",
                        r.below(8),
                        if r.chance(30) { ",\"is_error\":true" } else { "" }
                    ),
                    _ => "[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"AAA\"}}]".into(),
                };
                line = format!(
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{content}}},\"uuid\":\"{uuid}\"{ts}}}"
                );
            }
            25..=54 => {
                let block = match r.below(4) {
                    0 => format!("{{\"type\":\"text\",\"text\":\"answer {k}\"}}"),
                    1 => format!(
                        "{{\"type\":\"tool_use\",\"id\":\"toolu_{}\",\"name\":\"Bash\",\"input\":{{\"command\":\"ls {k}\",\"n\":1.5e3}}}}",
                        r.below(8)
                    ),
                    2 => "{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"sig\"}".into(),
                    _ => "{\"type\":\"mystery\",\"x\":[1,2,{\"y\":null}]}".into(),
                };
                // One API reply written as several entries shares its message id and
                // request id; its usage stands on each, growing.
                let usage = if r.chance(60) {
                    format!(
                        ",\"usage\":{{\"input_tokens\":{},\"cache_creation_input_tokens\":{},\"cache_read_input_tokens\":5,\"output_tokens\":{k},\"service_tier\":\"standard\"}}",
                        3 + k,
                        r.below(3)
                    )
                } else {
                    String::new()
                };
                let reply = if r.chance(50) { k - k % 3 } else { k };
                let model = if r.chance(20) { "claude-y" } else { "claude-x" };
                line = format!(
                    "{{{common},\"message\":{{\"model\":\"{model}\",\"id\":\"msg_{reply}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{block}],\"stop_reason\":null,\"stop_sequence\":null{usage}}},\"requestId\":\"req_{reply}\",\"type\":\"assistant\",\"uuid\":\"{uuid}\"{ts}}}"
                );
            }
            55..=62 => {
                line = format!(
                    "{{{common},\"type\":\"system\",\"subtype\":\"compact_boundary\",\"content\":\"Conversation compacted\",\"isMeta\":false,\"level\":\"info\",\"compactMetadata\":{{\"trigger\":\"auto\",\"preTokens\":1234}},\"logicalParentUuid\":\"{}\",\"uuid\":\"{uuid}\"{ts}}}",
                    uuids.last().cloned().unwrap_or_default()
                );
            }
            63..=68 => {
                line = format!(
                    "{{\"type\":\"summary\",\"summary\":\"Title {k}\",\"leafUuid\":\"{}\"{ts}}}",
                    uuids.last().cloned().unwrap_or_default()
                );
            }
            69..=71 => {
                line = format!(
                    "{{\"type\":\"custom-title\",\"customTitle\":\"Named {k}\",\"sessionId\":\"s\"{ts}}}"
                );
            }
            72..=75 => {
                line = format!(
                    "{{\"type\":\"file-history-snapshot\",\"messageId\":\"m{k}\",\"snapshot\":{{\"trackedFileBackups\":{{}}}},\"isSnapshotUpdate\":false{ts}}}"
                );
            }
            76..=78 => {
                // A user entry in a key order the CLI does not write, with a repeated key.
                line = format!(
                    "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"message\":{{\"content\":\"x\",\"role\":\"user\"}},{common},\"uuid\":\"{uuid}\"{ts}}}"
                );
            }
            79..=80 => {
                line = format!(
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"lone \\ud83d and {}\"}},\"uuid\":\"{uuid}\"{ts}}}",
                    "1e400"
                )
            }
            81 => {
                line = format!(
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"n\"}},\"n\":1e400,\"uuid\":\"{uuid}\"{ts}}}"
                )
            }
            82 => line = format!("[{},\"not an entry\"]", k),
            83 => line = "\"just a string\"".into(),
            84 => line = format!("{{\"deep\":{}1{}}}", "[".repeat(600), "]".repeat(600)),
            85 => {
                line = format!(
                    "{{\"deep\":{}1{},\"uuid\":\"{uuid}\"}}",
                    "[".repeat(200),
                    "]".repeat(200)
                )
            }
            86 => line = "{\"torn\":\"this line was cut".into(),
            87 => line = "{not json at all}".into(),
            88 => {
                line = format!(
                    "{{\"a\":1}}{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"glued\"}},\"uuid\":\"{uuid}\"}}"
                )
            }
            89 => line = String::new(),
            90 => {
                line = format!(
                    "{{\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{{\"odd\":true}}}}}}"
                )
            }
            91 => line = format!("{{\"uuid\":{k},\"type\":\"user\"}}"),
            // A message whose field the reader does not interpret is nested too deep to parse
            // (the whole entry is then a node of its text), or deep and lossy but parseable.
            92 | 93 => {
                let n = if pick == 92 { 600 } else { 300 };
                line = format!(
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"deep\"}},\"toolUseResult\":{}\"\\ud83d\"{},\"uuid\":\"{uuid}\"{ts}}}",
                    "[".repeat(n),
                    "]".repeat(n)
                )
            }
            _ => {
                line = format!(
                    "{{{common},\"type\":\"progress\",\"data\":{{\"step\":{k}}},\"uuid\":\"{uuid}\"{ts}}}"
                );
            }
        }
        if python && line.starts_with('{') && pick < 55 {
            // Python's json.dumps separators (outside strings: the generated strings hold
            // neither `,` nor `:`... except the ones written here on purpose).
            line = python_spaced(&line);
        }
        uuids.push(uuid);
        push_line(&mut r, &mut out, &line, k + 1 == n, crlf);
    }
    out
}

/// `line` into `out` with damage now and then: NUL padding or invalid UTF-8 after it, no
/// line break after the `last`, CRLF line breaks in a `crlf` file.
fn push_line(r: &mut Rng, out: &mut Vec<u8>, line: &str, last: bool, crlf: bool) {
    out.extend_from_slice(line.as_bytes());
    match r.below(60) {
        0 => out.extend_from_slice(b"\0\0\0"),
        1 => out.extend_from_slice(b" \xff"),
        _ => {}
    }
    if !last || r.chance(80) {
        if crlf && r.chance(90) {
            out.push(b'\r');
        }
        out.push(b'\n');
    }
}

/// `{"a":1,"b":[2,3]}` as Python's `json.dumps` writes it: `{"a": 1, "b": [2, 3]}`.
fn python_spaced(line: &str) -> String {
    let mut out = String::with_capacity(line.len() * 2);
    let mut in_string = false;
    let mut escaped = false;
    for c in line.chars() {
        out.push(c);
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' || c == ':' {
            out.push(' ');
        }
    }
    out
}

/// How many generated sessions (`ENGINE_SEEDS`, else 150).
fn seeds() -> u64 {
    std::env::var("ENGINE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

// The generated sessions in two halves, so that both run at once.
#[test]
fn generated_sessions_convert_as_the_whole_session_path_converts_them() {
    generated_sessions_convert(0..seeds() / 2);
}

#[test]
fn more_generated_sessions_convert_as_the_whole_session_path_converts_them() {
    generated_sessions_convert(seeds() / 2..seeds());
}

fn generated_sessions_convert(seeds: std::ops::Range<u64>) {
    let claude = fmt("claude-jsonl");
    let mut leaves_tried = 0;
    let count = seeds.end - seeds.start;
    for seed in seeds {
        let bytes = generated(seed);
        let name = format!("generated-{seed}.jsonl");
        // Gemini's JSONL recording is the legacy document's messages laid out as lines: a
        // third of the seeds are enough for its framing.
        let every = targets()
            .into_iter()
            .filter(|&to| to != "gemini-jsonl" || seed % 3 == 0);
        for to in every {
            assert!(
                agree(
                    &name,
                    &bytes,
                    Some(claude),
                    fmt(to),
                    &options(None),
                    &no_adjust
                ),
                "{name} is not taken"
            );
        }
        // Other leaves, and a project change, on some.
        if seed % 5 == 0 {
            for leaf in leaves(&bytes).into_iter().step_by(3) {
                for to in ["codex-jsonl", "gemini-json"] {
                    agree(
                        &name,
                        &bytes,
                        Some(claude),
                        fmt(to),
                        &options(leaf.as_deref()),
                        &no_adjust,
                    );
                }
                leaves_tried += 1;
            }
            // Closing unanswered calls goes through the whole session when there are calls
            // to close (and where the target closes them itself, changes nothing); a token
            // budget always does.
            for to in targets() {
                let close = WriteOptions {
                    close_open_calls: true,
                    ..options(None)
                };
                agree(&name, &bytes, Some(claude), fmt(to), &close, &no_adjust);
                let budget = WriteOptions {
                    max_tokens: Some(200),
                    ..options(None)
                };
                assert!(!agree(
                    &name,
                    &bytes,
                    Some(claude),
                    fmt(to),
                    &budget,
                    &no_adjust
                ));
            }
            let place = |m: &mut Meta| m.cwd = Some("/w/moved".into());
            agree(
                &name,
                &bytes,
                Some(claude),
                fmt("claude-jsonl"),
                &options(None),
                &place,
            );
        }
    }
    assert!(leaves_tried >= count as usize / 5);
}

#[test]
fn a_large_generated_session_converts_in_runs_on_several_threads_as_a_whole() {
    // Big enough for several blocks and runs at the default sizes.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-jsonl/tools.jsonl");
    let one = std::fs::read(&sample).unwrap();
    let mut bytes = Vec::new();
    let mut last: Option<String> = None;
    let mut copy = 0;
    while bytes.len() < 12 << 20 {
        let text = String::from_utf8(one.clone()).unwrap();
        for line in text.lines() {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(u) = v.get("uuid").and_then(|u| u.as_str()).map(String::from) {
                let new = format!("{u}-{copy}");
                v["uuid"] = new.clone().into();
                match v.get("parentUuid").and_then(|p| p.as_str()) {
                    Some(p) => v["parentUuid"] = format!("{p}-{copy}").into(),
                    None => {
                        v["parentUuid"] = last.clone().map_or(serde_json::Value::Null, Into::into)
                    }
                }
                last = Some(new);
            }
            bytes.extend_from_slice(serde_json::to_string(&v).unwrap().as_bytes());
            bytes.push(b'\n');
        }
        copy += 1;
    }
    let claude = fmt("claude-jsonl");
    for to in targets() {
        assert!(agree(
            "big.jsonl",
            &bytes,
            Some(claude),
            fmt(to),
            &options(None),
            &no_adjust
        ));
    }
}

/// `sessiontool convert FILE -o OUT` streams through the engine: the same bytes as the
/// conversion in memory (`-o -`), the same report, a dry run writes nothing, and an output
/// replaced with --force is kept as a backup.
#[test]
fn the_command_line_streams_a_file_into_a_file_as_memory_converts_it() {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_sessiontool");
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let claude = ["claude-jsonl"; 4].into_iter().zip([
        "tools.jsonl",
        "compact.jsonl",
        "split-reply.jsonl",
        "summary-snapshot.jsonl",
    ]);
    let codex = ["codex-jsonl"; 2]
        .into_iter()
        .zip(["tools.jsonl", "unknown.jsonl"]);
    let qwen = ["qwen-jsonl"; 2]
        .into_iter()
        .zip(["tools.jsonl", "branches.jsonl"]);
    for (from, name) in claude.chain(codex).chain(qwen) {
        let input = fixtures.join(from).join(name);
        // A rollout and a Qwen Code session go to every target through the engine, as a
        // Claude Code session does (each back into its own format too).
        for to in targets() {
            let run = |args: &[&str]| {
                let out = Command::new(bin)
                    .args(["convert", "--from", from, "--to", to])
                    .arg(&input)
                    .args(args)
                    .env("NO_COLOR", "1")
                    // A node without a time gets this one, not the time of each run.
                    .env("SOURCE_DATE_EPOCH", "1767225600")
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{name} -> {to}: {out:?}");
                out
            };
            let memory = run(&["-o", "-"]);
            let file = dir.path().join(format!("{from}.{name}.{to}.jsonl"));
            let path = file.to_str().unwrap();
            let dry = run(&["-o", path, "--dry-run"]);
            assert!(!file.exists(), "a dry run wrote {path}");
            let streamed = run(&["-o", path]);
            assert_eq!(
                std::fs::read(&file).unwrap(),
                memory.stdout,
                "{name} -> {to}: the file differs from standard output"
            );
            // The dry run (the engine writing into nothing) reports what
            // the conversion reports.
            let report = |o: &std::process::Output, from: &str| {
                String::from_utf8_lossy(&o.stderr)
                    .replace(from, "OUT")
                    .lines()
                    .filter(|l| {
                        !l.starts_with("wrote ")
                            && !l.starts_with("would write ")
                            && !l.starts_with("dry run")
                    })
                    .map(String::from)
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                report(&streamed, path),
                report(&dry, path),
                "{name} -> {to}: dry run"
            );
            let before = std::fs::read(&file).unwrap();
            std::fs::write(&file, b"older\n").unwrap();
            run(&["-o", path, "--force"]);
            assert_eq!(std::fs::read(&file).unwrap(), before);
            let backups: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(&format!("{from}.{name}.{to}.jsonl.bak-"))
                })
                .collect();
            assert_eq!(backups.len(), 1, "{name} -> {to}: one backup");
            assert_eq!(std::fs::read(backups[0].path()).unwrap(), b"older\n");
            std::fs::remove_file(backups[0].path()).unwrap();
            // Without --force an existing output is refused and left alone.
            let refused = Command::new(bin)
                .args(["convert", "--from", from, "--to", to])
                .arg(&input)
                .args(["-o", path])
                .output()
                .unwrap();
            assert!(!refused.status.success());
            assert_eq!(std::fs::read(&file).unwrap(), before);
        }
    }
}

/// `show` and `list`'s two-pass reading, on the same inputs.
#[path = "engine/view.rs"]
mod view;

/// A Codex rollout written back as a rollout.
#[path = "engine/rollout.rs"]
mod rollout;

/// Qwen Code sessions into Claude Code.
#[path = "engine/qwen.rs"]
mod qwen;

/// Gemini legacy documents into Claude Code and Codex.
#[path = "engine/gemini.rs"]
mod gemini;

/// pi, llxprt-code and the Go agent written back into themselves.
#[path = "engine/lines.rs"]
mod lines;

/// An entry nested too deep to parse is a node of its text on both paths, also when it is the
/// leaf asked for: a writer that does not read the field holding the depth (Codex's) must not
/// make a message of it.
#[test]
fn an_entry_too_deep_to_parse_converts_as_the_whole_session_path_converts_it_as_the_leaf() {
    let deep = format!("{}\"x\"{}", "[".repeat(600), "]".repeat(600));
    let lines = [
        r#"{"parentUuid":null,"sessionId":"s1","cwd":"/p","type":"user","message":{"role":"user","content":"hi"},"uuid":"a1","timestamp":"2025-01-01T00:00:00Z"}"#.to_string(),
        format!(
            r#"{{"parentUuid":"a1","sessionId":"s1","cwd":"/p","type":"user","message":{{"role":"user","content":"deep"}},"toolUseResult":{deep},"uuid":"a2","timestamp":"2025-01-01T00:00:01Z"}}"#
        ),
    ];
    let bytes = (lines.join("\n") + "\n").into_bytes();
    for leaf in [None, Some("line-2"), Some("a1")] {
        for to in targets() {
            assert!(agree(
                "deep.jsonl",
                &bytes,
                Some(fmt("claude-jsonl")),
                fmt(to),
                &options(leaf),
                &no_adjust
            ));
        }
    }
}

/// Codex tool calls and reasoning that the reader does not take as replies (a `call_id` that
/// is not a string, a call without its arguments, input or action, a reasoning item whose
/// summary is not a list) are events on both paths, and the others replies with their calls:
/// pass one tells them from their text, and test builds hold that to the whole reader's node
/// on every line.
#[test]
fn codex_calls_and_reasoning_of_every_shape_convert_as_the_whole_session_path() {
    let ts = r#""timestamp":"2025-01-01T00:00:01Z""#;
    let items = [
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":null}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":7}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}"}"#,
        r#"{"type":"function_call","name":"shell","call_id":"c2"}"#,
        r#"{"type":"function_call","name":3,"arguments":"{}","call_id":"c3"}"#,
        r#"{"type":"function_call","name":"sh\u0065ll","arguments":{},"call_id":"c4"}"#,
        r#"{"type":"function_call","name":"a","arguments":"{}","call_id":"c5","name":"b"}"#,
        r#"{"type":"custom_tool_call","name":"apply_patch","input":"x","call_id":"c6"}"#,
        r#"{"type":"custom_tool_call","name":"apply_patch","call_id":"c7"}"#,
        r#"{"type":"local_shell_call","action":{"command":["ls"]},"call_id":"c8"}"#,
        r#"{"type":"local_shell_call","action":null,"call_id":"c9"}"#,
        r#"{"type":"local_shell_call","call_id":"c10"}"#,
        r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]}"#,
        r#"{"type":"reasoning","summary":[]}"#,
        r#"{"type":"reasoning","summary":"not a list"}"#,
        r#"{"type":"reasoning"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"ok"}"#,
    ];
    let mut lines = vec![format!(
        r#"{{{ts},"type":"session_meta","payload":{{"id":"0199a3c4-5e6f-7a81-b2c3-d4e5f6a7b8c9","cwd":"/p"}}}}"#
    )];
    for item in items {
        lines.push(format!(
            r#"{{{ts},"type":"response_item","payload":{item}}}"#
        ));
    }
    let bytes = (lines.join("\n") + "\n").into_bytes();
    for to in targets() {
        assert!(agree(
            "shapes.jsonl",
            &bytes,
            Some(fmt("codex-jsonl")),
            fmt(to),
            &options(None),
            &no_adjust
        ));
    }
}
