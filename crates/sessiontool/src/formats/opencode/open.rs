//! Opening an OpenCode database for reading only.
//!
//! The file is opened through SQLite's URI `mode=ro` with `query_only` set: nothing here can
//! write it, and the database file keeps every byte. OpenCode runs in WAL mode: a reader sees
//! the last committed state while OpenCode writes (WAL readers are not blocked), and waits up
//! to the busy timeout when a rollback-journal writer holds the lock. The path is resolved
//! first (symbolic links followed), so SQLite finds the `-wal` file beside the real database,
//! where OpenCode writes it, and not beside a link to it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::diag::Location;
use crate::formats::ReadError;
use crate::formats::database::SQLITE_MAGIC;

/// As long as OpenCode itself waits for the lock (`PRAGMA busy_timeout = 5000`).
const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

fn busy_timeout() -> Duration {
    crate::io::sqlite::busy_timeout(BUSY_TIMEOUT)
}

/// An open database and the name it is reported under.
pub(crate) struct Db {
    pub conn: Connection,
    /// The path as given (what messages name).
    pub name: String,
}

impl Db {
    /// A [`ReadError`] for a failed query.
    pub fn error(&self, e: rusqlite::Error) -> ReadError {
        sql_error(&self.name, e)
    }

    pub fn location(&self) -> Location {
        Location::file(self.name.clone())
    }
}

pub(crate) fn sql_error(name: &str, e: rusqlite::Error) -> ReadError {
    let location = Location::file(name.to_string());
    if crate::io::sqlite::is_busy(&e) {
        return ReadError::new(
            location,
            format!(
                "the database is locked by another process (OpenCode writing to it) for over {} ms",
                busy_timeout().as_millis()
            ),
        )
        .with_hint("try again when OpenCode is done; nothing was changed");
    }
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            ReadError::new(location, format!("not a readable SQLite database: {e}"))
                .with_hint("the file is damaged or is not a database; keep a copy of it as it is")
        }
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            ReadError::new(location, format!("the database is damaged: {e}")).with_hint(
                "keep a copy of it as it is (with its -wal file); `sqlite3 FILE .recover` may save its rows",
            )
        }
        _ => ReadError::new(location, format!("cannot read the database: {e}")),
    }
}

/// Opens the OpenCode database at `path` read-only. Refuses what is not a regular file, not
/// a SQLite database, or a database without OpenCode's tables.
pub(crate) fn open(path: &Path) -> Result<Db, ReadError> {
    let name = path.display().to_string();
    let location = || Location::file(name.clone());
    let real = std::fs::canonicalize(path)
        .map_err(|e| ReadError::new(location(), format!("cannot read the database: {e}")))?;
    let head = crate::formats::database::read_head(&real).map_err(|e| {
        let message = match crate::regular_file::is_not_regular(&e) {
            Some(kind) => format!("not a regular file ({kind})"),
            None => format!("cannot read the database: {e}"),
        };
        ReadError::new(location(), message)
    })?;
    if !head.starts_with(SQLITE_MAGIC) {
        return Err(ReadError::new(location(), "not a SQLite database")
            .with_hint("name OpenCode's opencode.db (in ~/.local/share/opencode)"));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(uri(&real, unopened_wal(&real, &head)), flags)
        .map_err(|e| sql_error(&name, e))?;
    conn.busy_timeout(busy_timeout())
        .map_err(|e| sql_error(&name, e))?;
    conn.execute_batch("PRAGMA query_only = ON")
        .map_err(|e| sql_error(&name, e))?;
    let db = Db { conn, name };
    for table in ["session", "message", "part"] {
        if !has_table(&db, table)? {
            return Err(ReadError::new(
                db.location(),
                format!("not an OpenCode database: it has no `{table}` table"),
            )
            .with_hint("name OpenCode's opencode.db (in ~/.local/share/opencode)"));
        }
    }
    Ok(db)
}

/// Whether `path` is a WAL database that no process has open (no `-wal` or `-shm` beside it:
/// OpenCode removes both when it closes the database). A read-only connection would create
/// both files and could not remove them; opened `immutable` it creates nothing. OpenCode
/// starting while it is read can only make this reading fail, never change the database.
fn unopened_wal(path: &Path, head: &[u8]) -> bool {
    // Header bytes 18 and 19: the file format's write and read versions, 2 for WAL.
    let wal = head.get(18..20) == Some(&[2, 2]);
    let beside = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p).symlink_metadata().is_ok()
    };
    wal && !beside("-wal") && !beside("-shm")
}

pub(crate) fn has_table(db: &Db, table: &str) -> Result<bool, ReadError> {
    db.conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| db.error(e))
}

/// `file:` URI of `path` with `mode=ro` (and `immutable=1`): every byte but unreserved ones
/// and `/` escaped, so a `?` or `#` in a folder name stays part of the path.
fn uri(path: &Path, immutable: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str("?mode=ro");
    if immutable {
        out.push_str("&immutable=1");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn uri_escapes_what_sqlite_would_read_as_uri_syntax() {
        let uri = super::uri(std::path::Path::new("/a b/x?y#z%/o.db"), false);
        assert_eq!(uri, "file:/a%20b/x%3Fy%23z%25/o.db?mode=ro");
    }
}
