//! Fuzzing with proptest (no nightly toolchain, so no cargo-fuzz): generated inputs through
//! every reader, the records layer, fsck and repair (`hostile/exercise.rs` says what must hold
//! besides "no panic"). Targets:
//!
//! - `fuzz_bytes`: arbitrary bytes, biased towards JSON tokens, the fields the formats key on,
//!   each format's first record, NULs, CR, BOMs, bytes that are not UTF-8, lone surrogates;
//! - `fuzz_mutations`: every fixture in `fixtures/`, mutated: truncated at a random offset,
//!   bytes flipped, inserted, deleted, NUL runs inserted, lines duplicated, swapped and
//!   dropped, two fixtures spliced;
//! - `fuzz_lines`: records of one format's fixtures in a random order (duplicated, dropped, cut
//!   short): the tree and conversation checks and their repairs, and a file read without a
//!   remark written back byte for byte;
//! - `fuzz_records`: the records layer alone (the streaming splitter against `split_slice`,
//!   every chunk size from 1 byte), on both kinds of input; cheap, so many more cases.
//!
//! ```sh
//! cargo test --test fuzz                                   # default suite: a few seconds
//! FUZZ_CASES=2000 cargo test --release --test fuzz -- --nocapture
//! FUZZ_SECONDS=60 cargo test --release --test fuzz -- --nocapture --test-threads 1
//! scripts/fuzz                                             # each target for 60 s, with figures
//! ```
//!
//! A case fails when anything panics, when an invariant breaks, or when it takes more than
//! `FUZZ_CASE_SECONDS` (default 10 in release, 120 in debug): inputs are at most a few tens of
//! kilobytes, so seconds mean work out of proportion (the pi reader was cubic in records glued
//! on one line).
//!
//! Each target prints one `FUZZ target=... execs=... secs=... crashes=...` line. The default
//! suite (and `FUZZ_CASES`) uses fixed seeds, the same cases every run; with `FUZZ_SECONDS` the
//! seed comes from the clock and is printed; `FUZZ_SEED=N` fixes it. A failing case is shrunk
//! by proptest, saved as `fixtures/fuzz/<target>.<hash>.<name>` and replayed by
//! `replay_fuzz_fixtures` from then on (commit it with the fix).

#[path = "hostile/exercise.rs"]
mod exercise;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use exercise::{Bench, Depth, everything, records_layer};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use sessiontool::formats;

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/// One generated input: a file name (detection reads it), bytes, the format fsck is also forced
/// to, and the splitter's chunk size.
#[derive(Clone)]
struct Case {
    name: String,
    bytes: Vec<u8>,
    forced: &'static str,
    chunk: usize,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = &self.bytes[..self.bytes.len().min(4096)];
        write!(
            f,
            "Case {{ name: {:?}, forced: {:?}, chunk: {}, {} bytes: b\"{}\"{} }}",
            self.name,
            self.forced,
            self.chunk,
            self.bytes.len(),
            shown.escape_ascii(),
            if shown.len() < self.bytes.len() {
                " ..."
            } else {
                ""
            }
        )
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture file (below `fixtures/`, sorted), with its bytes. The saved cases of
/// `fixtures/fuzz/` only when fuzzing for longer (`FUZZ_SECONDS` or `FUZZ_CASES`): some are
/// heavy for the default suite's debug build, which replays each of them anyway.
fn fixtures() -> Vec<(String, Vec<u8>)> {
    let longer = env_u64("FUZZ_SECONDS").is_some() || env_u64("FUZZ_CASES").is_some();
    let mut out = Vec::new();
    let mut dirs = vec![root().join("fixtures")];
    while let Some(dir) = dirs.pop() {
        if dir == saved_dir() && !longer {
            continue;
        }
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                if name != "README.md" {
                    out.push((name, fs::read(&p).unwrap()));
                }
            }
        }
    }
    out.sort();
    out
}

/// The lines of each JSONL format's fixtures (with their `\n`), and a file name for it.
fn format_lines() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    for format in formats::all().iter().filter(|f| f.is_jsonl()) {
        let dir = root().join("fixtures").join(format.name());
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        let mut lines = Vec::new();
        for f in files {
            let bytes = fs::read(f).unwrap();
            lines.extend(bytes.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        if !lines.is_empty() {
            let name = match format.name() {
                "codex-jsonl" => "rollout-2026-01-12T08-00-00-0199a3c4.jsonl",
                "gemini-jsonl" => "session-2026-04-20T09-00-7c1e0a52.jsonl",
                _ => "chat.jsonl",
            };
            out.push((name, lines));
        }
    }
    out
}

const NAMES: &[&str] = &[
    "chat.jsonl",
    "session.json",
    "checkpoint-x.json",
    "rollout-2026-01-12T08-00-00-0199a3c4.jsonl",
    "session-2026-04-20T09-00-7c1e0a52.jsonl",
    "20250731_143052_abc123.json",
    "export.md",
    "input",
];

/// Bytes that matter to a JSON or JSONL reader.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\n",
    b"\r\n",
    b"\r",
    b"\0",
    b"\0\0\0\0\0\0\0\0",
    b"\\",
    b" ",
    b"\xEF\xBB\xBF",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    br#""\ud800""#,
    br#""\udc00\ud800""#,
    br#"\u0000"#,
    b"null",
    b"true",
    b"0",
    b"-1e999",
    b"18446744073709551616",
    b"\"\"",
    br#""uuid":"#,
    br#""parentUuid":"#,
    br#""id":"#,
    br#""parentId":"#,
    br#""parent_id":"#,
    br#""sessionId":"#,
    br#""type":"#,
    br#""message":"#,
    br#""messages":["#,
    br#""history":["#,
    br#""payload":{"#,
    br#""role":"user","parts":[{"text":"hi"}]"#,
    br#""content":"#,
    br#""user""#,
    br#""assistant""#,
    br#""tool_result""#,
    br#""tool_use""#,
    br#""function_call""#,
    br#""session_meta""#,
    br#""session_start""#,
    br#""session""#,
    br#""a""#,
    br#""b""#,
    br#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user"}"#,
    br#"{"uuid":"b","parentUuid":"a","sessionId":"s","type":"assistant"}"#,
    br#"{"type":"tool_use","id":"c1","name":"x","input":{}}"#,
    br#"{"type":"tool_result","tool_use_id":"c1","content":"ok"}"#,
    br#"{"functionCall":{"id":"c1","name":"x","args":{}}}"#,
    br#"{"functionResponse":{"id":"c1","name":"x","response":{}}}"#,
    br#"{"v":1,"seq":1,"ts":"2026-01-01T00:00:00Z","type":"session_start","payload":{}}"#,
];

/// Tokens, each format's first record, and random bytes, in any order.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let mut tokens: Vec<Vec<u8>> = TOKENS.iter().map(|t| t.to_vec()).collect();
    for (_, lines) in format_lines() {
        tokens.push(lines[0].clone());
    }
    let piece = prop_oneof![
        3 => vec(any::<u8>(), 0..8),
        6 => select(tokens),
    ];
    vec(piece, 0..160).prop_map(|pieces| pieces.concat())
}

/// A change to some bytes.
#[derive(Clone, Debug)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Nuls(Index, usize),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    DropLine(Index),
    /// This input up to a point, then another fixture from a point.
    Splice(Index, Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let insert = prop_oneof![
        vec(any::<u8>(), 1..8),
        select(TOKENS).prop_map(<[u8]>::to_vec),
    ];
    prop_oneof![
        2 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        3 => (any::<Index>(), insert).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        2 => (any::<Index>(), prop_oneof![1usize..16, 4000usize..5000])
            .prop_map(|(i, n)| Mutation::Nuls(i, n)),
        2 => any::<Index>().prop_map(Mutation::DuplicateLine),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        2 => any::<Index>().prop_map(Mutation::DropLine),
        1 => (any::<Index>(), any::<Index>(), any::<Index>())
            .prop_map(|(f, a, b)| Mutation::Splice(f, a, b)),
    ]
}

/// Where to cut or insert in `len` bytes (`0..=len`).
fn at(i: &Index, len: usize) -> usize {
    i.index(len + 1)
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation, corpus: &[(String, Vec<u8>)]) {
    let len = bytes.len();
    match m {
        Mutation::Truncate(i) => bytes.truncate(at(i, len)),
        Mutation::Flip(i, bit) => {
            if len > 0 {
                bytes[i.index(len)] ^= 1 << bit;
            }
        }
        Mutation::Insert(i, b) => {
            let p = at(i, len);
            bytes.splice(p..p, b.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let p = at(i, len);
            bytes.drain(p..(p + n).min(len));
        }
        Mutation::Nuls(i, n) => {
            let p = at(i, len);
            bytes.splice(p..p, std::iter::repeat_n(0, *n));
        }
        Mutation::DuplicateLine(_) | Mutation::SwapLines(..) | Mutation::DropLine(_) => {
            let mut lines: Vec<Vec<u8>> = bytes
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            if lines.is_empty() {
                return;
            }
            let n = lines.len();
            match m {
                Mutation::DuplicateLine(i) => {
                    let i = i.index(n);
                    lines.insert(i, lines[i].clone());
                }
                Mutation::SwapLines(a, b) => lines.swap(a.index(n), b.index(n)),
                Mutation::DropLine(i) => {
                    lines.remove(i.index(n));
                }
                _ => unreachable!(),
            }
            *bytes = lines.concat();
        }
        Mutation::Splice(f, a, b) => {
            let other = &corpus[f.index(corpus.len())].1;
            bytes.truncate(at(a, len));
            bytes.extend_from_slice(&other[at(b, other.len())..]);
        }
    }
}

fn forced() -> impl Strategy<Value = &'static str> {
    select(formats::all().iter().map(|f| f.name()).collect::<Vec<_>>())
}

fn case(
    name: impl Strategy<Value = String>,
    bytes: impl Strategy<Value = Vec<u8>>,
) -> impl Strategy<Value = Case> {
    (name, bytes, forced(), 1usize..64).prop_map(|(name, bytes, forced, chunk)| Case {
        name,
        bytes,
        forced,
        chunk,
    })
}

fn arbitrary_case() -> impl Strategy<Value = Case> {
    case(select(NAMES).prop_map(String::from), hostile_bytes())
}

/// A fixture (under its own name, or now and then another), mutated one to four times.
fn mutated_case() -> impl Strategy<Value = Case> {
    let corpus = fixtures();
    assert!(!corpus.is_empty(), "no fixtures");
    let pick = (
        any::<Index>(),
        vec(mutation(), 1..5),
        prop::option::weighted(0.1, select(NAMES)),
    );
    let bytes_and_name = pick.prop_map(move |(f, mutations, rename)| {
        let (name, bytes) = &corpus[f.index(corpus.len())];
        let mut bytes = bytes.clone();
        for m in &mutations {
            apply(&mut bytes, m, &corpus);
        }
        (rename.map_or_else(|| name.clone(), String::from), bytes)
    });
    (bytes_and_name, forced(), 1usize..64).prop_map(|((name, bytes), forced, chunk)| Case {
        name,
        bytes,
        forced,
        chunk,
    })
}

/// One format's records in any order, some cut short, some without their newline.
fn lines_case() -> impl Strategy<Value = Case> {
    let all = format_lines();
    let pick = (
        any::<Index>(),
        vec((any::<Index>(), 0u8..10, any::<Index>()), 1..24),
    );
    let made = pick.prop_map(move |(fmt, picks)| {
        let (name, lines) = &all[fmt.index(all.len())];
        let mut bytes = Vec::new();
        for (line, damage, cut) in picks {
            let l = &lines[line.index(lines.len())];
            match damage {
                0 => bytes.extend_from_slice(&l[..cut.index(l.len() + 1)]),
                1 => bytes.extend_from_slice(l.strip_suffix(b"\n").unwrap_or(l)),
                _ => bytes.extend_from_slice(l),
            }
        }
        (name.to_string(), bytes)
    });
    (made, forced(), 1usize..64).prop_map(|((name, bytes), forced, chunk)| Case {
        name,
        bytes,
        forced,
        chunk,
    })
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The folder failing cases are saved in and replayed from.
fn saved_dir() -> PathBuf {
    root().join("fixtures").join("fuzz")
}

/// FNV-1a, for names that do not change with the toolchain.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Saves a failing case as `fixtures/fuzz/<target>.<hash>.<name>`.
fn save(target: &str, case: &Case) -> PathBuf {
    let dir = saved_dir();
    fs::create_dir_all(&dir).unwrap();
    let name = exercise::file_name(&case.name);
    let p = dir.join(format!("{target}.{:016x}.{name}", fnv(&case.bytes)));
    fs::write(&p, &case.bytes).unwrap();
    p
}

/// Runs `test` on cases from `strategy`: `FUZZ_CASES` of them (default `cases`), or as many
/// as fit in `FUZZ_SECONDS`. A case fails when `test` panics or says so, or when it takes over
/// `FUZZ_CASE_SECONDS`. Failing cases are shrunk, saved and counted; the target
/// fails at the end if there was any.
fn drive<S>(target: &str, strategy: S, cases: u32, test: impl Fn(&Case) -> Result<(), String>)
where
    S: Strategy<Value = Case>,
{
    let seconds = env_u64("FUZZ_SECONDS");
    let cases = env_u64("FUZZ_CASES").map_or(cases, |c| c as u32);
    let base_seed = env_u64("FUZZ_SEED").unwrap_or_else(|| match seconds {
        Some(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
        None => fnv(target.as_bytes()),
    });
    // A case over this is a failure too: inputs are small, so only work out of proportion to
    // them (a quadratic loop) takes seconds.
    let default_slow = if cfg!(debug_assertions) { 120 } else { 10 };
    let slow = Duration::from_secs(env_u64("FUZZ_CASE_SECONDS").unwrap_or(default_slow));
    let execs = AtomicU64::new(0);
    let start = Instant::now();
    let deadline = seconds.map(|s| start + Duration::from_secs(s));
    let mut crashes = Vec::new();
    let mut round = 0u64;
    loop {
        let batch = if deadline.is_some() { 64 } else { cases };
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&base_seed.to_le_bytes());
        seed[8..16].copy_from_slice(&round.to_le_bytes());
        let config = Config {
            cases: batch,
            failure_persistence: None,
            max_shrink_iters: 4096,
            max_shrink_time: 120_000,
            ..Config::default()
        };
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let result = runner.run(&strategy, |case| {
            // Past the deadline the rest of the batch is generated but not run.
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
            execs.fetch_add(1, Ordering::Relaxed);
            let started = Instant::now();
            test(&case).map_err(TestCaseError::fail)?;
            let took = started.elapsed();
            if took > slow {
                return Err(TestCaseError::fail(format!(
                    "slow: {took:.2?} on one case (FUZZ_CASE_SECONDS={})",
                    slow.as_secs()
                )));
            }
            Ok(())
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(reason, case)) => {
                let p = save(target, &case);
                eprintln!(
                    "FUZZ CRASH target={target} seed={base_seed} round={round}: {reason}\n  {case:?}\n  saved as {}",
                    p.display()
                );
                crashes.push(p);
            }
            Err(TestError::Abort(reason)) => panic!("{target}: aborted: {reason}"),
        }
        round += 1;
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    println!(
        "FUZZ target={target} execs={} secs={:.1} crashes={} seed={base_seed}",
        execs.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64(),
        crashes.len()
    );
    assert!(
        crashes.is_empty(),
        "{target}: {} failing case(s) saved: {crashes:?}",
        crashes.len()
    );
}

/// Everything on one case: detection, every reader and writer, keys, fsck detected and as
/// the case's forced format, repair of a copy; with `roundtrip`, a file read without a remark
/// must be written back byte for byte (the `lines` target: whole records as the tools wrote
/// them).
fn full(bench: &Bench, case: &Case, roundtrip: bool) -> Result<(), String> {
    let depth = Depth {
        forced: vec![case.forced],
        chunk: Some(case.chunk),
        roundtrip,
        small_blocks: small_blocks(&case.bytes),
        ..Depth::full()
    };
    everything(bench, &case.name, &case.bytes, &depth)
}

/// The small blocks fsck also checks in (the report must not change): every line a block of
/// its own in a small input, a few lines a block in a larger one.
fn small_blocks(bytes: &[u8]) -> Vec<usize> {
    if bytes.len() <= 4096 {
        vec![1, 7]
    } else {
        vec![4096]
    }
}

#[test]
fn fuzz_bytes() {
    let bench = Bench::new();
    drive("bytes", arbitrary_case(), 64, |c| full(&bench, c, false));
}

#[test]
fn fuzz_mutations() {
    let bench = Bench::new();
    drive("mutations", mutated_case(), 96, |c| full(&bench, c, false));
}

#[test]
fn fuzz_lines() {
    let bench = Bench::new();
    drive("lines", lines_case(), 48, |c| full(&bench, c, true));
}

#[test]
fn fuzz_records() {
    let strategy = prop_oneof![arbitrary_case(), mutated_case()];
    drive("records", strategy, 1024, |c| {
        records_layer(&c.bytes, c.chunk)
    });
}

/// Every saved case in `fixtures/fuzz/`, through everything (every format forced), the
/// records layer at several chunk sizes; on two threads.
#[test]
fn replay_fuzz_fixtures() {
    // The saved cases are part of the repository: a missing folder is a failure.
    let entries =
        fs::read_dir(saved_dir()).unwrap_or_else(|e| panic!("{}: {e}", saved_dir().display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    std::thread::scope(|s| {
        let halves: Vec<_> = files
            .chunks(files.len().div_ceil(2).max(1))
            .map(|part| s.spawn(move || part.iter().for_each(|p| replay(&Bench::new(), p))))
            .collect();
        for h in halves {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    eprintln!("replayed {} saved case(s)", files.len());
}

fn replay(bench: &Bench, p: &Path) {
    let file = p.file_name().unwrap().to_string_lossy().into_owned();
    // `<target>.<hash>.<name>`: the name is what detection saw.
    let name = file.splitn(3, '.').nth(2).unwrap_or(&file).to_string();
    let bytes = fs::read(p).unwrap();
    for chunk in [1, 2, 3, 7, 64, 4096] {
        records_layer(&bytes, chunk).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let depth = Depth {
        small_blocks: small_blocks(&bytes),
        ..Depth::full()
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        everything(bench, &name, &bytes, &depth)
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("{file}: {e}"),
        Err(panic) => {
            eprintln!("PANIC on {file}");
            std::panic::resume_unwind(panic)
        }
    }
}
