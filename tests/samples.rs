//! fsck on every real session file in `../shared/samples` (issue 5: the real files check
//! clean). Each is detected as the format of its tool and has no error, except the errors
//! that `claude/edge_cases.jsonl` holds on purpose (it is claude-code-log's test file for
//! broken entries), which must be exactly those listed here. Without `../shared` the test
//! says that it did not run, and fails in CI (tests/common/prerequisite.rs).

mod common;

use std::path::{Path, PathBuf};

use sessiontool::check::{CheckOptions, check_file};
use sessiontool::diag::Severity;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples");

/// Errors a sample has on purpose: (file, codes in file order).
const KNOWN_ERRORS: &[(&str, &[&str])] = &[(
    "claude/edge_cases.jsonl",
    &[
        // A tool_use whose result entry misspells `content` (`contenst`), that entry (no usable
        // message), one whose `message` is the string "error", and an entry from another
        // session whose parent and call are elsewhere.
        "tool-call-unanswered",
        "missing-field",
        "missing-field",
        "orphan-parent",
        "tool-call-unanswered",
    ],
)];

fn session_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            session_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json" || x == "jsonl") {
            out.push(p);
        }
    }
}

#[test]
fn every_real_sample_checks_clean() {
    let root = Path::new(SAMPLES);
    if !common::prerequisite::present(
        root.is_dir(),
        &format!("../shared missing ({SAMPLES} is absent)"),
    ) {
        return;
    }
    let mut files = Vec::new();
    session_files(root, &mut files);
    files.sort();
    assert!(files.len() >= 9, "samples: {files:?}");
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let tool = rel.split('/').next().unwrap();
        let report = check_file(path, &CheckOptions::default()).unwrap();
        let format = report
            .format
            .unwrap_or_else(|| panic!("{rel}: not detected"));
        assert!(
            format.starts_with(tool),
            "{rel}: detected as {format}, not a {tool} format"
        );
        let errors: Vec<&str> = report
            .issues
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .map(|i| i.code)
            .collect();
        let known = KNOWN_ERRORS
            .iter()
            .find(|(f, _)| *f == rel)
            .map_or(&[][..], |(_, codes)| *codes);
        assert_eq!(errors, known, "{rel}: {:#?}", report.issues);
    }
}
