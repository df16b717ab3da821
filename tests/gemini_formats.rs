//! Gemini legacy session JSON (`gemini-json`) and `/chat save` checkpoints (`checkpoint`):
//! every fixture reads and writes back byte for byte, is detected as its own format, and damaged
//! copies fail with a located `ReadError` instead of a panic.
//!
//! The fixtures are hand-made in the layout the CLI writes (`JSON.stringify(x, null, 2)`: two
//! spaces, non-ASCII raw, no final newline; key orders as in FORMATS.md 1 and 3).

use std::path::{Path, PathBuf};

use sessiontool::formats::{self, Format, Input, ReadError, WriteOptions};
use sessiontool::model::{Body, Content, Role};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples");

mod common;
use common::{CHECKPOINT, GEMINI_JSON};

fn format(name: &str) -> &'static dyn Format {
    formats::by_name(name).unwrap_or_else(|| panic!("no format named {name}"))
}

fn fixture_path(format: &str, file: &str) -> PathBuf {
    Path::new(FIXTURES).join(format).join(file)
}

fn load(format: &str, file: &str) -> Vec<u8> {
    let path = fixture_path(format, file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(
    fmt: &dyn Format,
    name: &str,
    bytes: &[u8],
) -> Result<sessiontool::formats::ReadOutcome, ReadError> {
    fmt.read(&Input {
        name,
        path: None,
        bytes,
    })
}

/// The first line where two texts differ, for a readable failure.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let got = String::from_utf8_lossy(got);
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  want: {w}\n  got:  {g}", i + 1);
        }
    }
    format!(
        "one is a prefix of the other (want {} lines / {} bytes, got {} lines / {} bytes)",
        want.lines().count(),
        want.len(),
        got.lines().count(),
        got.len()
    )
}

fn assert_round_trip(fmt_name: &str, name: &str, bytes: &[u8]) {
    let fmt = format(fmt_name);
    let outcome = read(fmt, name, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let written = fmt
        .write(&outcome.session, &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{name}: write: {e}"));
    assert!(
        written.bytes == bytes,
        "{name}: {fmt_name} read+write is not byte-identical; {}",
        first_difference(bytes, &written.bytes)
    );
    assert!(
        written.losses.is_empty(),
        "{name}: writing back to its own format reported losses: {:?}",
        written.losses
    );
}

fn round_trip_fixture(fmt_name: &str, file: &str) {
    let bytes = load(fmt_name, file);
    // The fixtures themselves are in the CLI's layout: no trailing newline, two-space indent.
    assert!(
        !bytes.ends_with(b"\n"),
        "{file}: fixture ends with a newline"
    );
    assert!(bytes.starts_with(b"{\n  \"") || bytes.starts_with(b"[\n  {"));
    assert_round_trip(fmt_name, file, &bytes);
}

macro_rules! round_trips {
    ($($test:ident: $fmt:literal / $file:literal,)*) => {$(
        #[test]
        fn $test() {
            round_trip_fixture($fmt, $file);
        }
    )*};
}

round_trips! {
    round_trip_plain: "gemini-json" / "plain.json",
    round_trip_tools: "gemini-json" / "tools.json",
    round_trip_thoughts: "gemini-json" / "thoughts.json",
    round_trip_v028_parts: "gemini-json" / "v028-parts.json",
    round_trip_notices: "gemini-json" / "notices.json",
    round_trip_unknown_fields: "gemini-json" / "unknown-fields.json",
    round_trip_unicode: "gemini-json" / "unicode.json",
    round_trip_empty: "gemini-json" / "empty.json",
    round_trip_every_part: "gemini-json" / "every-part.json",
    round_trip_seed003: "gemini-json" / "seed003.json",
    round_trip_checkpoint_object: "checkpoint" / "checkpoint-object.json",
    round_trip_checkpoint_array: "checkpoint" / "checkpoint-array.json",
    round_trip_checkpoint_tag: "checkpoint" / "checkpoint-my%20tag.json",
}

#[test]
fn every_fixture_is_listed() {
    for (dir, listed) in [("gemini-json", GEMINI_JSON), ("checkpoint", CHECKPOINT)] {
        let mut found: Vec<String> = std::fs::read_dir(Path::new(FIXTURES).join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        found.sort();
        let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            found, listed,
            "fixtures/{dir} and the list in this test differ"
        );
    }
}

/// The real Gemini sample, when `../shared` is here (said, or a failure in CI, when not).
fn pomodoro() -> Option<Vec<u8>> {
    common::prerequisite::shared("gemini/pomodoro-timer.json").map(|p| std::fs::read(p).unwrap())
}

/// A real file written by Gemini CLI (about v0.9). The file as stored in `../shared/samples`
/// ends with a newline that the CLI itself never writes (it came with the copy); a faithful
/// round trip still has to give the same bytes back.
#[test]
fn round_trip_pomodoro_sample() {
    let Some(bytes) = pomodoro() else { return };
    assert_round_trip("gemini-json", "pomodoro-timer.json", &bytes);
}

/// Without its final newline the sample is exactly what the CLI wrote: that must round-trip
/// whatever the newline handling.
#[test]
fn round_trip_pomodoro_sample_as_written_by_the_cli() {
    let Some(bytes) = pomodoro() else { return };
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    assert_round_trip("gemini-json", "pomodoro-timer.json", bytes);
}

/// A file that ends with a newline (an editor or a copy added it) keeps it, and any other
/// white space after the document.
#[test]
fn final_newline_is_kept() {
    for (fmt, file) in [
        ("gemini-json", "tools.json"),
        ("checkpoint", "checkpoint-object.json"),
        ("checkpoint", "checkpoint-array.json"),
    ] {
        for tail in ["\n", "\n\n", "\r\n", " \t\n "] {
            let mut bytes = load(fmt, file);
            bytes.extend_from_slice(tail.as_bytes());
            assert_round_trip(fmt, file, &bytes);
        }
    }
}

/// The tail is the file's, not the session's: converted into another whole-file format, the
/// document ends as that tool writes it.
#[test]
fn a_converted_document_ends_as_its_tool_writes_it() {
    let mut bytes = load("gemini-json", "tools.json");
    bytes.extend_from_slice(b"\n\n");
    let session = read(format("gemini-json"), "tools.json", &bytes)
        .unwrap()
        .session;
    let written = format("checkpoint")
        .write(&session, &WriteOptions::default())
        .unwrap();
    assert!(written.bytes.ends_with(b"}") || written.bytes.ends_with(b"]"));
}

#[test]
fn pomodoro_sample_reads_as_expected() {
    let Some(bytes) = pomodoro() else { return };
    let outcome = read(format("gemini-json"), "pomodoro-timer.json", &bytes).unwrap();
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    let s = &outcome.session;
    assert_eq!(
        s.meta.id.as_deref(),
        Some("0b23371a-ce2e-4b1c-81a0-44af5d94d9ce")
    );
    // 19 messages, 9 of them with tool calls whose results become a tool node each.
    let messages = s.nodes.iter().filter_map(|n| n.message()).count();
    let tools = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.role == Role::Tool)
        .count();
    assert_eq!(messages - tools, 19);
    assert_eq!(tools, 9);
    // The one failed `replace` is an error result.
    let errors = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p.content, Content::ToolResult { is_error: true, .. }))
        .count();
    assert_eq!(errors, 1);
}

// ------------------------------------------------------------------------------------------
// What the readers make of the fixtures (by value, so a writer that only echoes is not enough)

#[test]
fn tools_fixture_reads_calls_and_results() {
    let bytes = load("gemini-json", "tools.json");
    let s = read(format("gemini-json"), "tools.json", &bytes)
        .unwrap()
        .session;
    let roles: Vec<Role> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.role)
        .collect();
    use Role::*;
    assert_eq!(
        roles,
        [User, Assistant, Tool, Assistant, User, Assistant, User]
    );
    let tool = s.nodes[2].message().unwrap();
    assert_eq!(s.nodes[2].parent.as_deref(), Some(s.nodes[1].id.as_str()));
    let results: Vec<(Option<&str>, bool, Option<&str>)> = tool
        .parts
        .iter()
        .map(|p| match &p.content {
            Content::ToolResult {
                call_id,
                is_error,
                status,
                ..
            } => (call_id.as_deref(), *is_error, status.as_deref()),
            other => panic!("not a result: {other:?}"),
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                Some("read_file-1759312481552-9c1e0f6b3a2d4"),
                false,
                Some("success")
            ),
            (
                Some("run_shell_command-1759312481553-41b7e2a09c5f1"),
                true,
                Some("error")
            ),
        ]
    );
    // The cancelled call (result: null) has no result node after it.
    let cancelled = s.nodes[5].message().unwrap();
    assert!(matches!(
        &cancelled.parts[..],
        [p] if matches!(&p.content, Content::ToolCall { name, .. } if name == "write_file")
    ));
    assert_eq!(s.nodes[6].message().unwrap().role, User);
}

#[test]
fn thoughts_fixture_reads_subjects() {
    let bytes = load("gemini-json", "thoughts.json");
    let s = read(format("gemini-json"), "thoughts.json", &bytes)
        .unwrap()
        .session;
    let m = s.nodes[1].message().unwrap();
    let thoughts: Vec<(Option<&str>, &str)> = m
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            Content::Thought { text, subject, .. } => Some((subject.as_deref(), text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(thoughts.len(), 3);
    assert_eq!(thoughts[0].0, Some("Recalling the documented guarantee"));
    assert_eq!(thoughts[2].0, Some(""));
    assert!(m.usage.is_none(), "tokens: null is no usage");
    assert_eq!(m.model.as_deref(), Some("gemini-3-pro-preview"));
}

#[test]
fn checkpoint_fixtures_read_roles_and_context() {
    let cp = format("checkpoint");
    let bytes = load("checkpoint", "checkpoint-object.json");
    let s = read(cp, "checkpoint-object.json", &bytes).unwrap().session;
    let roles: Vec<Role> = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.role)
        .collect();
    use Role::*;
    // The CLI's own context turn is kept as a checkpoint event, not as the user's first message.
    assert!(matches!(
        &s.nodes[0].body,
        sessiontool::model::Body::Event(sessiontool::model::Event::Custom { kind, .. }) if kind == "checkpoint.context"
    ));
    assert_eq!(roles, [User, Assistant, Tool, Assistant]);
    let model = s.nodes[2].message().unwrap();
    assert_eq!(
        model.parts.iter().map(|p| p.kind()).collect::<Vec<_>>(),
        ["thought", "text", "tool_call"]
    );
    assert!(
        model.parts[0]
            .signature
            .as_deref()
            .is_some_and(|s| s.starts_with("CiQB"))
    );
    assert_eq!(
        s.meta.extra.get("authType").and_then(|v| v.as_str()),
        Some("oauth-personal")
    );

    let bytes = load("checkpoint", "checkpoint-array.json");
    let s = read(cp, "checkpoint-array.json", &bytes).unwrap().session;
    assert_eq!(s.nodes.len(), 6);
    assert!(s.meta.extra.is_empty());
}

// ------------------------------------------------------------------------------------------
// Detection

#[test]
fn fixtures_detect_as_their_format() {
    for (fmt, files) in [("gemini-json", GEMINI_JSON), ("checkpoint", CHECKPOINT)] {
        for file in files.iter() {
            let path = fixture_path(fmt, file);
            let bytes = load(fmt, file);
            let by_content = formats::detect(None, &bytes).map(|f| f.name());
            assert_eq!(by_content, Some(fmt), "{file} (content only)");
            let with_name = formats::detect(Some(&path), &bytes).map(|f| f.name());
            assert_eq!(with_name, Some(fmt), "{file} (with its path)");
        }
    }
}

/// Detection of the CLI's real file names, whatever the folder.
#[test]
fn names_alone_do_not_decide_against_content() {
    let bytes = load("gemini-json", "plain.json");
    let misnamed = Path::new("/tmp/checkpoint-plain.json");
    assert_eq!(
        formats::detect(Some(misnamed), &bytes).map(|f| f.name()),
        Some("gemini-json"),
        "a session named like a checkpoint is still a session"
    );
    let bytes = load("checkpoint", "checkpoint-object.json");
    let misnamed = Path::new("/tmp/session-2026-02-25T11-02-0b1c2d3e.json");
    assert_eq!(
        formats::detect(Some(misnamed), &bytes).map(|f| f.name()),
        Some("checkpoint"),
        "a checkpoint named like a session is still a checkpoint"
    );
}

#[test]
fn samples_are_not_mistaken_for_gemini_formats() {
    if common::prerequisite::shared("").is_none() {
        return;
    }
    let dirs = std::fs::read_dir(SAMPLES).unwrap();
    let mut checked = 0;
    for dir in dirs {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let got = formats::detect(Some(&path), &bytes).map(|f| f.name());
            let is_gemini = dir.file_name().is_some_and(|n| n == "gemini")
                && path.extension().is_some_and(|e| e == "json");
            if is_gemini {
                assert_eq!(got, Some("gemini-json"), "{}", path.display());
            } else {
                assert!(
                    !matches!(got, Some("gemini-json" | "checkpoint")),
                    "{} detected as {got:?}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 9, "only {checked} sample files found");
}

// ------------------------------------------------------------------------------------------
// Damage: truncation and garbage

fn assert_located(err: &ReadError, name: &str, bytes: &[u8], what: &str) {
    assert_eq!(err.location.file, name, "{what}");
    let (Some(line), Some(offset)) = (err.location.line, err.location.offset) else {
        panic!("{what}: error without line and offset: {err}");
    };
    assert!(line >= 1, "{what}: line {line}");
    assert!(
        offset as usize <= bytes.len(),
        "{what}: offset {offset} past the end"
    );
    // The line must be the one the offset is on.
    let newlines = bytes[..offset as usize]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    assert_eq!(
        line,
        newlines + 1,
        "{what}: line {line} vs offset {offset}: {err}"
    );
}

/// Cut points: near both ends, and every `step` bytes between.
fn cuts(len: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..len).step_by(step).collect();
    v.extend([1, 2, len / 2, len.saturating_sub(2), len.saturating_sub(1)]);
    v.retain(|&c| c < len);
    v.sort();
    v.dedup();
    v
}

#[test]
fn truncated_fixtures_give_located_errors() {
    for (fmt_name, files) in [("gemini-json", GEMINI_JSON), ("checkpoint", CHECKPOINT)] {
        let fmt = format(fmt_name);
        for file in files.iter() {
            let bytes = load(fmt_name, file);
            for cut in cuts(bytes.len(), 13) {
                let part = &bytes[..cut];
                let what = format!("{file} cut at {cut}");
                match read(fmt, file, part) {
                    Ok(_) => panic!("{what}: read a truncated file without error"),
                    Err(e) => assert_located(&e, file, part, &what),
                }
            }
        }
    }
}

#[test]
fn garbage_gives_located_errors() {
    let garbage: &[&[u8]] = &[
        b"",
        b"   \n\t ",
        b"\xEF\xBB\xBF",
        b"\x00\x00\x00\x00",
        b"\xff\xfe{\x00\"\x00",
        b"{\"sessionId\": \"x\", \"messages\": [}",
        b"{\n  \"history\": [\n    {\"role\": \"user\",, }\n  ]\n}",
        b"[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]}]]",
        b"{\"a\":1}{\"b\":2}",
        b"{\"sessionId\":\"x\",\"messages\":[]}\ntrailing words",
        b"<!DOCTYPE html><html></html>",
        b"{\"text\": \"\xc3\x28\"}",
        b"\xEF\xBB\xBF{\n  \"messages\": [\n    {\"id\": \"1\",",
    ];
    for fmt_name in ["gemini-json", "checkpoint"] {
        let fmt = format(fmt_name);
        for (i, g) in garbage.iter().enumerate() {
            let what = format!("{fmt_name}, garbage #{i}: {:?}", String::from_utf8_lossy(g));
            match read(fmt, "garbage.json", g) {
                Ok(o) => panic!("{what}: read without error: {:?}", o.session),
                Err(e) => assert_located(&e, "garbage.json", g, &what),
            }
        }
    }
}

/// Valid JSON of the wrong shape: an error (never a panic, never an empty session).
#[test]
fn wrong_shapes_are_errors() {
    let cases: &[(&str, &[u8])] = &[
        ("gemini-json", b"null"),
        ("gemini-json", b"42"),
        ("gemini-json", b"\"text\""),
        ("gemini-json", b"[]"),
        ("gemini-json", b"{}"),
        ("gemini-json", b"{\"sessionId\":\"x\",\"messages\":{}}"),
        ("gemini-json", b"{\"history\":[]}"),
        ("checkpoint", b"null"),
        ("checkpoint", b"true"),
        ("checkpoint", b"{}"),
        ("checkpoint", b"{\"history\":{}}"),
        ("checkpoint", b"{\"sessionId\":\"x\",\"messages\":[]}"),
    ];
    for (fmt_name, bytes) in cases {
        let r = read(format(fmt_name), "shape.json", bytes);
        let err = r.err().unwrap_or_else(|| {
            panic!(
                "{fmt_name} read {:?} without error",
                String::from_utf8_lossy(bytes)
            )
        });
        assert_eq!(err.location.file, "shape.json");
        assert!(!err.message.is_empty());
    }
}

/// Reads, writes back with default options, and compares as JSON values.
fn assert_json_round_trip(fmt_name: &str, what: &str, bytes: &[u8]) {
    let fmt = format(fmt_name);
    let o = read(fmt, what, bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    let w = fmt
        .write(&o.session, &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{what}: write: {e}"));
    let back: serde_json::Value = serde_json::from_slice(&w.bytes).unwrap();
    let orig: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    assert_eq!(
        back,
        orig,
        "{what}: {fmt_name} read+write changed the content:\n{}",
        String::from_utf8_lossy(&w.bytes)
    );
}

/// Seed 003's own example session has tool calls with only `id`, `name` and `args` (no status,
/// no timestamp, no result). Writing such a session back must not invent a status.
#[test]
fn gemini_json_tool_call_without_status_is_not_given_one() {
    let doc = br#"{"sessionId":"s1","projectHash":"h","startTime":"2025-11-12T07:00:00.000Z","lastUpdated":"2025-11-12T07:01:00.000Z","messages":[{"id":"m1","timestamp":"2025-11-12T07:01:00.000Z","type":"gemini","content":"Checking.","toolCalls":[{"id":"c1","name":"get_weather","args":{"location":"Oslo"}}]}]}"#;
    assert_json_round_trip("gemini-json", "no-status.json", doc);
}

/// A message that is not an object is "kept as is" by the reader; the writer must put it back
/// (or at least report it as lost), not drop it silently.
#[test]
fn gemini_json_non_object_message_is_not_dropped() {
    let doc = br#"{"sessionId":"s1","projectHash":"h","startTime":"t0","lastUpdated":"t1","messages":[{"id":"m1","timestamp":"t0","type":"user","content":"hi"},"stray",{"id":"m2","timestamp":"t1","type":"user","content":"again"}]}"#;
    let fmt = format("gemini-json");
    let o = read(fmt, "stray.json", doc).unwrap();
    let w = fmt.write(&o.session, &WriteOptions::default()).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&w.bytes).unwrap();
    let kept = back["messages"].as_array().unwrap().len() == 3;
    assert!(
        kept || !w.losses.is_empty(),
        "the non-object message vanished without a loss report:\n{}",
        String::from_utf8_lossy(&w.bytes)
    );
}

/// A non-object entry in `toolCalls` or `thoughts` stays where it was instead of moving into
/// `content`.
#[test]
fn gemini_json_odd_tool_call_and_thought_entries_stay_in_place() {
    let doc = br#"{"sessionId":"s1","projectHash":"h","startTime":"t0","lastUpdated":"t1","messages":[{"id":"m1","timestamp":"t1","type":"gemini","content":"ok","thoughts":["loose thought"],"tokens":{"input":1,"output":2,"cached":0,"thoughts":0,"tool":0,"total":3},"model":"gemini-2.5-pro","toolCalls":[null,{"id":"c1","name":"ls","args":{},"result":null,"status":"cancelled","timestamp":"t1"}]}]}"#;
    assert_json_round_trip("gemini-json", "odd-entries.json", doc);
}

/// A checkpoint history entry that is not an object is "kept as is" by the reader; it must be
/// written back as it was, not wrapped in a `{role: "user", parts: [...]}` turn.
#[test]
fn checkpoint_non_object_entry_is_written_back_as_is() {
    let doc = br#"[{"role":"user","parts":[{"text":"<session_context>\nctx\n</session_context>"}]},"stray",{"role":"user","parts":[{"text":"hi"}]}]"#;
    assert_json_round_trip("checkpoint", "stray.json", doc);
}

/// A checkpoint whose first entry is not one of the context texts this tool knows (a Qwen Code
/// `/chat save`, an older or newer CLI, a hand-made file) must still round-trip: the writer
/// adds its own context turn only when converting from another format.
#[test]
fn checkpoint_without_known_context_round_trips() {
    let doc = b"[\n  {\n    \"role\": \"user\",\n    \"parts\": [\n      {\n        \"text\": \"hello\"\n      }\n    ]\n  },\n  {\n    \"role\": \"model\",\n    \"parts\": [\n      {\n        \"text\": \"Hi! What can I do for you?\"\n      }\n    ]\n  }\n]";
    assert_round_trip("checkpoint", "no-context.json", doc);
}

/// Odd but valid entries read with diagnostics and never panic on write.
#[test]
fn odd_entries_are_not_fatal() {
    let gj = format("gemini-json");
    let odd = br#"{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","messages":[7,{"type":"user"},{"id":"a","type":"gemini","content":null,"toolCalls":[5,{"name":"x"}],"thoughts":["loose"],"tokens":{"input":-1}}]}"#;
    let o = read(gj, "odd.json", odd).expect("odd but valid session");
    assert!(!o.diagnostics.is_empty());
    gj.write(&o.session, &WriteOptions::default()).unwrap();

    let cp = format("checkpoint");
    let odd = br#"[1,{"role":"model"},{"role":"function","parts":[{"functionResponse":{"name":"f","response":{"output":"x"}}}]},{"parts":"just text"}]"#;
    let o = read(cp, "odd.json", odd).expect("odd but valid checkpoint");
    assert!(!o.diagnostics.is_empty());
    let w = cp.write(&o.session, &WriteOptions::default()).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&w.bytes).unwrap();
    // An unusual role word is written back as it was.
    assert!(
        back.as_array()
            .unwrap()
            .iter()
            .any(|e| e["role"] == "function")
    );
}

/// Errors point at the byte that is wrong, also when the file starts with a BOM or blank lines
/// (which the readers skip before parsing).
#[test]
fn error_locations_are_exact() {
    // (input, line, offset of the offending byte)
    let cases: &[(&[u8], u64, u64)] = &[
        (b"{\"messages\": ]}", 1, 13),
        (b"{\n  \"messages\": [\n    {\"id\": 1,, }\n  ]\n}", 3, 31),
        (b"\n\n{\"messages\": ]}", 3, 15),
        (b"  \n{\"messages\": ]}", 2, 16),
        (b"\xEF\xBB\xBF{\"messages\": ]}", 1, 16),
    ];
    for fmt_name in ["gemini-json", "checkpoint"] {
        for (bytes, line, offset) in cases {
            let what = format!("{fmt_name}: {:?}", String::from_utf8_lossy(bytes));
            let err = read(format(fmt_name), "bad.json", bytes).expect_err(&what);
            assert_eq!(
                (err.location.line, err.location.offset),
                (Some(*line), Some(*offset)),
                "{what}: {err}"
            );
        }
    }
}

/// Corrupted copies (bytes overwritten) never panic in read or in write-after-read.
#[test]
fn corrupted_fixtures_never_panic() {
    let noise: &[u8] = b"{}[]\",:\\0\n\xff\xc3 ";
    for (fmt_name, files) in [("gemini-json", GEMINI_JSON), ("checkpoint", CHECKPOINT)] {
        let fmt = format(fmt_name);
        for file in files.iter() {
            let bytes = load(fmt_name, file);
            let mut seed: u64 = 0x9E37_79B9_7F4A_7C15 ^ bytes.len() as u64;
            for _ in 0..200 {
                let mut b = bytes.clone();
                for _ in 0..3 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let at = (seed % b.len() as u64) as usize;
                    b[at] = noise[(seed >> 32) as usize % noise.len()];
                }
                match read(fmt, file, &b) {
                    Ok(o) => {
                        let _ = fmt.write(&o.session, &WriteOptions::default());
                    }
                    // Still valid JSON (of the wrong shape): naming the file is enough.
                    Err(e) if serde_json::from_slice::<serde_json::Value>(&b).is_ok() => {
                        assert_eq!(e.location.file, *file)
                    }
                    Err(e) => assert_located(&e, file, &b, file),
                }
            }
        }
    }
}

/// Unknown message types survive as events; their writer puts them back in place.
#[test]
fn unknown_message_type_is_kept_as_an_event() {
    let bytes = load("gemini-json", "unknown-fields.json");
    let o = read(format("gemini-json"), "unknown-fields.json", &bytes).unwrap();
    assert!(
        o.diagnostics
            .iter()
            .any(|d| d.code == "unknown-message-type"),
        "{:?}",
        o.diagnostics
    );
    assert!(
        o.session
            .nodes
            .iter()
            .any(|n| matches!(&n.body, Body::Event(_)))
    );
    assert!(o.session.meta.extra.contains_key("experiments"));
}

/// What a checkpoint's entries say beyond their nodes comes back: an entry without `parts`,
/// ids the reader gave a call and its response (neither had one) left out again, the array
/// form; and a call whose id the file gave is kept.
#[test]
fn checkpoint_entries_come_back_as_they_were() {
    let doc = serde_json::json!([
        {"role": "user"},
        {"role": "model", "parts": [
            {"functionCall": {"name": "ls", "args": {}}},
            {"functionCall": {"id": "c2", "name": "cat", "args": {}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "ls", "response": {"output": "a"}}},
            {"functionResponse": {"id": "c2", "name": "cat", "response": {"output": "b"}}}
        ]}
    ]);
    let bytes = serde_json::to_vec_pretty(&doc).unwrap();
    let outcome = read(format("checkpoint"), "checkpoint-t.json", &bytes).unwrap();
    // Read, the call and its response share an id.
    let ids: Vec<Option<String>> = outcome.session.nodes[1..]
        .iter()
        .flat_map(|n| n.message().unwrap().parts.iter())
        .map(|p| match &p.content {
            Content::ToolCall { id, .. } => id.clone(),
            Content::ToolResult { call_id, .. } => call_id.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(ids[0], ids[2]);
    assert!(ids[0].is_some());
    assert_round_trip("checkpoint", "checkpoint-t.json", &bytes);
}
