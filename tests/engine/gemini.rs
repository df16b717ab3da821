//! Gemini legacy sessions (one JSON document) into Claude Code and into a Codex rollout
//! through the two passes (pass one reads each message into its nodes and keeps their ids and
//! places; pass two reads a message again for its node), against the whole-session path:
//! every Gemini fixture and the real sample, detected and forced, with leaves, and documents
//! the two passes leave to the whole path (damaged, too deep), which says what they are.

use std::path::Path;

use super::{agree, fmt, leaves_in, no_adjust, options};

const TARGETS: [&str; 2] = ["claude-jsonl", "codex-jsonl"];

/// `bytes` into each target, detected and forced, with each leaf: whether every conversion
/// was taken by the engine (each equal to the whole path's).
fn converts(name: &str, bytes: &[u8]) -> bool {
    let mut all = true;
    for to in TARGETS {
        for from in [None, Some(fmt("gemini-json"))] {
            for leaf in leaves_in("gemini-json", bytes) {
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
