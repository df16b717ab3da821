//! Sessions deep enough to break anything that recurses over depth or walks a branch per node
//! (issue 14, item 12): a chain where each record answers the one before, and a comb, a
//! chain where every record also has a side leaf (so every record is a branch point). Every
//! command that walks the tree (tree, show, fsck, the Markdown and HTML exports, and convert
//! into every format) must succeed, print lines of bounded length and bytes in proportion to
//! the records, write the head's text, and stay within a memory bound. `tree` used to
//! overflow the stack on a 25,000-deep comb, and its output (and `tree --full`'s on a plain
//! chain) grew with the square of the depth.
//!
//! ```sh
//! cargo test --test deep_sessions                  # 2,000 records and fsck at 200,000: ~20 s
//! cargo test --release --test deep_sessions -- --ignored --nocapture --test-threads 1
//! ```
//!
//! The default runs take 2,000 records through the command line (a debug build reads about
//! 5,000 records a second) and fsck through a 100,000-deep comb; the drawing itself is
//! tested a million deep in memory (`src/bin/sessiontool/tree.rs`, `show.rs`,
//! `src/tree.rs`). The long variant runs a million-deep chain and a million-deep comb (two
//! million records, about 10 GB of memory for the session model) through the release
//! binary and prints each command's time and peak memory as `DEEP` lines and a table
//! (about 30 minutes on 2 cores).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A Qwen Code session `depth` records deep; with `comb`, every record but the first also
/// has a side leaf (written after the chain goes on, so the head is the last side leaf).
fn session(depth: usize, comb: bool) -> String {
    let mut out = String::with_capacity(depth * if comb { 400 } else { 200 });
    let record = |out: &mut String, id: &str, parent: Option<&str>, user: bool| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let (kind, role) = if user {
            ("user", "user")
        } else {
            ("assistant", "model")
        };
        out.push_str(&format!(
            "{{\"uuid\":\"{id}\",\"parentUuid\":{parent},\"sessionId\":\"0d9c485b-92c7-4b8b-99a3-34374bcf15ab\",\"timestamp\":\"2025-12-05T14:00:00.000Z\",\"type\":\"{kind}\",\"cwd\":\"/w\",\"message\":{{\"role\":\"{role}\",\"parts\":[{{\"text\":\"text of {id}\"}}]}}}}\n"
        ));
    };
    for i in 0..depth {
        let parent = (i > 0).then(|| format!("n{}", i - 1));
        record(&mut out, &format!("n{i}"), parent.as_deref(), i % 2 == 0);
        if comb && i > 0 {
            record(&mut out, &format!("s{i}"), parent.as_deref(), i % 2 == 1);
        }
    }
    out
}

/// What one run of the binary did.
#[derive(Debug)]
struct Ran {
    code: Option<i32>,
    /// Standard output, measured, not kept.
    lines: usize,
    bytes: usize,
    longest: usize,
    stderr: String,
    peak_kib: u64,
    elapsed: Duration,
}

/// Runs `sessiontool args`, killed after `limit`; peak memory from the kernel's accounting of
/// the child (`wait4`), standard output counted as it streams.
fn run(args: &[&std::ffi::OsStr], limit: Duration) -> Ran {
    let started = Instant::now();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("sessiontool"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let counting = std::thread::spawn(move || {
        let (mut lines, mut bytes, mut longest, mut current) = (0, 0, 0, 0);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = stdout.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            bytes += n;
            for &b in &buf[..n] {
                if b == b'\n' {
                    lines += 1;
                    longest = longest.max(current);
                    current = 0;
                } else {
                    current += 1;
                }
            }
        }
        (lines, bytes, longest.max(current))
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let until = Instant::now() + limit;
            while Instant::now() < until {
                if done.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: the child is not reaped until `wait4` below returns, so the pid is ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        })
    };
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    done.store(true, Ordering::Relaxed);
    watchdog.join().unwrap();
    let (lines, bytes, longest) = counting.join().unwrap();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let ran = Ran {
        code,
        lines,
        bytes,
        longest,
        stderr: errors.join().unwrap(),
        peak_kib: usage.ru_maxrss as u64,
        elapsed: started.elapsed(),
    };
    // Reaped by wait4 already: dropping `child` does not wait again.
    drop(child);
    ran
}

/// A command on the session (`{}` among `args`; `out/...` in the test's folder), with the
/// bounds of what it prints on standard output (0: not checked, for an export to a file).
#[derive(Clone, Copy)]
struct Case {
    args: &'static [&'static str],
    longest: usize,
    bytes_per_record: usize,
}

const fn case(args: &'static [&'static str], longest: usize, bytes_per_record: usize) -> Case {
    Case {
        args,
        longest,
        bytes_per_record,
    }
}

/// The commands that walk the tree and print it.
const WALKS: &[Case] = &[
    case(&["tree", "{}"], 200, 200),
    case(&["tree", "--full", "{}"], 200, 200),
    case(&["tree", "--json", "{}"], 200, 2_000),
    case(&["show", "--width", "100", "{}"], 200, 400),
    case(&["show", "--json", "{}"], 200, 2_000),
    case(&["fsck", "{}"], 400, 100),
    case(&["fsck", "--json", "{}"], 400, 1_000),
];

/// The exports, and convert into the formats that hold a tree.
const EXPORTS: &[Case] = &[
    case(&["convert", "{}", "-o", "out/deep.md"], 0, 0),
    case(&["convert", "{}", "-o", "out/deep.html"], 0, 0),
    case(&["convert", "{}", "-o", "out/deep.jsonl"], 0, 0),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "claude-jsonl",
            "-o",
            "out/claude.jsonl",
        ],
        0,
        0,
    ),
    case(
        &["convert", "{}", "--to", "pi-jsonl", "-o", "out/pi.jsonl"],
        0,
        0,
    ),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "agent-jsonl",
            "-o",
            "out/agent.jsonl",
        ],
        0,
        0,
    ),
];

/// Convert into the formats that hold one branch.
const CONVERTS: &[Case] = &[
    case(
        &[
            "convert",
            "{}",
            "--to",
            "llxprt-jsonl",
            "-o",
            "out/llxprt.jsonl",
        ],
        0,
        0,
    ),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "codex-jsonl",
            "-o",
            "out/rollout-2026-01-12T08-00-00-0199a3c4.jsonl",
        ],
        0,
        0,
    ),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "gemini-jsonl",
            "-o",
            "out/session-2026-04-20T09-00-7c1e0a52.jsonl",
        ],
        0,
        0,
    ),
    case(&["convert", "{}", "-o", "out/session.json"], 0, 0),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "checkpoint",
            "-o",
            "out/checkpoint-deep.json",
        ],
        0,
        0,
    ),
    case(
        &[
            "convert",
            "{}",
            "--to",
            "simple-agent-json",
            "-o",
            "out/simple.json",
        ],
        0,
        0,
    ),
];

/// A session written as `dir/name`.
struct Deep<'a> {
    dir: &'a Path,
    name: &'a str,
    records: usize,
    /// The text of the head (the last record): every output must hold it.
    head_text: String,
}

fn write<'a>(dir: &'a Path, name: &'static str, depth: usize, comb: bool) -> Deep<'a> {
    let text = session(depth, comb);
    fs::write(dir.join(name), &text).unwrap();
    fs::create_dir_all(dir.join("out")).unwrap();
    let last = text.lines().last().unwrap();
    let head_text = last.split("\"text\":\"").nth(1).unwrap();
    Deep {
        dir,
        name,
        records: text.lines().count(),
        head_text: head_text[..head_text.find('"').unwrap()].to_string(),
    }
}

/// Runs `cases` on the session; each must succeed within `limit`, print lines and bytes
/// within its bounds, write the head's text, and stay within `kib_per_record` of memory (over
/// a base of 64 MiB). Returns what each cost, for the long variant's table.
fn exercise(
    deep: &Deep,
    cases: &[Case],
    limit: Duration,
    kib_per_record: f64,
) -> Vec<(String, Ran)> {
    let (dir, name, records) = (deep.dir, deep.name, deep.records);
    let file = dir.join(name);
    let mut results = Vec::new();
    for c in cases {
        let args: Vec<PathBuf> = c
            .args
            .iter()
            .map(|a| match *a {
                "{}" => file.clone(),
                a if a.starts_with("out/") => dir.join(a),
                a => PathBuf::from(a),
            })
            .chain((c.args[0] == "convert").then(|| PathBuf::from("--force")))
            .collect();
        let os: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let what = format!("{name}: sessiontool {}", c.args.join(" "));
        let ran = run(&os, limit);
        eprintln!(
            "DEEP {what}: exit {:?}, {:.2} s, peak {} KiB ({:.2} KiB a record), {} lines, {} bytes, longest {}",
            ran.code,
            ran.elapsed.as_secs_f64(),
            ran.peak_kib,
            ran.peak_kib as f64 / records as f64,
            ran.lines,
            ran.bytes,
            ran.longest
        );
        assert_eq!(ran.code, Some(0), "{what} failed: {}", ran.stderr);
        if c.longest > 0 {
            assert!(
                ran.longest <= c.longest,
                "{what}: a line of {} bytes (more than {})",
                ran.longest,
                c.longest
            );
            assert!(ran.lines > 0, "{what} printed nothing");
            assert!(
                ran.bytes <= c.bytes_per_record * records,
                "{what}: {} bytes, more than {} a record",
                ran.bytes,
                c.bytes_per_record
            );
        }
        let allowed = (64 << 10) as f64 + kib_per_record * records as f64;
        assert!(
            (ran.peak_kib as f64) <= allowed,
            "{what}: peak {} KiB over {allowed} KiB",
            ran.peak_kib
        );
        if let Some(out) = c.args.iter().find(|a| a.starts_with("out/")) {
            let written = fs::read_to_string(dir.join(out)).unwrap();
            assert!(
                written.contains(&deep.head_text),
                "{what}: the head's text is not in the output"
            );
        }
        results.push((what, ran));
    }
    results
}

/// 2,000 records deep: the old `tree --full` printed 4 MB of indentation here (lines 4,000
/// columns long, growing with the square of the depth).
const CHAIN_DEPTH: usize = 2_000;
/// 1,000 deep (1,999 records, each of the chain a branch point): the old `tree` drew each
/// branch two columns right of the one before, and overflowed the stack at 25,000.
const COMB_DEPTH: usize = 1_000;

/// Each group takes a few seconds in debug (about half a second a command).
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn a_deep_chain_through_tree_show_and_fsck() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "chain.jsonl", CHAIN_DEPTH, false);
    exercise(&deep, WALKS, LIMIT, 32.0);
}

#[test]
fn a_deep_chain_exported_and_converted_to_tree_formats() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "chain.jsonl", CHAIN_DEPTH, false);
    exercise(&deep, EXPORTS, LIMIT, 32.0);
}

#[test]
fn a_deep_chain_converted_to_one_branch_formats() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "chain.jsonl", CHAIN_DEPTH, false);
    exercise(&deep, CONVERTS, LIMIT, 32.0);
}

#[test]
fn a_deep_comb_through_tree_show_and_fsck() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "comb.jsonl", COMB_DEPTH, true);
    exercise(&deep, WALKS, LIMIT, 32.0);
}

#[test]
fn a_deep_comb_exported_and_converted_to_tree_formats() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "comb.jsonl", COMB_DEPTH, true);
    exercise(&deep, EXPORTS, LIMIT, 32.0);
}

#[test]
fn a_deep_comb_converted_to_one_branch_formats() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "comb.jsonl", COMB_DEPTH, true);
    exercise(&deep, CONVERTS, LIMIT, 32.0);
}

/// A million deep, chain and comb, in release (see the module's doc). Each command within
/// 10 minutes and 12 KiB a record (the session model costs about 5; writing pi entries about
/// 3 more). The comb (two million records) goes through every walk, the exports and the
/// tree formats whose writers need the least besides the model: a one-branch target first
/// cuts it to its head branch, the million-deep chain done above, and pi's and the Go
/// agent's writers would need some 17 GB here.
#[test]
#[ignore = "long: a million-deep chain and comb, 10 to 16 GB of memory; run in release"]
fn a_million_deep_chain_and_comb_through_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let limit = Duration::from_secs(600);
    let every = [WALKS, EXPORTS, CONVERTS].concat();
    let for_comb: Vec<Case> = [WALKS, EXPORTS]
        .concat()
        .into_iter()
        .filter(|c| {
            !c.args
                .iter()
                .any(|a| *a == "pi-jsonl" || *a == "agent-jsonl")
        })
        .collect();
    let mut table = Vec::new();
    for (name, comb, cases) in [
        ("chain.jsonl", false, &every),
        ("comb.jsonl", true, &for_comb),
    ] {
        let deep = write(dir.path(), name, 1_000_000, comb);
        table.extend(exercise(&deep, cases, limit, 12.0));
        fs::remove_dir_all(dir.path().join("out")).unwrap();
        fs::remove_file(dir.path().join(name)).unwrap();
    }
    eprintln!("| command | seconds | peak MB |\n|---|--:|--:|");
    for (what, ran) in table {
        eprintln!(
            "| {what} | {:.1} | {} |",
            ran.elapsed.as_secs_f64(),
            ran.peak_kib >> 10
        );
    }
}

/// fsck's tree checks on a comb 100,000 deep (199,999 records, each of the chain a branch
/// point), through the library: a couple of seconds in debug.
#[test]
fn fsck_of_a_comb_100_000_deep() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("comb.jsonl");
    fs::write(&path, session(100_000, true)).unwrap();
    let started = Instant::now();
    let report = sessiontool::check(&path).unwrap();
    assert_eq!(report.records, 199_999);
    let dead = report
        .issues
        .iter()
        .find(|i| i.code == "dead-branches")
        .expect("the branches off the head are noted");
    assert!(
        dead.message
            .starts_with("99999 record(s) on 99999 branch(es)"),
        "{}",
        dead.message
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}
