//! OpenCode (`opencode-ai` on npm, anomalyco/opencode): sessions in a SQLite database,
//! `<XDG data>/opencode/opencode.db` (`OPENCODE_DB` overrides it), read only.
//!
//! Tables as OpenCode 1.x writes them (`packages/opencode/src/session/session.sql.ts`):
//! `project`, `session` (one row a session: directory, title, version, times, usage totals),
//! `message(id, session_id, time_created, time_updated, data)` and
//! `part(id, message_id, session_id, time_created, time_updated, data)`, where `data` is the
//! message or part as JSON without its ids (`message-v2.ts`). OpenCode reads a session's
//! messages by `(time_created, id)` and their parts by `(message_id, id)`; so does this reader
//! (`rows`). How parts become the model: `map`.
//!
//! A session is named `PATH#SESSION_ID` ([`crate::formats::database::Address`]).

mod check;
pub(crate) mod map;
mod open;
mod rows;

use std::path::Path;

use crate::diag::{Diagnostic, Location};
use crate::formats::database::{DatabaseFormat, SQLITE_MAGIC, SessionRow};
use crate::formats::{ReadError, ReadOutcome};

pub use map::INTERRUPTED;

pub struct OpenCodeDb;

pub const NAME: &str = "opencode-db";

/// Whether a file name is one OpenCode gives its database (`opencode.db`, or
/// `opencode-<channel>.db` on other release channels).
pub fn is_database_name(name: &str) -> bool {
    name == "opencode.db"
        || name
            .strip_prefix("opencode-")
            .and_then(|rest| rest.strip_suffix(".db"))
            .is_some_and(|channel| !channel.is_empty())
}

impl DatabaseFormat for OpenCodeDb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "OpenCode's SQLite database (session, message and part rows); read only, a session named PATH#SESSION_ID"
    }

    fn tool(&self) -> &'static str {
        "opencode"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if !head.starts_with(SQLITE_MAGIC) {
            return false;
        }
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_database_name);
        named || open::open(path).is_ok()
    }

    fn sessions(&self, db: &Path) -> Result<Vec<SessionRow>, ReadError> {
        let db = open::open(db)?;
        list(&db)
    }

    fn read_session(&self, path: &Path, session: &str) -> Result<ReadOutcome, ReadError> {
        let db = open::open(path)?;
        let name = format!("{}#{session}", db.name);
        // One read transaction: the rows are of one moment even while OpenCode writes.
        db.conn.execute_batch("BEGIN").map_err(|e| db.error(e))?;
        let Some(row) = rows::session(&db, session)? else {
            return Err(ReadError::new(
                Location::file(name),
                format!("the database has no session {session}"),
            )
            .with_hint(format!(
                "`sessiontool list --tool opencode` lists its sessions; `sessiontool show {}` names them",
                db.name
            )));
        };
        let messages = rows::messages(&db, session)?;
        let parts = rows::parts(&db, session)?;
        let orphans = rows::orphan_parts(&db, session)?;
        let newer = rows::session_message_rows(&db, session)?;
        db.conn.execute_batch("COMMIT").map_err(|e| db.error(e))?;
        let mut outcome = map::session(&name, row, messages, parts, orphans);
        if newer > 0 {
            // OpenCode 1.18 creates `session_message` and leaves it empty; a later version that
            // fills it would keep there what this reader does not read.
            outcome.diagnostics.push(Diagnostic {
                code: "unread-rows",
                severity: crate::diag::Severity::Warning,
                location: Location::file(name),
                message: format!(
                    "the session has {newer} row(s) in `session_message` (a newer OpenCode message store), which this reader does not read"
                ),
            });
        }
        Ok(outcome)
    }

    fn check(&self, path: &Path) -> Result<Vec<Diagnostic>, ReadError> {
        let db = open::open(path)?;
        let mut out = check::check(&db)?;
        out.push(check::only_checks(&db.name));
        Ok(out)
    }
}

fn list(db: &open::Db) -> Result<Vec<SessionRow>, ReadError> {
    // Text of JSON read only where it is JSON: a damaged row must not fail the listing.
    const SQL: &str =
        "SELECT s.id, s.title, s.directory, s.time_created, s.time_updated, s.parent_id,
        (SELECT count(*) FROM message m WHERE m.session_id = s.id),
        (SELECT CASE WHEN json_valid(p.data) THEN json_extract(p.data, '$.text') END
           FROM message m JOIN part p ON p.message_id = m.id
          WHERE m.session_id = s.id
            AND CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.role') END = 'user'
            AND CASE WHEN json_valid(p.data) THEN json_extract(p.data, '$.type') END = 'text'
          ORDER BY m.time_created, m.id, p.id LIMIT 1)
        FROM session s ORDER BY s.time_updated DESC, s.id";
    let mut stmt = db.conn.prepare(SQL).map_err(|e| db.error(e))?;
    let text = |v: rusqlite::types::ValueRef| v.as_str().ok().map(String::from);
    let rows = stmt
        .query_map([], |r| {
            Ok(SessionRow {
                id: text(r.get_ref(0)?).unwrap_or_default(),
                title: text(r.get_ref(1)?),
                directory: text(r.get_ref(2)?),
                created: r.get_ref(3)?.as_i64().ok().and_then(map::millis),
                updated: r.get_ref(4)?.as_i64().ok().and_then(map::millis),
                parent: text(r.get_ref(5)?),
                messages: r.get::<_, i64>(6)?.max(0) as usize,
                first_prompt: text(r.get_ref(7)?),
            })
        })
        .map_err(|e| db.error(e))?;
    rows.collect::<Result<_, _>>().map_err(|e| db.error(e))
}
