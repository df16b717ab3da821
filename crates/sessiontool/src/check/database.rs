//! fsck of a database that holds sessions (OpenCode's): its format's own checks, reported as
//! issues of the file. Nothing is repaired: sessiontool never writes such a database.

use std::path::Path;

use super::issue::Issue;
use crate::formats::database;

/// The format's name and its findings, when `path` is a database of a database format.
pub(super) fn issues(path: &Path) -> Option<(&'static str, Result<Vec<Issue>, String>)> {
    let format = database::detect(path)?;
    let found = format.check(path).map_err(|e| match e.hint {
        Some(hint) => format!("{} ({hint})", e.message),
        None => e.message,
    });
    let issues = found.map(|diagnostics| {
        diagnostics
            .into_iter()
            .map(|d| Issue::new(d.code, d.severity, d.message))
            .collect()
    });
    Some((format.name(), issues))
}
