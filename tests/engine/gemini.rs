//! Gemini sessions, legacy documents and Gemini CLI's JSONL recordings, into Claude Code and
//! into a Codex rollout through the two passes (pass one reads each message into its nodes and
//! keeps their ids and places, after replaying a recording's lines; pass two reads a message
//! again for its node), against the whole-session path: every Gemini fixture and the real
//! sample, detected and forced, with leaves, odd recordings (rewinds, lists in `$set` and in
//! the header, no header, damaged lines), and sessions the two passes leave to the whole path
//! (damaged, too deep), which says what they are.

use std::path::Path;

use super::{agree, fmt, leaves_in, no_adjust, options};

/// The targets of a legacy document, and of a recording: every target but its own layout
/// (which goes through the whole session but for a recording's lines given back).
fn targets_but(own: &str) -> Vec<&'static str> {
    super::targets().into_iter().filter(|&t| t != own).collect()
}

/// `bytes` (a legacy document) into each target, detected and forced, with each leaf:
/// whether every conversion was taken by the engine (each equal to the whole path's).
fn converts(name: &str, bytes: &[u8]) -> bool {
    converts_from("gemini-json", name, bytes, &targets_but("gemini-json"))
}

/// [`converts`] of a session of `format` into `targets`.
fn converts_from(format: &str, name: &str, bytes: &[u8], targets: &[&str]) -> bool {
    let mut all = true;
    for &to in targets {
        for from in [None, Some(fmt(format))] {
            for leaf in leaves_in(format, bytes) {
                let o = options(leaf.as_deref());
                all &= agree(name, bytes, from, fmt(to), &o, &no_adjust);
            }
        }
    }
    all
}

#[test]
fn every_gemini_document_converts_as_the_whole_session_path_converts_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = super::files(&root.join("fixtures/gemini-json"));
    if let Some(samples) = super::common::prerequisite::shared("gemini") {
        files.extend(super::files(&samples));
    }
    assert!(files.len() >= 11, "{files:?}");
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            converts(&path.display().to_string(), &bytes),
            "{} not taken",
            path.display()
        );
    }
}

#[test]
fn documents_the_two_passes_leave_alone_convert_as_the_whole_session_path_converts_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plain = std::fs::read_to_string(root.join("fixtures/gemini-json/plain.json")).unwrap();
    let deep = format!("{}1{}", "[".repeat(600), "]".repeat(600));
    let cut = std::fs::read(root.join("fixtures/damaged/truncated-document.json")).unwrap();
    for (name, bytes) in [
        ("cut.json", cut),
        ("half.json", plain.as_bytes()[..plain.len() / 2].to_vec()),
        (
            "deep.json",
            plain
                .replacen(
                    "\"messages\": [",
                    &format!("\"deep\": {deep},\n  \"messages\": ["),
                    1,
                )
                .into_bytes(),
        ),
    ] {
        assert!(!converts(name, &bytes), "{name}: taken");
    }
    // A lone surrogate is read by both, and said.
    let cut = plain.replacen("\"content\": \"", "\"content\": \"\\ud83d", 1);
    assert!(converts("surrogate.json", cut.as_bytes()));
}

#[test]
fn every_gemini_recording_converts_as_the_whole_session_path_converts_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = super::files(&root.join("fixtures/gemini-jsonl"));
    assert!(files.len() >= 7, "{files:?}");
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        assert!(
            converts_from("gemini-jsonl", &name, &bytes, &targets_but("gemini-jsonl")),
            "{name} not taken"
        );
        // Back into a recording: its lines as they are, for the whole branch (with a leaf the
        // whole writer lays the session out again: the whole path's, compared all the same).
        converts_from("gemini-jsonl", &name, &bytes, &["gemini-jsonl"]);
        let o = options(None);
        let to = fmt("gemini-jsonl");
        assert!(
            agree(&name, &bytes, None, to, &o, &no_adjust),
            "{name} not copied"
        );
    }
}

#[test]
fn odd_recordings_convert_as_the_whole_session_path_converts_them() {
    let header = r#"{"sessionId":"s","projectHash":"p","startTime":"t0","lastUpdated":"t0"}"#;
    let m = |id: &str, text: &str| {
        format!(r#"{{"id":"{id}","timestamp":"t","type":"user","content":"{text}"}}"#)
    };
    let call = r#"{"id":"g","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls","args":{},"result":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"x"}}}],"status":"success"},{"id":"c2","name":"ls","args":{}}]}"#;
    let taken = [
        // Versions of a message, a rewind, `$set` fields, a lone surrogate, a call left open.
        [
            header.to_string(),
            m("a", "one"),
            m("b", "two"),
            m("a", "one again"),
            r#"{"$rewindTo":"b"}"#.to_string(),
            call.to_string(),
            r#"{"$set":{"lastUpdated":"t9","summary":"s"}}"#.to_string(),
            m("c", "cut \\ud83d"),
        ]
        .join("\n"),
        // A list in `$set` replacing the messages, an unknown rewind, lines that are no record.
        [
            header.to_string(),
            m("a", "one"),
            format!(
                r#"{{"$set":{{"messages":[{},{call}],"directories":["/p"]}}}}"#,
                m("x", "listed")
            ),
            "[1]".to_string(),
            m("y", "after"),
            r#"{"$rewindTo":"nothing"}"#.to_string(),
            m("z", "last"),
            r#"{"id":"q","ty"#.to_string(),
        ]
        .join("\n"),
        // The header's list; no header at all.
        format!(
            "{{\"sessionId\":\"s\",\"projectHash\":\"p\",\"lastUpdated\":\"t1\",\"memoryScratchpad\":{{\"n\":1}},\"messages\":[{},{}]}}\r\n{call}\n",
            m("h1", "x"),
            m("h2", "y")
        ),
        [m("a", "one"), m("b", "two")].join("\n"),
    ];
    // Into a legacy document only with a last update up front (else the last message's time,
    // known when it is written: the whole path's).
    let mut into_document = 0;
    for (k, text) in taken.iter().enumerate() {
        let name = format!("odd-{k}.jsonl");
        let bytes = text.as_bytes();
        let but_documents: Vec<&str> = targets_but("gemini-jsonl")
            .into_iter()
            .filter(|&t| t != "gemini-json")
            .collect();
        assert!(
            converts_from("gemini-jsonl", &name, bytes, &but_documents),
            "{text}"
        );
        into_document += usize::from(converts_from(
            "gemini-jsonl",
            &name,
            bytes,
            &["gemini-json"],
        ));
    }
    assert_eq!(into_document, 3, "recordings into a legacy document");
    // Back into a recording, as the whole path gives it: its lines as they are (damaged lines
    // left out, a missing final line break kept missing), or laid out again (no header: the
    // session gets an id; nothing but blank lines; nothing).
    let back = ["gemini-jsonl"];
    let o = options(None);
    let more = [
        String::new(),
        "\n\n".to_string(),
        format!("{header}  \n\u{feff}{}\n", m("a", "b")),
    ];
    let mut copied = 0;
    for (k, text) in taken.iter().chain(&more).enumerate() {
        let name = format!("back-{k}.jsonl");
        let bytes = text.as_bytes();
        converts_from("gemini-jsonl", &name, bytes, &back);
        copied += usize::from(agree(&name, bytes, None, fmt(back[0]), &o, &no_adjust));
    }
    assert_eq!(copied, 4, "recordings copied");
    // A list on a line holding invalid UTF-8 has no places to read its messages from again.
    let mut bytes = format!(
        "{header}\n{{\"$set\":{{\"messages\":[{}],\"x\":\"",
        m("a", "b")
    )
    .into_bytes();
    bytes.extend_from_slice(b"\xff\"}}\n");
    assert!(
        !converts_from(
            "gemini-jsonl",
            "lossy.jsonl",
            &bytes,
            &targets_but("gemini-jsonl")
        ),
        "taken"
    );
}
