//! Codex's state database (`state_5.sqlite`, Codex 0.169.0) kept consistent with what
//! sessiontool writes into Codex's store: the row is the one Codex itself writes, written
//! under SQLite's lock after a backup, moved by relocate with the rollouts, and checked by
//! fsck, list and recover. The databases are made from the schema Codex 0.169.0 created
//! (`fixtures/codex-state/*.sql`, dumped from a real run).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::Value;
use sessiontool::store::codex_state::{self, Facts, Writer};
use sessiontool::store::home::Home;
use sessiontool::store::rekey::Move;
use sessiontool::store::relocate;

const PROJECT: &str = "/tmp/cx/proj/Interop Proj.v1";
const NATIVE: &str = "rollout-2026-11-24T10-19-22-01a20d11-395d-7543-a217-abb1fe3e6f96.jsonl";

fn sessiontool() -> Command {
    Command::cargo_bin("sessiontool").unwrap()
}

fn state_fixture(name: &str) -> PathBuf {
    common::fixture(&format!("codex-state/{name}"))
}

/// A Codex home at `dir/.codex` whose databases Codex 0.169.0 made (empty), configured
/// for the provider `mock`.
fn codex_home(dir: &Path) -> PathBuf {
    let codex = dir.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model_provider = \"mock\"\n").unwrap();
    for (db, schema) in [
        ("state_5.sqlite", "state_5-0.169.0.sql"),
        ("thread_history_1.sqlite", "thread_history_1-0.169.0.sql"),
    ] {
        let conn = Connection::open(codex.join(db)).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(&std::fs::read_to_string(state_fixture(schema)).unwrap())
            .unwrap();
    }
    codex
}

fn state(codex: &Path) -> Connection {
    Connection::open(codex.join("state_5.sqlite")).unwrap()
}

/// Every column of thread `id`'s row, as JSON.
fn row(codex: &Path, id: &str) -> Option<serde_json::Map<String, Value>> {
    let conn = state(codex);
    let mut stmt = conn.prepare("SELECT * FROM threads WHERE id = ?1").unwrap();
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let mut rows = stmt.query([id]).unwrap();
    let r = rows.next().unwrap()?;
    let mut map = serde_json::Map::new();
    for (i, name) in names.iter().enumerate() {
        let v = match r.get_ref(i).unwrap() {
            rusqlite::types::ValueRef::Null => Value::Null,
            rusqlite::types::ValueRef::Integer(n) => Value::from(n),
            rusqlite::types::ValueRef::Real(f) => Value::from(f),
            rusqlite::types::ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t)),
            rusqlite::types::ValueRef::Blob(_) => Value::from("<blob>"),
        };
        map.insert(name.clone(), v);
    }
    Some(map)
}

/// The thread `codex exec resume --last` picks in `cwd` for `provider` (its query: not
/// archived, a preview, newest recency first).
fn latest(codex: &Path, cwd: &str, provider: &str) -> Option<String> {
    state(codex)
        .query_row(
            "SELECT id FROM threads WHERE archived = 0 AND preview <> '' AND cwd = ?1 AND model_provider = ?2 ORDER BY recency_at_ms DESC, id DESC LIMIT 1",
            [cwd, provider],
            |r| r.get(0),
        )
        .ok()
}

/// A rollout Codex wrote itself, with the row Codex gave it, as a thread the home already has.
fn lived_in(codex: &Path) -> PathBuf {
    let dir = codex.join("sessions/2026/11/24");
    std::fs::create_dir_all(&dir).unwrap();
    let rollout = dir.join(NATIVE);
    std::fs::copy(state_fixture("native-0.169.0.jsonl"), &rollout).unwrap();
    let mut writer = Writer::begin(&databases(codex), "T0").unwrap();
    writer
        .register(codex, &rollout, &std::fs::read(&rollout).unwrap())
        .unwrap();
    writer.commit().unwrap();
    rollout
}

fn databases(codex: &Path) -> codex_state::Databases {
    codex_state::locate(&Home::at(codex.parent().unwrap()))
        .unwrap()
        .unwrap()
}

fn set_mtime(path: &Path, ms: i64) {
    let t = std::time::UNIX_EPOCH + Duration::from_millis(ms as u64);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn the_row_is_the_one_codex_0_169_writes_for_the_same_rollout() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(state_fixture("backfill-rows-0.169.0.json")).unwrap(),
    )
    .unwrap();
    for (name, case) in expected.as_object().unwrap() {
        let dir = tempfile::tempdir().unwrap();
        let codex = codex_home(dir.path());
        let rollout = codex.join("sessions/2026/11/24").join(name);
        std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
        std::fs::copy(state_fixture(name), &rollout).unwrap();
        set_mtime(&rollout, case["mtime_ms"].as_i64().unwrap());
        let mut writer = Writer::begin(&databases(&codex), "T").unwrap();
        let id = writer
            .register(&codex, &rollout, &std::fs::read(&rollout).unwrap())
            .unwrap();
        writer.commit().unwrap();
        let ours = row(&codex, &id).unwrap();
        let mut theirs = case["row"].as_object().unwrap().clone();
        theirs.insert("rollout_path".into(), rollout.display().to_string().into());
        for (column, value) in &theirs {
            assert_eq!(ours.get(column), Some(value), "{name}: column {column}");
        }
        assert_eq!(ours.len(), theirs.len(), "{name}: the same columns");
    }
}

#[test]
fn convert_store_registers_the_thread_so_resume_last_picks_it_with_a_backup_first() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    lived_in(&codex);
    assert_eq!(
        latest(&codex, PROJECT, "mock").as_deref(),
        Some("01a20d11-395d-7543-a217-abb1fe3e6f96")
    );
    let out = sessiontool()
        .args([
            "convert",
            "--to",
            "codex-jsonl",
            "--store",
            "--json",
            "--project",
            PROJECT,
        ])
        .arg(common::fixture("claude-jsonl/tools.jsonl"))
        .arg("--home")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let written = report["output"].as_str().unwrap();
    let registered = report["registered"][0].as_str().unwrap();
    assert!(
        registered.contains("state_5.sqlite lists thread"),
        "{registered}"
    );
    let id = latest(&codex, PROJECT, "mock").expect("a thread of the project");
    let new = row(&codex, &id).unwrap();
    assert_eq!(new["rollout_path"], written);
    assert_eq!(new["cwd"], PROJECT);
    assert_eq!(new["model_provider"], "mock", "the configured provider");
    assert_eq!(new["history_mode"], "legacy");
    assert_ne!(
        id, "01a20d11-395d-7543-a217-abb1fe3e6f96",
        "the converted one is the latest"
    );
    // The backup is the database before the change, whole and consistent.
    let backup = registered
        .split("backup: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(')');
    let old: i64 = Connection::open(backup)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0))
        .unwrap();
    assert_eq!(old, 1);
    // fsck finds the store consistent.
    let out = sessiontool()
        .args(["fsck", "--json"])
        .arg(codex.join("sessions"))
        .arg(codex.join("state_5.sqlite"))
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["issues"].as_array().unwrap())
        .filter_map(|i| i["code"].as_str())
        .filter(|c| c.starts_with("codex-"))
        .collect();
    assert!(codes.is_empty(), "{codes:?}");
}

#[test]
fn a_home_without_a_database_gets_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = sessiontool()
        .args([
            "convert",
            "--to",
            "codex-jsonl",
            "--store",
            "--json",
            "--project",
            PROJECT,
        ])
        .arg(common::fixture("claude-jsonl/tools.jsonl"))
        .arg("--home")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["registered"], serde_json::json!([]));
    assert!(!dir.path().join(".codex/state_5.sqlite").exists());
}

#[test]
fn while_codex_holds_the_write_lock_nothing_is_written_and_after_it_the_write_waits() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    let convert = || {
        sessiontool()
            .env("SESSIONTOOL_BUSY_TIMEOUT_MS", "800")
            .args([
                "convert",
                "--to",
                "codex-jsonl",
                "--store",
                "--json",
                "--project",
                PROJECT,
            ])
            .arg(common::fixture("claude-jsonl/tools.jsonl"))
            .arg("--home")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    // Another writer (Codex) holds the lock longer than the wait: refused, nothing written.
    let holder = state(&codex);
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let out = convert();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("locked") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!codex.join("sessions").exists(), "no rollout written");
    holder.execute_batch("ROLLBACK").unwrap();
    // A lock let go within the wait: the write waits for it, then goes ahead.
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        holder.execute_batch("ROLLBACK").unwrap();
    });
    let out = convert();
    release.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(latest(&codex, PROJECT, "mock").is_some());
}

/// The projection rows Codex keeps of a thread.
fn projection_rows(codex: &Path, id: &str) -> i64 {
    let conn = Connection::open(codex.join("thread_history_1.sqlite")).unwrap();
    [
        "thread_items",
        "thread_turns",
        "thread_history_projection_state",
    ]
    .iter()
    .map(|t| {
        conn.query_row(
            &format!("SELECT COUNT(*) FROM {t} WHERE thread_id = ?1"),
            [id],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
    })
    .sum()
}

fn project(codex: &Path, id: &str) {
    let conn = Connection::open(codex.join("thread_history_1.sqlite")).unwrap();
    conn.execute(
        "INSERT INTO thread_history_projection_state VALUES (?1, 35549, 14)",
        [id],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, rollout_byte_offset) VALUES (?1, 't', 1, 'completed', 21831)",
        [id],
    )
    .unwrap();
}

#[test]
fn relocate_moves_the_rows_drops_stale_projections_and_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    let rollout = lived_in(&codex);
    let id = "01a20d11-395d-7543-a217-abb1fe3e6f96";
    project(&codex, id);
    let new = "/tmp/elsewhere/Interop Proj.v2";
    let relocate = |from: &str, to: &str| {
        let out = sessiontool()
            .args(["relocate", from, to, "--json", "--home"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let report = relocate(PROJECT, new);
    let inside: Vec<&str> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["inside"].as_str())
        .collect();
    assert!(
        inside.iter().any(|i| i.contains("1 thread row(s) moved")),
        "{inside:?}"
    );
    let moved = row(&codex, id).unwrap();
    assert_eq!(moved["cwd"], new);
    assert_eq!(moved["rollout_path"], rollout.display().to_string());
    assert_eq!(projection_rows(&codex, id), 0, "stale offsets dropped");
    assert_eq!(latest(&codex, new, "mock").as_deref(), Some(id));
    let backups = std::fs::read_dir(&codex)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("state_5.sqlite.bak-")
                || name.starts_with("thread_history_1.sqlite.bak-")
        })
        .count();
    assert!(
        backups >= 3,
        "a backup of each database changed ({backups})"
    );
    relocate(new, PROJECT);
    assert_eq!(row(&codex, id).unwrap()["cwd"], PROJECT);
    assert_eq!(
        std::fs::read(&rollout).unwrap(),
        std::fs::read(state_fixture("native-0.169.0.jsonl")).unwrap(),
        "the same bytes back"
    );
}

#[test]
fn relocate_refuses_a_row_changed_since_the_plan_and_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    let rollout = lived_in(&codex);
    let home = Home::at(dir.path());
    let mv = Move::new(PROJECT, "/tmp/elsewhere/x").unwrap();
    let plan = relocate::plan(&home, &[], &mv);
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    // Codex renames the folder it records meanwhile.
    state(&codex)
        .execute("UPDATE threads SET cwd = '/tmp/other'", [])
        .unwrap();
    let before = std::fs::read(&rollout).unwrap();
    let (_, err) = relocate::execute(&home, plan, "S").unwrap_err();
    assert!(err.contains("changed since the plan"), "{err}");
    assert_eq!(std::fs::read(&rollout).unwrap(), before);
    assert_eq!(
        row(&codex, "01a20d11-395d-7543-a217-abb1fe3e6f96").unwrap()["cwd"],
        "/tmp/other"
    );
}

#[test]
fn a_relocation_stopped_before_the_database_commit_is_finished_by_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    lived_in(&codex);
    let run = |fault: Option<&str>| {
        let mut c = sessiontool();
        if let Some(f) = fault {
            c.env("SESSIONTOOL_FAULT", f);
        }
        c.args(["relocate", PROJECT, "/tmp/elsewhere/y", "--home"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = run(Some("codex-state.before-commit:error"));
    assert!(!out.status.success());
    let id = "01a20d11-395d-7543-a217-abb1fe3e6f96";
    assert_eq!(row(&codex, id).unwrap()["cwd"], PROJECT, "rolled back");
    let out = run(None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&codex, id).unwrap()["cwd"], "/tmp/elsewhere/y");
}

#[test]
fn fsck_and_list_report_what_the_database_and_the_rollouts_disagree_on_and_recover_registers() {
    let dir = tempfile::tempdir().unwrap();
    let codex = codex_home(dir.path());
    let rollout = lived_in(&codex);
    // A row whose rollout is gone, and a rollout without a row.
    let conn = state(&codex);
    conn.execute(
        "UPDATE threads SET id = 'gone', rollout_path = '/nowhere/rollout.jsonl'",
        [],
    )
    .unwrap();
    drop(conn);
    let fsck = |path: &Path| -> Vec<String> {
        let out = sessiontool()
            .args(["fsck", "--json"])
            .arg(path)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["issues"].as_array().unwrap().clone())
            .map(|i| i["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(fsck(&rollout), ["codex-thread-unregistered"]);
    assert_eq!(
        fsck(&codex.join("state_5.sqlite")),
        ["codex-thread-missing-rollout"]
    );
    let out = sessiontool()
        .args(["list", "--all", "--json", "--home"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = doc["problems"].to_string();
    assert!(problems.contains("/nowhere/rollout.jsonl"), "{problems}");
    // recover registers the rollout as Codex would.
    let out = sessiontool()
        .args(["recover", "--json", "--project", PROJECT, "--home"])
        .arg(dir.path())
        .arg(&rollout)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["sessions"][0]["steps"][0]["step"], "registered",
        "{doc}"
    );
    assert!(fsck(&rollout).is_empty());
    let facts = Facts {
        path: &rollout,
        mtime_ms: 0,
        default_provider: "mock",
        archived: false,
    };
    let id = codex_state::thread_row(&std::fs::read(&rollout).unwrap(), &facts)
        .unwrap()
        .id;
    let registered = row(&codex, &id).expect("registered");
    assert_eq!(registered["cwd"], PROJECT);
    assert_eq!(registered["rollout_path"], rollout.display().to_string());
}
