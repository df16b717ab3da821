//! Codex's state database checked against the rollouts, for fsck and list: a rollout the
//! database has no row for (Codex lists it nowhere and `resume --last` never picks it; only
//! `codex resume <id>` finds it), a row that records another folder or file than its
//! rollout (a relocation cut short), and a row whose rollout file is gone.
//!
//! The database is read once per process and state (a snapshot of ids, folders and paths),
//! read-only; reading never waits on Codex (WAL readers do not block) beyond the busy timeout.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::db::{Db, Located};
use super::{Databases, STATE_DB};
use crate::check::{Issue, Stamp};
use crate::diag::Severity;
use crate::store::home::Home;

/// The longest first line read to find a rollout's id (Codex's own are some 40 KB).
const FIRST_LINE_MAX: u64 = 16 << 20;

type Snapshot = Arc<Result<HashMap<String, Located>, String>>;

/// A snapshot of a database, with the stamps of the database and its WAL it was read at.
type Cached = (PathBuf, Option<Stamp>, Option<Stamp>, Snapshot);

static SNAPSHOTS: Mutex<Vec<Cached>> = Mutex::new(Vec::new());

fn snapshot(db: &Path) -> Snapshot {
    let wal = {
        let mut name = db.as_os_str().to_owned();
        name.push("-wal");
        PathBuf::from(name)
    };
    let (main, log) = (Stamp::of(db).ok(), Stamp::of(&wal).ok());
    let mut cache = SNAPSHOTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, _, s)) = cache
        .iter()
        .find(|(p, m, w, _)| p == db && *m == main && *w == log)
    {
        return s.clone();
    }
    let read = Db::open_read_only(db)
        .and_then(|d| d.threads())
        .map(|rows| {
            rows.into_iter()
                .map(|r| (r.id.clone(), r))
                .collect::<HashMap<_, _>>()
        });
    let s = Arc::new(read);
    cache.retain(|(p, _, _, _)| p != db);
    cache.push((db.to_path_buf(), main, log, s.clone()));
    s
}

/// The Codex home a rollout lies in: `<home>/sessions/YYYY/MM/DD/rollout-*.jsonl` or
/// `<home>/archived_sessions/rollout-*.jsonl`.
fn codex_home_of(rollout: &Path) -> Option<&Path> {
    let dir = rollout.parent()?;
    if dir.file_name()? == "archived_sessions" {
        return dir.parent();
    }
    let sessions = dir.parent()?.parent()?.parent()?;
    (sessions.file_name()? == "sessions").then(|| sessions.parent())?
}

/// The `session_meta` of a rollout: its id and working folder.
fn session_meta(rollout: &Path) -> Option<(String, String)> {
    let file = crate::regular_file::open(rollout).ok()?;
    let mut first = Vec::new();
    std::io::BufRead::read_until(
        &mut std::io::BufReader::new(file.take(FIRST_LINE_MAX)),
        b'\n',
        &mut first,
    )
    .ok()?;
    let record: serde_json::Value = serde_json::from_slice(&first).ok()?;
    if record["type"] != "session_meta" {
        return None;
    }
    let payload = &record["payload"];
    Some((
        payload["id"].as_str()?.to_string(),
        payload["cwd"].as_str().unwrap_or("").to_string(),
    ))
}

/// fsck's findings about a Codex rollout and the state database beside it (none when there
/// is no database, or the file is not in a Codex home).
pub fn rollout_issues(rollout: &Path) -> Vec<Issue> {
    let Some(home) = codex_home_of(rollout) else {
        return Vec::new();
    };
    let db = home.join(STATE_DB);
    if !db.exists() {
        return Vec::new();
    }
    let Some((id, cwd)) = session_meta(rollout) else {
        return Vec::new();
    };
    let rows = snapshot(&db);
    let rows = match rows.as_ref() {
        Ok(rows) => rows,
        Err(e) => {
            return vec![Issue::new(
                "codex-thread-unregistered",
                Severity::Warning,
                format!(
                    "cannot read Codex's state database to see whether it lists this thread: {e}"
                ),
            )];
        }
    };
    let Some(row) = rows.get(&id) else {
        return vec![Issue::new(
            "codex-thread-unregistered",
            Severity::Warning,
            format!(
                "{} has no row for thread {id}: Codex does not list it and `codex resume --last` never picks it (`codex resume {id}` still finds it); `sessiontool recover` on this file registers it",
                db.display()
            ),
        )];
    };
    let same_file = Path::new(&row.rollout_path) == rollout
        || std::fs::canonicalize(&row.rollout_path).ok() == std::fs::canonicalize(rollout).ok();
    if !same_file || (!cwd.is_empty() && row.cwd != cwd) {
        return vec![Issue::new(
            "codex-thread-stale",
            Severity::Warning,
            format!(
                "{} records thread {id} in {:?} at {}, but this rollout is {} and records {cwd:?}; `sessiontool recover` on this file registers it again",
                db.display(),
                row.cwd,
                row.rollout_path,
                rollout.display()
            ),
        )];
    }
    Vec::new()
}

/// The rows whose rollout file does not exist, by id.
fn rows_without_rollout(db: &Path) -> Result<Vec<Located>, String> {
    let rows = snapshot(db);
    let rows = rows.as_ref().as_ref().map_err(Clone::clone)?;
    let mut missing: Vec<Located> = rows
        .values()
        .filter(|r| !Path::new(&r.rollout_path).exists())
        .cloned()
        .collect();
    missing.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(missing)
}

fn missing_message(r: &Located) -> String {
    format!(
        "thread {} ({:?}) names its rollout {}, which does not exist: Codex lists a thread it cannot open",
        r.id, r.cwd, r.rollout_path
    )
}

/// fsck's findings about a Codex state database itself: every row whose rollout file does
/// not exist.
pub fn database_issues(db: &Path) -> Result<Vec<Issue>, String> {
    Ok(rows_without_rollout(db)?
        .iter()
        .map(|r| {
            Issue::new(
                "codex-thread-missing-rollout",
                Severity::Warning,
                missing_message(r),
            )
        })
        .collect())
}

/// Whether `path` is a Codex state database (by name and SQLite's header).
pub fn is_state_database(path: &Path, head: &[u8]) -> bool {
    path.file_name().is_some_and(|n| n == STATE_DB) && head.starts_with(b"SQLite format 3\0")
}

/// For `list`: rows of `home`'s state database whose rollout does not exist (of `project`,
/// when given), in words.
pub fn missing_rollouts(home: &Home, project: Option<&str>) -> Vec<String> {
    let databases: Databases = match super::locate(home) {
        Ok(Some(d)) => d,
        Ok(None) => return Vec::new(),
        Err(e) => return vec![e],
    };
    match rows_without_rollout(&databases.state) {
        Ok(rows) => rows
            .iter()
            .filter(|r| project.is_none_or(|p| r.cwd == p))
            .map(|r| format!("{}: {}", databases.state.display(), missing_message(r)))
            .collect(),
        Err(e) => vec![e],
    }
}
