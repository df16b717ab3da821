//! The conversion matrix: every fixture of every readable format converted to every format
//! that can be written and resumed, then read back. Each conversion must succeed, the output
//! must read in the target format without errors and be detected as it, and the tool calls
//! and their results on the conversation the tool resumes (the head branch) must survive.

mod common;

use std::path::PathBuf;

use sessiontool::convert::convert;
use sessiontool::diag::Severity;
use sessiontool::formats::{self, Input, WriteOptions};
use sessiontool::model::{Content, Session};

fn fixture_files() -> Vec<PathBuf> {
    common::source_formats()
        .into_iter()
        .flat_map(common::fixtures_of)
        .collect()
}

/// The user's prompts on the head branch, in order.
fn prompts(session: &Session) -> Vec<String> {
    let (head, _) = session.branch(None).unwrap();
    head.nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.role == sessiontool::model::Role::User)
        .map(|m| m.text())
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// Tool calls and answered calls on the head branch.
fn tool_counts(session: &Session) -> (usize, usize) {
    let (head, _) = session.branch(None).unwrap();
    let mut calls = 0;
    let mut results = 0;
    for node in &head.nodes {
        for part in node
            .message()
            .map(|m| m.parts.as_slice())
            .unwrap_or_default()
        {
            match &part.content {
                Content::ToolCall { .. } => calls += 1,
                Content::ToolResult { .. } => results += 1,
                _ => {}
            }
        }
    }
    (calls, results)
}

#[test]
fn every_fixture_converts_to_every_format_and_reads_back() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in fixture_files() {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        let input = Input {
            name: &name,
            path: Some(&path),
            bytes: &bytes,
        };
        let Some(from) = formats::detect(Some(&path), &bytes) else {
            failures.push(format!("{name}: not detected"));
            continue;
        };
        let source = from.read(&input).unwrap().session;
        let (calls, results) = tool_counts(&source);
        for target in common::session_formats() {
            let to = formats::by_name(target).unwrap();
            let options = WriteOptions {
                cwd: Some("/home/dana/projects/pomodoro".into()),
                now: Some("2026-01-01T00:00:00.000Z".into()),
                ..WriteOptions::default()
            };
            let what = format!("{name} -> {target}");
            let conversion = match convert(&input, Some(from), to, &options) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            checked += 1;
            let out = Input {
                name: "out",
                path: None,
                bytes: &conversion.bytes,
            };
            let back = match to.read(&out) {
                Ok(b) => b,
                Err(e) => {
                    failures.push(format!("{what}: does not read back: {e}"));
                    continue;
                }
            };
            let errors: Vec<_> = back
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .collect();
            if !errors.is_empty() {
                failures.push(format!("{what}: reads back with errors: {errors:?}"));
            }
            // An empty session is an empty file in the tree formats: nothing to detect.
            let empty = conversion.bytes.is_empty();
            if !empty && formats::detect(None, &conversion.bytes).map(|f| f.name()) != Some(target)
            {
                failures.push(format!("{what}: the output is not detected as {target}"));
            }
            // And back into the source's own format: the user's prompts survive both hops.
            let hop = Input {
                name: "out",
                path: None,
                bytes: &conversion.bytes,
            };
            // A source only read (an older layout) is not written back: its prompts must
            // survive the one hop.
            if !from.writable() {
                let said = conversion
                    .losses
                    .losses
                    .iter()
                    .any(|l| l.code == "system-messages");
                if !said && prompts(&back.session) != prompts(&source) {
                    failures.push(format!(
                        "{what}: prompts changed: {:?} -> {:?}",
                        prompts(&source),
                        prompts(&back.session)
                    ));
                }
            } else {
                match convert(&hop, Some(to), from, &options) {
                    Ok(again) => {
                        let again_input = Input {
                            name: "again",
                            path: None,
                            bytes: &again.bytes,
                        };
                        // System instructions the target has no role for come back as prompts;
                        // the first hop's loss report must say so.
                        let said = conversion
                            .losses
                            .losses
                            .iter()
                            .any(|l| l.code == "system-messages");
                        match from.read(&again_input) {
                            Ok(r) if !said && prompts(&r.session) != prompts(&source) => failures
                                .push(format!(
                                    "{what} -> {}: prompts changed: {:?} -> {:?}",
                                    from.name(),
                                    prompts(&source),
                                    prompts(&r.session)
                                )),
                            Ok(_) => {}
                            Err(e) => failures.push(format!("{what} -> back: {e}")),
                        }
                    }
                    Err(e) => failures.push(format!("{what} -> back: {e}")),
                }
            }
            let (calls_back, results_back) = tool_counts(&back.session);
            if calls_back != calls || results_back < results.min(calls) {
                failures.push(format!(
                    "{what}: tool calls/results {calls}/{results} became {calls_back}/{results_back} (losses: {:?})",
                    conversion.losses.losses.iter().map(|l| l.code).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(checked > 300, "only {checked} conversions ran");
    assert!(
        failures.is_empty(),
        "{} of {checked} conversions failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
