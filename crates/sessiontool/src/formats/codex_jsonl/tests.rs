//! Unit tests: which lines need their text kept (only those Codex would not write), detection
//! of single lines, and the hints the reader leaves.

use serde_json::Value;

use super::*;
use crate::formats::Input;
use crate::model::{Body, Content};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/codex-jsonl");
const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/samples/codex/pomodoro-timer.jsonl"
);

fn read_file(path: &str) -> Option<Session> {
    let bytes = std::fs::read(path).ok()?;
    let input = Input {
        name: path,
        path: None,
        bytes: &bytes,
    };
    Some(CodexJsonl.read(&input).unwrap().session)
}

fn raw_lines(s: &Session) -> Vec<&str> {
    let mut v: Vec<&str> = s
        .nodes
        .iter()
        .filter(|n| n.hints.contains_key(HINT_RAW))
        .map(|n| n.id.as_str())
        .collect();
    if s.meta.hints.contains_key(META_RAW) {
        v.push("meta");
    }
    v
}

#[test]
fn the_sample_is_rebuilt_without_keeping_text() {
    let here = std::path::Path::new(SAMPLE).is_file();
    if !crate::prerequisite::present(here, &format!("the Codex sample {SAMPLE} is absent")) {
        return;
    }
    let s = read_file(SAMPLE).expect("the sample reads");
    assert_eq!(raw_lines(&s), Vec::<&str>::new());
    assert!(s.nodes.iter().all(|n| !n.hints.contains_key(HINT_KEYS)));
}

#[test]
fn only_lines_codex_would_not_write_keep_their_text() {
    for file in ["messages", "reasoning", "tools", "compacted"] {
        let s = read_file(&format!("{FIXTURES}/{file}.jsonl")).unwrap();
        assert_eq!(raw_lines(&s), Vec::<&str>::new(), "{file}");
    }
    let s = read_file(&format!("{FIXTURES}/unknown.jsonl")).unwrap();
    // A payload's keys out of order (line 7) are rebuilt from a keys hint; top-level keys out
    // of order (8), escapes serde does not write (13), spaces and `1.50` (14) keep their text.
    // Non-objects and lines without the envelope are kept whole and serialize as they were.
    let call = s.nodes.iter().find(|n| n.id == "line-7").unwrap();
    assert!(call.hints.contains_key(HINT_KEYS));
    assert_eq!(
        raw_lines(&s),
        ["line-8", "line-13", "line-14"],
        "{:#?}",
        s.nodes
    );
    let r = read_file(&format!("{FIXTURES}/reasoning.jsonl")).unwrap();
    let no_content = r.nodes.iter().find(|n| n.id == "line-8").unwrap();
    assert!(no_content.hints.contains_key(HINT_KEYS));
}

#[test]
fn tool_items_keep_their_type() {
    let s = read_file(&format!("{FIXTURES}/tools.jsonl")).unwrap();
    let items: Vec<Option<&str>> = s
        .nodes
        .iter()
        .map(|n| n.hints.get(HINT_ITEM).and_then(Value::as_str))
        .collect();
    assert!(items.contains(&Some("custom_tool_call")));
    assert!(items.contains(&Some("custom_tool_call_output")));
    assert!(items.contains(&Some("local_shell_call")));
    // Non-compact arguments keep their string; compact ones do not need to.
    let extras: Vec<bool> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::ToolCall { name, extra, .. } if name == "shell" => {
                Some(extra.contains_key("arguments"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(extras, [false, true]);
    assert!(matches!(&s.nodes.last().unwrap().body, Body::Message(_)));
}

#[test]
fn detection_of_single_lines() {
    let meta =
        br#"{"timestamp":"2025-10-21T20:02:50.705Z","type":"session_meta","payload":{"id":"x"}}"#;
    assert_eq!(detect(None, meta), 95);
    let item = br#"{"timestamp":"t","type":"response_item","payload":{"type":"message"}}"#;
    assert_eq!(detect(None, item), 85);
    let torn = br#"{"timestamp":"2025-10-21T20:02:50.705Z","type":"response_item","payload":{"type":"mess"#;
    assert_eq!(detect(None, torn), 80);
    assert_eq!(detect(None, b"\n\n"), 0);
    let qwen = br#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","payload":{}}"#;
    assert_eq!(detect(None, qwen), 0);
}
