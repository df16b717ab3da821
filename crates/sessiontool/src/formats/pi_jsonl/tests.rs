//! Unit tests for pi-jsonl: number formatting, damage, version 1 details, keys' missing
//! fields, synthetic results and sessions from other formats.

use serde_json::{Value, json};

use super::super::{Input, OpenCall, Parent, ReadOutcome, WriteOptions};
use super::js::js_number;
use super::origin::AsRead;
use super::{NAME, PiJsonl, RECORD};
use crate::diag::Severity;
use crate::model::{Body, Content, Event, Message, Meta, Node, Origin, Part, Role, Session, Usage};

const PI_JSONL: &dyn crate::formats::Format = &PiJsonl;

const V1: &str = concat!(
    r#"{"type":"session","id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p","provider":"anthropic","modelId":"m","thinkingLevel":"off"}"#,
    "\n",
    r#"{"type":"message","timestamp":"2025-11-20T23:33:51.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    "\n",
    r#"{"type":"message","timestamp":"2025-11-20T23:33:52.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.000005,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.000005}},"stopReason":"toolUse","timestamp":2}}"#,
    "\n",
    r#"{"type":"compaction","timestamp":"2025-11-20T23:34:00.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}"#,
    "\n",
);

fn read(bytes: &[u8]) -> ReadOutcome {
    PI_JSONL
        .read(&Input {
            name: "t.jsonl",
            path: None,
            bytes,
        })
        .expect("reads")
}

fn write(s: &Session) -> Vec<u8> {
    PI_JSONL.write(s, &WriteOptions::default()).unwrap().bytes
}

fn codes(out: &ReadOutcome) -> Vec<&'static str> {
    out.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn numbers_as_javascript_writes_them() {
    for (x, js) in [
        (0.000005, "0.000005"),
        (5e-7, "5e-7"),
        (1e-7, "1e-7"),
        (0.0024000000000000002, "0.0024000000000000002"),
        (0.21023125, "0.21023125"),
        (-3e-7, "-3e-7"),
        (2.5, "2.5"),
        (100.0, "100"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.0, "0"),
    ] {
        assert_eq!(js_number(x), js, "{x}");
    }
}

#[test]
fn version_1_chains_in_file_order_and_writes_back() {
    let out = read(V1.as_bytes());
    assert_eq!(codes(&out), vec!["pi-version-1"]);
    let s = &out.session;
    let ids: Vec<&str> = s.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["v1-2", "v1-3", "v1-4"]);
    assert_eq!(s.nodes[1].parent.as_deref(), Some("v1-2"));
    // Their lines, kept as their origins, have no ids to write.
    let own_id = |n: &Node| AsRead::of(n).unwrap().own_id().cloned();
    assert!(s.nodes.iter().all(|n| own_id(n).is_none()));
    // firstKeptEntryIndex 2 counts the header: the assistant entry.
    match &s.nodes[2].body {
        Body::Event(Event::Compaction { first_kept, .. }) => {
            assert_eq!(first_kept.as_deref(), Some("v1-3"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.meta.extra["modelId"], "m");
    assert_eq!(write(s), V1.as_bytes());
}

#[test]
fn damage_is_reported_and_complete_lines_kept() {
    let mut bytes = V1.as_bytes().to_vec();
    bytes.extend_from_slice(br#"{"type":"message","timestamp":"2025-11-2"#);
    let out = read(&bytes);
    assert!(codes(&out).contains(&"torn-tail"), "{:?}", codes(&out));
    assert_eq!(out.session.nodes.len(), 3);
    // A line without a type and a bare value are kept whole.
    let mut bytes = V1.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"no\":\"type\"}\n[1, 2]\n");
    let out = read(&bytes);
    assert_eq!(
        codes(&out)
            .iter()
            .filter(|c| **c == "pi-not-an-entry")
            .count(),
        2
    );
    let last = out.session.nodes.last().unwrap();
    assert!(matches!(&last.body, Body::Event(Event::Custom { kind, .. }) if kind == RECORD));
    assert_eq!(Origin::of(&last.origin, NAME), Some(&b"[1, 2]"[..]));
    assert_eq!(write(&out.session), bytes);
}

#[test]
fn a_file_without_header_is_an_error_but_reads() {
    let body = V1.split_once('\n').unwrap().1;
    let out = read(body.as_bytes());
    let d = &out.diagnostics[0];
    assert_eq!((d.code, d.severity), ("pi-no-header", Severity::Error));
    assert_eq!(out.session.nodes.len(), 3);
    assert_eq!(write(&out.session), body.as_bytes());
}

/// Keys out of pi's order, an id used twice, no final newline.
const ODD: &str = concat!(
    r#"{"version":3,"type":"session","id":"s","timestamp":"t","cwd":"/"}"#,
    "\n",
    r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"content":"x","role":"user","timestamp":1},"zz":1}"#,
    "\n",
    r#"{"id":"aaaaaaaa","type":"label","parentId":"aaaaaaaa","timestamp":"t","targetId":"aaaaaaaa","label":"l"}"#,
);

#[test]
fn odd_key_orders_duplicates_and_no_final_newline_write_back() {
    let text = ODD;
    let out = read(text.as_bytes());
    let c = codes(&out);
    assert!(c.contains(&"pi-duplicate-id") && c.contains(&"missing-final-newline"));
    let s = &out.session;
    assert_ne!(s.nodes[0].id, s.nodes[1].id);
    assert_eq!(write(s), text.as_bytes());
}

#[test]
fn every_line_pi_wrote_is_rebuilt_as_it_was() {
    // The fixtures and the real samples are pi's own output: the writer rebuilds every line
    // (from the node and what its line says of ids, content shape and key order), so a changed
    // node is written as pi would write it.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("fixtures/pi-jsonl"),
        root.join("../../../shared/samples/pi"),
    ] {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            files.push(entry.unwrap().path());
        }
    }
    let mut lines = 0;
    for path in &files {
        let out = read(&std::fs::read(path).unwrap());
        for node in &out.session.nodes {
            let line = AsRead::of(node).unwrap();
            let rebuilt = super::write::rebuilt(node, &line);
            assert_eq!(
                String::from_utf8_lossy(&rebuilt),
                String::from_utf8_lossy(line.text),
                "{}",
                path.display()
            );
            lines += 1;
        }
    }
    assert!(lines > 100, "{lines} lines in {files:?}");
}

#[test]
fn an_edited_entry_is_rebuilt_in_its_line_s_key_order_under_its_own_id() {
    let text = format!("{ODD}\n");
    let mut s = read(text.as_bytes()).session;
    let Body::Message(m) = &mut s.nodes[0].body else {
        panic!()
    };
    m.parts[0] = Part::text("y");
    let Body::Event(Event::Custom { data, .. }) = &mut s.nodes[1].body else {
        panic!()
    };
    data["label"] = "m".into();
    s.meta.cwd = Some("/moved".into());
    let want = concat!(
        r#"{"version":3,"type":"session","id":"s","timestamp":"t","cwd":"/moved"}"#,
        "\n",
        r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"content":"y","role":"user","timestamp":1},"zz":1}"#,
        "\n",
        r#"{"id":"aaaaaaaa","type":"label","parentId":"aaaaaaaa","timestamp":"t","targetId":"aaaaaaaa","label":"m"}"#,
        "\n",
    );
    assert_eq!(String::from_utf8(write(&s)).unwrap(), want);
}

#[test]
fn a_stale_line_is_never_written_for_a_changed_node() {
    // Spaces after the colons: rebuilding cannot give this line, so it was kept as the node's
    // text, and written even after the node changed.
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
        "\n",
        r#"{"type": "message", "id": "aaaaaaaa", "parentId": null, "timestamp": "t", "message": {"role": "user", "content": "x", "timestamp": 1}}"#,
        "\n",
    );
    let mut s = read(text.as_bytes()).session;
    assert_eq!(write(&s), text.as_bytes());
    s.nodes[0].parent = Some("elsewhere".into());
    let out = String::from_utf8(write(&s)).unwrap();
    assert!(out.contains(r#""parentId":"elsewhere""#), "{out}");
}

#[test]
fn keys_flag_what_pi_needs() {
    let k = |line: &str| PI_JSONL.keys(line.as_bytes()).unwrap().missing;
    // Version 1: no id, no parentId, nothing missing.
    for line in V1.lines() {
        assert!(k(line).is_empty(), "{line}");
    }
    assert_eq!(
        k(
            r#"{"type":"message","id":"a","timestamp":"t","message":{"role":"assistant","content":[]}}"#
        ),
        ["parentId", "message.usage"]
    );
    assert_eq!(
        k(r#"{"type":"message","parentId":null,"message":"oops"}"#),
        ["id", "timestamp", "message"]
    );
    assert_eq!(
        k(
            r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","content":"x"}}"#
        ),
        ["message.toolCallId"]
    );
    assert_eq!(k(r#"{"type":"session","cwd":"/"}"#), ["id"]);
    assert!(PI_JSONL.keys(b"[1]").is_none());
    // Escaped ids are unescaped; the parent span covers the escaped text.
    let line = r#"{"type":"label","id":"a\"b","parentId":"c\\d","timestamp":"t"}"#;
    let keys = PI_JSONL.keys(line.as_bytes()).unwrap();
    assert_eq!(keys.id.as_deref(), Some("a\"b"));
    assert_eq!(keys.parent, Parent::Id("c\\d".into()));
    assert_eq!(&line[keys.parent_span.unwrap()], r#""c\\d""#);
}

#[test]
fn synthetic_result_for_version_1_has_no_id() {
    let call = V1.lines().nth(2).unwrap();
    let rec = PI_JSONL
        .synthetic_result(&OpenCall {
            call_record: call.as_bytes(),
            call_id: "c1",
            new_id: "deadbeef",
            parent_id: "v1-3",
            message: "lost",
        })
        .unwrap();
    let v: Value = serde_json::from_slice(&rec).unwrap();
    assert!(v.get("id").is_none() && v.get("parentId").is_none());
    assert_eq!(v["message"]["toolName"], "read");
    assert_eq!(v["message"]["timestamp"], 2);
    let keys = PI_JSONL.keys(&rec).unwrap();
    assert_eq!(keys.results, ["c1"]);
    assert!(keys.missing.is_empty());
    // Appended after the call, it answers it in a version 1 file.
    let mut file = V1.as_bytes().to_vec();
    file.extend_from_slice(&rec);
    file.push(b'\n');
    let out = read(&file);
    let last = out.session.nodes.last().unwrap();
    assert_eq!(last.message().unwrap().role, Role::Tool);
}

fn node(id: &str, parent: Option<&str>, body: Body) -> Node {
    Node {
        id: id.into(),
        parent: parent.map(String::from),
        timestamp: Some("2026-01-01T00:00:00.000Z".into()),
        body,
        extra: Default::default(),
        origin: None,
    }
}

#[test]
fn foreign_sessions_become_version_3() {
    let mut assistant = Message::new(
        Role::Assistant,
        vec![
            Part::new(Content::Thought {
                text: "hm".into(),
                subject: None,
                encrypted: None,
                extra: Default::default(),
            }),
            Part::new(Content::ToolCall {
                id: None,
                name: "ls".into(),
                args: json!({}),
                extra: Default::default(),
            }),
        ],
    );
    assistant.usage = Some(Usage {
        input: Some(7),
        ..Usage::default()
    });
    let result = Part::new(Content::ToolResult {
        call_id: None,
        name: Some("ls".into()),
        output: json!({"output": "a b"}),
        is_error: false,
        status: None,
        display: None,
        extra: Default::default(),
    });
    let session = Session {
        meta: Meta {
            id: Some("sess".into()),
            source_format: Some("other".into()),
            ..Meta::default()
        },
        nodes: vec![
            node(
                "u1",
                None,
                Body::Message(Message::new(Role::User, vec![Part::text("go")])),
            ),
            node(
                "n1",
                Some("u1"),
                Body::Message(Message::new(Role::Info, vec![Part::text("note")])),
            ),
            node("a1", Some("n1"), Body::Message(assistant)),
            node(
                "r1",
                Some("a1"),
                Body::Message(Message::new(Role::User, vec![result, Part::text("and?")])),
            ),
        ],
    };
    let w = PI_JSONL.write(&session, &WriteOptions::default()).unwrap();
    let codes: Vec<&str> = w.losses.losses.iter().map(|l| l.code).collect();
    assert_eq!(codes, ["no-cwd", "notices"]);
    let lines: Vec<Value> = std::str::from_utf8(&w.bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["version"], 3);
    let a = &lines[2];
    assert_eq!(
        a["parentId"], lines[1]["id"],
        "the notice's child hangs under its parent"
    );
    assert_eq!(a["message"]["usage"]["input"], 7);
    assert_eq!(a["message"]["stopReason"], "toolUse");
    let call_id = a["message"]["content"][1]["id"].as_str().unwrap();
    let r = &lines[3]["message"];
    assert_eq!(
        (r["role"].as_str(), r["toolCallId"].as_str()),
        (Some("toolResult"), Some(call_id))
    );
    assert_eq!(r["content"][0]["text"], "a b");
    assert_eq!(lines[4]["message"]["content"][0]["text"], "and?");
    assert_eq!(lines[4]["parentId"], lines[3]["id"]);
    // It reads back as pi with the same conversation.
    let back = read(&w.bytes);
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    assert_eq!(back.session.meta.source_format.as_deref(), Some(NAME));
    assert_eq!(back.session.nodes.len(), 4);
}
