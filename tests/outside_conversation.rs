//! Records written beside the conversation are no branch (issue 16, item 4): Claude Code's
//! `file-history-snapshot` and `summary` entries have no `uuid` and no `parentUuid`. `tree` and
//! `show` count the branches of the conversation only and name those records apart; a target
//! that cannot hold them lists them under `outside-conversation`, never as "nodes on other
//! branches"; a same-format write keeps them byte for byte.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use common::fixture;

fn run(args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("sessiontool"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Two chain entries, with two summaries and two file-history snapshots beside them.
fn snapshots() -> PathBuf {
    fixture("claude-jsonl/summary-snapshot.jsonl")
}

#[test]
fn tree_counts_one_branch_and_names_the_records_beside_it() {
    let f = snapshots();
    let text = stdout(&run(&["tree", f.to_str().unwrap()]));
    assert!(text.contains("6 nodes, 1 branch\n"), "{text}");
    assert!(
        !text.contains("◇ leaf"),
        "no record beside the chat is a leaf: {text}"
    );
    assert!(
        text.contains(
            "4 record(s) outside the conversation, no branch: title ×2, file-history-snapshot ×2"
        ),
        "{text}"
    );

    let doc: Value =
        serde_json::from_str(&stdout(&run(&["tree", "--json", f.to_str().unwrap()]))).unwrap();
    assert_eq!(doc["branches"], 1);
    assert_eq!(doc["outside_conversation"], 4);
    let nodes = doc["nodes"].as_array().unwrap();
    let outside: Vec<&str> = nodes
        .iter()
        .filter(|n| n["outside_conversation"] == true)
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(outside.len(), 4, "{nodes:?}");
    assert!(
        nodes
            .iter()
            .filter(|n| n["leaf"] == true)
            .all(|n| n["head"] == true),
        "the only leaf is the head: {nodes:?}"
    );
}

#[test]
fn show_counts_the_branches_of_the_conversation() {
    let f = snapshots();
    let text = stdout(&run(&["show", f.to_str().unwrap()]));
    assert!(
        text.contains("6 nodes, 2 on this branch, 1 branch\n"),
        "{text}"
    );
}

#[test]
fn a_target_that_cannot_hold_them_lists_them_under_their_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = snapshots();
    for (to, name) in [
        ("codex-jsonl", "out.jsonl"),
        ("gemini-json", "out.json"),
        ("markdown", "out.md"),
    ] {
        let out_file = dir.path().join(name);
        let doc: Value = serde_json::from_str(&stdout(&run(&[
            "convert",
            f.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out_file.to_str().unwrap(),
            "--force",
            "--json",
        ])))
        .unwrap();
        let losses = doc["losses"]["losses"].as_array().unwrap();
        let code = |c: &str| losses.iter().find(|l| l["code"] == c);
        assert!(code("other-branches").is_none(), "{to}: {losses:?}");
        let outside = code("outside-conversation").unwrap_or_else(|| panic!("{to}: {losses:?}"));
        assert_eq!(outside["count"], 4, "{to}");
        let message = outside["message"].as_str().unwrap();
        assert!(
            message.contains("file-history-snapshot ×2"),
            "{to}: {message}"
        );
    }
}

#[test]
fn the_real_session_is_one_branch() {
    // Claude Code 2.0's own file: six snapshots beside one chain (it said "7 branches").
    let Some(sample) = common::prerequisite::shared("claude/pomodoro-timer.jsonl") else {
        return;
    };
    let text = stdout(&run(&["tree", sample.to_str().unwrap()]));
    assert!(text.contains(": 124 nodes, 1 branch\n"), "{text}");
    assert!(text.contains("file-history-snapshot ×6"), "{text}");
}

#[test]
fn a_real_branch_is_still_a_branch_and_still_reported_as_one() {
    // A fork in the chain: a second reply to the first prompt is a branch.
    let dir = tempfile::tempdir().unwrap();
    let forked = dir.path().join("forked.jsonl");
    let mut bytes = std::fs::read(snapshots()).unwrap();
    let first_uuid = "00000000-0000-4000-8000-000000000001";
    let second = format!(
        "{{\"parentUuid\":\"{first_uuid}\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/tmp/p\",\"sessionId\":\"s\",\"version\":\"2.0.0\",\"type\":\"assistant\",\"message\":{{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{{\"type\":\"text\",\"text\":\"Another answer.\"}}]}},\"uuid\":\"00000000-0000-4000-8000-0000000000f0\",\"timestamp\":\"2025-01-01T00:00:09Z\"}}\n"
    );
    bytes.extend_from_slice(second.as_bytes());
    std::fs::write(&forked, &bytes).unwrap();
    let text = stdout(&run(&["tree", forked.to_str().unwrap()]));
    assert!(text.contains("7 nodes, 2 branches\n"), "{text}");
    let out_file = dir.path().join("out.jsonl");
    let doc: Value = serde_json::from_str(&stdout(&run(&[
        "convert",
        forked.to_str().unwrap(),
        "--to",
        "codex-jsonl",
        "-o",
        out_file.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    let losses = doc["losses"]["losses"].as_array().unwrap();
    let count = |c: &str| {
        losses
            .iter()
            .find(|l| l["code"] == c)
            .map(|l| l["count"].clone())
    };
    assert_eq!(count("other-branches"), Some(1.into()), "{losses:?}");
    assert_eq!(count("outside-conversation"), Some(4.into()), "{losses:?}");
}

#[test]
fn a_same_format_write_keeps_them_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.jsonl");
    let f = snapshots();
    stdout(&run(&[
        "convert",
        f.to_str().unwrap(),
        "--to",
        "claude-jsonl",
        "-o",
        out_file.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read(&out_file).unwrap(),
        std::fs::read(&f).unwrap()
    );
}
