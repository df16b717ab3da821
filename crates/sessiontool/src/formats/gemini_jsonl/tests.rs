use super::*;
use crate::formats::Parent;
use crate::formats::gemini_json::GeminiJson;
use crate::model::Role;

const HEADER: &str = r#"{"sessionId":"s-1","projectHash":"abc","startTime":"2026-04-20T09:00:00.000Z","lastUpdated":"2026-04-20T09:00:00.000Z"}"#;
const USER: &str =
    r#"{"id":"u-1","timestamp":"2026-04-20T09:00:01.000Z","type":"user","content":"hi"}"#;
const MODEL: &str =
    r#"{"id":"g-1","timestamp":"2026-04-20T09:00:02.000Z","type":"gemini","content":"hello"}"#;

fn file(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

fn read_bytes(bytes: &[u8]) -> ReadOutcome {
    GeminiJsonl
        .read(&Input {
            name: "t.jsonl",
            path: None,
            bytes,
        })
        .unwrap()
}

fn node_ids(o: &ReadOutcome) -> Vec<&str> {
    o.session.nodes.iter().map(|n| n.id.as_str()).collect()
}

#[test]
fn detect_judges_each_kind_of_line() {
    assert_eq!(judge_line(HEADER.as_bytes()), Some(95));
    assert_eq!(judge_line(USER.as_bytes()), Some(85));
    assert_eq!(judge_line(br#"{"$set":{"lastUpdated":"x"}}"#), Some(95));
    assert_eq!(judge_line(br#"{"$rewindTo":"u-1"}"#), Some(95));
    assert_eq!(judge_line(b"   "), None);
    assert_eq!(judge_line(br#"{"id":"u-1","timestamp":"#), None);
    // Other tools' records: a pi header decides nothing here (the pi format claims it), a
    // tree record is someone else's.
    assert_eq!(
        judge_line(br#"{"type":"session","id":"x","timestamp":"t","cwd":"/"}"#),
        None
    );
    assert_eq!(
        judge_line(br#"{"uuid":"a","id":"b","timestamp":"t","type":"user","content":"x"}"#),
        Some(0)
    );
    // A torn first line does not hide the header after it.
    let torn = format!("{{\"id\":\"u\n{HEADER}\n");
    assert_eq!(GeminiJsonl.detect(None, torn.as_bytes()), 95);
    assert_eq!(GeminiJsonl.detect(None, b""), 0);
}

#[test]
fn legacy_json_and_jsonl_are_told_apart() {
    let jsonl = file(&[HEADER, USER]);
    assert_eq!(GeminiJson.detect(None, &jsonl), 0);
    let legacy = b"{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"p\",\n  \"messages\": []\n}";
    assert_eq!(GeminiJsonl.detect(None, legacy), 0);
}

#[test]
fn lines_are_judged_in_the_cli_order() {
    // `$rewindTo` wins over `id`; `id` over `$set`; `$set` over a header.
    let bytes = file(&[
        HEADER,
        USER,
        MODEL,
        r#"{"$rewindTo":"g-1","id":"x-1","type":"user","content":"no"}"#,
        r#"{"id":"u-2","$set":{"summary":"no"},"timestamp":"t","type":"user","content":"yes"}"#,
    ]);
    let o = read_bytes(&bytes);
    assert_eq!(node_ids(&o), ["u-1", "u-2"]);
    assert_eq!(o.session.meta.summary, None);
}

#[test]
fn rewind_then_reappend_places_the_message_last() {
    let bytes = file(&[HEADER, USER, MODEL, r#"{"$rewindTo":"u-1"}"#, MODEL, USER]);
    let o = read_bytes(&bytes);
    assert_eq!(node_ids(&o), ["g-1", "u-1"]);
}

#[test]
fn a_missing_header_is_said() {
    let o = read_bytes(&file(&[USER]));
    assert_eq!(node_ids(&o), ["u-1"]);
    assert!(
        o.diagnostics
            .iter()
            .any(|d| d.code == "gemini-jsonl-no-header")
    );
}

#[test]
fn damaged_lines_are_skipped_with_a_diagnostic_and_the_rest_read() {
    let mut bytes = file(&[HEADER, USER, "{\"id\":\"bad\",", MODEL]);
    bytes.extend_from_slice(br#"{"id":"torn","#);
    let o = read_bytes(&bytes);
    assert_eq!(node_ids(&o), ["u-1", "g-1"]);
    assert!(o.diagnostics.iter().any(|d| d.code == "invalid-json"));
    assert!(o.diagnostics.iter().any(|d| d.code == "torn-tail"));
}

#[test]
fn no_final_newline_is_written_back_as_it_was() {
    let mut bytes = file(&[HEADER, USER]);
    bytes.pop();
    let mut o = read_bytes(&bytes);
    o.session.meta.source_format = Some(NAME.into());
    let w = GeminiJsonl
        .write(&o.session, &WriteOptions::default())
        .unwrap();
    assert_eq!(w.bytes, bytes);
}

#[test]
fn an_edited_message_is_written_from_the_model() {
    let bytes = file(&[HEADER, USER, MODEL]);
    let mut o = read_bytes(&bytes);
    o.session.meta.source_format = Some(NAME.into());
    let m = o.session.nodes[1].message_mut().unwrap();
    m.parts = vec![crate::model::Part::text("bye")];
    let w = GeminiJsonl
        .write(&o.session, &WriteOptions::default())
        .unwrap();
    let want = file(&[
        HEADER,
        USER,
        r#"{"id":"g-1","timestamp":"2026-04-20T09:00:02.000Z","type":"gemini","content":"bye"}"#,
    ]);
    assert_eq!(
        String::from_utf8(w.bytes).unwrap(),
        String::from_utf8(want).unwrap()
    );
}

#[test]
fn conversions_report_the_losses_gemini_json_reports() {
    let mut s = read_bytes(&file(&[HEADER, USER, MODEL])).session;
    s.meta.source_format = Some("qwen-jsonl".into());
    s.meta.title = Some("a title".into());
    s.nodes[0].message_mut().unwrap().role = Role::System;
    let opts = WriteOptions::default();
    let ours = GeminiJsonl.write(&s, &opts).unwrap().losses;
    let theirs = GeminiJson.write(&s, &opts).unwrap().losses;
    assert!(!ours.losses.is_empty());
    assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
}

#[test]
fn keys_are_lenient() {
    let k = GeminiJsonl
        .keys(br#"{"id":"g","type":"gemini","toolCalls":"oops"}"#)
        .unwrap();
    assert!(k.calls.is_empty());
    let k = GeminiJsonl
        .keys(br#"{"id":"g","toolCalls":[{"id":"c1","result":null},{"id":"c2","result":[]},{"name":"x"}]}"#)
        .unwrap();
    assert_eq!(k.calls, ["c1", "c2"]);
    assert_eq!(k.results, ["c2"]);
    assert_eq!(k.missing, ["type"]);
    // A `$rewindTo` that is not a string is not a rewind (nor is it for the CLI, which ignores
    // the line: fsck calls it not a record of this format).
    assert!(GeminiJsonl.keys(br#"{"$rewindTo":3}"#).is_none());
    assert_eq!(GeminiJsonl.keys(b"not json"), None);
    // A rewind's target comes as its parent; `$set.messages` has a kind of its own.
    let k = GeminiJsonl.keys(br#"{"$rewindTo":"u-1"}"#).unwrap();
    assert_eq!(k.parent, Parent::Id("u-1".into()));
    assert_eq!(k.kind.as_deref(), Some("$rewindTo"));
    let k = GeminiJsonl.keys(br#"{"$set":{"messages":[]}}"#).unwrap();
    assert_eq!(k.kind.as_deref(), Some("$set.messages"));
    let k = GeminiJsonl
        .keys(br#"{"$set":{"lastUpdated":"x"}}"#)
        .unwrap();
    assert_eq!(k.kind.as_deref(), Some("$set"));
}

/// A message whose id is another message's results node (`<id>.results`) keeps ids unique by
/// a rename, and the rename is said, as the legacy reader says it.
#[test]
fn an_id_colliding_with_a_results_node_is_renamed_and_said() {
    let call = r#"{"id":"g","timestamp":"2026-04-20T09:00:02.000Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls","args":{},"result":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"x"}}}],"status":"success"}]}"#;
    let twin =
        r#"{"id":"g.results","timestamp":"2026-04-20T09:00:03.000Z","type":"user","content":"hi"}"#;
    let o = read_bytes(&file(&[HEADER, call, twin]));
    assert_eq!(node_ids(&o), ["g", "g.results", "g.results#1"]);
    let said: Vec<_> = o
        .diagnostics
        .iter()
        .filter(|d| d.code == "duplicate-id")
        .collect();
    assert_eq!(said.len(), 1, "{:?}", o.diagnostics);
    assert!(
        said[0].message.contains("g.results#1"),
        "{}",
        said[0].message
    );
}
