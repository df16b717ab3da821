//! pi coding agent session JSONL (`pi-jsonl`): the real version 1 samples and hand-made
//! version 2 and 3 fixtures read and write back byte for byte; conversions to and from other
//! formats; `keys` and `synthetic_result` on every line.
//!
//! The fixtures in `fixtures/pi-jsonl/` follow pi's `session-manager.ts` (v0.58.3): entries as
//! `JSON.stringify(entry) + "\n"`, fields in the order pi builds them.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use sessiontool::convert::convert;
use sessiontool::formats::pi_jsonl::PiJsonl;
use sessiontool::formats::{self, Format, Input, OpenCall, Parent, ReadOutcome, WriteOptions};
use sessiontool::model::{Body, Content, Event, Role, Session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples");

static PI: &dyn Format = &PiJsonl;

fn fixture(dir: &str, file: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(dir).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The real pi samples, or `None` (said, or a failure in CI) when `../shared` is absent.
fn samples(test: &str) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let dir = Path::new(SAMPLES).join("pi");
    if !common::prerequisite::present(
        dir.is_dir(),
        &format!("{test}: {} is absent", dir.display()),
    ) {
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no pi samples in {}", dir.display());
    Some(
        files
            .into_iter()
            .map(|p| {
                let b = std::fs::read(&p).unwrap();
                (p, b)
            })
            .collect(),
    )
}

fn read(name: &str, bytes: &[u8]) -> ReadOutcome {
    PI.read(&Input {
        name,
        path: None,
        bytes,
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn write(s: &Session) -> Vec<u8> {
    let w = PI.write(s, &WriteOptions::default()).expect("writes");
    assert!(w.losses.is_empty(), "{:?}", w.losses);
    w.bytes
}

fn assert_same(name: &str, got: &[u8], want: &[u8]) {
    if got == want {
        return;
    }
    let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
        assert_eq!(a, b, "{name}: line {} differs", i + 1);
    }
    panic!(
        "{name}: {} bytes written, {} read (line counts {} / {})",
        got.len(),
        want.len(),
        g.lines().count(),
        w.lines().count()
    );
}

/// Tool call ids and result ids, in file order.
fn tool_pairs(s: &Session) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for n in &s.nodes {
        for p in n.message().map(|m| m.parts.as_slice()).unwrap_or_default() {
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

fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn samples_round_trip_byte_for_byte() {
    let Some(samples) = samples("samples_round_trip_byte_for_byte") else {
        return;
    };
    for (path, bytes) in samples {
        let name = path.display().to_string();
        let out = read(&name, &bytes);
        let errors: Vec<_> = out
            .diagnostics
            .iter()
            .filter(|d| d.severity != sessiontool::diag::Severity::Info)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let s = &out.session;
        assert_eq!(
            s.nodes.len() + 1,
            bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count()
        );
        // Version 1: no entry has an id, and none is written back (below).
        assert!(
            lines(&bytes)
                .iter()
                .all(|l| l.get("id").is_none() || l["type"] == "session")
        );
        assert_same(&name, &write(s), &bytes);
    }
}

#[test]
fn sample_content_as_the_file_holds_it() {
    let Some(samples) = samples("sample_content_as_the_file_holds_it") else {
        return;
    };
    for (path, bytes) in samples {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let s = read(&name, &bytes).session;
        let text = String::from_utf8_lossy(&bytes);
        let count = |needle: &str| text.matches(needle).count();
        let messages = s.nodes.iter().filter(|n| n.message().is_some()).count();
        let compactions = s
            .nodes
            .iter()
            .filter(|n| matches!(n.body, Body::Event(Event::Compaction { .. })))
            .count();
        let model_changes = s
            .nodes
            .iter()
            .filter(|n| matches!(n.body, Body::Event(Event::ModelChange { .. })))
            .count();
        assert_eq!(compactions, count("{\"type\":\"compaction\""), "{name}");
        assert_eq!(model_changes, count("{\"type\":\"model_change\""), "{name}");
        let (calls, results) = tool_pairs(&s);
        assert_eq!(calls.len(), count("{\"type\":\"toolCall\""), "{name}");
        assert_eq!(results.len(), count("\"role\":\"toolResult\""), "{name}");
        let bash = count("\"role\":\"bashExecution\"");
        assert_eq!(
            messages + bash,
            count("{\"type\":\"message\""),
            "{name}: every message entry is a message (or kept whole)"
        );
        // Every result answers a call made before it.
        for r in &results {
            assert!(calls.contains(r), "{name}: result {r} without call");
        }
        // Version 1: one chain in file order, the leaf the last entry.
        for w in s.nodes.windows(2) {
            assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
        }
        assert_eq!(s.nodes[0].parent, None);
        assert_eq!(
            s.meta.head.as_deref(),
            s.nodes.last().map(|n| n.id.as_str())
        );
        assert_eq!(
            s.meta.cwd.as_deref(),
            Some("/Users/badlogic/workspaces/pi-mono")
        );
        assert!(
            s.meta.extra.contains_key("modelId"),
            "{name}: v1 header fields kept"
        );
        // Version 1 compactions name the first kept entry by index; it resolves to a node.
        for n in &s.nodes {
            if let Body::Event(Event::Compaction {
                first_kept,
                summary,
                tokens_before,
                ..
            }) = &n.body
            {
                let kept = first_kept.as_deref().expect("first kept resolved");
                assert!(s.nodes.iter().any(|m| m.id == kept), "{name}: {kept}");
                assert!(summary.as_deref().is_some_and(|t| !t.is_empty()));
                assert!(tokens_before.is_some());
            }
        }
        // Assistant messages carry their model and usage.
        for n in &s.nodes {
            if let Some(m) = n.message()
                && m.role == Role::Assistant
            {
                assert!(m.model.is_some() && m.usage.is_some(), "{name}: {}", n.id);
            }
        }
    }
}

#[test]
fn samples_are_detected_as_pi() {
    let Some(samples) = samples("samples_are_detected_as_pi") else {
        return;
    };
    for (path, bytes) in samples {
        assert!(PI.detect(Some(&path), &bytes) >= 90, "{}", path.display());
    }
}

#[test]
fn not_claimed_for_other_tools_files() {
    for f in [
        "tools.jsonl",
        "plain.jsonl",
        "branches.jsonl",
        "system.jsonl",
    ] {
        let b = fixture("qwen-jsonl", f);
        assert_eq!(PI.detect(None, &b), 0, "qwen-jsonl/{f}");
    }
    let claude = Path::new(SAMPLES).join("claude");
    if !common::prerequisite::present(
        claude.is_dir(),
        &format!("claude samples: {} is absent", claude.display()),
    ) {
        return;
    }
    for e in std::fs::read_dir(&claude).unwrap() {
        let p = e.unwrap().path();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(PI.detect(Some(&p), &b), 0, "{}", p.display());
    }
}

#[test]
fn v2_and_v3_fixtures_round_trip() {
    for (file, version) in [("v2.jsonl", 2), ("v3.jsonl", 3), ("v3-branches.jsonl", 3)] {
        let bytes = fixture("pi-jsonl", file);
        let out = read(file, &bytes);
        assert!(out.diagnostics.is_empty(), "{file}: {:?}", out.diagnostics);
        let s = &out.session;
        assert_eq!(lines(&bytes)[0]["version"], Value::from(version));
        assert_same(file, &write(s), &bytes);
        assert!(PI.detect(None, &bytes) >= 90);
        // Ids and parents are the entries' own.
        for (n, line) in s.nodes.iter().zip(lines(&bytes).iter().skip(1)) {
            assert_eq!(line["id"].as_str(), Some(n.id.as_str()));
            assert_eq!(line["parentId"].as_str(), n.parent.as_deref());
        }
    }
}

#[test]
fn v3_fixture_maps_every_entry_type() {
    let bytes = fixture("pi-jsonl", "v3.jsonl");
    let s = read("v3.jsonl", &bytes).session;
    let kinds: Vec<&str> = s
        .nodes
        .iter()
        .map(|n| match &n.body {
            Body::Message(m) => m.role.as_str(),
            Body::Event(e) => e.kind(),
        })
        .collect();
    for k in [
        "user",
        "assistant",
        "tool",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "label",
        "custom",
        "custom_message",
        "title",
        "message",
    ] {
        assert!(kinds.contains(&k), "no {k} in {kinds:?}");
    }
    assert_eq!(s.meta.title.as_deref(), Some("Fix the timer tests"));
    assert_eq!(
        s.meta.head.as_deref(),
        s.nodes.last().map(|n| n.id.as_str())
    );
    let thought = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .find(|p| matches!(p.content, Content::Thought { .. }))
        .expect("a thinking block");
    assert_eq!(thought.signature.as_deref(), Some("EqQBCkYIBxgCKkBz+/9=="));
}

#[test]
fn qwen_to_pi_and_back() {
    let bytes = fixture("qwen-jsonl", "tools.jsonl");
    let input = Input {
        name: "tools.jsonl",
        path: None,
        bytes: &bytes,
    };
    let qwen = formats::by_name("qwen-jsonl").unwrap();
    let source = qwen.read(&input).unwrap().session;
    let conv = convert(&input, Some(qwen), PI, &WriteOptions::default()).expect("converts");
    let entries = lines(&conv.bytes);
    assert_eq!(entries[0]["type"], "session");
    assert_eq!(entries[0]["version"], 3);
    for e in &entries[1..] {
        let id = e["id"].as_str().unwrap();
        assert!(
            id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        if e["message"]["role"] == "assistant" {
            for k in ["usage", "api", "provider", "model", "stopReason"] {
                assert!(e["message"].get(k).is_some(), "assistant without {k}: {e}");
            }
            assert!(e["message"]["usage"]["cost"].is_object());
        }
    }
    // Every parent is an entry written before.
    let ids: Vec<&str> = entries[1..]
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    for (i, e) in entries[1..].iter().enumerate() {
        if let Some(p) = e["parentId"].as_str() {
            assert!(ids[..i].contains(&p), "parent {p} of entry {i}");
        }
    }
    let back = read("converted", &conv.bytes);
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    let back = back.session;
    let convo = |s: &Session| -> Vec<(Role, String)> {
        s.nodes
            .iter()
            .filter_map(|n| n.message())
            .map(|m| (m.role, m.text()))
            .collect()
    };
    let want = convo(&source);
    let got = convo(&back);
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((gr, gt), (wr, wt)) in got.iter().zip(&want) {
        if *wr != Role::Tool {
            assert_eq!((gr, gt), (wr, wt));
        } else {
            assert_eq!(*gr, Role::Tool);
        }
    }
    assert_eq!(tool_pairs(&back), tool_pairs(&source));
    // pi back to Qwen.
    let pi_input = Input {
        name: "converted.jsonl",
        path: None,
        bytes: &conv.bytes,
    };
    let again = convert(&pi_input, Some(PI), qwen, &WriteOptions::default()).expect("to qwen");
    let q = qwen
        .read(&Input {
            name: "again",
            path: None,
            bytes: &again.bytes,
        })
        .unwrap()
        .session;
    assert_eq!(tool_pairs(&q), tool_pairs(&source));
}

#[test]
fn pi_sample_converts_to_qwen_and_gemini() {
    let Some(samples) = samples("pi_sample_converts_to_qwen_and_gemini") else {
        return;
    };
    for (path, bytes) in samples {
        let input = Input {
            name: "sample",
            path: Some(&path),
            bytes: &bytes,
        };
        let source = read("sample", &bytes).session;
        for to in ["qwen-jsonl", "gemini-json"] {
            let target = formats::by_name(to).unwrap();
            let conv = convert(&input, Some(PI), target, &WriteOptions::default())
                .unwrap_or_else(|e| panic!("{} -> {to}: {e}", path.display()));
            let codes: Vec<&str> = conv.losses.losses.iter().map(|l| l.code).collect();
            println!("{} -> {to}: {:?}", path.display(), conv.losses.losses);
            assert!(!codes.is_empty(), "{to}: pi's extra fields are reported");
            let back = target
                .read(&Input {
                    name: "converted",
                    path: None,
                    bytes: &conv.bytes,
                })
                .unwrap()
                .session;
            let (calls, _) = tool_pairs(&back);
            assert_eq!(calls, tool_pairs(&source).0, "{to}: {codes:?}");
        }
    }
}

#[test]
fn keys_on_every_sample_line() {
    let mut files = vec![
        ("v2.jsonl".to_string(), fixture("pi-jsonl", "v2.jsonl")),
        ("v3.jsonl".to_string(), fixture("pi-jsonl", "v3.jsonl")),
    ];
    if let Some(samples) = samples("keys_on_every_sample_line") {
        files.extend(
            samples
                .into_iter()
                .map(|(p, b)| (p.display().to_string(), b)),
        );
    }
    for (name, bytes) in files {
        let (mut calls, mut results) = (0, 0);
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let k = PI.keys(line).unwrap_or_else(|| panic!("{name}: no keys"));
            assert!(k.missing.is_empty(), "{name}: {:?}", k.missing);
            let v: Value = serde_json::from_slice(line).unwrap();
            assert_eq!(k.kind.as_deref(), v["type"].as_str());
            if v["type"] == "session" {
                // The header's id names the session; it is not a node of the entry tree.
                assert_eq!(k.id, None);
                assert_eq!(k.session_id.as_deref(), v["id"].as_str());
            } else {
                assert_eq!(k.id.as_deref(), v["id"].as_str());
            }
            if let Some(id) = &k.id {
                assert!(matches!(id, std::borrow::Cow::Borrowed(_)), "borrowed id");
            }
            match (&k.parent, &v["parentId"]) {
                (Parent::Id(p), Value::String(s)) => {
                    assert_eq!(p, s);
                    let span = k.parent_span.clone().unwrap();
                    assert_eq!(&line[span], format!("\"{s}\"").as_bytes());
                }
                (Parent::Root, Value::Null) | (Parent::None, _) => {}
                other => panic!("{name}: parent {other:?}"),
            }
            calls += k.calls.len();
            results += k.results.len();
        }
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(
            calls,
            text.matches("{\"type\":\"toolCall\"").count(),
            "{name}"
        );
        assert_eq!(
            results,
            text.matches("\"role\":\"toolResult\"").count(),
            "{name}"
        );
    }
}

#[test]
fn synthetic_result_reads_back_as_a_result() {
    let bytes = fixture("pi-jsonl", "v3.jsonl");
    let call_line = bytes
        .split(|&b| b == b'\n')
        .find(|l| l.windows(10).any(|w| w == b"\"toolCall\""))
        .unwrap();
    let v: Value = serde_json::from_slice(call_line).unwrap();
    let call_id = v["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "toolCall")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let rec = PI
        .synthetic_result(&OpenCall {
            call_record: call_line,
            call_id: &call_id,
            new_id: "0badc0de",
            parent_id: v["id"].as_str().unwrap(),
            message: "the tool never answered",
        })
        .expect("a record");
    assert!(PI.closes_tool_calls());
    let k = PI.keys(&rec).unwrap();
    assert_eq!(k.results, vec![call_id.as_str()]);
    assert_eq!(k.id.as_deref(), Some("0badc0de"));
    assert!(k.missing.is_empty(), "{:?}", k.missing);
    let r: Value = serde_json::from_slice(&rec).unwrap();
    assert_eq!(r["message"]["isError"], true);
    assert_eq!(r["message"]["toolName"], "bash");
    assert!(r["message"]["timestamp"].is_number());
    // A file with it appended reads it as a result.
    let mut file = bytes.clone();
    file.extend_from_slice(&rec);
    file.push(b'\n');
    let s = read("with-result", &file).session;
    let (_, results) = tool_pairs(&s);
    assert!(results.contains(&call_id));
}
