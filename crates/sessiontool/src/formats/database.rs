//! Formats whose sessions are rows of a database, not a file each (OpenCode's SQLite store).
//!
//! A file format reads bytes ([`super::Format`]); a database format reads one session out of
//! a database file that holds many. A session is addressed as `PATH#SESSION_ID` (the `#` after
//! the last path component: `~/.local/share/opencode/opencode.db#ses_…`). Database formats
//! are read-only here: they have no writer, and the `formats` command says so. They are
//! registered in [`all`], beside [`super::all`] for file formats.

use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Location};

use super::{ReadError, ReadOutcome};

/// One session as a database lists it (what `list` shows without reading its messages).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub title: Option<String>,
    /// The project folder the session ran in.
    pub directory: Option<String>,
    /// RFC 3339.
    pub created: Option<String>,
    pub updated: Option<String>,
    /// Messages of the user and the assistant.
    pub messages: usize,
    /// The text of the first user message.
    pub first_prompt: Option<String>,
    /// The session this one was started from (a sub-agent's parent).
    pub parent: Option<String>,
}

/// A format whose sessions live in a database file.
pub trait DatabaseFormat: Sync {
    /// Stable name used on the command line (`opencode-db`).
    fn name(&self) -> &'static str;
    /// One line for `sessiontool formats`.
    fn description(&self) -> &'static str;
    /// The tool that writes it.
    fn tool(&self) -> &'static str;
    /// Whether `head` (the first bytes of the file at `path`) is such a database.
    fn detect(&self, path: &Path, head: &[u8]) -> bool;
    /// Every session the database holds, newest first.
    fn sessions(&self, db: &Path) -> Result<Vec<SessionRow>, ReadError>;
    /// One session, as a file format's reader gives it.
    fn read_session(&self, db: &Path, session: &str) -> Result<ReadOutcome, ReadError>;
    /// What is wrong in the database, without changing it (fsck): rows that point at rows that
    /// are not there, data that does not parse. Empty when nothing is.
    fn check(&self, db: &Path) -> Result<Vec<Diagnostic>, ReadError>;
}

/// Every database format.
pub fn all() -> &'static [&'static dyn DatabaseFormat] {
    &[&super::opencode::OpenCodeDb]
}

pub fn by_name(name: &str) -> Option<&'static dyn DatabaseFormat> {
    all().iter().copied().find(|f| f.name() == name)
}

/// The first bytes of every SQLite 3 database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The database format of the file at `path`, judged from its first bytes and its name;
/// `None` when it is not one (or cannot be read).
pub fn detect(path: &Path) -> Option<&'static dyn DatabaseFormat> {
    let head = read_head(path).ok()?;
    all().iter().copied().find(|f| f.detect(path, &head))
}

/// The first 100 bytes of the file at `path` (a SQLite header's), of a regular file only.
pub(crate) fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(100);
    crate::regular_file::open(path)?
        .take(100)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// A session in a database: `PATH#SESSION_ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub db: PathBuf,
    pub session: String,
}

impl Address {
    /// `arg` as `PATH#SESSION_ID` when it is one: no file is named `arg` itself, the part
    /// before the last `#` is a database file of a [`DatabaseFormat`], and the id is not
    /// empty. `None` otherwise (the argument is then a file name as usual).
    pub fn parse(arg: &Path) -> Option<(Address, &'static dyn DatabaseFormat)> {
        if arg.symlink_metadata().is_ok() {
            return None;
        }
        let text = arg.to_str()?;
        let (db, session) = text.rsplit_once('#')?;
        if session.is_empty() || session.contains('/') {
            return None;
        }
        let db = PathBuf::from(db);
        let format = detect(&db)?;
        Some((
            Address {
                db,
                session: session.to_string(),
            },
            format,
        ))
    }

    /// How the session is named in messages (`PATH#ID`).
    pub fn name(&self) -> String {
        format!("{}#{}", self.db.display(), self.session)
    }
}

/// Reads the session `address` names, with the format that recognises its database (or
/// `from` when given). `source_format` is set to the format's name.
pub fn read(
    address: &Address,
    format: &'static dyn DatabaseFormat,
) -> Result<ReadOutcome, ReadError> {
    let mut outcome = format.read_session(&address.db, &address.session)?;
    outcome.session.meta.source_format = Some(format.name().to_string());
    Ok(outcome)
}

/// The error for a database named without a session: it holds many, so one must be picked.
pub fn needs_session(db: &Path, format: &dyn DatabaseFormat) -> ReadError {
    let listed = match format.sessions(db) {
        Ok(rows) if rows.is_empty() => "it holds no session".to_string(),
        Ok(rows) => {
            let ids: Vec<&str> = rows.iter().take(5).map(|r| r.id.as_str()).collect();
            let more = rows.len().saturating_sub(ids.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("its sessions: {}{more}", ids.join(", "))
        }
        Err(e) => e.message,
    };
    ReadError::new(
        Location::file(db.display().to_string()),
        format!("this {} file holds many sessions; {listed}", format.name()),
    )
    .with_hint(format!(
        "name one as {}#SESSION_ID (`sessiontool list --tool {}` lists them)",
        db.display(),
        format.tool()
    ))
}
