//! Changes to a store made all at once or not at all, as far as a file system allows: every
//! new file is first written to a temp file beside its target and fsynced (stage); only when
//! all are staged are they renamed into place and the old files retired to backups
//! (commit). Dropping a transaction before commit removes its temp files and the folders it
//! created, so a failure half-way leaves the store as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// What happens to the file a new one replaces or supersedes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retire {
    /// Nothing: the old file stays as it is (a copy).
    Keep,
    /// Renamed to `<old>.bak-<stamp>`: kept, but no tool lists it any more.
    Backup,
    /// Deleted (only when the user asked to move, after the copy was verified).
    Delete,
}

struct Staged {
    /// `None`: nothing to write, the new file is in place already (an interrupted run wrote
    /// it); only the old one is retired.
    temp: Option<tempfile::NamedTempFile>,
    target: PathBuf,
    /// The file this one replaces or supersedes, and what to do with it.
    old: Option<(PathBuf, Retire)>,
    sha256: String,
}

/// One change made by a commit.
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub written: PathBuf,
    #[serde(serialize_with = "crate::serde_path::lossy_opt")]
    pub old: Option<PathBuf>,
    /// Where the old file went when it was backed up.
    #[serde(serialize_with = "crate::serde_path::lossy_opt")]
    pub backup: Option<PathBuf>,
    pub deleted: bool,
}

pub struct Txn {
    staged: Vec<Staged>,
    created_dirs: Vec<PathBuf>,
    stamp: String,
    /// The stores written into: no write goes through a symbolic link inside them.
    home: Option<super::home::Home>,
}

impl Txn {
    pub fn new(stamp: impl Into<String>) -> Txn {
        Txn {
            staged: Vec::new(),
            created_dirs: Vec::new(),
            stamp: stamp.into(),
            home: None,
        }
    }

    /// Writes into `home`'s stores: refuse targets behind a symbolic link inside a store.
    pub fn within(mut self, home: &super::home::Home) -> Txn {
        self.home = Some(home.clone());
        self
    }

    pub fn len(&self) -> usize {
        self.staged.len()
    }

    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Writes `bytes` to a temp file beside `target`. `target` may be `old` itself (a file
    /// rewritten in place); otherwise it must not exist, and no two staged files may share it.
    pub fn stage(
        &mut self,
        target: &Path,
        bytes: &[u8],
        old: Option<(&Path, Retire)>,
    ) -> std::io::Result<()> {
        if let Some(home) = &self.home {
            super::guard::check(home, target)?;
        }
        let in_place = old.is_some_and(|(o, _)| o == target);
        if !in_place && target.exists() {
            return Err(exists(target));
        }
        if self.staged.iter().any(|s| s.target == target) {
            return Err(exists(target));
        }
        let dir = target.parent().unwrap_or(Path::new("."));
        self.create_dir_all(dir)?;
        let mut temp = crate::io::temp_beside(target, "stage")?;
        temp.write_all(bytes)?;
        temp.as_file().sync_all()?;
        crate::fault::point("txn.staged")?;
        if let Some((o, _)) = old
            && let Ok(meta) = std::fs::metadata(o)
        {
            // The new file keeps the old one's permissions (some tools write 0600).
            temp.as_file().set_permissions(meta.permissions())?;
        }
        self.staged.push(Staged {
            temp: Some(temp),
            target: target.to_path_buf(),
            old: old.map(|(p, r)| (p.to_path_buf(), r)),
            sha256: crate::ids::sha256_hex_bytes(bytes),
        });
        Ok(())
    }

    /// Retires `old` only: `target` already holds what it would have been replaced by (an
    /// earlier run stopped between writing `target` and retiring `old`).
    pub fn retire(&mut self, target: &Path, old: &Path, retire: Retire) -> std::io::Result<()> {
        let bytes = std::fs::read(target)?;
        self.staged.push(Staged {
            temp: None,
            target: target.to_path_buf(),
            old: Some((old.to_path_buf(), retire)),
            sha256: crate::ids::sha256_hex_bytes(&bytes),
        });
        Ok(())
    }

    /// `create_dir_all`, remembering which folders were new so an abort can remove them.
    fn create_dir_all(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d {
            if p.as_os_str().is_empty() || p.exists() {
                break;
            }
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        std::fs::create_dir_all(dir)?;
        self.created_dirs.extend(missing);
        Ok(())
    }

    /// Renames every staged file into place, checking each against the hash of what was
    /// staged, then retires the old files. Stops at the first failure with what was done.
    pub fn commit(mut self) -> Result<Vec<Done>, (Vec<Done>, std::io::Error)> {
        let staged = std::mem::take(&mut self.staged);
        // Nothing was placed yet: from here on the folders hold new files and stay.
        self.created_dirs.clear();
        let mut done = Vec::new();
        for s in staged {
            match commit_one(s, &self.stamp) {
                Ok(d) => done.push(d),
                Err(e) => return Err((done, e)),
            }
        }
        Ok(done)
    }
}

fn commit_one(s: Staged, stamp: &str) -> std::io::Result<Done> {
    let in_place = s.old.as_ref().is_some_and(|(o, _)| *o == s.target);
    let mut done = Done {
        written: s.target.clone(),
        old: s.old.as_ref().map(|(o, _)| o.clone()),
        backup: None,
        deleted: false,
    };
    crate::fault::point("txn.before-rename")?;
    match s.temp {
        Some(temp) if in_place => {
            // Keep the original under its backup name first: a hard link, so it is never
            // absent.
            let backup = backup_name(&s.target, stamp);
            std::fs::hard_link(&s.target, &backup)?;
            done.backup = Some(backup);
            temp.persist(&s.target).map_err(|e| e.error)?;
        }
        Some(temp) => {
            temp.persist_noclobber(&s.target).map_err(|e| e.error)?;
        }
        None => {}
    }
    crate::fault::point("txn.after-rename")?;
    let dir = s.target.parent().unwrap_or(Path::new("."));
    crate::io::sync_dir(dir)?;
    let written = std::fs::read(&s.target)?;
    if crate::ids::sha256_hex_bytes(&written) != s.sha256 {
        return Err(std::io::Error::other(format!(
            "{} does not read back as written",
            s.target.display()
        )));
    }
    if let Some((old, retire)) = s.old.filter(|_| !in_place) {
        match retire {
            Retire::Keep => {}
            Retire::Backup => {
                let backup = backup_name(&old, stamp);
                std::fs::rename(&old, &backup)?;
                done.backup = Some(backup);
            }
            Retire::Delete => {
                std::fs::remove_file(&old)?;
                done.deleted = true;
            }
        }
        crate::io::sync_dir(old.parent().unwrap_or(Path::new(".")))?;
    }
    Ok(done)
}

impl Drop for Txn {
    fn drop(&mut self) {
        // Temp files go with `staged`; then the folders made for them, deepest first.
        self.staged.clear();
        self.created_dirs
            .sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for dir in &self.created_dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

pub fn backup_name(path: &Path, stamp: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".bak-{stamp}"));
    path.with_file_name(name)
}

fn exists(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{} exists", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aborted_transaction_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/new.jsonl");
        let mut txn = Txn::new("S");
        txn.stage(&target, b"x\n", None).unwrap();
        drop(txn);
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn commit_moves_retires_and_rewrites_in_place_with_backups() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let same = dir.path().join("same.jsonl");
        std::fs::write(&old, "old\n").unwrap();
        std::fs::write(&same, "before\n").unwrap();
        let mut txn = Txn::new("S");
        txn.stage(
            &dir.path().join("n/new.jsonl"),
            b"new\n",
            Some((&old, Retire::Backup)),
        )
        .unwrap();
        txn.stage(&same, b"after\n", Some((&same, Retire::Backup)))
            .unwrap();
        let done = txn.commit().unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(
            std::fs::read(dir.path().join("n/new.jsonl")).unwrap(),
            b"new\n"
        );
        assert!(!old.exists());
        assert_eq!(
            std::fs::read(dir.path().join("old.jsonl.bak-S")).unwrap(),
            b"old\n"
        );
        assert_eq!(std::fs::read(&same).unwrap(), b"after\n");
        assert_eq!(
            std::fs::read(dir.path().join("same.jsonl.bak-S")).unwrap(),
            b"before\n"
        );
    }

    #[test]
    fn staging_refuses_to_replace_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("there.jsonl");
        std::fs::write(&there, "x").unwrap();
        let mut txn = Txn::new("S");
        assert!(txn.stage(&there, b"y", None).is_err());
        drop(txn);
        assert_eq!(std::fs::read(&there).unwrap(), b"x");
    }
}
