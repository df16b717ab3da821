//! Replacing a file that a tool may still be writing, without losing what it writes.
//!
//! The old file is never copied aside: its inode itself becomes the backup, by a hard link
//! made before the new file is renamed over the name. A tool that keeps the old file open
//! (and appends through that descriptor) therefore writes into the backup, never into an
//! unlinked inode; the caller holds the old file open too, sees what arrived after the
//! replacement, and carries it over (append-only files) or puts the old file back (whole
//! documents). Before anything is replaced: no other process may hold the file open for
//! writing (unless the caller allows it), and the file must still be the one that was read
//! (same inode, size and time). The new file gets the old one's mode, owner and group.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use crate::check::Stamp;

use super::temp::temp_name_beside;
use super::writers;

/// What becomes of the old file.
#[derive(Debug, Clone, Copy)]
pub enum Backup<'a> {
    /// Kept as `<name>.<stamp-suffix>` beside it, or in `dir` (`<name>.bak-<stamp>`).
    Keep {
        dir: Option<&'a Path>,
        stamp: &'a str,
    },
    /// Not kept (the user asked): linked under a temp name only until [`Replaced::finish`].
    Drop,
}

#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    pub backup: Backup<'a>,
    /// Replace even while another process holds the file open for writing (`--force`).
    pub allow_writers: bool,
    /// Fault points (see `crate::fault`): before the backup, before and after the rename.
    pub points: [&'static str; 3],
}

#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// The file is not as it was read: nothing was changed.
    #[error("{0}")]
    Changed(String),
    /// Another process holds it open for writing: nothing was changed.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

pub const CHANGED: &str =
    "the file changed since it was read (is a tool still writing it?); nothing was changed";

/// How long [`Original::lock`] waits for another sessiontool process to finish with a file.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The file about to be replaced, held open since it was found as it was read.
#[derive(Debug)]
pub struct Original {
    pub path: PathBuf,
    pub file: File,
    /// The file as it was read.
    pub stamp: Stamp,
}

impl Original {
    /// Opens `path`, which must still be the file `stamp` describes.
    pub fn open(path: &Path, stamp: &Stamp) -> Result<Original, ReplaceError> {
        let original = Original {
            path: path.to_path_buf(),
            file: crate::regular_file::open(path)?,
            stamp: *stamp,
        };
        original.check_unchanged()?;
        Ok(original)
    }

    /// Opens `path` as it is now.
    pub fn open_now(path: &Path) -> io::Result<Original> {
        let file = crate::regular_file::open(path)?;
        let stamp = Stamp::of_file(&file)?;
        Ok(Original {
            path: path.to_path_buf(),
            file,
            stamp,
        })
    }

    /// The old inode as it is now (it may have grown after its name moved on).
    pub fn now(&self) -> io::Result<Stamp> {
        Stamp::of_file(&self.file)
    }

    /// Takes sessiontool's exclusive lock on the file (the inode read, held until this value
    /// drops), so that two sessiontool processes replacing, moving or retiring it (`repair`
    /// and `relocate`, say) do their last checks and renames one after the other: the second
    /// then sees the first one's change. Waits up to [`LOCK_WAIT`] for another holder; where
    /// the file system has no locks, the stamp checks still hold on their own.
    pub fn lock(&self) -> Result<(), ReplaceError> {
        let start = std::time::Instant::now();
        loop {
            match self.file.try_lock() {
                Ok(()) => return Ok(()),
                Err(fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(ReplaceError::Changed(format!(
                        "another process has held {} locked for {} s; nothing was changed, try again",
                        self.path.display(),
                        LOCK_WAIT.as_secs()
                    )));
                }
                // No locks here (some network file systems): the stamps decide alone.
                Err(fs::TryLockError::Error(_)) => return Ok(()),
            }
        }
    }

    /// The name still names this file and the file is as it was read.
    pub fn check_unchanged(&self) -> Result<(), ReplaceError> {
        let named = Stamp::of(&self.path)?;
        if !named.same_file(&self.stamp) || self.now()? != self.stamp {
            return Err(ReplaceError::Changed(CHANGED.into()));
        }
        Ok(())
    }

    /// Refuses when another process holds the file open for writing.
    pub fn check_no_writers(&self) -> Result<(), ReplaceError> {
        let holders = writers::holders(&self.path);
        if holders.is_empty() {
            return Ok(());
        }
        Err(ReplaceError::Busy(format!(
            "{} has the file open for writing (is a tool still running in this session?); nothing was changed",
            writers::describe(&holders)
        )))
    }
}

/// A replacement made; the old file is still reachable until [`Replaced::finish`].
#[derive(Debug)]
pub struct Replaced {
    pub original: Original,
    /// The backup, when one is kept.
    pub backup: Option<PathBuf>,
    /// A link to the old inode in the file's folder (the backup itself when it is beside the
    /// file; a temp name otherwise); `None` where the file system has no hard links.
    keeper: Option<PathBuf>,
    /// Whether `keeper` is a temp name to remove when done.
    keeper_is_temp: bool,
    /// The new file.
    pub new: Stamp,
}

impl Replaced {
    /// Where the old inode can be read by name, if anywhere.
    pub fn keeper(&self) -> Option<&Path> {
        self.keeper.as_deref()
    }

    /// The backup is a copy, not the old inode: what the old file gains must be added to it.
    pub fn backup_is_copy(&self) -> bool {
        self.backup.is_some() && self.backup.as_deref() != self.keeper.as_deref()
    }

    /// Keeps the old file as a backup after all (a tool still writes to it, so it cannot go
    /// although no backup was asked for).
    pub fn keep(&mut self, stamp: &str) -> io::Result<()> {
        if self.keeper_is_temp
            && let Some(k) = &self.keeper
        {
            let name = fresh_name(&self.original.path, None, "bak", stamp);
            fs::rename(k, &name)?;
            super::sync_dir(folder_of(&name))?;
            self.keeper = Some(name.clone());
            self.keeper_is_temp = false;
            if self.backup.is_none() {
                self.backup = Some(name);
            }
        }
        Ok(())
    }

    /// Ends the replacement: a temp link to the old inode goes.
    pub fn finish(self) -> io::Result<Option<PathBuf>> {
        if self.keeper_is_temp
            && let Some(k) = &self.keeper
        {
            fs::remove_file(k)?;
        }
        Ok(self.backup)
    }

    /// Puts the old file back under its name (it changed while it was replaced, so the new
    /// file is out of date), unless something else replaced the new file meanwhile. The
    /// backup name goes with it, so the folder is as it was before.
    pub fn undo(self) -> io::Result<()> {
        let path = &self.original.path;
        if !Stamp::of(path)?.same_file(&self.new) {
            return Err(io::Error::other(format!(
                "{} was replaced again by another program; left as it is",
                path.display()
            )));
        }
        match &self.keeper {
            Some(keeper) => fs::rename(keeper, path)?,
            None => {
                // No link: write the old inode's bytes back through a temp file.
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut (&self.original.file), &mut bytes)?;
                super::write_atomic(path, &bytes, true)?;
            }
        }
        if self.backup_is_copy()
            && let Some(b) = &self.backup
        {
            fs::remove_file(b)?;
        }
        super::sync_dir(folder_of(path))
    }
}

/// Replaces `original` by `temp` (already written and synced): checks, backup, owner and
/// mode, rename, folder sync. On an error nothing was replaced and no backup is left.
pub fn replace(
    original: Original,
    temp: tempfile::NamedTempFile,
    options: &Options,
) -> Result<Replaced, ReplaceError> {
    let [before_backup, before_rename, after_rename] = options.points;
    if !options.allow_writers {
        original.check_no_writers()?;
    }
    original.lock()?;
    original.check_unchanged()?;
    crate::fault::point(before_backup)?;
    let (keeper, keeper_is_temp, backup) = keep_old(&original, options.backup)?;
    let mut undo_backup = Cleanup(
        [keeper.clone().filter(|_| keeper_is_temp), backup.clone()]
            .into_iter()
            .flatten()
            .collect(),
    );
    // A keeper link must be the inode that was read, not a file that replaced it meanwhile.
    if let Some(k) = &keeper
        && !Stamp::of(k)?.same_file(&original.stamp)
    {
        return Err(ReplaceError::Changed(CHANGED.into()));
    }
    same_owner_and_mode(temp.as_file(), &original.file)?;
    crate::fault::point(before_rename)?;
    original.check_unchanged()?;
    let new = Stamp::of_file(temp.as_file())?;
    temp.persist(&original.path).map_err(|e| e.error)?;
    undo_backup.0.clear();
    crate::fault::point(after_rename)?;
    super::sync_dir(folder_of(&original.path))?;
    Ok(Replaced {
        original,
        backup,
        keeper,
        keeper_is_temp,
        new,
    })
}

/// Makes the old inode reachable: `(keeper link, whether it is a temp name, backup)`.
fn keep_old(
    original: &Original,
    backup: Backup,
) -> io::Result<(Option<PathBuf>, bool, Option<PathBuf>)> {
    let path = &original.path;
    match backup {
        Backup::Keep { dir: None, stamp } => {
            let name = fresh_name(path, None, "bak", stamp);
            match fs::hard_link(path, &name) {
                Ok(()) => {
                    super::sync_dir(folder_of(path))?;
                    Ok((Some(name.clone()), false, Some(name)))
                }
                Err(e) if no_links(&e) => {
                    copy_backup(&original.file, &name)?;
                    Ok((None, false, Some(name)))
                }
                Err(e) => Err(e),
            }
        }
        Backup::Keep {
            dir: Some(dir),
            stamp,
        } => {
            let keeper = temp_link(path)?;
            let name = fresh_name(path, Some(dir), "bak", stamp);
            let made = match fs::hard_link(path, &name) {
                Ok(()) => super::sync_dir(dir),
                // Another file system (or no links there): a copy, written as every output.
                Err(e) if no_links(&e) || e.raw_os_error() == Some(libc::EXDEV) => {
                    copy_backup(&original.file, &name)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = made {
                if let Some(k) = &keeper {
                    let _ = fs::remove_file(k);
                }
                return Err(e);
            }
            Ok((keeper.clone(), keeper.is_some(), Some(name)))
        }
        Backup::Drop => {
            let keeper = temp_link(path)?;
            Ok((keeper.clone(), keeper.is_some(), None))
        }
    }
}

/// A hard link to `path` under a temp name beside it; `None` where links are not supported.
fn temp_link(path: &Path) -> io::Result<Option<PathBuf>> {
    let name = temp_name_beside(path, "orig");
    match fs::hard_link(path, &name) {
        Ok(()) => Ok(Some(name)),
        Err(e) if no_links(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

fn no_links(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM) | Some(libc::EOPNOTSUPP) | Some(libc::EMLINK)
    )
}

/// A backup copied from the open old file: temp, fsync, rename (never over a file), so a
/// crash or a full disk never leaves half a backup.
pub fn copy_backup(from: &File, to: &Path) -> io::Result<()> {
    let mut temp = super::temp_beside(to, "backup")?;
    let mut reader = from.try_clone()?;
    io::Seek::seek(&mut reader, io::SeekFrom::Start(0))?;
    io::copy(&mut reader, temp.as_file_mut())?;
    same_owner_and_mode(temp.as_file(), from)?;
    temp.as_file().sync_all()?;
    temp.persist_noclobber(to).map_err(|e| e.error)?;
    super::sync_dir(folder_of(to))
}

/// `to` gets the permissions, owner and group of `from` (the owner only where this process
/// may give it: as root, or when it is ours already).
pub fn same_owner_and_mode(to: &File, from: &File) -> io::Result<()> {
    let meta = from.metadata()?;
    to.set_permissions(meta.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let now = to.metadata()?;
        if (now.uid(), now.gid()) != (meta.uid(), meta.gid()) {
            match std::os::unix::fs::fchown(to, Some(meta.uid()), Some(meta.gid())) {
                Ok(()) => {}
                // Not ours to give: the file stays ours, as any file we write.
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
                Err(e) => return Err(e),
            }
            // chown clears set-id bits: put the mode back.
            to.set_permissions(meta.permissions())?;
        }
    }
    Ok(())
}

/// A path beside `path` (or in `dir`) named `<name>.<what>-<stamp>` that does not exist yet.
pub fn fresh_name(path: &Path, dir: Option<&Path>, what: &str, stamp: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = dir.unwrap_or_else(|| folder_of(path));
    let mut candidate = dir.join(format!("{name}.{what}-{stamp}"));
    let mut n = 1;
    while fs::symlink_metadata(&candidate).is_ok() {
        candidate = dir.join(format!("{name}.{what}-{stamp}-{n}"));
        n += 1;
    }
    candidate
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Files made for a replacement that did not happen, removed on the way out.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const POINTS: [&str; 3] = [
        "repair.before-backup",
        "repair.before-rename",
        "repair.after-rename",
    ];

    fn options(backup: Backup) -> Options {
        Options {
            backup,
            allow_writers: false,
            points: POINTS,
        }
    }

    /// Backups beside the file, stamped `S`.
    fn beside() -> Options<'static> {
        options(Backup::Keep {
            dir: None,
            stamp: "S",
        })
    }

    fn temp_with(path: &Path, bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut t = super::super::temp_beside(path, "test").unwrap();
        t.write_all(bytes).unwrap();
        t
    }

    #[test]
    fn the_old_inode_becomes_the_backup_so_late_appends_land_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        // A tool that keeps its descriptor.
        let mut tool = fs::OpenOptions::new().append(true).open(&path).unwrap();
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"A\n");
        let mut o = beside();
        o.allow_writers = true;
        let done = replace(original, temp, &o).unwrap();
        tool.write_all(b"late\n").unwrap();
        let backup = done.backup.clone().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"A\n");
        assert_eq!(fs::read(&backup).unwrap(), b"a\nlate\n");
        assert_eq!(done.original.now().unwrap().len, 7);
        assert_eq!(done.finish().unwrap(), Some(backup));
    }

    #[test]
    fn a_file_open_for_writing_elsewhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        let writer = super::super::writers::OtherProcess::holding(&path, true);
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"A\n");
        let err = replace(original, temp, &beside()).unwrap_err();
        drop(writer);
        assert!(matches!(err, ReplaceError::Busy(_)), "{err}");
        assert!(err.to_string().contains("open for writing"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"a\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_file_changed_after_it_was_read_is_refused_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        let original = Original::open_now(&path).unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"b\n")
            .unwrap();
        let temp = temp_with(&path, b"A\n");
        let err = replace(original, temp, &beside()).unwrap_err();
        assert!(matches!(err, ReplaceError::Changed(_)), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"a\nb\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn undo_puts_the_old_file_back_and_takes_the_backup_name_away() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        fs::write(&path, "{\"old\":1}").unwrap();
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"{\"new\":1}");
        let done = replace(original, temp, &beside()).unwrap();
        done.undo().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"old\":1}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn without_a_backup_the_temp_link_goes_when_done() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"A\n");
        let done = replace(original, temp, &options(Backup::Drop)).unwrap();
        assert!(done.keeper().is_some());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
        assert_eq!(done.finish().unwrap(), None);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_backup_in_another_folder_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let backups = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"A\n");
        let done = replace(
            original,
            temp,
            &options(Backup::Keep {
                dir: Some(backups.path()),
                stamp: "S",
            }),
        )
        .unwrap();
        let backup = done.finish().unwrap().unwrap();
        assert!(backup.starts_with(backups.path()));
        assert_eq!(fs::read(&backup).unwrap(), b"a\n");
        // Only the new file is left beside it: the temp link went.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_new_file_keeps_mode_and_group() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let before = fs::metadata(&path).unwrap();
        let original = Original::open_now(&path).unwrap();
        let temp = temp_with(&path, b"A\n");
        replace(original, temp, &options(Backup::Drop))
            .unwrap()
            .finish()
            .unwrap();
        let after = fs::metadata(&path).unwrap();
        assert_eq!(after.permissions().mode() & 0o7777, 0o640);
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }
}
