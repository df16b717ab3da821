use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{Input, ReadOutcome, WriteOptions};
use super::{NAME, QwenJsonl, RECORD};
use crate::diag::Severity;
use crate::formats::gemini_json::GeminiJson;
use crate::ids::is_uuid;
use crate::model::{Body, Content, Event, Node, Role, Session};

const GEMINI_JSON: &dyn crate::formats::Format = &GeminiJson;

const QWEN_JSONL: &dyn crate::formats::Format = &QwenJsonl;

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/qwen-jsonl")
        .join(name)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn read_bytes(name: &str, bytes: &[u8]) -> ReadOutcome {
    QWEN_JSONL
        .read(&Input {
            name,
            path: None,
            bytes,
        })
        .expect("reads")
}

fn read(name: &str) -> ReadOutcome {
    read_bytes(name, &fixture(name))
}

fn write(session: &Session) -> Vec<u8> {
    let w = QWEN_JSONL
        .write(session, &WriteOptions::default())
        .expect("writes");
    assert!(w.losses.is_empty(), "{:?}", w.losses);
    w.bytes
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn roles(s: &Session) -> Vec<&str> {
    s.nodes
        .iter()
        .map(|n| match &n.body {
            Body::Message(m) => m.role.as_str(),
            Body::Event(e) => e.kind(),
        })
        .collect()
}

fn ids(s: &Session, idx: &[usize]) -> Vec<String> {
    idx.iter().map(|&i| s.nodes[i].id.clone()).collect()
}

fn node<'a>(s: &'a Session, id_prefix: &str) -> &'a Node {
    s.nodes
        .iter()
        .find(|n| n.id.starts_with(id_prefix))
        .unwrap_or_else(|| panic!("no node {id_prefix}"))
}

const FIXTURES: [&str; 8] = [
    "plain.jsonl",
    "branches.jsonl",
    "tools.jsonl",
    "seed000.jsonl",
    "system.jsonl",
    "unknown-fields.jsonl",
    "unicode.jsonl",
    "empty.jsonl",
];

#[test]
fn plain() {
    let out = read("plain.jsonl");
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let s = &out.session;
    assert_eq!(roles(s), ["user", "assistant", "user", "assistant"]);
    for w in s.nodes.windows(2) {
        assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
    }
    assert_eq!(s.nodes[0].parent, None);
    let m = &s.meta;
    assert_eq!(
        m.id.as_deref(),
        Some("6b0b0776-e08e-426e-bff4-91f7fbcd1892")
    );
    assert_eq!(m.cwd.as_deref(), Some("/home/dana/projects/pomodoro"));
    assert_eq!(m.tool_version.as_deref(), Some("0.15.6"));
    assert_eq!(m.git_branch.as_deref(), Some("main"));
    assert_eq!(m.start_time.as_deref(), Some("2025-12-04T09:15:02.114Z"));
    assert_eq!(m.last_updated.as_deref(), Some("2025-12-04T09:16:51.530Z"));
    assert_eq!(m.head.as_deref(), Some(s.nodes[3].id.as_str()));
    assert_eq!(m.source_format.as_deref(), Some(NAME));
    let a = s.nodes[1].message().unwrap();
    assert_eq!(a.model.as_deref(), Some("qwen3-coder-plus"));
    let u = a.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.total, u.cached),
        (Some(11893), Some(64), Some(11957), Some(11264))
    );
    assert!(a.text().starts_with("`tick` runs once per second"));
    // Fields equal to the session's are not repeated per node; contextWindowSize is kept.
    assert_eq!(
        s.nodes[1].extra.keys().collect::<Vec<_>>(),
        ["contextWindowSize"]
    );
    assert!(s.nodes[0].extra.is_empty());
    assert!(
        (0..s.nodes.len()).all(|i| kept(s, i) == NOTHING),
        "a canonical layout keeps nothing"
    );
}

#[test]
fn branches() {
    let s = read("branches.jsonl").session;
    assert_eq!(
        roles(&s),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "rewind",
            "user",
            "assistant"
        ]
    );
    let t = s.tree();
    assert_eq!(ids(&s, &t.branch_points()), [s.nodes[1].id.clone()]);
    assert_eq!(
        ids(&s, &t.leaves()),
        [s.nodes[3].id.clone(), s.nodes[6].id.clone()]
    );
    assert_eq!(s.meta.head.as_deref(), Some(s.nodes[6].id.as_str()));
    let (path, left_out) = s.branch(None).unwrap();
    assert_eq!(left_out.total(), 2);
    assert_eq!(
        roles(&path),
        ["user", "assistant", "rewind", "user", "assistant"]
    );
    assert!(matches!(
        s.nodes[4].body,
        Body::Event(Event::Rewind { count: Some(2), .. })
    ));
}

#[test]
fn tools() {
    let s = read("tools.jsonl").session;
    assert_eq!(
        roles(&s),
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(s.meta.git_branch.as_deref(), Some("fix/timer-tests"));
    let a = s.nodes[1].message().unwrap();
    assert_eq!(
        a.parts.iter().map(|p| p.kind()).collect::<Vec<_>>(),
        ["thought", "text", "tool_call"]
    );
    assert_eq!(a.usage.as_ref().unwrap().thoughts, Some(31));
    let Content::ToolResult {
        call_id,
        status,
        display,
        is_error,
        ..
    } = &s.nodes[2].message().unwrap().parts[0].content
    else {
        panic!("a tool result")
    };
    assert_eq!(call_id.as_deref(), Some("call_8f2a1c4e9b7d4e0f"));
    assert_eq!(status.as_deref(), Some("success"));
    assert!(
        display
            .as_ref()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("1 failed")
    );
    assert!(!is_error);
    // What status and display leave of toolCallResult stays on the node, in order.
    assert_eq!(
        s.nodes[2].extra["toolCallResult"],
        json!({"callId": "call_8f2a1c4e9b7d4e0f"})
    );
    let Content::ToolResult {
        status,
        is_error,
        output,
        ..
    } = &s.nodes[4].message().unwrap().parts[0].content
    else {
        panic!("a tool result")
    };
    assert_eq!(status.as_deref(), Some("error"));
    assert!(is_error);
    assert!(
        output["error"]
            .as_str()
            .unwrap()
            .starts_with("File not found")
    );
    assert_eq!(
        s.nodes[4].extra["toolCallResult"],
        json!({"callId": "call_31d0b6a2c5e84f19", "error": {}, "errorType": "file_not_found"})
    );
}

#[test]
fn seed000_merges_split_records() {
    let out = read("seed000.jsonl");
    let s = &out.session;
    assert_eq!(roles(s), ["user", "assistant", "tool", "assistant"]);
    let merged = out
        .diagnostics
        .iter()
        .filter(|d| d.code == "qwen-merged-records")
        .collect::<Vec<_>>();
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].severity, Severity::Info);
    assert_eq!(merged[0].location.line, Some(2));
    assert!(
        !out.diagnostics
            .iter()
            .any(|d| d.severity >= Severity::Warning)
    );
    let n = &s.nodes[1];
    let a = n.message().unwrap();
    assert_eq!(
        a.parts.iter().map(|p| p.kind()).collect::<Vec<_>>(),
        ["thought", "text", "tool_call"]
    );
    assert_eq!(a.model.as_deref(), Some("qwen3-coder-plus"));
    let u = a.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.cached, u.thoughts, u.tool, u.total),
        (
            Some(8123),
            Some(42),
            Some(7936),
            Some(12),
            Some(0),
            Some(8177)
        )
    );
    assert_eq!(n.timestamp.as_deref(), Some("2025-11-25T08:55:18.011Z"));
    assert_eq!(n.extra["toolCallsMetadata"].as_array().unwrap().len(), 1);
    assert!(kept(s, 1).tokens);
    assert_eq!(s.meta.tool_version.as_deref(), Some("2.0.43"));
    // The tool result keeps its seed-era metadata; no toolCallResult, so no status.
    assert!(s.nodes[2].extra.contains_key("toolCallsMetadata"));
}

#[test]
fn system_records_are_events() {
    let s = read("system.jsonl").session;
    assert_eq!(
        roles(&s),
        [
            "user",
            "assistant",
            "compaction",
            "slash_command",
            "slash_command",
            "title",
            "user",
            "ui_telemetry",
            "assistant",
            "title"
        ]
    );
    let Body::Event(Event::Compaction {
        summary,
        tokens_before,
        data,
        ..
    }) = &s.nodes[2].body
    else {
        panic!("compaction")
    };
    assert!(summary.as_deref().unwrap().starts_with("<state_snapshot>"));
    assert_eq!(*tokens_before, Some(121953));
    assert_eq!(data["info"]["newTokenCount"], 8411);
    assert_eq!(s.meta.title.as_deref(), Some("Pomodoro: accurate timer"));
    // The /rename record has renameSession's own key order and no gitBranch: kept.
    let renamed = kept(&s, 9);
    assert!(renamed.keys && !renamed.text);
    assert!((0..9).all(|i| kept(&s, i) == NOTHING));
    // The system records are in the parent chain.
    assert_eq!(s.nodes[7].parent.as_deref(), Some(s.nodes[6].id.as_str()));
    let (path, left_out) = s.branch(None).unwrap();
    assert_eq!((path.nodes.len(), left_out.total()), (10, 0));
}

#[test]
fn unknown_fields_are_kept() {
    let out = read("unknown-fields.jsonl");
    let s = &out.session;
    assert_eq!(
        roles(s),
        ["user", "assistant", RECORD, "user", "agent_bootstrap"]
    );
    let u = &s.nodes[0];
    assert_eq!(
        u.extra.keys().collect::<Vec<_>>(),
        ["provenance", "promptId"]
    );
    assert_eq!(
        u.message().unwrap().extra["metadata"],
        json!({"source": "keyboard"})
    );
    let a = &s.nodes[1];
    assert_eq!(
        a.extra.keys().collect::<Vec<_>>(),
        ["contextWindowSize", "agentId", "agentName"]
    );
    assert_eq!(
        a.message().unwrap().parts[0].extra["partMetadata"]["citation"],
        "README.md:1-12"
    );
    assert!(
        a.message()
            .unwrap()
            .usage
            .as_ref()
            .unwrap()
            .extra
            .contains_key("promptTokensDetails")
    );
    let Body::Event(Event::Custom { data, .. }) = &s.nodes[2].body else {
        panic!("kept whole")
    };
    assert_eq!(data["type"], "file_snapshot");
    assert_eq!(s.nodes[2].parent.as_deref(), Some(a.id.as_str()));
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.code == "qwen-unknown-record")
    );
    let notification = &s.nodes[3];
    assert_eq!(notification.extra["subtype"], "notification");
    assert!(
        notification.extra["systemPayload"]["displayText"]
            .as_str()
            .unwrap()
            .starts_with('⏰')
    );
    assert_eq!(s.nodes[4].extra["isSidechain"], false);
}

#[test]
fn unicode() {
    let s = read("unicode.jsonl").session;
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/李明/项目/番茄钟"));
    assert_eq!(s.meta.git_branch.as_deref(), Some("功能/声音"));
    let first = s.nodes[0].message().unwrap().text();
    assert!(first.contains("计时器") && first.contains("🍅⏱️👍🏽"));
    let a = s.nodes[1].message().unwrap();
    assert!(
        a.text()
            .contains("\n\tTab and \"quotes\" and a back\\slash.")
    );
    assert!(a.text().contains("مرحبا بالعالم"));
    assert!(
        a.text()
            .contains("\u{2028}Line separator, BEL \u{7}, ESC \u{1b}[31m")
    );
    assert!(s.nodes[2].message().unwrap().text().contains("👨‍👩‍👧‍👦"));
}

#[test]
fn empty() {
    let out = read("empty.jsonl");
    assert!(out.session.nodes.is_empty());
    assert!(out.diagnostics.is_empty());
    assert!(write(&out.session).is_empty());
}

#[test]
fn round_trip_is_byte_identical() {
    for name in FIXTURES {
        if name == "seed000.jsonl" {
            continue;
        }
        let bytes = fixture(name);
        let session = read(name).session;
        let written = write(&session);
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
        assert!(
            (0..session.nodes.len()).all(|i| !kept(&session, i).text),
            "{name}: every fixture record is rebuilt, not copied"
        );
    }
}

/// `s` as a session made by hand: no node carries the bytes it was read from.
fn first_with_origins_dropped(s: &Session) -> Session {
    let mut s = s.clone();
    s.nodes.iter_mut().for_each(|n| n.origin = None);
    s
}

#[test]
fn seed000_round_trip_gives_the_same_session() {
    let first = read("seed000.jsonl").session;
    let written = write(&first);
    // The assistant message split over three records is written as those records (Qwen Code
    // merges them again): nothing either held apart is lost.
    assert_eq!(lines(&written).len(), 6);
    assert_eq!(written, fixture("seed000.jsonl"));
    // Changed, it is one record made of them.
    let mut changed = first.clone();
    let split = changed
        .nodes
        .iter()
        .position(|n| n.origin.as_ref().is_some_and(|o| o.bytes.contains(&b'\n')))
        .unwrap();
    changed.nodes[split].message_mut().unwrap().model = Some("qwen3".into());
    assert_eq!(
        lines(&write(&changed)).len(),
        4,
        "the changed message is one record"
    );
    // The changed session read again is the same, but for the bytes the merged message was
    // read from.
    let rebuilt = write(&first_with_origins_dropped(&first));
    let again = read_bytes("written.jsonl", &rebuilt);
    let bare = first_with_origins_dropped;
    assert_eq!(bare(&again.session), bare(&first));
    assert!(again.diagnostics.is_empty());
    // A rebuilt record is written in the seed's spelling.
    assert!(lines(&write(&changed))[1].get("tokens").is_some());
}

#[test]
fn damaged_and_odd_records_are_kept_in_place() {
    let plain = fixture("plain.jsonl");
    let text = std::str::from_utf8(&plain).unwrap();
    let mut l: Vec<&str> = text.lines().collect();
    l.insert(1, "[1, 2]");
    l.insert(3, r#"{"note":"no uuid here"}"#);
    let mut input = l.join("\n");
    input.push('\n');
    input.push_str(r#"{"uuid":"torn"#);
    let out = read_bytes("odd.jsonl", input.as_bytes());
    let s = &out.session;
    assert_eq!(s.nodes.len(), 6);
    assert_eq!(s.nodes[1].id, "line-2");
    assert_eq!(s.nodes[3].id, "line-4");
    let codes: Vec<_> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["qwen-not-a-record", "qwen-not-a-record", "torn-tail"]
    );
    // The head is the last record with a uuid; the torn tail is gone.
    assert_eq!(s.meta.head.as_deref(), Some(s.nodes[5].id.as_str()));
    let written = write(s);
    let expected = {
        let mut e = l.join("\n");
        e.push('\n');
        e
    };
    assert_eq!(String::from_utf8(written).unwrap(), expected);
}

#[test]
fn merge_conflicts_and_missing_parents_are_reported() {
    let input = concat!(
        r#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2025-01-01T00:00:00.000Z","type":"user","cwd":"/p","version":"0.15.6","message":{"role":"user","parts":[{"text":"hi"}]}}"#,
        "\n",
        r#"{"uuid":"b","parentUuid":"gone","sessionId":"s","timestamp":"2025-01-01T00:00:01.000Z","type":"assistant","cwd":"/p","version":"0.15.6","model":"m","message":{"role":"model","parts":[{"text":"one"}]}}"#,
        "\n",
        r#"{"uuid":"b","parentUuid":"a","sessionId":"s","timestamp":"2025-01-01T00:00:02.000Z","type":"assistant","cwd":"/p","version":"0.15.6","model":"m2","message":{"role":"model","parts":[{"text":"two"}]}}"#,
        "\n",
    );
    let out = read_bytes("conflict.jsonl", input.as_bytes());
    let codes: Vec<_> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "qwen-merged-records",
            "qwen-merge-conflict",
            "qwen-missing-parent"
        ]
    );
    let b = out.session.nodes[1].message().unwrap();
    assert_eq!(b.text(), "one\n\ntwo");
    assert_eq!(b.model.as_deref(), Some("m"));
    assert_eq!(out.session.nodes[1].parent.as_deref(), Some("gone"));
    assert_eq!(
        out.session.nodes[1].timestamp.as_deref(),
        Some("2025-01-01T00:00:02.000Z")
    );
}

#[test]
fn edited_nodes_are_rebuilt_not_copied() {
    // A record whose part order cannot be rebuilt is kept as text, but only while unchanged.
    let input = concat!(
        r#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"t","type":"assistant","cwd":"/p","version":"v","message":{"role":"model","parts":[{"functionCall":{"name":"ls","args":{},"id":"c1"}}]}}"#,
        "\n"
    );
    let mut s = read_bytes("x.jsonl", input.as_bytes()).session;
    assert!(kept(&s, 0).text);
    assert_eq!(write(&s), input.as_bytes());
    s.nodes[0].message_mut().unwrap().model = Some("qwen3".into());
    let out = lines(&write(&s));
    assert_eq!(out[0]["model"], "qwen3");
    assert_eq!(out[0]["message"]["parts"][0]["functionCall"]["id"], "c1");
}

fn gemini_session() -> Session {
    let doc = json!({
        "sessionId": "0b23371a-ce2e-4b1c-81a0-44af5d94d9ce",
        "projectHash": "2d33ff9193c39ffa4b8352af23f3b106d1ceaff756665e12408cb64657965d22",
        "startTime": "2025-10-21T20:04:20.819Z",
        "lastUpdated": "2025-10-21T20:05:49.642Z",
        "messages": [
            {"id": "m-user-1", "timestamp": "2025-10-21T20:04:20.819Z", "type": "user",
             "content": "List the files and read two of them."},
            {"id": "m-gemini-1", "timestamp": "2025-10-21T20:04:25.000Z", "type": "gemini",
             "content": "",
             "thoughts": [{"subject": "Planning", "description": "List first.", "timestamp": "2025-10-21T20:04:24.000Z"}],
             "tokens": {"input": 100, "output": 20, "cached": 0, "thoughts": 5, "tool": 0, "total": 125},
             "model": "gemini-2.5-pro",
             "toolCalls": [
                {"id": "read-1", "name": "read_file", "args": {"path": "a.txt"},
                 "result": [{"functionResponse": {"id": "read-1", "name": "read_file", "response": {"output": "A"}}}],
                 "status": "success", "timestamp": "2025-10-21T20:04:26.000Z", "resultDisplay": "a.txt"},
                {"id": "read-2", "name": "read_file", "args": {"path": "b.txt"},
                 "result": [{"functionResponse": {"id": "read-2", "name": "read_file", "response": {"error": "missing"}}}],
                 "status": "error", "timestamp": "2025-10-21T20:04:26.500Z"}
             ]},
            {"id": "m-info-1", "timestamp": "2025-10-21T20:04:27.000Z", "type": "info", "content": "Tip: use /stats"},
            {"id": "m-gemini-2", "timestamp": "2025-10-21T20:04:30.000Z", "type": "gemini",
             "content": "a.txt says A; b.txt is missing.",
             "tokens": {"input": 140, "output": 10, "cached": 100, "thoughts": 0, "tool": 0, "total": 150},
             "model": "gemini-2.5-pro"}
        ]
    });
    let bytes = serde_json::to_vec_pretty(&doc).unwrap();
    GEMINI_JSON
        .read(&Input {
            name: "session.json",
            path: None,
            bytes: &bytes,
        })
        .expect("gemini reads")
        .session
}

#[test]
fn writes_a_gemini_session() {
    let session = gemini_session();
    assert_ne!(session.meta.source_format.as_deref(), Some(NAME));
    let options = WriteOptions {
        cwd: Some("/home/dana/projects/pomodoro".into()),
        ..WriteOptions::default()
    };
    let written = QWEN_JSONL.write(&session, &options).unwrap();
    let codes: Vec<_> = written.losses.losses.iter().map(|l| l.code).collect();
    assert!(codes.contains(&"notices"), "{codes:?}");
    assert!(!codes.contains(&"cwd-unknown"));
    let recs = lines(&written.bytes);
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "user",
            "assistant",
            "tool_result",
            "tool_result",
            "assistant"
        ]
    );
    // UUIDs everywhere, one parent chain (the info notice is skipped, its child reattached).
    let mut prev = Value::Null;
    for r in &recs {
        assert!(is_uuid(r["uuid"].as_str().unwrap()), "{r}");
        assert_eq!(r["parentUuid"], prev);
        assert_eq!(r["sessionId"], "0b23371a-ce2e-4b1c-81a0-44af5d94d9ce");
        assert_eq!(r["cwd"], "/home/dana/projects/pomodoro");
        assert_eq!(r["version"], "unknown");
        prev = r["uuid"].clone();
    }
    // Base keys in the tool's order.
    let keys: Vec<&String> = recs[1].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "uuid",
            "parentUuid",
            "sessionId",
            "timestamp",
            "type",
            "cwd",
            "version",
            "model",
            "message",
            "usageMetadata"
        ]
    );
    let a = &recs[1];
    assert_eq!(a["message"]["role"], "model");
    let parts = a["message"]["parts"].as_array().unwrap();
    assert_eq!(parts[0]["thought"], true);
    let thought = parts[0]["text"].as_str().unwrap();
    assert!(
        thought.contains("Planning") && thought.ends_with("List first."),
        "{thought}"
    );
    assert_eq!(parts[0].as_object().unwrap().len(), 2);
    // API content only: the legacy record's call fields are reported, not sent to the model.
    assert_eq!(
        parts[1]["functionCall"],
        json!({"id": "read-1", "name": "read_file", "args": {"path": "a.txt"}})
    );
    assert!(codes.contains(&"part-fields"), "{codes:?}");
    let again = QWEN_JSONL.write(&session, &options).unwrap();
    assert_eq!(again.bytes, written.bytes, "derived uuids are stable");
    assert_eq!(
        a["usageMetadata"],
        json!({"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 125, "cachedContentTokenCount": 0, "thoughtsTokenCount": 5, "toolUsePromptTokenCount": 0})
    );
    // One tool_result record per call, with its functionResponse and toolCallResult.
    let (t1, t2) = (&recs[2], &recs[3]);
    assert_eq!(t1["message"]["role"], "user");
    assert_eq!(
        t1["message"]["parts"][0]["functionResponse"]["id"],
        "read-1"
    );
    assert_eq!(
        t1["toolCallResult"],
        json!({"callId": "read-1", "status": "success", "resultDisplay": "a.txt"})
    );
    assert_eq!(
        t2["message"]["parts"][0]["functionResponse"]["response"]["error"],
        "missing"
    );
    assert_eq!(
        t2["toolCallResult"],
        json!({"callId": "read-2", "status": "error"})
    );
    // Reading it back as Qwen gives the same conversation.
    let back = read_bytes("converted.jsonl", &written.bytes).session;
    assert_eq!(
        roles(&back),
        ["user", "assistant", "tool", "tool", "assistant"]
    );
    assert_eq!(back.meta.head.as_deref(), recs[4]["uuid"].as_str());
    assert_eq!(
        back.nodes[4].message().unwrap().text(),
        "a.txt says A; b.txt is missing."
    );
}

#[test]
fn foreign_sessions_report_what_has_no_place() {
    let mut session = gemini_session();
    session.meta.title = Some("Reading files".into());
    let written = QWEN_JSONL
        .write(&session, &WriteOptions::default())
        .unwrap();
    let codes: Vec<_> = written.losses.losses.iter().map(|l| l.code).collect();
    assert!(codes.contains(&"cwd-unknown"), "{codes:?}");
    let recs = lines(&written.bytes);
    let last = recs.last().unwrap();
    assert_eq!(last["subtype"], "custom_title");
    assert_eq!(last["systemPayload"]["customTitle"], "Reading files");
    assert_eq!(last["parentUuid"], recs[recs.len() - 2]["uuid"]);
    let back = read_bytes("converted.jsonl", &written.bytes).session;
    assert_eq!(back.meta.title.as_deref(), Some("Reading files"));
}

#[test]
fn foreign_events_become_system_records() {
    let mut session = read("plain.jsonl").session;
    session.meta.source_format = Some("other".into());
    let mk = |id: &str, parent: &str, body: Body| Node {
        id: id.into(),
        parent: Some(parent.into()),
        timestamp: None,
        body,
        extra: Default::default(),
        origin: None,
    };
    let last = session.nodes[3].id.clone();
    let first = session.nodes[2].id.clone();
    session.nodes.push(mk(
        "c1",
        &last,
        Body::Event(Event::Compaction {
            summary: Some("We discussed the timer.".into()),
            tokens_before: Some(5000),
            first_kept: Some(first),
            data: Value::Null,
        }),
    ));
    session.nodes.push(mk(
        "t1",
        "c1",
        Body::Event(Event::Title {
            title: Some("Timer".into()),
            data: Value::Null,
        }),
    ));
    session.meta.head = None;
    let written = QWEN_JSONL
        .write(&session, &WriteOptions::default())
        .unwrap();
    // contextWindowSize is this format's field, but the session claims to be from another.
    let codes: Vec<_> = written.losses.losses.iter().map(|l| l.code).collect();
    assert_eq!(codes, ["extra-fields"]);
    let recs = lines(&written.bytes);
    let c = &recs[4];
    assert_eq!(c["subtype"], "chat_compression");
    assert_eq!(c["parentUuid"], recs[3]["uuid"]);
    let history = c["systemPayload"]["compressedHistory"].as_array().unwrap();
    assert_eq!(
        history.len(),
        4,
        "summary, acknowledgement, two kept messages"
    );
    assert_eq!(history[2]["role"], "user");
    assert_eq!(history[3]["role"], "model");
    assert_eq!(c["systemPayload"]["info"]["originalTokenCount"], 5000);
    assert!(is_uuid(c["uuid"].as_str().unwrap()));
    assert_eq!(
        recs[5]["systemPayload"],
        json!({"customTitle": "Timer", "titleSource": "manual"})
    );
    assert_eq!(recs[5]["parentUuid"], c["uuid"]);
}

#[test]
fn head_is_written_last() {
    let mut s = read("branches.jsonl").session;
    let d = s.nodes[3].id.clone();
    s.meta.head = Some(d.clone());
    let recs = lines(&write(&s));
    assert_eq!(recs.last().unwrap()["uuid"], d.as_str());
    assert_eq!(recs.len(), 7);
}

#[test]
fn detects_its_own_files() {
    for name in FIXTURES {
        let score = QWEN_JSONL.detect(Some(&fixture_path(name)), &fixture(name));
        let expected = if name == "empty.jsonl" { 0 } else { 90 };
        assert_eq!(score, expected, "{name}");
    }
    let text = fixture("plain.jsonl");
    let cut = &text[..200];
    assert_eq!(QWEN_JSONL.detect(None, cut), 80, "a first line cut short");
    assert_eq!(
        QWEN_JSONL.detect(
            Some(Path::new("x.jsonl")),
            b"garbage\n{\"parentUuid\":null}\n"
        ),
        40
    );
    assert_eq!(
        QWEN_JSONL.detect(
            Some(Path::new("x.json")),
            b"garbage\n{\"parentUuid\":null}\n"
        ),
        0
    );
}

fn shared(rel: &str) -> Option<PathBuf> {
    crate::prerequisite::shared(rel)
}

#[test]
fn claude_samples_are_not_qwen() {
    let Some(dir) = shared("claude") else { return };
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            QWEN_JSONL.detect(Some(&path), &bytes),
            0,
            "{}",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn gemini_sample_is_not_qwen() {
    let Some(path) = shared("gemini/pomodoro-timer.json") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(QWEN_JSONL.detect(Some(&path), &bytes), 0);
}

#[test]
fn keys_are_borrowed_and_lenient() {
    use crate::formats::Parent;
    use std::borrow::Cow;
    let k = QWEN_JSONL
        .keys(br#"{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","message":{"parts":[]}}"#)
        .unwrap();
    assert!(matches!(k.id, Some(Cow::Borrowed("u1"))));
    assert_eq!(k.parent, Parent::Root);
    assert_eq!(k.session_id.as_deref(), Some("s"));
    assert_eq!(k.kind.as_deref(), Some("user"));
    assert!(k.missing.is_empty());
    let record = br#"{"uuid":7,"parentUuid":"p\u00e9","type":{"x":[1]}}"#;
    let k = QWEN_JSONL.keys(record).unwrap();
    assert_eq!((&k.id, &k.kind), (&None, &None));
    assert_eq!(k.parent, Parent::Id("pé".into()));
    // The span covers the parent value exactly, quotes included, for a repair to splice.
    assert_eq!(&record[k.parent_span.unwrap()], br#""p\u00e9""#);
    assert_eq!(k.missing, ["uuid", "sessionId", "type"]);
    assert!(QWEN_JSONL.keys(b"[1]").is_none());
    assert!(QWEN_JSONL.keys(b"{").is_none());
}

#[test]
fn keys_name_tool_calls_and_results() {
    let call = br#"{"uuid":"a","parentUuid":"u","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"text":"x"},{"functionCall":{"id":"c1","name":"f","args":{}}},{"functionCall":{"id":"c2","name":"g","args":{}}}]}}"#;
    let k = QWEN_JSONL.keys(call).unwrap();
    assert_eq!(k.calls, ["c1", "c2"]);
    assert!(k.results.is_empty());
    let result = br#"{"uuid":"b","parentUuid":"a","sessionId":"s","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"f","response":{}}}]},"toolCallResult":{"callId":"c1","status":"success"}}"#;
    let k = QWEN_JSONL.keys(result).unwrap();
    assert_eq!(k.results, ["c1"]);
}

#[test]
fn synthetic_result_answers_the_call_in_qwen_shape() {
    use crate::formats::OpenCall;
    let call = br#"{"uuid":"a","parentUuid":"u","sessionId":"s","timestamp":"t","type":"assistant","cwd":"/p","version":"0.15.6","gitBranch":"main","model":"m","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"run","args":{}}}]}}"#;
    let bytes = QWEN_JSONL
        .synthetic_result(&OpenCall {
            call_record: call,
            call_id: "c1",
            new_id: "n1",
            parent_id: "a",
            message: "no result",
        })
        .unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.starts_with(r#"{"uuid":"n1","parentUuid":"a","sessionId":"s","timestamp":"t","type":"tool_result","cwd":"/p","version":"0.15.6","gitBranch":"main","message":"#), "{text}");
    let k = QWEN_JSONL.keys(&bytes).unwrap();
    assert_eq!(k.results, ["c1"]);
    assert!(k.missing.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["message"]["parts"][0]["functionResponse"]["name"], "run");
    assert_eq!(v["toolCallResult"]["status"], "error");
}

#[test]
fn tool_roles_match_the_record_type() {
    let s = read("tools.jsonl").session;
    let tools: Vec<_> = s
        .nodes
        .iter()
        .filter(|n| n.message().is_some_and(|m| m.role == Role::Tool))
        .collect();
    assert_eq!(tools.len(), 2);
    assert_eq!(
        node(&s, "597bc5a8").parent.as_deref(),
        Some(s.nodes[1].id.as_str())
    );
}

#[test]
fn odd_records_round_trip() {
    let lines = [
        // Keys in an unusual order, no cwd/version, parentUuid absent.
        r#"{"type":"user","uuid":"u1","message":{"parts":[{"text":"hi"}],"role":"user"},"sessionId":"s","timestamp":"2025-01-01T00:00:00.000Z"}"#,
        // Numbers where strings belong, a string message, a non-array parts.
        r#"{"uuid":"u2","parentUuid":7,"sessionId":"s","timestamp":12,"type":"user","cwd":"/p","version":"v","message":"plain text"}"#,
        r#"{"uuid":"u3","parentUuid":"u2","sessionId":"s","timestamp":"t3","type":"assistant","cwd":"/p","version":"v","message":{"role":"user","parts":"oops"}}"#,
        // Both usage spellings; usage with floats and nested detail; toolCallResult not an object.
        r#"{"uuid":"u4","parentUuid":"u3","sessionId":"other","timestamp":"t4","type":"assistant","cwd":"/q","version":"v2","gitBranch":"dev","model":"m","message":{"role":"model","parts":[]},"usageMetadata":{"totalTokenCount":3,"promptTokenCount":1.5,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1}]},"tokens":{"input":1},"toolCallResult":"weird"}"#,
        // A tool result whose toolCallResult names no part, with keys out of order.
        r#"{"uuid":"u5","parentUuid":"u4","sessionId":"s","timestamp":"t5","type":"tool_result","cwd":"/p","version":"v","message":{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f","response":{"output":"x"}}},{"functionResponse":{"id":"b","name":"g","response":{"output":"y"}}}]},"toolCallResult":{"errorType":"e","status":"success","callId":"b","resultDisplay":{"fileDiff":"--- a"}}}"#,
        // System records: no payload, no subtype, payload null.
        r#"{"uuid":"u6","parentUuid":"u5","sessionId":"s","timestamp":"t6","type":"system","cwd":"/p","version":"v","subtype":"at_command"}"#,
        r#"{"uuid":"u7","parentUuid":"u6","sessionId":"s","timestamp":"t7","type":"system","cwd":"/p","version":"v","systemPayload":{}}"#,
        r#"{"uuid":"u8","parentUuid":"u7","sessionId":"s","timestamp":"t8","type":"system","cwd":"/p","version":"v","subtype":"custom_title","systemPayload":null}"#,
        // A subtype named as the reader names a record it keeps whole (once written back as
        // its payload alone).
        r#"{"uuid":"u8b","parentUuid":"u8","sessionId":"s","timestamp":"t8","type":"system","cwd":"/p","version":"v","subtype":"qwen-jsonl.record","systemPayload":{"x":1}}"#,
        // A uuid that is not a string, a bare value, escapes JavaScript would not write.
        r#"{"uuid":5,"type":"user"}"#,
        r#""just a string""#,
        r#"{"uuid":"u9","parentUuid":"u8","sessionId":"s","timestamp":"t9","type":"user","cwd":"/p","version":"v","message":{"role":"user","parts":[{"text":"caf\u00e9 1.0e3"}]},"n":1.0e3}"#,
    ];
    let mut input = lines.join("\n");
    input.push('\n');
    let out = read_bytes("odd.jsonl", input.as_bytes());
    assert_eq!(out.session.nodes.len(), lines.len());
    let written = write(&out.session);
    assert_eq!(String::from_utf8(written.clone()).unwrap(), input);
    let again = read_bytes("again.jsonl", &written);
    assert_eq!(again.session, out.session);
    // Values still land in the model where they can.
    let s = &out.session;
    let Content::ToolResult {
        status, display, ..
    } = &s.nodes[4].message().unwrap().parts[1].content
    else {
        panic!("result")
    };
    assert_eq!(status.as_deref(), Some("success"));
    assert_eq!(display.as_ref().unwrap()["fileDiff"], "--- a");
    assert_eq!(s.nodes[3].extra["sessionId"], "other");
    assert_eq!(
        s.nodes[3].message().unwrap().usage.as_ref().unwrap().total,
        Some(3)
    );
}

#[test]
fn a_tail_without_uuid_is_reported() {
    let mut input = fixture("plain.jsonl");
    input.extend_from_slice(b"{\"type\":\"summary\",\"summary\":\"x\"}\n");
    let out = read_bytes("tail.jsonl", &input);
    let d = out.diagnostics.last().unwrap();
    assert_eq!(d.code, "qwen-tail-without-uuid");
    assert_eq!(d.location.line, Some(5));
    assert_eq!(
        out.session.meta.head.as_deref(),
        Some(out.session.nodes[3].id.as_str())
    );
    assert_eq!(write(&out.session), input);
}

/// What node `i` of a session read from this format keeps from its text for the writer.
#[derive(Debug, PartialEq)]
struct KeptFacts {
    tokens: bool,
    keys: bool,
    text: bool,
}

const NOTHING: KeptFacts = KeptFacts {
    tokens: false,
    keys: false,
    text: false,
};

fn kept(s: &Session, i: usize) -> KeptFacts {
    let as_read = super::origin::AsRead::of(&s.meta);
    let k = super::origin::Kept::of(&s.nodes[i], as_read.as_ref());
    KeptFacts {
        tokens: k.tokens,
        keys: k.keys != super::origin::Layout::default(),
        text: k.raw.is_some(),
    }
}
