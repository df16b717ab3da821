//! Unit tests: which lines keep their text (only those llxprt would not write), and the
//! synthetic result line.

use super::*;
use crate::formats::OpenCall;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/llxprt-jsonl");

fn raw_lines(file: &str) -> Vec<String> {
    let bytes = std::fs::read(format!("{FIXTURES}/{file}.jsonl")).unwrap();
    let input = Input {
        name: file,
        path: None,
        bytes: &bytes,
    };
    let s = LlxprtJsonl.read(&input).unwrap().session;
    let mut v: Vec<String> = s
        .nodes
        .iter()
        .filter(|n| n.hints.contains_key(HINT_RAW))
        .map(|n| n.id.clone())
        .collect();
    if s.meta.hints.contains_key(META_RAW) {
        v.push("meta".into());
    }
    v
}

#[test]
fn only_lines_llxprt_would_not_write_keep_their_text() {
    for f in ["plain", "tools", "compression"] {
        assert_eq!(raw_lines(f), Vec::<String>::new(), "{f}");
    }
    // An escape serde does not write (`\u002b`) and keys out of order; `2.50` (line 14) is
    // kept as written without the line's text.
    assert_eq!(raw_lines("thinking"), ["line-3"]);
    assert_eq!(raw_lines("events"), ["line-15"]);
}

#[test]
fn synthetic_line_answers_the_call_in_llxprt_shape() {
    let call = br#"{"v":1,"seq":3,"ts":"2026-03-01T09:01:03.000Z","type":"content","payload":{"content":{"speaker":"ai","blocks":[{"type":"tool_call","id":"c1","name":"ls","parameters":{}}]}}}"#;
    let open = OpenCall {
        call_record: call,
        call_id: "c1",
        new_id: "",
        parent_id: "",
        message: "lost",
    };
    let line = synthetic::synthetic_line(&open, 4).unwrap();
    let v: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(v["seq"], 4);
    assert_eq!(v["payload"]["content"]["speaker"], "tool");
    let b = &v["payload"]["content"]["blocks"][0];
    assert_eq!(
        (
            b["callId"].as_str(),
            b["toolName"].as_str(),
            b["error"].as_str()
        ),
        (Some("c1"), Some("ls"), Some("lost"))
    );
    let k = LlxprtJsonl.keys(&line).unwrap();
    assert_eq!(k.results, ["c1"]);
    assert_eq!(LlxprtJsonl.keys(call).unwrap().seq, Some(3));
}

#[test]
fn a_torn_first_line_is_still_recognised() {
    assert_eq!(
        detect(
            None,
            br#"{"v":1,"seq":1,"ts":"2026-03-01T09:00:00.000Z","type":"session_st"#
        ),
        80
    );
    assert_eq!(
        detect(
            None,
            b"{\"type\":\"session_meta\",\"timestamp\":\"x\",\"payload\":{}}\n"
        ),
        0
    );
}
