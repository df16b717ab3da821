//! simple-agent-go session JSON (`simple-agent-json`): hand-made fixtures in Go's
//! `json.MarshalIndent(v, "", "  ")` layout (two spaces, `<`, `>`, `&` escaped as `\u003c`...,
//! non-ASCII raw, no final newline) read and write back byte for byte; detection does not
//! confuse it with the Gemini whole-file formats; conversions keep roles, texts and tool pairs.

use std::path::{Path, PathBuf};

use sessiontool::convert::convert;
use sessiontool::formats::simple_agent_json::{SimpleAgentJson, index_entry};
use sessiontool::formats::{self, Format, Input, WriteOptions};
use sessiontool::model::{Body, Content, Role, Session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SA: &dyn Format = &SimpleAgentJson;
const OWN: &[&str] = &["plain.json", "tools.json", "unknown-fields.json"];

fn path(dir: &str, file: &str) -> PathBuf {
    Path::new(FIXTURES).join(dir).join(file)
}

fn load(dir: &str, file: &str) -> Vec<u8> {
    let p = path(dir, file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn read(fmt: &dyn Format, name: &str, bytes: &[u8]) -> Session {
    fmt.read(&Input {
        name,
        path: None,
        bytes,
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
    .session
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let got = String::from_utf8_lossy(got);
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  want: {w}\n  got:  {g}", i + 1);
        }
    }
    format!("lengths differ: want {} got {}", want.len(), got.len())
}

#[test]
fn fixtures_round_trip_byte_identical() {
    for file in OWN {
        let bytes = load("simple-agent-json", file);
        assert!(
            !bytes.ends_with(b"\n"),
            "{file}: Go writes no final newline"
        );
        let session = read(SA, file, &bytes);
        let written = SA.write(&session, &WriteOptions::default()).unwrap();
        assert!(
            written.bytes == bytes,
            "{file}: not byte-identical; {}",
            first_difference(&bytes, &written.bytes)
        );
        assert!(written.losses.is_empty(), "{file}: {:?}", written.losses);
        // Same bytes with a final newline (a copy edited by hand) also come back as they were.
        let mut nl = bytes.clone();
        nl.push(b'\n');
        let again = SA
            .write(&read(SA, file, &nl), &WriteOptions::default())
            .unwrap();
        assert!(again.bytes == nl, "{file} + newline");
    }
}

#[test]
fn every_fixture_is_listed() {
    let mut found: Vec<String> = std::fs::read_dir(Path::new(FIXTURES).join("simple-agent-json"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    found.sort();
    let mut listed: Vec<String> = OWN.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn reads_meta_and_messages() {
    let s = read(SA, "tools.json", &load("simple-agent-json", "tools.json"));
    let m = &s.meta;
    assert_eq!(m.id.as_deref(), Some("20251206_103000_q7w8e9"));
    assert_eq!(m.cwd.as_deref(), Some("/home/dana/projects/pomodoro"));
    assert_eq!(m.start_time.as_deref(), Some("2025-12-06T10:30:00.000123Z"));
    assert_eq!(m.last_updated.as_deref(), Some("2025-12-06T10:31:20.987Z"));
    assert_eq!(m.title.as_deref(), Some("Run the tests & fix <timer>"));
    assert_eq!(m.extra["provider"], "lmstudio");
    assert_eq!(m.extra["model"], "qwen3-coder-30b");
    assert!(m.extra.contains_key("runs"));
    assert_eq!(s.nodes.len(), 5);
    // A linear chain.
    for w in s.nodes.windows(2) {
        assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
    }
    let Body::Message(a) = &s.nodes[1].body else {
        panic!()
    };
    assert_eq!(a.role, Role::Assistant);
    let Content::ToolCall { id, name, args, .. } = &a.parts[0].content else {
        panic!("{:?}", a.parts)
    };
    assert_eq!(id.as_deref(), Some("call_8f2a1c4e"));
    assert_eq!(name, "bash");
    assert_eq!(args["command"], "npm test 2>&1");
    let Body::Message(t) = &s.nodes[3].body else {
        panic!()
    };
    assert_eq!(t.role, Role::Tool);
    let Content::ToolResult {
        call_id,
        name,
        output,
        ..
    } = &t.parts[0].content
    else {
        panic!()
    };
    assert_eq!(call_id.as_deref(), Some("call_31d0b6a2"));
    assert_eq!(name.as_deref(), Some("read_file"));
    assert!(output.as_str().unwrap().contains("s.left <= 0"));
}

#[test]
fn unknown_role_and_fields_are_kept() {
    let s = read(
        SA,
        "unknown-fields.json",
        &load("simple-agent-json", "unknown-fields.json"),
    );
    assert!(matches!(s.nodes[2].body, Body::Event(_)));
    let Body::Message(u) = &s.nodes[1].body else {
        panic!()
    };
    assert!(u.extra.contains_key("attachments"));
    let Body::Message(a) = &s.nodes[4].body else {
        panic!()
    };
    let Content::ToolCall { args, extra, .. } = &a.parts[1].content else {
        panic!("{:?}", a.parts)
    };
    assert_eq!(args, "not json");
    assert!(extra.contains_key("index"));
}

#[test]
fn detection_does_not_collide_with_gemini_formats() {
    for file in OWN {
        let bytes = load("simple-agent-json", file);
        for name in ["gemini-json", "checkpoint", "qwen-jsonl", "gemini-jsonl"] {
            let other = formats::by_name(name).unwrap();
            assert_eq!(
                other.detect(Some(&path("simple-agent-json", file)), &bytes),
                0,
                "{name} claims simple-agent-json/{file}"
            );
        }
        assert!(SA.detect(Some(&path("simple-agent-json", file)), &bytes) >= 90);
        assert!(SA.detect(None, &bytes) >= 90);
    }
    for dir in [
        "gemini-json",
        "checkpoint",
        "qwen-jsonl",
        "gemini-jsonl",
        "agent-jsonl",
    ] {
        for entry in std::fs::read_dir(Path::new(FIXTURES).join(dir)).unwrap() {
            let p = entry.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(SA.detect(Some(&p), &bytes), 0, "{} claimed", p.display());
        }
    }
}

#[test]
fn damaged_file_is_a_located_error() {
    let bytes = load("simple-agent-json", "tools.json");
    let cut = &bytes[..bytes.len() / 2];
    let err = SA
        .read(&Input {
            name: "cut.json",
            path: None,
            bytes: cut,
        })
        .unwrap_err();
    assert!(err.hint.is_some());
    assert!(err.message.contains("ends before"), "{}", err.message);
}

/// (role, text, call ids, result ids) of each message.
fn conversation(s: &Session) -> Vec<(Role, String, Vec<String>, Vec<String>)> {
    s.nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.role.is_conversation())
        .map(|m| {
            let calls = m
                .parts
                .iter()
                .filter_map(|p| match &p.content {
                    Content::ToolCall { id, .. } => id.clone(),
                    _ => None,
                })
                .collect();
            let results = m
                .parts
                .iter()
                .filter_map(|p| match &p.content {
                    Content::ToolResult { call_id, .. } => call_id.clone(),
                    _ => None,
                })
                .collect();
            (m.role, m.text(), calls, results)
        })
        .collect()
}

#[test]
fn qwen_tools_converts_and_reads_back() {
    let file = path("qwen-jsonl", "tools.jsonl");
    let bytes = load("qwen-jsonl", "tools.jsonl");
    let input = Input {
        name: "tools.jsonl",
        path: Some(&file),
        bytes: &bytes,
    };
    let qwen = formats::by_name("qwen-jsonl").unwrap();
    let conv = convert(&input, Some(qwen), SA, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(conv.bytes.clone()).unwrap();
    assert!(text.starts_with("{\n  \"id\": "), "{text}");
    assert!(!text.contains('<') && !text.contains('&'));
    assert!(SA.detect(None, &conv.bytes) >= 90);
    let back = read(SA, "out.json", &conv.bytes);
    let source = read(qwen, "tools.jsonl", &bytes);
    let want = conversation(&source);
    assert!(want.iter().any(|w| !w.2.is_empty()) && want.iter().any(|w| !w.3.is_empty()));
    let got = conversation(&back);
    let roles =
        |c: &[(Role, String, Vec<String>, Vec<String>)]| c.iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(roles(&got), roles(&want));
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.1, w.1, "texts differ");
        assert_eq!(g.2, w.2, "calls differ");
        assert_eq!(g.3, w.3, "results differ");
    }
    assert!(
        !conv.losses.is_empty(),
        "thoughts and usage are reported lost"
    );
    assert_eq!(back.meta.cwd.as_deref(), source.meta.cwd.as_deref());
    // The conversion is stable: written again from its own reading, same bytes.
    let again = SA.write(&back, &WriteOptions::default()).unwrap();
    assert!(
        again.bytes == conv.bytes,
        "{}",
        first_difference(&conv.bytes, &again.bytes)
    );
}

#[test]
fn index_entry_adds_sessions_in_go_layout() {
    let first = index_entry(None, "/b/proj", "20250731_143052_abc123").unwrap();
    assert_eq!(
        String::from_utf8(first.clone()).unwrap(),
        "{\n  \"version\": \"1.0\",\n  \"last_session_id\": \"20250731_143052_abc123\",\n  \"path_index\": {\n    \"/b/proj\": [\n      \"20250731_143052_abc123\"\n    ]\n  }\n}"
    );
    let second = index_entry(Some(&first), "/a/other", "20250801_090000_xyz789").unwrap();
    let third = index_entry(Some(&second), "/b/proj", "20250801_090000_xyz789").unwrap();
    let v: serde_json::Value = serde_json::from_slice(&third).unwrap();
    assert_eq!(v["last_session_id"], "20250801_090000_xyz789");
    assert_eq!(
        v["path_index"]["/b/proj"],
        serde_json::json!(["20250731_143052_abc123", "20250801_090000_xyz789"])
    );
    let keys: Vec<&String> = v["path_index"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["/a/other", "/b/proj"], "Go sorts map keys");
    // Adding the same id again changes nothing.
    assert_eq!(
        index_entry(Some(&third), "/b/proj", "20250801_090000_xyz789").unwrap(),
        third
    );
}
