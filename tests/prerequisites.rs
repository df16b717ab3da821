//! A test whose prerequisite is missing never passes as if it had tested (issue 16, item 22):
//! in CI (`CI=true`) it fails; elsewhere it says `NOT RUN` where the runner cannot hide it.
//! This file runs its own test binary again to see both, and checks that every test that
//! depends on the machine goes through `tests/common/prerequisite.rs`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

/// Acts only when run by the tests below (the variable set): a test whose prerequisite is
/// missing.
#[test]
fn demo_missing_prerequisite() {
    if std::env::var_os("SESSIONTOOL_PREREQUISITE_DEMO").is_none() {
        return;
    }
    if !common::prerequisite::present(false, "the demo's prerequisite is absent") {
        return;
    }
    unreachable!("present(false) never lets a test go on");
}

/// This test binary, running only the demo, as `cargo test` runs it (output captured).
fn demo(ci: Option<&str>) -> Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "demo_missing_prerequisite"])
        .env("SESSIONTOOL_PREREQUISITE_DEMO", "1")
        .env_remove("CI");
    if let Some(v) = ci {
        c.env("CI", v);
    }
    c.output().unwrap()
}

#[test]
fn outside_ci_a_test_that_cannot_run_says_so_past_the_capture() {
    let out = demo(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("NOT RUN: demo_missing_prerequisite: the demo's prerequisite is absent"),
        "the runner's capture must not hide it: {stderr}"
    );
}

#[test]
fn in_ci_a_missing_prerequisite_fails_the_test() {
    for ci in ["true", "1"] {
        let out = demo(Some(ci));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "CI={ci}: {stdout}");
        assert!(
            stdout.contains("the demo's prerequisite is absent")
                && stdout.contains("a missing prerequisite fails the run"),
            "CI={ci}: {stdout}"
        );
    }
}

/// No test skips by itself: what it needs is asked of the one helper (a `println!` is
/// captured, and a test that returns early passes silently).
#[test]
fn every_test_that_depends_on_the_machine_asks_the_helper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for dir in ["tests", "src", "crates"] {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs")
                || path.ends_with("common/prerequisite.rs")
                || path.ends_with("prerequisites.rs")
            {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let prints = line.contains("println!(") || line.contains("print!(");
                let says_skip = ["SKIPPED", "did not run", "not run:"]
                    .iter()
                    .any(|w| line.contains(w));
                let machine = ["python3", "geteuid", "../shared"]
                    .iter()
                    .any(|w| line.contains(w));
                let helper = text.contains("prerequisite::");
                if (prints && says_skip) || (machine && !helper && dir == "tests") {
                    offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "skip through tests/common/prerequisite.rs:\n{}",
        offenders.join("\n")
    );
}
