//! llxprt-jsonl: fixtures round-trip byte for byte and read as expected, conversions to and
//! from it, detection against the other formats' files, and fsck keys.

mod common;

use std::path::Path;

use sessiontool::convert::convert;
use sessiontool::formats::llxprt_jsonl::LlxprtJsonl;
use sessiontool::formats::{Format, Input, WriteOptions, by_name};
use sessiontool::model::{Body, Content, Event, Role, Session};

const LLXPRT_JSONL: &dyn sessiontool::formats::Format = &LlxprtJsonl;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/llxprt-jsonl");
const FIXTURES: [&str; 5] = ["plain", "tools", "thinking", "compression", "events"];

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}.jsonl")).unwrap()
}

fn read(bytes: &[u8]) -> (Session, Vec<&'static str>) {
    let input = Input {
        name: "t.jsonl",
        path: None,
        bytes,
    };
    let out = LLXPRT_JSONL.read(&input).unwrap();
    (
        out.session,
        out.diagnostics.iter().map(|d| d.code).collect(),
    )
}

#[test]
fn fixtures_round_trip_byte_identical() {
    for name in FIXTURES {
        let original = bytes(name);
        let (session, diags) = read(&original);
        let written = LLXPRT_JSONL
            .write(&session, &WriteOptions::default())
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            String::from_utf8_lossy(&original),
            "{name}"
        );
        assert!(written.losses.is_empty(), "{name}: {:?}", written.losses);
        assert!(
            !diags
                .iter()
                .any(|d| d.starts_with("llxprt-") && *d != "llxprt-unknown-type"),
            "{name}: {diags:?}"
        );
    }
}

#[test]
fn plain_chat_reads_meta_and_messages() {
    let (s, _) = read(&bytes("plain"));
    assert_eq!(
        s.meta.id.as_deref(),
        Some("5f0c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f")
    );
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dana/projects/pomodoro"));
    assert_eq!(
        s.meta.directories.as_deref(),
        Some(&["/home/dana/projects/pomodoro".to_string()][..])
    );
    assert_eq!(
        s.meta.start_time.as_deref(),
        Some("2026-03-01T09:00:00.000Z")
    );
    assert_eq!(
        s.meta.extra.get("provider").and_then(|v| v.as_str()),
        Some("anthropic")
    );
    let roles: Vec<Role> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.role)
        .collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    let ai = s.nodes[1].message().unwrap();
    assert_eq!(ai.model.as_deref(), Some("claude-sonnet-4-5"));
    let u = ai.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.total, u.cached),
        (Some(1200), Some(40), Some(1240), Some(1024))
    );
    assert_eq!(s.nodes[1].parent.as_deref(), Some(s.nodes[0].id.as_str()));
}

#[test]
fn tool_calls_and_responses_read_as_calls_and_results() {
    let (s, _) = read(&bytes("tools"));
    let parts: Vec<&Content> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| m.parts.iter().map(|p| &p.content))
        .collect();
    let calls: Vec<_> = parts
        .iter()
        .filter_map(|c| match c {
            Content::ToolCall { id, name, .. } => Some((id.clone().unwrap(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("toolu_01".into(), "run_shell_command".to_string()),
            ("toolu_02".into(), "read_file".into())
        ]
    );
    let results: Vec<_> = parts
        .iter()
        .filter_map(|c| match c {
            Content::ToolResult {
                call_id, is_error, ..
            } => Some((call_id.clone().unwrap(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [("toolu_01".into(), false), ("toolu_02".into(), true)]
    );
    assert_eq!(s.nodes[2].message().unwrap().role, Role::Tool);
}

#[test]
fn thinking_keeps_signature_and_encrypted_content() {
    let (s, _) = read(&bytes("thinking"));
    let p = &s.nodes[1].message().unwrap().parts[0];
    assert_eq!(p.signature.as_deref(), Some("EqQBCkgIBxABGAIiQL+/3x9Zq+=="));
    let Content::Thought {
        text, encrypted, ..
    } = &p.content
    else {
        panic!()
    };
    assert_eq!(text, "The test uses real timers.");
    assert_eq!(encrypted.as_deref(), Some("gAAAAABo_encrypted/blob+=="));
}

#[test]
fn compression_and_events() {
    let (s, _) = read(&bytes("compression"));
    assert!(s.nodes.iter().any(|n| matches!(&n.body,
        Body::Event(Event::Compaction { summary: Some(t), .. }) if t == "Summary: step one is done.")));
    let (s, diags) = read(&bytes("events"));
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
            "user",
            "title",
            "assistant",
            "model_change",
            "info",
            "warning",
            "error",
            "rewind",
            "directories_changed",
            "checkpoint_created",
            "title",
            "session_forked",
            "future_event",
            "assistant"
        ]
    );
    assert!(matches!(
        &s.nodes[7].body,
        Body::Event(Event::Rewind { count: Some(1), .. })
    ));
    assert_eq!(s.meta.title.as_deref(), Some("pomodoro"));
    assert!(diags.contains(&"llxprt-unknown-type"));
}

#[test]
fn an_edited_session_keeps_seq_increasing() {
    let (mut s, _) = read(&bytes("tools"));
    s.nodes[0].message_mut().unwrap().parts[0] = sessiontool::model::Part::text("Run all tests.");
    let w = LLXPRT_JSONL.write(&s, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(w.bytes).unwrap();
    assert!(text.contains("Run all tests."));
    assert_seq_increasing(&text);
}

#[test]
fn llxprt_rules_are_diagnosed() {
    let original = String::from_utf8(bytes("tools")).unwrap();
    let swapped = original.replace("\"seq\":5,", "\"seq\":3,");
    let (_, diags) = read(swapped.as_bytes());
    assert!(diags.contains(&"llxprt-seq-not-increasing"), "{diags:?}");
    let headless: String = original.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let (_, diags) = read(headless.as_bytes());
    assert!(diags.contains(&"llxprt-no-session-start"), "{diags:?}");
    let bad = original.replacen("\"provider\":\"anthropic\",", "", 1);
    let (_, diags) = read(bad.as_bytes());
    assert!(diags.contains(&"llxprt-bad-session-start"), "{diags:?}");
}

fn assert_seq_increasing(text: &str) {
    let seqs: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs[0], 1);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

fn convert_file(path: &str, to: &'static dyn Format) -> sessiontool::convert::Conversion {
    let bytes = std::fs::read(path).unwrap();
    let input = Input {
        name: path,
        path: Some(Path::new(path)),
        bytes: &bytes,
    };
    let from = if path.contains("llxprt") {
        Some(&LlxprtJsonl as &'static dyn Format)
    } else {
        None
    };
    convert(&input, from, to, &WriteOptions::default()).unwrap()
}

#[test]
fn qwen_tools_convert_to_llxprt_and_back() {
    let qwen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/qwen-jsonl/tools.jsonl"
    );
    let c = convert_file(qwen, &LlxprtJsonl);
    let text = String::from_utf8(c.bytes.clone()).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("\"type\":\"session_start\"")
    );
    assert_seq_increasing(&text);
    let (orig, _) = {
        let b = std::fs::read(qwen).unwrap();
        let input = Input {
            name: qwen,
            path: None,
            bytes: &b,
        };
        let f = by_name("qwen-jsonl").unwrap();
        let o = f.read(&input).unwrap();
        (o.session, ())
    };
    let (back, diags) = read(&c.bytes);
    assert!(!diags.iter().any(|d| d.starts_with("llxprt-")), "{diags:?}");
    let summary = |s: &Session| -> Vec<(String, String)> {
        s.nodes
            .iter()
            .filter_map(|n| n.message())
            .filter(|m| m.role.is_conversation())
            .flat_map(|m| {
                m.parts.iter().filter_map(move |p| match &p.content {
                    Content::Text { text } => Some((speaker(m.role), text.clone())),
                    Content::ToolCall { id, name, .. } => {
                        Some(("call".into(), format!("{id:?} {name}")))
                    }
                    Content::ToolResult { call_id, .. } => {
                        Some(("result".into(), format!("{call_id:?}")))
                    }
                    _ => None,
                })
            })
            .collect()
    };
    assert_eq!(summary(&back), summary(&orig));
    assert!(summary(&back).iter().any(|(k, _)| k == "call"));
}

fn speaker(r: Role) -> String {
    match r {
        Role::Assistant => "ai",
        _ => "human",
    }
    .into()
}

#[test]
fn llxprt_converts_to_qwen_and_gemini() {
    for name in FIXTURES {
        let path = format!("{DIR}/{name}.jsonl");
        for to in ["qwen-jsonl", "gemini-json"] {
            let path: &'static str = Box::leak(path.clone().into_boxed_str());
            let c = convert_file(path, by_name(to).unwrap());
            assert!(!c.bytes.is_empty(), "{name} -> {to}");
            if name == "events" {
                assert!(
                    !c.losses.is_empty(),
                    "{name} -> {to}: events should be reported"
                );
            }
        }
    }
}

#[test]
fn detection_claims_only_llxprt_files() {
    for name in FIXTURES {
        assert!(LLXPRT_JSONL.detect(None, &bytes(name)) >= 90, "{name}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<std::path::PathBuf> = [
        "qwen-jsonl",
        "claude-jsonl",
        "pi-jsonl",
        "codex-jsonl",
        "gemini-json",
        "checkpoint",
    ]
    .iter()
    .map(|d| root.join("fixtures").join(d))
    .collect();
    // The fixtures are checked either way; the real samples when they are here.
    for s in ["claude", "codex", "gemini", "pi"] {
        dirs.extend(common::prerequisite::shared(s));
    }
    let mut seen = 0;
    for dir in dirs {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for e in entries.flatten() {
            let b = std::fs::read(e.path()).unwrap();
            assert_eq!(
                LLXPRT_JSONL.detect(Some(&e.path()), &b),
                0,
                "{}",
                e.path().display()
            );
            seen += 1;
        }
    }
    assert!(seen > 10);
}

#[test]
fn keys_of_every_fixture_line() {
    for name in FIXTURES {
        let text = String::from_utf8(bytes(name)).unwrap();
        let mut last = 0;
        for line in text.lines() {
            let k = LLXPRT_JSONL.keys(line.as_bytes()).unwrap();
            assert!(k.missing.is_empty(), "{name}: {line}");
            assert!(k.id.is_none());
            let seq = k.seq.unwrap();
            assert!(seq > last);
            last = seq;
            assert!(k.kind.is_some());
        }
    }
    let text = String::from_utf8(bytes("tools")).unwrap();
    let keys: Vec<_> = text
        .lines()
        .map(|l| LLXPRT_JSONL.keys(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(keys[2].calls, ["toolu_01"]);
    assert_eq!(keys[3].results, ["toolu_01"]);
    assert_eq!(keys[0].kind.as_deref(), Some("session_start"));
    let k = LLXPRT_JSONL
        .keys(br#"{"seq":"x","type":"content"}"#)
        .unwrap();
    assert_eq!(k.missing, ["v", "seq", "ts", "payload"]);
}

#[test]
fn fsck_reports_a_seq_going_backwards() {
    let original = String::from_utf8(bytes("tools")).unwrap();
    let swapped = original.replace("\"seq\":5,", "\"seq\":3,");
    let seqs: Vec<u64> = swapped
        .lines()
        .map(|l| LLXPRT_JSONL.keys(l.as_bytes()).unwrap().seq.unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 3, 6, 7]);
    // Through fsck once the format is registered in `formats::all()`.
    if by_name("llxprt-jsonl").is_some() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-x.jsonl");
        std::fs::write(&path, swapped).unwrap();
        let options = sessiontool::check::CheckOptions {
            format: Some("llxprt-jsonl"),
            ..Default::default()
        };
        let report = sessiontool::check::check_file(&path, &options).unwrap();
        let codes: Vec<_> = report.issues.iter().map(|i| (i.code, i.line)).collect();
        assert!(
            codes.contains(&("seq-not-increasing", Some(5))),
            "{codes:?}"
        );
    }
}
