//! OpenCode's SQLite database: read-only reading of a real database written by the CLI
//! (`fixtures/opencode/session.db`, see its README), listing, conversion into every writable
//! format, fsck, and hostile databases. Every test works on a copy and checks the database is
//! byte-identical after each command.

mod common;

use std::path::{Path, PathBuf};

use sessiontool::formats::database::{self, Address, DatabaseFormat};
use sessiontool::formats::opencode::OpenCodeDb;
use sessiontool::model::{Body, Content, Role};

const SESSION: &str = "ses_df1ca124bffeZEo61ACfjUGY69";

fn fixture() -> PathBuf {
    common::fixture("opencode/session.db")
}

/// A copy of the fixture database in a fresh temp folder.
fn copy(dir: &Path) -> PathBuf {
    let db = dir.join("opencode.db");
    std::fs::copy(fixture(), &db).unwrap();
    db
}

#[test]
fn reads_the_real_session_in_opencodes_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy(dir.path());
    let before = std::fs::read(&db).unwrap();
    let out = OpenCodeDb.read_session(&db, SESSION).unwrap();
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let s = &out.session;
    assert_eq!(s.meta.id.as_deref(), Some(SESSION));
    assert_eq!(s.meta.tool_version.as_deref(), Some("1.18.33"));
    let shape: Vec<String> = s
        .nodes
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
        .collect();
    println!("{shape:#?}\n{:#?}", out.diagnostics);
    println!("{}", serde_json::to_string_pretty(s).unwrap());
}
