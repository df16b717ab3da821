//! The rules a repair follows before it touches a file: no live lock, no change since it was
//! checked, a backup first, and an atomic replace that keeps the file's permissions.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::check::Stamp;

/// A lock older than this is stale (llxprt-code's own rule).
const STALE_LOCK: Duration = Duration::from_secs(48 * 3600);

/// The live lock file that says a tool is writing `path`, if there is one. Looks for
/// `<stem>.lock` beside the file (llxprt-code: `<chats>/<sessionId>.lock`, the session id
/// being the file's stem for most tools) holding `{pid, timestamp}`.
pub fn live_lock(path: &Path) -> Option<PathBuf> {
    let lock = path.with_extension("lock");
    let bytes = fs::read(&lock).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let pid = value.get("pid").and_then(serde_json::Value::as_u64);
    let fresh = fs::metadata(&lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_none_or(|age| age < STALE_LOCK);
    let alive = pid.is_none_or(|p| Path::new(&format!("/proc/{p}")).exists());
    (fresh && alive).then_some(lock)
}

/// Refuses when the file is not as it was checked.
pub fn unchanged(path: &Path, stamp: &Stamp) -> io::Result<bool> {
    Ok(Stamp::of(path)? == *stamp)
}

/// A path beside `path` (or in `dir`) named `<name>.<what>-<stamp>` that does not exist yet.
pub fn fresh_name(path: &Path, dir: Option<&Path>, what: &str, stamp: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| parent(path).to_path_buf());
    let mut candidate = dir.join(format!("{name}.{what}-{stamp}"));
    let mut n = 1;
    while candidate.exists() {
        candidate = dir.join(format!("{name}.{what}-{stamp}-{n}"));
        n += 1;
    }
    candidate
}

/// Copies the original to `backup` (never over an existing file) and makes it durable.
pub fn backup(path: &Path, backup: &Path) -> io::Result<()> {
    let mut from = crate::regular_file::open(path)?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(backup)?;
    io::copy(&mut from, &mut to)?;
    to.set_permissions(from.metadata()?.permissions())?;
    to.sync_all()?;
    crate::io::sync_dir(parent(backup))
}

/// Bytes a tool appended to the original file between the last check and the rename (they
/// went to the old file, which the rename took out of the folder) are appended to the new file
/// and to the backup, so nothing appended is lost. When the checked file ended inside a line,
/// that line was still being written: it is carried whole. Returns how many new bytes came.
pub fn carry_over(
    original: &File,
    checked: u64,
    path: &Path,
    backup: Option<&Path>,
) -> io::Result<u64> {
    let mut done = checked;
    // Bounded: a writer that keeps writing to the old file after this has it open still,
    // and its next check (or the next repair) sees the rest.
    for _ in 0..3 {
        let len = original.metadata()?.len();
        if len <= done {
            break;
        }
        let start = if done == checked {
            line_start(original, checked)?
        } else {
            done
        };
        append(path, &read_range(original, start, len)?)?;
        if let Some(b) = backup {
            append(b, &read_range(original, done, len)?)?;
        }
        done = len;
    }
    Ok(done - checked)
}

/// Where the line holding byte `end - 1` starts (`end` when that byte ends a line).
fn line_start(file: &File, end: u64) -> io::Result<u64> {
    let mut pos = end;
    while pos > 0 {
        let from = pos.saturating_sub(64 * 1024);
        let chunk = read_range(file, from, pos)?;
        if pos == end && chunk.last() == Some(&b'\n') {
            return Ok(end);
        }
        if let Some(i) = memchr::memrchr(b'\n', &chunk) {
            return Ok(from + i as u64 + 1);
        }
        pos = from;
    }
    Ok(0)
}

fn read_range(file: &File, from: u64, to: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; (to - from) as usize];
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut buf, from)?;
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file.try_clone()?;
        f.seek(SeekFrom::Start(from))?;
        f.read_exact(&mut buf)?;
    }
    Ok(buf)
}

fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = OpenOptions::new().append(true).open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A tool appended to the old file after the last check; the repaired file replaced it.
    fn replaced_while_appending(before: &str, appended: &str, repaired: &str) -> (String, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, before).unwrap();
        let original = File::open(&path).unwrap();
        let mut tool = OpenOptions::new().append(true).open(&path).unwrap();
        tool.write_all(appended.as_bytes()).unwrap();
        let new = dir.path().join("new");
        fs::write(&new, repaired).unwrap();
        fs::rename(&new, &path).unwrap();
        let n = carry_over(&original, before.len() as u64, &path, None).unwrap();
        (fs::read_to_string(&path).unwrap(), n)
    }

    #[test]
    fn appends_that_went_to_the_old_file_are_carried_over() {
        assert_eq!(
            replaced_while_appending("a\nb\n", "c\n", "A\nB\n"),
            ("A\nB\nc\n".into(), 2)
        );
        assert_eq!(
            replaced_while_appending("a\n", "", "A\n"),
            ("A\n".into(), 0)
        );
    }

    #[test]
    fn a_line_still_being_written_is_carried_whole() {
        // The checked file ended inside a line (repair took it for a torn tail): the tool
        // was still writing it.
        assert_eq!(
            replaced_while_appending("a\nb", "x\n", "A\n"),
            ("A\nbx\n".into(), 2)
        );
    }
}
