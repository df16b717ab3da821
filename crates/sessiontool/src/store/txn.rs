//! Changes to a store made all at once or not at all, as far as a file system allows: every
//! new file is first written to a temp file beside its target and fsynced (stage); only when
//! all are staged are they renamed into place and the old files retired to backups
//! (commit). Dropping a transaction before commit removes its temp files and the folders it
//! created, so a failure half-way leaves the store as it was.
//!
//! A tool may write to a session while it is moved. Every old file carries the stamp of the
//! bytes the new one was made from; staging refuses an old file that changed since or that
//! another process holds open for writing, and the commit checks it again around the moment
//! it is retired: an old file that changed then is put back and its new copy removed, and
//! the commit stops there (run it again). The old inode itself is the backup (a rename, or a
//! hard link for a file rewritten in place), so a late write lands in the backup, never in
//! nothing. A session is deleted (`--move`) only when its copy is byte for byte the same;
//! otherwise (a converted or re-keyed copy) it is kept as a backup.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::lock::FileLock;
use crate::check::Stamp;
use crate::io::replace::{self, Backup, Original, ReplaceError};

/// What happens to the file a new one replaces or supersedes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retire {
    /// Nothing: the old file stays as it is (a copy).
    Keep,
    /// Renamed to `<old>.bak-<stamp>`: kept, but no tool lists it any more.
    Backup,
    /// Deleted (only when the user asked to move, after the copy was verified to hold the
    /// same bytes; a copy that differs keeps the old file as a backup instead).
    Delete,
}

/// The file a staged one replaces or supersedes: where it is, the stamp of the bytes that
/// were read from it, and what becomes of it.
#[derive(Debug, Clone, Copy)]
pub struct Old<'a> {
    pub path: &'a Path,
    pub read: Stamp,
    pub retire: Retire,
}

struct Staged {
    /// `None`: nothing to write, the new file is in place already (an interrupted run wrote
    /// it); only the old one is retired.
    temp: Option<tempfile::NamedTempFile>,
    target: PathBuf,
    old: Option<(PathBuf, Stamp, Retire)>,
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

/// A change outside the files a commit makes with them (a tool's database): prepared after
/// every old file was checked and before the first rename (a refusal then changes nothing),
/// committed after the last rename; dropped unprepared or uncommitted, it changes nothing.
pub trait Finish {
    fn prepare(&mut self) -> std::io::Result<()>;
    fn commit(self: Box<Self>) -> std::io::Result<()>;
}

pub struct Txn {
    staged: Vec<Staged>,
    finish: Vec<Box<dyn Finish>>,
    /// Registries whose lock the commit holds from its first check to its last rename.
    registries: Vec<PathBuf>,
    created_dirs: Vec<PathBuf>,
    stamp: String,
    /// The stores written into: no write goes through a symbolic link inside them.
    home: Option<super::home::Home>,
}

impl Txn {
    pub fn new(stamp: impl Into<String>) -> Txn {
        Txn {
            staged: Vec::new(),
            finish: Vec::new(),
            registries: Vec::new(),
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

    /// Writes `bytes` to a temp file beside `target`. `target` may be the old file itself (a
    /// file rewritten in place); otherwise it must not exist, and no two staged files may
    /// share it. The old file must still be as it was read, and no other process may hold it
    /// open for writing.
    pub fn stage(&mut self, target: &Path, bytes: &[u8], old: Option<Old>) -> std::io::Result<()> {
        if let Some(home) = &self.home {
            super::guard::check(home, target)?;
        }
        let in_place = old.is_some_and(|o| o.path == target);
        if !in_place && std::fs::symlink_metadata(target).is_ok() {
            return Err(exists(target));
        }
        if self.staged.iter().any(|s| s.target == target) {
            return Err(exists(target));
        }
        if let Some(o) = &old {
            check_old(o.path, &o.read)?;
        }
        let dir = target.parent().unwrap_or(Path::new("."));
        self.create_dir_all(dir)?;
        // A file of its own follows the umask; one made from an old file gets its mode below.
        let mut temp = match &old {
            Some(_) => crate::io::temp_beside(target, "stage")?,
            None => crate::io::temp_for_new(target, "stage")?,
        };
        temp.write_all(bytes)?;
        temp.as_file().sync_all()?;
        crate::fault::point("txn.staged")?;
        if let Some(o) = &old
            && let Ok(from) = std::fs::File::open(o.path)
        {
            // The new file keeps the old one's permissions and owner (some tools write 0600).
            replace::same_owner_and_mode(temp.as_file(), &from)?;
        }
        self.staged.push(Staged {
            temp: Some(temp),
            target: target.to_path_buf(),
            old: old.map(|o| (o.path.to_path_buf(), o.read, o.retire)),
            sha256: crate::ids::sha256_hex_bytes(bytes),
        });
        Ok(())
    }

    /// `target` is a registry or index other writers change too (`projects.json`,
    /// `meta.json`): the commit takes its lock ([`FileLock`]) before it checks anything and
    /// holds it to the end, so an entry another writer added since the plan was made is seen
    /// (the file changed: nothing is committed) rather than lost.
    pub fn lock_for_commit(&mut self, target: &Path) {
        if !self.registries.iter().any(|r| r == target) {
            self.registries.push(target.to_path_buf());
        }
    }

    /// `finish` is made with this commit: see [`Finish`].
    pub fn finish_with(&mut self, finish: Box<dyn Finish>) {
        self.finish.push(finish);
    }

    /// Retires the old file only: `target` already holds what it would have been replaced by
    /// (an earlier run stopped between writing `target` and retiring the old file).
    pub fn retire(&mut self, target: &Path, old: Old) -> std::io::Result<()> {
        check_old(old.path, &old.read)?;
        let bytes = std::fs::read(target)?;
        self.staged.push(Staged {
            temp: None,
            target: target.to_path_buf(),
            old: Some((old.path.to_path_buf(), old.read, old.retire)),
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
    /// staged, then retires the old files. Every old file is checked once more before the
    /// first rename. Stops at the first failure with what was done.
    pub fn commit(mut self) -> Result<Vec<Done>, (Vec<Done>, std::io::Error)> {
        let staged = std::mem::take(&mut self.staged);
        // In one order for every process, so two commits never wait for each other.
        self.registries.sort();
        let mut locks = Vec::new();
        for r in &self.registries {
            match FileLock::acquire(r) {
                Ok(l) => locks.push(l),
                Err(e) => return Err((Vec::new(), e)),
            }
        }
        for s in &staged {
            if let Some((old, read, _)) = &s.old
                && let Err(e) = check_old(old, read)
            {
                return Err((Vec::new(), e));
            }
        }
        let mut finish = std::mem::take(&mut self.finish);
        for f in &mut finish {
            if let Err(e) = f.prepare() {
                return Err((Vec::new(), e));
            }
        }
        // Nothing was placed yet: from here on the folders hold new files and stay.
        self.created_dirs.clear();
        let mut done = Vec::new();
        for s in staged {
            // Never write on a lock another process took over as stale.
            if let Some(e) = locks.iter().find_map(|l| l.verify().err()) {
                return Err((done, e));
            }
            match commit_one(s, &self.stamp) {
                Ok(d) => done.push(d),
                Err(e) => return Err((done, e)),
            }
        }
        for f in finish {
            if let Err(e) = f.commit() {
                return Err((done, e));
            }
        }
        // Released as they drop.
        drop(locks);
        Ok(done)
    }
}

/// The old file is as it was read and nobody else holds it open for writing.
fn check_old(path: &Path, read: &Stamp) -> std::io::Result<()> {
    let original = Original::open(path, read).map_err(|e| changed(path, e))?;
    original.check_no_writers().map_err(|e| changed(path, e))
}

fn changed(path: &Path, e: ReplaceError) -> std::io::Error {
    match e {
        ReplaceError::Io(e) => e,
        other => std::io::Error::other(format!("{}: {other}", path.display())),
    }
}

fn commit_one(s: Staged, stamp: &str) -> std::io::Result<Done> {
    let in_place = s.old.as_ref().is_some_and(|(o, _, _)| *o == s.target);
    let mut done = Done {
        written: s.target.clone(),
        old: s.old.as_ref().map(|(o, _, _)| o.clone()),
        backup: None,
        deleted: false,
    };
    crate::fault::point("txn.before-rename")?;
    if in_place {
        let (old, read, _) = s.old.as_ref().expect("in place has an old file");
        let temp = s.temp.expect("a file rewritten in place is staged");
        let original = Original::open(old, read).map_err(|e| changed(old, e))?;
        let options = replace::Options {
            backup: Backup::Keep { dir: None, stamp },
            allow_writers: false,
            points: ["txn.before-backup", "txn.before-rename", "txn.after-rename"],
        };
        let replaced = replace::replace(original, temp, &options).map_err(|e| changed(old, e))?;
        if replaced.original.now()? != *read {
            // Written to between the last check and the rename: the old file goes back.
            replaced.undo()?;
            return Err(changed(old, ReplaceError::Changed(replace::CHANGED.into())));
        }
        done.backup = replaced.finish()?;
        verify(&s.target, &s.sha256)?;
        return Ok(done);
    }
    // The old file, held open from before the new one appears: what it gains is seen.
    let old = match &s.old {
        Some((path, read, retire)) => Some((
            Original::open(path, read).map_err(|e| changed(path, e))?,
            *retire,
        )),
        None => None,
    };
    if let Some(temp) = s.temp {
        temp.persist_noclobber(&s.target).map_err(|e| e.error)?;
    }
    crate::fault::point("txn.after-rename")?;
    let dir = s.target.parent().unwrap_or(Path::new("."));
    crate::io::sync_dir(dir)?;
    verify(&s.target, &s.sha256)?;
    if let Some((original, retire)) = old {
        retire_old(original, retire, &s.target, &s.sha256, stamp, &mut done)?;
    }
    Ok(done)
}

/// Retires the old file once its copy is in place; if it changed meanwhile, the copy is
/// stale: the old file stays (or comes back) under its name and the copy goes.
fn retire_old(
    original: Original,
    retire: Retire,
    target: &Path,
    sha256: &str,
    stamp: &str,
    done: &mut Done,
) -> std::io::Result<()> {
    let path = original.path.clone();
    let stale =
        |original: &Original| -> std::io::Result<bool> { Ok(original.now()? != original.stamp) };
    let identical = || -> std::io::Result<bool> {
        let bytes = std::fs::read(&path)?;
        Ok(crate::ids::sha256_hex_bytes(&bytes) == sha256)
    };
    let retire = match retire {
        // Deleted only when the copy holds the same bytes; a converted copy keeps it.
        Retire::Delete if !identical()? => Retire::Backup,
        r => r,
    };
    let (aside, keep_aside) = match retire {
        Retire::Keep => {
            if stale(&original)? {
                remove_copy(target, sha256);
                return Err(changed(
                    &path,
                    ReplaceError::Changed(replace::CHANGED.into()),
                ));
            }
            return Ok(());
        }
        Retire::Backup => (backup_name(&path, stamp), true),
        Retire::Delete => (crate::io::temp::temp_name_beside(&path, "retired"), false),
    };
    // Another sessiontool process replacing the file (a repair) does its checks and renames
    // under the same lock: one of the two sees the other's change.
    let checked = original.lock().and_then(|()| original.check_unchanged());
    if let Err(e) = checked {
        // The copy was made from what is no longer the file: it goes, the file stays.
        remove_copy(target, sha256);
        return Err(changed(&path, e));
    }
    std::fs::rename(&path, &aside)?;
    // Nobody can open the file by its name any more, but a tool that opened it just before
    // (to append a line and close it) may still write: anyone who holds it open for writing
    // now puts it back. One who closed it since wrote before closing, which the check of its
    // stamp below sees. (A loaded machine stopped such a tool between its open and its write
    // long enough for the write to land in the deleted file.)
    let holders = crate::io::writers::holders(&aside);
    // The name may have been given to another file in the instant before the rename (a
    // repair's atomic replace puts its file there and keeps the old one as its backup): what
    // was moved aside is then that file, not the one read.
    let ours = Stamp::of(&aside).is_ok_and(|s| s.same_file(&original.stamp));
    if !holders.is_empty() || !ours || stale(&original)? {
        // Written to, held or replaced in the instant before the rename: put it back, drop
        // the copy.
        std::fs::rename(&aside, &path)?;
        remove_copy(target, sha256);
        crate::io::sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        let why = match holders.is_empty() {
            true => ReplaceError::Changed(replace::CHANGED.into()),
            false => ReplaceError::Busy(format!(
                "{} has the file open for writing (is a tool still running in this session?); nothing was changed",
                crate::io::writers::describe(&holders)
            )),
        };
        return Err(changed(&path, why));
    }
    if keep_aside {
        done.backup = Some(aside);
    } else {
        std::fs::remove_file(&aside)?;
        done.deleted = true;
    }
    crate::io::sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Removes a copy that turned out stale, if it is still the one written.
fn remove_copy(target: &Path, sha256: &str) {
    if std::fs::read(target).is_ok_and(|b| crate::ids::sha256_hex_bytes(&b) == sha256) {
        let _ = std::fs::remove_file(target);
    }
}

fn verify(target: &Path, sha256: &str) -> std::io::Result<()> {
    let written = std::fs::read(target)?;
    if crate::ids::sha256_hex_bytes(&written) != sha256 {
        return Err(std::io::Error::other(format!(
            "{} does not read back as written",
            target.display()
        )));
    }
    Ok(())
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
    replace::fresh_name(path, None, "bak", stamp)
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

    fn old(path: &Path, retire: Retire) -> Old<'_> {
        Old {
            path,
            read: Stamp::of(path).unwrap(),
            retire,
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

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
        let old_file = dir.path().join("old.jsonl");
        let same = dir.path().join("same.jsonl");
        std::fs::write(&old_file, "old\n").unwrap();
        std::fs::write(&same, "before\n").unwrap();
        let mut txn = Txn::new("S");
        txn.stage(
            &dir.path().join("n/new.jsonl"),
            b"new\n",
            Some(old(&old_file, Retire::Backup)),
        )
        .unwrap();
        txn.stage(&same, b"after\n", Some(old(&same, Retire::Backup)))
            .unwrap();
        let done = txn.commit().unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(
            std::fs::read(dir.path().join("n/new.jsonl")).unwrap(),
            b"new\n"
        );
        assert!(!old_file.exists());
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

    #[test]
    fn an_old_file_written_to_after_it_was_read_is_not_retired() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("a.jsonl");
        std::fs::write(&from, "1\n").unwrap();
        let read = old(&from, Retire::Backup);
        // A tool appends after the planner read the file.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&from)
            .unwrap()
            .write_all(b"2\n")
            .unwrap();
        let mut txn = Txn::new("S");
        let err = txn
            .stage(&dir.path().join("b.jsonl"), b"1\n", Some(read))
            .unwrap_err();
        assert!(err.to_string().contains("changed"), "{err}");
        drop(txn);
        assert_eq!(names(dir.path()), ["a.jsonl"]);
        assert_eq!(std::fs::read(&from).unwrap(), b"1\n2\n");
    }

    #[test]
    fn a_change_between_staging_and_commit_stops_the_commit_before_any_rename() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        let b = dir.path().join("b.jsonl");
        std::fs::write(&a, "a\n").unwrap();
        std::fs::write(&b, "b\n").unwrap();
        let mut txn = Txn::new("S");
        txn.stage(
            &dir.path().join("A.jsonl"),
            b"a\n",
            Some(old(&a, Retire::Backup)),
        )
        .unwrap();
        txn.stage(
            &dir.path().join("B.jsonl"),
            b"b\n",
            Some(old(&b, Retire::Backup)),
        )
        .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&b)
            .unwrap()
            .write_all(b"late\n")
            .unwrap();
        let (done, err) = txn.commit().unwrap_err();
        assert!(done.is_empty());
        assert!(err.to_string().contains("changed"), "{err}");
        assert_eq!(names(dir.path()), ["a.jsonl", "b.jsonl"]);
    }

    #[test]
    fn a_move_deletes_only_an_identical_copy_and_keeps_a_converted_ones_original() {
        let dir = tempfile::tempdir().unwrap();
        let same = dir.path().join("same.json");
        let converted = dir.path().join("conv.json");
        std::fs::write(&same, "{}").unwrap();
        std::fs::write(&converted, "{\"legacy\":1}").unwrap();
        let mut txn = Txn::new("S");
        txn.stage(
            &dir.path().join("n/same.json"),
            b"{}",
            Some(old(&same, Retire::Delete)),
        )
        .unwrap();
        txn.stage(
            &dir.path().join("n/conv.jsonl"),
            b"{\"new\":1}\n",
            Some(old(&converted, Retire::Delete)),
        )
        .unwrap();
        let done = txn.commit().unwrap();
        assert!(done[0].deleted && done[0].backup.is_none());
        assert!(!done[1].deleted);
        assert_eq!(
            std::fs::read(done[1].backup.as_ref().unwrap()).unwrap(),
            b"{\"legacy\":1}"
        );
        assert_eq!(names(dir.path()), ["conv.json.bak-S", "n"]);
    }

    #[test]
    fn a_file_held_open_for_writing_is_not_moved() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("a.jsonl");
        std::fs::write(&from, "1\n").unwrap();
        let writer = crate::io::writers::OtherProcess::holding(&from, true);
        let mut txn = Txn::new("S");
        let err = txn
            .stage(
                &dir.path().join("b.jsonl"),
                b"1\n",
                Some(old(&from, Retire::Backup)),
            )
            .unwrap_err();
        drop(writer);
        assert!(err.to_string().contains("open for writing"), "{err}");
    }

    #[test]
    fn a_registry_is_committed_under_its_lock_and_a_change_made_meanwhile_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let registry = dir.path().join("projects.json");
        std::fs::write(&registry, "{\"projects\":{}}").unwrap();
        let planned = old(&registry, Retire::Backup);
        // Another writer holds the lock, adds its entry, then lets go.
        let held = FileLock::acquire(&registry).unwrap();
        let mut txn = Txn::new("S");
        txn.stage(&registry, b"{\"projects\":{\"/a\":\"a\"}}", Some(planned))
            .unwrap();
        txn.lock_for_commit(&registry);
        let other = {
            let registry = registry.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(200));
                std::fs::write(&registry, "{\"projects\":{\"/b\":\"b\"}}").unwrap();
                held.release().unwrap();
            })
        };
        let (done, err) = txn.commit().unwrap_err();
        other.join().unwrap();
        assert!(done.is_empty());
        assert!(err.to_string().contains("changed"), "{err}");
        // The other writer's entry is there; the lock is gone.
        assert_eq!(
            std::fs::read(&registry).unwrap(),
            b"{\"projects\":{\"/b\":\"b\"}}"
        );
        assert_eq!(names(dir.path()), ["projects.json"]);
    }
}
