//! What the real CLIs rejected when they resumed sessions sessiontool converted (found by the
//! interop suite, `tests/interop/`), pinned here by the exact shape of the output:
//!
//! 1. Claude results in Gemini-family files: `functionResponse` needs the call's `name`, no
//!    `is_error`, and an error as `response: {error}`.
//! 2. llxprt results: its `error` as `response: {error}`, `isComplete` left out (reported).
//! 3. Checkpoints: a `functionCall` without id gets the id of the response that answers it,
//!    so Qwen and pi pair them.
//! 4. Ids that are not UUIDs (simple-agent's `20251206_103000_q7w8e9`) become stable UUIDs in
//!    Qwen, Claude and Codex files (Qwen lists and resumes only UUID file names, Claude resumes
//!    only UUIDs), and the loss report names both ids.
//! 5. Qwen takes only UUIDs of versions 1 to 5: Codex's UUIDv7 is re-derived for it.
//! 6. Another model's thoughts are not written as Codex `reasoning` items.

use std::path::Path;

use serde_json::{Value, json};
use sessiontool::convert::{self, Conversion};
use sessiontool::diag::LossReport;
use sessiontool::formats::{self, Format, Input, WriteOptions};
use sessiontool::model::Content;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fmt(name: &str) -> &'static dyn Format {
    formats::by_name(name).unwrap_or_else(|| panic!("no format named {name}"))
}

fn options() -> WriteOptions {
    WriteOptions {
        now: Some("2026-01-01T00:00:00.000Z".into()),
        cwd: Some("/home/dana/projects/pomodoro".into()),
        ..Default::default()
    }
}

fn convert_bytes(rel: &str, bytes: &[u8], to: &str) -> Conversion {
    let input = Input {
        name: rel,
        path: None,
        bytes,
    };
    convert::convert(&input, None, fmt(to), &options())
        .unwrap_or_else(|e| panic!("{rel} -> {to}: {e}"))
}

fn convert_fixture(rel: &str, to: &str) -> Conversion {
    convert_bytes(rel, &fixture(rel), to)
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn loss<'a>(losses: &'a LossReport, code: &str) -> Option<&'a sessiontool::diag::Loss> {
    losses.losses.iter().find(|l| l.code == code)
}

/// Every `toolCalls` entry of a gemini-jsonl file, without its `timestamp`.
fn gemini_jsonl_calls(bytes: &[u8]) -> Vec<Value> {
    lines(bytes)
        .into_iter()
        .filter_map(|l| l.get("toolCalls").cloned())
        .flat_map(|c| c.as_array().unwrap().clone())
        .map(|mut c| {
            c.as_object_mut().unwrap().shift_remove("timestamp");
            c
        })
        .collect()
}

/// Every object under a `functionResponse` key anywhere in `v`.
fn function_responses(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if k == "functionResponse" {
                    out.push(x.clone());
                } else {
                    function_responses(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| function_responses(x, out)),
        _ => {}
    }
}

fn all_function_responses(to: &str, bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    if to.ends_with("jsonl") {
        for l in lines(bytes) {
            function_responses(&l, &mut out);
        }
    } else {
        function_responses(&serde_json::from_slice(bytes).unwrap(), &mut out);
    }
    out
}

// 1 ---------------------------------------------------------------------------------------------

#[test]
fn claude_results_in_gemini_jsonl_are_api_shaped() {
    let c = convert_fixture("claude-jsonl/tools.jsonl", "gemini-jsonl");
    assert_eq!(
        gemini_jsonl_calls(&c.bytes),
        [
            json!({
                "id": "toolu_01Run",
                "name": "Bash",
                "args": {"command": "npm test", "description": "Run the unit tests"},
                "result": [{"functionResponse": {
                    "id": "toolu_01Run",
                    "name": "Bash",
                    "response": {"output": "2 passed, 1 failed"}
                }}],
                "status": "success"
            }),
            json!({
                "id": "toolu_01Read",
                "name": "Read",
                "args": {"file_path": "/home/dana/projects/pomodoro/timer.test.js"},
                "result": [{"functionResponse": {
                    "id": "toolu_01Read",
                    "name": "Read",
                    "response": {"error": "<tool_use_error>File does not exist.</tool_use_error>"}
                }}],
                "status": "error"
            }),
        ]
    );
    // Claude's `is_error: false` is carried by the response's shape: not a loss.
    assert!(loss(&c.losses, "part-fields").is_none(), "{:?}", c.losses);
    // Claude's own token names stay out of Gemini's `tokens`, and are reported.
    for l in lines(&c.bytes) {
        if let Some(t) = l.get("tokens") {
            let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["input", "output", "cached", "total"], "{t}");
        }
    }
    assert!(loss(&c.losses, "usage-fields").is_some(), "{:?}", c.losses);
}

#[test]
fn claude_results_in_every_gemini_family_format_have_name_and_api_fields_only() {
    for to in ["gemini-json", "gemini-jsonl", "checkpoint", "qwen-jsonl"] {
        let c = convert_fixture("claude-jsonl/tools.jsonl", to);
        let responses = all_function_responses(to, &c.bytes);
        assert_eq!(responses.len(), 2, "{to}");
        for r in &responses {
            let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["id", "name", "response"], "{to}: {r}");
        }
        assert_eq!(responses[0]["name"], "Bash", "{to}");
        assert_eq!(responses[1]["name"], "Read", "{to}");
        assert_eq!(
            responses[1]["response"],
            json!({"error": "<tool_use_error>File does not exist.</tool_use_error>"}),
            "{to}"
        );
    }
}

#[test]
fn a_result_without_call_id_takes_the_name_of_the_call_before_it() {
    // Claude results always name their call; a hand-made pi result without `toolCallId`
    // (and without `toolName`) is answered by position.
    let pi = concat!(
        r#"{"type":"session","version":3,"id":"0199f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"list","timestamp":1}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}],"api":"x","provider":"x","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
        "\n",
        r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"other","content":[{"type":"text","text":"a b"}],"isError":false,"timestamp":3}}"#,
        "\n",
    );
    let session = fmt("pi-jsonl")
        .read(&Input {
            name: "pi",
            path: None,
            bytes: pi.as_bytes(),
        })
        .unwrap()
        .session;
    let result = session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .find_map(|p| match &p.content {
            Content::ToolResult { call_id, name, .. } => Some((call_id.clone(), name.clone())),
            _ => None,
        });
    // (The pi reader keeps toolName when the entry has one; this entry has none.)
    assert_eq!(result, Some((Some("other".into()), None)));
    let c = convert_bytes("pi", pi.as_bytes(), "checkpoint");
    let responses = all_function_responses("checkpoint", &c.bytes);
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0]["name"], "ls", "{}", responses[0]);
    assert!(loss(&c.losses, "tool-result-names").is_none());
}

// 2 ---------------------------------------------------------------------------------------------

#[test]
fn llxprt_errors_in_gemini_jsonl_are_response_errors() {
    let c = convert_fixture("llxprt-jsonl/tools.jsonl", "gemini-jsonl");
    let calls = gemini_jsonl_calls(&c.bytes);
    assert_eq!(
        calls[1],
        json!({
            "id": "toolu_02",
            "name": "read_file",
            "args": {"absolute_path": "/home/dana/projects/pomodoro/src/timer.ts"},
            "result": [{"functionResponse": {
                "id": "toolu_02",
                "name": "read_file",
                "response": {"error": "File not found"}
            }}],
            "status": "error"
        })
    );
    assert_eq!(
        calls[0]["result"],
        json!([{"functionResponse": {
            "id": "toolu_01",
            "name": "run_shell_command",
            "response": {"output": "1 failing"}
        }}])
    );
    // `isComplete` has no place in a part: reported, once. (`error` is carried.)
    assert_eq!(
        loss(&c.losses, "part-fields").map(|l| l.count),
        Some(1),
        "{:?}",
        c.losses
    );
}

#[test]
fn llxprt_errors_in_checkpoints_and_qwen_are_response_errors() {
    for to in ["checkpoint", "qwen-jsonl", "gemini-json"] {
        let c = convert_fixture("llxprt-jsonl/tools.jsonl", to);
        let responses = all_function_responses(to, &c.bytes);
        assert_eq!(
            responses,
            [
                json!({"id": "toolu_01", "name": "run_shell_command", "response": {"output": "1 failing"}}),
                json!({"id": "toolu_02", "name": "read_file", "response": {"error": "File not found"}}),
            ],
            "{to}"
        );
    }
}

#[test]
fn an_error_beside_a_result_keeps_both() {
    let llxprt = concat!(
        r#"{"v":1,"seq":1,"ts":"2026-03-01T09:00:00.000Z","type":"session_start","payload":{"sessionId":"5f0c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f","projectHash":"h","workspaceDirs":["/p"],"cwd":"/p","provider":"anthropic","model":"m","startTime":"2026-03-01T09:00:00.000Z"}}"#,
        "\n",
        r#"{"v":1,"seq":2,"ts":"2026-03-01T09:01:00.000Z","type":"content","payload":{"content":{"speaker":"human","blocks":[{"type":"text","text":"go"}]}}}"#,
        "\n",
        r#"{"v":1,"seq":3,"ts":"2026-03-01T09:01:01.000Z","type":"content","payload":{"content":{"speaker":"ai","blocks":[{"type":"tool_call","id":"t1","name":"run","parameters":{}}]}}}"#,
        "\n",
        r#"{"v":1,"seq":4,"ts":"2026-03-01T09:01:02.000Z","type":"content","payload":{"content":{"speaker":"tool","blocks":[{"type":"tool_response","callId":"t1","toolName":"run","result":"partial output","error":"exit 2"}]}}}"#,
        "\n",
    );
    let c = convert_bytes("llxprt", llxprt.as_bytes(), "checkpoint");
    assert_eq!(
        all_function_responses("checkpoint", &c.bytes),
        [
            json!({"id": "t1", "name": "run", "response": {"output": "partial output", "error": "exit 2"}})
        ]
    );
}

// 3 ---------------------------------------------------------------------------------------------

#[test]
fn checkpoint_calls_take_the_id_of_their_response() {
    let bytes = fixture("checkpoint/checkpoint-object.json");
    let session = fmt("checkpoint")
        .read(&Input {
            name: "c",
            path: None,
            bytes: &bytes,
        })
        .unwrap()
        .session;
    let ids: Vec<(&str, Option<&str>)> = session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::ToolCall { id, .. } => Some(("call", id.as_deref())),
            Content::ToolResult { call_id, .. } => Some(("result", call_id.as_deref())),
            _ => None,
        })
        .collect();
    const ID: &str = "read_file-1772019600120-c0ffee12ab34d";
    assert_eq!(ids, [("call", Some(ID)), ("result", Some(ID))]);
    // Written back, the call has no id again: the file is the same.
    let again = fmt("checkpoint").write(&session, &options()).unwrap();
    assert_eq!(
        String::from_utf8(again.bytes).unwrap(),
        String::from_utf8(bytes).unwrap()
    );

    // Qwen Code drops a call and a result that do not share an id.
    let c = convert_fixture("checkpoint/checkpoint-object.json", "qwen-jsonl");
    let records = lines(&c.bytes);
    let call = records
        .iter()
        .flat_map(|r| {
            r["message"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find_map(|p| p.get("functionCall").cloned())
        .unwrap();
    assert_eq!(
        call,
        json!({"id": ID, "name": "read_file", "args": {"absolute_path": "/home/user/project/src/main.rs"}})
    );
    let result = records.iter().find(|r| r["type"] == "tool_result").unwrap();
    assert_eq!(result["toolCallResult"]["callId"], ID);
    assert_eq!(result["message"]["parts"][0]["functionResponse"]["id"], ID);

    // pi answers a call with "No result provided" unless its result names it.
    let c = convert_fixture("checkpoint/checkpoint-object.json", "pi-jsonl");
    let entries = lines(&c.bytes);
    let call = entries
        .iter()
        .flat_map(|e| {
            e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["type"] == "toolCall")
        .unwrap();
    assert_eq!(call["id"], ID);
    let result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(result["message"]["toolCallId"], ID);
    assert_eq!(result["message"]["toolName"], "read_file");
}

#[test]
fn checkpoint_ids_are_paired_by_name_and_made_up_when_neither_has_one() {
    let doc = json!({"history": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "ls", "args": {}}},
            {"functionCall": {"name": "cat", "args": {"f": "a"}}},
            {"functionCall": {"id": "known", "name": "rm", "args": {}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "cat-1", "name": "cat", "response": {"output": "x"}}},
            {"functionResponse": {"name": "ls", "response": {"output": "a"}}},
            {"functionResponse": {"name": "rm", "response": {"output": "ok"}}}
        ]},
        {"role": "model", "parts": [{"text": "done"}]}
    ]});
    let bytes = serde_json::to_vec_pretty(&doc).unwrap();
    let session = fmt("checkpoint")
        .read(&Input {
            name: "c",
            path: None,
            bytes: &bytes,
        })
        .unwrap()
        .session;
    let ids: Vec<Option<&str>> = session
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::ToolCall { id, .. } => Some(id.as_deref()),
            Content::ToolResult { call_id, .. } => Some(call_id.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [
            Some("ls-2-0"),
            Some("cat-1"),
            Some("known"),
            Some("cat-1"),
            Some("ls-2-0"),
            Some("known"),
        ]
    );
    let again = fmt("checkpoint").write(&session, &options()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&again.bytes).unwrap(),
        doc,
        "written back as it was"
    );
}

// 4, 5 ------------------------------------------------------------------------------------------

fn is_uuid_v1_to_5(s: &str) -> bool {
    let re = regex::Regex::new(
        r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
    )
    .unwrap();
    re.is_match(s)
}

/// Every `sessionId` of a tree JSONL file (one per line that has one).
fn session_ids(bytes: &[u8]) -> Vec<String> {
    lines(bytes)
        .iter()
        .filter_map(|l| l["sessionId"].as_str().map(String::from))
        .collect()
}

#[test]
fn ids_that_are_not_uuids_become_stable_uuids() {
    const OLD: &str = "20251206_103000_q7w8e9";
    let mut seen = Vec::new();
    for to in ["qwen-jsonl", "claude-jsonl"] {
        let c = convert_fixture("simple-agent-json/tools.json", to);
        let ids = session_ids(&c.bytes);
        assert!(!ids.is_empty());
        assert!(ids.iter().all(|i| *i == ids[0]), "{to}: {ids:?}");
        assert!(is_uuid_v1_to_5(&ids[0]), "{to}: {}", ids[0]);
        let l = loss(&c.losses, "session-id").unwrap_or_else(|| panic!("{to}: {:?}", c.losses));
        assert_eq!(l.count, 1);
        assert!(
            l.message.contains(OLD) && l.message.contains(&ids[0]),
            "{to}: {}",
            l.message
        );
        // The same input gives the same id.
        let again = convert_fixture("simple-agent-json/tools.json", to);
        assert_eq!(session_ids(&again.bytes)[0], ids[0]);
        seen.push(ids[0].clone());
    }
    // Qwen and Claude files of one session carry one id.
    assert_eq!(seen[0], seen[1]);

    let c = convert_fixture("simple-agent-json/tools.json", "codex-jsonl");
    let meta = &lines(&c.bytes)[0];
    let id = meta["payload"]["id"].as_str().unwrap();
    assert!(is_uuid_v1_to_5(id), "{id}");
    let l = loss(&c.losses, "session-id").unwrap();
    assert!(
        l.message.contains(OLD) && l.message.contains(id),
        "{}",
        l.message
    );

    // pi finds sessions by file and id prefix, and makes its own ids UUIDv7: any id will do.
    let c = convert_fixture("simple-agent-json/tools.json", "pi-jsonl");
    assert_eq!(lines(&c.bytes)[0]["id"], OLD);
    assert!(loss(&c.losses, "session-id").is_none());
}

#[test]
fn qwen_gets_a_version_1_to_5_uuid_for_a_uuid_v7() {
    const V7: &str = "0199a3c4-5e6f-7a81-b2c3-d4e5f6a7b8c9";
    let c = convert_fixture("codex-jsonl/tools.jsonl", "qwen-jsonl");
    let ids = session_ids(&c.bytes);
    assert!(ids.iter().all(|i| *i == ids[0]));
    assert!(is_uuid_v1_to_5(&ids[0]), "{}", ids[0]);
    assert_ne!(ids[0], V7);
    let l = loss(&c.losses, "session-id").unwrap();
    assert!(
        l.message.contains(V7) && l.message.contains(&ids[0]),
        "{}",
        l.message
    );
    // Claude and Codex take any UUID: the id stays.
    for to in ["claude-jsonl", "codex-jsonl"] {
        let c = convert_fixture("codex-jsonl/tools.jsonl", to);
        assert!(loss(&c.losses, "session-id").is_none(), "{to}");
        assert!(String::from_utf8(c.bytes).unwrap().contains(V7), "{to}");
    }
    // A Qwen file written back keeps its own id, whatever it is.
    let c = convert_fixture("qwen-jsonl/tools.jsonl", "qwen-jsonl");
    assert_eq!(c.bytes, fixture("qwen-jsonl/tools.jsonl"));
}

#[test]
fn placed_sessions_are_named_by_the_new_id() {
    let home = tempfile::tempdir().unwrap();
    let home = sessiontool::store::home::Home::at(home.path());
    let bytes = fixture("simple-agent-json/tools.json");
    for to in ["qwen-jsonl", "claude-jsonl"] {
        let placed = sessiontool::store::place::place(
            &home,
            &Input {
                name: "tools.json",
                path: None,
                bytes: &bytes,
            },
            &sessiontool::store::place::Request {
                from: None,
                to: fmt(to),
                project: "/w/Interop Proj.v1",
                tag: None,
                options: &options(),
                force: false,
                dry_run: false,
            },
        )
        .unwrap_or_else(|e| panic!("{to}: {e}"));
        let name = placed.path.file_name().unwrap().to_str().unwrap();
        let id = name.strip_suffix(".jsonl").unwrap();
        assert!(is_uuid_v1_to_5(id), "{to}: {}", placed.path.display());
        let written = std::fs::read(&placed.path).unwrap();
        assert_eq!(session_ids(&written)[0], id, "{to}");
    }
}

// 6 ---------------------------------------------------------------------------------------------

#[test]
fn foreign_thoughts_are_not_codex_reasoning_items() {
    for rel in [
        "claude-jsonl/thinking.jsonl",
        "llxprt-jsonl/thinking.jsonl",
        "gemini-json/thoughts.json",
        "qwen-jsonl/tools.jsonl",
    ] {
        let c = convert_fixture(rel, "codex-jsonl");
        let items: Vec<Value> = lines(&c.bytes)
            .into_iter()
            .filter(|l| l["type"] == "response_item")
            .collect();
        assert!(
            items.iter().all(|i| i["payload"]["type"] != "reasoning"),
            "{rel}"
        );
        let l = loss(&c.losses, "thoughts").unwrap_or_else(|| panic!("{rel}: {:?}", c.losses));
        assert!(l.count >= 1);
    }
    // Codex's own reasoning is written back as it was.
    let c = convert_fixture("codex-jsonl/reasoning.jsonl", "codex-jsonl");
    assert_eq!(c.bytes, fixture("codex-jsonl/reasoning.jsonl"));
}
