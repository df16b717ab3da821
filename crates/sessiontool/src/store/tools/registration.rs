//! What a tool's registries and indexes must learn of a session placed in its store. Each
//! tool's module declares its own kinds and writes them ([`ToolStore::place`] returns them
//! with the session's path); `place` commits them with the session file, in this order: every
//! registration begins (before anything is written, so a refusal writes nothing), each is
//! applied under the locks on the store's registries, the locks go, the session file is
//! written, and what a registration left for after it is written last.
//!
//! [`ToolStore::place`]: super::ToolStore::place

use std::path::{Path, PathBuf};

use crate::store::home::Home;
use crate::store::lock::{FileLock, lock_path};
use crate::store::place::PlaceFailure;

use super::PlaceError;

/// An index or registry a tool keeps beside its sessions that must name a new one.
pub trait Registration: std::fmt::Debug {
    /// The files it writes, its registry or index first.
    fn files(&self) -> Vec<PathBuf>;

    /// What it records, in words (what a dry run says it would do).
    fn describe(&self) -> String;

    /// Readies it before anything is written: what is left to write once the session file is
    /// written, if anything (Codex's row, made from the file as written, under its database's
    /// lock taken here).
    fn begin(&self) -> Result<Option<Box<dyn AfterSession>>, PlaceFailure> {
        Ok(None)
    }

    /// Writes it under `locks`, before the session file is written. Read again here, so what
    /// another writer added meanwhile stays.
    fn apply(&self, _locks: &RegistryLocks) -> Result<(), PlaceFailure> {
        Ok(())
    }
}

/// The part of a registration written once the session file is.
pub trait AfterSession {
    /// Writes it for the session file at `path` (its `bytes`, as written); says what was
    /// done, in words that replace [`Registration::describe`]'s.
    fn write(self: Box<Self>, path: &Path, bytes: &[u8]) -> Result<String, PlaceFailure>;
}

/// The locks `place` holds on a store's registries ([`ToolStore::registries`]) from before it
/// chooses where a session goes to the last registration applied, so two writers (or Gemini
/// CLI) never lose each other's entries or claim one name twice.
///
/// [`ToolStore::registries`]: super::ToolStore::registries
#[derive(Default)]
pub struct RegistryLocks(Vec<FileLock>);

impl RegistryLocks {
    /// Takes the lock of each file, after checking that no symbolic link inside the store
    /// leads to it (and making its folder, which the lock lives in).
    pub(crate) fn acquire(home: &Home, files: Vec<PathBuf>) -> Result<Self, PlaceFailure> {
        let mut locks = Vec::new();
        for file in files {
            crate::store::guard::check(home, &file)
                .map_err(|e| PlaceFailure::Io(file.clone(), e))?;
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).map_err(|e| PlaceFailure::Io(dir.to_path_buf(), e))?;
            }
            locks.push(FileLock::acquire(&file).map_err(|e| PlaceFailure::Io(file.clone(), e))?);
        }
        Ok(RegistryLocks(locks))
    }

    /// Checks that `file`'s lock is one of these and still held: what a registration does
    /// before it writes `file`.
    pub fn verify(&self, file: &Path) -> Result<(), PlaceFailure> {
        let held = self
            .0
            .iter()
            .find(|l| l.path() == lock_path(file))
            .ok_or_else(|| {
                PlaceError(format!(
                    "{} is not locked for this write (sessiontool's own mistake); nothing was written",
                    file.display()
                ))
            })?;
        held.verify()
            .map_err(|e| PlaceFailure::Io(file.to_path_buf(), e))
    }

    /// Lets the locks go (an error when a lock's folder cannot be removed).
    pub(crate) fn release(self) -> Result<(), PlaceFailure> {
        for lock in self.0 {
            let path = lock.path().to_path_buf();
            lock.release().map_err(|e| PlaceFailure::Io(path, e))?;
        }
        Ok(())
    }
}

/// A stored session registered again in its tool's index ([`ToolStore::register_again`]), for
/// `recover`.
///
/// [`ToolStore::register_again`]: super::ToolStore::register_again
#[derive(Debug)]
pub struct Reregistered {
    /// The index written, or that a dry run would write.
    pub index: PathBuf,
    /// The id it is registered under; none on a dry run, which writes nothing.
    pub id: Option<String>,
    /// The index as it was before (none on a dry run).
    pub backup: Option<PathBuf>,
}
