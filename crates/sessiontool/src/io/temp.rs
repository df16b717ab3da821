//! Temp files beside their targets, named so that they can be told from every other file:
//! `.<name>.sessiontool-<pid>-<random>.<purpose>.tmp`. While one exists, the process writing
//! it holds an exclusive lock on it; a rerun removes only files of that exact shape whose
//! process is gone and whose lock nobody holds. A user's `.notes.31999.draft.final.tmp`, or
//! anything else not provably ours, is never touched.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

/// The mark in every temp file name of ours.
const MARK: &str = "sessiontool-";

/// A temp file beside `target` that names its purpose and this process, locked while it
/// lives. Stale temp files of ours in that folder (their process died) are removed first, so
/// a rerun leaves none.
/// Only this process's user may read it (mode 0600): the caller gives it the mode of the
/// file it replaces, or see [`temp_for_new`].
pub fn temp_beside(target: &Path, purpose: &str) -> io::Result<tempfile::NamedTempFile> {
    temp_with(target, purpose, None)
}

/// A temp file beside `target` for a file that does not exist yet: created with mode 0666
/// less the umask, as any program creates a new file (the kernel applies the umask when it
/// creates the file, so no thread ever changes the process's umask to read it).
pub fn temp_for_new(target: &Path, purpose: &str) -> io::Result<tempfile::NamedTempFile> {
    temp_with(target, purpose, Some(0o666))
}

fn temp_with(
    target: &Path,
    purpose: &str,
    mode: Option<u32>,
) -> io::Result<tempfile::NamedTempFile> {
    debug_assert!(purpose.bytes().all(|b| b.is_ascii_alphanumeric()));
    let dir = folder_of(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    clear_stale_temps(dir);
    let prefix = format!(".{name}.{MARK}{}-", std::process::id());
    let suffix = format!(".{purpose}.tmp");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(&suffix);
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    let temp = builder.tempfile_in(dir)?;
    // Held until the file is closed (or this process dies): a sweep never takes it.
    lock(temp.as_file());
    Ok(temp)
}

/// A name of the temp shape in `dir` that does not exist yet, for a hard link kept while a
/// file is replaced. The caller creates it at once (`link` fails if it appeared meanwhile).
pub fn temp_name_beside(target: &Path, purpose: &str) -> std::path::PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let random = uuid::Uuid::new_v4().simple().to_string();
    folder_of(target).join(format!(
        ".{name}.{MARK}{}-{}.{purpose}.tmp",
        std::process::id(),
        &random[..12]
    ))
}

/// Removes the temp files of ours in `dir` whose process is gone and that nobody holds.
pub fn clear_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(temp_owner) else {
            continue;
        };
        if process_alive(pid) {
            continue;
        }
        let path = entry.path();
        // A regular file (never a link, a FIFO or a folder) that nobody holds locked.
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.file_type().is_file() {
            continue;
        }
        let Ok(opened) = open_nonblocking(&path) else {
            continue;
        };
        if opened.try_lock().is_ok() {
            let _ = fs::remove_file(&path);
        }
    }
}

/// The process id in a temp file name of ours (`None` for any other name).
pub fn temp_owner(file: &str) -> Option<u32> {
    let rest = file.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, purpose) = rest.rsplit_once('.')?;
    if purpose.is_empty() || !purpose.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let (name, ours) = rest.rsplit_once('.')?;
    if name.is_empty() {
        return None;
    }
    let (pid, random) = ours.strip_prefix(MARK)?.split_once('-')?;
    if random.is_empty() || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a file name is one sessiontool writes beside sessions: a backup (`.bak-<time>`), a
/// torn-tail sidecar (`.torn-<time>`) or a temp file (ours, or of an older version:
/// `.<name>....tmp`). fsck and list leave such files out.
pub fn is_own_file(name: &str) -> bool {
    name.contains(".bak-")
        || name.contains(".torn-")
        || (name.starts_with('.') && name.ends_with(".tmp"))
}

fn lock(file: &File) {
    // Where the file system has no locks, the name and the process check still hold.
    let _ = file.try_lock();
}

fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    options.open(path)
}

fn folder_of(target: &Path) -> &Path {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
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
        if pid <= 0 {
            return true;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// No process has an id beyond Linux's largest pid_max (2^22).
    const DEAD: u32 = 4_194_400;

    #[test]
    fn only_names_of_our_shape_carry_a_process() {
        assert_eq!(
            temp_owner(".s.jsonl.sessiontool-4242-AbC123.repair.tmp"),
            Some(4242)
        );
        assert_eq!(
            temp_owner("..project_root.sessiontool-17-x1y2z3.stage.tmp"),
            Some(17)
        );
        // The shapes of earlier versions, and a user's files, are not ours.
        assert_eq!(temp_owner(".s.jsonl.4242.AbC123.repair.tmp"), None);
        assert_eq!(temp_owner(".notes.31999.draft.final.tmp"), None);
        assert_eq!(temp_owner(".notes.sessiontool-31999.draft.tmp"), None);
        assert_eq!(temp_owner(".sessiontool-1-a.x.tmp"), None);
        assert_eq!(temp_owner("s.jsonl"), None);
    }

    #[test]
    fn dead_temps_of_ours_go_and_everything_else_stays() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir
            .path()
            .join(format!(".a.jsonl.sessiontool-{DEAD}-xyz123.write.tmp"));
        let users = [
            ".notes.31999.draft.final.tmp".to_string(),
            format!(".a.jsonl.{DEAD}.xyz.write.tmp"),
            format!("notes.sessiontool-{DEAD}-xyz.write.tmp"),
        ];
        fs::write(&dead, "x").unwrap();
        for u in &users {
            fs::write(dir.path().join(u), "mine").unwrap();
        }
        let mine = temp_beside(&dir.path().join("b.jsonl"), "write").unwrap();
        clear_stale_temps(dir.path());
        assert!(!dead.exists());
        assert!(mine.path().exists());
        for u in &users {
            assert!(dir.path().join(u).exists(), "{u} was removed");
        }
    }

    #[test]
    fn a_temp_whose_lock_is_held_stays_even_if_its_pid_looks_dead() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir
            .path()
            .join(format!(".a.jsonl.sessiontool-{DEAD}-held12.write.tmp"));
        fs::write(&held, "x").unwrap();
        let holder = File::open(&held).unwrap();
        holder.try_lock().unwrap();
        clear_stale_temps(dir.path());
        assert!(held.exists());
        drop(holder);
        clear_stale_temps(dir.path());
        assert!(!held.exists());
    }

    #[test]
    fn temp_names_carry_this_process_and_the_mark() {
        let dir = tempfile::tempdir().unwrap();
        let t = temp_beside(&dir.path().join("s.jsonl"), "repair").unwrap();
        let name = t.path().file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(temp_owner(&name), Some(std::process::id()), "{name}");
        let link = temp_name_beside(&dir.path().join("s.jsonl"), "orig");
        let name = link.file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_owner(name), Some(std::process::id()), "{name}");
        assert!(is_own_file(name));
    }
}
