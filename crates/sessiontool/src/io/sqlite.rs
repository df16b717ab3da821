//! What the readers and writers of tools' SQLite databases here share (OpenCode's store,
//! Codex's state database): how long to wait while the tool itself holds the database's lock,
//! and telling the end of that wait from other errors.

use std::time::Duration;

/// `tool_waits` (how long the tool itself waits for the lock), or in a debug build
/// `SESSIONTOOL_BUSY_TIMEOUT_MS`: the tests' hook, so a refusal is proven without the wait.
pub(crate) fn busy_timeout(tool_waits: Duration) -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("SESSIONTOOL_BUSY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Duration::from_millis(ms);
    }
    tool_waits
}

/// Whether `e` is the wait for another process's lock running out.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
