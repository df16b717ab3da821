//! Gemini CLI session JSONL (`gemini-jsonl`): every fixture reads to the messages the CLI's
//! reader gives (first position, last value, `$set`, `$rewindTo`), writes back byte for byte,
//! gives keys for every line, and is told apart from the other formats' files; legacy
//! `gemini-json` fixtures survive a trip through this format.
//!
//! The fixtures are hand-made in the layout the CLI appends (`JSON.stringify(record) + "\n"`,
//! key orders of `chatRecordingService.ts` v0.39.0).

mod common;

use std::path::{Path, PathBuf};

use sessiontool::convert::convert;
use sessiontool::formats::gemini_json::GeminiJson;
use sessiontool::formats::gemini_jsonl::GeminiJsonl;
use sessiontool::formats::{Format, Input, Parent, ReadOutcome, WriteOptions};
use sessiontool::model::{Content, Role, Session};

const GEMINI_JSONL: &dyn sessiontool::formats::Format = &GeminiJsonl;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

const FIXTURE_FILES: &[&str] = &[
    "plain.jsonl",
    "tokens-later.jsonl",
    "tools.jsonl",
    "summary.jsonl",
    "rewind.jsonl",
    "unknown-fields.jsonl",
    "set-messages.jsonl",
];

fn path(format: &str, file: &str) -> PathBuf {
    Path::new(FIXTURES).join(format).join(file)
}

fn load(format: &str, file: &str) -> Vec<u8> {
    let p = path(format, file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn read_with(fmt: &dyn Format, name: &str, bytes: &[u8]) -> ReadOutcome {
    let mut out = fmt
        .read(&Input {
            name,
            path: None,
            bytes,
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    out.session.meta.source_format = Some(fmt.name().into());
    out
}

fn read(file: &str) -> ReadOutcome {
    read_with(&GeminiJsonl, file, &load("gemini-jsonl", file))
}

/// `(role, text)` of every message, in order.
fn transcript(s: &Session) -> Vec<(Role, String)> {
    s.nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| (m.role, m.text()))
        .collect()
}

fn ids(s: &Session) -> Vec<&str> {
    s.nodes.iter().map(|n| n.id.as_str()).collect()
}

#[test]
fn fixture_list_is_the_whole_folder() {
    let mut on_disk: Vec<String> = std::fs::read_dir(Path::new(FIXTURES).join("gemini-jsonl"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURE_FILES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn every_fixture_writes_back_byte_for_byte() {
    for file in FIXTURE_FILES {
        let bytes = load("gemini-jsonl", file);
        let out = read(file);
        let written = GEMINI_JSONL
            .write(&out.session, &WriteOptions::default())
            .unwrap();
        assert!(
            written.bytes == bytes,
            "{file}: not byte-identical:\n{}",
            String::from_utf8_lossy(&written.bytes)
        );
        assert!(
            written.losses.losses.is_empty(),
            "{file}: {:?}",
            written.losses
        );
    }
}

#[test]
fn every_fixture_is_detected_as_gemini_jsonl() {
    for file in FIXTURE_FILES {
        let bytes = load("gemini-jsonl", file);
        assert!(GEMINI_JSONL.detect(None, &bytes) >= 85, "{file}");
        for other in sessiontool::formats::all()
            .iter()
            .filter(|f| f.name() != GeminiJsonl.name())
        {
            assert!(
                other.detect(None, &bytes) < GEMINI_JSONL.detect(None, &bytes),
                "{file}: {} claims it",
                other.name()
            );
        }
    }
}

#[test]
fn other_formats_files_are_not_claimed() {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        "qwen-jsonl",
        "claude-jsonl",
        "pi-jsonl",
        "codex-jsonl",
        "gemini-json",
        "checkpoint",
    ] {
        for e in std::fs::read_dir(Path::new(FIXTURES).join(dir)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    for sub in ["claude", "codex", "pi", "gemini"] {
        // The fixtures are checked either way; the real samples when they are here.
        if let Some(dir) = common::prerequisite::shared(sub) {
            files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()));
        }
    }
    assert!(files.len() > 20);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert_eq!(GEMINI_JSONL.detect(Some(&f), &bytes), 0, "{}", f.display());
    }
}

#[test]
fn tokens_arriving_later_keep_the_first_position_and_the_last_value() {
    let s = read("tokens-later.jsonl").session;
    assert_eq!(ids(&s), ["u-1", "g-1"]);
    let g = s.nodes[1].message().unwrap();
    assert_eq!(g.usage.as_ref().and_then(|u| u.total), Some(848));
    assert!(
        matches!(&g.parts[0].content, Content::Thought { subject: Some(s), .. } if s == "Recalling ls")
    );
    assert_eq!(
        s.meta.last_updated.as_deref(),
        Some("2026-04-20T09:00:07.010Z")
    );
    // The plain file has the same message without tokens (`tokens: null` stays as it was).
    let p = read("plain.jsonl").session;
    assert_eq!(p.nodes[1].message().unwrap().usage, None);
}

#[test]
fn tool_results_folded_in_calls_become_a_tool_node() {
    let s = read("tools.jsonl").session;
    assert_eq!(ids(&s), ["u-2", "g-2", "g-2.results", "g-3"]);
    let call = &s.nodes[1].message().unwrap().parts;
    assert!(call.iter().any(|p| matches!(&p.content,
        Content::ToolCall { id: Some(id), name, .. } if id == "read_file-1745139661000-a1b2" && name == "read_file")));
    let results = s.nodes[2].message().unwrap();
    assert_eq!(results.role, Role::Tool);
    match &results.parts[0].content {
        Content::ToolResult {
            call_id,
            status,
            output,
            ..
        } => {
            assert_eq!(call_id.as_deref(), Some("read_file-1745139661000-a1b2"));
            assert_eq!(status.as_deref(), Some("success"));
            assert_eq!(output["output"], "# App\nA demo.");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn set_merges_metadata() {
    let s = read("summary.jsonl").session;
    assert_eq!(s.meta.summary.as_deref(), Some("Explained ls -a"));
    assert_eq!(
        s.meta.directories,
        Some(vec!["/home/dev/app".into(), "/home/dev/lib".into()])
    );
    assert_eq!(
        s.meta.id.as_deref(),
        Some("7c1e0a52-3f1b-4c8e-9a4d-2b6f0e9d1a11")
    );
    assert_eq!(
        s.meta.start_time.as_deref(),
        Some("2026-04-20T09:00:00.000Z")
    );
}

#[test]
fn set_messages_replaces_the_list() {
    let s = read("set-messages.jsonl").session;
    assert_eq!(ids(&s), ["u-1", "g-1", "w-1"]);
    assert_eq!(s.nodes[2].message().unwrap().role, Role::Warning);
    assert_eq!(
        s.meta.last_updated.as_deref(),
        Some("2026-04-20T09:05:00.000Z")
    );
    assert!(!s.meta.extra.contains_key("messages"));
}

#[test]
fn rewind_deletes_the_message_and_every_later_one() {
    let out = read("rewind.jsonl");
    assert_eq!(ids(&out.session), ["u-1", "g-1", "u-3"]);
    assert_eq!(
        transcript(&out.session)[2],
        (Role::User, "Show only hidden files".into())
    );
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
}

#[test]
fn rewind_to_an_unknown_id_empties_the_session_and_says_so() {
    let mut bytes = load("gemini-jsonl", "plain.jsonl");
    bytes.extend_from_slice(b"{\"$rewindTo\":\"nope\"}\n");
    let out = read_with(&GeminiJsonl, "x.jsonl", &bytes);
    assert!(out.session.nodes.is_empty());
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.code == "gemini-jsonl-rewind-unknown")
    );
    let back = GEMINI_JSONL
        .write(&out.session, &WriteOptions::default())
        .unwrap();
    assert_eq!(back.bytes, bytes);
}

#[test]
fn unknown_fields_are_kept() {
    let out = read("unknown-fields.jsonl");
    let s = &out.session;
    assert_eq!(s.meta.extra["kind"], "main");
    assert_eq!(s.meta.extra["futureHeaderField"]["x"], 1);
    assert_eq!(s.meta.extra["futureSetField"], "y");
    assert_eq!(
        s.meta.extra["memoryScratchpad"]["notes"],
        "user likes short answers"
    );
    assert_eq!(
        s.nodes[0].message().unwrap().extra["futureMessageField"],
        true
    );
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.code == "gemini-jsonl-unknown-record")
    );
}

#[test]
fn an_edited_session_is_rewritten_as_the_cli_rewrites_it() {
    let mut s = read("unknown-fields.jsonl").session;
    s.nodes.truncate(1);
    let w = GEMINI_JSONL.write(&s, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(w.bytes.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0]
            .starts_with(r#"{"sessionId":"7c1e0a52-3f1b-4c8e-9a4d-2b6f0e9d1a11","projectHash":"#)
    );
    assert!(lines[0].contains(r#""kind":"main""#));
    assert!(lines[1].contains(r#""futureMessageField":true"#));
    assert_eq!(
        lines[2],
        r#"{"$set":{"memoryScratchpad":{"notes":"user likes short answers"}}}"#
    );
    let again = read_with(&GeminiJsonl, "again", &w.bytes).session;
    assert_eq!(transcript(&again), transcript(&s));
}

#[test]
fn keys_on_every_fixture_line() {
    for file in FIXTURE_FILES {
        let bytes = load("gemini-jsonl", file);
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).unwrap();
            let Some(k) = GEMINI_JSONL.keys(line) else {
                // Only a line the CLI ignores has no keys (fsck: not a record of this format).
                assert!(
                    ["id", "$set", "$rewindTo", "projectHash"]
                        .iter()
                        .all(|f| v.get(f).is_none()),
                    "{file}: no keys for {v}"
                );
                continue;
            };
            if let Some(id) = v.get("id").and_then(|i| i.as_str()) {
                assert_eq!(k.parent, Parent::None);
                assert_eq!(k.id.as_deref(), Some(id));
                assert_eq!(k.kind.as_deref(), v["type"].as_str());
            } else if let Some(set) = v.get("$set") {
                let kind = match set.get("messages") {
                    Some(_) => "$set.messages",
                    None => "$set",
                };
                assert_eq!((k.id, k.kind.as_deref()), (None, Some(kind)));
            } else if let Some(target) = v.get("$rewindTo") {
                assert_eq!((k.id, k.kind.as_deref()), (None, Some("$rewindTo")));
                assert_eq!(k.parent, Parent::Id(target.as_str().unwrap().into()));
            } else if v.get("projectHash").is_some() {
                assert_eq!(k.kind.as_deref(), Some("header"));
                assert_eq!(k.session_id.as_deref(), v["sessionId"].as_str());
            } else {
                panic!("{file}: keys for a line the CLI ignores: {v}");
            }
        }
    }
    let tools = load("gemini-jsonl", "tools.jsonl");
    let lines: Vec<&[u8]> = tools.split(|&b| b == b'\n').collect();
    let pending = GEMINI_JSONL.keys(lines[3]).unwrap();
    assert_eq!(pending.calls, ["read_file-1745139661000-a1b2"]);
    assert!(pending.results.is_empty());
    let done = GEMINI_JSONL.keys(lines[4]).unwrap();
    assert_eq!(done.calls, ["read_file-1745139661000-a1b2"]);
    assert_eq!(done.results, ["read_file-1745139661000-a1b2"]);
    assert_eq!(GEMINI_JSONL.keys(b"[1,2]"), None);
}

/// Roles, texts, tool calls (id, name, args) and results (id, output) of the conversation.
fn essence(s: &Session) -> Vec<String> {
    let mut out = Vec::new();
    for m in s.nodes.iter().filter_map(|n| n.message()) {
        out.push(format!("{:?}: {}", m.role, m.text()));
        for p in &m.parts {
            match &p.content {
                Content::ToolCall { id, name, args, .. } => {
                    out.push(format!("  call {id:?} {name} {args}"))
                }
                Content::ToolResult {
                    call_id, output, ..
                } => out.push(format!("  result {call_id:?} {output}")),
                Content::Thought { text, .. } => out.push(format!("  thought {text}")),
                _ => {}
            }
        }
    }
    out
}

#[test]
fn gemini_json_fixtures_survive_a_trip_through_jsonl() {
    let mut n = 0;
    for e in std::fs::read_dir(Path::new(FIXTURES).join("gemini-json")).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let name = p.display().to_string();
        let input = Input {
            name: &name,
            path: Some(&p),
            bytes: &bytes,
        };
        let original = read_with(&GeminiJson, &name, &bytes).session;
        let jsonl = convert(
            &input,
            Some(&GeminiJson),
            &GeminiJsonl,
            &WriteOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(GEMINI_JSONL.detect(None, &jsonl.bytes) >= 85, "{name}");
        let via = read_with(&GeminiJsonl, "via.jsonl", &jsonl.bytes);
        // Only what the legacy reader said too (a message type it does not know, say).
        assert!(
            via.diagnostics
                .iter()
                .all(|d| d.severity == sessiontool::diag::Severity::Info),
            "{name}: {:?}",
            via.diagnostics
        );
        assert_eq!(essence(&via.session), essence(&original), "{name}");
        assert_eq!(via.session.meta.id, original.meta.id, "{name}");
        // And back to the legacy format.
        let jinput = Input {
            name: "via.jsonl",
            path: None,
            bytes: &jsonl.bytes,
        };
        let back = convert(
            &jinput,
            Some(&GeminiJsonl),
            &GeminiJson,
            &WriteOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = read_with(&GeminiJson, "back.json", &back.bytes).session;
        assert_eq!(essence(&back), essence(&original), "{name}");
        n += 1;
    }
    assert!(n >= 10);
}
