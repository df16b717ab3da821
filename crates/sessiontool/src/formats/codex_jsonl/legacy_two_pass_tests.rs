//! The older layout read in two passes by the engine (its reader is a fold over the lines,
//! [`super::Fold`]): pass one and pass two give what the whole reader gives, on every fixture
//! and on files whose meta comes late or never, whose lines are no items, whose results name
//! calls seen before, twice or never, and whose environment context names the cwd.

use super::CodexLegacyJsonl;

fn agrees_in_blocks(name: &str, bytes: &[u8]) {
    crate::engine::lines::assert_reads_as_whole(&CodexLegacyJsonl, name, bytes);
}

#[test]
fn every_fixture_reads_as_the_whole_reader_reads_it() {
    let dir = "fixtures/codex-legacy-jsonl";
    let n = crate::engine::lines::assert_folder_reads_as_whole(&CodexLegacyJsonl, dir);
    assert!(n >= 2, "{n}");
}

#[test]
fn odd_files_read_as_the_whole_reader_reads_them() {
    let meta =
        r#"{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z"}"#;
    let user = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    let context = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/home/me/app</cwd>\n</environment_context>"}]}"#;
    let call = |id: &str, name: &str| {
        format!(r#"{{"type":"function_call","name":"{name}","arguments":"{{}}","call_id":"{id}"}}"#)
    };
    let output =
        |id: &str| format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"ok"}}"#);
    let state = r#"{"record_type":"state","previous_response_id":"resp_1"}"#;
    let files: Vec<String> = vec![
        String::new(),
        meta.to_string(),
        format!("{meta}\n"),
        // The meta late, twice; lines that are no items; a line that does not parse.
        [
            user,
            meta,
            r#"{"foo":1}"#,
            "[1,2]",
            r#""a string""#,
            "nope{",
            meta,
            r#"{"type":5}"#,
        ]
        .join("\n"),
        // No meta at all; results named by the last call before them with their id.
        [
            user.to_string(),
            output("c1"),
            call("c1", "shell"),
            output("c1"),
            call("c1", "other"),
            state.to_string(),
            output("c1"),
            r#"{"type":"function_call_output","output":"no id"}"#.to_string(),
        ]
        .join("\n"),
        // The cwd from the environment context, a torn last line, CRLF, padding.
        format!("{meta}\r\n{context}\r\n{user}\r\n{{\"type\":\"mess"),
        format!("\u{feff}{meta}\n{user}\n\n\0\0\0"),
        format!(
            "{meta}\n{user}{user}\n{}\n{}\n",
            call("c2", "shell"),
            output("c2")
        ),
    ];
    for (k, text) in files.iter().enumerate() {
        agrees_in_blocks(&format!("odd-{k}.jsonl"), text.as_bytes());
    }
}
