//! Codex CLI rollout JSONL (`codex-jsonl`): the real sample and every hand-made fixture read
//! and write back byte for byte; conversions to and from Qwen and Gemini; fsck keys and the
//! synthetic result a repair inserts.
//!
//! The fixtures are hand-made in the layout Codex writes (compact JSON, one line per item, key
//! orders as its structs serialize them), plus lines it would not write (unknown types and
//! fields, keys out of order, escapes serde would not produce, non-objects).

mod common;

use std::path::Path;

use serde_json::Value;
use sessiontool::convert;
use sessiontool::formats::codex_jsonl::{CodexJsonl, NAME};
use sessiontool::formats::{self, Format, Input, OpenCall, Parent, ReadOutcome, WriteOptions};
use sessiontool::model::{Body, Content, Event, Role, Session};

static CODEX: &dyn Format = &CodexJsonl;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/samples/codex/pomodoro-timer.jsonl"
);
const FIXTURE_FILES: [&str; 5] = [
    "messages.jsonl",
    "reasoning.jsonl",
    "tools.jsonl",
    "compacted.jsonl",
    "unknown.jsonl",
];

fn load(format: &str, file: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(format).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(name: &str, bytes: &[u8]) -> ReadOutcome {
    CODEX
        .read(&Input {
            name,
            path: None,
            bytes,
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn assert_round_trip(name: &str, bytes: &[u8]) -> Session {
    let outcome = read(name, bytes);
    let written = CODEX
        .write(&outcome.session, &WriteOptions::default())
        .unwrap();
    if written.bytes != bytes {
        let got = String::from_utf8_lossy(&written.bytes);
        let want = String::from_utf8_lossy(bytes);
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{name}: line {} differs", i + 1);
        }
        panic!(
            "{name}: {} lines written, {} read",
            got.lines().count(),
            want.lines().count()
        );
    }
    assert!(written.losses.is_empty(), "{name}: {:?}", written.losses);
    outcome.session
}

fn sample() -> Option<Vec<u8>> {
    match std::fs::read(SAMPLE) {
        Ok(b) => Some(b),
        Err(e) => {
            common::prerequisite::present(false, &format!("the Codex sample {SAMPLE}: {e}"));
            None
        }
    }
}

fn count(session: &Session, f: impl Fn(&Content) -> bool) -> usize {
    session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter(|p| f(&p.content))
        .count()
}

#[test]
fn sample_round_trips_byte_for_byte() {
    let Some(bytes) = sample() else { return };
    let session = assert_round_trip("pomodoro-timer.jsonl", &bytes);
    let outcome = read("pomodoro-timer.jsonl", &bytes);
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    assert_eq!(
        session.meta.id.as_deref(),
        Some("019a085e-04c1-7f81-a09e-9555f6a1fb40")
    );
    assert_eq!(
        session.meta.cwd.as_deref(),
        Some("/Users/yoavfarhi/dev/pomodoro/codex")
    );
    assert_eq!(session.meta.tool_version.as_deref(), Some("0.47.0"));
    assert_eq!(session.meta.extra["originator"], "codex_cli_rs");
    // 153 lines: session_meta + 152 nodes.
    assert_eq!(session.nodes.len(), 152);
    let messages = session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| {
            m.parts
                .iter()
                .all(|p| matches!(p.content, Content::Text { .. }))
        })
        .count();
    assert_eq!(messages, 7);
    assert_eq!(
        count(&session, |c| matches!(c, Content::Thought { .. })),
        20
    );
    assert_eq!(
        count(&session, |c| matches!(c, Content::ToolCall { .. })),
        18
    );
    assert_eq!(
        count(&session, |c| matches!(c, Content::ToolResult { .. })),
        18
    );
    // Every result is named after its call.
    assert_eq!(
        count(&session, |c| matches!(
            c,
            Content::ToolResult { name: Some(_), .. }
        )),
        18
    );
    // encrypted_content is kept byte for byte.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let encrypted: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["payload"]["encrypted_content"].as_str().map(String::from))
        .collect();
    let ours: Vec<String> = session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::Thought { encrypted, .. } => encrypted.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(encrypted.len(), 20);
    assert_eq!(ours, encrypted);
    // The chain is linear, with ids the file does not have.
    for w in session.nodes.windows(2) {
        assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
    }
    assert_eq!(session.meta.head.as_deref(), Some("line-153"));
}

#[test]
fn sample_is_detected() {
    let Some(bytes) = sample() else { return };
    assert!(CODEX.detect(Some(Path::new(SAMPLE)), &bytes) >= 90);
    for other in formats::all().iter().filter(|f| f.name() != CODEX.name()) {
        assert!(
            other.detect(None, &bytes) < CODEX.detect(None, &bytes),
            "{} claims the Codex sample",
            other.name()
        );
    }
}

#[test]
fn codex_does_not_claim_other_formats() {
    for (format, file) in [
        ("qwen-jsonl", "tools.jsonl"),
        ("qwen-jsonl", "linear.jsonl"),
    ] {
        let path = Path::new(FIXTURES).join(format).join(file);
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        assert_eq!(CODEX.detect(Some(&path), &bytes), 0, "{}", path.display());
    }
    let claude = br#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/x","sessionId":"s","version":"1.0","type":"user","message":{"role":"user","content":"hi"},"uuid":"u","timestamp":"2025-01-01T00:00:00Z"}"#;
    assert_eq!(CODEX.detect(None, claude), 0);
    let pi =
        br#"{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00Z","cwd":"/x"}"#;
    assert_eq!(CODEX.detect(None, pi), 0);
}

#[test]
fn fixtures_round_trip_byte_for_byte() {
    for file in FIXTURE_FILES {
        let bytes = load(NAME, file);
        assert!(CODEX.detect(None, &bytes) >= 90, "{file} not detected");
        assert_round_trip(file, &bytes);
    }
}

#[test]
fn fixture_contents_read_as_expected() {
    let s = read("messages", &load(NAME, "messages.jsonl")).session;
    let roles: Vec<Option<Role>> = s
        .nodes
        .iter()
        .map(|n| n.message().map(|m| m.role))
        .collect();
    assert_eq!(roles[0], Some(Role::System));
    assert_eq!(roles[1], Some(Role::User));
    assert_eq!(s.meta.git_branch.as_deref(), Some("main"));
    let image = s.nodes[2].message().unwrap();
    assert!(matches!(&image.parts[1].content,
        Content::Media { mime_type: Some(m), data: Some(_), uri: None, .. } if m == "image/png"));
    assert!(
        matches!(&s.nodes[3].body, Body::Event(Event::Custom { kind, .. }) if kind == "event_msg")
    );

    let s = read("reasoning", &load(NAME, "reasoning.jsonl")).session;
    let thoughts: Vec<(&str, Option<&str>)> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::Thought {
                text, encrypted, ..
            } => Some((text.as_str(), encrypted.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(thoughts.len(), 4);
    assert_eq!(thoughts[0].0, "**Inspecting setInterval use**");
    assert!(thoughts[0].1.unwrap().starts_with("gAAAAABpZ0x1Q2hQ_"));
    assert_eq!(
        thoughts[1].0,
        "**Comparing clocks**\n\nDate.now() vs performance.now()"
    );

    let s = read("tools", &load(NAME, "tools.jsonl")).session;
    let calls: Vec<(&str, &Value)> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::ToolCall { name, args, .. } => Some((name.as_str(), args)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[0].1["command"][2], "npm test");
    assert_eq!(calls[2].0, "apply_patch");
    assert!(
        calls[2].1["input"]
            .as_str()
            .unwrap()
            .starts_with("*** Begin Patch")
    );
    let errors = count(&s, |c| {
        matches!(c, Content::ToolResult { is_error: true, .. })
    });
    assert_eq!(errors, 1);

    let s = read("compacted", &load(NAME, "compacted.jsonl")).session;
    let summaries: Vec<Option<&str>> = s
        .nodes
        .iter()
        .filter_map(|n| match &n.body {
            Body::Event(Event::Compaction { summary, .. }) => Some(summary.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(summaries.len(), 2);
    assert!(
        summaries[0]
            .unwrap()
            .starts_with("We built a Pomodoro timer")
    );

    let outcome = read("unknown", &load(NAME, "unknown.jsonl"));
    let codes: Vec<&str> = outcome.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"codex-unknown-type"), "{codes:?}");
    assert!(codes.contains(&"codex-not-a-line"), "{codes:?}");
}

#[test]
fn an_edited_line_is_rebuilt_not_copied() {
    let bytes = load(NAME, "unknown.jsonl");
    let mut s = read("unknown", &bytes).session;
    // The out-of-order agent_message line is kept as text; edit it and the text must go.
    let node = s
        .nodes
        .iter_mut()
        .find(|n| matches!(&n.body, Body::Event(Event::Custom { data, .. }) if data["message"] == "keys out of order"))
        .unwrap();
    if let Body::Event(Event::Custom { data, .. }) = &mut node.body {
        data["message"] = "edited".into();
    }
    let out = CODEX.write(&s, &WriteOptions::default()).unwrap().bytes;
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#"{"timestamp":"2026-01-12T08:00:06.000Z","type":"event_msg","payload":{"type":"agent_message","message":"edited"}}"#), "{text}");
    assert!(!text.contains("keys out of order"));
}

/// A rollout whose lines keep what the model has no field for: a `developer` message, a
/// custom tool call and its output, a function call's payload keys out of Codex's order; and
/// the `session_meta` line after the first of them.
const KEPT: &str = concat!(
    r#"{"timestamp":"2025-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}"#,
    "\n",
    r#"{"timestamp":"2025-01-01T00:00:00.000Z","type":"session_meta","payload":{"cwd":"/p","id":"0199a3c4-5e6f-7a81-b2c3-d4e5f6a7b8c9","timestamp":"2025-01-01T00:00:00.000Z","cli_version":"0.47.0"}}"#,
    "\n",
    r#"{"timestamp":"2025-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"}}"#,
    "\n",
    r#"{"timestamp":"2025-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"done"}}"#,
    "\n",
    r#"{"timestamp":"2025-01-01T00:00:04.000Z","type":"response_item","payload":{"name":"shell","type":"function_call","arguments":"{}","call_id":"c2"}}"#,
    "\n",
);

fn written_lines(session: &Session) -> Vec<String> {
    let out = CODEX
        .write(session, &WriteOptions::default())
        .unwrap()
        .bytes;
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_rebuilt_line_keeps_what_the_model_has_no_field_for() {
    let mut s = read("kept", KEPT.as_bytes()).session;
    assert_eq!(written_lines(&s).join("\n") + "\n", KEPT);
    // Each node changed: rebuilt, still a developer message, a custom call and its output, a
    // function call's keys in the order read; the metadata (moved) after the first line.
    for node in &mut s.nodes {
        let Body::Message(m) = &mut node.body else {
            panic!("a message")
        };
        match &mut m.parts[0].content {
            Content::Text { text } => text.push('!'),
            Content::ToolCall { id, .. } | Content::ToolResult { call_id: id, .. } => {
                *id = id.as_ref().map(|i| format!("{i}!"))
            }
            other => panic!("{other:?}"),
        }
    }
    s.meta.cwd = Some("/moved".into());
    let lines = written_lines(&s);
    let payload = |i: usize| -> String {
        let v: Value = serde_json::from_str(&lines[i]).unwrap();
        serde_json::to_string(&v["payload"]).unwrap()
    };
    assert_eq!(lines.len(), 5);
    assert!(payload(0).starts_with(r#"{"type":"message","role":"developer","#));
    assert_eq!(
        payload(1),
        r#"{"cwd":"/moved","id":"0199a3c4-5e6f-7a81-b2c3-d4e5f6a7b8c9","timestamp":"2025-01-01T00:00:00.000Z","cli_version":"0.47.0"}"#
    );
    assert!(
        payload(2)
            .starts_with(r#"{"type":"custom_tool_call","status":"completed","call_id":"c1!""#)
    );
    assert_eq!(
        payload(3),
        r#"{"type":"custom_tool_call_output","call_id":"c1!","output":"done"}"#
    );
    assert_eq!(
        payload(4),
        r#"{"name":"shell","type":"function_call","arguments":"{}","call_id":"c2!"}"#
    );
}

#[test]
fn a_node_that_became_another_item_keeps_nothing_of_its_line() {
    // What a line keeps (role, item type, key order) is for a node of the same kind: a
    // developer message made a user's is written as the user's, a custom call made an output
    // is a function call's output, a function call made a message is a whole message.
    let mut s = read("kept", KEPT.as_bytes()).session;
    s.nodes[0].message_mut().unwrap().role = Role::User;
    let call = s.nodes[1].message_mut().unwrap();
    call.role = Role::Tool;
    call.parts[0].content = Content::ToolResult {
        call_id: Some("c1".into()),
        name: None,
        output: "ok".into(),
        is_error: false,
        status: None,
        display: None,
        extra: Default::default(),
    };
    let shell = s.nodes[3].message_mut().unwrap();
    shell.role = Role::User;
    shell.parts[0].content = Content::Text { text: "hi".into() };
    let lines = written_lines(&s);
    let payload = |i: usize| -> Value {
        let v: Value = serde_json::from_str(&lines[i]).unwrap();
        v["payload"].clone()
    };
    assert_eq!(payload(0)["role"], "user", "{}", lines[0]);
    assert_eq!(payload(2)["type"], "function_call_output", "{}", lines[2]);
    assert_eq!(
        serde_json::to_string(&payload(4)).unwrap(),
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#
    );
}

#[test]
fn the_session_meta_line_stays_where_it_was_and_goes_first_without_the_node_before_it() {
    let mut s = read("kept", KEPT.as_bytes()).session;
    let meta_line = KEPT.lines().nth(1).unwrap();
    // After the line it followed, while that node is there (changed or not).
    s.nodes[0].message_mut().unwrap().parts[0] = sessiontool::model::Part::text("other");
    assert_eq!(written_lines(&s)[1], meta_line);
    // First (where Codex reads it) once that node is gone.
    s.nodes.remove(0);
    s.nodes[0].parent = None;
    let lines = written_lines(&s);
    assert_eq!(lines[0], meta_line);
    assert_eq!(lines[1..], KEPT.lines().skip(2).collect::<Vec<_>>()[..]);
}

fn convert_to(
    bytes: &[u8],
    from: &'static dyn Format,
    to: &'static dyn Format,
) -> convert::Conversion {
    let input = Input {
        name: "input",
        path: None,
        bytes,
    };
    convert::convert(&input, Some(from), to, &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{} -> {}: {e}", from.name(), to.name()))
}

#[test]
fn qwen_converts_to_codex() {
    let qwen = formats::by_name("qwen-jsonl").unwrap();
    let bytes = load("qwen-jsonl", "tools.jsonl");
    let source = qwen
        .read(&Input {
            name: "tools.jsonl",
            path: None,
            bytes: &bytes,
        })
        .unwrap()
        .session;
    let c = convert_to(&bytes, qwen, CODEX);
    let text = String::from_utf8(c.bytes.clone()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(
        lines[0]["payload"]["id"],
        source.meta.id.clone().unwrap().as_str()
    );
    assert_eq!(lines[0]["payload"]["originator"], "sessiontool");
    assert_eq!(lines[0]["payload"]["source"], "cli");
    assert!(lines[0]["payload"]["cli_version"].is_string());
    assert!(
        lines
            .iter()
            .all(|l| l["timestamp"].is_string() && l["payload"].is_object())
    );
    let user_events = lines
        .iter()
        .filter(|l| l["type"] == "event_msg" && l["payload"]["type"] == "user_message")
        .count();
    assert!(user_events >= 1);
    // Function call arguments are JSON strings.
    for l in &lines {
        if l["payload"]["type"] == "function_call" {
            let args = l["payload"]["arguments"].as_str().unwrap();
            serde_json::from_str::<Value>(args).unwrap();
        }
    }

    // Another model's thoughts are not written as reasoning items (the Responses API wants
    // an id and Codex's encrypted content on each): they are reported instead.
    assert!(lines.iter().all(|l| l["payload"]["type"] != "reasoning"));
    let thoughts = c.losses.losses.iter().find(|l| l.code == "thoughts");
    assert_eq!(thoughts.map(|l| l.count), Some(1), "{:?}", c.losses);

    // Read back: the same roles, texts, calls and results, in order; no thoughts.
    let back = read("converted", &c.bytes).session;
    assert!(read("converted", &c.bytes).diagnostics.is_empty());
    let flat = |s: &Session| -> Vec<(Role, String)> {
        s.nodes
            .iter()
            .filter_map(|n| n.message())
            .flat_map(|m| m.parts.iter().map(move |p| (m.role, p)))
            .filter_map(|(role, p)| match &p.content {
                Content::Text { text } => Some((role, format!("text:{text}"))),
                Content::ToolCall { id, name, args, .. } => Some((
                    role,
                    format!("call:{}:{name}:{args}", id.as_deref().unwrap_or("")),
                )),
                Content::ToolResult { call_id, .. } => Some((
                    Role::Tool,
                    format!("result:{}", call_id.as_deref().unwrap_or("")),
                )),
                Content::Thought { text, .. } => Some((role, format!("thought:{text}"))),
                _ => None,
            })
            .collect()
    };
    let no_thoughts = |v: Vec<(Role, String)>| -> Vec<(Role, String)> {
        v.into_iter()
            .filter(|(_, p)| !p.starts_with("thought:"))
            .collect()
    };
    assert_eq!(flat(&back), no_thoughts(flat(&source)));
    // And a converted session writes back as it was read.
    assert_round_trip("converted", &c.bytes);
}

#[test]
fn codex_converts_to_qwen_and_gemini() {
    let Some(bytes) = sample() else { return };
    let qwen = formats::by_name("qwen-jsonl").unwrap();
    let c = convert_to(&bytes, CODEX, qwen);
    let back = qwen
        .read(&Input {
            name: "q",
            path: None,
            bytes: &c.bytes,
        })
        .unwrap()
        .session;
    assert_eq!(count(&back, |c| matches!(c, Content::ToolCall { .. })), 18);
    assert_eq!(
        count(&back, |c| matches!(c, Content::ToolResult { .. })),
        18
    );
    let codes: Vec<&str> = c.losses.losses.iter().map(|l| l.code).collect();
    assert!(codes.contains(&"encrypted-thoughts"), "{codes:?}");
    assert!(codes.contains(&"events"), "{codes:?}");

    let gemini = formats::by_name("gemini-json").unwrap();
    let c = convert_to(&bytes, CODEX, gemini);
    let back = gemini
        .read(&Input {
            name: "g",
            path: None,
            bytes: &c.bytes,
        })
        .unwrap()
        .session;
    assert_eq!(count(&back, |c| matches!(c, Content::ToolCall { .. })), 18);
    assert!(!c.losses.is_empty());

    // Fixtures convert too.
    for file in FIXTURE_FILES {
        let bytes = load(NAME, file);
        convert_to(&bytes, CODEX, qwen);
        convert_to(&bytes, CODEX, gemini);
    }
}

#[test]
fn keys_on_every_line() {
    let mut files: Vec<(String, Vec<u8>)> = FIXTURE_FILES
        .iter()
        .map(|f| (f.to_string(), load(NAME, f)))
        .collect();
    if let Some(b) = sample() {
        files.push(("sample".into(), b));
    }
    for (name, bytes) in files {
        let (mut calls, mut results) = (0, 0);
        for (i, line) in bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .enumerate()
        {
            let v: Value = serde_json::from_slice(line).unwrap();
            let keys = CODEX.keys(line);
            if !v.is_object() {
                assert!(keys.is_none(), "{name}:{}", i + 1);
                continue;
            }
            let keys = keys.unwrap_or_else(|| panic!("{name}:{}", i + 1));
            assert_eq!(keys.parent, Parent::None);
            assert!(keys.id.is_none());
            assert_eq!(keys.kind.as_deref(), v["type"].as_str(), "{name}:{}", i + 1);
            if i == 0 {
                assert_eq!(keys.kind.as_deref(), Some("session_meta"));
            }
            let t = v["payload"]["type"].as_str().unwrap_or("");
            if v["type"] == "response_item"
                && t.ends_with("_call")
                && v["payload"]["call_id"].is_string()
            {
                assert_eq!(keys.calls, vec![v["payload"]["call_id"].as_str().unwrap()]);
                calls += 1;
            }
            if v["type"] == "response_item" && t.ends_with("_output") {
                assert_eq!(
                    keys.results,
                    vec![v["payload"]["call_id"].as_str().unwrap()]
                );
                results += 1;
            }
            let missing = ["timestamp", "type", "payload"]
                .into_iter()
                .filter(|k| v.get(k).is_none() || (*k != "payload" && !v[k].is_string()))
                .collect::<Vec<_>>();
            assert_eq!(keys.missing, missing, "{name}:{}", i + 1);
        }
        if name == "sample" {
            assert_eq!((calls, results), (18, 18));
        }
    }
}

#[test]
fn synthetic_result_answers_the_call() {
    let bytes = load(NAME, "tools.jsonl");
    let text = String::from_utf8(bytes).unwrap();
    for (line, id) in [(3, "call_T1a2b3c4d5e6f7g8h9i0j1k2"), (7, "call_V3")] {
        let call = text.lines().nth(line).unwrap();
        let out = CODEX
            .synthetic_result(&OpenCall {
                call_record: call.as_bytes(),
                call_id: id,
                new_id: "",
                parent_id: "",
                message: "[sessiontool] no result",
            })
            .unwrap();
        let keys = CODEX.keys(&out).unwrap();
        assert_eq!(keys.results, vec![id]);
        assert!(keys.missing.is_empty());
        let v: Value = serde_json::from_slice(&out).unwrap();
        let call: Value = serde_json::from_str(call).unwrap();
        assert_eq!(v["timestamp"], call["timestamp"]);
        assert_eq!(v["payload"]["output"], "[sessiontool] no result");
        let want = if line == 7 {
            "custom_tool_call_output"
        } else {
            "function_call_output"
        };
        assert_eq!(v["payload"]["type"], want);
        // It reads back as a result, and the file still round-trips.
        let mut file = text.clone();
        let at = file.match_indices('\n').nth(line).unwrap().0 + 1;
        file.insert_str(at, &format!("{}\n", String::from_utf8(out).unwrap()));
        let s = assert_round_trip("repaired", file.as_bytes());
        assert!(s.nodes.iter().any(
            |n| n.message().is_some_and(|m| matches!(&m.parts[0].content,
            Content::ToolResult { call_id: Some(c), name: Some(_), .. } if c == id))
        ));
    }
}

#[test]
fn a_line_serde_json_refuses_is_said_once_a_line_typed_as_a_kept_line_keeps_its_time_and_a_string_line_is_said()
 {
    let meta = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019435fa-9c55-7643-b5ab-c684d3a3ca39","timestamp":"2025-01-01T00:00:00Z","cwd":"/x","cli_version":"0.47.0"}}"#;
    // A lone surrogate escape: JSON.parse takes it, Codex's serde_json does not.
    let cut = r#"{"timestamp":"2025-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hi \ud83d"}}"#;
    // A line whose type is the name the reader gives the lines it keeps whole.
    let named =
        r#"{"timestamp":"2025-01-01T00:00:02Z","type":"codex-jsonl.record","payload":{"x":1}}"#;
    // A line that is JSON, but a string.
    let string = r#""just a string""#;
    let bytes = format!("{meta}\n{cut}\n{named}\n{string}\n").into_bytes();
    let outcome = read("r.jsonl", &bytes);
    let codes: Vec<(&str, Option<u64>)> = outcome
        .diagnostics
        .iter()
        .map(|d| (d.code, d.location.line))
        .collect();
    assert_eq!(
        codes,
        [
            ("codex-unparseable", Some(2)),
            ("codex-unknown-type", Some(3)),
            ("codex-not-a-line", Some(4)),
            ("codex-no-user-message", None)
        ],
        "{:#?}",
        outcome.diagnostics
    );
    // Both lines are written back whole, the second with its time and type.
    assert_round_trip("r.jsonl", &bytes);
}
