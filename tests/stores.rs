//! The stores end to end, in fake homes: `list`, `recover`, `relocate`, `migrate` and
//! `convert --store` over Gemini (both folder schemes), Qwen Code (both layouts), Claude Code
//! and the other tools, with collisions, a moved project, dry runs and a failure half-way.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use sessiontool::ids::sha256_hex;

use common::{fixture, legacy};

const APP: &str = "/w/app";

/// The command run in `home` (outside any project, so only --project decides), with
/// `--home home`.
fn run(home: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::cargo_bin("sessiontool").unwrap();
    c.current_dir(home)
        .args(args)
        .args(["--home", home.to_str().unwrap()]);
    c.output().unwrap()
}

fn json(home: &Path, args: &[&str]) -> Value {
    let out = run(home, args);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `convert --store`: a fixture into a tool's store for `project`.
fn place(home: &Path, fixture_rel: &str, to: &str, project: &str) -> PathBuf {
    let doc = json(
        home,
        &[
            "convert",
            fixture(fixture_rel).to_str().unwrap(),
            "--to",
            to,
            "--store",
            "--project",
            project,
            "--json",
        ],
    );
    PathBuf::from(doc["output"].as_str().unwrap())
}

/// Every file below `dir` with its content hash.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            (
                e.path().to_path_buf(),
                sessiontool::ids::sha256_hex_bytes(&bytes),
            )
        })
        .collect()
}

/// Gemini (sha256 and slug), Qwen (legacy and current), Claude sessions of /w/app, plus
/// another project's sessions and one of `/w.app`, whose Qwen and Claude folder names are the
/// same as /w/app's.
fn fake_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let hash = sha256_hex(APP);
    legacy(
        "gemini-json/plain.json",
        APP,
        &h.join(".gemini/tmp").join(&hash).join("chats"),
        "session-2025-09-14T08-14-a116c9ed.json",
    );
    legacy(
        "gemini-json/tools.json",
        APP,
        &h.join(".qwen/tmp").join(&hash).join("chats"),
        "session-2025-10-01T09-56-f9d35d43.json",
    );
    place(h, "gemini-jsonl/plain.jsonl", "gemini-jsonl", APP);
    place(h, "qwen-jsonl/plain.jsonl", "qwen-jsonl", APP);
    place(h, "claude-jsonl/plain.jsonl", "claude-jsonl", APP);
    // Not /w/app's: another project, and a project whose dashed names collide with it.
    place(h, "qwen-jsonl/tools.jsonl", "qwen-jsonl", "/w/other");
    place(h, "qwen-jsonl/unicode.jsonl", "qwen-jsonl", "/w.app");
    place(h, "qwen-jsonl/seed000.jsonl", "claude-jsonl", "/w.app");
    legacy(
        "gemini-json/thoughts.json",
        "/w/other",
        &h.join(".gemini/tmp")
            .join(sha256_hex("/w/other"))
            .join("chats"),
        "session-2025-12-02T16-41-baaa5732.json",
    );
    home
}

/// How many errors fsck finds in a whole home.
fn fsck_errors(home: &Path) -> u64 {
    let out = Command::cargo_bin("sessiontool")
        .unwrap()
        .args(["fsck", "--json"])
        .arg(home)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["summary"]["errors"].as_u64().unwrap()
}

fn rows(list: &Value) -> Vec<(String, String, u64, String)> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["tool"].as_str().unwrap().to_string(),
                s["id"].as_str().unwrap_or("-").chars().take(8).collect(),
                s["messages"].as_u64().unwrap(),
                s["format"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

#[test]
fn list_shows_every_tools_sessions_of_the_project_newest_first() {
    let home = fake_home();
    let list = json(home.path(), &["list", "--project", APP, "--json"]);
    assert_eq!(list["schema"], "sessiontool.list/1");
    let got = rows(&list);
    assert_eq!(
        got,
        vec![
            ("gemini".into(), "7c1e0a52".into(), 2, "gemini-jsonl".into()),
            ("qwen".into(), "6b0b0776".into(), 4, "qwen-jsonl".into()),
            ("claude".into(), "5f0c2d1e".into(), 2, "claude-jsonl".into()),
            ("qwen".into(), "f9d35d43".into(), 6, "gemini-json".into()),
            ("gemini".into(), "a116c9ed".into(), 6, "gemini-json".into()),
        ]
    );
    for s in list["sessions"].as_array().unwrap() {
        assert_eq!(s["project"], APP, "{s}");
        assert!(s["updated"].is_string());
    }
    let legacy = &list["sessions"][3];
    assert_eq!(legacy["kind"], "legacy");
    // Newest first.
    let times: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["updated"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
}

#[test]
fn list_keeps_projects_with_the_same_folder_name_apart() {
    let home = fake_home();
    let list = json(home.path(), &["list", "--project", "/w.app", "--json"]);
    let got = rows(&list);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|r| r.0 == "qwen" || r.0 == "claude"));
    let all = json(home.path(), &["list", "--all", "--json"]);
    // /w/app's 5, /w.app's 2, /w/other's 2.
    assert_eq!(all["sessions"].as_array().unwrap().len(), 9);
}

#[test]
fn the_human_list_names_the_next_command() {
    let home = fake_home();
    let out = run(home.path(), &["list", "--project", APP]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5 session(s) for /w/app"), "{text}");
    assert!(text.contains("[legacy: not listed by the tool]"), "{text}");
    assert!(
        text.contains("next: sessiontool recover --project /w/app"),
        "{text}"
    );
}

fn gemini_only_home(fixture_rel: &str) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini/tmp").join(sha256_hex(APP));
    legacy(
        fixture_rel,
        APP,
        &dir.join("chats"),
        "session-2025-11-12T07-00-182742ff.json",
    );
    (home, dir)
}

#[test]
fn recover_checkpoint_writes_the_encoded_tag_beside_the_session_with_seed_003s_content() {
    let (home, dir) = gemini_only_home("gemini-json/seed003.json");
    let doc = json(
        home.path(),
        &[
            "recover",
            "--latest",
            "--project",
            APP,
            "--checkpoint",
            "my/tag",
            "--json",
        ],
    );
    assert_eq!(doc["schema"], "sessiontool.recover/1");
    let written = dir.join("checkpoint-my%2Ftag.json");
    assert!(written.is_file(), "{doc:#}");
    let checkpoint: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    let history = checkpoint["history"].as_array().unwrap();
    // Seed 003's mapping: user -> user, gemini -> model, content -> a text part, each tool
    // call -> a functionCall part in the model turn and its result as a functionResponse.
    // (The first turn is the context turn Gemini CLI hides on resume.)
    let texts: Vec<(&str, String)> = history
        .iter()
        .map(|c| {
            let parts = c["parts"].as_array().unwrap();
            let kinds: Vec<&str> = parts
                .iter()
                .map(|p| p.as_object().unwrap().keys().next().unwrap().as_str())
                .collect();
            (c["role"].as_str().unwrap(), kinds.join("+"))
        })
        .collect();
    assert_eq!(texts[1], ("user", "text".to_string()), "{texts:?}");
    assert_eq!(
        history[1]["parts"][0]["text"],
        "Hello, Gemini! What's the weather like today?"
    );
    assert!(
        texts
            .iter()
            .any(|(r, k)| *r == "model" && k.contains("functionCall")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|(r, k)| *r == "user" && k.contains("functionResponse")),
        "{texts:?}"
    );
    let call = history
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap())
        .find_map(|p| p.get("functionCall"))
        .unwrap();
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["args"]["location"], "New York");
    // The session itself is untouched and the tag never becomes a path.
    let out = run(
        home.path(),
        &[
            "recover",
            "--latest",
            "--project",
            APP,
            "--checkpoint",
            "../x",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("checkpoint-..%2Fx.json").is_file());
    assert!(!dir.parent().unwrap().join("x.json").exists());
    assert!(!dir.join("../checkpoint-x.json").exists());
}

#[test]
fn recover_repairs_damaged_sessions_and_restores_files_gemini_set_aside() {
    let project = "/home/dana/projects/pomodoro";
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let chats = h.join(".qwen/projects/-home-dana-projects-pomodoro/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let damaged = chats.join("6b0b0776-e08e-426e-bff4-91f7fbcd1892.jsonl");
    std::fs::copy(fixture("damaged/torn-tail.jsonl"), &damaged).unwrap();
    let gemini_chats = h
        .join(".gemini/tmp")
        .join(sha256_hex(project))
        .join("chats");
    std::fs::create_dir_all(&gemini_chats).unwrap();
    let set_aside =
        gemini_chats.join("session-2025-01-01T00-00-abcdef12.json.unreadable-1700000000000");
    std::fs::copy(fixture("damaged/truncated-document.json"), &set_aside).unwrap();
    let before = snapshot(h);

    let dry = json(h, &["recover", "--project", project, "-n", "--json"]);
    assert_eq!(dry["sessions"].as_array().unwrap().len(), 2, "{dry:#}");
    assert_eq!(snapshot(h), before, "a dry run changes nothing");

    let doc = json(h, &["recover", "--project", project, "--json"]);
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{doc:#}");
    for s in sessions {
        assert!(s["error"].is_null(), "{s:#}");
    }
    let restored = gemini_chats.join("session-2025-01-01T00-00-abcdef12.json");
    assert!(restored.is_file() && !set_aside.exists());
    // Nothing lost: the originals are the backups.
    let backups: Vec<PathBuf> = snapshot(h)
        .into_keys()
        .filter(|p| p.to_string_lossy().contains(".bak-"))
        .collect();
    assert_eq!(backups.len(), 2, "{backups:?}");
    let originals: Vec<&String> = before.values().collect();
    for b in &backups {
        let hash = sessiontool::ids::sha256_hex_bytes(&std::fs::read(b).unwrap());
        assert!(originals.contains(&&hash), "{} is an original", b.display());
    }
    // Now the project is healthy and nothing is left to recover.
    let list = json(h, &["list", "--project", project, "--json"]);
    for s in list["sessions"].as_array().unwrap() {
        assert!(
            matches!(s["health"].as_str(), Some("ok" | "warnings")),
            "{s:#}"
        );
    }
    let again = json(h, &["recover", "--project", project, "--json"]);
    assert_eq!(again["sessions"].as_array().unwrap().len(), 0, "{again:#}");
}

#[test]
fn relocate_gives_every_session_to_the_new_path_and_a_dry_run_changes_nothing() {
    let home = fake_home();
    let h = home.path();
    let before = snapshot(h);
    let errors_before = fsck_errors(h);
    assert_eq!(errors_before, 1);
    let old_ids: Vec<String> = rows(&json(h, &["list", "--project", APP, "--json"]))
        .into_iter()
        .map(|r| r.1)
        .collect();
    let out = run(h, &["relocate", APP, "/w/moved", "-n"]);
    assert!(out.status.success());
    assert_eq!(snapshot(h), before, "-n changes nothing");

    let doc = json(h, &["relocate", APP, "/w/moved", "--json"]);
    assert!(
        doc["error"].is_null() && doc["problems"].as_array().unwrap().is_empty(),
        "{doc:#}"
    );
    let moved = rows(&json(h, &["list", "--project", "/w/moved", "--json"]));
    let mut new_ids: Vec<String> = moved.iter().map(|r| r.1.clone()).collect();
    let mut want = old_ids.clone();
    new_ids.sort();
    want.sort();
    assert_eq!(new_ids, want);
    assert!(
        json(h, &["list", "--project", APP, "--json"])["sessions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The neighbours sharing folder names are where they were.
    assert_eq!(
        rows(&json(h, &["list", "--project", "/w.app", "--json"])).len(),
        2
    );
    // The store checks as it did before (the legacy Qwen fixture has an unanswered call of
    // its own), and nothing new is wrong.
    assert_eq!(fsck_errors(h), errors_before);
    // And back again gives the same bytes for every file that still exists.
    let back = json(h, &["relocate", "/w/moved", APP, "--json"]);
    assert!(back["error"].is_null(), "{back:#}");
    let after = snapshot(h);
    for (path, hash) in &before {
        assert_eq!(
            after.get(path),
            Some(hash),
            "{} is back as it was",
            path.display()
        );
    }
}

#[test]
fn relocate_failing_half_way_leaves_the_store_as_it_was() {
    let home = fake_home();
    let h = home.path();
    // Claude Code's new folder name is taken by a file: staging fails there, after other
    // files were staged.
    std::fs::write(h.join(".claude/projects/-w-moved"), "in the way").unwrap();
    let before = snapshot(h);
    let out = run(h, &["relocate", APP, "/w/moved"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was changed"));
    assert_eq!(snapshot(h), before);
    let leftovers: Vec<_> = walkdir::WalkDir::new(h)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn migrate_gemini_to_slugs_copies_registers_and_marks_the_old_copy() {
    let home = fake_home();
    let h = home.path();
    let before = snapshot(h);
    let dry = run(
        h,
        &[
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            "/w/other",
            "-n",
        ],
    );
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert_eq!(snapshot(h), before);
    let doc = json(
        h,
        &[
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            "/w/other",
            "--json",
        ],
    );
    assert!(doc["error"].is_null(), "{doc:#}");
    let registry: Value =
        serde_json::from_slice(&std::fs::read(h.join(".gemini/projects.json")).unwrap()).unwrap();
    assert_eq!(registry["projects"][APP], "app");
    assert_eq!(registry["projects"]["/w/other"], "other");
    for base in ["tmp", "history"] {
        let marker = h.join(".gemini").join(base).join("other/.project_root");
        assert_eq!(std::fs::read_to_string(marker).unwrap(), "/w/other");
    }
    assert!(
        h.join(".gemini/tmp/app/chats/session-2025-09-14T08-14-a116c9ed.json")
            .is_file()
    );
    // The old folders are kept (as the CLI keeps them) and listed as older copies.
    let list = json(h, &["list", "--project", APP, "--tool", "gemini", "--json"]);
    let old: Vec<&Value> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"].as_str().unwrap().contains(&sha256_hex(APP)))
        .collect();
    assert_eq!(old.len(), 1, "{list:#}");
    assert!(
        old[0]["superseded_by"]
            .as_str()
            .unwrap()
            .contains("/tmp/app/")
    );
    // A second run has nothing left to do.
    let again = json(
        h,
        &[
            "migrate",
            "--tool",
            "gemini",
            "--to",
            "gemini-slug",
            "--project",
            "/w/other",
            "--json",
        ],
    );
    assert!(
        again["copies"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["already"] == true),
        "{again:#}"
    );
}

#[test]
fn migrate_qwen_legacy_converts_into_the_projects_folder_and_move_deletes_the_old() {
    let home = fake_home();
    let h = home.path();
    let legacy = h
        .join(".qwen/tmp")
        .join(sha256_hex(APP))
        .join("chats/session-2025-10-01T09-56-f9d35d43.json");
    assert!(legacy.is_file());
    let doc = json(
        h,
        &[
            "migrate",
            "--tool",
            "qwen",
            "--to",
            "dashed",
            "--project",
            APP,
            "--move",
            "--json",
        ],
    );
    assert!(doc["error"].is_null(), "{doc:#}");
    assert!(!legacy.exists());
    let list = json(h, &["list", "--project", APP, "--tool", "qwen", "--json"]);
    let got = rows(&list);
    assert!(
        got.contains(&("qwen".into(), "f9d35d43".into(), 6, "qwen-jsonl".into())),
        "{got:?}"
    );
    let path = h.join(".qwen/projects/-w-app/chats/f9d35d43-770d-4909-aa66-3e665e82ae1d.jsonl");
    let first: Value = serde_json::from_slice(
        std::fs::read(&path)
            .unwrap()
            .split(|b| *b == b'\n')
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        first["cwd"], APP,
        "Qwen Code resumes only sessions whose cwd is the project"
    );
}

#[test]
fn convert_into_a_store_refuses_to_overwrite_and_names_the_file() {
    let home = fake_home();
    let h = home.path();
    let out = run(
        h,
        &[
            "convert",
            fixture("qwen-jsonl/plain.jsonl").to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            APP,
        ],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists; nothing was written"));
}

#[test]
fn every_tool_finds_what_convert_store_placed_and_names_it_as_the_tool_does() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cases = [
        (
            "gemini-jsonl",
            r"\.gemini/tmp/app/chats/session-\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9a-f]{8}\.jsonl$",
        ),
        (
            "gemini-json",
            r"\.gemini/tmp/app/chats/session-\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9a-f]{8}\.json$",
        ),
        (
            "qwen-jsonl",
            r"\.qwen/projects/-w-app/chats/[0-9a-f-]{36}\.jsonl$",
        ),
        (
            "claude-jsonl",
            r"\.claude/projects/-w-app/[0-9a-f-]{36}\.jsonl$",
        ),
        (
            "llxprt-jsonl",
            r"\.local/state/llxprt-code/tmp/[0-9a-f]{64}/chats/session-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[0-9a-f-]{12}\.jsonl$",
        ),
        (
            "pi-jsonl",
            r"\.pi/agent/sessions/--w-app--/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$",
        ),
        (
            "codex-jsonl",
            r"\.codex/sessions/\d{4}/\d\d/\d\d/rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[0-9a-f-]{36}\.jsonl$",
        ),
        (
            "agent-jsonl",
            r"\.config/agent/sessions/\d{8}-\d{6}-[0-9a-f]{8}\.jsonl$",
        ),
        (
            "simple-agent-json",
            r"\.simple-agent/sessions/[0-9a-f-]{36}\.json$",
        ),
    ];
    // One source per target, so the ids differ and nothing collides.
    let sources = [
        "qwen-jsonl/plain.jsonl",
        "gemini-json/plain.json",
        "qwen-jsonl/tools.jsonl",
        "qwen-jsonl/seed000.jsonl",
        "qwen-jsonl/system.jsonl",
        "qwen-jsonl/unicode.jsonl",
        "qwen-jsonl/unknown-fields.jsonl",
        "qwen-jsonl/branches.jsonl",
        "gemini-json/tools.json",
    ];
    for ((to, pattern), source) in cases.iter().zip(sources) {
        let path = place(h, source, to, APP);
        let rel = path
            .strip_prefix(h)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let re = regex::Regex::new(pattern).unwrap();
        assert!(
            re.is_match(&format!("/{rel}")),
            "{to}: {rel} does not match {pattern}"
        );
    }
    let list = json(h, &["list", "--project", APP, "--json"]);
    let formats: std::collections::BTreeSet<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats.len(), cases.len(), "{list:#}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(h.join(".simple-agent/sessions/meta.json")).unwrap())
            .unwrap();
    assert_eq!(index["path_index"][APP].as_array().unwrap().len(), 1);
}

/// `recover` on a terminal, driven through a pseudo-terminal (tests/terminal/recover_pick.py):
/// the numbered list appears, picking 1 and a tag writes the checkpoint.
#[test]
fn recover_on_a_terminal_shows_a_numbered_list_and_asks_for_a_tag() {
    if !common::prerequisite::python3() {
        return;
    }
    let (home, dir) = gemini_only_home("gemini-json/seed003.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/terminal/recover_pick.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("sessiontool"))
        .arg(home.path())
        .arg(APP)
        .arg("1")
        .arg("weather")
        .output()
        .unwrap();
    // On a terminal the output is coloured: read as the words it shows.
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let screen = sgr
        .replace_all(&String::from_utf8_lossy(&out.stdout), "")
        .into_owned();
    assert!(
        out.status.success(),
        "{screen}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        screen.contains("sessions of /w/app, newest first:"),
        "{screen}"
    );
    assert!(screen.contains("  1. gemini"), "{screen}");
    assert!(
        screen.contains("Hello, Gemini! What's the weather like today?"),
        "{screen}"
    );
    assert!(
        screen.contains("resume: gemini, then /chat resume weather"),
        "{screen}"
    );
    assert!(dir.join("checkpoint-weather.json").is_file());
    // Captured for the docs.
    let docs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recover-terminal.txt");
    std::fs::write(docs, screen.as_bytes()).unwrap();
}

#[test]
fn writers_do_not_follow_a_symbolic_link_inside_a_store() {
    let home = fake_home();
    let h = home.path();
    let outside = tempfile::tempdir().unwrap();
    // A planted link where relocate's new Qwen Code folder would go, and where a new
    // project's would.
    std::os::unix::fs::symlink(outside.path(), h.join(".qwen/projects/-w-moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), h.join(".qwen/projects/-w-linked")).unwrap();
    let before = snapshot(h);
    let out = run(h, &["relocate", APP, "/w/moved"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot(h), before, "nothing changed");
    let out = run(
        h,
        &[
            "convert",
            fixture("qwen-jsonl/plain.jsonl").to_str().unwrap(),
            "--to",
            "qwen-jsonl",
            "--store",
            "--project",
            "/w/linked",
        ],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside"
    );
}
