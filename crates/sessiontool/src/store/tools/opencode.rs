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
        &["XDG_DATA_HOME", "OPENCODE_DB"]
    }

    fn bases(&self, home: &Home) -> Vec<PathBuf> {
        vec![home.opencode()]
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![home.opencode()]
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
    if let Some(db) = home.opencode_db_override() {
        return vec![db];
    }
    let Ok(entries) = std::fs::read_dir(home.opencode()) else {
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
