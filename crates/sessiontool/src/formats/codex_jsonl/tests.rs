//! Unit tests: which lines a rebuilt node would not give back (only those Codex would not
//! write), detection of single lines, and what the writer reads again from a node's line.

use super::items::native_line;
use super::origin::{Layout, line_of};
use super::*;
use crate::formats::Input;
use crate::model::{Body, Content, Node};

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

/// What a rebuilt node keeps of its line (it changed: `Kept::Rebuilt`), computed as for a node
/// that did.
fn layout(node: &Node) -> Layout {
    let (line, _) = line_of(node).expect("read from this format");
    origin::layout(line)
}

/// The nodes (and `meta`) whose line their rebuilt node would not give back, even keeping what
/// the writer reads again from the line: those written only as their line.
fn raw_lines(s: &Session) -> Vec<&str> {
    let mut v: Vec<&str> = s
        .nodes
        .iter()
        .filter(|n| {
            let built = native_line(n, &layout(n)).map(|v| serde_json::to_vec(&v).unwrap());
            built.as_deref() != line_of(n).map(|(line, _)| line)
        })
        .map(|n| n.id.as_str())
        .collect();
    let line = crate::model::Origin::of(&s.meta.origin, NAME);
    if line.is_some() && origin::rebuilt_meta_line(&s.meta).as_deref() != line {
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
    assert!(s.nodes.iter().all(|n| layout(n).keys.is_none()));
}

#[test]
fn only_lines_codex_would_not_write_keep_their_text() {
    for file in ["messages", "reasoning", "tools", "compacted"] {
        let s = read_file(&format!("{FIXTURES}/{file}.jsonl")).unwrap();
        assert_eq!(raw_lines(&s), Vec::<&str>::new(), "{file}");
    }
    let s = read_file(&format!("{FIXTURES}/unknown.jsonl")).unwrap();
    // A payload's keys out of order (line 7) are rebuilt in the order read; top-level keys out
    // of order (8), escapes serde does not write (13), spaces and `1.50` (14) keep their text.
    // Non-objects and lines without the envelope are kept whole and serialize as they were.
    let call = s.nodes.iter().find(|n| n.id == "line-7").unwrap();
    assert!(layout(call).keys.is_some());
    assert_eq!(
        raw_lines(&s),
        ["line-8", "line-13", "line-14"],
        "{:#?}",
        s.nodes
    );
    let r = read_file(&format!("{FIXTURES}/reasoning.jsonl")).unwrap();
    let no_content = r.nodes.iter().find(|n| n.id == "line-8").unwrap();
    assert!(layout(no_content).keys.is_some());
}

#[test]
fn tool_items_keep_their_type() {
    let s = read_file(&format!("{FIXTURES}/tools.jsonl")).unwrap();
    let items: Vec<Option<String>> = s.nodes.iter().map(|n| layout(n).item).collect();
    for item in [
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
    ] {
        assert!(items.contains(&Some(item.into())), "{item}");
    }
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
