//! The one folder walker: every command that takes a folder (fsck, convert) and every store
//! operation that moves a folder whole sees the same files, left out by the same rules.
//!
//! Below a folder, in name order and without following symbolic links, each entry that is
//! not a folder is one of: a regular file to read; an entry left out with its reason (not a
//! regular file: a FIFO would block the read, a link may lead out of the folder; or a backup,
//! sidecar or temp file sessiontool wrote, which is not a session to read again); or what
//! could not be read (a folder without permission), which is a failure and never silence.

use std::path::{Path, PathBuf};

use super::is_own_file;
use crate::regular_file::special_kind;

/// One entry met below a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walked {
    /// A regular file, to be read.
    File(PathBuf),
    /// Left out, never opened.
    Skipped { path: PathBuf, why: Skip },
    /// What the walk could not read (a folder without permission, an entry gone since it was
    /// listed), with the error; the walk goes on past it, as find(1) does.
    Unreadable { path: PathBuf, error: String },
}

/// Why an entry was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Not a regular file: what it is ("a FIFO", "a symbolic link", ...).
    NotRegular(&'static str),
    /// A backup (`.bak-<time>`), torn-tail sidecar (`.torn-<time>`) or temp file sessiontool
    /// wrote ([`is_own_file`]).
    Own,
}

impl Skip {
    /// The reason, as a user reads it.
    pub fn reason(&self) -> String {
        match self {
            Skip::NotRegular(kind) => format!("not a regular file ({kind})"),
            Skip::Own => "a backup, sidecar or temp file sessiontool wrote".into(),
        }
    }
}

impl Walked {
    pub fn path(&self) -> &Path {
        match self {
            Walked::File(path) | Walked::Skipped { path, .. } | Walked::Unreadable { path, .. } => {
                path
            }
        }
    }
}

/// Every entry below `dir` but folders, in name order (folder by folder, depth first).
pub fn walk(dir: &Path) -> impl Iterator<Item = Walked> + '_ {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(move |entry| match entry {
            Ok(e) if e.file_type().is_dir() => None,
            Ok(e) => {
                let why = match special_kind(e.file_type()) {
                    Some(kind) => Some(Skip::NotRegular(kind)),
                    None if is_own_file(&e.file_name().to_string_lossy()) => Some(Skip::Own),
                    None => None,
                };
                Some(match why {
                    Some(why) => Walked::Skipped {
                        path: e.into_path(),
                        why,
                    },
                    None => Walked::File(e.into_path()),
                })
            }
            Err(e) => Some(Walked::Unreadable {
                path: e.path().unwrap_or(dir).to_path_buf(),
                error: format!("cannot read it: {e}"),
            }),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_what_is_left_out_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("b")).unwrap();
        for name in [
            "a.jsonl",
            "a.jsonl.bak-20260101T000000Z",
            "a.jsonl.torn-20260101T000000Z",
            ".a.jsonl.sessiontool-1-x.repair.tmp",
            "b/c.json",
        ] {
            std::fs::write(root.join(name), b"{}\n").unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("b/link.jsonl")).unwrap();

        let walked: Vec<Walked> = walk(root).collect();
        let own = |name: &str| Walked::Skipped {
            path: root.join(name),
            why: Skip::Own,
        };
        let mut expected = vec![
            own(".a.jsonl.sessiontool-1-x.repair.tmp"),
            Walked::File(root.join("a.jsonl")),
            own("a.jsonl.bak-20260101T000000Z"),
            own("a.jsonl.torn-20260101T000000Z"),
            Walked::File(root.join("b/c.json")),
        ];
        #[cfg(unix)]
        expected.push(Walked::Skipped {
            path: root.join("b/link.jsonl"),
            why: Skip::NotRegular("a symbolic link"),
        });
        assert_eq!(walked, expected);
        assert_eq!(
            Skip::NotRegular("a FIFO").reason(),
            "not a regular file (a FIFO)"
        );
    }

    #[test]
    fn a_missing_folder_is_a_failure_not_silence() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let walked: Vec<Walked> = walk(&gone).collect();
        assert_eq!(walked.len(), 1, "{walked:?}");
        assert!(
            matches!(&walked[0], Walked::Unreadable { path, error } if path == &gone && error.starts_with("cannot read it")),
            "{walked:?}"
        );
    }
}
