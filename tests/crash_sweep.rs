//! Crash sweeps for fsck and repair at the library level: every prefix of every fixture (what a
//! crash leaves behind), glued lines, NUL padding and flipped bytes. fsck must never panic or
//! fail, and a repair must keep every complete record byte for byte (or relinked), put every
//! dropped byte in the sidecar, leave nothing to fix, and do nothing the second time.
//!
//! The sweeps sample offsets to stay fast in a debug build (see [`sample`]);
//! `CRASH_SWEEP_FULL=1 cargo test --release --test crash_sweep` visits every offset.

use std::collections::HashMap;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use sessiontool::check::document::Rewrite;
use sessiontool::check::{CheckOptions, Diagnosis, Fixes, ScanOptions, diagnose};
use sessiontool::diag::Severity;
use sessiontool::repair::{RepairOptions, Repaired, repair};
use tempfile::TempDir;

const STAMP: &str = "20260101T000000.000Z";

/// Error codes a repair leaves by design (it cannot tell what is right).
const UNFIXABLE_BY_DESIGN: &[&str] = &[
    "duplicate-id-conflict",
    "missing-field",
    "unreadable",
    "header-missing",
    "rewind-unknown",
];

/// Errors also left when ids conflict: tree and tool-call fixes would be guesses then.
const LEFT_ON_CONFLICT: &[&str] = &["orphan-parent", "cycle", "tool-call-unanswered"];

// ---------------------------------------------------------------------------------------------
// Inputs and scratch files
// ---------------------------------------------------------------------------------------------

/// The files of `fixtures/<folder>` ending in `ext`, sorted. The fixtures are part of the
/// repository: none is a failure, not a test that passes without testing.
fn fixtures(folder: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(folder);
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *{ext} fixture in {}", dir.display());
    files
}

/// The non-empty JSONL fixtures.
/// The fixtures of every JSONL format.
fn jsonl_fixtures() -> Vec<PathBuf> {
    [
        "qwen-jsonl",
        "claude-jsonl",
        "pi-jsonl",
        "codex-jsonl",
        "gemini-jsonl",
        "llxprt-jsonl",
        "agent-jsonl",
    ]
    .iter()
    .flat_map(|folder| fixtures(folder, ".jsonl"))
    .filter(|p| fs::metadata(p).unwrap().len() > 0)
    .collect()
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Where a sweep writes its inputs: one folder (on tmpfs when there is one), one file name
/// (detection reads the name).
struct Bench {
    _dir: TempDir,
    path: PathBuf,
}

impl Bench {
    fn new(name: &str) -> Bench {
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let path = dir.path().join(name);
        Bench { _dir: dir, path }
    }

    /// Empties the folder (sidecars, backups) and writes `bytes` as the file.
    fn put(&self, bytes: &[u8]) {
        for e in fs::read_dir(self.path.parent().unwrap()).unwrap() {
            fs::remove_file(e.unwrap().path()).unwrap();
        }
        fs::write(&self.path, bytes).unwrap();
    }

    fn read(&self) -> Vec<u8> {
        fs::read(&self.path).unwrap()
    }

    /// Files in the folder other than the input.
    fn others(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(self.path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| *p != self.path)
            .collect();
        v.sort();
        v
    }
}

/// Offsets `0..=bytes.len()` a sweep visits: every one with `CRASH_SWEEP_FULL` set; else every
/// one within `edge` bytes of either end or next to a line break (where records start and
/// end), and every `stride`-th in between. Every offset costs a check and usually a repair
/// (~5 ms for JSONL in a debug build, most of it zeroing the splitter's 1 MiB buffer): all
/// 23,000 offsets of the JSONL fixtures take a minute of CPU, all 3 flips at each 3 minutes.
fn sample(bytes: &[u8], edge: usize, stride: usize) -> Vec<usize> {
    let full = std::env::var_os("CRASH_SWEEP_FULL").is_some();
    let len = bytes.len();
    let at_break = |o: usize| bytes.get(o) == Some(&b'\n') || (o > 0 && bytes[o - 1] == b'\n');
    (0..=len)
        .filter(|&o| full || o < edge || o + edge > len || o % stride == 0 || at_break(o))
        .collect()
}

/// Runs `f` on each fixture in its own thread (the sweeps are independent).
fn each_fixture(files: &[PathBuf], f: impl Fn(&Path, &[u8]) + Sync) {
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .map(|p| {
                let f = &f;
                s.spawn(move || f(p, &fs::read(p).unwrap()))
            })
            .collect();
        for h in handles {
            if let Err(panic) = h.join() {
                resume_unwind(panic);
            }
        }
    });
}

fn timed(what: &str, f: impl FnOnce()) {
    let start = Instant::now();
    f();
    eprintln!("{what}: {:.2?}", start.elapsed());
}

// ---------------------------------------------------------------------------------------------
// fsck and repair
// ---------------------------------------------------------------------------------------------

/// fsck's options (`format` forces one): blocks of 64 KiB instead of 8 MiB, still more than
/// every input here, so each file is one block as with the default; zeroing 8 MiB per check
/// would take most of the sweep's time in a debug build.
fn options(format: Option<&'static str>) -> CheckOptions {
    CheckOptions {
        scan: ScanOptions {
            block_size: 64 << 10,
            ..ScanOptions::default()
        },
        format,
        ..CheckOptions::default()
    }
}

/// Runs `f`; a panic in it is re-raised after saying which input caused it.
fn guarded<T>(ctx: &str, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        eprintln!("PANIC on {ctx}");
        resume_unwind(panic)
    })
}

fn diagnosis(path: &Path, format: Option<&'static str>, ctx: &str) -> Diagnosis {
    guarded(ctx, || diagnose(path, &options(format)))
        .unwrap_or_else(|e| panic!("{ctx}: diagnose failed: {e}"))
}

fn repair_with(path: &Path, d: Diagnosis, backup: bool, ctx: &str) -> Repaired {
    let options = RepairOptions {
        no_backup: !backup,
        stamp: Some(STAMP.into()),
        // Freshly written test files are idle: no wait for a tool finishing a line.
        quiet: Some(std::time::Duration::ZERO),
        ..RepairOptions::default()
    };
    guarded(ctx, || repair(path, d, &options))
        .unwrap_or_else(|e| panic!("{ctx}: repair failed: {e}"))
}

fn codes(d: &Diagnosis) -> Vec<&'static str> {
    d.report.issues.iter().map(|i| i.code).collect()
}

/// The sidecar a repair wrote (empty when none), named `<name>.torn-<stamp>` beside the file.
fn sidecar_of(r: &Repaired) -> Vec<u8> {
    let Some(p) = &r.sidecar else {
        return Vec::new();
    };
    let file = Path::new(&r.file);
    assert_eq!(
        *p,
        file.with_file_name(format!("{}.torn-{STAMP}", name(file))),
        "sidecar name"
    );
    fs::read(p).unwrap()
}

/// A second fsck (as `format`, or detecting it) finds nothing to fix and no error but those
/// left by design, and a second repair changes nothing. Returns the second diagnosis' record
/// count and format.
fn assert_settled(
    path: &Path,
    format: Option<&'static str>,
    whole_file: bool,
    ctx: &str,
) -> (u64, Option<&'static str>) {
    let d = diagnosis(path, format, ctx);
    let conflict = codes(&d).contains(&"duplicate-id-conflict");
    let left_ok = |code: &str| {
        UNFIXABLE_BY_DESIGN.contains(&code)
            || (whole_file && code == "tool-call-unanswered")
            || (conflict && LEFT_ON_CONFLICT.contains(&code))
    };
    let bad: Vec<_> = d
        .report
        .issues
        .iter()
        .filter(|i| i.fixable() || (i.severity == Severity::Error && !left_ok(i.code)))
        .collect();
    assert!(bad.is_empty(), "{ctx}: after repair: {bad:#?}");
    let seen = (d.report.records, d.report.format);
    let again = repair_with(path, d, false, ctx);
    assert!(!again.changed, "{ctx}: a second repair changed the file");
    seen
}

// ---------------------------------------------------------------------------------------------
// What a repair must keep
// ---------------------------------------------------------------------------------------------

/// Lines of `bytes` that end in `\n` and parse as JSON: the records a repair must keep. Counted
/// here with serde_json, independently of the crate.
fn complete_records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    lines.pop(); // after the last `\n`: not terminated
    lines
        .into_iter()
        .filter(|l| serde_json::from_slice::<Value>(l).is_ok())
        .collect()
}

/// A record without what a repair may change in it: its parent link (each format's name for
/// it), which a relink replaces, and llxprt's `seq`, which a renumber replaces.
fn without_fixed_fields(bytes: &[u8]) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object_mut()?;
    for key in ["parentUuid", "parentId", "parent_id", "seq"] {
        o.remove(key);
    }
    Some(v)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// Every record is a line of `out`, byte for byte, or relinked or renumbered (equal but for
/// the parent link or `seq`);
/// each line of `out` accounts for one record at most.
fn assert_records_kept(records: &[&[u8]], out: &[u8], ctx: &str) {
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    let mut free: HashMap<&[u8], usize> = HashMap::new();
    for l in &lines {
        *free.entry(l).or_default() += 1;
    }
    for rec in records {
        if let Some(n) = free.get_mut(rec).filter(|n| **n > 0) {
            *n -= 1;
            continue;
        }
        let want = without_fixed_fields(rec);
        let relinked = lines
            .iter()
            .find(|l| free.get(*l).is_some_and(|n| *n > 0) && without_fixed_fields(l) == want);
        match relinked {
            Some(l) => *free.get_mut(l).unwrap() -= 1,
            None => panic!(
                "{ctx}: record lost:\n{}\nrepaired file:\n{}",
                String::from_utf8_lossy(rec),
                String::from_utf8_lossy(out)
            ),
        }
    }
}

/// Every piece of the input between line breaks and NUL runs (trimmed, BOM stripped) is in
/// the repaired file or in the sidecar: nothing went to nowhere. A piece the repair split
/// (records glued together, a torn fragment before a record, a record before garbage) must be
/// made of parts that are each in the sidecar or a record of the repaired file.
fn assert_nothing_lost(input: &[u8], out: &[u8], sidecar: &[u8], ctx: &str) {
    let out_values: Vec<Option<Value>> = out
        .split(|&b| b == b'\n')
        .map(without_fixed_fields)
        .collect();
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    for piece in input.split(|&b| b == b'\n' || b == 0) {
        let piece = piece.trim_ascii();
        assert!(
            piece.is_empty()
                || contains(out, piece)
                || contains(sidecar, piece)
                || covered(piece, out, &out_values, sidecar),
            "{ctx}: bytes are neither in the repaired file nor in the sidecar:\n{}",
            String::from_utf8_lossy(piece)
        );
    }
}

/// `piece` is a sequence of parts (white space between them allowed), each bytes of the
/// sidecar or a JSON value that is a record of `out` (perhaps relinked). A part of the sidecar
/// is taken as long as it goes (the sidecar has a line break after each part the repair moved
/// there, so a longest match ends where the repair's part ends).
fn covered(piece: &[u8], out: &[u8], out_values: &[Option<Value>], sidecar: &[u8]) -> bool {
    let n = piece.len();
    // Where a part can start: at 0, and where one ends (white space skipped).
    let mut start = vec![false; n + 1];
    let ends_at = |start: &mut [bool], mut end: usize| {
        while end < n && piece[end].is_ascii_whitespace() {
            end += 1;
        }
        start[end] = true;
    };
    start[0] = true;
    for i in 0..n {
        if !start[i] {
            continue;
        }
        let (mut lo, mut hi) = (i, n);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if contains(sidecar, &piece[i..mid]) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo > i {
            ends_at(&mut start, lo);
        }
        if matches!(piece[i], b'{' | b'[') {
            let mut values = serde_json::Deserializer::from_slice(&piece[i..]).into_iter::<Value>();
            if let Some(Ok(_)) = values.next() {
                let record = &piece[i..i + values.byte_offset()];
                if contains(out, record)
                    || without_fixed_fields(record).is_some_and(|v| out_values.contains(&Some(v)))
                {
                    ends_at(&mut start, i + values.byte_offset());
                }
            }
        }
    }
    start[n]
}

// ---------------------------------------------------------------------------------------------
// One input through fsck and repair
// ---------------------------------------------------------------------------------------------

/// One JSONL input through fsck and repair, with every check: the damage is reported, records
/// kept, nothing lost, settled (and, with `redetect`, still detected as the same format).
/// Returns the repaired bytes.
fn sweep_jsonl(bench: &Bench, input: &[u8], redetect: bool, ctx: &str) -> Vec<u8> {
    bench.put(input);
    let d = diagnosis(&bench.path, None, ctx);
    let format = d.report.format;
    let torn = input
        .rsplit(|&b| b == b'\n')
        .next()
        .is_some_and(|l| !l.trim_ascii().is_empty());
    assert!(
        !torn || format.is_none() || d.report.fixable() > 0,
        "{ctx}: the unterminated last line is not reported: {:?}",
        codes(&d)
    );
    let r = repair_with(&bench.path, d, false, ctx);
    let out = bench.read();
    if !r.changed {
        assert_eq!(out, input, "{ctx}: unchanged file differs");
        assert!(bench.others().is_empty(), "{ctx}: {:?}", bench.others());
    }
    let records = complete_records(input);
    assert_records_kept(&records, &out, ctx);
    assert_nothing_lost(input, &out, &sidecar_of(&r), ctx);
    if format.is_some() {
        let (n, again) = assert_settled(&bench.path, format.filter(|_| !redetect), false, ctx);
        if !out.trim_ascii().is_empty() {
            assert_eq!(again, format, "{ctx}: the repaired file is another format");
        }
        assert!(
            n >= records.len() as u64,
            "{ctx}: {n} records after repair, {} before",
            records.len()
        );
    }
    out
}

/// One whole-file JSON input through fsck and repair: a salvageable cut is rebuilt from its
/// complete messages with the rest in the sidecar, a document with unanswered calls gets
/// their results; anything else is left exactly as it is.
fn sweep_document(bench: &Bench, input: &[u8], ctx: &str) {
    bench.put(input);
    let d = diagnosis(&bench.path, None, ctx);
    if serde_json::from_slice::<Value>(input).is_err() {
        assert!(
            d.format.is_none() || d.report.count(Severity::Error) > 0,
            "{ctx}: a document that is not JSON is reported clean: {:?}",
            codes(&d)
        );
    }
    // How much of the input the repair keeps (the rest goes to the sidecar).
    let (kept, salvaged) = match &d.fixes {
        Fixes::Document {
            rewrite: Some(Rewrite::Salvage(s)),
        } => (Some(s.cut_at as usize), true),
        Fixes::Document {
            rewrite: Some(Rewrite::Closed(_)),
        } => (Some(input.len()), false),
        _ => (None, false),
    };
    assert_eq!(
        codes(&d).contains(&"truncated-document"),
        salvaged,
        "{ctx}: truncated-document without a salvage (or the reverse): {:?}",
        codes(&d)
    );
    let r = repair_with(&bench.path, d, false, ctx);
    let out = bench.read();
    let Some(cut_at) = kept else {
        assert!(!r.changed, "{ctx}: changed without a rewrite");
        assert_eq!(out, input, "{ctx}: file changed");
        assert!(
            bench.others().is_empty(),
            "{ctx}: wrote {:?}",
            bench.others()
        );
        return;
    };
    assert!(r.changed, "{ctx}: rewrite not written");
    serde_json::from_slice::<Value>(&out)
        .unwrap_or_else(|e| panic!("{ctx}: repaired document is not JSON: {e}"));
    assert_document_kept(&input[..cut_at], &out, ctx);
    assert_eq!(
        sidecar_of(&r),
        &input[cut_at..],
        "{ctx}: sidecar is not the bytes from {cut_at}"
    );
    assert_settled(&bench.path, None, true, ctx);
}

/// The lines of `kept` are lines of `out`, in order, but for what closing a call changes (a
/// `"result": null` goes, a comma is added after `args`); the last one may be cut short.
fn assert_document_kept(kept: &[u8], out: &[u8], ctx: &str) {
    let norm = |l: &[u8]| -> Vec<u8> { l.strip_suffix(b",").unwrap_or(l).to_vec() };
    let mut out_lines = out.split(|&b| b == b'\n').map(norm);
    let kept: Vec<&[u8]> = kept.trim_ascii_start().split(|&b| b == b'\n').collect();
    for (i, line) in kept.iter().enumerate() {
        let line = norm(line);
        if line.trim_ascii() == b"\"result\": null" {
            continue;
        }
        let last = i + 1 == kept.len();
        assert!(
            out_lines.any(|o| o == line || (last && o.starts_with(&line))),
            "{ctx}: line {} of the input is not kept: {}\nrepaired:\n{}",
            i + 1,
            String::from_utf8_lossy(&line),
            String::from_utf8_lossy(out)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Cut sweep: prefixes of a session, as a crash leaves it
// ---------------------------------------------------------------------------------------------

#[test]
fn cut_sweep_jsonl() {
    timed("cut sweep, JSONL", || {
        each_fixture(&jsonl_fixtures(), |path, bytes| {
            let bench = Bench::new(&name(path));
            for cut in sample(bytes, 64, 23) {
                let ctx = format!("{} cut at {cut}", name(path));
                sweep_jsonl(&bench, &bytes[..cut], true, &ctx);
            }
        })
    });
}

#[test]
fn cut_sweep_whole_file() {
    let mut files = fixtures("gemini-json", ".json");
    files.extend(fixtures("checkpoint", ".json"));
    timed("cut sweep, whole-file JSON", || {
        each_fixture(&files, |path, bytes| {
            let bench = Bench::new(&name(path));
            for cut in sample(bytes, 128, 7) {
                let ctx = format!("{} cut at {cut}", name(path));
                sweep_document(&bench, &bytes[..cut], &ctx);
            }
        })
    });
}

// ---------------------------------------------------------------------------------------------
// 2. Glue, NUL padding, flipped bytes
// ---------------------------------------------------------------------------------------------

/// Offsets where lines start: 0 and after each `\n` (the end of the file included).
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let breaks = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n');
    std::iter::once(0)
        .chain(breaks.map(|(i, _)| i + 1))
        .collect()
}

/// Every record is a line of `out`, byte for byte (nothing here calls for a relink).
fn assert_lines(records: &[&[u8]], out: &[u8], ctx: &str) {
    for rec in records {
        assert!(
            out.split(|&b| b == b'\n').any(|l| l == *rec),
            "{ctx}: record not kept byte for byte:\n{}",
            String::from_utf8_lossy(rec)
        );
    }
}

#[test]
fn glued_lines_are_split_again() {
    timed("glue", || {
        each_fixture(&jsonl_fixtures(), |path, bytes| {
            let bench = Bench::new(&name(path));
            // Records are objects: a glued non-object value (`[1,2,3]{...}`) is not split
            // apart, the line goes to the sidecar whole (`sweep_jsonl` checks nothing is lost).
            let records: Vec<&[u8]> = complete_records(bytes)
                .into_iter()
                .filter(|r| r.starts_with(b"{"))
                .collect();
            for at in line_starts(bytes).into_iter().skip(1) {
                let ctx = format!("{} without the newline at {}", name(path), at - 1);
                let input = [&bytes[..at - 1], &bytes[at..]].concat();
                let out = sweep_jsonl(&bench, &input, true, &ctx);
                assert_lines(&records, &out, &ctx);
            }
        })
    });
}

#[test]
fn nul_padding_is_stripped() {
    timed("NUL padding", || {
        each_fixture(&jsonl_fixtures(), |path, bytes| {
            let bench = Bench::new(&name(path));
            let records = complete_records(bytes);
            for at in line_starts(bytes) {
                for n in [1, 7, 4096] {
                    let ctx = format!("{} with {n} NULs at {at}", name(path));
                    let input = [&bytes[..at], &vec![0; n], &bytes[at..]].concat();
                    let out = sweep_jsonl(&bench, &input, true, &ctx);
                    assert_lines(&records, &out, &ctx);
                    assert!(!out.contains(&0), "{ctx}: NUL left");
                }
            }
        })
    });
}

#[test]
fn flipped_bytes() {
    timed("byte flips", || {
        each_fixture(&jsonl_fixtures(), |path, bytes| {
            let bench = Bench::new(&name(path));
            for at in sample(&bytes[..bytes.len() - 1], 16, 29) {
                // One flip per offset, in turn (all three with CRASH_SWEEP_FULL).
                let full = std::env::var_os("CRASH_SWEEP_FULL").is_some();
                let flips = [0xFF, b'"', b'}'];
                for (i, &flip) in flips.iter().enumerate() {
                    if !full && i != at % 3 {
                        continue;
                    }
                    let ctx = format!("{} with {:?} at {at}", name(path), flip as char);
                    let mut input = bytes.to_vec();
                    input[at] = flip;
                    sweep_jsonl(&bench, &input, true, &ctx);
                }
            }
        })
    });
}

// ---------------------------------------------------------------------------------------------
// 3. Damage fixtures
// ---------------------------------------------------------------------------------------------

/// The code a damage fixture is named after.
fn code_for(stem: &str) -> &str {
    match stem {
        "blank-lines" => "blank-line",
        "tool-call-unanswered-at-end" | "checkpoint-tool-call-unanswered" => "tool-call-unanswered",
        "checkpoint-not-history" => "unreadable",
        "pi-header-missing"
        | "codex-session-meta-missing"
        | "gemini-jsonl-header-missing"
        | "llxprt-session-start-missing" => "header-missing",
        "claude-orphan-parent" => "orphan-parent",
        "claude-tool-use-unanswered" => "tool-call-unanswered",
        "llxprt-seq-not-increasing" => "seq-not-increasing",
        "gemini-jsonl-rewind-unknown" => "rewind-unknown",
        other => other,
    }
}

#[test]
fn damaged_fixtures_are_found_and_repaired() {
    for path in fixtures("damaged", "") {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let ctx = name(&path);
        let original = fs::read(&path).unwrap();
        let bench = Bench::new(&name(&path));
        bench.put(&original);
        let d = diagnosis(&bench.path, None, &ctx);
        let code = code_for(&stem);
        assert!(
            codes(&d).contains(&code),
            "{ctx}: no `{code}` in {:?}",
            codes(&d)
        );
        let fixable = d.report.fixable() > 0;
        let r = repair_with(&bench.path, d, true, &ctx);
        assert_eq!(r.changed, fixable, "{ctx}: changed");
        assert_eq!(r.changed, r.backup.is_some(), "{ctx}: backup");
        if let Some(backup) = &r.backup {
            assert_eq!(fs::read(backup).unwrap(), original, "{ctx}: backup");
        }
        let out = bench.read();
        if ctx.ends_with(".jsonl") {
            assert_records_kept(&complete_records(&original), &out, &ctx);
            assert_nothing_lost(&original, &out, &sidecar_of(&r), &ctx);
        } else {
            serde_json::from_slice::<Value>(&out)
                .unwrap_or_else(|e| panic!("{ctx}: repaired document is not JSON: {e}"));
        }
        let d = diagnosis(&bench.path, None, &ctx);
        assert!(
            d.report.is_clean(),
            "{ctx}: after repair: {:#?}",
            d.report.issues
        );
    }
}

#[test]
fn unfixable_fixtures_are_left_alone() {
    for path in fixtures("unfixable", "") {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let ctx = name(&path);
        let original = fs::read(&path).unwrap();
        let bench = Bench::new(&name(&path));
        bench.put(&original);
        let d = diagnosis(&bench.path, None, &ctx);
        let code = code_for(&stem);
        let found: Vec<_> = d.report.issues.iter().filter(|i| i.code == code).collect();
        assert!(!found.is_empty(), "{ctx}: no `{code}` in {:?}", codes(&d));
        for i in &found {
            assert_eq!(i.severity, Severity::Error, "{ctx}: {i:?}");
            assert_eq!(i.fix, None, "{ctx}: {i:?}");
        }
        let r = repair_with(&bench.path, d, true, &ctx);
        assert!(!r.changed, "{ctx}: repair changed the file");
        assert_eq!(bench.read(), original, "{ctx}");
        assert!(bench.others().is_empty(), "{ctx}: {:?}", bench.others());
    }
}

// ---------------------------------------------------------------------------------------------
// Bugs the sweeps found (minimal inputs, fixed; kept as regression tests)
// ---------------------------------------------------------------------------------------------

/// Invalid UTF-8 replaced by U+FFFD of the same length was not saved in the sidecar.
#[test]
fn invalid_utf8_of_the_same_length_goes_to_the_sidecar() {
    // A 4-byte character cut after 3 bytes (F0 9F 8D): one U+FFFD (EF BF BD) replaces it.
    let input: &[u8] = b"{\"uuid\":\"a\",\"parentUuid\":null,\"sessionId\":\"s\",\"type\":\"user\",\"cwd\":\"/\",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":\"\xF0\x9F\x8D\"}]}}\n";
    let bench = Bench::new("s.jsonl");
    let out = sweep_jsonl(&bench, input, true, "truncated emoji");
    assert_ne!(out, input);
}

/// A repair that kept a stub record as line 1 left a file detection no longer recognised.
#[test]
fn a_stub_first_line_does_not_hide_the_format() {
    // Line 1 is a damaged record (a `,` became `}`): the repair keeps `{"uuid":"a"}` as a
    // record and moves the rest to the sidecar. Detection then reads that stub as line 1, and
    // the `isSidechain` key of line 2 rules out the file-name fallback: the repaired file is
    // "unknown format" to fsck, show and convert.
    let input = concat!(
        r#"{"uuid":"a"}"parentUuid":null,"sessionId":"s","type":"user","cwd":"/"}"#,
        "\n",
        r#"{"uuid":"b","parentUuid":null,"sessionId":"s","type":"user","cwd":"/","isSidechain":false,"message":{"role":"user","parts":[{"text":"hi"}]}}"#,
        "\n"
    );
    let bench = Bench::new("s.jsonl");
    sweep_jsonl(&bench, input.as_bytes(), true, "stub first line");
}
