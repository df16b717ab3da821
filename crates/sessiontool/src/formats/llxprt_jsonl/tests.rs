//! Unit tests: which lines need their text (only those llxprt would not write), and the
//! synthetic result line.

use super::*;
use crate::formats::OpenCall;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/llxprt-jsonl");

/// The lines of a fixture that rebuilding from their nodes would not give back (written back
/// from their text while their node is unchanged), by node id ("meta": the session_start line).
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
        .filter(|n| {
            let line = origin::AsRead::of(n).unwrap();
            assert!(line.same, "{file}: {}", n.id);
            write::line_text(n, &line.kept).as_deref() != Some(line.text)
        })
        .map(|n| n.id.clone())
        .collect();
    let start = origin::StartAsRead::of(&s.meta).unwrap();
    if write::meta_line(&s.meta, &start).as_deref() != Some(start.text) {
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
fn a_changed_node_is_rebuilt_not_written_as_its_stale_line() {
    let bytes = std::fs::read(format!("{FIXTURES}/thinking.jsonl")).unwrap();
    let input = Input {
        name: "thinking",
        path: None,
        bytes: &bytes,
    };
    let mut s = LlxprtJsonl.read(&input).unwrap().session;
    let write = |s: &crate::model::Session| {
        let out = LlxprtJsonl.write(s, &WriteOptions::default()).unwrap();
        String::from_utf8(out.bytes).unwrap()
    };
    assert_eq!(write(&s).as_bytes(), bytes);
    // line-3 keeps its text (an escape serde does not write): changed, it is rebuilt with its
    // seq, and the lines after it are still their own.
    let node = s.nodes.iter_mut().find(|n| n.id == "line-3").unwrap();
    let crate::model::Body::Message(m) = &mut node.body else {
        panic!()
    };
    let last = m.parts.len() - 1;
    m.parts[last] = crate::model::Part::text("It uses fake timers.");
    let out = write(&s);
    let line = out.lines().nth(2).unwrap();
    assert!(line.starts_with(r#"{"v":1,"seq":3,"#), "{line}");
    assert!(
        line.contains("It uses fake timers.") && !line.contains("It relies on"),
        "{line}"
    );
    let rest = |t: &str| t.lines().skip(3).collect::<Vec<_>>().join("\n");
    assert_eq!(rest(&out), rest(&String::from_utf8(bytes).unwrap()));
    // The session_start line too: a moved session's cwd is written, not its old line.
    s.meta.cwd = Some("/moved".into());
    let out = write(&s);
    assert!(out.lines().next().unwrap().contains(r#""cwd":"/moved""#));
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
