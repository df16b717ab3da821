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
    let mut from = File::open(path)?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(backup)?;
    io::copy(&mut from, &mut to)?;
    to.set_permissions(from.metadata()?.permissions())?;
    to.sync_all()?;
    crate::io::sync_dir(parent(backup))
}

pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}
