//! Issue 17, item 10: `recover --backup-dir` makes its folder (and leaves no sidecar when it
//! cannot), `recover FILE` takes the file for the session it is wherever its project is, and
//! a session placed with `convert --store` ends with its newline.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fixture;

/// The cwd recorded in `qwen-jsonl/plain.jsonl`'s records.
const CWD: &str = "/home/dana/projects/pomodoro";

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("sessiontool"))
        .current_dir(home)
        .args(args)
        .args(["--home", home.to_str().unwrap()])
        .env_remove("SESSIONTOOL_FAULT")
        .output()
        .unwrap()
}

/// A command that takes no `--home` (fsck).
fn plain(args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("sessiontool"))
        .args(args)
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A Qwen Code session of `CWD` with a torn last line, an hour old, in its store.
fn torn_in_store(home: &Path) -> PathBuf {
    let dir = home.join(".qwen/projects/-home-dana-projects-pomodoro/chats");
    std::fs::create_dir_all(&dir).unwrap();
    let first = std::fs::read_to_string(fixture("qwen-jsonl/plain.jsonl")).unwrap();
    let id: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    assert_eq!(id["cwd"], CWD, "the fixture's cwd");
    let path = dir.join(format!("{}.jsonl", id["sessionId"].as_str().unwrap()));
    let mut bytes = first.into_bytes();
    bytes.extend_from_slice(b"{\"uuid\":\"torn");
    common::write_idle(&path, &bytes);
    path
}

fn leftovers(dir: &Path, what: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(what))
        .collect()
}

#[test]
fn recover_makes_a_backup_dir_that_does_not_exist() {
    let home = tempfile::tempdir().unwrap();
    let session = torn_in_store(home.path());
    let backups = home.path().join("not/yet/there");
    let out = run(
        home.path(),
        &[
            "recover",
            "--latest",
            "--project",
            CWD,
            "--backup-dir",
            backups.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", said(&out));
    let kept = leftovers(&backups, ".bak-");
    assert_eq!(kept.len(), 1, "one backup in the new folder: {kept:?}");
    assert!(
        !std::fs::symlink_metadata(&backups)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let chats = session.parent().unwrap();
    assert_eq!(
        leftovers(chats, ".torn-").len(),
        1,
        "the dropped bytes, once"
    );
}

#[test]
fn a_backup_dir_that_cannot_be_made_leaves_no_sidecar_and_the_file_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let session = torn_in_store(home.path());
    let before = std::fs::read(&session).unwrap();
    // A file where a folder of the path should be: the folder cannot be made.
    std::fs::write(home.path().join("blocker"), b"").unwrap();
    let backups = home.path().join("blocker/bk");
    for _ in 0..2 {
        let out = run(
            home.path(),
            &[
                "recover",
                "--latest",
                "--project",
                CWD,
                "--backup-dir",
                backups.to_str().unwrap(),
            ],
        );
        assert!(!out.status.success(), "{}", said(&out));
        assert!(said(&out).contains("backup folder"), "{}", said(&out));
    }
    let chats = session.parent().unwrap();
    assert_eq!(leftovers(chats, ".torn-"), Vec::<String>::new());
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn recover_takes_a_file_path_whatever_the_project() {
    let home = tempfile::tempdir().unwrap();
    let session = torn_in_store(home.path());
    // No --project, and run from a folder that is not the session's: the path names it.
    let out = run(home.path(), &["recover", session.to_str().unwrap()]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("repaired"), "{}", said(&out));
    let out = plain(&["fsck", session.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", said(&out));
    // A path outside every store is still refused, saying so.
    let stray = home.path().join("stray.jsonl");
    std::fs::copy(fixture("qwen-jsonl/plain.jsonl"), &stray).unwrap();
    let out = run(home.path(), &["recover", stray.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    assert!(
        said(&out).contains("not a session in any store"),
        "{}",
        said(&out)
    );
}

#[test]
fn convert_store_writes_the_final_newline_the_input_lacked() {
    let home = tempfile::tempdir().unwrap();
    // Claude's writer gives back a same-format session byte for byte (Qwen's rebuilds lines).
    let input = home.path().join("no-newline.jsonl");
    let bytes = std::fs::read(fixture("claude-jsonl/plain.jsonl")).unwrap();
    std::fs::write(&input, bytes.strip_suffix(b"\n").unwrap()).unwrap();
    let out = run(
        home.path(),
        &[
            "convert",
            input.to_str().unwrap(),
            "--to",
            "claude-jsonl",
            "--store",
            "--project",
            CWD,
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", said(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let placed = PathBuf::from(report["output"].as_str().unwrap());
    let written = std::fs::read(&placed).unwrap();
    assert!(
        written.ends_with(b"\n"),
        "the placed file ends with its newline"
    );
    assert_eq!(written, bytes, "and is otherwise the input, byte for byte");
    let out = plain(&["fsck", placed.to_str().unwrap(), "--json"]);
    let fsck: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fsck["summary"]["warnings"], 0, "{fsck}");
}
