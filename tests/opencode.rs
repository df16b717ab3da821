//! OpenCode's SQLite database (`opencode-db`): reading a real database written by the CLI
//! (`fixtures/opencode/session.db`, see its README) in OpenCode's order, listing it from a fake
//! home, converting it into every writable format, fsck, and hostile databases. Every test
//! works on a copy, and checks that the database is byte-identical after each command.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::Value;
use sessiontool::formats::database::{DatabaseFormat, SessionRow};
use sessiontool::formats::opencode::{INTERRUPTED, OpenCodeDb};
use sessiontool::model::{Body, Content, Role, Session};

const SESSION: &str = "ses_df1ca124bffeZEo61ACfjUGY69";
const FIRST_ASSISTANT: &str = "msg_20e35f6b3001Rn7gJftWbNaipk";

fn fixture() -> PathBuf {
    common::fixture("opencode/session.db")
}

/// A copy of the fixture as `dir/opencode.db`.
fn copy(dir: &Path) -> PathBuf {
    let db = dir.join("opencode.db");
    std::fs::copy(fixture(), &db).unwrap();
    db
}

/// Changes a copy with SQL (a test's own connection, closed before sessiontool runs).
fn edit(db: &Path, sql: &str) {
    let conn = Connection::open(db).unwrap();
    // Hostile rows break OpenCode's foreign keys on purpose.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn.execute_batch(sql).unwrap();
}

fn address(db: &Path) -> String {
    format!("{}#{SESSION}", db.display())
}

/// `sessiontool ARGS` with HOME in `dir` (never the real one).
fn run(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::cargo_bin("sessiontool").unwrap();
    c.current_dir(dir)
        .env("HOME", dir)
        .env_remove("XDG_DATA_HOME");
    c.env_remove("OPENCODE_DB").args(args);
    c.output().unwrap()
}

/// Runs `args` and checks the database did not change by a byte.
fn run_unchanged(dir: &Path, db: &Path, args: &[&str]) -> Output {
    let before = std::fs::read(db).unwrap();
    let out = run(dir, args);
    assert_eq!(
        std::fs::read(db).unwrap(),
        before,
        "{args:?} changed the database"
    );
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// Each node as `role:part,part` (events as `event:kind`).
fn shape(s: &Session) -> Vec<String> {
    s.nodes
        .iter()
        .map(|n| match &n.body {
            Body::Message(m) => format!(
                "{}:{}",
                m.role.as_str(),
                m.parts
                    .iter()
                    .map(|p| p.kind())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Body::Event(e) => format!("event:{}", e.kind()),
        })
        .collect()
}

fn read(db: &Path) -> sessiontool::formats::ReadOutcome {
    OpenCodeDb.read_session(db, SESSION).unwrap()
}

#[test]
fn reads_the_real_session_in_opencodes_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let before = std::fs::read(&db).unwrap();
    let out = read(&db);
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let s = &out.session;
    assert_eq!(s.meta.id.as_deref(), Some(SESSION));
    assert_eq!(s.meta.tool_version.as_deref(), Some("1.18.33"));
    assert_eq!(s.meta.extra["project_id"], "global");
    assert_eq!(
        s.meta.start_time.as_deref(),
        Some("2026-11-24T15:39:05.013Z")
    );
    // 5 messages and 12 parts: the tool part is a call in its reply and a result after it.
    assert_eq!(
        shape(s),
        [
            "user:text",
            "assistant:other,text,tool_call,other",
            "tool:tool_result",
            "assistant:other,text,other",
            "user:text",
            "assistant:other,text,other",
        ]
    );
    let parts: usize = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .map(|m| m.parts.len())
        .sum();
    assert_eq!(parts, 12 + 1);
    // Nodes chain in order; ids are OpenCode's.
    for w in s.nodes.windows(2) {
        assert_eq!(w[1].parent.as_deref(), Some(w[0].id.as_str()));
    }
    assert_eq!(s.nodes[1].id, FIRST_ASSISTANT);
    assert!(s.nodes[2].id.starts_with("prt_"));
    assert_eq!(s.meta.head.as_deref(), Some(s.nodes[5].id.as_str()));
    // Within a message, parts in id order: step-start first, step-finish last.
    let reply = s.nodes[1].message().unwrap();
    assert!(
        matches!(&reply.parts[0].content, Content::Other { value } if value["type"] == "step-start")
    );
    assert!(
        matches!(&reply.parts[3].content, Content::Other { value } if value["type"] == "step-finish")
    );
    // The call and its result.
    let Content::ToolCall { id, name, args, .. } = &reply.parts[2].content else {
        panic!("{:?}", reply.parts[2])
    };
    assert_eq!(
        (id.as_deref(), name.as_str()),
        (Some("call_mock_read_1"), "read")
    );
    assert!(args["filePath"].as_str().unwrap().ends_with("/notes.txt"));
    let result = &s.nodes[2].message().unwrap().parts[0].content;
    let Content::ToolResult {
        call_id,
        output,
        is_error,
        status,
        ..
    } = result
    else {
        panic!("{result:?}")
    };
    assert_eq!(call_id.as_deref(), Some("call_mock_read_1"));
    assert!(
        output
            .as_str()
            .unwrap()
            .contains("the read tool returns this line")
    );
    assert_eq!((*is_error, status.as_deref()), (false, Some("completed")));
    // Model and usage where the model has a place for them.
    assert_eq!(reply.model.as_deref(), Some("mock-model"));
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!(
        (usage.input, usage.output, usage.total),
        (Some(12), Some(7), Some(19))
    );
    assert_eq!(reply.extra["providerID"], "mock");
    assert_eq!(reply.extra["finish"], "tool-calls");
}

#[test]
fn lists_the_databases_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let rows = OpenCodeDb.sessions(&db).unwrap();
    assert_eq!(
        rows,
        [SessionRow {
            id: SESSION.into(),
            title: Some("MOCK-REPLY-7f3a: acknowledged, nothing else to add.".into()),
            directory: Some("/tmp/opencode-fixture-uedkq02e/project".into()),
            created: Some("2026-11-24T15:39:05.013Z".into()),
            updated: Some("2026-11-24T15:39:17.459Z".into()),
            messages: 5,
            first_prompt: Some("\"READ-THE-NOTES: what does notes.txt say?\"".into()),
            parent: None,
        }]
    );
}

#[test]
fn messages_go_by_time_then_id_and_parts_by_id_whatever_the_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    // Rows inserted out of order: a message older than all (inserted last), two messages of
    // one millisecond (ids decide), parts inserted in reverse id order.
    edit(
        &db,
        &format!(
            "INSERT INTO message VALUES ('msg_b', '{SESSION}', 1, 1, '{{\"role\":\"user\",\"time\":{{\"created\":1}},\"agent\":\"build\",\"model\":{{\"providerID\":\"p\",\"modelID\":\"m\"}}}}');
             INSERT INTO message VALUES ('msg_a', '{SESSION}', 1, 1, '{{\"role\":\"user\",\"time\":{{\"created\":1}},\"agent\":\"build\",\"model\":{{\"providerID\":\"p\",\"modelID\":\"m\"}}}}');
             INSERT INTO part VALUES ('prt_2', 'msg_a', '{SESSION}', 1, 1, '{{\"type\":\"text\",\"text\":\"second\"}}');
             INSERT INTO part VALUES ('prt_1', 'msg_a', '{SESSION}', 1, 1, '{{\"type\":\"text\",\"text\":\"first\"}}');
             INSERT INTO part VALUES ('prt_3', 'msg_b', '{SESSION}', 1, 1, '{{\"type\":\"text\",\"text\":\"b\"}}');"
        ),
    );
    let s = read(&db).session;
    let ids: Vec<&str> = s.nodes.iter().take(3).map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["msg_a", "msg_b", "msg_20e35ee79001Yq6hmnPQsceMA2"]);
    let first = s.nodes[0].message().unwrap();
    assert_eq!(first.text(), "first\n\nsecond");
}

#[test]
fn every_part_kind_is_kept_and_an_interrupted_call_gets_opencodes_result() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let m = FIRST_ASSISTANT;
    edit(
        &db,
        &format!(
            "UPDATE part SET data = json_set(data, '$.state', json('{{\"status\":\"running\",\"input\":{{\"filePath\":\"/x\"}},\"time\":{{\"start\":1}}}}')) WHERE data LIKE '%\"type\":\"tool\"%';
             INSERT INTO part VALUES ('prt_20e35fa68002', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"reasoning\",\"text\":\"thinking\",\"time\":{{\"start\":1}}}}');
             INSERT INTO part VALUES ('prt_zz1', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"patch\",\"hash\":\"abc\",\"files\":[\"a.rs\"]}}');
             INSERT INTO part VALUES ('prt_zz2', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"file\",\"mime\":\"image/png\",\"filename\":\"a.png\",\"url\":\"data:image/png;base64,AAAA\"}}');
             INSERT INTO part VALUES ('prt_zz3', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"snapshot\",\"snapshot\":\"s1\"}}');
             INSERT INTO part VALUES ('prt_zz4', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"brand-new-kind\",\"x\":1}}');
             INSERT INTO part VALUES ('prt_zz5', '{m}', '{SESSION}', 1, 1, '{{\"type\":\"text\",\"text\":\"after the call\"}}');"
        ),
    );
    let out = read(&db);
    let s = &out.session;
    // In id order; text after the call goes on in a run of its own, after the results.
    assert_eq!(
        shape(s)[1..4],
        [
            "assistant:other,thought,text,tool_call,other,other,media,other,other",
            "tool:tool_result",
            "assistant:text",
        ]
    );
    let kinds: Vec<&str> = s.nodes[1]
        .message()
        .unwrap()
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            Content::Other { value } => value["type"].as_str(),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "step-start",
            "step-finish",
            "patch",
            "snapshot",
            "brand-new-kind"
        ]
    );
    let result = &s.nodes[2].message().unwrap().parts[0].content;
    let Content::ToolResult {
        output,
        is_error,
        status,
        ..
    } = result
    else {
        panic!("{result:?}")
    };
    assert_eq!(output, INTERRUPTED);
    assert_eq!((*is_error, status.as_deref()), (true, Some("running")));
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["tool-call-interrupted"]);
    // The run after the call says which message it continues.
    assert_eq!(
        s.nodes[3].message().unwrap().extra["opencode.continues"],
        FIRST_ASSISTANT
    );
    assert_eq!(s.nodes[3].message().unwrap().role, Role::Assistant);
}

#[test]
fn show_tree_and_convert_take_path_hash_id_and_never_change_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let addr = address(&db);
    let out = run_unchanged(dir.path(), &db, &["show", &addr]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(opencode-db)") && text.contains("→ read("),
        "{text}"
    );
    let out = run_unchanged(dir.path(), &db, &["show", &addr, "--json"]);
    assert_eq!(json(&out)["format"], "opencode-db");
    let out = run_unchanged(dir.path(), &db, &["tree", &addr]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The database alone names no session: the error lists them.
    let out = run_unchanged(dir.path(), &db, &["show", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains(SESSION), "{}", stderr(&out));
    // An id that is not there.
    let out = run_unchanged(
        dir.path(),
        &db,
        &["show", &format!("{}#ses_nope", db.display())],
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("no session ses_nope"),
        "{}",
        stderr(&out)
    );
    // --from names file formats; a database's is known.
    let out = run_unchanged(dir.path(), &db, &["show", &addr, "--from", "qwen-jsonl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn converts_into_every_writable_format_with_a_loss_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let addr = address(&db);
    let formats = json(&run(dir.path(), &["formats", "--json"]));
    let rows = formats["formats"].as_array().unwrap();
    let oc = rows.iter().find(|f| f["name"] == "opencode-db").unwrap();
    assert_eq!(
        (oc["read"].as_bool(), oc["write"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(oc["layout"], "sqlite");
    let targets: Vec<&str> = rows
        .iter()
        .filter(|f| f["write"] == true)
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(targets.len() >= 12, "{targets:?}");
    for to in targets {
        let output = dir.path().join(format!("out-{to}"));
        let out = run_unchanged(
            dir.path(),
            &db,
            &[
                "convert",
                &addr,
                "--to",
                to,
                "-o",
                output.to_str().unwrap(),
                "--json",
            ],
        );
        assert!(out.status.success(), "{to}: {}", stderr(&out));
        let doc = json(&out);
        assert_eq!(doc["from"], "opencode-db", "{to}");
        let written = std::fs::read(&output).unwrap();
        assert!(!written.is_empty(), "{to}");
        if matches!(to, "markdown" | "html") {
            let text = String::from_utf8_lossy(&written);
            assert!(
                text.contains("READ-THE-NOTES") && text.contains("read"),
                "{to}"
            );
            continue;
        }
        // Step markers have no place in any other format: the loss report says so.
        let losses = doc["losses"]["losses"].as_array().unwrap();
        assert!(!losses.is_empty(), "{to}: no loss report");
        // What was written reads back with the prompt, the call and its result.
        let back = run(dir.path(), &["show", output.to_str().unwrap(), "--json"]);
        assert!(back.status.success(), "{to}: {}", stderr(&back));
        let session: Session = serde_json::from_value(json(&back)["session"].clone()).unwrap();
        let parts: Vec<&Content> = session
            .nodes
            .iter()
            .filter_map(|n| n.message())
            .flat_map(|m| m.parts.iter().map(|p| &p.content))
            .collect();
        assert!(
            parts
                .iter()
                .any(|c| matches!(c, Content::ToolCall { name, .. } if name == "read")),
            "{to}"
        );
        assert!(
            parts.iter().any(|c| matches!(c, Content::ToolResult { output, .. } if output.to_string().contains("the read tool returns this line"))),
            "{to}"
        );
        assert!(
            session
                .nodes
                .iter()
                .filter_map(|n| n.message())
                .any(|m| m.text().contains("READ-THE-NOTES")),
            "{to}"
        );
    }
}

/// A fake home with the fixture at OpenCode's default place.
fn home_with_db(dir: &Path) -> PathBuf {
    let data = dir.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let db = data.join("opencode.db");
    std::fs::copy(fixture(), &db).unwrap();
    db
}

#[test]
fn list_shows_opencode_sessions_of_a_fake_home() {
    let dir = tempfile::tempdir().unwrap();
    let db = home_with_db(dir.path());
    let home = dir.path().to_str().unwrap();
    let out = run_unchanged(
        dir.path(),
        &db,
        &["list", "--all", "--home", home, "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{doc}");
    let s = &sessions[0];
    assert_eq!(s["tool"], "opencode");
    assert_eq!(s["format"], "opencode-db");
    assert_eq!(s["id"], SESSION);
    assert_eq!(s["path"], format!("{}#{SESSION}", db.display()));
    assert_eq!(s["messages"], 5);
    assert_eq!(s["health"], "ok");
    assert_eq!(s["project"], "/tmp/opencode-fixture-uedkq02e/project");
    // Filtered by tool and by project.
    let only = json(&run(
        dir.path(),
        &[
            "list", "--all", "--tool", "opencode", "--home", home, "--json",
        ],
    ));
    assert_eq!(only["sessions"].as_array().unwrap().len(), 1);
    let other = json(&run(
        dir.path(),
        &[
            "list", "--all", "--tool", "claude", "--home", home, "--json",
        ],
    ));
    assert_eq!(other["sessions"].as_array().unwrap().len(), 0);
    let project = json(&run(
        dir.path(),
        &[
            "list",
            "--project",
            "/tmp/opencode-fixture-uedkq02e/project",
            "--home",
            home,
            "--json",
        ],
    ));
    assert_eq!(project["sessions"].as_array().unwrap().len(), 1);
    // The path `list` prints is what `show` takes.
    let shown = run_unchanged(dir.path(), &db, &["show", s["path"].as_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
}

#[test]
fn list_follows_xdg_data_home_opencode_db_and_release_channels() {
    use sessiontool::store::catalog::{Query, list};
    use sessiontool::store::home::Home;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("opencode")).unwrap();
    std::fs::copy(fixture(), data.join("opencode/opencode-dev.db")).unwrap();
    let query = Query {
        tools: vec![sessiontool::Tool::OpenCode],
        ..Query::default()
    };
    // Not under ~/.local/share: only XDG_DATA_HOME finds it.
    assert!(list(&Home::at(dir.path()), &query).entries.is_empty());
    let home = Home::at(dir.path()).with_override("XDG_DATA_HOME", &data);
    let found = list(&home, &query);
    assert_eq!(found.entries.len(), 1);
    assert!(found.entries[0].path.contains("opencode-dev.db#"));
    // OPENCODE_DB, relative to the data folder as OpenCode takes it.
    std::fs::copy(fixture(), data.join("opencode/other.sqlite")).unwrap();
    let home = home.with_override("OPENCODE_DB", "other.sqlite");
    let found = list(&home, &query);
    assert_eq!(found.entries.len(), 1);
    assert!(
        found.entries[0].path.contains("other.sqlite#"),
        "{:?}",
        found.entries[0].path
    );
}

#[test]
fn fsck_reports_a_healthy_database_and_says_it_only_checks() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let out = run_unchanged(dir.path(), &db, &["fsck", db.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let file = &doc["files"][0];
    assert_eq!(file["format"], "opencode-db");
    let codes: Vec<&str> = file["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["opencode-checked-only"]);
    // --repair changes nothing either.
    let out = run_unchanged(dir.path(), &db, &["fsck", "--repair", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn hostile_rows_are_reported_by_fsck_show_and_list_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = home_with_db(dir.path());
    edit(
        &db,
        &format!(
            "UPDATE message SET data = '{{\"role\":\"user\", broken' WHERE id = 'msg_20e360d36001iv7caNJ26Cn5Z1';
             UPDATE part SET data = x'00ff' WHERE id = 'prt_20e35fa68001tN9ZXAPBDjDZVE';
             INSERT INTO part VALUES ('prt_orphan', 'msg_gone', '{SESSION}', 1, 1, '{{\"type\":\"text\",\"text\":\"lost\"}}');
             INSERT INTO message VALUES ('msg_stray', 'ses_gone', 1, 1, '{{\"role\":\"user\"}}');
             INSERT INTO part VALUES ('prt_noty', 'msg_20e35ee79001Yq6hmnPQsceMA2', '{SESSION}', 1, 1, '{{\"text\":\"no type\"}}');"
        ),
    );
    let out = run_unchanged(dir.path(), &db, &["fsck", db.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    let codes: Vec<&str> = doc["files"][0]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    for code in [
        "opencode-part-without-message",
        "opencode-message-without-session",
        "opencode-invalid-json",
        "opencode-missing-field",
    ] {
        assert!(codes.contains(&code), "{code} not in {codes:?}");
    }
    // show reads what it can and says what it skipped.
    let out = run_unchanged(dir.path(), &db, &["show", &address(&db), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "invalid-json").count(),
        2,
        "{codes:?}"
    );
    assert!(codes.contains(&"part-without-message"), "{codes:?}");
    // list marks it.
    let home = dir.path().to_str().unwrap();
    let out = run_unchanged(
        dir.path(),
        &db,
        &["list", "--all", "--home", home, "--json"],
    );
    assert_eq!(json(&out)["sessions"][0]["health"], "broken");
}

#[test]
fn a_symlinked_database_is_read_where_it_is_and_a_dangling_one_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let out = run_unchanged(dir.path(), &db, &["show", &address(&link), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["session"]["meta"]["id"], SESSION);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let dangling = dir.path().join("gone.db");
    std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
    let out = run(dir.path(), &["show", &address(&dangling)]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // Not a database at all, and a database that is damaged.
    let fake = dir.path().join("fake.db");
    std::fs::write(&fake, b"SQLite format 3\0 and then nothing of a database").unwrap();
    let out = run_unchanged(dir.path(), &fake, &["show", &address(&fake)]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let cut = dir.path().join("opencode-cut.db");
    let bytes = std::fs::read(fixture()).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    for args in [
        vec!["show", &*address(&cut)],
        vec!["fsck", cut.to_str().unwrap()],
    ] {
        let out = run_unchanged(dir.path(), &cut, &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_database_locked_by_a_writer_is_waited_for_then_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    // Rollback journal (the fixture's mode): an exclusive writer keeps readers out.
    let writer = Connection::open(&db).unwrap();
    writer
        .execute_batch("BEGIN EXCLUSIVE; UPDATE session SET title = 'changing'")
        .unwrap();
    let mut c = Command::cargo_bin("sessiontool").unwrap();
    let out = c
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("SESSIONTOOL_BUSY_TIMEOUT_MS", "300")
        .args(["show", &address(&db)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("locked by another process"),
        "{}",
        stderr(&out)
    );
    writer.execute_batch("ROLLBACK").unwrap();
    drop(writer);
}

#[test]
fn a_wal_database_is_read_while_opencode_writes_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let writer = Connection::open(&db).unwrap();
    writer.execute_batch("PRAGMA journal_mode = WAL").unwrap();
    writer
        .execute_batch("UPDATE session SET title = 'committed'")
        .unwrap();
    // A write in progress, as OpenCode holds one: the reader sees the last commit.
    writer
        .execute_batch("BEGIN IMMEDIATE; UPDATE session SET title = 'not yet'")
        .unwrap();
    let wal = dir.path().join("opencode.db-wal");
    let before = (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap());
    let out = run(dir.path(), &["show", &address(&db), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["session"]["meta"]["title"], "committed");
    assert_eq!(
        (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap()),
        before
    );
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn detect_names_the_database_and_recover_and_switch_refuse_it_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = home_with_db(dir.path());
    let home = dir.path().to_str().unwrap();
    let out = run_unchanged(dir.path(), &db, &["detect", db.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["files"][0]["format"], "opencode-db");
    let project = "/tmp/opencode-fixture-uedkq02e/project";
    let out = run_unchanged(
        dir.path(),
        &db,
        &["recover", "ses_df1c", "--project", project, "--home", home],
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains("only reads"), "{said}");
    let out = run_unchanged(
        dir.path(),
        &db,
        &[
            "switch",
            "ses_df1c",
            "--to",
            "claude",
            "--project",
            project,
            "--home",
            home,
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not switched yet"),
        "{}",
        stderr(&out)
    );
    // Nothing was written into the home besides the database.
    assert!(!dir.path().join(".claude").exists());
}

#[test]
fn rows_in_the_newer_session_message_table_are_said_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    edit(
        &db,
        &format!(
            "INSERT INTO session_message VALUES ('sm_1', '{SESSION}', 'user', 1, 1, 1, '{{}}')"
        ),
    );
    let out = read(&db);
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["unread-rows"]);
    assert_eq!(out.session.nodes.len(), 6);
}

#[test]
fn a_wal_database_no_process_has_open_is_read_without_leaving_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
    }
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing(), ["opencode.db"]);
    let out = run_unchanged(dir.path(), &db, &["show", &address(&db)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run_unchanged(dir.path(), &db, &["fsck", db.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    // No -wal or -shm left behind (a read-only connection would create both).
    assert_eq!(listing(), ["opencode.db"]);
}

#[test]
fn convert_store_places_an_opencode_session_in_another_tools_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let addr = address(&db);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    for to in [
        "claude-jsonl",
        "codex-jsonl",
        "qwen-jsonl",
        "pi-jsonl",
        "gemini-jsonl",
    ] {
        let out = run_unchanged(
            dir.path(),
            &db,
            &[
                "convert",
                &addr,
                "--to",
                to,
                "--store",
                "--home",
                home.to_str().unwrap(),
                "--project",
                project.to_str().unwrap(),
                "--json",
            ],
        );
        assert!(out.status.success(), "{to}: {}", stderr(&out));
        let doc = json(&out);
        let path = doc["output"]
            .as_str()
            .or(doc["path"].as_str())
            .unwrap_or_else(|| panic!("{doc}"));
        assert!(Path::new(path).starts_with(&home), "{to}: {path}");
        // The placed session reads back with the call and its result.
        let back = run(dir.path(), &["show", path, "--json"]);
        assert!(back.status.success(), "{to}: {}", stderr(&back));
        let session: Session = serde_json::from_value(json(&back)["session"].clone()).unwrap();
        let calls = session
            .nodes
            .iter()
            .filter_map(|n| n.message())
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p.content, Content::ToolCall { .. }))
            .count();
        assert_eq!(calls, 1, "{to}");
    }
    // `list` then shows the placed sessions.
    let listed = json(&run(
        dir.path(),
        &["list", "--all", "--home", home.to_str().unwrap(), "--json"],
    ));
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 5, "{listed}");
    // --from does not apply to a database session.
    let out = run_unchanged(
        dir.path(),
        &db,
        &[
            "convert",
            &addr,
            "--from",
            "qwen-jsonl",
            "--to",
            "claude-jsonl",
            "--store",
            "--home",
            home.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn relocate_says_the_database_sessions_are_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let db = home_with_db(dir.path());
    let home = dir.path().to_str().unwrap();
    let new = dir.path().join("moved");
    let out = run_unchanged(
        dir.path(),
        &db,
        &[
            "relocate",
            "/tmp/opencode-fixture-uedkq02e/project",
            new.to_str().unwrap(),
            "--home",
            home,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("1 OpenCode session(s) of /tmp/opencode-fixture-uedkq02e/project are rows of its database, which sessiontool only reads: not relocated"),
        "{err}"
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("nothing relocated for"), "{said}");
}
