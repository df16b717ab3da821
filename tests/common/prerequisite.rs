//! Tests that need what a machine may lack: the real session files in `../shared/samples`,
//! python3 (to drive a terminal), root (to give a file another owner, to mount a tmpfs).
//!
//! A test whose prerequisite is missing must never pass as if it had tested something. The
//! Rust test runner cannot mark a test ignored once it runs (`#[ignore]` is decided when the
//! test is compiled; rust-lang/rust#68007), so every such test asks [`present`] first:
//!
//! - in CI (`CI=true`), a missing prerequisite fails the test, saying what is missing;
//! - elsewhere the test returns at once, and `NOT RUN: <test>: <what is missing>` is written
//!   straight to standard error, where the runner cannot hide it (it captures `print!` and
//!   `eprint!` and shows a passing test's capture to no one). The summary still counts the
//!   test as passed: the `NOT RUN` lines are the record of what was not tested.
//!
//! The integration tests include this file through `tests/common`; the library's unit tests
//! through `src/lib.rs`, so both follow one rule.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether CI runs this: `CI=true` (or `CI=1`).
pub fn in_ci() -> bool {
    matches!(std::env::var("CI").as_deref(), Ok("true") | Ok("1"))
}

/// Whether the test can go on: `here` is whether its prerequisite is there, `missing` says
/// what is missing when it is not. In CI a missing prerequisite panics (the test fails);
/// elsewhere this says the test did not run and returns false (the caller returns).
pub fn present(here: bool, missing: &str) -> bool {
    if here {
        return true;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    assert!(
        !in_ci(),
        "{test}: {missing}; in CI (CI=true) a missing prerequisite fails the run"
    );
    // Past the runner's capture: written to the file descriptor, not through eprint!.
    let _ = writeln!(
        std::io::stderr().lock(),
        "NOT RUN: {test}: {missing} (the runner counts it as passed; CI=true fails it)"
    );
    false
}

/// The real samples, `../shared/samples` beside this checkout (the workspace's root: the
/// folder of `Cargo.lock`, above the library's unit tests as above the integration tests).
pub fn shared_samples() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = here
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(here);
    root.join("../shared/samples")
}

/// `../shared/samples/<rel>` when it is there; otherwise [`present`] has said it is not.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let path = shared_samples().join(rel);
    present(
        path.exists(),
        &format!(
            "{} is absent (../shared is not checked out beside this repository)",
            path.display()
        ),
    )
    .then_some(path)
}

/// Whether python3 runs here (it drives a pseudo-terminal); said when it does not.
pub fn python3() -> bool {
    let runs = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    present(runs, "python3 is not installed (it drives the terminal)")
}

/// Whether this process runs as root (a test that works either way, differently).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this process runs as root; said when it does not (`why`: what needs it).
pub fn root(why: &str) -> bool {
    present(is_root(), &format!("{why} needs root"))
}
