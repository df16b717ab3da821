//! OpenCode: its sessions are rows of `<XDG data>/opencode/opencode.db` (`$OPENCODE_DB`
//! overrides it), not files. `list` reads them from the database
//! ([`crate::store::catalog`]); nothing is placed here: sessiontool never writes OpenCode's
//! database.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore};
use crate::formats::opencode::is_database_name;
use crate::store::catalog::Entry;
use crate::store::home::Home;
use crate::store::stored::Discovery;
use crate::store::tool::Tool;

pub struct OpenCode;

/// Where XDG programs keep their data, `~/.local/share` when it is not set.
const DATA_HOME: &str = "XDG_DATA_HOME";
/// The one database OpenCode opens instead of its channels' (`:memory:`: none on disk).
const DB: &str = "OPENCODE_DB";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const OpenCode: Tool = Tool::of(&OpenCode);
}

impl ToolStore for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn current_format(&self) -> &'static str {
        crate::formats::opencode::NAME
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[DATA_HOME, DB]
    }

    /// Its data folder, `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`), where
    /// its databases are (`opencode.db`, `opencode-<channel>.db`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(DATA_HOME, || home.dir().join(".local/share"))
            .join("opencode")
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home)]
    }

    /// No session files: the databases are listed by [`databases`].
    fn discover(&self, _home: &Home, _found: &mut Discovery) {}

    fn database_entries(&self, home: &Home, problems: &mut Vec<String>) -> Vec<Entry> {
        crate::store::catalog::database_entries(home, problems)
    }

    fn place(&self, _home: &Home, _new: &NewSession) -> Result<Target, PlaceError> {
        Err(PlaceError(
            "OpenCode keeps its sessions in a database, which sessiontool only reads; nothing was written".into(),
        ))
    }
}

/// OpenCode's databases under `home`: `$OPENCODE_DB` when it names one, else every
/// `opencode.db` and `opencode-<channel>.db` in its data folder (each release channel keeps
/// its own), sorted by name.
pub fn databases(home: &Home) -> Vec<PathBuf> {
    if let Some(db) = db_override(home) {
        return vec![db];
    }
    let Ok(entries) = std::fs::read_dir(OpenCode.folder(home)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_database_name))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The database `$OPENCODE_DB` names, as OpenCode resolves it (an absolute path, or one
/// relative to its data folder); `None` when it is not set or is `:memory:`.
pub(crate) fn db_override(home: &Home) -> Option<PathBuf> {
    let db = home.override_of(DB)?;
    if db.as_os_str() == ":memory:" {
        return None;
    }
    Some(match db.is_absolute() {
        true => db.to_path_buf(),
        false => OpenCode.folder(home).join(db),
    })
}
