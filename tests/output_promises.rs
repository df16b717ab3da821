//! What convert writes, and what it says when it cannot (issue 16, items 1, 2, 6, 7, 18, 19,
//! and `-n` on every command that writes): content that `--from` misnames is refused with the
//! format it is; `--cwd .` is recorded absolute; a folder's own backups are not converted
//! again; new files follow the umask and a replaced file keeps its mode; a missing folder or
//! a folder as the output is said as such; options that would be silently ignored are
//! refused; a dry run writes nothing.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use common::fixture;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sessiontool")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// `sessiontool ARGS` with the umask `mask`.
fn run_with_umask(mask: libc::mode_t, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.args(args);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    c.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn from_that_misnames_the_content_is_refused_with_the_format_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.json");
    let qwen = fixture("qwen-jsonl/plain.jsonl");
    let out = run(&[
        "convert",
        s(&qwen),
        "--from",
        "claude-jsonl",
        "-o",
        s(&out_file),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("is qwen-jsonl, not claude-jsonl"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("--from qwen-jsonl"), "{}", text(&out));
    assert!(!out_file.exists(), "nothing written");
    for command in ["show", "tree"] {
        let out = run(&[command, s(&qwen), "--from", "claude-jsonl"]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
        assert!(
            text(&out).contains("is qwen-jsonl"),
            "{command}: {}",
            text(&out)
        );
    }
    // fsck neither checks nor repairs it by another tool's rules.
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(&qwen, &copy).unwrap();
    for repair in [false, true] {
        let mut args = vec!["fsck", "--from", "claude-jsonl", s(&copy)];
        if repair {
            args.insert(1, "--repair");
        }
        let out = run(&args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(8), "{args:?}: {said}");
        assert!(
            said.contains("the content is qwen-jsonl, not claude-jsonl"),
            "{args:?}: {said}"
        );
    }
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&qwen).unwrap());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no backup"
    );
    // A file no format recognises (damaged) is still read as asked.
    let damaged = dir.path().join("x.jsonl");
    std::fs::write(&damaged, "not json at all\n").unwrap();
    let out = run(&["show", s(&damaged), "--from", "qwen-jsonl"]);
    assert!(!text(&out).contains("is qwen-jsonl, not"), "{}", text(&out));
}

#[test]
fn a_relative_cwd_is_recorded_as_the_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("app");
    std::fs::create_dir(&project).unwrap();
    let out_file = dir.path().join("out.jsonl");
    let out = Command::new(bin())
        .args([
            "convert",
            s(&fixture("gemini-json/plain.json")),
            "--cwd",
            ".",
            "-o",
        ])
        .arg(&out_file)
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&out_file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["cwd"], s(&project), "{first:#}");
}

#[test]
fn a_folder_convert_leaves_sessiontools_own_backups_alone() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(fixture("qwen-jsonl/plain.jsonl"), src.join("a.jsonl")).unwrap();
    std::fs::copy(
        fixture("qwen-jsonl/plain.jsonl"),
        src.join("a.jsonl.bak-20260101T000000.000Z"),
    )
    .unwrap();
    std::fs::write(src.join("a.jsonl.torn-20260101T000000.000Z"), "{\"torn").unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&[
        "convert",
        s(&src),
        "-o",
        s(&out_dir),
        "--to",
        "gemini-json",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["converted"], 1, "{doc:#}");
    let written: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, vec!["a.json".to_string()]);
    // Listed as skipped, with why: nothing is skipped silently.
    let skipped: Vec<&Value> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["skipped"] == true)
        .collect();
    assert_eq!(skipped.len(), 2, "{doc:#}");
    assert!(
        skipped
            .iter()
            .all(|f| f["reason"].as_str().unwrap().contains("sessiontool wrote"))
    );
}

#[test]
fn new_files_follow_the_umask_and_a_replaced_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("gemini-json/plain.json");
    for (mask, want) in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)] {
        for (name, to) in [
            ("c.jsonl", "qwen-jsonl"),
            ("e.md", "markdown"),
            ("checkpoint-t.json", "checkpoint"),
        ] {
            let file = dir.path().join(format!("{mask:o}-{name}"));
            let out = run_with_umask(mask, &["convert", s(&plain), "--to", to, "-o", s(&file)]);
            assert!(out.status.success(), "{}", text(&out));
            assert_eq!(mode(&file), want, "{name} with umask {mask:o}");
        }
        let pages = dir.path().join(format!("man-{mask:o}"));
        let out = run_with_umask(mask, &["man", "--dir", s(&pages)]);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(
            mode(&pages.join("sessiontool-convert.1")),
            want,
            "man with umask {mask:o}"
        );
    }
    // Replaced: the file keeps the mode it had, whatever the umask.
    let kept = dir.path().join("kept.jsonl");
    std::fs::write(&kept, "old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = run_with_umask(0o022, &["convert", s(&plain), "-o", s(&kept), "--force"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&kept), 0o640);
    let page = dir.path().join("man-22/sessiontool.1");
    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = run_with_umask(0o022, &["man", "--dir", s(&dir.path().join("man-22"))]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&page), 0o600, "a page written again keeps its mode");
    // A session placed in a store, and a checkpoint recover writes, follow the umask too.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let out = run_with_umask(
        0o022,
        &[
            "convert",
            s(&plain),
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            "/w/app",
            "--home",
            s(&home),
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(mode(Path::new(doc["output"].as_str().unwrap())), 0o644);
    let out = run_with_umask(
        0o022,
        &[
            "recover",
            "--latest",
            "--checkpoint",
            "t1",
            "--project",
            "/w/app",
            "--home",
            s(&home),
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = doc["sessions"][0]["steps"].as_array().unwrap();
    let placed = steps.iter().find(|s| s["step"] == "placed").unwrap();
    assert_eq!(mode(Path::new(placed["path"].as_str().unwrap())), 0o644);
}

#[test]
fn an_output_in_a_missing_folder_or_named_as_a_folder_is_said_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("gemini-json/plain.json");
    let missing = dir.path().join("missing/dir/out.json");
    let out = run(&["convert", s(&plain), "-o", s(&missing)]);
    assert_eq!(out.status.code(), Some(4));
    let said = text(&out);
    assert!(
        said.contains("does not exist") && said.contains("missing/dir"),
        "{said}"
    );
    assert!(
        !said.contains("sessiontool-"),
        "no temp file is named: {said}"
    );
    let folder = dir.path().join("adir");
    std::fs::create_dir(&folder).unwrap();
    let slashed = format!("{}/", s(&folder));
    let new_folder = format!("{}/", s(&dir.path().join("new")));
    // (the output, --to, --force, what is said)
    let cases = [
        (s(&folder), Some("qwen-jsonl"), false, "adir is a folder"),
        (s(&folder), Some("qwen-jsonl"), true, "adir is a folder"),
        // Without --to: the folder is said, not "cannot tell the output format".
        (&slashed, None, false, "adir/ is a folder"),
        (
            &new_folder,
            Some("qwen-jsonl"),
            false,
            "new/ names a folder",
        ),
    ];
    for (output, to, force, says) in cases {
        let mut args = vec!["convert", s(&plain), "-o", output];
        args.extend(to.iter().flat_map(|t| ["--to", *t]));
        if force {
            args.push("--force");
        }
        let out = run(&args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {said}");
        assert!(said.contains(says), "{args:?}: {said}");
        assert!(
            !said.contains("--force"),
            "{args:?}: --force would not help: {said}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["adir"], "nothing written");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

#[test]
fn a_file_that_cannot_be_read_is_not_called_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(fixture("qwen-jsonl/plain.jsonl"), &file).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = Command::new(bin());
    c.args(["fsck", s(&file)]);
    if common::prerequisite::is_root() {
        // Root reads anything: run as nobody.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        c.uid(65534).gid(65534);
    }
    let out = c.output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(8), "{said}");
    assert!(said.contains("Permission denied"), "{said}");
    assert!(!said.contains(": ok"), "{said}");
    assert!(
        said.contains("checked 0 file(s)") && said.contains("1 could not be checked"),
        "{said}"
    );
}

#[test]
fn options_that_would_be_ignored_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("gemini-json/plain.json");
    // A copy, in a folder of its own: a command that wrongly went on would repair it, and
    // a checkout's fixtures are never written.
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let torn = work.join("torn.jsonl");
    std::fs::copy(fixture("damaged/torn-tail.jsonl"), &torn).unwrap();
    let before = std::fs::read(&torn).unwrap();
    let backups = dir.path().join("backups");
    let (b, o, home) = (s(&backups), dir.path().join("o.jsonl"), s(dir.path()));
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // clap: options that cannot go together, or need --repair (or -n).
        (
            vec![
                "fsck",
                "--repair",
                "--no-backup",
                "--backup-dir",
                b,
                s(&torn),
            ],
            16,
            "--no-backup",
        ),
        (
            vec!["repair", "--no-backup", "--backup-dir", b, s(&torn)],
            16,
            "--no-backup",
        ),
        (vec!["fsck", "--backup-dir", b, s(&torn)], 16, "--repair"),
        (vec!["fsck", "--no-backup", s(&torn)], 16, "--repair"),
        (vec!["fsck", "--force", s(&torn)], 16, "--repair"),
        // A checkpoint's own options with another target (named or guessed from -o).
        (
            vec!["convert", s(&plain), "--checkpoint-array", "-o", s(&o)],
            2,
            "--checkpoint-array is for a checkpoint only",
        ),
        (
            vec![
                "convert",
                s(&plain),
                "--no-context",
                "--to",
                "gemini-json",
                "-o",
                "-",
            ],
            2,
            "--no-context is for a checkpoint only",
        ),
        (
            vec![
                "convert",
                s(&plain),
                "--to",
                "qwen-jsonl",
                "--store",
                "--tag",
                "t",
                "--home",
                home,
            ],
            2,
            "--tag is for a checkpoint only",
        ),
        // An export has no store.
        (
            vec![
                "convert",
                s(&plain),
                "--to",
                "markdown",
                "--store",
                "--home",
                home,
            ],
            2,
            "export",
        ),
    ];
    let mut wrong = Vec::new();
    for (args, code, says) in cases {
        let out = run(&args);
        if out.status.code() != Some(code) || !text(&out).contains(says) {
            wrong.push(format!(
                "{args:?}: exit {:?}, not {code} saying {says:?}:\n{}",
                out.status.code(),
                text(&out)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        std::fs::read(&torn).unwrap(),
        before,
        "the file is unchanged"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["work"], "nothing written");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 1, "no backup");
    // --from offers the formats that can be read, not the exports.
    let out = run(&["convert", s(&plain), "--from", "html", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out);
    assert!(said.contains("qwen-jsonl"), "{said}");
    assert!(
        !said.contains("markdown") && !said.contains(", html"),
        "{said}"
    );
}

/// Every command that writes takes `-n, --dry-run`, and it writes nothing.
#[test]
fn every_command_that_writes_has_a_dry_run() {
    for command in [
        "convert", "fsck", "repair", "recover", "migrate", "relocate", "man",
    ] {
        let out = run(&[command, "--help"]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("-n, --dry-run"),
            "{command} --help"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("gemini-json/plain.json");
    let file = dir.path().join("out.jsonl");
    let out = run(&["convert", s(&plain), "-o", s(&file), "-n"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("would write"), "{}", text(&out));
    // What would fail is said on a dry run too.
    std::fs::write(&file, "mine").unwrap();
    let out = run(&["convert", s(&plain), "-o", s(&file), "-n"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let pages = dir.path().join("pages");
    let out = run(&["man", "--dir", s(&pages), "-n"]);
    assert!(
        out.status.success() && text(&out).contains("would write"),
        "{}",
        text(&out)
    );
    assert!(!pages.exists());
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
