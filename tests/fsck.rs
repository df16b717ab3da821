//! `sessiontool fsck` and `repair` as a user meets them: every damage fixture found with the
//! right code and line, repaired with backups and sidecars, clean afterwards; untouched
//! records byte-identical; ambiguous damage left alone; the safety rules (locks, permissions).

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn tool() -> Command {
    let mut c = Command::cargo_bin("sessiontool").expect("binary builds");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Each damage fixture, the code fsck must report and the line it is on.
const EXPECTED: &[(&str, &str, u64)] = &[
    ("blank-lines.jsonl", "blank-line", 3),
    ("bom.jsonl", "bom", 1),
    // Whole-file formats: the finding is about the document (no line).
    (
        "checkpoint-tool-call-unanswered.json",
        "tool-call-unanswered",
        0,
    ),
    ("claude-orphan-parent.jsonl", "orphan-parent", 2),
    (
        "claude-tool-use-unanswered.jsonl",
        "tool-call-unanswered",
        3,
    ),
    ("crlf.jsonl", "crlf", 1),
    ("cycle.jsonl", "cycle", 1),
    ("glued-records.jsonl", "glued-records", 2),
    ("invalid-json.jsonl", "invalid-json", 3),
    ("invalid-utf8.jsonl", "invalid-utf8", 3),
    ("llxprt-seq-not-increasing.jsonl", "seq-not-increasing", 5),
    ("missing-final-newline.jsonl", "missing-final-newline", 4),
    ("nul-padding.jsonl", "nul-padding", 3),
    ("orphan-parent.jsonl", "orphan-parent", 2),
    ("session-id-mismatch.jsonl", "session-id-mismatch", 4),
    ("several-roots.jsonl", "several-roots", 3),
    (
        "tool-call-unanswered-at-end.jsonl",
        "tool-call-unanswered",
        2,
    ),
    ("tool-call-unanswered.jsonl", "tool-call-unanswered", 2),
    ("tool-result-orphan.jsonl", "tool-result-orphan", 2),
    ("torn-record-glued.jsonl", "torn-record-glued", 2),
    ("torn-tail.jsonl", "torn-tail", 4),
    ("truncated-document.json", "truncated-document", 118),
];

fn fsck_json(args: &[&str], path: &Path) -> (Value, i32) {
    let out = tool()
        .arg("fsck")
        .arg("--json")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let doc: Value =
        serde_json::from_slice(&out.stdout).expect("fsck --json prints one JSON document");
    (doc, out.status.code().unwrap_or(-1))
}

fn file_entry<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("{name} is in the report"))
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// The files of `fixtures/<folder>` are exactly those `list` names, in order.
fn assert_lists_folder(folder: &str, list: &[(&str, &str, u64)]) {
    let mut names: Vec<String> = fs::read_dir(fixtures().join(folder))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = list.iter().map(|e| e.0).collect();
    assert_eq!(names, listed, "fixtures/{folder}");
}

#[test]
fn every_damage_fixture_is_listed_here() {
    assert_lists_folder("damaged", EXPECTED);
}

#[test]
fn fsck_finds_each_damage_with_its_code_and_line() {
    let (doc, code) = fsck_json(&[], &fixtures().join("damaged"));
    assert_eq!(code, 4, "errors left uncorrected");
    assert_eq!(doc["schema"], "sessiontool.fsck/1");
    assert_eq!(doc["exit_code"], 4);
    for (name, want, line) in EXPECTED {
        let f = file_entry(&doc, name);
        let found = f["issues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["code"] == *want)
            .unwrap_or_else(|| panic!("{name}: no `{want}` in {f:#}"));
        if *line > 0 {
            assert_eq!(found["line"], *line, "{name}: {found:#}");
            assert!(found["offset"].is_u64(), "{name}: byte offset given");
        }
    }
}

#[test]
fn repair_fixes_a_folder_keeps_backups_and_sidecars_and_a_second_fsck_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("damaged");
    copy_dir(&fixtures().join("damaged"), &work);
    let out = tool()
        .args(["fsck", "--repair"])
        .arg(&work)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for (name, code, _) in EXPECTED {
        let original = fs::read(fixtures().join("damaged").join(name)).unwrap();
        let backups: Vec<PathBuf> = fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{name}.bak-"))
            })
            .collect();
        // Warnings with no fix leave the file alone (and so need no backup).
        let fixable = !matches!(*code, "session-id-mismatch" | "several-roots");
        if fixable {
            assert_eq!(backups.len(), 1, "{name}: one backup");
            assert_eq!(
                fs::read(&backups[0]).unwrap(),
                original,
                "{name}: backup is the original"
            );
        }
    }
    for torn in [
        "torn-tail.jsonl",
        "torn-record-glued.jsonl",
        "invalid-json.jsonl",
        "truncated-document.json",
    ] {
        let sidecar = fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{torn}.torn-"))
            });
        assert!(sidecar.is_some(), "{torn}: dropped bytes are in a sidecar");
    }
    let (doc, code) = fsck_json(&[], &work);
    assert_eq!(code, 0, "clean after repair: {doc:#}");
    assert_eq!(doc["summary"]["fixable"], 0);
    // A second repair changes nothing.
    let out = tool()
        .args(["fsck", "--repair"])
        .arg(&work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_torn_tail_goes_to_the_sidecar_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("torn-tail.jsonl");
    let original = fs::read(fixtures().join("damaged/torn-tail.jsonl")).unwrap();
    fs::write(&file, &original).unwrap();
    tool().args(["repair"]).arg(&file).assert().code(1);
    let cut = original.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    assert_eq!(
        fs::read(&file).unwrap(),
        &original[..cut],
        "complete records kept as they were"
    );
    let sidecar = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".torn-"))
        .unwrap();
    assert_eq!(
        fs::read(sidecar).unwrap(),
        [&original[cut..], b"\n"].concat()
    );
}

/// Every record of the damaged input that is valid JSON is in the output byte for byte,
/// except that a relinked record differs only in its `parentUuid` value, and a renumbered one
/// only in its `seq`.
#[test]
fn repair_leaves_untouched_records_byte_identical() {
    for (name, _, _) in EXPECTED.iter().filter(|e| e.0.ends_with(".jsonl")) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        let original = fs::read(fixtures().join("damaged").join(name)).unwrap();
        fs::write(&file, &original).unwrap();
        let status = tool()
            .args(["repair", "--no-backup"])
            .arg(&file)
            .output()
            .unwrap()
            .status;
        // 1: repaired; 0: only warnings without a fix (the file is left as it is).
        assert!(matches!(status.code(), Some(0 | 1)), "{name}: {status}");
        let repaired = fs::read(&file).unwrap();
        let out_lines: Vec<&[u8]> = repaired.split(|&b| b == b'\n').collect();
        for line in original.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            let Ok(Value::Object(mut rec)) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if out_lines.contains(&line) {
                continue;
            }
            let same_but_fixed_field =
                out_lines
                    .iter()
                    .any(|o| match serde_json::from_slice::<Value>(o) {
                        Ok(Value::Object(mut out)) => {
                            for field in ["parentUuid", "seq"] {
                                out.shift_remove(field);
                                rec.shift_remove(field);
                            }
                            out == rec
                        }
                        _ => false,
                    });
            assert!(
                same_but_fixed_field,
                "{name}: record lost or changed: {}",
                String::from_utf8_lossy(line)
            );
        }
    }
}

#[test]
fn ambiguous_damage_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("unfixable");
    copy_dir(&fixtures().join("unfixable"), &work);
    let (doc, code) = fsck_json(&["--repair"], &work);
    assert_eq!(code, 4);
    for f in doc["files"].as_array().unwrap() {
        assert!(
            f.get("repair").is_none_or(|r| r["changed"] == false),
            "{f:#}"
        );
        let errors: Vec<&Value> = f["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["severity"] == "error")
            .collect();
        assert!(
            !errors.is_empty() && errors.iter().all(|i| i.get("fix").is_none()),
            "{f:#}"
        );
    }
    for e in fs::read_dir(&work).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        assert_eq!(
            fs::read(&p).unwrap(),
            fs::read(fixtures().join("unfixable").join(name)).unwrap()
        );
    }
}

#[test]
fn dry_run_shows_the_plan_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("damaged");
    copy_dir(&fixtures().join("damaged"), &work);
    let out = tool()
        .args(["fsck", "--repair", "-n"])
        .arg(&work)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("dry run"), "{text}");
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        fs::read_dir(&work).unwrap().count(),
        EXPECTED.len(),
        "no backup, sidecar or temp file"
    );
}

#[test]
fn a_live_lock_stops_the_repair() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("torn-tail.jsonl");
    fs::copy(fixtures().join("damaged/torn-tail.jsonl"), &file).unwrap();
    let lock = format!(
        r#"{{"pid":{},"timestamp":0,"sessionId":"x"}}"#,
        std::process::id()
    );
    fs::write(dir.path().join("torn-tail.lock"), lock).unwrap();
    let out = tool().arg("repair").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stdout).contains("says a tool is writing"));
    assert_eq!(
        fs::read(&file).unwrap(),
        fs::read(fixtures().join("damaged/torn-tail.jsonl")).unwrap()
    );
}

#[cfg(unix)]
#[test]
fn repair_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("glued.jsonl");
    fs::copy(fixtures().join("damaged/glued-records.jsonl"), &file).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    tool().arg("repair").arg(&file).assert().code(1);
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_file_that_changed_after_the_check_is_not_replaced() {
    use sessiontool::check::{CheckOptions, diagnose};
    use sessiontool::repair::{RepairOptions, repair};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("glued.jsonl");
    fs::copy(fixtures().join("damaged/glued-records.jsonl"), &file).unwrap();
    let diagnosis = diagnose(&file, &CheckOptions::default()).unwrap();
    // The agent appends a record between the check and the repair.
    let mut grown = fs::read(&file).unwrap();
    grown.extend_from_slice(b"{\"uuid\":\"late\"}\n");
    fs::write(&file, &grown).unwrap();
    let err = repair(&file, diagnosis, &RepairOptions::default()).unwrap_err();
    assert!(err.to_string().contains("changed"), "{err}");
    assert_eq!(
        fs::read(&file).unwrap(),
        grown,
        "the appended record is not lost"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file, backup or sidecar left"
    );
}

#[test]
fn exit_codes_for_usage_and_operational_errors() {
    tool()
        .args(["fsck", "--no-such-flag", "x"])
        .assert()
        .code(16);
    tool()
        .args(["fsck", "/no/such/file.jsonl"])
        .assert()
        .code(8);
    tool()
        .args(["fsck", "fixtures/qwen-jsonl/plain.jsonl"])
        .assert()
        .code(0);
}

#[test]
fn codes_are_listed() {
    let out = tool().args(["fsck", "--codes"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for code in [
        "torn-tail",
        "orphan-parent",
        "tool-call-unanswered",
        "truncated-document",
    ] {
        assert!(text.contains(code), "{code} in\n{text}");
    }
}

#[test]
fn report_snapshots() {
    let human = tool()
        .args(["fsck", "fixtures/damaged", "fixtures/unfixable"])
        .output()
        .unwrap();
    insta::assert_snapshot!("fsck_human", String::from_utf8_lossy(&human.stdout));
    let json = tool()
        .args(["fsck", "--json", "fixtures/damaged", "fixtures/unfixable"])
        .output()
        .unwrap();
    insta::assert_snapshot!("fsck_json", String::from_utf8_lossy(&json.stdout));
}

/// Every file in `fixtures/unfixable/`, the error fsck must name, and where.
const UNFIXABLE: &[(&str, &str, u64)] = &[
    ("checkpoint-not-history.json", "unreadable", 0),
    ("codex-session-meta-missing.jsonl", "header-missing", 1),
    ("duplicate-id-conflict.jsonl", "duplicate-id-conflict", 5),
    ("gemini-jsonl-header-missing.jsonl", "header-missing", 1),
    ("gemini-jsonl-rewind-unknown.jsonl", "rewind-unknown", 6),
    ("llxprt-session-start-missing.jsonl", "header-missing", 1),
    ("missing-field.jsonl", "missing-field", 2),
    ("pi-header-missing.jsonl", "header-missing", 1),
];

#[test]
fn each_unfixable_fixture_names_its_error_where_it_is() {
    assert_lists_folder("unfixable", UNFIXABLE);
    let (doc, _) = fsck_json(&[], &fixtures().join("unfixable"));
    for (name, want, line) in UNFIXABLE {
        let f = file_entry(&doc, name);
        let found = f["issues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["code"] == *want && i["severity"] == "error")
            .unwrap_or_else(|| panic!("{name}: no `{want}` error in {f:#}"));
        if *line > 0 {
            assert_eq!(found["line"], *line, "{name}: {found:#}");
        }
    }
}
