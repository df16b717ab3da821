//! Claude Code's `/compact` (issue 17, item 7): it writes a `system` entry with `subtype:
//! compact_boundary`, `parentUuid: null` and `logicalParentUuid` naming the last entry before
//! it, then the summary as a user entry (`isCompactSummary`). Claude Code's own history walk
//! stops at the boundary; the history before it is still the session's. fsck, tree, show and
//! convert follow the logical parent: no second root, no dead branches for that history, and
//! nothing of it dropped as "other branches".
//!
//! `fixtures/claude-jsonl/compact.jsonl` is written by hand in Claude Code 2.0.24's entry
//! layout, with the structure of claude-code-log's `dag_compact_after_rewind.jsonl`: a rewind
//! (two attempts from one reply), then a compaction after the second attempt, then more turns.

use std::path::Path;

use sessiontool::diag::Severity;
use sessiontool::model::{Body, Content, Event};
use sessiontool::tree::Tree;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-jsonl/compact.jsonl")
}

const BEFORE: &str = "Keep going: add a pause button.";
const FIRST: &str = "Start a pomodoro timer project.";
const REWOUND: &str = "First attempt: use setInterval.";

fn codes(report: &sessiontool::FileReport) -> Vec<(&'static str, String)> {
    report
        .issues
        .iter()
        .map(|i| (i.code, i.message.clone()))
        .collect()
}

#[test]
fn fsck_sees_one_tree_through_the_compaction() {
    let report = sessiontool::check(fixture()).unwrap();
    let codes = codes(&report);
    assert!(
        !codes.iter().any(|(c, _)| *c == "several-roots"),
        "{codes:?}"
    );
    // Only the rewound attempt is off the branch the tool resumes.
    let dead: Vec<_> = codes
        .iter()
        .filter(|(c, _)| *c == "dead-branches")
        .collect();
    assert_eq!(dead.len(), 1, "{codes:?}");
    assert!(
        dead[0].1.starts_with("2 record(s) on 1 branch(es)"),
        "{dead:?}"
    );
    assert_eq!(report.count(Severity::Error), 0, "{codes:?}");
    assert_eq!(report.count(Severity::Warning), 0, "{codes:?}");
    assert!(report.issues.iter().all(|i| !i.fixable()));
}

#[test]
fn the_head_branch_runs_through_the_compaction() {
    let opened = sessiontool::open(fixture()).unwrap();
    let s = &opened.session;
    let tree = Tree::new(s);
    assert_eq!(tree.roots().len(), 1);
    assert!(tree.orphans().is_empty());
    let path = tree.path_to(tree.head().unwrap());
    let texts: Vec<String> = path
        .iter()
        .filter_map(|&i| tree.node(i).message())
        .map(|m| m.text())
        .collect();
    assert_eq!(texts.first().map(String::as_str), Some(FIRST));
    assert!(texts.iter().any(|t| t == BEFORE), "{texts:?}");
    assert!(!texts.iter().any(|t| t == REWOUND), "{texts:?}");
    let boundary = path
        .iter()
        .map(|&i| tree.node(i))
        .find(|n| matches!(&n.body, Body::Event(Event::Custom { data, .. }) if data["subtype"] == "compact_boundary"))
        .expect("the boundary is on the head branch");
    assert_eq!(
        boundary.parent.as_deref(),
        Some("c0de0008-7c0e-4a1b-8c2d-3e4f5a6b7c8d")
    );
}

#[test]
fn the_file_is_written_back_as_it_was() {
    let bytes = std::fs::read(fixture()).unwrap();
    let c = sessiontool::convert_bytes(&bytes, None, "claude-jsonl").unwrap();
    assert_eq!(c.bytes, bytes);
}

#[test]
fn conversions_keep_the_history_before_the_compaction() {
    let bytes = std::fs::read(fixture()).unwrap();
    for to in [
        "gemini-json",
        "checkpoint",
        "codex-jsonl",
        "pi-jsonl",
        "gemini-jsonl",
        "llxprt-jsonl",
        "simple-agent-json",
        "agent-jsonl",
        "qwen-jsonl",
        "markdown",
    ] {
        let c = sessiontool::convert_bytes(&bytes, None, to).unwrap();
        let text = String::from_utf8_lossy(&c.bytes);
        assert!(text.contains(FIRST) && text.contains(BEFORE), "{to}");
        let other: usize = c
            .losses
            .losses
            .iter()
            .filter(|l| l.code == "other-branches")
            .map(|l| l.count)
            .sum();
        // The rewound attempt (two entries) is the only other branch.
        assert!(other == 0 || other == 2, "{to}: {:?}", c.losses);
    }
}

#[test]
fn show_and_tree_follow_it_on_the_command_line() {
    let bin = env!("CARGO_BIN_EXE_sessiontool");
    let out = std::process::Command::new(bin)
        .args(["show", "--width", "0"])
        .arg(fixture())
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(shown.contains(FIRST) && shown.contains(BEFORE), "{shown}");
    assert!(shown.contains("10 on this branch, 2 branches"), "{shown}");
    let out = std::process::Command::new(bin)
        .args(["tree", "--json"])
        .arg(fixture())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["branches"], 2, "{v}");
}

#[test]
fn a_boundary_whose_earlier_history_is_gone_is_a_root_and_left_alone() {
    // The entries before the compaction are not in the file (cut off by hand): the boundary
    // is where the history starts, as Claude Code sees it; nothing to relink.
    let bytes = std::fs::read(fixture()).unwrap();
    let kept: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').skip(8).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("7c2f1a9e-3b4d-4e5f-8a6b-9c0d1e2f3a4b.jsonl");
    std::fs::write(&path, kept.concat()).unwrap();
    let report = sessiontool::check(&path).unwrap();
    assert!(report.issues.is_empty(), "{:?}", codes(&report));
    let opened = sessiontool::open(&path).unwrap();
    let tree = Tree::new(&opened.session);
    assert_eq!(tree.roots().len(), 1);
    assert!(tree.orphans().is_empty());
    let first = tree.node(tree.roots()[0]);
    assert!(first.parent.is_none());
    assert!(
        matches!(&first.body, Body::Event(Event::Custom { data, .. }) if data["subtype"] == "compact_boundary")
    );
    // The parts after it are unaffected.
    assert!(
        opened
            .session
            .nodes
            .iter()
            .any(|n| n.message().is_some_and(|m| m.parts.iter().any(
                |p| matches!(&p.content, Content::Text { text } if text.contains("reset button"))
            )))
    );
}
