//! A tool still writing the session while sessiontool works on it (issue 14, items 3-7). Each
//! test runs rounds of a real `sessiontool` process against a writer in the test process, in
//! each style the agents write: one descriptor kept open in append mode (a long-running
//! agent), open-append-close per record, a line written in two halves 50 ms apart, and a
//! whole document rewritten in place. After each round every record the writer wrote is
//! still a record somewhere the user can find it (the session, or the backup when that is
//! what the output said), or the command refused and said why. Rounds are bounded;
//! `CONCURRENCY_ROUNDS=N` runs more, and each test prints its tally.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use common::fixture;

const SESSION: &str = "6b0b0776-e08e-426e-bff4-91f7fbcd1892";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

fn rounds(default: usize) -> usize {
    std::env::var("CONCURRENCY_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("SESSIONTOOL_FAULT")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A Qwen record the writer appends.
fn record(id: &str) -> String {
    format!(
        "{{\"uuid\":\"{id}\",\"parentUuid\":null,\"sessionId\":\"{SESSION}\",\"timestamp\":\"2025-12-04T09:15:02.114Z\",\"type\":\"system\",\"subtype\":\"note\",\"cwd\":\"/w/app\"}}\n"
    )
}

/// A Qwen session of `n` records with a torn fragment glued into its last line: something for
/// repair to do.
fn damaged_session(n: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..n {
        let parent = match i {
            0 => "null".to_string(),
            _ => format!("\"r{:08}\"", i - 1),
        };
        out.push_str(&format!(
            "{{\"uuid\":\"r{i:08}\",\"parentUuid\":{parent},\"sessionId\":\"{SESSION}\",\"timestamp\":\"2025-12-04T09:15:02.114Z\",\"type\":\"user\",\"cwd\":\"/w/app\",\"message\":{{\"role\":\"user\",\"parts\":[{{\"text\":\"message {i} of a long session\"}}]}}}}\n"
        ));
    }
    out.push_str("{\"uuid\":\"torn-frag");
    out.push_str(&record(&format!("r{n:08}")));
    out.into_bytes()
}

/// How a tool writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// One descriptor in append mode, kept open for the whole session.
    Persistent,
    /// Open in append mode, write one record, close (Claude Code's appendFileSync).
    AppendClose,
    /// Each line in two writes 50 ms apart, opening the file each time.
    HalfLines,
}

/// A writer appending records to `path` until stopped; returns the ids it wrote whole.
struct Writer {
    stop: Arc<AtomicBool>,
    /// Records written so far.
    count: Arc<std::sync::atomic::AtomicUsize>,
    handle: JoinHandle<Vec<String>>,
}

impl Writer {
    fn start(path: &Path, style: Style, tag: &str) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (path, still, tag) = (path.to_path_buf(), stop.clone(), tag.to_string());
        let counter = count.clone();
        let (opened, ready) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let open = || std::fs::OpenOptions::new().append(true).open(&path).ok();
            let mut kept = match style {
                Style::Persistent => open(),
                _ => None,
            };
            // The tool is running (its file open, for one that keeps it open) before the
            // command under test starts: a loaded machine must not start the command first.
            let _ = opened.send(());
            let mut written = Vec::new();
            let mut i = 0u64;
            while !still.load(Ordering::SeqCst) {
                let id = format!("{tag}-{i}");
                let line = record(&id);
                let done = match style {
                    Style::Persistent => kept
                        .as_mut()
                        .is_some_and(|f| f.write_all(line.as_bytes()).is_ok()),
                    Style::AppendClose => {
                        open().is_some_and(|mut f| f.write_all(line.as_bytes()).is_ok())
                    }
                    Style::HalfLines => {
                        let (a, b) = line.split_at(line.len() / 2);
                        let first = open().is_some_and(|mut f| f.write_all(a.as_bytes()).is_ok());
                        std::thread::sleep(Duration::from_millis(50));
                        first && open().is_some_and(|mut f| f.write_all(b.as_bytes()).is_ok())
                    }
                };
                if !done {
                    break;
                }
                written.push(id);
                counter.fetch_add(1, Ordering::SeqCst);
                i += 1;
                // Bursts of three records, then a pause of 0.1 to 0.6 s, as an agent
                // writes a turn and waits for the model.
                let pause = match i % 3 {
                    0 => 100 + (i * 7_919) % 500,
                    _ => 1 + (i * 131) % 10,
                };
                std::thread::sleep(Duration::from_millis(pause));
            }
            written
        });
        let _ = ready.recv();
        Writer {
            stop,
            count,
            handle,
        }
    }

    /// Stops the writer once it wrote two more records after the command (or could not: its
    /// file is gone), as a tool goes on after sessiontool is done.
    fn finish(self) -> Vec<String> {
        let after = self.count.load(Ordering::SeqCst) + 2;
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while self.count.load(Ordering::SeqCst) < after
            && !self.handle.is_finished()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap()
    }
}

/// The ids of the whole records (lines that parse as JSON) in a file.
fn record_ids(path: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter_map(|v| v["uuid"].as_str().map(String::from))
        .collect()
}

fn backups_of(path: &Path) -> Vec<PathBuf> {
    let name = format!("{}.bak-", path.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&name))
        .collect()
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .map(|e| e.path().to_path_buf())
        .collect()
}

#[derive(Default, Debug)]
struct Tally {
    rounds: usize,
    records: usize,
    refused: usize,
    carried: usize,
    lost: usize,
    in_backup_only: usize,
}

impl Tally {
    fn print(&self, what: &str) {
        println!(
            "{what}: {} rounds, {} records written, {} refusals, {} with appends carried over, {} records lost, {} only in the backup (said so)",
            self.rounds, self.records, self.refused, self.carried, self.lost, self.in_backup_only
        );
    }
}

/// `repair` while a tool appends in `style`.
fn repair_while_writing(style: Style, force: bool, n: usize) -> Tally {
    let mut tally = Tally::default();
    for round in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.jsonl");
        std::fs::write(&path, damaged_session(2_000)).unwrap();
        let writer = Writer::start(&path, style, &format!("w{round}"));
        std::thread::sleep(Duration::from_micros(round as u64 * 997 % 4_000));
        let mut args = vec!["repair", path.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let out = run(&args);
        let written = writer.finish();
        let said = text(&out);
        tally.rounds += 1;
        tally.records += written.len();
        assert!(
            matches!(out.status.code(), Some(1 | 4)),
            "round {round}: repair neither repaired nor refused:\n{said}"
        );
        if said.contains("not repaired") {
            assert!(
                said.contains("open for writing") || said.contains("changed"),
                "round {round}: refused for another reason:\n{said}"
            );
            tally.refused += 1;
        }
        if said.contains("carried into the repaired file") {
            tally.carried += 1;
        }
        let now = record_ids(&path);
        let kept: Vec<String> = backups_of(&path)
            .iter()
            .flat_map(|b| record_ids(b))
            .collect();
        for id in &written {
            if now.contains(id) {
                continue;
            }
            if kept.contains(id) && said.contains("still writes to the old file") {
                tally.in_backup_only += 1;
                continue;
            }
            tally.lost += 1;
            eprintln!("round {round}: {id} is lost\n{said}");
        }
        assert!(temps(tmp.path()).is_empty(), "round {round}: temps left");
    }
    tally
}

#[test]
fn repair_loses_nothing_a_tool_keeping_its_file_open_writes() {
    let tally = repair_while_writing(Style::Persistent, false, rounds(4));
    tally.print("repair, persistent descriptor");
    assert_eq!(tally.lost, 0);
    // Every round sees the writer (this user's process) and refuses.
    assert_eq!(tally.refused, tally.rounds);
}

#[test]
fn forced_repair_puts_what_a_tool_keeps_writing_in_the_backup_and_says_so() {
    let tally = repair_while_writing(Style::Persistent, true, rounds(4));
    tally.print("repair --force, persistent descriptor");
    assert_eq!(tally.lost, 0);
}

#[test]
fn repair_loses_nothing_a_tool_appending_record_by_record_writes() {
    let tally = repair_while_writing(Style::AppendClose, false, rounds(6));
    tally.print("repair, open-append-close");
    assert_eq!(tally.lost, 0);
}

#[test]
fn repair_loses_nothing_a_tool_writing_lines_in_halves_writes() {
    let tally = repair_while_writing(Style::HalfLines, false, rounds(6));
    tally.print("repair, lines in two halves");
    assert_eq!(tally.lost, 0);
}

/// A Gemini legacy session with a tool call left open (so repair has a call to close),
/// holding `extra` more user messages.
fn legacy_document(extra: usize) -> Vec<u8> {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("gemini-json/tools.json")).unwrap()).unwrap();
    let call = &mut doc["messages"][1]["toolCalls"][0];
    call.as_object_mut().unwrap().remove("result");
    call["status"] = "executing".into();
    let messages = doc["messages"].as_array_mut().unwrap();
    for i in 0..extra {
        messages.push(serde_json::json!({
            "id": format!("added-{i}"),
            "timestamp": "2025-09-14T08:12:03.417Z",
            "type": "user",
            "content": format!("message {i} the tool added")
        }));
    }
    serde_json::to_vec_pretty(&doc).unwrap()
}

/// A tool rewriting a whole document in place after each message (truncate and write, on the
/// same inode: fs.writeFileSync), a few messages at a time, then a pause. It writes only
/// while its file is there: a session moved away is not made again (Gemini CLI would not look
/// in the old folder).
struct Rewriter {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<usize>,
}

impl Rewriter {
    fn start(path: &Path) -> Rewriter {
        let stop = Arc::new(AtomicBool::new(false));
        let (path, still) = (path.to_path_buf(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut last = 0;
            while !still.load(Ordering::SeqCst) {
                let open = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&path);
                let Ok(mut f) = open else {
                    break;
                };
                last += 1;
                f.write_all(&legacy_document(last)).unwrap();
                drop(f);
                let pause = if last % 3 == 0 {
                    80 + last as u64 * 7_919 % 400
                } else {
                    3
                };
                std::thread::sleep(Duration::from_millis(pause));
            }
            last
        });
        Rewriter { stop, handle }
    }

    /// Stops it a moment after the command; returns how many messages it added.
    fn finish(self) -> usize {
        std::thread::sleep(Duration::from_millis(20));
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap()
    }
}

/// `repair` while the tool rewrites the whole document in place, as Gemini CLI does: the
/// result is always a JSON document holding everything the tool wrote last, and the backup
/// (when one is left) is JSON too.
#[test]
fn repair_of_a_document_a_tool_rewrites_in_place_never_mixes_the_two() {
    let n = rounds(6);
    let mut tally = Tally::default();
    for round in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("session-2025-09-14T08-12-abcd.json");
        std::fs::write(&path, legacy_document(0)).unwrap();
        let writer = Rewriter::start(&path);
        std::thread::sleep(Duration::from_micros(round as u64 * 1_301 % 5_000));
        let out = run(&["repair", path.to_str().unwrap()]);
        let last = writer.finish();
        let said = text(&out);
        tally.rounds += 1;
        tally.records += last;
        if said.contains("not repaired") {
            tally.refused += 1;
        }
        let now: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("round {round}: the session is not JSON ({e})\n{said}"));
        let ids: Vec<&str> = now["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["id"].as_str())
            .collect();
        if !ids.contains(&format!("added-{}", last - 1).as_str()) {
            tally.lost += 1;
            eprintln!("round {round}: the tool's last message is lost\n{said}");
        }
        for b in backups_of(&path) {
            serde_json::from_slice::<serde_json::Value>(&std::fs::read(&b).unwrap())
                .unwrap_or_else(|e| {
                    panic!("round {round}: backup {} is not JSON ({e})", b.display())
                });
        }
        assert!(temps(tmp.path()).is_empty(), "round {round}: temps left");
    }
    tally.print("repair, whole-document rewrites");
    assert_eq!(tally.lost, 0);
}

/// A home with one Qwen session of /w/app; returns its path.
fn qwen_home(home: &Path) -> PathBuf {
    let out = run(&[
        "convert",
        fixture("qwen-jsonl/plain.jsonl").to_str().unwrap(),
        "--to",
        "qwen-jsonl",
        "--store",
        "--project",
        "/w/app",
        "--home",
        home.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    PathBuf::from(doc["output"].as_str().unwrap())
}

/// `relocate` while a tool appends to a session of the project: every record is in the
/// relocated session (or relocate refused and the old one has them); none is only in a
/// `.bak`.
fn relocate_while_writing(style: Style, n: usize) -> Tally {
    let mut tally = Tally::default();
    for round in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let session = qwen_home(home);
        let moved = home
            .join(".qwen/projects/-w-moved/chats")
            .join(session.file_name().unwrap());
        let writer = Writer::start(&session, style, &format!("w{round}"));
        std::thread::sleep(Duration::from_micros(round as u64 * 997 % 4_000));
        let out = run(&[
            "relocate",
            "/w/app",
            "/w/moved",
            "--home",
            home.to_str().unwrap(),
        ]);
        let written = writer.finish();
        let said = text(&out);
        tally.rounds += 1;
        tally.records += written.len();
        let done = out.status.success();
        if !done {
            assert!(
                said.contains("open for writing") || said.contains("changed"),
                "round {round}: refused for another reason:\n{said}"
            );
            tally.refused += 1;
        }
        let (here, there) = (record_ids(&session), record_ids(&moved));
        for id in &written {
            let found = if done {
                there.contains(id)
            } else {
                here.contains(id)
            };
            if !found {
                tally.lost += 1;
                eprintln!("round {round}: {id} is not in the session (done: {done})\n{said}");
            }
        }
        assert!(temps(home).is_empty(), "round {round}: temps left");
    }
    tally
}

#[test]
fn relocate_loses_nothing_a_tool_appending_record_by_record_writes() {
    let tally = relocate_while_writing(Style::AppendClose, rounds(6));
    tally.print("relocate, open-append-close");
    assert_eq!(tally.lost, 0);
}

#[test]
fn relocate_refuses_a_session_a_tool_keeps_open() {
    let tally = relocate_while_writing(Style::Persistent, rounds(3));
    tally.print("relocate, persistent descriptor");
    assert_eq!(tally.lost, 0);
    assert_eq!(tally.refused, tally.rounds);
}

/// relocate and repair on the same session at once: a finished repair is never undone (the
/// session ends clean), and nothing is lost.
#[test]
fn relocate_racing_repair_never_undoes_the_repair() {
    let n = rounds(6);
    let mut undone = 0;
    for round in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let session = qwen_home(home);
        // Damage it: a torn fragment glued to a record, old enough not to be waited for.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&session)
            .unwrap();
        f.write_all(b"{\"uuid\":\"torn-frag").unwrap();
        f.write_all(record("late").as_bytes()).unwrap();
        f.set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        drop(f);
        let before = record_ids(&session);
        let s = session.clone();
        let repair = std::thread::spawn(move || run(&["repair", s.to_str().unwrap()]));
        std::thread::sleep(Duration::from_micros(round as u64 * 1_997 % 6_000));
        let relocated = run(&[
            "relocate",
            "/w/app",
            "/w/moved",
            "--home",
            home.to_str().unwrap(),
        ]);
        let repaired = repair.join().unwrap();
        let moved = home
            .join(".qwen/projects/-w-moved/chats")
            .join(session.file_name().unwrap());
        let now = if moved.exists() { &moved } else { &session };
        let ids = record_ids(now);
        for id in &before {
            assert!(ids.contains(id), "round {round}: {id} lost");
        }
        if repaired.status.code() == Some(1) && relocated.status.success() {
            let check = run(&["fsck", now.to_str().unwrap()]);
            if check.status.code() != Some(0) {
                undone += 1;
                eprintln!(
                    "round {round}: the repair was undone\nrepair: {}\nrelocate: {}",
                    text(&repaired),
                    text(&relocated)
                );
            }
        }
    }
    println!("relocate racing repair: {n} rounds, {undone} repairs undone");
    assert_eq!(undone, 0);
}

/// `migrate --move` of a Gemini store from sha256 folders to slugs while the tool rewrites a
/// legacy session in place: the tool's last version is in the migrated copy, or migrate
/// refused and the original holds it; it is never only in a deleted file.
#[test]
fn migrate_move_loses_nothing_a_tool_rewriting_a_document_writes() {
    let n = rounds(5);
    let mut tally = Tally::default();
    for round in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let hash = sessiontool::ids::sha256_hex("/w/app");
        let chats = home.join(".gemini/tmp").join(&hash).join("chats");
        std::fs::create_dir_all(&chats).unwrap();
        let path = chats.join("session-2025-09-14T08-12-abcd.json");
        std::fs::write(&path, legacy_document(0)).unwrap();
        let writer = Rewriter::start(&path);
        std::thread::sleep(Duration::from_micros(round as u64 * 1_301 % 5_000));
        let out = run(&[
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--move",
            "--project",
            "/w/app",
            "--home",
            home.to_str().unwrap(),
        ]);
        let last = writer.finish();
        let said = text(&out);
        tally.rounds += 1;
        tally.records += last;
        if said.contains("nothing was changed") || said.contains("stopped after") {
            assert!(
                said.contains("changed") || said.contains("open for writing"),
                "round {round}: refused for another reason:\n{said}"
            );
            tally.refused += 1;
        }
        let want = format!("added-{}", last.max(1) - 1);
        let copies: Vec<PathBuf> = walkdir::WalkDir::new(home.join(".gemini"))
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().to_path_buf())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("session-")
            })
            .collect();
        let found = last == 0
            || copies.iter().any(|c| {
                std::fs::read_to_string(c).is_ok_and(|t| t.contains(&format!("\"{want}\"")))
            });
        if !found {
            tally.lost += 1;
            eprintln!("round {round}: {want} is in no file\n{said}\n{copies:?}");
        }
        assert!(temps(home).is_empty(), "round {round}: temps left");
    }
    tally.print("migrate --move, whole-document rewrites");
    assert_eq!(tally.lost, 0);
}

/// llxprt-code's lock names the session from its file (`session-<x>.jsonl` -> `<x>.lock`) or
/// its id (`<sessionId>.lock`): a live one of either stops a repair.
#[test]
fn a_live_llxprt_lock_of_either_name_stops_a_repair() {
    let damaged = std::fs::read(fixture("damaged/llxprt-seq-not-increasing.jsonl")).unwrap();
    let first: serde_json::Value =
        serde_json::from_slice(damaged.split(|&b| b == b'\n').next().unwrap()).unwrap();
    let id = first["payload"]["sessionId"].as_str().unwrap().to_string();
    for lock in [
        "2025-10-01T09-00-00-abcdef.lock".to_string(),
        format!("{id}.lock"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("session-2025-10-01T09-00-00-abcdef.jsonl");
        std::fs::write(&path, &damaged).unwrap();
        std::fs::write(
            tmp.path().join(&lock),
            format!(
                "{{\"pid\":{},\"timestamp\":\"2025-10-01T09:00:00Z\",\"sessionId\":\"{id}\"}}",
                std::process::id()
            ),
        )
        .unwrap();
        let out = run(&["repair", path.to_str().unwrap()]);
        let said = text(&out);
        assert!(
            said.contains(&lock) && said.contains("says a tool is writing"),
            "{lock}: {said}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), damaged, "{lock}");
        // A lock whose process is gone is stale: the repair goes ahead.
        std::fs::write(
            tmp.path().join(&lock),
            "{\"pid\":4194400,\"timestamp\":\"2025-10-01T09:00:00Z\"}",
        )
        .unwrap();
        let out = run(&["repair", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{lock}: {}", text(&out));
    }
}
