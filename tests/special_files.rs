//! What is not a regular file is never opened to be read (issue 14, item 13). A FIFO named on
//! the command line used to block `fsck f.jsonl` forever (the read waits for a writer); now
//! every command that takes a path says `X is not a regular file (a FIFO)` with its
//! documented exit code (fsck and repair 8, the others 3), at once. In a folder, such
//! entries (FIFOs, sockets, links) are listed as skipped with the reason, never opened. `-`
//! still reads standard input. Every run has a timeout: a regression fails, it does not hang.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// `sessiontool args`, killed (and so failing) if it takes over 20 seconds.
fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::cargo_bin("sessiontool")
        .unwrap()
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_fifo_named_on_the_command_line_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.jsonl");
    mkfifo(&fifo);
    let out_md = dir.path().join("out.md");
    let home = dir.path().join("home");
    let f = fifo.as_os_str();
    let cases: Vec<(Vec<&std::ffi::OsStr>, i32)> = vec![
        (vec!["fsck".as_ref(), f], 8),
        (vec!["fsck".as_ref(), "--json".as_ref(), f], 8),
        (vec!["repair".as_ref(), f], 8),
        (vec!["show".as_ref(), f], 3),
        (vec!["show".as_ref(), "--json".as_ref(), f], 3),
        (vec!["tree".as_ref(), f], 3),
        (vec!["detect".as_ref(), f], 3),
        (
            vec!["convert".as_ref(), f, "-o".as_ref(), out_md.as_os_str()],
            3,
        ),
        (
            vec![
                "convert".as_ref(),
                f,
                "--to".as_ref(),
                "qwen-jsonl".as_ref(),
                "--store".as_ref(),
                "--project".as_ref(),
                "/w/app".as_ref(),
                "--home".as_ref(),
                home.as_os_str(),
            ],
            3,
        ),
    ];
    let expected = format!("{} is not a regular file (a FIFO)", fifo.display());
    for (args, code) in cases {
        let out = run(&args);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "{args:?}: {said}");
        assert!(said.contains(&expected), "{args:?}: {said}");
    }
    assert!(!out_md.exists(), "nothing written");
    assert!(!home.exists(), "nothing placed");
}

#[test]
fn the_library_refuses_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.jsonl");
    mkfifo(&fifo);
    let (done, finished) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let open = sessiontool::open(&path)
            .map(|_| ())
            .map_err(|e| e.to_string());
        let check = sessiontool::check(&path)
            .map(|_| ())
            .map_err(|e| e.to_string());
        let _ = done.send((open, check));
    });
    let (open, check) = finished
        .recv_timeout(Duration::from_secs(20))
        .expect("the library blocked on a FIFO");
    for result in [open, check] {
        let e = result.unwrap_err();
        assert!(e.contains("not a regular file (a FIFO)"), "{e}");
    }
}

#[test]
fn standard_input_is_still_read() {
    let out = Command::cargo_bin("sessiontool")
        .unwrap()
        .args(["show", "-"])
        .pipe_stdin(fixture("qwen-jsonl/plain.jsonl"))
        .unwrap()
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("<stdin> (qwen-jsonl)"));
}

/// A folder with a session, a FIFO, a socket and a link: fsck and convert check and convert
/// the session, and list the other three as skipped, with why, without opening them.
#[test]
fn in_a_folder_special_files_are_listed_as_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    fs::create_dir(&sessions).unwrap();
    fs::copy(fixture("damaged/torn-tail.jsonl"), sessions.join("a.jsonl")).unwrap();
    mkfifo(&sessions.join("f.jsonl"));
    let _socket = std::os::unix::net::UnixListener::bind(sessions.join("s.jsonl")).unwrap();
    std::os::unix::fs::symlink(fixture("qwen-jsonl/plain.jsonl"), sessions.join("l.jsonl"))
        .unwrap();
    let reasons = [
        ("f.jsonl", "not a regular file (a FIFO)"),
        ("l.jsonl", "not a regular file (a symbolic link)"),
        ("s.jsonl", "not a regular file (a socket)"),
    ];

    let out = run(&["fsck".as_ref(), sessions.as_os_str()]);
    let said = text(&out.stdout);
    // The torn tail is an error left uncorrected; the skipped entries add nothing.
    assert_eq!(out.status.code(), Some(4), "{said}{}", text(&out.stderr));
    for (name, reason) in reasons {
        let line = format!("{}: skipped: {reason}", sessions.join(name).display());
        assert!(said.contains(&line), "{line} in:\n{said}");
    }
    assert!(
        said.contains("3 not regular files (skipped, listed above)"),
        "{said}"
    );

    let out = run(&["fsck".as_ref(), "--json".as_ref(), sessions.as_os_str()]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["skipped"], 3);
    assert_eq!(doc["summary"]["files"], 1);
    for (name, reason) in reasons {
        let entry = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"].as_str().unwrap().ends_with(name))
            .unwrap();
        assert_eq!(entry["skipped"], true, "{entry}");
        assert_eq!(entry["reason"], reason, "{entry}");
    }

    let converted = dir.path().join("converted");
    let out = run(&[
        "convert".as_ref(),
        sessions.as_os_str(),
        "-o".as_ref(),
        converted.as_os_str(),
        "--to".as_ref(),
        "markdown".as_ref(),
        "--json".as_ref(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (doc["converted"].as_u64(), doc["skipped"].as_u64()),
        (Some(1), Some(3))
    );
    for (name, reason) in reasons {
        let entry = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["input"].as_str().unwrap().ends_with(name))
            .unwrap();
        assert_eq!(entry["reason"], reason, "{entry}");
    }
    let out = run(&[
        "convert".as_ref(),
        sessions.as_os_str(),
        "-o".as_ref(),
        converted.as_os_str(),
        "--to".as_ref(),
        "markdown".as_ref(),
        "--force".as_ref(),
    ]);
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!(
            "{}: skipped: not a regular file (a FIFO)",
            sessions.join("f.jsonl").display()
        )),
        "{said}"
    );
}

/// A FIFO with a session's name in a tool's store: `list` says so and goes on.
#[test]
fn list_reports_a_fifo_in_a_store_and_lists_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let chats = home.path().join(".qwen/projects/-w-app/chats");
    fs::create_dir_all(&chats).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(
        fs::read_to_string(fixture("qwen-jsonl/plain.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    record["cwd"] = "/w/app".into();
    fs::write(chats.join("a.jsonl"), format!("{record}\n")).unwrap();
    mkfifo(&chats.join("b.jsonl"));
    let out = run(&[
        "list".as_ref(),
        "--home".as_ref(),
        home.path().as_os_str(),
        "--project".as_ref(),
        "/w/app".as_ref(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("a.jsonl"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains(&format!(
            "{} is not a regular file (a FIFO): not listed",
            chats.join("b.jsonl").display()
        )),
        "{}",
        text(&out.stderr)
    );
}
