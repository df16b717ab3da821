//! Issue 17, item 9: Codex rollouts sessiontool used to refuse or misjudge.
//!
//! - The older rollout layout (`codex-legacy-jsonl`, read only): the fixtures in
//!   `fixtures/codex-legacy-jsonl/` are hand-made after codex-rs's own writer.
//!   `early.jsonl` follows `codex-rs/core/src/rollout.rs` of May 2025 (openai/codex
//!   89a151f5): `SessionMeta {id, timestamp, instructions?}` serialized bare as the first line
//!   (`instructions` skipped when `None`), then bare `ResponseItem`s (message, function_call,
//!   function_call_output, local_shell_call; reasoning not recorded) and
//!   `{"record_type":"state", "previous_response_id"?}` lines; it ends with a call the crash
//!   left without its output. `git-reasoning.jsonl` follows `codex-rs/core/src/rollout/
//!   recorder.rs` of summer 2025: `SessionMetaWithGit` (`id`, `timestamp`, `instructions:
//!   null`, then `git {commit_hash, branch, repository_url}`), reasoning items recorded, the
//!   `<environment_context>` message first, empty state lines.
//! - A Codex sub-agent (`fixtures/codex-jsonl/subagent.jsonl`, after codex-rs 0.169's
//!   `session_meta` with `source: {"subagent": {"thread_spawn": {parent_thread_id, depth,
//!   agent_path, agent_nickname, agent_role}}}`): its history opens with the copy of its
//!   parent's, ending with the parent's `spawn_agent` call, whose output goes to the parent's
//!   rollout. That call is not unanswered.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    common::fixture(rel)
}

fn run(args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("sessiontool"))
        .args(args)
        .env_remove("SESSIONTOOL_FAULT")
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

fn json(args: &[&str]) -> Value {
    let out = run(args);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)))
}

fn codes(fsck: &Value) -> Vec<(String, String)> {
    fsck["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["issues"].as_array().unwrap().iter())
        .map(|i| {
            (
                i["code"].as_str().unwrap().to_string(),
                i["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The message nodes of `show --json`: `(role, text, call ids, result ids)`; thoughts are
/// counted as text `(thought)`.
fn messages(show: &Value) -> Vec<(String, String, Vec<String>, Vec<String>)> {
    show["session"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["body"]["node"] == "message")
        .map(|n| {
            let parts: Vec<&Value> = n["body"]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| &p["content"])
                .collect();
            let of = |t: &str, k: &str| {
                parts
                    .iter()
                    .filter(|c| c["type"] == t)
                    .map(|c| c[k].as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
            };
            let mut text = of("text", "text");
            text.extend(
                of("thought", "text")
                    .iter()
                    .map(|_| "(thought)".to_string()),
            );
            (
                n["body"]["role"].as_str().unwrap().to_string(),
                text.join("\n"),
                of("tool_call", "id"),
                of("tool_result", "call_id"),
            )
        })
        .collect()
}

fn copy_to(dir: &Path, rel: &str, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixture(rel), &to).unwrap();
    to
}

#[test]
fn the_older_layout_is_detected_and_listed_as_read_only() {
    for f in ["early.jsonl", "git-reasoning.jsonl"] {
        let path = fixture(&format!("codex-legacy-jsonl/{f}"));
        let d = json(&["detect", path.to_str().unwrap(), "--json"]);
        assert_eq!(d["files"][0]["format"], "codex-legacy-jsonl", "{f}: {d}");
        assert_eq!(d["files"][0]["tool"], "codex", "{f}: {d}");
    }
    let formats = json(&["formats", "--json"]);
    let row = formats["formats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "codex-legacy-jsonl")
        .unwrap_or_else(|| panic!("listed: {formats}"));
    assert_eq!(row["read"], true);
    assert_eq!(row["write"], false, "read only, and said so");
    // Writing it is refused as a usage error, naming what can be written.
    let dir = tempfile::tempdir().unwrap();
    let out = run(&[
        "convert",
        fixture("codex-jsonl/tools.jsonl").to_str().unwrap(),
        "--to",
        "codex-legacy-jsonl",
        "-o",
        dir.path().join("x.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(!dir.path().join("x.jsonl").exists());
    // Through the library too: an output error, nothing written.
    let err = sessiontool::convert(
        fixture("codex-jsonl/tools.jsonl"),
        "codex-legacy-jsonl",
        dir.path().join("y.jsonl"),
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("read only"), "{err}");
    assert!(!dir.path().join("y.jsonl").exists());
}

#[test]
fn the_older_layout_shows_every_message_call_and_result() {
    let path = fixture("codex-legacy-jsonl/git-reasoning.jsonl");
    let show = json(&["show", path.to_str().unwrap(), "--json"]);
    assert_eq!(show["format"], "codex-legacy-jsonl");
    let meta = &show["session"]["meta"];
    assert_eq!(meta["id"], "0197c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d");
    assert_eq!(meta["git_branch"], "main");
    assert_eq!(
        meta["cwd"], "/home/dana/projects/pomodoro",
        "from the environment context"
    );
    let m = messages(&show);
    let roles: Vec<&str> = m.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "user",
            "assistant",
            "assistant",
            "tool",
            "assistant"
        ],
        "{m:?}"
    );
    assert!(m[1].1.contains("drift"));
    assert_eq!(m[3].2, ["call_Gr4p5q6r7s8t9u0v1w2x3y4z"]);
    assert_eq!(m[4].3, ["call_Gr4p5q6r7s8t9u0v1w2x3y4z"]);
    let text = serde_json::to_string(&show).unwrap();
    assert!(
        text.contains("gAAAAABo0fCh3kL9mZr2xQ7vW1pY4tU8sN6aE5dC0bF9gH2jK7lM3nO1pQ6rS4tV8wX2yZ5"),
        "encrypted reasoning kept"
    );
    let fsck = json(&["fsck", path.to_str().unwrap(), "--json"]);
    assert_eq!(fsck["exit_code"], 0, "{fsck}");
    assert_eq!(fsck["files"][0]["format"], "codex-legacy-jsonl");
    assert_eq!(fsck["files"][0]["records"], 10);
}

#[test]
fn the_older_layout_converts_into_the_rollout_codex_reads_today() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("codex-legacy-jsonl/git-reasoning.jsonl");
    let out_path = dir
        .path()
        .join("rollout-2025-07-18T09-41-05-0197c1d2.jsonl");
    let out = run(&[
        "convert",
        src.to_str().unwrap(),
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", said(&out));
    let before = messages(&json(&["show", src.to_str().unwrap(), "--json"]));
    let show = json(&["show", out_path.to_str().unwrap(), "--json"]);
    assert_eq!(show["format"], "codex-jsonl");
    let after = messages(&show);
    assert_eq!(before.len(), 6, "{before:?}");
    assert_eq!(
        after, before,
        "every message, thought, call and result carried over"
    );
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&out_path)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["type"], "session_meta");
    assert_eq!(
        first["payload"]["id"],
        "0197c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d"
    );
    assert_eq!(first["payload"]["cwd"], "/home/dana/projects/pomodoro");
    let fsck = json(&["fsck", out_path.to_str().unwrap(), "--json"]);
    assert_eq!(fsck["exit_code"], 0, "{fsck}");
}

#[test]
fn the_older_layout_is_repaired_in_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_to(dir.path(), "codex-legacy-jsonl/early.jsonl", "early.jsonl");
    let fsck = json(&["fsck", path.to_str().unwrap(), "--json"]);
    assert!(
        codes(&fsck).contains(&("tool-call-unanswered".into(), "error".into())),
        "{fsck}"
    );
    let out = run(&["repair", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let text = std::fs::read_to_string(&path).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "function_call_output", "a bare item: {last}");
    assert_eq!(last["call_id"], "call_Pt3");
    assert!(last.get("payload").is_none() && last.get("timestamp").is_none());
    let again = json(&["fsck", path.to_str().unwrap(), "--json"]);
    assert_eq!(again["exit_code"], 0, "{again}");
    assert_eq!(again["files"][0]["format"], "codex-legacy-jsonl");
}

#[test]
fn a_sub_agents_inherited_spawn_call_is_not_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_to(
        dir.path(),
        "codex-jsonl/subagent.jsonl",
        "rollout-sub.jsonl",
    );
    let before = std::fs::read(&path).unwrap();
    let fsck = json(&["fsck", path.to_str().unwrap(), "--json"]);
    let found = codes(&fsck);
    assert!(
        !found.iter().any(|(c, _)| c == "tool-call-unanswered"),
        "{fsck}"
    );
    assert!(
        found.contains(&("tool-call-inherited".into(), "info".into())),
        "{fsck}"
    );
    assert_eq!(fsck["exit_code"], 0, "{fsck}");
    // Repair has nothing to do: no placeholder result.
    let out = run(&["repair", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Converted into a tool that needs every call answered: the result says what happened,
    // not that the session was interrupted; no warning about unanswered calls.
    let out_path = dir.path().join("sub-claude.jsonl");
    let report = json(&[
        "convert",
        path.to_str().unwrap(),
        "--to",
        "claude-jsonl",
        "-o",
        out_path.to_str().unwrap(),
        "--json",
    ]);
    let diag: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        !diag.contains(&"tool-call-unanswered") && !diag.contains(&"tool-call-closed"),
        "{report}"
    );
    let losses = serde_json::to_string(&report["losses"]).unwrap();
    assert!(!losses.contains("open-tool-calls"), "{losses}");
    let written = std::fs::read_to_string(&out_path).unwrap();
    assert!(written.contains("made by the parent session"), "{written}");
    assert!(
        !written.contains("the session was interrupted"),
        "{written}"
    );
    let fsck = json(&["fsck", out_path.to_str().unwrap(), "--json"]);
    assert_eq!(fsck["exit_code"], 0, "{fsck}");
}

#[test]
fn a_sub_agent_opening_with_its_parents_spawn_output_is_not_an_orphan() {
    // The same sub-agent whose copied history already holds the output of the parent's
    // spawn call, but not the call itself.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("codex-jsonl/subagent.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let output = r#"{"timestamp":"2026-11-02T09:14:07.415Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_sp4wnA1b2C3d4E5f6G7h8I9j","output":"{\"agent_id\":\"019a4c2e-7d31-7b20-9f4e-3a5c6b7d8e9f\",\"nickname\":\"Euclid\"}"}}"#;
    let mut out: Vec<&str> = vec![lines[0], lines[1], output];
    out.extend(&lines[3..]);
    let path = dir.path().join("rollout-sub.jsonl");
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
    let fsck = json(&["fsck", path.to_str().unwrap(), "--json"]);
    let found = codes(&fsck);
    assert!(
        !found.iter().any(|(c, _)| c == "tool-result-orphan"),
        "{fsck}"
    );
    assert!(
        found.contains(&("tool-result-inherited".into(), "info".into())),
        "{fsck}"
    );
    // A rollout that is not a sub-agent's still has its orphan reported.
    let plain = text.replace(
        r#""source":{"subagent":{"thread_spawn":{"parent_thread_id":"019a4c2d-1f0e-7c11-8a2b-4c5d6e7f8091","depth":1,"agent_path":null,"agent_nickname":"Euclid","agent_role":"explorer"}}}"#,
        r#""source":"cli""#,
    );
    assert_ne!(plain, text);
    let path = dir.path().join("rollout-main.jsonl");
    std::fs::write(&path, &plain).unwrap();
    let fsck = json(&["fsck", path.to_str().unwrap(), "--json"]);
    assert!(
        codes(&fsck).contains(&("tool-call-unanswered".into(), "warning".into())),
        "{fsck}"
    );
}
