//! Finding one stored session from what a user types: the path of its file, its id, or the
//! first characters of its id (as `list` shows them), across every tool's store as `list`
//! finds them.

use std::path::{Path, PathBuf};

use super::catalog::{self, Entry, Query, Tick};
use super::home::Home;
use super::stored::StoredKind;
use super::tool::Tool;

/// What to look for.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// A file path, an id, or the start of an id (ASCII case ignored).
    pub wanted: String,
    /// Only sessions of these tools (every tool when empty).
    pub tools: Vec<Tool>,
    /// When the same session is in several tools' stores, the copies in this tool's store
    /// are passed over (switching into a tool takes the session from another).
    pub besides: Option<Tool>,
    /// The folder a relative path is taken from, and a project the hashed folders may be
    /// named after.
    pub current_dir: PathBuf,
    pub progress: Option<Tick>,
}

#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error(
        "no stored session has the id {wanted:?} or an id that starts with it ({searched} sessions searched)"
    )]
    NotFound { wanted: String, searched: usize },
    #[error("{}: no such file", .0.display())]
    NoFile(PathBuf),
    #[error("{}: not a session file of any tool's format", .0.display())]
    NotASession(PathBuf),
    #[error("{} sessions match {wanted:?}", .matches.len())]
    Ambiguous {
        wanted: String,
        /// Every match, newest first.
        matches: Vec<Entry>,
    },
}

impl FindError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            FindError::NotFound { .. } => {
                "`sessiontool list --all` shows every session with its id; a path works too"
            }
            FindError::NoFile(_) => "check the path; an id or its first characters work too",
            FindError::NotASession(_) => "`sessiontool detect FILE` tells what it is",
            FindError::Ambiguous { .. } => {
                "give more characters of the id, the file's path, or --from TOOL"
            }
        }
    }
}

/// The session found, and other copies of it in other tools' stores (a session switched
/// before keeps its id), which it was preferred to.
#[derive(Debug, Clone)]
pub struct Found {
    pub entry: Entry,
    pub other_copies: Vec<Entry>,
}

/// The one session `lookup` names. A path names its file (one outside every store too); an
/// id names the session whose id it is, else the one whose id starts with it. Older copies
/// of a session (see [`Entry::superseded_by`]) give way to the copy the tool reads, and
/// copies in the `besides` tool's store to copies elsewhere. When what is left is one
/// session in several tools' stores (switched before), the copy updated last is taken (the
/// user went on there); of copies updated at the same time, the file written first (the
/// original). Different sessions are ambiguous: nothing is guessed.
pub fn find(home: &Home, lookup: &Lookup) -> Result<Found, FindError> {
    let wanted = lookup.wanted.as_str();
    let as_path = lookup.current_dir.join(wanted);
    let is_path = wanted.contains(std::path::MAIN_SEPARATOR) || as_path.is_file();
    let query = Query {
        tools: lookup.tools.clone(),
        project: None,
        candidates: vec![lookup.current_dir.to_string_lossy().into_owned()],
        progress: lookup.progress.clone(),
    };
    if is_path {
        return by_path(home, &query, &as_path).map(|entry| Found {
            entry,
            other_copies: Vec::new(),
        });
    }
    let entries = catalog::list(home, &query).entries;
    let searched = entries.len();
    let mut matches = by_id(entries, wanted);
    prefer_current_copies(&mut matches);
    if let Some(besides) = lookup.besides
        && matches.iter().any(|e| e.tool != besides)
    {
        matches.retain(|e| e.tool != besides);
    }
    if matches.is_empty() {
        return Err(FindError::NotFound {
            wanted: wanted.to_string(),
            searched,
        });
    }
    match newest_copy(&matches) {
        Some(i) => {
            let entry = matches.remove(i);
            Ok(Found {
                entry,
                other_copies: matches,
            })
        }
        None => Err(FindError::Ambiguous {
            wanted: wanted.to_string(),
            matches,
        }),
    }
}

/// When `matches` are copies of one session (one id), the one updated strictly last.
fn newest_copy(matches: &[Entry]) -> Option<usize> {
    if matches.len() == 1 {
        return Some(0);
    }
    let id = matches[0].id.as_deref()?;
    if !matches
        .iter()
        .all(|e| e.id.as_deref().is_some_and(|i| i.eq_ignore_ascii_case(id)))
    {
        return None;
    }
    let times: Vec<Option<jiff::Timestamp>> = matches
        .iter()
        .map(|e| e.updated.as_deref().and_then(|t| t.parse().ok()))
        .collect();
    let newest = times.iter().flatten().max()?;
    let at: Vec<usize> = (0..times.len())
        .filter(|&i| times[i].as_ref() == Some(newest))
        .collect();
    if at.len() == 1 {
        return Some(at[0]);
    }
    // Copies updated at the same moment hold the same conversation (one was switched from
    // the other and nobody went on in either): the file that was there first is the
    // original, which no conversion has passed through.
    let written: Vec<(std::time::SystemTime, usize)> = at
        .iter()
        .map(|&i| {
            std::fs::metadata(&matches[i].path)
                .and_then(|m| m.modified())
                .map(|t| (t, i))
        })
        .collect::<Result<_, _>>()
        .ok()?;
    let first = written.iter().min()?;
    (written.iter().filter(|(t, _)| *t == first.0).count() == 1).then_some(first.1)
}

/// The entry of the file at `path`: as its store lists it, else read on its own.
fn by_path(home: &Home, query: &Query, path: &Path) -> Result<Entry, FindError> {
    let canonical =
        std::fs::canonicalize(path).map_err(|_| FindError::NoFile(path.to_path_buf()))?;
    if !canonical.is_file() {
        return Err(FindError::NoFile(path.to_path_buf()));
    }
    let listed = catalog::list(home, query)
        .entries
        .into_iter()
        .find(|e| std::fs::canonicalize(&e.path).ok().as_ref() == Some(&canonical));
    match listed {
        Some(e) => Ok(e),
        None => {
            catalog::entry_of_file(&canonical).ok_or(FindError::NotASession(path.to_path_buf()))
        }
    }
}

/// The entries whose id is `wanted`, else those whose id starts with it (ASCII case ignored;
/// ids are hex and UUIDs people type). Checkpoints have no id of their own: a path names them.
fn by_id(entries: Vec<Entry>, wanted: &str) -> Vec<Entry> {
    if wanted.is_empty() {
        return Vec::new();
    }
    let exact: Vec<Entry> = entries
        .iter()
        .filter(|e| {
            e.id.as_deref()
                .is_some_and(|id| id.eq_ignore_ascii_case(wanted))
        })
        .cloned()
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let lower = wanted.to_ascii_lowercase();
    entries
        .into_iter()
        .filter(|e| !matches!(e.kind, StoredKind::Checkpoint { .. }))
        .filter(|e| {
            e.id.as_deref()
                .is_some_and(|id| id.to_ascii_lowercase().starts_with(&lower))
        })
        .collect()
}

/// Drops an older copy of a session when the copy its tool reads first is among `matches`.
fn prefer_current_copies(matches: &mut Vec<Entry>) {
    let paths: Vec<String> = matches.iter().map(|e| e.path.clone()).collect();
    matches.retain(|e| {
        e.superseded_by
            .as_ref()
            .is_none_or(|current| !paths.contains(current))
    });
}
