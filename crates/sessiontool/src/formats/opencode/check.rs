//! fsck of an OpenCode database: what is wrong, said without changing anything (sessiontool
//! never writes OpenCode's database; there is no repair).

use crate::diag::{Diagnostic, Location, Severity};
use crate::formats::ReadError;

use super::open::Db;

/// At most this many ids are named per finding; the count says the rest.
const NAMED: usize = 10;

pub(crate) fn check(db: &Db) -> Result<Vec<Diagnostic>, ReadError> {
    let mut out = Vec::new();
    let location = db.location();
    let mut say = |code: &'static str, severity: Severity, message: String| {
        out.push(Diagnostic {
            code,
            severity,
            location: location.clone(),
            message,
        })
    };
    let problems: Vec<String> = strings(db, "PRAGMA quick_check")?
        .into_iter()
        .filter(|s| s != "ok")
        .collect();
    if !problems.is_empty() {
        say(
            "opencode-damaged",
            Severity::Error,
            format!("SQLite's quick_check: {}", problems.join("; ")),
        );
    }
    let findings: [(&str, Severity, &str, &str); 6] = [
        (
            "opencode-part-without-message",
            Severity::Error,
            "SELECT p.id || ' (of ' || p.message_id || ')' FROM part p WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = p.message_id) ORDER BY p.id",
            "part(s) belong to no message: OpenCode never shows them",
        ),
        (
            "opencode-message-without-session",
            Severity::Error,
            "SELECT m.id || ' (of ' || m.session_id || ')' FROM message m WHERE NOT EXISTS (SELECT 1 FROM session s WHERE s.id = m.session_id) ORDER BY m.id",
            "message(s) belong to no session: OpenCode never shows them",
        ),
        (
            "opencode-part-session-mismatch",
            Severity::Warning,
            "SELECT p.id FROM part p JOIN message m ON m.id = p.message_id WHERE p.session_id <> m.session_id ORDER BY p.id",
            "part(s) name another session than their message's (OpenCode goes by the message)",
        ),
        (
            "opencode-invalid-json",
            Severity::Error,
            "SELECT 'message ' || id FROM message WHERE typeof(data) <> 'text' OR NOT json_valid(data) UNION ALL SELECT 'part ' || id FROM part WHERE typeof(data) <> 'text' OR NOT json_valid(data)",
            "row(s) hold data that is not JSON: OpenCode fails on their session",
        ),
        (
            "opencode-missing-field",
            Severity::Error,
            "SELECT 'message ' || id FROM message WHERE typeof(data) = 'text' AND json_valid(data) AND coalesce(json_extract(data, '$.role'), '') NOT IN ('user', 'assistant') UNION ALL SELECT 'part ' || id FROM part WHERE typeof(data) = 'text' AND json_valid(data) AND json_type(data, '$.type') IS NOT 'text'",
            "row(s) lack the field that says what they are (a message's role, a part's type)",
        ),
        (
            "opencode-session-without-project",
            Severity::Warning,
            "SELECT s.id || ' (of ' || s.project_id || ')' FROM session s WHERE NOT EXISTS (SELECT 1 FROM project p WHERE p.id = s.project_id) ORDER BY s.id",
            "session(s) belong to no project",
        ),
    ];
    let has_project = super::open::has_table(db, "project")?;
    for (code, severity, sql, what) in findings {
        if code == "opencode-session-without-project" && !has_project {
            continue;
        }
        let ids = strings(db, sql)?;
        if ids.is_empty() {
            continue;
        }
        let named: Vec<&str> = ids.iter().take(NAMED).map(String::as_str).collect();
        let more = match ids.len() - named.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        say(
            code,
            severity,
            format!("{} {what}: {}{more}", ids.len(), named.join(", ")),
        );
    }
    Ok(out)
}

fn strings(db: &Db, sql: &str) -> Result<Vec<String>, ReadError> {
    let mut stmt = db.conn.prepare(sql).map_err(|e| db.error(e))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(match r.get_ref(0)? {
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
        })
        .map_err(|e| db.error(e))?;
    rows.collect::<Result<_, _>>().map_err(|e| db.error(e))
}

/// What fsck says of a database it only checks.
pub(crate) fn only_checks(name: &str) -> Diagnostic {
    Diagnostic {
        code: "opencode-checked-only",
        severity: Severity::Info,
        location: Location::file(name.to_string()),
        message: "an OpenCode database is checked, never changed: sessiontool does not write it"
            .into(),
    }
}
