//! Every `--json` document against its JSON Schema in `schemas/`: each command is run on the
//! fixtures (store commands in fake homes under temp folders, never the real home), and its
//! output must be one object whose first field is `"schema": "sessiontool.<command>/1"` and
//! that validates. Further tests keep the schemas and the commands in step: every schema is
//! used here, every command with `--json` has a schema, and the enums list what the code has.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use sessiontool::ids::sha256_hex;

use common::{fixture, legacy};

const APP: &str = "/w/app";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tool() -> Command {
    Command::cargo_bin("sessiontool").unwrap()
}

/// The schema a command's `--json` document follows (`repair` prints fsck's).
fn schema_name(command: &str) -> &str {
    match command {
        "repair" => "fsck",
        other => other,
    }
}

fn schema_file(command: &str) -> PathBuf {
    let name = schema_name(command);
    root().join("schemas").join(format!("{name}.schema.json"))
}

fn load_schema(name: &str) -> Value {
    let path = root().join("schemas").join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `out` (a command's standard output, or standard error for `convert -o -`) checked as the
/// document of schema `sessiontool.<name>/1`: one JSON object, `schema` first, valid.
fn check(name: &str, out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{name}: not one JSON document: {e}\n{text}"));
    let first = doc
        .as_object()
        .unwrap_or_else(|| panic!("{name}: not an object: {text}"))
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()));
    assert_eq!(
        first,
        Some((
            "schema".to_string(),
            Value::from(format!("sessiontool.{name}/1"))
        )),
        "{name}: `schema` must be the first field\n{text}"
    );
    let schema = load_schema(name);
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("schemas/{name}.schema.json does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: the document does not follow schemas/{name}.schema.json:\n{}\n{text}",
        errors.join("\n")
    );
    doc
}

/// Runs `sessiontool ARGS` (ARGS include `--json`) and checks standard output against the
/// schema of `command`, the first argument. `codes` are the exit codes the case expects.
fn json_of(command: &str, args: &[&str], cwd: Option<&Path>, codes: &[i32]) -> Value {
    let mut c = tool();
    c.arg(command).args(args);
    if let Some(dir) = cwd {
        c.current_dir(dir);
    }
    let out = c.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "{command} {args:?}: exit {code}, expected one of {codes:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check(schema_name(command), &out.stdout)
}

/// A store command in the fake home `home` (run from inside it, so the current folder is no
/// project of the stores), with `--home home` and `--json`.
fn store_json(home: &Path, command: &str, args: &[&str], codes: &[i32]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--home", home.to_str().unwrap(), "--json"]);
    json_of(command, &all, Some(home), codes)
}

/// `convert --store`: a fixture into a tool's store for `project`; the checked document.
fn place(home: &Path, fixture_rel: &str, to: &str, project: &str, more: &[&str]) -> Value {
    let input = fixture(fixture_rel);
    let mut args = vec![
        input.to_str().unwrap(),
        "--to",
        to,
        "--store",
        "--project",
        project,
    ];
    args.extend(more);
    let doc = store_json(home, "convert", &args, &[0]);
    assert_eq!(doc["mode"], "store");
    doc
}

/// A home with something of every kind `list` and `recover` report for /w/app: sessions of
/// several tools placed by `convert --store`, a legacy Gemini file in a sha256 folder, a
/// legacy Qwen Code file, a checkpoint, a damaged Qwen session and a file Gemini CLI set
/// aside as unreadable; and another project's session.
fn fake_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let hash = sha256_hex(APP);
    let gemini_chats = h.join(".gemini/tmp").join(&hash).join("chats");
    legacy(
        "gemini-json/plain.json",
        APP,
        &gemini_chats,
        "session-2025-09-14T08-14-a116c9ed.json",
    );
    legacy(
        "gemini-json/tools.json",
        APP,
        &h.join(".qwen/tmp").join(&hash).join("chats"),
        "session-2025-10-01T09-56-f9d35d43.json",
    );
    std::fs::copy(
        fixture("damaged/truncated-document.json"),
        gemini_chats.join("session-2025-01-01T00-00-abcdef12.json.unreadable-1700000000000"),
    )
    .unwrap();
    place(h, "gemini-jsonl/plain.jsonl", "gemini-jsonl", APP, &[]);
    place(h, "claude-jsonl/plain.jsonl", "claude-jsonl", APP, &[]);
    place(h, "codex-jsonl/messages.jsonl", "codex-jsonl", APP, &[]);
    place(
        h,
        "gemini-json/thoughts.json",
        "checkpoint",
        APP,
        &["--tag", "my/tag"],
    );
    place(h, "qwen-jsonl/tools.jsonl", "qwen-jsonl", "/w/other", &[]);
    // A Qwen Code session of /w/app whose writer crashed mid-line.
    let qwen = place(h, "qwen-jsonl/plain.jsonl", "qwen-jsonl", APP, &[]);
    let path = PathBuf::from(qwen["output"].as_str().unwrap());
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"uuid":"torn","parentUuid":"#);
    std::fs::write(&path, bytes).unwrap();
    home
}

#[test]
fn convert_one_file_to_a_file_and_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("checkpoint-x.json");
    let doc = json_of(
        "convert",
        &[
            fixture("gemini-json/notices.json").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
        None,
        &[0],
    );
    assert_eq!(doc["mode"], "file");
    assert!(!doc["losses"]["losses"].as_array().unwrap().is_empty());
    // The session on standard output, the report on standard error.
    let run = tool()
        .args(["convert", "--to", "qwen-jsonl", "-o", "-", "--json"])
        .arg(fixture("damaged/torn-tail.jsonl"))
        .output()
        .unwrap();
    assert!(run.status.success());
    let doc = check("convert", &run.stderr);
    assert_eq!(doc["output"], "-");
    assert!(!doc["diagnostics"].as_array().unwrap().is_empty());
}

#[test]
fn convert_a_folder_with_converted_failed_and_skipped_files() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(fixture("gemini-json/plain.json"), src.join("a.json")).unwrap();
    std::fs::copy(fixture("gemini-json/tools.json"), src.join("b.json")).unwrap();
    std::fs::write(src.join("notes.txt"), "hello").unwrap();
    // b's output exists: b fails, the others go on.
    std::fs::write(out.join("b.jsonl"), "taken").unwrap();
    let doc = json_of(
        "convert",
        &[
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "--json",
        ],
        None,
        &[5],
    );
    assert_eq!(doc["mode"], "folder");
    assert_eq!(
        (&doc["converted"], &doc["failed"], &doc["skipped"]),
        (&Value::from(1), &Value::from(1), &Value::from(1)),
        "{doc:#}"
    );
}

#[test]
fn convert_into_stores() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for (source, to) in [
        ("qwen-jsonl/plain.jsonl", "gemini-jsonl"),
        ("gemini-json/plain.json", "qwen-jsonl"),
        ("qwen-jsonl/tools.jsonl", "pi-jsonl"),
        ("gemini-json/tools.json", "simple-agent-json"),
    ] {
        let doc = place(h, source, to, APP, &[]);
        assert_eq!(doc["to"], to);
    }
}

/// `convert -n --json` in each mode: the document says it was a dry run, and nothing is
/// written.
#[test]
fn convert_dry_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let input = fixture("gemini-json/plain.json");
    let doc = json_of(
        "convert",
        &[
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-n",
            "--json",
        ],
        None,
        &[0],
    );
    assert_eq!(
        (&doc["mode"], &doc["dry_run"]),
        (&"file".into(), &true.into())
    );
    std::fs::write(&out, "mine").unwrap();
    let doc = json_of(
        "convert",
        &[
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-n",
            "--force",
            "--json",
        ],
        None,
        &[0],
    );
    assert_eq!(doc["would_replace"], true, "{doc:#}");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let doc = store_json(
        &home,
        "convert",
        &[
            input.to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            APP,
            "-n",
        ],
        &[0],
    );
    assert_eq!(
        (&doc["mode"], &doc["dry_run"]),
        (&"store".into(), &true.into())
    );
    let src = fixture("gemini-json");
    let folder = dir.path().join("folder");
    let doc = json_of(
        "convert",
        &[
            src.to_str().unwrap(),
            "-o",
            folder.to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "-n",
            "--json",
        ],
        None,
        &[0],
    );
    assert_eq!(
        (&doc["mode"], &doc["dry_run"]),
        (&"folder".into(), &true.into())
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
    assert!(!folder.exists());
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "nothing in the home"
    );
}

/// A command given `--json` that fails prints a `sessiontool.error/1` document (on standard
/// output; on standard error for `convert -o -`), with the exit code it has without `--json`.
#[test]
fn failures_with_json_are_error_documents() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    let out = dir.path().join("out.json");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["show", missing, "--json"], 3, "input"),
        (vec!["tree", "--json", missing], 3, "input"),
        (
            vec!["convert", missing, "-o", out.to_str().unwrap(), "--json"],
            3,
            "input",
        ),
        (vec!["fsck", "--json", missing], 8, "operational"),
        (
            vec!["convert", "x", "--to", "nope", "-o", "-", "--json"],
            2,
            "usage",
        ),
        (vec!["fsck", "--json", "--bogus", "x"], 16, "usage"),
        (
            vec!["list", "--json", "--home", missing, "--project", APP],
            3,
            "input",
        ),
    ];
    for (args, code, kind) in cases {
        let run = tool().args(&args).output().unwrap();
        assert_eq!(run.status.code(), Some(code), "{args:?}");
        let to_stdout = !args.contains(&"-o") || !args.contains(&"-");
        let (doc_stream, other) = if to_stdout {
            (&run.stdout, &run.stderr)
        } else {
            (&run.stderr, &run.stdout)
        };
        // The text for people is on standard error too; the document is the JSON part.
        let text = String::from_utf8_lossy(doc_stream);
        let json = &text[text.find('{').unwrap_or_else(|| panic!("{args:?}: {text}"))..];
        let doc = check("error", json.as_bytes());
        assert_eq!(doc["exit_code"], code, "{args:?}");
        assert_eq!(doc["error"]["kind"], kind, "{args:?}: {doc:#}");
        assert_eq!(doc["command"], args[0], "{args:?}");
        assert!(!doc["error"]["message"].as_str().unwrap().is_empty());
        assert!(
            String::from_utf8_lossy(&run.stderr).contains("error"),
            "{args:?}: the message is said in words too"
        );
        if !to_stdout {
            assert!(
                other.is_empty(),
                "{args:?}: standard output is the session's"
            );
        }
    }
}

#[test]
fn tree_of_branching_and_orphaned_sessions() {
    for (fixture, head, orphans) in [
        ("pi-jsonl/v3-branches.jsonl", "aaaa0005", 0),
        ("damaged/orphan-parent.jsonl", "fd45a290", 1),
        ("qwen-jsonl/branches.jsonl", "798f0169", 0),
    ] {
        let out = tool()
            .args(["tree", "--json"])
            .arg(root().join("fixtures").join(fixture))
            .output()
            .unwrap();
        assert!(out.status.success(), "{fixture}");
        let doc = check("tree", &out.stdout);
        assert!(
            doc["head"].as_str().unwrap().starts_with(head),
            "{fixture}: {doc:#}"
        );
        let nodes = doc["nodes"].as_array().unwrap();
        let missing = nodes.iter().filter(|n| n["parent_missing"] == true).count();
        assert_eq!(missing, orphans, "{fixture}");
        assert_eq!(
            nodes.iter().filter(|n| n["head"] == true).count(),
            1,
            "{fixture}"
        );
        let leaves = nodes.iter().filter(|n| n["leaf"] == true).count() as u64;
        assert_eq!(doc["branches"].as_u64(), Some(leaves), "{fixture}");
    }
}

#[test]
fn show_every_fixture() {
    let mut shown = 0;
    let mut contents = BTreeSet::new();
    let mut events = BTreeSet::new();
    // Every fixture of every format (not the fuzz corpus, which tests/fuzz.rs has).
    for entry in walkdir::WalkDir::new(root().join("fixtures"))
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != "fuzz")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let out = tool()
            .args(["show", "--json"])
            .arg(entry.path())
            .output()
            .unwrap();
        if !out.status.success() {
            // Not a session sessiontool reads (damaged beyond reading, or not one at all).
            continue;
        }
        let doc = check("show", &out.stdout);
        for node in doc["session"]["nodes"].as_array().unwrap() {
            if let Some(e) = node["body"]["event"].as_str() {
                events.insert(e.to_string());
            }
            for part in node["body"]["parts"].as_array().into_iter().flatten() {
                contents.insert(part["content"]["type"].as_str().unwrap().to_string());
            }
        }
        shown += 1;
    }
    assert!(shown > 40, "only {shown} fixtures shown");
    // The schema was checked against most kinds of content and event, not a few.
    for kind in ["text", "thought", "tool_call", "tool_result", "media"] {
        assert!(
            contents.contains(kind),
            "no {kind} part in any fixture: {contents:?}"
        );
    }
    assert!(events.len() >= 2, "{events:?}");
}

#[test]
fn detect_known_unknown_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "hello").unwrap();
    let mut args: Vec<String> = ["gemini-json/plain.json", "qwen-jsonl/plain.jsonl"]
        .iter()
        .map(|f| fixture(f).display().to_string())
        .collect();
    args.push(junk.display().to_string());
    args.push(dir.path().join("missing.json").display().to_string());
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let doc = json_of("detect", &args, None, &[3]);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    assert!(files[3]["error"].is_string());
}

#[test]
fn formats_lists_every_format() {
    let doc = json_of("formats", &["--json"], None, &[0]);
    let names: Vec<&str> = doc["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = sessiontool::formats::all()
        .iter()
        .map(|f| f.name())
        .chain(
            sessiontool::formats::database::all()
                .iter()
                .map(|f| f.name()),
        )
        .collect();
    assert_eq!(names, all);
    // Exports are written, never read.
    for f in doc["formats"].as_array().unwrap() {
        assert_eq!(f["read"], f["tool"] != "export", "{f}");
    }
}

#[test]
fn fsck_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    for e in std::fs::read_dir(fixture("damaged")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), damaged.join(e.file_name())).unwrap();
    }
    std::fs::write(damaged.join("notes.txt"), "not a session").unwrap();
    let unfixable = fixture("unfixable");
    let doc = json_of(
        "fsck",
        &[
            damaged.to_str().unwrap(),
            unfixable.to_str().unwrap(),
            "--json",
        ],
        None,
        &[4],
    );
    assert!(doc["summary"]["skipped"].as_u64().unwrap() >= 1);
    let dry = json_of(
        "fsck",
        &["--repair", "-n", damaged.to_str().unwrap(), "--json"],
        None,
        &[4],
    );
    assert!(
        dry["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["repair"]["changed"] == false)
    );
    let repaired = json_of(
        "repair",
        &[damaged.to_str().unwrap(), "--json"],
        None,
        &[1, 5],
    );
    let reports: Vec<&Value> = repaired["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.get("repair"))
        .collect();
    assert!(
        reports
            .iter()
            .any(|r| r["changed"] == true && r["backup"].is_string())
    );
    assert!(reports.iter().any(|r| r["sidecar"].is_string()));
}

#[test]
fn fsck_codes() {
    let out = tool().args(["fsck", "--codes", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc = check("codes", &out.stdout);
    let codes = doc["codes"].as_array().unwrap();
    assert_eq!(codes.len(), sessiontool::check::CODES.len());
    assert!(codes.iter().any(|c| c["code"] == "rewind-unknown"));
}

#[test]
fn dirname_every_scheme() {
    let home = tempfile::tempdir().unwrap();
    let long = format!("/w/{}", "x".repeat(240));
    for path in [APP, long.as_str()] {
        let doc = json_of(
            "dirname",
            &[path, "--home", home.path().to_str().unwrap(), "--json"],
            None,
            &[0],
        );
        assert_eq!(doc["folders"].as_array().unwrap().len(), 5);
    }
}

#[test]
fn list_a_project_and_every_project() {
    let home = fake_home();
    let h = home.path();
    let doc = store_json(h, "list", &["--project", APP], &[0]);
    let kinds: BTreeSet<&str> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    for kind in ["session", "legacy", "checkpoint", "unreadable"] {
        assert!(kinds.contains(kind), "no {kind} in {doc:#}");
    }
    let health: BTreeSet<&str> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["health"].as_str().unwrap())
        .collect();
    assert!(health.contains("repairable"), "{doc:#}");
    let all = store_json(h, "list", &["--all"], &[0]);
    assert!(all["project"].is_null());
}

#[test]
fn recover_dry_run_repair_restore_and_place() {
    let home = fake_home();
    let h = home.path();
    let mut steps = BTreeSet::new();
    let mut collect = |doc: &Value| {
        for s in doc["sessions"].as_array().unwrap() {
            for step in s["steps"].as_array().unwrap() {
                steps.insert(step["step"].as_str().unwrap().to_string());
            }
        }
    };
    let dry = store_json(h, "recover", &["--project", APP, "-n"], &[0]);
    assert_eq!(dry["dry_run"], true);
    collect(&dry);
    let done = store_json(h, "recover", &["--project", APP], &[0]);
    collect(&done);
    let placed = store_json(
        h,
        "recover",
        &[
            "--latest",
            "--project",
            APP,
            "--checkpoint",
            "again",
            "--to",
            "pi-jsonl",
        ],
        &[0],
    );
    collect(&placed);
    let healthy = store_json(h, "recover", &["a116c9ed", "--project", APP], &[0]);
    collect(&healthy);
    let nothing = store_json(h, "recover", &["--project", APP], &[0]);
    assert!(nothing["sessions"].as_array().unwrap().is_empty());
    for step in ["restored", "repaired", "placed", "healthy"] {
        assert!(steps.contains(step), "no {step} step: {steps:?}");
    }
}

#[test]
fn migrate_gemini_and_qwen() {
    let home = fake_home();
    let h = home.path();
    let args = ["--tool", "gemini", "--to", "gemini-slug", "--project", APP];
    let dry = store_json(h, "migrate", &[&args[..], &["-n"]].concat(), &[0]);
    assert!(dry["done"].is_null() && !dry["copies"].as_array().unwrap().is_empty());
    let done = store_json(h, "migrate", &args, &[0, 1]);
    assert!(done["done"].is_array(), "{done:#}");
    let qwen = store_json(
        h,
        "migrate",
        &[
            "--tool",
            "qwen",
            "--to",
            "dashed",
            "--project",
            APP,
            "--move",
        ],
        &[0, 1],
    );
    let hows: Vec<&str> = qwen["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["how"].as_str().unwrap())
        .collect();
    assert!(hows.iter().any(|h| h.starts_with("convert")), "{hows:?}");
}

#[test]
fn relocate_dry_run_done_and_failed() {
    let home = fake_home();
    let h = home.path();
    // The file Gemini CLI set aside cannot be read, so nothing may move yet.
    let blocked = store_json(h, "relocate", &[APP, "/w/moved", "-n"], &[4]);
    assert!(
        !blocked["problems"].as_array().unwrap().is_empty(),
        "{blocked:#}"
    );
    store_json(h, "recover", &["--project", APP], &[0]);
    let dry = store_json(h, "relocate", &[APP, "/w/moved", "-n"], &[0]);
    assert!(!dry["changes"].as_array().unwrap().is_empty(), "{dry:#}");
    assert!(dry["done"].as_array().unwrap().is_empty());
    let done = store_json(h, "relocate", &[APP, "/w/moved"], &[0]);
    assert!(!done["done"].as_array().unwrap().is_empty(), "{done:#}");
    // Claude Code's new folder name is taken by a file: staging fails, nothing changes.
    std::fs::write(h.join(".claude/projects/-w-app3"), "in the way").unwrap();
    let failed = store_json(h, "relocate", &["/w/moved", "/w/app3"], &[4]);
    assert!(failed["error"].is_string(), "{failed:#}");
}

#[test]
fn switch_dry_run_repaired_budget_and_resume() {
    let home = fake_home();
    let h = home.path();
    let list = store_json(h, "list", &["--project", APP], &[0]);
    let path_of = |tool: &str, health: &str| -> String {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == tool && s["health"] == health)
            .unwrap_or_else(|| panic!("no {health} {tool} session: {list:#}"))["path"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The damaged Qwen Code session, repaired on a copy, cut to a budget, into Claude Code.
    let damaged = path_of("qwen", "repairable");
    let doc = store_json(
        h,
        "switch",
        &[&damaged, "--to", "claude", "--max-tokens", "120"],
        &[0],
    );
    assert!(doc["repaired"].is_object(), "{doc:#}");
    assert!(doc["budget"].is_object(), "{doc:#}");
    assert!(doc["resume"]["argv"][0] == "claude", "{doc:#}");
    rejects("switch", &doc, |d| {
        d["resume"]["argv"] = Value::Array(vec![])
    });
    rejects("switch", &doc, |d| d["source"]["sha256"] = "abc".into());
    rejects("switch", &doc, |d| {
        d.as_object_mut().unwrap().remove("repaired");
    });
    // A dry run into Gemini CLI's store, and a tool without a resume command.
    let codex = path_of("codex", "ok");
    let dry = store_json(h, "switch", &[&codex, "--to", "gemini", "-n"], &[0]);
    assert_eq!(dry["dry_run"], true);
    assert!(dry["repaired"].is_null() && dry["budget"].is_null());
    let agent = store_json(h, "switch", &[&codex, "--to", "agent"], &[0]);
    assert!(agent["resume"].is_null(), "{agent:#}");
    // convert --max-tokens reports its budget in convert's schema.
    let out = h.join("cut.jsonl");
    let input = fixture("claude-jsonl/tools.jsonl");
    let conv = json_of(
        "convert",
        &[
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--max-tokens",
            "60",
            "--json",
        ],
        None,
        &[0],
    );
    assert!(conv["budget"]["left_out"].as_u64().unwrap() > 0, "{conv:#}");
}

fn is_valid(name: &str, doc: &Value) -> bool {
    jsonschema::draft202012::new(&load_schema(name))
        .unwrap()
        .is_valid(doc)
}

/// A valid document of schema `name`, changed by `break_it`, must fail it: the schemas check
/// something (required fields, enums, the shape each `mode` or `step` has).
fn rejects(name: &str, doc: &Value, break_it: impl Fn(&mut Value)) {
    assert!(is_valid(name, doc));
    let mut doc = doc.clone();
    break_it(&mut doc);
    assert!(!is_valid(name, &doc), "{name} accepts {doc:#}");
}

#[test]
fn schemas_reject_broken_documents() {
    let dir = tempfile::tempdir().unwrap();
    let notices = fixture("gemini-json/notices.json");
    let notices = notices.to_str().unwrap();
    let out = dir.path().join("x.jsonl");
    let convert = json_of(
        "convert",
        &[notices, "-o", out.to_str().unwrap(), "--json"],
        None,
        &[0],
    );
    rejects("convert", &convert, |d| {
        d["schema"] = "sessiontool.convert/2".into()
    });
    rejects("convert", &convert, |d| {
        d.as_object_mut().unwrap().remove("to");
    });
    rejects("convert", &convert, |d| d["mode"] = "store".into());
    rejects("convert", &convert, |d| d["losses"] = Value::Array(vec![]));
    let formats = json_of("formats", &["--json"], None, &[0]);
    rejects("formats", &formats, |d| {
        d["formats"][0]["tool"] = "nope".into()
    });
    let detect = json_of("detect", &[notices, "--json"], None, &[0]);
    rejects("detect", &detect, |d| {
        d["files"][0]["format"] = "gemini".into()
    });
    let show = json_of("show", &[notices, "--json"], None, &[0]);
    rejects("show", &show, |d| {
        d["session"]["nodes"][0]["body"]["node"] = "bogus".into()
    });
    rejects("show", &show, |d| {
        d["session"]["nodes"][0]["body"]["parts"][0]["content"]["type"] = "bogus".into()
    });
    let damaged = fixture("damaged/torn-tail.jsonl");
    let fsck = json_of("fsck", &[damaged.to_str().unwrap(), "--json"], None, &[4]);
    rejects("fsck", &fsck, |d| {
        d["files"][0]["issues"][0]["severity"] = "fatal".into()
    });
    let home = dir.path().to_str().unwrap();
    let dirname = json_of("dirname", &[APP, "--home", home, "--json"], None, &[0]);
    rejects("dirname", &dirname, |d| {
        d["folders"][0]["scheme"] = "md5".into()
    });

    let home = fake_home();
    let h = home.path();
    let list = store_json(h, "list", &["--project", APP], &[0]);
    rejects("list", &list, |d| {
        d["sessions"][0]["health"] = "REPAIR".into()
    });
    rejects("list", &list, |d| {
        d["sessions"][0]["tool"] = "cursor".into()
    });
    let checkpoint = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["kind"] == "checkpoint")
        .unwrap();
    rejects("list", &list, |d| {
        d["sessions"][checkpoint]
            .as_object_mut()
            .unwrap()
            .remove("tag");
    });
    let recover = store_json(h, "recover", &["--project", APP, "-n"], &[0]);
    rejects("recover", &recover, |d| {
        d["sessions"][0]["steps"][0]["step"] = "exploded".into()
    });
    let args = ["--tool", "gemini", "--to", "gemini-slug", "-n"];
    let migrate = store_json(h, "migrate", &args, &[0]);
    rejects("migrate", &migrate, |d| {
        d["copies"][0]["how"] = "teleport".into()
    });
    let relocate = store_json(h, "relocate", &[APP, "/w/moved", "-n"], &[4]);
    rejects("relocate", &relocate, |d| d["changes"] = Value::Null);
}

/// The source of this file: the meta tests below read it to see what the tests above check.
const SOURCE: &str = include_str!("json_schemas.rs");

fn schema_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".schema.json").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// The subcommands `sessiontool --help` lists.
fn commands() -> Vec<String> {
    let out = tool().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Each command with `--json`, the schema its document follows, and the test above that
/// runs it and checks the document.
const COVERED: &[(&str, &str, &str)] = &[
    (
        "convert",
        "convert",
        "convert_one_file_to_a_file_and_to_standard_output",
    ),
    (
        "convert",
        "convert",
        "convert_a_folder_with_converted_failed_and_skipped_files",
    ),
    ("convert", "convert", "convert_into_stores"),
    ("convert", "convert", "convert_dry_runs"),
    (
        "convert (failing)",
        "error",
        "failures_with_json_are_error_documents",
    ),
    ("show", "show", "show_every_fixture"),
    ("tree", "tree", "tree_of_branching_and_orphaned_sessions"),
    ("detect", "detect", "detect_known_unknown_and_missing_files"),
    ("formats", "formats", "formats_lists_every_format"),
    ("fsck", "fsck", "fsck_and_repair"),
    ("fsck --codes", "codes", "fsck_codes"),
    ("repair", "fsck", "fsck_and_repair"),
    ("dirname", "dirname", "dirname_every_scheme"),
    ("list", "list", "list_a_project_and_every_project"),
    (
        "recover",
        "recover",
        "recover_dry_run_repair_restore_and_place",
    ),
    ("migrate", "migrate", "migrate_gemini_and_qwen"),
    ("relocate", "relocate", "relocate_dry_run_done_and_failed"),
    (
        "switch",
        "switch",
        "switch_dry_run_repaired_budget_and_resume",
    ),
];

#[test]
fn every_command_with_json_has_a_schema_and_a_test() {
    let commands = commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for c in &commands {
        let out = tool().args([c.as_str(), "--help"]).output().unwrap();
        if !String::from_utf8_lossy(&out.stdout).contains("--json") {
            continue;
        }
        assert!(
            COVERED.iter().any(|(command, _, _)| command == c),
            "`{c} --json` is in no test (add it to COVERED)"
        );
    }
    for (command, schema, test) in COVERED {
        // `fsck --codes` prints a document of its own; a command alone prints its namesake.
        let (command, with_args) = match command.split_once(' ') {
            Some((c, _)) => (c, true),
            None => (*command, false),
        };
        if !with_args {
            assert_eq!(schema_file(command), schema_file(schema), "{command}");
        }
        let command = &command;
        assert!(
            schema_file(schema).is_file(),
            "`{command} --json` has no schema: {}",
            schema_file(schema).display()
        );
        assert!(
            SOURCE.contains(&format!("fn {test}()")),
            "no test {test} (for `{command} --json`)"
        );
        assert!(
            commands.iter().any(|c| c == command),
            "no command {command}"
        );
    }
}

#[test]
fn every_schema_is_checked_by_a_test_and_is_a_valid_schema() {
    let names = schema_names();
    for name in &names {
        assert!(
            COVERED.iter().any(|(_, schema, _)| schema == name),
            "no test checks a document against schemas/{name}.schema.json"
        );
        let schema = load_schema(name);
        jsonschema::draft202012::meta::validate(&schema)
            .unwrap_or_else(|e| panic!("schemas/{name}.schema.json is not a valid schema: {e}"));
        assert_eq!(
            schema["properties"]["schema"]["const"],
            format!("sessiontool.{name}/1"),
            "{name}"
        );
        let description = schema["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("within `/1` fields are only ever added")
                && description.contains("bumps the version"),
            "{name}: the description must state the versioning rule"
        );
    }
    for (_, schema, _) in COVERED {
        assert!(
            names.iter().any(|n| n == schema),
            "no schemas/{schema}.schema.json"
        );
    }
}

#[test]
fn shared_definitions_are_the_same_in_every_schema() {
    let mut seen: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for name in schema_names() {
        let schema = load_schema(&name);
        for (def, value) in schema["$defs"].as_object().into_iter().flatten() {
            match seen.get(def) {
                Some((first, v)) => assert_eq!(
                    v, value,
                    "$defs/{def} differs between {first}.schema.json and {name}.schema.json"
                ),
                None => {
                    seen.insert(def.clone(), (name.clone(), value.clone()));
                }
            }
        }
    }
}

#[test]
fn enums_list_every_tool_format_and_scheme_the_code_has() {
    use sessiontool::store::scheme::Scheme;
    use sessiontool::store::tool::Tool;
    let names = |v: &Value| -> Vec<String> {
        v["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let list = load_schema("list");
    let tools: Vec<String> = Tool::all().map(|t| t.name().to_string()).collect();
    assert_eq!(names(&list["$defs"]["tool"]), tools);
    let formats: Vec<String> = sessiontool::formats::all()
        .iter()
        .map(|f| f.name().to_string())
        .chain(
            sessiontool::formats::database::all()
                .iter()
                .map(|f| f.name().to_string()),
        )
        .collect();
    assert_eq!(names(&list["$defs"]["format"]), formats);
    let schemes: Vec<String> = Scheme::ALL.iter().map(|s| s.name().to_string()).collect();
    assert_eq!(names(&load_schema("dirname")["$defs"]["scheme"]), schemes);
    let severities: Vec<String> = ["info", "warning", "error"].map(String::from).to_vec();
    assert_eq!(names(&load_schema("fsck")["$defs"]["severity"]), severities);
}
