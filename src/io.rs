//! Careful file output: write to a temp file in the target's folder, fsync, rename over, fsync
//! the folder. A reader never sees a half-written file, and a crash leaves the old file whole.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically. With `overwrite` false an existing file is an error
/// (`AlreadyExists`), checked again at the moment of the rename so a racing writer is not lost.
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !overwrite && path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", path.display()),
        ));
    }
    let mut tmp = temp_beside(path, "write")?;
    tmp.write_all(bytes)?;
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
    sync_dir(dir)
}

/// A temp file beside `target` that names its purpose and this process:
/// `.<name>.<pid>.<random>.<purpose>.tmp`. Temp files that a process which no longer runs left
/// beside `target` (it crashed or was killed) are removed first, so a rerun leaves none.
pub fn temp_beside(target: &Path, purpose: &str) -> io::Result<tempfile::NamedTempFile> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    clear_stale_temps(dir);
    tempfile::Builder::new()
        .prefix(&format!(".{name}.{}.", std::process::id()))
        .suffix(&format!(".{purpose}.tmp"))
        .tempfile_in(dir)
}

/// Removes the temp files in `dir` (`.<name>.<pid>.<random>.<purpose>.tmp`) whose process
/// is gone.
pub fn clear_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(temp_owner) else {
            continue;
        };
        if !process_alive(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The process id in a temp file name of ours.
fn temp_owner(file: &str) -> Option<u32> {
    if !file.starts_with('.') {
        return None;
    }
    // From the end: "tmp", the purpose, the random part, then ".<name>.<pid>".
    let mut parts = file.rsplitn(4, '.');
    let (tmp, _purpose, _random, rest) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if tmp != "tmp" {
        return None;
    }
    rest.rsplit('.').next()?.parse().ok()
}

/// Whether a process with this id runs (on other systems: assume it does, keep its files).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        if pid == std::process::id() {
            return true;
        }
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether a file name is one sessiontool writes beside sessions: a backup (`.bak-<time>`), a
/// torn-tail sidecar (`.torn-<time>`) or a temp file (`.<name>.<pid>.<random>.<purpose>.tmp`).
pub fn is_own_file(name: &str) -> bool {
    name.contains(".bak-")
        || name.contains(".torn-")
        || (name.starts_with('.') && name.ends_with(".tmp"))
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
    use super::*;

    #[test]
    fn temp_names_carry_their_process() {
        assert_eq!(temp_owner(".s.jsonl.4242.AbC123.repair.tmp"), Some(4242));
        assert_eq!(temp_owner("..project_root.17.x1y2z3.stage.tmp"), Some(17));
        assert_eq!(temp_owner(".s.jsonl.AbC123.tmp"), None);
        assert_eq!(temp_owner("s.jsonl"), None);
    }

    #[test]
    fn temp_files_of_dead_processes_are_cleared_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // No process has an id beyond Linux's largest pid_max (2^22).
        let dead = dir.path().join(".a.jsonl.4194400.xyz.write.tmp");
        fs::write(&dead, "x").unwrap();
        let mine = temp_beside(&dir.path().join("b.jsonl"), "write").unwrap();
        clear_stale_temps(dir.path());
        assert!(!dead.exists());
        assert!(mine.path().exists());
    }

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
