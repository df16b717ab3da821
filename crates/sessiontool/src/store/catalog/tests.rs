//! `list`'s two-pass reading of Claude Code sessions and Codex rollouts ([`read_file`] through
//! [`crate::engine::view::View`]) against its whole-session reading ([`read`]): the same entry,
//! field for field, for every fixture and real sample that is one, and for cut copies of them
//! (torn last lines, missing parents, half a branch, no metadata line).

use std::path::{Path, PathBuf};

use super::{Entry, Health, read, read_file};
use crate::store::stored::StoredKind;
use crate::store::tool::Tool;

/// Every fixture and real sample (`../shared/samples`, when it is here) whose content is in
/// `format`.
fn files_of(format: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let samples = root.join("../../../shared/samples");
    crate::prerequisite::present(
        samples.is_dir(),
        &format!("the real samples: {} is absent", samples.display()),
    );
    let mut files = Vec::new();
    for dir in [root.join("fixtures"), samples]
        .into_iter()
        .filter(|d| d.is_dir())
    {
        for entry in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let entry = entry.expect("fixtures are readable");
            let path = entry.path();
            if entry.file_type().is_file() {
                let bytes = std::fs::read(path).expect("fixture");
                let detected = crate::formats::detect(Some(path), &bytes);
                if detected.is_some_and(|f| f.name() == format) {
                    files.push(path.to_path_buf());
                }
            }
        }
    }
    assert!(files.len() > 5, "{format} files found: {}", files.len());
    files
}

/// The files of the formats `list` reads in two passes.
fn viewed_files() -> Vec<PathBuf> {
    let mut all = files_of(crate::formats::claude_jsonl::NAME);
    all.extend(files_of(crate::formats::codex_jsonl::NAME));
    all
}

fn blank(path: &Path) -> Entry {
    Entry {
        tool: Tool::Claude,
        path: path.display().to_string(),
        kind: StoredKind::Session,
        format: None,
        id: None,
        project: None,
        start: None,
        updated: None,
        messages: 0,
        title: None,
        first_prompt: None,
        health: Health::Broken,
        findings: Vec::new(),
        bytes: 0,
        superseded_by: None,
        hashed_folder: false,
        sort_key: None,
    }
}

/// The entry both ways, as `list --json` shows it, with the fields it does not show.
fn both(path: &Path) -> (String, String) {
    let show = |e: &Entry| format!("{} {:?}", serde_json::to_string(e).unwrap(), e.sort_key);
    let mut whole = blank(path);
    read(&mut whole, path, &std::fs::read(path).unwrap());
    let mut quick = blank(path);
    read_file(&mut quick, path).expect("the file reads");
    (show(&whole), show(&quick))
}

#[test]
fn every_claude_and_codex_fixture_and_sample_is_listed_as_when_read_whole() {
    for path in viewed_files() {
        let (whole, quick) = both(&path);
        assert_eq!(whole, quick, "{}", path.display());
    }
}

#[test]
fn cut_copies_are_listed_as_when_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    for path in viewed_files() {
        let bytes = std::fs::read(&path).unwrap();
        // The cuts are still files of the same format (detection looks at the start): some
        // offsets near the end, and a few between.
        let step = (bytes.len() / 7).max(1);
        let cuts =
            (bytes.len().saturating_sub(40)..bytes.len()).chain((step..bytes.len()).step_by(step));
        for cut in cuts {
            let copy = dir.path().join("cut.jsonl");
            std::fs::write(&copy, &bytes[..cut]).unwrap();
            let (whole, quick) = both(&copy);
            assert_eq!(whole, quick, "{} cut at {cut}", path.display());
        }
    }
}
