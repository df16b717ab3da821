//! The rules a repair follows before and after it touches a file: no live lock, a quiet
//! moment before a last line without its newline is taken for torn, and what a tool appended
//! to the old file during the replacement carried over.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::check::Stamp;
use crate::formats::Format;
use crate::io::replace::Replaced;

/// A lock older than this is stale (llxprt-code's own rule).
const STALE_LOCK: Duration = Duration::from_secs(48 * 3600);

/// A tool that writes a line in pieces writes them closer together than this: a last line
/// without its newline younger than this may still be being written.
pub const QUIET: Duration = Duration::from_millis(1500);

/// How long to watch the old file after a replacement that saw a writer.
const SETTLE: Duration = Duration::from_millis(300);

/// The live lock file that says a tool is writing `path`, if there is one: `<stem>.lock`
/// beside the file, and the lock files the format's tool uses (llxprt-code:
/// `<chats>/<sessionId>.lock`, and `<x>.lock` for `session-<x>.jsonl`), each holding
/// `{pid, timestamp}`.
pub fn live_lock(path: &Path, format: Option<&dyn Format>) -> Option<PathBuf> {
    let mut candidates = vec![path.with_extension("lock")];
    if let Some(f) = format {
        candidates.extend(f.lock_files(path, &first_line(path)));
    }
    candidates.into_iter().find(|lock| is_live(lock))
}

fn is_live(lock: &Path) -> bool {
    let Ok(bytes) = fs::read(lock) else {
        return false;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return false;
    };
    let pid = value.get("pid").and_then(serde_json::Value::as_u64);
    let fresh = fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_none_or(|age| age < STALE_LOCK);
    let alive = pid.is_none_or(|p| Path::new(&format!("/proc/{p}")).exists());
    fresh && alive
}

/// The file's first line (at most 64 KiB of it).
fn first_line(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::new();
    if let Ok(f) = crate::regular_file::open(path) {
        let _ = f.take(1 << 16).read_to_end(&mut head);
    }
    let end = memchr::memchr(b'\n', &head).unwrap_or(head.len());
    head.truncate(end);
    head
}

/// A file whose last line has no newline yet and that was written a moment ago may be
/// mid-line in a tool's write: wait until it has been quiet for [`QUIET`]. Returns whether it
/// is still as checked.
pub fn wait_until_quiet(path: &Path, stamp: &Stamp, quiet: Option<Duration>) -> io::Result<bool> {
    let quiet = quiet.unwrap_or(QUIET);
    if quiet.is_zero() || stamp.len == 0 || ends_with_newline(path, stamp.len)? {
        return Ok(true);
    }
    let age = stamp
        .modified
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .unwrap_or(quiet);
    if age < quiet {
        std::thread::sleep(quiet - age);
    }
    Ok(Stamp::of(path)? == *stamp)
}

fn ends_with_newline(path: &Path, len: u64) -> io::Result<bool> {
    Ok(read_range(&crate::regular_file::open(path)?, len - 1, len)? == b"\n")
}

pub use crate::io::replace::fresh_name;

/// What reached the old file after it was checked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Carried {
    /// New bytes carried into the repaired file.
    pub bytes: u64,
    /// The old file was still growing a moment after the replacement: a tool writes to it
    /// through a descriptor it keeps (what it writes next lands in the backup only).
    pub still_writing: bool,
}

/// Bytes a tool appended to the old file between the check and the rename (they went to the
/// old inode, which is now the backup) are appended to the new file, and to the backup when
/// that is a copy. When the checked file ended inside a line, that line was still being
/// written: it is carried whole. When anything came, or a writer was seen, the old file is
/// watched a moment longer to tell a tool that goes on writing to it.
pub fn carry_over(replaced: &Replaced, checked: u64, writer_seen: bool) -> io::Result<Carried> {
    let old = &replaced.original.file;
    let path = &replaced.original.path;
    let copy = replaced
        .backup
        .as_deref()
        .filter(|_| replaced.backup_is_copy());
    let pass = |done: &mut u64| -> io::Result<bool> {
        let len = old.metadata()?.len();
        if len <= *done {
            return Ok(false);
        }
        let start = if *done == checked {
            line_start(old, checked)?
        } else {
            *done
        };
        append(path, &read_range(old, start, len)?)?;
        if let Some(b) = copy {
            append(b, &read_range(old, *done, len)?)?;
        }
        *done = len;
        Ok(true)
    };
    let mut done = checked;
    for _ in 0..3 {
        if !pass(&mut done)? {
            break;
        }
    }
    let mut still_writing = false;
    if done > checked || writer_seen {
        std::thread::sleep(SETTLE);
        still_writing = pass(&mut done)?;
    }
    Ok(Carried {
        bytes: done - checked,
        still_writing,
    })
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

    /// `path` replaced by `bytes`, its old inode kept as `<path>.bak-S`.
    fn replaced_by(path: &Path, bytes: &[u8]) -> Replaced {
        let original = crate::io::replace::Original::open_now(path).unwrap();
        let mut temp = crate::io::temp_beside(path, "test").unwrap();
        temp.write_all(bytes).unwrap();
        let options = crate::io::replace::Options {
            backup: crate::io::replace::Backup::Keep {
                dir: None,
                stamp: "S",
            },
            allow_writers: true,
            points: [
                "repair.before-backup",
                "repair.before-rename",
                "repair.after-rename",
            ],
        };
        crate::io::replace::replace(original, temp, &options).unwrap()
    }

    /// A tool appended to the old file (through the descriptor it keeps) after the last
    /// check; the repaired file replaced it.
    fn replaced_while_appending(before: &str, appended: &str, repaired: &str) -> (String, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, before).unwrap();
        let mut tool = OpenOptions::new().append(true).open(&path).unwrap();
        let replaced = replaced_by(&path, repaired.as_bytes());
        tool.write_all(appended.as_bytes()).unwrap();
        let carried = carry_over(&replaced, before.len() as u64, false).unwrap();
        assert!(!carried.still_writing);
        let backup = replaced.finish().unwrap().unwrap();
        // The backup is the old file, with what the tool wrote.
        assert_eq!(
            fs::read_to_string(backup).unwrap(),
            format!("{before}{appended}")
        );
        (fs::read_to_string(&path).unwrap(), carried.bytes)
    }

    #[test]
    fn a_tool_that_goes_on_writing_to_the_old_file_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "a\n").unwrap();
        let mut tool = OpenOptions::new().append(true).open(&path).unwrap();
        let replaced = replaced_by(&path, b"A\n");
        let writer = std::thread::spawn(move || {
            for i in 0..20 {
                writeln!(tool, "{i}").unwrap();
                std::thread::sleep(Duration::from_millis(25));
            }
        });
        std::thread::sleep(Duration::from_millis(30));
        let carried = carry_over(&replaced, 2, true).unwrap();
        writer.join().unwrap();
        assert!(carried.still_writing);
        let backup = replaced.finish().unwrap().unwrap();
        let all: String = (0..20).map(|i| format!("{i}\n")).collect();
        assert_eq!(fs::read_to_string(backup).unwrap(), format!("a\n{all}"));
    }

    #[test]
    fn a_fresh_last_line_without_newline_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"b\"").unwrap();
        let stamp = Stamp::of(&path).unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                let mut f = OpenOptions::new().append(true).open(path).unwrap();
                f.write_all(b":2}\n").unwrap();
            })
        };
        assert!(!wait_until_quiet(&path, &stamp, None).unwrap());
        writer.join().unwrap();
        // Complete lines are never waited for.
        let stamp = Stamp::of(&path).unwrap();
        let start = std::time::Instant::now();
        assert!(wait_until_quiet(&path, &stamp, None).unwrap());
        assert!(start.elapsed() < QUIET);
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
