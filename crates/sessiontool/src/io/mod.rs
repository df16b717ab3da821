//! Careful file output: write to a temp file in the target's folder, fsync, rename over, fsync
//! the folder. A reader never sees a half-written file, and a crash leaves the old file whole.

pub mod replace;
pub(crate) mod sqlite;
pub mod temp;
pub mod walk;
pub mod writers;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use temp::{clear_stale_temps, is_own_file, temp_beside, temp_for_new};

/// Writes `bytes` to `path` atomically. With `overwrite` false an existing file is an error
/// (`AlreadyExists`), checked again at the moment of the rename so a racing writer is not lost.
/// With `overwrite` the old file is replaced without a backup: only for files whose content
/// the caller has just read and carried into `bytes` (registries, under their lock) or
/// regenerates (manual pages). Outputs that may replace a user's file go through
/// [`write_output`].
///
/// A new file gets mode 0666 less the umask, as any program's new file; a file replaced keeps
/// its mode, owner and group.
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> io::Result<()> {
    write_atomic_with(path, overwrite, |mut f| f.write_all(bytes))
}

/// [`write_atomic`], with `fill` writing the content into the temp file (what it returns is
/// returned; an error leaves no file).
pub fn write_atomic_with<T>(
    path: &Path,
    overwrite: bool,
    fill: impl FnOnce(&fs::File) -> io::Result<T>,
) -> io::Result<T> {
    let dir = folder_of(path);
    let existing = match fs::symlink_metadata(path) {
        Ok(_) if !overwrite => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists", path.display()),
            ));
        }
        Ok(meta) if meta.file_type().is_symlink() => return Err(link_refused(path)),
        Ok(meta) if meta.is_dir() => return Err(is_a_folder(path)),
        // Its mode is read from it: a FIFO or device is refused, never opened to block.
        Ok(_) => Some(crate::regular_file::open(path)?),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            check_folder(path)?;
            None
        }
        Err(e) => return Err(e),
    };
    let tmp = match &existing {
        Some(old) => {
            let tmp = temp_beside(path, "write")?;
            replace::same_owner_and_mode(tmp.as_file(), old)?;
            tmp
        }
        None => temp_for_new(path, "write")?,
    };
    let done = fill(tmp.as_file())?;
    crate::fault::point("write.temp-written")?;
    tmp.as_file().sync_all()?;
    crate::fault::point("write.before-rename")?;
    if overwrite {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        // persist_noclobber refuses if the target appeared meanwhile.
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    crate::fault::point("write.after-rename")?;
    sync_dir(dir)?;
    Ok(done)
}

/// Writes an output file atomically; an existing file is replaced only when `force` is set,
/// and then it is kept as `<name>.bak-<stamp>` (its inode, hard-linked: see [`replace`]).
/// Returns the backup's path when one was made.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> io::Result<Option<PathBuf>> {
    write_output_with(path, force, |mut f| f.write_all(bytes)).map(|((), backup)| backup)
}

/// [`write_output`], with `fill` writing the content into the temp file (streamed outputs);
/// returns what `fill` returned and the backup's path when one was made.
pub fn write_output_with<T>(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&fs::File) -> io::Result<T>,
) -> io::Result<(T, Option<PathBuf>)> {
    if !check_output(path, force)? {
        let done = write_atomic_with(path, false, fill)?;
        return Ok((done, None));
    }
    let original = replace::Original::open_now(path)?;
    let tmp = temp_beside(path, "write")?;
    let done = fill(tmp.as_file())?;
    crate::fault::point("write.temp-written")?;
    tmp.as_file().sync_all()?;
    let stamp = crate::repair::now_stamp();
    let options = replace::Options {
        backup: replace::Backup::Keep {
            dir: None,
            stamp: &stamp,
        },
        allow_writers: false,
        points: [
            "write.before-backup",
            "write.before-rename",
            "write.after-rename",
        ],
    };
    let replaced = replace::replace(original, tmp, &options).map_err(|e| match e {
        replace::ReplaceError::Io(e) => e,
        other => io::Error::other(format!("{}: {other}", path.display())),
    })?;
    let backup = replaced.finish()?;
    Ok((done, backup))
}

/// Whether [`write_output`] may write `path` (without writing anything: a dry run asks this):
/// `Ok(false)` when it is new, `Ok(true)` when it exists and `force` lets it be replaced (kept
/// as a backup). Refused: a file that exists without `force` (`AlreadyExists`), a folder, a
/// symbolic link or another special file, a folder that does not exist.
pub fn check_output(path: &Path, force: bool) -> io::Result<bool> {
    if names_a_folder(path) {
        return Err(is_a_folder(path));
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => check_folder(path).map(|()| false),
        Err(e) => Err(e),
        Ok(meta) if meta.is_dir() => Err(is_a_folder(path)),
        Ok(_) if !force => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", path.display()),
        )),
        Ok(meta) if meta.file_type().is_symlink() => Err(link_refused(path)),
        Ok(meta) if !meta.file_type().is_file() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file; not replaced", path.display()),
        )),
        Ok(_) => Ok(true),
    }
}

/// The folder a new file goes into must be there: said in words, not as the temp file's
/// name that the creation of the temp file would report.
fn check_folder(path: &Path) -> io::Result<()> {
    let dir = folder_of(path);
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a folder", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the folder {} does not exist", dir.display()),
        )),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("cannot use the folder {}: {e}", dir.display()),
        )),
    }
}

/// An output named as a folder (one that is, or a name ending in `/`): the session would
/// need a file name.
fn is_a_folder(path: &Path) -> io::Error {
    let what = if names_a_folder(path) && !path.is_dir() {
        "names a folder, not a file"
    } else {
        "is a folder"
    };
    io::Error::new(
        io::ErrorKind::IsADirectory,
        format!(
            "{} {what}; name the file to write (a folder is the output only when the input is one)",
            path.display()
        ),
    )
}

/// Whether the name itself says folder: `out/`, `out/.`, `out/..`.
fn names_a_folder(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    text.ends_with(b"/")
        || matches!(
            path.components().next_back(),
            Some(std::path::Component::CurDir | std::path::Component::ParentDir)
        )
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Reads a file with the stamp of what was read (inode, size, time), so that a later change
/// can be told. A file that changed while it was read is an error: read it again.
pub fn read_stamped(path: &Path) -> io::Result<(Vec<u8>, crate::check::Stamp)> {
    use std::io::Read;
    let mut file = crate::regular_file::open(path)?;
    let before = crate::check::Stamp::of_file(&file)?;
    let mut bytes = Vec::with_capacity(before.len as usize);
    file.read_to_end(&mut bytes)?;
    let after = crate::check::Stamp::of_file(&file)?;
    if before != after || bytes.len() as u64 != after.len {
        return Err(io::Error::other(format!(
            "{} changed while it was read (is a tool still writing it?)",
            path.display()
        )));
    }
    Ok((bytes, after))
}

/// A symbolic link where a file is to be replaced: a rename would put a regular file in its
/// place and leave the file it points to as it was.
fn link_refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link; sessiontool does not replace links (write to the file it points to, or remove the link)",
            path.display()
        ),
    )
}

/// Creates the folder `dir` and its missing parents, as `mkdir -p` does, for backups: each
/// folder it makes is made by `create_dir` (never through something already at that name) and
/// checked to be a real folder afterwards, so a symbolic link put in its place meanwhile (to
/// steer backups elsewhere) is refused, not followed. Folders that already exist are taken
/// as they are (a user's own links among them); `dir` itself must be a folder.
pub fn create_dir_checked(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(p) = at {
        if p.as_os_str().is_empty() || std::fs::symlink_metadata(p).is_ok() {
            break;
        }
        missing.push(p);
        at = p.parent();
    }
    for p in missing.into_iter().rev() {
        match std::fs::create_dir(p) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let made = std::fs::symlink_metadata(p)?;
        if !made.file_type().is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a folder (something else took its name while it was being made)",
                p.display()
            )));
        }
    }
    if !std::fs::metadata(dir)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a folder", dir.display()),
        ));
    }
    Ok(())
}

/// Makes a rename durable: fsync the folder that holds the new name.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn create_dir_checked_makes_parents_and_refuses_what_is_not_a_folder() {
        let top = tempfile::tempdir().unwrap();
        let wanted = top.path().join("made/bk");
        super::create_dir_checked(&wanted).unwrap();
        assert!(wanted.is_dir());
        super::create_dir_checked(&wanted).unwrap();
        let file = top.path().join("f");
        std::fs::write(&file, b"").unwrap();
        assert!(super::create_dir_checked(&file).is_err());
        assert!(super::create_dir_checked(&file.join("below")).is_err());
        // A folder that exists already through a link (a user's own) is taken as it is.
        let elsewhere = top.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = top.path().join("link");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(
            super::create_dir_checked(&link).is_ok(),
            "an existing folder (a user's link) is taken"
        );
    }

    use super::*;

    #[test]
    fn writes_and_refuses_to_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one", false).unwrap();
        let err = write_atomic(&p, b"two", false).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&p).unwrap(), b"one");
        write_atomic(&p, b"two", true).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // No temp files left behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
