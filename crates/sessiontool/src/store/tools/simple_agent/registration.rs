//! simple-agent lists sessions by project through `sessions/meta.json`, its path index: a
//! session placed in its store is added there.

use std::path::PathBuf;

use crate::store::place::PlaceFailure;
use crate::store::tools::{PlaceError, Registration, RegistryLocks};

#[derive(Debug)]
pub(super) struct SimpleAgentIndex {
    /// `meta.json`.
    pub(super) index: PathBuf,
    pub(super) cwd: String,
    pub(super) id: String,
}

impl Registration for SimpleAgentIndex {
    fn files(&self) -> Vec<PathBuf> {
        vec![self.index.clone()]
    }

    fn describe(&self) -> String {
        format!(
            "{} lists {} under {}",
            self.index.display(),
            self.id,
            self.cwd
        )
    }

    fn apply(&self, locks: &RegistryLocks) -> Result<(), PlaceFailure> {
        let index = &self.index;
        locks.verify(index)?;
        let current = match std::fs::read(index) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(PlaceFailure::Io(index.clone(), e)),
        };
        let updated =
            crate::formats::simple_agent_json::index_entry(current.as_deref(), &self.cwd, &self.id)
                .map_err(|e| {
                    PlaceFailure::Place(PlaceError(format!("{}: {e}", index.display())))
                })?;
        crate::io::write_atomic(index, &updated, true)
            .map_err(|e| PlaceFailure::Io(index.clone(), e))
    }
}
