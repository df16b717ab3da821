//! Conversions among the three Gemini-family formats: gemini-json (legacy session JSON),
//! checkpoint (`/chat save`) and qwen-jsonl (Qwen Code tree JSONL), in all six directions.
//!
//! Every conversion is snapshotted (loss report, reader diagnostics, then the written bytes) and
//! the important facts are also asserted by value below the snapshots.

use std::path::Path;

use serde_json::{Value, json};
use sessiontool::convert::{self, Conversion};
use sessiontool::diag::LossReport;
use sessiontool::formats::{self, Format, Input, WriteOptions};
use sessiontool::model::{Content, Role, Session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

mod common;
use common::{CHECKPOINT, GEMINI_JSON};

// Qwen Code sessions, written here in the layout Qwen Code 0.15 writes (FORMATS.md 5): compact
// JSON, one record per line, base keys `uuid, parentUuid, sessionId, timestamp, type, cwd,
// version, gitBranch`, then the per-type keys (`model` before `message` on assistant records,
// `subtype` after `gitBranch` on system records).

/// A linear session: a question, a reply with a thought and a tool call, the tool result, the
/// answer, and a ui_telemetry system record in the chain.
const QWEN_LINEAR: &str = concat!(
    r#"{"uuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a01","parentUuid":null,"sessionId":"4e2b9d17-8c3a-4f6e-b1d0-7a5c3e9f2b10","timestamp":"2026-01-10T09:00:00.120Z","type":"user","cwd":"/home/user/project","version":"0.15.6","gitBranch":"main","message":{"role":"user","parts":[{"text":"How many lines does src/lib.rs have?"}]}}"#,
    "\n",
    r#"{"uuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a02","parentUuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a01","sessionId":"4e2b9d17-8c3a-4f6e-b1d0-7a5c3e9f2b10","timestamp":"2026-01-10T09:00:04.871Z","type":"assistant","cwd":"/home/user/project","version":"0.15.6","gitBranch":"main","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"The user wants a line count; wc -l is the direct way.","thought":true},{"text":"I'll count them."},{"functionCall":{"id":"call_8f2c61d0a4b94e7e","name":"run_shell_command","args":{"command":"wc -l src/lib.rs"}}}]},"usageMetadata":{"promptTokenCount":9120,"candidatesTokenCount":41,"thoughtsTokenCount":18,"totalTokenCount":9179,"cachedContentTokenCount":8704},"contextWindowSize":1000000}"#,
    "\n",
    r#"{"uuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a03","parentUuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a02","sessionId":"4e2b9d17-8c3a-4f6e-b1d0-7a5c3e9f2b10","timestamp":"2026-01-10T09:00:05.402Z","type":"tool_result","cwd":"/home/user/project","version":"0.15.6","gitBranch":"main","message":{"role":"user","parts":[{"functionResponse":{"id":"call_8f2c61d0a4b94e7e","name":"run_shell_command","response":{"output":"Command: wc -l src/lib.rs\nDirectory: (root)\nOutput: 14 src/lib.rs\nError: (none)\nExit Code: 0"}}}]},"toolCallResult":{"callId":"call_8f2c61d0a4b94e7e","status":"success","resultDisplay":"14 src/lib.rs"}}"#,
    "\n",
    r#"{"uuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a04","parentUuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a03","sessionId":"4e2b9d17-8c3a-4f6e-b1d0-7a5c3e9f2b10","timestamp":"2026-01-10T09:00:05.990Z","type":"system","cwd":"/home/user/project","version":"0.15.6","gitBranch":"main","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.tool_call","event.timestamp":"2026-01-10T09:00:05.990Z","function_name":"run_shell_command","duration_ms":531,"success":true}}}"#,
    "\n",
    r#"{"uuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a05","parentUuid":"6a0f1c52-3b7e-4d19-9a8e-0c2d5e7f1a04","sessionId":"4e2b9d17-8c3a-4f6e-b1d0-7a5c3e9f2b10","timestamp":"2026-01-10T09:00:08.315Z","type":"assistant","cwd":"/home/user/project","version":"0.15.6","gitBranch":"main","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"`src/lib.rs` has 14 lines."}]},"usageMetadata":{"promptTokenCount":9262,"candidatesTokenCount":9,"totalTokenCount":9271,"cachedContentTokenCount":9088},"contextWindowSize":1000000}"#,
    "\n",
);

/// Two branches: A(user) B(assistant) C(user) D(assistant), then `/rewind` to C: a rewind
/// system record chained to B, and a new C2(user) D2(assistant) after it. The last line (D2) is
/// the head. Off the head branch: C and D. Off the branch to D: the rewind record, C2, D2.
const QWEN_BRANCHED: &str = concat!(
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e01","parentUuid":null,"sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:20:00.000Z","type":"user","cwd":"/home/user/project","version":"0.15.6","message":{"role":"user","parts":[{"text":"Name a sorting algorithm."}]}}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e02","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e01","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:20:02.500Z","type":"assistant","cwd":"/home/user/project","version":"0.15.6","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"Merge sort."}]},"usageMetadata":{"promptTokenCount":800,"candidatesTokenCount":3,"totalTokenCount":803},"contextWindowSize":1000000}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e03","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e02","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:20:10.000Z","type":"user","cwd":"/home/user/project","version":"0.15.6","message":{"role":"user","parts":[{"text":"Is it stable?"}]}}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e04","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e03","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:20:12.000Z","type":"assistant","cwd":"/home/user/project","version":"0.15.6","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"Yes, merge sort is stable."}]},"usageMetadata":{"promptTokenCount":820,"candidatesTokenCount":7,"totalTokenCount":827},"contextWindowSize":1000000}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e05","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e02","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:21:00.000Z","type":"system","cwd":"/home/user/project","version":"0.15.6","subtype":"rewind","systemPayload":{"truncatedCount":2}}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e06","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e05","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:21:05.000Z","type":"user","cwd":"/home/user/project","version":"0.15.6","message":{"role":"user","parts":[{"text":"What is its worst-case complexity?"}]}}"#,
    "\n",
    r#"{"uuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e07","parentUuid":"0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e06","sessionId":"9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33","timestamp":"2026-01-11T14:21:07.000Z","type":"assistant","cwd":"/home/user/project","version":"0.15.6","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"O(n log n)."}]},"usageMetadata":{"promptTokenCount":818,"candidatesTokenCount":6,"totalTokenCount":824},"contextWindowSize":1000000}"#,
    "\n",
);
const BRANCH_D: &str = "0b7d5c1e-92a4-4f3b-8e61-3c9a2f4d7e04";

fn fmt(name: &str) -> &'static dyn Format {
    formats::by_name(name).unwrap_or_else(|| panic!("no format named {name}"))
}

fn options() -> WriteOptions {
    WriteOptions {
        now: Some("2026-01-01T00:00:00.000Z".into()),
        cwd: Some("/home/user/project".into()),
        ..Default::default()
    }
}

fn fixture(format: &str, file: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(format).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn convert_with(
    from: &str,
    to: &str,
    name: &str,
    bytes: &[u8],
    options: &WriteOptions,
) -> Conversion {
    let input = Input {
        name,
        path: None,
        bytes,
    };
    convert::convert(&input, Some(fmt(from)), fmt(to), options)
        .unwrap_or_else(|e| panic!("{name}: {from} -> {to}: {e}"))
}

fn read(format: &str, name: &str, bytes: &[u8]) -> Session {
    let input = Input {
        name,
        path: None,
        bytes,
    };
    fmt(format)
        .read(&input)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .session
}

fn losses_text(losses: &LossReport) -> String {
    if losses.is_empty() {
        return "(none)\n".into();
    }
    losses
        .losses
        .iter()
        .map(|l| format!("{} x{}: {}\n", l.code, l.count, l.message))
        .collect()
}

fn loss_count(losses: &LossReport, code: &str) -> usize {
    losses
        .losses
        .iter()
        .find(|l| l.code == code)
        .map_or(0, |l| l.count)
}

/// Converts, checks the output reads back in the target format without errors and that the
/// conversion is deterministic, and snapshots losses, diagnostics and output.
fn snapshot(from: &str, to: &str, name: &str, bytes: &[u8]) {
    let c = convert_with(from, to, name, bytes, &options());
    let again = convert_with(from, to, name, bytes, &options());
    assert!(
        c.bytes == again.bytes,
        "{name}: {from} -> {to} is not deterministic"
    );

    let out = String::from_utf8(c.bytes.clone()).expect("output is UTF-8");
    let back = fmt(to).read(&Input {
        name: "converted",
        path: None,
        bytes: &c.bytes,
    });
    let back = back.unwrap_or_else(|e| panic!("{name}: {from} -> {to}: output unreadable: {e}"));
    let errors: Vec<_> = back
        .diagnostics
        .iter()
        .filter(|d| d.severity == sessiontool::diag::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{name}: {from} -> {to}: {errors:?}");
    // (An empty session as JSONL is an empty file, which no format can claim.)
    assert!(
        c.bytes.is_empty() || formats::detect(None, &c.bytes).map(|f| f.name()) == Some(to),
        "{name}: {from} -> {to}: the output is not detected as {to}"
    );

    let diagnostics: String = c.diagnostics.iter().map(|d| format!("{d}\n")).collect();
    let stem = name
        .trim_end_matches(".jsonl")
        .trim_end_matches(".json")
        .replace(['%', '.'], "_");
    let snap_name = format!(
        "{}__{}__{}",
        from.replace('-', "_"),
        to.replace('-', "_"),
        stem
    );
    insta::assert_snapshot!(
        snap_name,
        format!(
            "losses:\n{}diagnostics:\n{}output:\n{out}",
            losses_text(&c.losses),
            if diagnostics.is_empty() {
                "(none)\n".into()
            } else {
                diagnostics
            }
        )
    );
}

// ------------------------------------------------------------------------------------------
// Snapshots: the six directions

#[test]
fn gemini_json_to_checkpoint() {
    for f in GEMINI_JSON {
        snapshot("gemini-json", "checkpoint", f, &fixture("gemini-json", f));
    }
}

#[test]
fn gemini_json_to_qwen_jsonl() {
    for f in GEMINI_JSON {
        snapshot("gemini-json", "qwen-jsonl", f, &fixture("gemini-json", f));
    }
}

#[test]
fn checkpoint_to_gemini_json() {
    for f in CHECKPOINT {
        snapshot("checkpoint", "gemini-json", f, &fixture("checkpoint", f));
    }
}

#[test]
fn checkpoint_to_qwen_jsonl() {
    for f in CHECKPOINT {
        snapshot("checkpoint", "qwen-jsonl", f, &fixture("checkpoint", f));
    }
}

#[test]
fn qwen_jsonl_to_gemini_json() {
    snapshot(
        "qwen-jsonl",
        "gemini-json",
        "linear.jsonl",
        QWEN_LINEAR.as_bytes(),
    );
    snapshot(
        "qwen-jsonl",
        "gemini-json",
        "branched.jsonl",
        QWEN_BRANCHED.as_bytes(),
    );
}

#[test]
fn qwen_jsonl_to_checkpoint() {
    snapshot(
        "qwen-jsonl",
        "checkpoint",
        "linear.jsonl",
        QWEN_LINEAR.as_bytes(),
    );
    snapshot(
        "qwen-jsonl",
        "checkpoint",
        "branched.jsonl",
        QWEN_BRANCHED.as_bytes(),
    );
}

// ------------------------------------------------------------------------------------------
// Seed 003: a legacy session as a checkpoint

fn parsed(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("output is JSON")
}

const W1: &str = "get_weather-1762930860412-3f9a0c1d2e7b8";
const W2: &str = "get_weather-1762931000388-b51c7d09e2a46";

/// The entries after the context turn, as seed 003 describes them (with its misplaced bracket
/// corrected, and the function response in its own `user` turn after the model turn, where the
/// Gemini API and the CLI's own resume put it).
fn assert_seed003_conversation(history: &[Value]) {
    assert_eq!(history.len(), 5, "{history:#?}");
    let roles: Vec<&str> = history
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user", "model", "user"]);
    for c in history {
        let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["role", "parts"],
            "a Content is exactly {{role, parts}}"
        );
    }
    assert_eq!(
        history[0]["parts"],
        json!([{"text": "Hello, Gemini! What's the weather like today?"}])
    );
    assert_eq!(
        history[2]["parts"],
        json!([{"text": "My location is New York."}])
    );

    let model_turn = |c: &Value, text: &str, id: &str| {
        let parts = c["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{parts:#?}");
        assert_eq!(parts[0], json!({"text": text}));
        let call = &parts[1]["functionCall"];
        assert_eq!(call["name"], "get_weather");
        assert_eq!(call["args"], json!({"location": "New York"}));
        if let Some(got) = call.get("id") {
            assert_eq!(got, id);
        }
        for k in call.as_object().unwrap().keys() {
            assert!(
                ["id", "name", "args"].contains(&k.as_str()),
                "functionCall has {k:?}: {call:#}"
            );
        }
        assert_eq!(parts[1].as_object().unwrap().len(), 1, "{:#?}", parts[1]);
    };
    model_turn(
        &history[1],
        "I need to use a tool to get the weather. What's your location?",
        W1,
    );
    model_turn(
        &history[3],
        "The weather in New York is sunny with a temperature of 25°C.",
        W2,
    );
    // The function response is its own user turn, after the model turn that called it.
    assert_eq!(
        history[4]["parts"],
        json!([{"functionResponse": {
            "id": W2,
            "name": "get_weather",
            "response": {"output": "{\"temperature\": 25, \"conditions\": \"sunny\"}"}
        }}])
    );
}

#[test]
fn seed003_to_checkpoint_has_the_seed_structure() {
    let c = convert_with(
        "gemini-json",
        "checkpoint",
        "seed003.json",
        &fixture("gemini-json", "seed003.json"),
        &options(),
    );
    let v = parsed(&c.bytes);
    let obj = v.as_object().expect("the v0.16+ object form by default");
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["history"],
        "no authType invented"
    );
    let history = v["history"].as_array().unwrap();
    // history[0] is the writer's context turn, which /chat resume hides.
    assert_eq!(history[0]["role"], "user");
    let ctx = history[0]["parts"][0]["text"].as_str().unwrap();
    assert!(ctx.starts_with("<session_context>"), "{ctx}");
    assert!(ctx.trim_end().ends_with("</session_context>"), "{ctx}");
    assert_eq!(history[0]["parts"].as_array().unwrap().len(), 1);
    assert_seed003_conversation(&history[1..]);
    // The output is 2-space pretty JSON without a final newline, like the CLI writes.
    assert!(
        c.bytes
            .starts_with(b"{\n  \"history\": [\n    {\n      \"role\"")
    );
    assert!(!c.bytes.ends_with(b"\n"));
}

#[test]
fn seed003_to_checkpoint_without_context() {
    let opts = WriteOptions {
        checkpoint_no_context: true,
        ..options()
    };
    let c = convert_with(
        "gemini-json",
        "checkpoint",
        "seed003.json",
        &fixture("gemini-json", "seed003.json"),
        &opts,
    );
    let v = parsed(&c.bytes);
    assert_seed003_conversation(v["history"].as_array().unwrap());
}

#[test]
fn seed003_to_checkpoint_array_form() {
    let opts = WriteOptions {
        checkpoint_array: true,
        ..options()
    };
    let c = convert_with(
        "gemini-json",
        "checkpoint",
        "seed003.json",
        &fixture("gemini-json", "seed003.json"),
        &opts,
    );
    let v = parsed(&c.bytes);
    let history = v.as_array().expect("the bare pre-v0.16 array");
    assert!(
        history[0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<session_context>")
    );
    assert_seed003_conversation(&history[1..]);
}

/// A checkpoint is the API history: `{history, authType?}` of `{role, parts}` Contents whose
/// parts are API Parts. Nothing from the session file (ToolCallRecord fields such as `status`,
/// `displayName` or `result`; message fields such as `thoughts` or `tokens`; session fields such
/// as `kind`) may end up inside it; the loss report already says those are not carried.
#[test]
fn gemini_json_to_checkpoint_writes_only_api_fields() {
    let mut problems = Vec::new();
    for f in GEMINI_JSON {
        let c = convert_with(
            "gemini-json",
            "checkpoint",
            f,
            &fixture("gemini-json", f),
            &options(),
        );
        let v = parsed(&c.bytes);
        for k in v.as_object().unwrap().keys() {
            if k != "history" && k != "authType" {
                problems.push(format!("{f}: top-level key {k:?}"));
            }
        }
        for (i, content) in v["history"].as_array().unwrap().iter().enumerate() {
            for k in content.as_object().unwrap().keys() {
                if k != "role" && k != "parts" {
                    problems.push(format!("{f}: history[{i}] has {k:?}"));
                }
            }
            for part in content["parts"].as_array().unwrap() {
                if let Some(call) = part.get("functionCall") {
                    for k in call.as_object().unwrap().keys() {
                        if !["id", "name", "args"].contains(&k.as_str()) {
                            problems.push(format!("{f}: history[{i}] functionCall has {k:?}"));
                        }
                    }
                }
                if let Some(resp) = part.get("functionResponse") {
                    for k in resp.as_object().unwrap().keys() {
                        if ![
                            "id",
                            "name",
                            "response",
                            "parts",
                            "willContinue",
                            "scheduling",
                        ]
                        .contains(&k.as_str())
                        {
                            problems.push(format!("{f}: history[{i}] functionResponse has {k:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A checkpoint's function calls usually have no `id` (the Gemini API does not send one; only
/// the CLI's functionResponse carries its call id). Written as a legacy session, each call must
/// still get its result in `toolCalls[].result` and an `id` (ToolCallRecord.id is required),
/// and no `user` message may hold bare function responses (legacy sessions never record those).
#[test]
fn checkpoint_to_gemini_json_folds_results_into_calls() {
    for f in ["checkpoint-object.json", "checkpoint-array.json"] {
        let c = convert_with(
            "checkpoint",
            "gemini-json",
            f,
            &fixture("checkpoint", f),
            &options(),
        );
        let v = parsed(&c.bytes);
        let messages = v["messages"].as_array().unwrap();
        let calls: Vec<&Value> = messages
            .iter()
            .filter_map(|m| m.get("toolCalls").and_then(Value::as_array))
            .flatten()
            .collect();
        assert_eq!(calls.len(), 1, "{f}");
        let call = calls[0];
        assert!(
            call["id"].is_string(),
            "{f}: a ToolCallRecord without id: {call:#}"
        );
        assert!(
            call["result"][0]["functionResponse"]["response"]["output"].is_string(),
            "{f}: the call has no result: {call:#}"
        );
        for m in messages {
            let bare = m["content"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()));
            assert!(!bare, "{f}: a message holds bare function responses: {m:#}");
        }
    }
}

// ------------------------------------------------------------------------------------------
// legacy -> qwen-jsonl -> legacy keeps the conversation

/// What the model sees, in a comparable form: role, then per part its kind and content.
/// Thoughts are compared as their text, a subject written as the bold heading the Gemini API
/// puts at the start of a thought; all thoughts of a message joined, white space normalised.
fn conversation(s: &Session) -> Vec<(Role, String, Vec<Value>)> {
    s.nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.role.is_conversation())
        .map(|m| {
            let mut thoughts = Vec::new();
            let mut parts = Vec::new();
            for p in &m.parts {
                match &p.content {
                    Content::Thought { text, subject, .. } => thoughts.push(match subject {
                        Some(s) if !s.is_empty() => format!("**{s}**\n\n{text}"),
                        _ => text.clone(),
                    }),
                    Content::Text { text } => parts.push(json!({"text": text})),
                    Content::ToolCall { id, name, args, .. } => {
                        parts.push(json!({"call": {"id": id, "name": name, "args": args}}))
                    }
                    Content::ToolResult {
                        call_id,
                        name,
                        output,
                        is_error,
                        ..
                    } => parts.push(json!({"result": {
                        "id": call_id, "name": name, "output": output, "error": is_error
                    }})),
                    Content::Media {
                        mime_type,
                        data,
                        uri,
                        ..
                    } => parts.push(json!({"media": [mime_type, data, uri]})),
                    other => parts.push(json!({"other": format!("{other:?}")})),
                }
            }
            // Writers differ in how they put a subject before its text ("**S**\n\nD" as the
            // Gemini API does, "**S** D" as Gemini CLI's resume does): compare the words.
            let thoughts = thoughts.join(" ");
            let thoughts = thoughts.split_whitespace().collect::<Vec<_>>().join(" ");
            (m.role, thoughts, parts)
        })
        .collect()
}

#[test]
fn gemini_json_through_qwen_jsonl_keeps_the_conversation() {
    for f in [
        "plain.json",
        "tools.json",
        "thoughts.json",
        "v028-parts.json",
        "notices.json",
        "unicode.json",
        "every-part.json",
        "seed003.json",
    ] {
        let original = fixture("gemini-json", f);
        let qwen = convert_with("gemini-json", "qwen-jsonl", f, &original, &options());
        let back = convert_with("qwen-jsonl", "gemini-json", f, &qwen.bytes, &options());
        let before = conversation(&read("gemini-json", f, &original));
        let after = conversation(&read("gemini-json", f, &back.bytes));
        assert_eq!(
            after,
            before,
            "{f}: the conversation changed on the way through qwen-jsonl:\n{}",
            String::from_utf8_lossy(&back.bytes)
        );
        assert!(!before.is_empty(), "{f}: nothing compared");
    }
}

/// Tool results survive as results of the right calls, with their error flag.
#[test]
fn tool_results_survive_qwen_round_trip() {
    let original = fixture("gemini-json", "tools.json");
    let qwen = convert_with(
        "gemini-json",
        "qwen-jsonl",
        "tools.json",
        &original,
        &options(),
    );
    let back = convert_with(
        "qwen-jsonl",
        "gemini-json",
        "tools.json",
        &qwen.bytes,
        &options(),
    );
    let v = parsed(&back.bytes);
    let calls = v["messages"][1]["toolCalls"]
        .as_array()
        .expect("tool calls on the reply");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["id"], "read_file-1759312481552-9c1e0f6b3a2d4");
    assert!(calls[0]["result"][0]["functionResponse"]["response"]["output"].is_string());
    assert_eq!(calls[1]["status"], "error");
    assert!(calls[1]["result"][0]["functionResponse"]["response"]["error"].is_string());
    // The results are folded back into the calls: no separate message holds them.
    let types: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["user", "gemini", "gemini", "user", "gemini", "user"]
    );
}

// ------------------------------------------------------------------------------------------
// Branches

fn texts_of(bytes: &[u8]) -> Vec<String> {
    read("gemini-json", "out.json", bytes)
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.text())
        .collect()
}

#[test]
fn branched_qwen_to_gemini_json_follows_the_head() {
    let c = convert_with(
        "qwen-jsonl",
        "gemini-json",
        "branched.jsonl",
        QWEN_BRANCHED.as_bytes(),
        &options(),
    );
    assert_eq!(
        texts_of(&c.bytes),
        [
            "Name a sorting algorithm.",
            "Merge sort.",
            "What is its worst-case complexity?",
            "O(n log n)."
        ]
    );
    assert_eq!(loss_count(&c.losses, "other-branches"), 2, "{:?}", c.losses);
    let v = parsed(&c.bytes);
    assert_eq!(v["sessionId"], "9d3f6a20-5e1b-4c8d-a7f2-1b4e8c0d6a33");
    assert_eq!(
        v["projectHash"], "9dad1e4e08b0b11cbcd860257e8bdfa6b8e5f01790e10a6a0b1f4870c13e686b",
        "sha256 of the session's cwd"
    );
}

#[test]
fn branched_qwen_to_gemini_json_follows_a_chosen_leaf() {
    let opts = WriteOptions {
        leaf: Some(BRANCH_D.into()),
        ..options()
    };
    let c = convert_with(
        "qwen-jsonl",
        "gemini-json",
        "branched.jsonl",
        QWEN_BRANCHED.as_bytes(),
        &opts,
    );
    assert_eq!(
        texts_of(&c.bytes),
        [
            "Name a sorting algorithm.",
            "Merge sort.",
            "Is it stable?",
            "Yes, merge sort is stable."
        ]
    );
    // The rewind record, C2 and D2.
    assert_eq!(loss_count(&c.losses, "other-branches"), 3, "{:?}", c.losses);
}

#[test]
fn branched_qwen_to_checkpoint_follows_the_head() {
    let c = convert_with(
        "qwen-jsonl",
        "checkpoint",
        "branched.jsonl",
        QWEN_BRANCHED.as_bytes(),
        &options(),
    );
    let v = parsed(&c.bytes);
    let texts: Vec<&str> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        &texts[1..],
        [
            "Name a sorting algorithm.",
            "Merge sort.",
            "What is its worst-case complexity?",
            "O(n log n)."
        ]
    );
    assert_eq!(loss_count(&c.losses, "other-branches"), 2, "{:?}", c.losses);
}

#[test]
fn unknown_leaf_is_an_error() {
    let opts = WriteOptions {
        leaf: Some("no-such-node".into()),
        ..options()
    };
    let input = Input {
        name: "branched.jsonl",
        path: None,
        bytes: QWEN_BRANCHED.as_bytes(),
    };
    let r = convert::convert(&input, Some(fmt("qwen-jsonl")), fmt("gemini-json"), &opts);
    assert!(r.is_err());
}

// ------------------------------------------------------------------------------------------
// Notices

#[test]
fn notices_to_checkpoint_are_reported() {
    let c = convert_with(
        "gemini-json",
        "checkpoint",
        "notices.json",
        &fixture("gemini-json", "notices.json"),
        &options(),
    );
    assert_eq!(loss_count(&c.losses, "notices"), 3, "{:?}", c.losses);
    let v = parsed(&c.bytes);
    let history = v["history"].as_array().unwrap();
    // context, the user question, the reply: no notice text reaches the model.
    assert_eq!(history.len(), 3);
    assert!(!String::from_utf8_lossy(&c.bytes).contains("fallback model"));
}

#[test]
fn checkpoint_to_gemini_json_uses_the_given_time() {
    let c = convert_with(
        "checkpoint",
        "gemini-json",
        "checkpoint-object.json",
        &fixture("checkpoint", "checkpoint-object.json"),
        &options(),
    );
    let v = parsed(&c.bytes);
    assert_eq!(v["startTime"], "2026-01-01T00:00:00.000Z");
    assert_eq!(v["lastUpdated"], "2026-01-01T00:00:00.000Z");
    assert_eq!(
        v["projectHash"], "9dad1e4e08b0b11cbcd860257e8bdfa6b8e5f01790e10a6a0b1f4870c13e686b",
        "sha256 of --cwd"
    );
    for m in v["messages"].as_array().unwrap() {
        assert_eq!(m["timestamp"], "2026-01-01T00:00:00.000Z");
    }
}

/// A checkpoint starts with the CLI's own context turn (two entries up to v0.7: the setup text
/// and the model's "Got it. Thanks for the context!"). Gemini CLI and Qwen Code add a fresh one
/// when they resume a session (Qwen never stores it; Gemini CLI's newer resume drops
/// `<session_context>` user messages), so written into a session it would be sent twice and
/// shown as the user's first prompt. It must not become a message of the session.
#[test]
fn checkpoint_context_turn_does_not_become_a_message() {
    for f in CHECKPOINT {
        for to in ["gemini-json", "qwen-jsonl"] {
            let c = convert_with("checkpoint", to, f, &fixture("checkpoint", f), &options());
            let s = read(to, "out", &c.bytes);
            let first = s
                .nodes
                .iter()
                .filter_map(|n| n.message())
                .map(|m| m.text())
                .next()
                .unwrap_or_default();
            for marker in [
                "<session_context>",
                "This is the Gemini CLI",
                "Okay, just setting up the context",
                "Got it. Thanks for the context!",
            ] {
                assert!(
                    !first.contains(marker),
                    "{f} -> {to}: the context turn became the first message: {first:?}"
                );
            }
        }
    }
}

/// Qwen Code builds `functionCall` as `{id, name, args}`; the session file's ToolCallRecord
/// fields (`status`, `timestamp`, `displayName`, `result`, ...) do not belong inside it.
#[test]
fn gemini_json_to_qwen_jsonl_function_calls_are_api_shaped() {
    let mut problems = Vec::new();
    for f in GEMINI_JSON {
        let c = convert_with(
            "gemini-json",
            "qwen-jsonl",
            f,
            &fixture("gemini-json", f),
            &options(),
        );
        for (n, line) in c.bytes.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let rec: Value = serde_json::from_slice(line).unwrap();
            let Some(parts) = rec["message"]["parts"].as_array() else {
                continue;
            };
            for part in parts {
                if let Some(call) = part.get("functionCall") {
                    for k in call.as_object().unwrap().keys() {
                        if !["id", "name", "args"].contains(&k.as_str()) {
                            problems.push(format!("{f}: line {}: functionCall has {k:?}", n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
