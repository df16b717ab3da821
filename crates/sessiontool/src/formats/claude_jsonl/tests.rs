use std::borrow::Cow;

use super::super::{Input, Parent, ReadOutcome, WriteOptions};
use super::{ClaudeJsonl, HINT_CONTENT, HINT_RAW, HINT_UUID};
use crate::model::{Body, Content};

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

#[test]
fn canonical_entries_need_no_raw_text() {
    let file = format!("{USER}\n{CALL}\n");
    let out = round_trip(file.as_bytes());
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    for n in &out.session.nodes {
        let layout: Vec<&String> = n.hints.keys().filter(|k| *k != HINT_CONTENT).collect();
        assert!(layout.is_empty(), "{}: {:?}", n.id, n.hints);
    }
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
    for n in &out.session.nodes {
        assert!(!n.hints.contains_key(HINT_RAW), "{}: {:?}", n.id, n.hints);
    }
}

#[test]
fn duplicate_uuids_get_their_own_node() {
    let file = format!("{USER}\n{USER}\n");
    let out = round_trip(file.as_bytes());
    let ids: Vec<&str> = out.session.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["u1", "u1#2"]);
    assert_eq!(out.session.nodes[1].hints[HINT_UUID], "u1");
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
