//! Fault injection (issue 7): every command that writes is made to fail, or to die as a crash
//! or SIGKILL would, at each step of its writes (src/fault.rs lists them). After each fault
//! nothing the user had is lost (every original file's bytes are still in the folder, as the
//! file or its backup), the files are readable, a rerun completes the job, and no temp file is
//! left. Then the real process is killed with SIGKILL at random moments, in a bounded loop.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sessiontool::ids::{sha256_hex, sha256_hex_bytes};

use common::fixture;

const APP: &str = "/w/app";
const MODES: [&str; 2] = ["error", "abort"];

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

fn run(dir: &Path, args: &[&str], fault: Option<&str>) -> Output {
    let mut c = Command::new(bin());
    c.current_dir(dir).args(args);
    match fault {
        Some(f) => c.env("SESSIONTOOL_FAULT", f),
        None => c.env_remove("SESSIONTOOL_FAULT"),
    };
    c.output().unwrap()
}

fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    files(dir)
        .into_keys()
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(".tmp"))
        .collect()
}

/// Nothing lost: the bytes of every file that was there before are still in the folder.
fn assert_nothing_lost(before: &BTreeMap<PathBuf, Vec<u8>>, dir: &Path, case: &str) {
    let now: BTreeSet<String> = files(dir).values().map(|b| sha256_hex_bytes(b)).collect();
    for (path, bytes) in before {
        assert!(
            now.contains(&sha256_hex_bytes(bytes)),
            "{case}: the bytes of {} are gone",
            path.display()
        );
    }
}

/// Every session file in the folder still reads (fsck finds no file it cannot open).
fn assert_readable(dir: &Path, case: &str) {
    let out = Command::new(bin())
        .args(["fsck", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{case}: fsck output: {e}"));
    assert_eq!(doc["summary"]["failed"], 0, "{case}: {doc:#}");
    assert_ne!(
        out.status.code(),
        Some(8),
        "{case}: fsck could not read a file"
    );
}

fn faulted(out: &Output, case: &str) {
    assert!(
        !out.status.success(),
        "{case}: the fault did not stop the command"
    );
    if out.status.code().is_some() {
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(said.contains("injected fault"), "{case}: {said}");
    }
}

/// Runs `args` with each fault, checks the invariants, reruns without a fault, and checks
/// `done` on the result.
fn sweep(
    points: &[&str],
    setup: impl Fn(&Path),
    args: &dyn Fn(&Path) -> Vec<String>,
    done: impl Fn(&Path, &str),
) -> usize {
    let mut injected = 0;
    for point in points {
        for mode in MODES {
            let case = format!("{point}:{mode}");
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            setup(dir);
            let before = files(dir);
            let argv = args(dir);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let out = run(dir, &argv, Some(&case));
            faulted(&out, &case);
            injected += 1;
            assert_nothing_lost(&before, dir, &case);
            assert_readable(dir, &case);
            let again = run(dir, &argv, None);
            assert!(
                again.status.code().is_some_and(|c| c <= 1),
                "{case}: the rerun failed: {}",
                String::from_utf8_lossy(&again.stderr)
            );
            assert_nothing_lost(&before, dir, &case);
            assert!(
                temps(dir).is_empty(),
                "{case}: temp files left: {:?}",
                temps(dir)
            );
            done(dir, &case);
        }
    }
    injected
}

fn fsck_code(path: &Path) -> i32 {
    Command::new(bin())
        .arg("fsck")
        .arg(path)
        .output()
        .unwrap()
        .status
        .code()
        .unwrap()
}

#[test]
fn repair_survives_a_fault_at_every_step() {
    let points = [
        "repair.temp-written",
        "repair.before-backup",
        "repair.before-rename",
        "repair.after-rename",
    ];
    let n = sweep(
        &points,
        |dir| {
            common::write_idle(
                &dir.join("s.jsonl"),
                std::fs::read(fixture("damaged/torn-record-glued.jsonl")).unwrap(),
            );
        },
        &|dir| vec!["repair".into(), dir.join("s.jsonl").display().to_string()],
        |dir, case| assert_eq!(fsck_code(&dir.join("s.jsonl")), 0, "{case}: repaired"),
    );
    assert_eq!(n, points.len() * 2);
}

#[test]
fn a_legacy_document_repair_survives_a_fault_at_every_step() {
    let points = [
        "repair.temp-written",
        "repair.before-backup",
        "repair.before-rename",
        "repair.after-rename",
    ];
    sweep(
        &points,
        |dir| {
            std::fs::copy(
                fixture("damaged/truncated-document.json"),
                dir.join("s.json"),
            )
            .unwrap();
        },
        &|dir| vec!["repair".into(), dir.join("s.json").display().to_string()],
        |dir, case| assert_eq!(fsck_code(&dir.join("s.json")), 0, "{case}: repaired"),
    );
}

#[test]
fn convert_survives_a_fault_at_every_step() {
    let points = [
        "write.temp-written",
        "write.before-rename",
        "write.after-rename",
    ];
    sweep(
        &points,
        |dir| {
            std::fs::copy(fixture("gemini-json/tools.json"), dir.join("in.json")).unwrap();
        },
        &|dir| {
            vec![
                "convert".into(),
                dir.join("in.json").display().to_string(),
                "-o".into(),
                dir.join("out.jsonl").display().to_string(),
                "--force".into(),
            ]
        },
        |dir, case| assert!(fsck_code(&dir.join("out.jsonl")) <= 4, "{case}"),
    );
}

/// A home with sessions of /w/app in several stores, placed with `convert --store`.
fn home_with_sessions(dir: &Path) {
    let h = dir.display().to_string();
    for (src, to) in [
        ("qwen-jsonl/plain.jsonl", "qwen-jsonl"),
        ("qwen-jsonl/tools.jsonl", "claude-jsonl"),
        ("qwen-jsonl/seed000.jsonl", "pi-jsonl"),
        ("gemini-json/plain.json", "gemini-json"),
        ("qwen-jsonl/unicode.jsonl", "simple-agent-json"),
    ] {
        let out = run(
            dir,
            &[
                "convert",
                fixture(src).to_str().unwrap(),
                "--to",
                to,
                "--store",
                "--project",
                APP,
                "--home",
                &h,
            ],
            None,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn ids(dir: &Path, project: &str) -> BTreeSet<String> {
    let out = run(
        dir,
        &[
            "list",
            "--project",
            project,
            "--json",
            "--home",
            dir.to_str().unwrap(),
        ],
        None,
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str().map(String::from))
        .collect()
}

#[test]
fn relocate_survives_a_fault_at_every_step_and_half_way() {
    let points = [
        "txn.staged",
        "txn.staged@3",
        "txn.before-rename",
        "txn.before-rename@3",
        "txn.after-rename",
        "txn.after-rename@4",
    ];
    let want = {
        let tmp = tempfile::tempdir().unwrap();
        home_with_sessions(tmp.path());
        ids(tmp.path(), APP)
    };
    assert_eq!(want.len(), 5);
    sweep(
        &points,
        home_with_sessions,
        &|dir| {
            ["relocate", APP, "/w/moved", "--home", dir.to_str().unwrap()]
                .map(String::from)
                .to_vec()
        },
        |dir, case| {
            assert_eq!(ids(dir, "/w/moved"), want, "{case}: every session moved");
            assert!(ids(dir, APP).is_empty(), "{case}");
        },
    );
}

#[test]
fn migrate_survives_a_fault_at_every_step_and_half_way() {
    let points = [
        "txn.staged@2",
        "txn.before-rename",
        "txn.before-rename@3",
        "txn.after-rename@2",
    ];
    let setup = |dir: &Path| {
        for (name, src) in [
            ("a.json", "gemini-json/plain.json"),
            ("b.json", "gemini-json/tools.json"),
        ] {
            let chats = dir.join(".gemini/tmp").join(sha256_hex(APP)).join("chats");
            std::fs::create_dir_all(&chats).unwrap();
            let mut doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(fixture(src)).unwrap()).unwrap();
            doc["projectHash"] = sha256_hex(APP).into();
            std::fs::write(chats.join(name), serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        }
    };
    sweep(
        &points,
        setup,
        &|dir| {
            [
                "migrate",
                "--tool",
                "gemini",
                "--to",
                "gemini-slug",
                "--project",
                APP,
                "--home",
                dir.to_str().unwrap(),
            ]
            .map(String::from)
            .to_vec()
        },
        |dir, case| {
            for name in ["a.json", "b.json"] {
                assert!(
                    dir.join(".gemini/tmp/app/chats").join(name).is_file(),
                    "{case}: {name}"
                );
            }
            assert!(dir.join(".gemini/projects.json").is_file(), "{case}");
        },
    );
}

#[test]
fn recover_survives_a_fault_at_every_step() {
    let points = [
        "repair.temp-written",
        "repair.before-rename",
        "repair.after-rename",
    ];
    let project = "/home/dana/projects/pomodoro";
    sweep(
        &points,
        |dir| {
            let chats = dir.join(".qwen/projects/-home-dana-projects-pomodoro/chats");
            std::fs::create_dir_all(&chats).unwrap();
            common::write_idle(
                &chats.join("s.jsonl"),
                std::fs::read(fixture("damaged/orphan-parent.jsonl")).unwrap(),
            );
        },
        &|dir| {
            [
                "recover",
                "--project",
                project,
                "--home",
                dir.to_str().unwrap(),
            ]
            .map(String::from)
            .to_vec()
        },
        |dir, case| {
            let f = dir.join(".qwen/projects/-home-dana-projects-pomodoro/chats/s.jsonl");
            assert_eq!(fsck_code(&f), 0, "{case}");
        },
    );
}

/// SIGKILL at random moments while `relocate` and `repair` work on bigger inputs; the same
/// invariants hold after each kill, and a rerun finishes.
#[test]
fn killing_the_process_at_random_moments_loses_nothing() {
    let rounds: usize = std::env::var("KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut seed: u64 = 0x5eed;
    let mut killed = 0;
    for round in 0..rounds {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // A long damaged session: repair takes a few milliseconds.
        let mut big = Vec::new();
        let line = std::fs::read(fixture("qwen-jsonl/plain.jsonl")).unwrap();
        for _ in 0..400 {
            big.extend_from_slice(&line);
        }
        big.extend_from_slice(b"{\"uuid\":\"torn");
        common::write_idle(&dir.join("big.jsonl"), &big);
        let before = files(dir);
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = std::time::Duration::from_micros((seed >> 33) % 40_000);
        let mut child = Command::new(bin())
            .args(["repair"])
            .arg(dir.join("big.jsonl"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
        let case = format!("round {round} after {delay:?}");
        assert_nothing_lost(&before, dir, &case);
        assert_readable(dir, &case);
        let again = run(
            dir,
            &["repair", dir.join("big.jsonl").to_str().unwrap()],
            None,
        );
        assert!(again.status.code().is_some_and(|c| c <= 1), "{case}");
        assert_eq!(fsck_code(&dir.join("big.jsonl")), 0, "{case}");
        assert!(temps(dir).is_empty(), "{case}");
    }
    println!("SIGKILL loop: {rounds} rounds, {killed} killed mid-run, nothing lost");
}

#[test]
fn convert_into_a_store_survives_a_fault_at_every_write() {
    // projects.json, two .project_root markers, then the session: four writes.
    let points = [
        "write.temp-written",
        "write.before-rename@2",
        "write.after-rename@3",
        "write.before-rename@4",
        "write.after-rename@4",
    ];
    sweep(
        &points,
        |dir| {
            std::fs::copy(fixture("qwen-jsonl/plain.jsonl"), dir.join("in.jsonl")).unwrap();
        },
        &|dir| {
            let h = dir.to_str().unwrap();
            [
                "convert",
                &format!("{h}/in.jsonl"),
                "--to",
                "gemini-jsonl",
                "--store",
                "--project",
                APP,
                "--home",
                h,
                "--force",
            ]
            .map(String::from)
            .to_vec()
        },
        |dir, case| {
            assert_eq!(ids(dir, APP).len(), 1, "{case}");
            let marker = dir.join(".gemini/history/app/.project_root");
            assert_eq!(std::fs::read_to_string(marker).unwrap(), APP, "{case}");
        },
    );
}

/// A Qwen Code session of `n` chained records whose last line is a torn record with a complete
/// one glued after it (so repair rewrites the file).
fn long_damaged_session(n: usize) -> Vec<u8> {
    let mut out = String::new();
    let record = |i: usize, parent: Option<usize>| {
        let parent = parent
            .map(|p| format!("\"r{p:08}\""))
            .unwrap_or("null".into());
        format!(
            "{{\"uuid\":\"r{i:08}\",\"parentUuid\":{parent},\"sessionId\":\"6b0b0776-e08e-426e-bff4-91f7fbcd1892\",\"timestamp\":\"2025-12-04T09:15:02.114Z\",\"type\":\"user\",\"cwd\":\"/w/app\",\"version\":\"0.15.6\",\"message\":{{\"role\":\"user\",\"parts\":[{{\"text\":\"message number {i} of a long session\"}}]}}}}"
        )
    };
    for i in 0..n {
        out.push_str(&record(i, i.checked_sub(1)));
        out.push('\n');
    }
    out.push_str("{\"uuid\":\"torn-frag");
    out.push_str(&record(n, Some(n - 1)));
    out.push('\n');
    out.into_bytes()
}

/// A tool appends records (one `write` per line, in append mode, as the agents do) while
/// `repair` runs on the same file, many times: every appended record ends up in the result, or
/// the repair refused and said why (the file then holds them as it is).
#[test]
fn records_appended_while_repair_runs_are_never_lost() {
    let rounds: usize = std::env::var("APPEND_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let (mut carried, mut refused, mut clean) = (0, 0, 0);
    for round in 0..rounds {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.jsonl");
        std::fs::write(&path, long_damaged_session(4_000)).unwrap();
        let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (writer_path, still) = (path.clone(), running.clone());
        // The tool: appends until the repair is over (and a little after).
        let writer = std::thread::spawn(move || {
            let mut written = Vec::new();
            let mut i = 0;
            let mut after = 0;
            while after < 3 {
                if !still.load(std::sync::atomic::Ordering::SeqCst) {
                    after += 1;
                }
                let id = format!("appended-{round}-{i}");
                let line = format!(
                    "{{\"uuid\":\"{id}\",\"parentUuid\":null,\"sessionId\":\"6b0b0776-e08e-426e-bff4-91f7fbcd1892\",\"type\":\"system\",\"subtype\":\"note\"}}\n"
                );
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&writer_path)
                    .unwrap();
                f.write_all(line.as_bytes()).unwrap();
                written.push(id);
                i += 1;
                std::thread::sleep(std::time::Duration::from_micros(
                    200 + (i as u64 * 37 % 400),
                ));
            }
            written
        });
        std::thread::sleep(std::time::Duration::from_micros(round as u64 * 997 % 3000));
        let out = Command::new(bin())
            .arg("repair")
            .arg(&path)
            .output()
            .unwrap();
        running.store(false, std::sync::atomic::Ordering::SeqCst);
        let written = writer.join().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let result = std::fs::read_to_string(&path).unwrap();
        for id in &written {
            assert!(
                result.contains(id.as_str()),
                "round {round}: {id} is lost\n{text}"
            );
        }
        if text.contains("not repaired") {
            assert!(
                text.contains("changed"),
                "round {round}: refused for another reason:\n{text}"
            );
            refused += 1;
        } else if text.contains("carried into the repaired file") {
            carried += 1;
        } else {
            clean += 1;
        }
        assert!(temps(tmp.path()).is_empty(), "round {round}");
    }
    println!(
        "concurrent writer: {rounds} rounds: {refused} refused (the file changed), {carried} carried appends made during the rename over, {clean} repaired with every append before the check; nothing lost"
    );
}
