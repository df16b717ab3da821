//! The command line as a user meets it: exit codes, --force, standard input and output,
//! folders, and clear errors that never leave a partial output behind.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

fn tool() -> Command {
    Command::cargo_bin("sessiontool").expect("binary builds")
}

#[test]
fn convert_legacy_to_jsonl_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("out.jsonl");
    let back = dir.path().join("back.json");
    tool()
        .args(["convert"])
        .arg(fixture("gemini-json/tools.json"))
        .arg("-o")
        .arg(&jsonl)
        .args(["--cwd", "/home/alex/src/weather-app"])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote"));
    let text = fs::read_to_string(&jsonl).unwrap();
    assert!(text.lines().count() >= 5, "one record per line:\n{text}");
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("uuid").is_some() && v.get("parentUuid").is_some());
    }
    tool()
        .args(["convert"])
        .arg(&jsonl)
        .arg("-o")
        .arg(&back)
        .assert()
        .success();
    let orig: serde_json::Value =
        serde_json::from_slice(&fs::read(fixture("gemini-json/tools.json")).unwrap()).unwrap();
    let again: serde_json::Value = serde_json::from_slice(&fs::read(&back).unwrap()).unwrap();
    let texts = |v: &serde_json::Value| -> Vec<String> {
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{}:{}", m["type"], m["content"]))
            .collect()
    };
    assert_eq!(texts(&orig), texts(&again));
}

#[test]
fn refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    fs::write(&out, "keep me").unwrap();
    tool()
        .arg("convert")
        .arg(fixture("gemini-json/plain.json"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(4)
        .stderr(predicate::str::contains("--force"));
    assert_eq!(fs::read_to_string(&out).unwrap(), "keep me");
    tool()
        .arg("convert")
        .arg(fixture("gemini-json/plain.json"))
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .assert()
        .success();
    assert_ne!(fs::read_to_string(&out).unwrap(), "keep me");
}

#[test]
fn stdin_to_stdout() {
    let input = fs::read(fixture("gemini-json/plain.json")).unwrap();
    let out = tool()
        .args(["convert", "-", "--to", "checkpoint", "-o", "-"])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["history"].as_array().unwrap().len() > 1);
}

#[test]
fn json_report_lists_losses() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("checkpoint-x.json");
    let stdout = tool()
        .arg("convert")
        .arg(fixture("gemini-json/notices.json"))
        .arg("-o")
        .arg(&out)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(report["from"], "gemini-json");
    assert_eq!(report["to"], "checkpoint");
    let codes: Vec<&str> = report["losses"]["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"notices"), "{codes:?}");
}

#[test]
fn truncated_input_fails_with_location_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = fs::read(fixture("gemini-json/tools.json")).unwrap();
    let cut = dir.path().join("cut.json");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.path().join("out.jsonl");
    tool()
        .arg("convert")
        .arg(&cut)
        .args(["--from", "gemini-json"])
        .arg("-o")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("at: "))
        .stderr(predicate::str::contains("panicked").not());
    assert!(!out.exists(), "no partial output");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp files"
    );
}

#[test]
fn garbage_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.bin");
    fs::write(&junk, b"\x00\x01 not a session {{{").unwrap();
    tool()
        .arg("convert")
        .arg(&junk)
        .arg("-o")
        .arg(dir.path().join("o.jsonl"))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("--from"));
    tool()
        .arg("convert")
        .arg(dir.path().join("missing.json"))
        .arg("-o")
        .arg(dir.path().join("o.jsonl"))
        .assert()
        .code(3);
}

#[test]
fn unknown_format_name_is_a_usage_error() {
    tool()
        .arg("convert")
        .arg(fixture("gemini-json/plain.json"))
        .args(["--to", "nope", "-o", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("gemini-json"));
}

#[test]
fn folder_conversion_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("converted");
    tool()
        .arg("convert")
        .arg(fixture("gemini-json"))
        .arg("-o")
        .arg(&out)
        .args(["--to", "qwen-jsonl", "--json"])
        .assert()
        .success();
    let inputs = fs::read_dir(fixture("gemini-json")).unwrap().count();
    let outputs = fs::read_dir(&out).unwrap().count();
    assert_eq!(inputs, outputs);
    assert!(out.join("plain.jsonl").exists());
    // A second run refuses to overwrite: every file fails, exit 5.
    tool()
        .arg("convert")
        .arg(fixture("gemini-json"))
        .arg("-o")
        .arg(&out)
        .args(["--to", "qwen-jsonl"])
        .assert()
        .code(5);
}

/// Each converted file is named as its target format names files (an export by its own
/// extension: a `.json` Markdown file was a bug once).
#[test]
fn folder_conversion_names_files_for_the_target() {
    let dir = tempfile::tempdir().unwrap();
    for (to, name) in [
        ("markdown", "plain.md"),
        ("html", "plain.html"),
        ("checkpoint", "checkpoint-plain.json"),
        ("gemini-json", "plain.json"),
        ("claude-jsonl", "plain.jsonl"),
    ] {
        let out = dir.path().join(to);
        tool()
            .arg("convert")
            .arg(fixture("gemini-json"))
            .arg("-o")
            .arg(&out)
            .args(["--to", to])
            .assert()
            .success();
        assert!(out.join(name).is_file(), "{to}: no {name}");
    }
}

#[test]
fn folder_with_non_session_files_lists_them_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::copy(fixture("gemini-json/plain.json"), src.join("a.json")).unwrap();
    fs::write(src.join("notes.txt"), "hello").unwrap();
    tool()
        .arg("convert")
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("out"))
        .args(["--to", "checkpoint"])
        .assert()
        .success()
        .stderr(predicate::str::contains("notes.txt: skipped"))
        .stderr(predicate::str::contains("1 skipped"));
}

#[test]
fn detect_and_formats() {
    tool()
        .arg("detect")
        .arg(fixture("gemini-json/plain.json"))
        .arg(fixture("checkpoint/checkpoint-array.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("gemini-json"))
        .stdout(predicate::str::contains("checkpoint"));
    tool()
        .args(["formats", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("qwen-jsonl"));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("x.txt");
    fs::write(&junk, "hello").unwrap();
    tool()
        .arg("detect")
        .arg(&junk)
        .assert()
        .code(3)
        .stdout(predicate::str::contains("unknown"));
}

#[test]
fn show_head_branch_and_leaf() {
    let out = tool()
        .arg("show")
        .arg(fixture("qwen-jsonl/branches.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("branch point"), "{text}");
    tool()
        .arg("show")
        .arg(fixture("qwen-jsonl/branches.jsonl"))
        .args(["--leaf", "no-such-id"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no node"));
    let json = tool()
        .arg("show")
        .arg(fixture("gemini-json/tools.json"))
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["format"], "gemini-json");
    assert!(v["session"]["nodes"].as_array().unwrap().len() > 2);
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in ["convert", "show", "detect", "formats"] {
        tool()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"));
    }
}

#[test]
fn dirname_gives_each_schemes_folder_and_settles_gemini_slug_collisions() {
    let home = tempfile::tempdir().unwrap();
    // Another project already holds the slug `app`.
    let taken = home.path().join(".gemini/tmp/app");
    fs::create_dir_all(&taken).unwrap();
    fs::write(taken.join(".project_root"), "/elsewhere/app").unwrap();
    let out = tool()
        .args(["dirname", "/work/app", "--json", "--home"])
        .arg(home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = |scheme: &str| {
        doc["folders"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["scheme"] == scheme)
            .map(|f| f["name"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(name("gemini-slug"), "app-1");
    assert_eq!(name("dashed"), "-work-app");
    assert_eq!(name("pi"), "--work-app--");
    assert_eq!(name("sha256"), sessiontool::ids::sha256_hex("/work/app"));
    tool()
        .args(["dirname", "/work/app", "--scheme", "dashed"])
        .assert()
        .success()
        .stdout("-work-app\n");
    tool()
        .args(["dirname", "/work/app", "--scheme", "nope"])
        .assert()
        .code(2);
}

#[test]
fn completions_for_every_shell_name_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = tool().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in ["convert", "fsck", "recover", "relocate", "migrate", "list"] {
            assert!(script.contains(command), "{shell} completes {command}");
        }
    }
    tool().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_pages_install_into_a_folder_one_per_command() {
    let out = tool().arg("man").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(".ie"));
    let dir = tempfile::tempdir().unwrap();
    tool()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    for page in [
        "sessiontool.1",
        "sessiontool-recover.1",
        "sessiontool-fsck.1",
    ] {
        let text = fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let recover = fs::read_to_string(dir.path().join("sessiontool-recover.1")).unwrap();
    assert!(
        recover.contains("checkpoint"),
        "the page carries the options and examples"
    );
}

#[test]
fn tree_folds_runs_and_marks_the_head_and_the_other_leaves() {
    let out = tool()
        .arg("tree")
        .arg(fixture("pi-jsonl/v3-branches.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("5 nodes, 2 branches"), "{text}");
    assert!(text.contains("aaaa0005 user \"continue\" ◆ head"), "{text}");
    assert!(text.contains("aaaa0004 [label] ◇ leaf"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when piped: {text}");
    let full = tool()
        .args(["tree", "--full"])
        .arg(fixture("pi-jsonl/v3-branches.jsonl"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&full.stdout).lines().count(), 6);
}

#[test]
fn show_wraps_to_the_width_asked_and_colours_only_when_asked() {
    let out = tool()
        .args(["show", "--width", "40"])
        .arg(fixture("gemini-json/tools.json"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The prompt and the reply are wrapped at word boundaries.
    assert!(
        text.contains("\nWhy does `npm test` fail? Look at\npackage.json and run the tests.\n"),
        "{text}"
    );
    assert!(
        text.contains("\nnot installed: `vitest` is missing from\n"),
        "{text}"
    );
    let plain = tool()
        .arg("show")
        .arg(fixture("gemini-json/tools.json"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\x1b'));
    let coloured = tool()
        .args(["--color", "always", "show"])
        .arg(fixture("gemini-json/tools.json"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&coloured.stdout).contains("\x1b[1m"));
}

#[test]
fn quiet_leaves_errors_only_and_notes_are_counted_not_listed() {
    let file = fixture("qwen-jsonl/branches.jsonl");
    let loud = tool().arg("show").arg(&file).output().unwrap();
    let quiet = tool().args(["-q", "show"]).arg(&file).output().unwrap();
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    assert!(!String::from_utf8_lossy(&loud.stderr).contains("info ["));
}
