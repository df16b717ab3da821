//! The `claude-jsonl` format against real Claude Code files and hand-made fixtures: reading,
//! byte-exact writing, conversions to and from other formats, and the fsck keys.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use sessiontool::convert::convert;
use sessiontool::formats::claude_jsonl::{ClaudeJsonl, ENTRY};
use sessiontool::formats::gemini_json::GeminiJson;
use sessiontool::formats::qwen_jsonl::QwenJsonl;
use sessiontool::formats::{Format, Input, OpenCall, Parent, WriteOptions};
use sessiontool::model::{Body, Content, Event, Role, Session};

const QWEN_JSONL: &dyn sessiontool::formats::Format = &QwenJsonl;

const CLAUDE_JSONL: &dyn sessiontool::formats::Format = &ClaudeJsonl;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples/claude");

/// The real files, or `None` (after saying so) where they are not available.
fn samples() -> Option<Vec<PathBuf>> {
    let dir = Path::new(SAMPLES);
    if !common::prerequisite::present(dir.is_dir(), &format!("{SAMPLES} is absent")) {
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no samples in {SAMPLES}");
    Some(files)
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-jsonl");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn read_with(format: &dyn Format, name: &str, bytes: &[u8]) -> Session {
    format
        .read(&Input {
            name,
            path: None,
            bytes,
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .session
}

fn read(name: &str, bytes: &[u8]) -> Session {
    read_with(&ClaudeJsonl, name, bytes)
}

/// How many lines the writer gives back differently from the nodes alone (without the lines
/// they were read from, their origins).
fn count_not_rebuilt(s: &Session, bytes: &[u8]) -> usize {
    let mut bare = s.clone();
    bare.nodes.iter_mut().for_each(|n| n.origin = None);
    let w = CLAUDE_JSONL.write(&bare, &WriteOptions::default()).unwrap();
    w.bytes
        .split(|&b| b == b'\n')
        .zip(bytes.split(|&b| b == b'\n'))
        .filter(|(a, b)| a != b)
        .count()
}

/// Tool calls and results as the file holds them: (tool_use ids, tool_result ids).
fn pairs_in_file(bytes: &[u8]) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some(Value::Array(blocks)) = v.get("message").and_then(|m| m.get("content")) else {
            continue;
        };
        if !matches!(
            v.get("type").and_then(Value::as_str),
            Some("user" | "assistant")
        ) {
            continue;
        }
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => calls.extend(b["id"].as_str().map(String::from)),
                Some("tool_result") => results.extend(b["tool_use_id"].as_str().map(String::from)),
                _ => {}
            }
        }
    }
    (calls, results)
}

fn pairs_in_session(s: &Session) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for m in s.nodes.iter().filter_map(|n| n.message()) {
        for p in &m.parts {
            match &p.content {
                Content::ToolCall { id: Some(id), .. } => calls.push(id.clone()),
                Content::ToolResult {
                    call_id: Some(id), ..
                } => results.push(id.clone()),
                _ => {}
            }
        }
    }
    (calls, results)
}

fn records_in(bytes: &[u8]) -> usize {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count()
}

#[test]
fn samples_round_trip_byte_for_byte() {
    let Some(files) = samples() else { return };
    for path in files {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let s = read(&name, &bytes);
        assert_eq!(
            s.nodes.len(),
            records_in(&bytes),
            "{name}: one node per line"
        );
        assert_eq!(pairs_in_session(&s), pairs_in_file(&bytes), "{name}");
        let w = CLAUDE_JSONL.write(&s, &WriteOptions::default()).unwrap();
        assert!(w.losses.is_empty(), "{name}: {:?}", w.losses);
        assert!(w.bytes == bytes, "{name}: written back differently");
        println!(
            "{name}: {} nodes, {} not rebuilt byte for byte from the nodes alone",
            s.nodes.len(),
            count_not_rebuilt(&s, &bytes)
        );
    }
}

#[test]
fn fixtures_round_trip_byte_for_byte() {
    let files = fixtures();
    assert!(files.len() >= 7, "fixtures missing");
    for path in files {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let s = read(&name, &bytes);
        assert_eq!(s.nodes.len(), records_in(&bytes), "{name}");
        assert_eq!(pairs_in_session(&s), pairs_in_file(&bytes), "{name}");
        let w = CLAUDE_JSONL.write(&s, &WriteOptions::default()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&w.bytes),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
    }
}

#[test]
fn fixtures_read_sensibly() {
    let s = read("tools", &fixture("claude-jsonl/tools.jsonl"));
    let roles: Vec<Role> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.role)
        .collect();
    use Role::*;
    assert_eq!(
        roles,
        [User, Assistant, Assistant, Tool, Assistant, Tool, Assistant]
    );
    assert_eq!(
        s.meta.id.as_deref(),
        Some("5f0c2d1e-8a47-4b6e-9c3d-2e1f0a9b8c7d")
    );
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dana/projects/pomodoro"));
    assert_eq!(s.meta.git_branch.as_deref(), Some("main"));
    assert_eq!(s.meta.tool_version.as_deref(), Some("2.0.24"));
    assert_eq!(
        s.meta.head.as_deref(),
        Some("00000000-0000-4000-8000-000000000007")
    );
    let errors: Vec<bool> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            Content::ToolResult { is_error, .. } => Some(*is_error),
            _ => None,
        })
        .collect();
    assert_eq!(errors, [false, true]);
    let a = s.nodes[1].message().unwrap();
    assert_eq!(a.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    // One reply split over entries has its usage once, on its last entry; the model's `input`
    // holds the cache reads (Claude's `input_tokens` does not).
    let reply: Vec<_> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.extra.get("id").and_then(|v| v.as_str()) == Some("msg_01Tools"))
        .collect();
    assert!(reply.len() > 1);
    assert!(reply[..reply.len() - 1].iter().all(|m| m.usage.is_none()));
    let u = reply.last().unwrap().usage.as_ref().unwrap();
    assert_eq!(u.cached, Some(3400));
    assert_eq!(u.input, Some(u.cached.unwrap() + 12));

    let s = read("thinking", &fixture("claude-jsonl/thinking.jsonl"));
    let p = &s.nodes[1].message().unwrap().parts[0];
    assert!(matches!(&p.content, Content::Thought { text, .. } if text.contains("pause button")));
    assert_eq!(
        p.signature.as_deref(),
        Some("EqQBCkYIBxgCKkDx+0/aB1c2d3e4f5g6h7i8j9k0lMnOpQrStUvWxYz==")
    );

    // The head skips sidechain entries; summaries and snapshots stay in place as events.
    let s = read("sidechain", &fixture("claude-jsonl/sidechain.jsonl"));
    assert_eq!(
        s.meta.head.as_deref(),
        Some("00000000-0000-4000-8000-000000000004")
    );
    let s = read("summary", &fixture("claude-jsonl/summary-snapshot.jsonl"));
    assert!(
        matches!(&s.nodes[0].body, Body::Event(Event::Title { title: Some(t), .. }) if t == "Pomodoro timer with pause")
    );
    assert!(matches!(&s.nodes[1].body, Body::Event(Event::Custom { kind, .. }) if kind == ENTRY));
    assert_eq!(s.meta.title.as_deref(), Some("pause button"));
    let s = read("unknown", &fixture("claude-jsonl/unknown.jsonl"));
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
        [
            "claude-jsonl.entry",
            "user",
            "assistant",
            ENTRY,
            ENTRY,
            ENTRY
        ]
    );
    assert_eq!(
        s.nodes[4].parent.as_deref(),
        Some("00000000-0000-4000-8000-000000000003")
    );
}

#[test]
fn detection_tells_claude_from_qwen() {
    let qwen_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qwen-jsonl");
    for e in std::fs::read_dir(qwen_dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(CLAUDE_JSONL.detect(Some(&p), &bytes), 0, "{}", p.display());
    }
    let mut claude = fixtures();
    claude.extend(samples().unwrap_or_default());
    for p in claude {
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            CLAUDE_JSONL.detect(Some(&p), &bytes) >= 60,
            "{}",
            p.display()
        );
        assert_eq!(
            QWEN_JSONL.detect(Some(&p), &bytes),
            0,
            "qwen claims {}",
            p.display()
        );
    }
    // A file that starts with a torn stub and a snapshot is still found.
    let mut damaged = b"{\"parentUu\n".to_vec();
    damaged.extend(fixture("claude-jsonl/summary-snapshot.jsonl"));
    assert!(CLAUDE_JSONL.detect(None, &damaged) >= 90);
}

/// Roles, texts, tool calls and results of the messages, in order.
fn conversation(s: &Session) -> Vec<String> {
    let mut out = Vec::new();
    for m in s.nodes.iter().filter_map(|n| n.message()) {
        for p in &m.parts {
            let line = match &p.content {
                Content::Text { text } => format!("{} text {text}", m.role.as_str()),
                Content::ToolCall { id, name, args, .. } => {
                    format!("call {id:?} {name} {args}")
                }
                Content::ToolResult { call_id, .. } => format!("result {call_id:?}"),
                _ => continue,
            };
            out.push(line);
        }
    }
    out
}

#[test]
fn qwen_to_claude_keeps_the_conversation() {
    for name in [
        "tools.jsonl",
        "plain.jsonl",
        "branches.jsonl",
        "unicode.jsonl",
    ] {
        let bytes = fixture(&format!("qwen-jsonl/{name}"));
        let input = Input {
            name,
            path: None,
            bytes: &bytes,
        };
        let c = convert(
            &input,
            Some(&QwenJsonl),
            &ClaudeJsonl,
            &WriteOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let qwen = read_with(&QwenJsonl, name, &bytes);
        let back = read(name, &c.bytes);
        assert_eq!(conversation(&back), conversation(&qwen), "{name}");
        assert!(CLAUDE_JSONL.detect(None, &c.bytes) >= 90, "{name}");
        // Every line is a chain entry the CLI resumes.
        for line in c.bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: Value = serde_json::from_slice(line).unwrap();
            if v["type"] == "summary" {
                continue;
            }
            for key in [
                "uuid",
                "sessionId",
                "cwd",
                "version",
                "timestamp",
                "userType",
            ] {
                assert!(v[key].is_string(), "{name}: {key} in {v}");
            }
            assert_eq!(v["isSidechain"], false);
            let k = CLAUDE_JSONL.keys(line).unwrap();
            assert!(k.missing.is_empty(), "{name}: {:?}", k.missing);
        }
        // Every call is answered.
        let (calls, results) = pairs_in_file(&c.bytes);
        for call in &calls {
            assert!(results.contains(call), "{name}: {call} unanswered");
        }
        if name == "tools.jsonl" {
            assert!(!calls.is_empty());
            assert!(
                c.losses.losses.iter().any(|l| l.code == "thoughts"),
                "{:?}",
                c.losses
            );
        }
    }
}

#[test]
fn claude_converts_to_qwen_and_gemini() {
    let mut files = fixtures();
    files.extend(samples().unwrap_or_default());
    for p in files {
        let name = p.display().to_string();
        let bytes = std::fs::read(&p).unwrap();
        let input = Input {
            name: &name,
            path: None,
            bytes: &bytes,
        };
        for to in [&QwenJsonl as &dyn Format, &GeminiJson] {
            let to: &'static dyn Format = if to.name() == "qwen-jsonl" {
                &QwenJsonl
            } else {
                &GeminiJson
            };
            let c = convert(&input, Some(&ClaudeJsonl), to, &WriteOptions::default())
                .unwrap_or_else(|e| panic!("{name} -> {}: {e}", to.name()));
            assert!(!c.bytes.is_empty());
            // Claude-only fields (isSidechain, userType, requestId, ...) are reported.
            assert!(!c.losses.is_empty(), "{name} -> {}", to.name());
            let back = read_with(to, &name, &c.bytes);
            let texts = |s: &Session| {
                s.nodes
                    .iter()
                    .filter_map(|n| n.message())
                    .filter(|m| m.role == Role::User)
                    .map(|m| m.text())
                    .filter(|t| !t.is_empty())
                    .count()
            };
            assert!(texts(&back) > 0, "{name} -> {}", to.name());
        }
    }
}

#[test]
fn keys_on_every_line() {
    let mut files = fixtures();
    files.extend(samples().unwrap_or_default());
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let name = p.display().to_string();
        let (mut calls, mut results) = (Vec::new(), Vec::new());
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: Value = serde_json::from_slice(line).unwrap();
            let Some(k) = CLAUDE_JSONL.keys(line) else {
                assert!(!v.is_object(), "{name}: {v}");
                continue;
            };
            assert_eq!(k.kind.as_deref(), v["type"].as_str());
            let Some(uuid) = v["uuid"].as_str() else {
                assert!(k.id.is_none() && k.parent == Parent::None && k.missing.is_empty());
                continue;
            };
            assert_eq!(k.id.as_deref(), Some(uuid));
            assert!(matches!(k.id, Some(std::borrow::Cow::Borrowed(_))));
            assert_eq!(k.session_id.as_deref(), v["sessionId"].as_str());
            match v["parentUuid"].as_str() {
                Some(parent) => {
                    assert_eq!(k.parent, Parent::Id(parent.into()));
                    let span = k.parent_span.clone().unwrap();
                    assert_eq!(&line[span], format!("\"{parent}\"").as_bytes());
                }
                // A `/compact` boundary names the entry before it in `logicalParentUuid`.
                None => match v["logicalParentUuid"].as_str() {
                    Some(logical) => assert_eq!(k.parent, Parent::Logical(logical.into())),
                    None => assert_eq!(k.parent, Parent::Root, "{name}"),
                },
            }
            calls.extend(k.calls.iter().map(|c| c.to_string()));
            results.extend(k.results.iter().map(|c| c.to_string()));
        }
        assert_eq!((calls, results), pairs_in_file(&bytes), "{name}");
    }
}

#[test]
fn synthetic_result_answers_the_call() {
    let bytes = fixture("claude-jsonl/tools.jsonl");
    let call_line = bytes.split(|&b| b == b'\n').nth(2).unwrap();
    let call = OpenCall {
        call_record: call_line,
        call_id: "toolu_01Run",
        new_id: "00000000-0000-4000-8000-0000000000aa",
        parent_id: "00000000-0000-4000-8000-000000000003",
        message: "no result was recorded (added by sessiontool)",
    };
    assert!(CLAUDE_JSONL.closes_tool_calls());
    let rec = CLAUDE_JSONL.synthetic_result(&call).unwrap();
    let k = CLAUDE_JSONL.keys(&rec).unwrap();
    assert_eq!(k.results, ["toolu_01Run"]);
    assert_eq!(k.id.as_deref(), Some(call.new_id));
    assert_eq!(k.parent, Parent::Id(call.parent_id.into()));
    assert!(k.missing.is_empty());
    let v: Value = serde_json::from_slice(&rec).unwrap();
    assert_eq!(v["type"], "user");
    assert_eq!(v["message"]["content"][0]["is_error"], true);
    assert_eq!(v["sessionId"], "5f0c2d1e-8a47-4b6e-9c3d-2e1f0a9b8c7d");
    assert_eq!(v["gitBranch"], "main");
    assert_eq!(v["isSidechain"], false);
    // It reads as a Tool message answering the call.
    let mut file = bytes.clone();
    file.extend_from_slice(&rec);
    file.push(b'\n');
    let s = read("synthetic", &file);
    let last = s.nodes.last().unwrap().message().unwrap();
    assert_eq!(last.role, Role::Tool);
}

/// A Gemini checkpoint names only the response's id (its calls have none): the call and its
/// result must still be written as one `tool_use`/`tool_result` pair.
#[test]
fn results_pair_with_id_less_calls() {
    use sessiontool::formats::{Input, WriteOptions, by_name};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/checkpoint/checkpoint-object.json");
    let bytes = std::fs::read(&path).unwrap();
    let input = Input {
        name: "checkpoint-object.json",
        path: None,
        bytes: &bytes,
    };
    let mut session = by_name("checkpoint").unwrap().read(&input).unwrap().session;
    // Checkpoints have no session id; `convert` derives one, here any will do.
    session.meta.id = Some("s".into());
    let claude = by_name("claude-jsonl").unwrap();
    let written = claude
        .write(
            &session,
            &WriteOptions {
                cwd: Some("/p".into()),
                ..WriteOptions::default()
            },
        )
        .unwrap();
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for line in written
        .bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let k = claude.keys(line).unwrap();
        calls.extend(k.calls.iter().map(|c| c.to_string()));
        results.extend(k.results.iter().map(|c| c.to_string()));
    }
    assert!(!calls.is_empty());
    assert_eq!(calls, results);
}
