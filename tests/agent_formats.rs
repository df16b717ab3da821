//! Go agent session JSONL (`agent-jsonl`): hand-made fixtures (after seed 002) read and write
//! back byte for byte; detection is disjoint from pi, Qwen and Claude; a Qwen session converts
//! to it and reads back; `keys` and `synthetic_result` on every line.

use std::path::Path;

use sessiontool::convert::convert;
use sessiontool::formats::agent_jsonl::AgentJsonl;
use sessiontool::formats::{self, Format, Input, OpenCall, Parent, WriteOptions};
use sessiontool::model::{Body, Content, Event, Role, Session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const OWN: [&str; 3] = ["plain.jsonl", "tools.jsonl", "compaction-branch.jsonl"];

static AGENT: &dyn Format = &AgentJsonl;

fn fixture(dir: &str, file: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(dir).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(Path::new(FIXTURES).join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    v.sort();
    v
}

fn read(bytes: &[u8]) -> Session {
    let input = Input {
        name: "test.jsonl",
        path: None,
        bytes,
    };
    let out = AGENT.read(&input).expect("reads");
    assert!(
        out.diagnostics
            .iter()
            .all(|d| d.code != "agent-not-an-entry"),
        "{:?}",
        out.diagnostics
    );
    out.session
}

#[test]
fn fixtures_round_trip_byte_for_byte() {
    for name in OWN {
        let bytes = fixture("agent-jsonl", name);
        let session = read(&bytes);
        let written = AGENT.write(&session, &WriteOptions::default()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
        assert!(written.losses.losses.is_empty(), "{name}");
    }
}

#[test]
fn fixtures_need_no_raw_lines() {
    // The writer rebuilds every line itself (Go's escaping of `<`, `>`, `&` included): the
    // bytes a node was read from (its origin) are only needed for lines written by something
    // else. Without them, every fixture is still written back byte for byte.
    for name in OWN {
        let bytes = fixture("agent-jsonl", name);
        let mut session = read(&bytes);
        session.meta.origin = None;
        session.nodes.iter_mut().for_each(|n| n.origin = None);
        let written = AGENT.write(&session, &WriteOptions::default()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
    }
}

#[test]
fn an_edited_node_is_rebuilt_not_written_as_its_line() {
    // A line the writer would not give back (another key order) is written as it was while
    // its node reads the same, and rebuilt, under the entry's own id, once it changed.
    let text = concat!(
        r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#,
        "\n",
        r#"{"id":"a1","type":"message","parent_id":"","timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
        "\n",
        r#"{"id":"a1","type":"message","parent_id":"a1","timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"text","text":"again"}]}}"#,
        "\n",
    );
    let mut session = read(text.as_bytes());
    let written = AGENT.write(&session, &WriteOptions::default()).unwrap();
    assert_eq!(String::from_utf8_lossy(&written.bytes), text);
    assert_ne!(session.nodes[1].id, "a1", "the repeated id is renamed");
    let Body::Message(m) = &mut session.nodes[1].body else {
        panic!("a message")
    };
    m.parts.truncate(0);
    let written = AGENT.write(&session, &WriteOptions::default()).unwrap();
    let lines: Vec<&str> = std::str::from_utf8(&written.bytes)
        .unwrap()
        .lines()
        .collect();
    assert_eq!(lines[1], text.lines().nth(1).unwrap(), "the unchanged line");
    assert!(
        lines[2].starts_with(r#"{"type":"message","id":"a1","parent_id":"a1""#),
        "rebuilt under its own id: {}",
        lines[2]
    );
    assert!(!lines[2].contains("again"), "{}", lines[2]);
}

#[test]
fn reads_the_model() {
    let s = read(&fixture("agent-jsonl", "tools.jsonl"));
    assert_eq!(
        s.meta.id.as_deref(),
        Some("b1c2d3e4-0000-4000-8000-000000000001")
    );
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/user/project"));
    let roles: Vec<Role> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.role)
        .collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(s.nodes[0].parent, None);
    assert_eq!(s.nodes[1].parent.as_deref(), Some("11111111"));
    let user = s.nodes[0].message().unwrap();
    assert_eq!(user.text(), "List the files & check <main.go>");
    assert!(matches!(user.parts[1].content, Content::Media { .. }));
    let a = s.nodes[1].message().unwrap();
    assert_eq!(a.model.as_deref(), Some("claude-sonnet-4-5"));
    let u = a.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.cached, u.total),
        (Some(100), Some(50), Some(80), Some(150))
    );
    assert!(
        matches!(&a.parts[0].content, Content::Thought { text, .. } if text == "I should run ls.")
    );
    assert!(
        matches!(&a.parts[2].content, Content::ToolCall { id: Some(id), name, .. } if id == "call_abc" && name == "bash")
    );
    let t = s.nodes[2].message().unwrap();
    match &t.parts[0].content {
        Content::ToolResult {
            call_id,
            name,
            output,
            is_error,
            ..
        } => {
            assert_eq!(call_id.as_deref(), Some("call_abc"));
            assert_eq!(name.as_deref(), Some("bash"));
            assert_eq!(output, "main.go\npkg/\n");
            assert!(!is_error);
        }
        other => panic!("{other:?}"),
    }

    let s = read(&fixture("agent-jsonl", "compaction-branch.jsonl"));
    let kinds: Vec<String> = s
        .nodes
        .iter()
        .map(|n| match &n.body {
            Body::Message(m) => m.role.as_str().to_string(),
            Body::Event(e) => e.kind().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["branch", "user", "compaction", "assistant", "label"]
    );
    match &s.nodes[2].body {
        Body::Event(Event::Compaction {
            first_kept,
            tokens_before,
            ..
        }) => {
            assert_eq!(first_kept.as_deref(), Some("f6a7b8c9"));
            assert_eq!(*tokens_before, Some(45000));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn detection_is_disjoint() {
    for name in files("agent-jsonl") {
        let bytes = fixture("agent-jsonl", &name);
        assert!(AGENT.detect(None, &bytes) >= 90, "{name}");
        // Beats every registered format (pi claims any `session` header at 95).
        for f in formats::all().iter().filter(|f| f.name() != AGENT.name()) {
            assert!(
                f.detect(None, &bytes) < AGENT.detect(None, &bytes),
                "{name}: {}",
                f.name()
            );
        }
    }
    for dir in ["pi-jsonl", "qwen-jsonl", "claude-jsonl"] {
        for name in files(dir) {
            let bytes = fixture(dir, &name);
            assert_eq!(AGENT.detect(None, &bytes), 0, "{dir}/{name}");
        }
    }
}

#[test]
fn qwen_tools_convert_and_read_back() {
    let bytes = fixture("qwen-jsonl", "tools.jsonl");
    let input = Input {
        name: "tools.jsonl",
        path: None,
        bytes: &bytes,
    };
    let qwen = formats::by_name("qwen-jsonl").unwrap();
    let source = qwen.read(&input).unwrap().session;
    let (source, _) = source.branch(None).unwrap();
    let conv = convert(&input, Some(qwen), AGENT, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(conv.bytes.clone()).unwrap();
    let back = read(text.as_bytes());
    // Same output twice, and it reads back as itself.
    let again = AGENT.write(&back, &WriteOptions::default()).unwrap();
    assert_eq!(String::from_utf8(again.bytes).unwrap(), text);
    // Ids: 8 hex, chained, "" for the first.
    let mut prev = String::new();
    for line in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        assert!(
            id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(v["parent_id"].as_str().unwrap(), prev);
        prev = id.to_string();
    }
    let summary = |s: &Session| -> Vec<(Role, String)> {
        s.nodes
            .iter()
            .filter_map(|n| n.message())
            .filter(|m| m.role.is_conversation())
            .map(|m| {
                (
                    if m.role == Role::Tool {
                        Role::Tool
                    } else {
                        m.role
                    },
                    m.text(),
                )
            })
            .filter(|(_, t)| !t.is_empty())
            .collect()
    };
    assert_eq!(summary(&back), summary(&source));
    let pairs = |s: &Session| -> (Vec<String>, Vec<String>) {
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for m in s.nodes.iter().filter_map(|n| n.message()) {
            for p in &m.parts {
                match &p.content {
                    Content::ToolCall { id, .. } => calls.push(id.clone().unwrap_or_default()),
                    Content::ToolResult { call_id, .. } => {
                        results.push(call_id.clone().unwrap_or_default())
                    }
                    _ => {}
                }
            }
        }
        (calls, results)
    };
    let (calls, results) = pairs(&back);
    assert!(!calls.is_empty());
    assert_eq!((calls, results), pairs(&source));
}

#[test]
fn keys_on_every_line() {
    for name in files("agent-jsonl") {
        let bytes = fixture("agent-jsonl", &name);
        for (i, line) in bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .enumerate()
        {
            let k = AGENT.keys(line).expect("object");
            let v: serde_json::Value = serde_json::from_slice(line).unwrap();
            assert_eq!(k.kind.as_deref(), v["type"].as_str(), "{name}:{i}");
            assert!(k.missing.is_empty(), "{name}:{i}: {:?}", k.missing);
            if i == 0 {
                assert_eq!(k.id, None);
                assert_eq!(k.session_id.as_deref(), v["id"].as_str());
                continue;
            }
            assert_eq!(k.id.as_deref(), v["id"].as_str(), "{name}:{i}");
            match v["parent_id"].as_str() {
                None => assert_eq!(k.parent, Parent::None),
                Some("") => assert_eq!(k.parent, Parent::Root),
                Some(p) => {
                    assert_eq!(k.parent, Parent::Id(p.into()));
                    let span = k.parent_span.clone().unwrap();
                    assert_eq!(&line[span], format!("\"{p}\"").as_bytes());
                }
            }
            let msg = &v["message"];
            let calls: Vec<&str> = msg["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_call")
                .filter_map(|b| b["id"].as_str())
                .collect();
            assert_eq!(
                k.calls.iter().map(|c| c.as_ref()).collect::<Vec<_>>(),
                calls
            );
            let results: Vec<&str> = msg["tool_call_id"].as_str().into_iter().collect();
            assert_eq!(
                k.results.iter().map(|c| c.as_ref()).collect::<Vec<_>>(),
                results
            );
        }
    }
    let k = AGENT
        .keys(br#"{"type":"message","id":"x","message":{"role":"tool_result"}}"#)
        .unwrap();
    assert_eq!(
        k.missing,
        [
            "timestamp",
            "parent_id",
            "message.tool_call_id",
            "message.content"
        ]
    );
    assert!(AGENT.keys(b"[1]").is_none());
    assert_eq!(AGENT.header_kind().map(|h| h.0), Some("session"));
}

#[test]
fn synthetic_result_closes_a_call() {
    assert!(AGENT.closes_tool_calls());
    let bytes = fixture("agent-jsonl", "tools.jsonl");
    let call = bytes.split(|&b| b == b'\n').nth(2).unwrap();
    let rec = AGENT
        .synthetic_result(&OpenCall {
            call_record: call,
            call_id: "call_abc",
            new_id: "55555555",
            parent_id: "22222222",
            message: "the tool never answered",
        })
        .unwrap();
    let k = AGENT.keys(&rec).unwrap();
    assert_eq!(k.results, ["call_abc"]);
    assert_eq!(k.parent, Parent::Id("22222222".into()));
    assert!(k.missing.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&rec).unwrap();
    assert_eq!(v["message"]["tool_name"], "bash");
    assert_eq!(v["message"]["is_error"], true);
    assert_eq!(
        v["message"]["content"][0]["text"],
        "the tool never answered"
    );
    // It reads back as a tool message in a session.
    let mut file = bytes.clone();
    file.extend_from_slice(&rec);
    file.push(b'\n');
    let s = read(&file);
    let last = s.nodes.last().unwrap().message().unwrap();
    assert!(matches!(
        &last.parts[0].content,
        Content::ToolResult { is_error: true, .. }
    ));
}
