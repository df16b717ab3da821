use std::borrow::Cow;

use super::super::{Input, Parent, ReadOutcome, WriteOptions};
use super::origin::{AsRead, WrittenAs, written};
use super::{ClaudeJsonl, NAME};
use crate::model::{Body, Content, Origin, Session};

const CLAUDE_JSONL: &dyn crate::formats::Format = &ClaudeJsonl;

fn read(bytes: &[u8]) -> ReadOutcome {
    CLAUDE_JSONL
        .read(&Input {
            name: "t.jsonl",
            path: None,
            bytes,
        })
        .expect("reads")
}

fn round_trip(bytes: &[u8]) -> ReadOutcome {
    let out = read(bytes);
    let w = CLAUDE_JSONL
        .write(&out.session, &WriteOptions::default())
        .expect("writes");
    assert_eq!(
        String::from_utf8_lossy(&w.bytes),
        String::from_utf8_lossy(bytes)
    );
    out
}

const USER: &str = r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s1","version":"2.0.24","gitBranch":"","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2025-01-01T00:00:00.000Z"}"#;
const CALL: &str = r#"{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s1","version":"2.0.24","gitBranch":"","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2}},"requestId":"req_1","type":"assistant","uuid":"u2","timestamp":"2025-01-01T00:00:01.000Z"}"#;

/// The nodes the writer writes as their line because rebuilding them would not give it.
fn kept_as_text(s: &Session) -> Vec<&str> {
    let as_read = AsRead::of(&s.meta);
    s.nodes
        .iter()
        .filter(|n| matches!(written(n, &as_read, false), Some(WrittenAs::Line(_))))
        .map(|n| n.id.as_str())
        .collect()
}

#[test]
fn canonical_entries_need_no_raw_text() {
    let file = format!("{USER}\n{CALL}\n");
    let out = round_trip(file.as_bytes());
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    for n in &out.session.nodes {
        assert_eq!(Origin::of(&n.origin, NAME), Some(n_line(&file, &n.id)));
    }
    assert!(kept_as_text(&out.session).is_empty());
}

/// The line of `file` whose uuid is `id`.
fn n_line<'a>(file: &'a str, id: &str) -> &'a [u8] {
    let uuid = format!("\"uuid\":\"{id}\"");
    file.lines().find(|l| l.contains(&uuid)).unwrap().as_bytes()
}

#[test]
fn other_key_orders_and_missing_fields_round_trip_without_raw_text() {
    // Python-written test data: other key order, `", "` separators, no gitBranch.
    let file = concat!(
        r#"{"type": "user", "timestamp": "t", "parentUuid": null, "isSidechain": false, "userType": "human", "cwd": "/tmp", "sessionId": "s", "version": "1.0.0", "uuid": "a", "message": {"role": "user", "content": [{"type": "text", "text": "x"}]}}"#,
        "\n",
        r#"{"type": "user", "timestamp": "t2", "parentUuid": "a", "isSidechain": false, "userType": "human", "cwd": "/tmp", "sessionId": "s", "version": "1.0.0", "uuid": "b", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "ok", "is_error": false}]}}"#
    );
    let out = round_trip(file.as_bytes());
    assert!(kept_as_text(&out.session).is_empty());
    // The file's last line has no line end: its tail says so, for this format's writer.
    let tail = crate::formats::tail_as_read(&out.session.meta, NAME);
    assert_eq!(tail, Some(&b""[..]));
}

#[test]
fn duplicate_uuids_get_their_own_node() {
    let file = format!("{USER}\n{USER}\n");
    let out = round_trip(file.as_bytes());
    let ids: Vec<&str> = out.session.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["u1", "u1#2"]);
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.code == "claude-duplicate-uuid")
    );
}

#[test]
fn damage_is_reported_and_the_rest_read() {
    let file = format!("{USER}\n{CALL}\n{{\"parentUuid\":\"u2\",\"isSid");
    let out = read(file.as_bytes());
    assert_eq!(out.session.nodes.len(), 2);
    assert!(out.diagnostics.iter().any(|d| d.code == "torn-tail"));
    assert_eq!(out.session.meta.head.as_deref(), Some("u2"));
    let m = out.session.nodes[1].message().unwrap();
    assert!(matches!(&m.parts[0].content, Content::ToolCall { name, .. } if name == "Bash"));
}

#[test]
fn keys_borrow_and_find_the_parent() {
    let k = CLAUDE_JSONL.keys(CALL.as_bytes()).unwrap();
    assert!(matches!(k.id, Some(Cow::Borrowed("u2"))));
    assert!(matches!(k.session_id, Some(Cow::Borrowed("s1"))));
    assert!(matches!(k.kind, Some(Cow::Borrowed("assistant"))));
    assert_eq!(k.parent, Parent::Id(Cow::Borrowed("u1")));
    assert_eq!(&CALL[k.parent_span.unwrap()], "\"u1\"");
    assert_eq!(k.calls, ["toolu_1"]);
    assert!(k.missing.is_empty());
    let k = CLAUDE_JSONL
        .keys(br#"{"type":"summary","summary":"s","leafUuid":"u2"}"#)
        .unwrap();
    assert_eq!(k.kind.as_deref(), Some("summary"));
    assert!(k.id.is_none() && k.missing.is_empty());
    let k = CLAUDE_JSONL.keys(br#"{"uuid":"x","type":"user"}"#).unwrap();
    assert_eq!(k.missing, ["parentUuid", "sessionId", "message"]);
    assert!(CLAUDE_JSONL.keys(b"[1]").is_none());
    assert!(CLAUDE_JSONL.keys(b"{\"uuid\":").is_none());
}

#[test]
fn entries_without_message_shape_stay_whole_in_the_tree() {
    let sys = r#"{"parentUuid":"u1","isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"u3","timestamp":"t"}"#;
    let file = format!("{USER}\n{sys}\n");
    let out = round_trip(file.as_bytes());
    let n = &out.session.nodes[1];
    assert_eq!(n.parent.as_deref(), Some("u1"));
    assert!(matches!(n.body, Body::Event(_)));
    assert_eq!(out.session.meta.head.as_deref(), Some("u3"));
}

fn write_lines(s: &Session) -> Vec<String> {
    let w = CLAUDE_JSONL
        .write(s, &WriteOptions::default())
        .expect("writes");
    String::from_utf8(w.bytes)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn set_text(s: &mut Session, node: usize, text: &str) {
    let Body::Message(m) = &mut s.nodes[node].body else {
        panic!("a message")
    };
    m.parts[0].content = Content::Text { text: text.into() };
}

#[test]
fn an_edited_node_is_rebuilt_not_written_as_its_line() {
    // A rebuilt entry spells `\u00e9` as `é`: the line is written as it was while its node
    // reads the same, and rebuilt once the node changed (it used to be written as its line).
    let escaped = USER.replace(r#""content":"hi""#, r#""content":"caf\u00e9""#);
    let file = format!("{escaped}\n{CALL}\n");
    let mut out = round_trip(file.as_bytes());
    assert_eq!(kept_as_text(&out.session), ["u1"]);
    set_text(&mut out.session, 0, "tea");
    let lines = write_lines(&out.session);
    assert_eq!(lines[0], USER.replace(r#""hi""#, r#""tea""#));
    assert_eq!(lines[1], CALL);
}

#[test]
fn an_edited_node_keeps_its_uuid_key_order_and_moved_usage() {
    // A repeated uuid (the node is `u2#2`), keys in another order, and a reply's usage moved
    // to its last entry: all kept when the entry is rebuilt.
    let reordered = CALL.replace(
        r#"{"parentUuid":"u1","isSidechain":false,"#,
        r#"{"isSidechain":false,"parentUuid":"u1","#,
    );
    let second = CALL.replace("toolu_1", "toolu_2");
    let file = format!("{USER}\n{reordered}\n{second}\n");
    let mut out = round_trip(file.as_bytes());
    let ids: Vec<&str> = out.session.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["u1", "u2", "u2#2"]);
    assert!(out.session.nodes[1].message().unwrap().usage.is_none());
    let Body::Message(m) = &mut out.session.nodes[1].body else {
        panic!("a message")
    };
    m.model = Some("other".into());
    let Body::Message(m) = &mut out.session.nodes[2].body else {
        panic!("a message")
    };
    m.model = Some("other".into());
    let lines = write_lines(&out.session);
    assert_eq!(
        lines[1],
        reordered.replace(r#""model":"m""#, r#""model":"other""#)
    );
    assert_eq!(
        lines[2],
        second.replace(r#""model":"m""#, r#""model":"other""#)
    );
}

#[test]
fn python_separators_are_read_from_the_sessions_origin() {
    // A summary line in Python's style before compact chain entries: the meta's origin is the
    // first chain entry and that line; an entry rebuilt is written in Python's style.
    let summary = r#"{"type": "summary", "summary": "s", "leafUuid": "u1"}"#;
    let file = format!("{summary}\n{USER}\n");
    let mut out = round_trip(file.as_bytes());
    let origin = Origin::of(&out.session.meta.origin, NAME).unwrap();
    assert_eq!(origin, format!("{USER}\n{summary}").as_bytes());
    assert_eq!(
        AsRead::of(&out.session.meta),
        AsRead {
            base: super::write::Base::of(&out.session.meta),
            python: true
        }
    );
    set_text(&mut out.session, 1, "tea");
    let lines = write_lines(&out.session);
    assert_eq!(lines[0], summary);
    assert!(
        lines[1].starts_with(r#"{"parentUuid": null, "isSidechain": false,"#),
        "{}",
        lines[1]
    );
}
