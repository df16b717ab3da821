//! Codex 0.169 lists threads from its state database (`state_5.sqlite`, table `threads`): a
//! rollout placed in its store gets the row Codex would write for it, under SQLite's own lock
//! (see [`state`](super::state)). The database is locked and backed up
//! before the session is written, so a refusal writes nothing; the row is made from the
//! rollout as written and committed after it, or rolled back when the rollout is not written.

use std::path::{Path, PathBuf};

use super::state::{Databases, Writer};
use crate::store::place::PlaceFailure;
use crate::store::tools::{AfterSession, PlaceError, Registration};

#[derive(Debug)]
pub(super) struct CodexThread {
    pub(super) databases: Databases,
    /// `$CODEX_HOME`, which says whether a rollout is archived.
    pub(super) codex_home: PathBuf,
}

impl Registration for CodexThread {
    fn files(&self) -> Vec<PathBuf> {
        vec![self.databases.state.clone()]
    }

    fn describe(&self) -> String {
        format!(
            "{} lists the thread as Codex registers a rollout (a backup of it first)",
            self.databases.state.display()
        )
    }

    fn begin(&self) -> Result<Option<Box<dyn AfterSession>>, PlaceFailure> {
        let writer = Writer::begin(&self.databases, &crate::repair::now_stamp())
            .map_err(|e| PlaceError(format!("{e}; nothing was written")))?;
        Ok(Some(Box::new(ThreadRow {
            writer,
            codex_home: self.codex_home.clone(),
        })))
    }
}

/// The row, once the rollout is written; dropped unwritten, nothing changes.
struct ThreadRow {
    writer: Writer,
    codex_home: PathBuf,
}

impl AfterSession for ThreadRow {
    /// Writes and commits the row of the rollout just written.
    fn write(self: Box<Self>, path: &Path, bytes: &[u8]) -> Result<String, PlaceFailure> {
        let ThreadRow {
            mut writer,
            codex_home,
        } = *self;
        let database = writer.state_path().display().to_string();
        let failed = |e: String| {
            PlaceError(format!(
                "{} was written, but {database} was not updated: {e}; `sessiontool recover {}` registers it",
                path.display(),
                path.display()
            ))
        };
        let id = writer.register(&codex_home, path, bytes).map_err(failed)?;
        let backups = writer.commit().map_err(failed)?;
        let backups: Vec<String> = backups.iter().map(|b| b.display().to_string()).collect();
        Ok(format!(
            "{database} lists thread {id} (backup: {})",
            backups.join(", ")
        ))
    }
}
