//! What discovery finds in a store: a file, the tool it belongs to, and what its folder says
//! about its project.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::scheme::{Scheme, claude_folder_matches, dashed, pi};
use super::tool::Tool;
use crate::ids::sha256_hex;
use crate::io::walk::{Skip, Walked};

/// One file found in a tool's store.
#[derive(Debug, Clone, Serialize)]
pub struct Stored {
    pub tool: Tool,
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub path: PathBuf,
    pub kind: StoredKind,
    pub folder: FolderKey,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum StoredKind {
    /// A session the tool lists and resumes.
    Session,
    /// A subagent's session (Gemini `chats/<parent>/<id>.json`).
    Subagent,
    /// A Gemini `/chat save` checkpoint, with its decoded tag.
    Checkpoint { tag: String },
    /// A file the tool gave up on and renamed (`<file>.unreadable-<ms>`).
    Unreadable,
    /// A legacy file the tool's current version no longer lists (Qwen Code's `tmp/` JSON).
    Legacy,
}

/// What a file's folder says about its project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "by")]
pub enum FolderKey {
    /// Named by the sha256 of the project path.
    Sha256 { hash: String },
    /// A Gemini slug folder, with the project its marker or `projects.json` names.
    Slug {
        slug: String,
        project: Option<String>,
    },
    /// Named by a scheme that cannot be turned back into a path: the `cwd` recorded in the
    /// file settles it.
    Named { scheme: Scheme, name: String },
    /// No project folder (Codex, the Go agent, simple-agent): only the content says.
    None,
}

/// Whether a file's folder fits a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Yes,
    No,
    /// The folder name fits, or there is none: the file's recorded `cwd` decides.
    AskContent,
}

impl FolderKey {
    pub fn fits(&self, project: &str) -> Fit {
        match self {
            FolderKey::Sha256 { hash } => yes_no(*hash == sha256_hex(project)),
            FolderKey::Slug {
                project: Some(p), ..
            } => yes_no(p == project),
            FolderKey::Slug { project: None, .. } => Fit::AskContent,
            FolderKey::Named { scheme, name } => {
                let fits = match scheme {
                    Scheme::Claude => claude_folder_matches(name, project),
                    Scheme::Pi => *name == pi(project),
                    _ => *name == dashed(project),
                };
                if fits { Fit::AskContent } else { Fit::No }
            }
            FolderKey::None => Fit::AskContent,
        }
    }

    /// The project path the folder alone proves, if any.
    pub fn project(&self) -> Option<&str> {
        match self {
            FolderKey::Slug {
                project: Some(p), ..
            } => Some(p),
            _ => None,
        }
    }
}

fn yes_no(b: bool) -> Fit {
    if b { Fit::Yes } else { Fit::No }
}

/// Everything found in the stores, and what could not be looked at.
#[derive(Debug, Default)]
pub struct Discovery {
    pub files: Vec<Stored>,
    /// Folders that exist but could not be read, with the reason.
    pub problems: Vec<String>,
    /// sessiontool's own backups, sidecars and temp files seen (not sessions).
    pub own_files: usize,
    /// Symbolic links met (each reported once in `problems`).
    links: Vec<PathBuf>,
}

impl Discovery {
    /// The files of one folder whose names pass `wanted`, in name order; a missing folder
    /// holds nothing, an unreadable one is a problem. An entry with a wanted name that is not
    /// a regular file (a FIFO, a socket, a device) is a problem too: never opened (a FIFO
    /// would block the read), and said.
    pub fn files_in(&mut self, dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<PathBuf> {
        let (files, special) = self.entries(dir, |ft| ft.is_file());
        for (path, kind) in special {
            if wanted(file_name(&path)) {
                self.problems.push(format!(
                    "{} is not a regular file ({kind}): not listed",
                    path.display()
                ));
            }
        }
        files
            .into_iter()
            .filter(|p| {
                let name = file_name(p);
                if is_own_file(name) {
                    self.own_files += 1;
                    return false;
                }
                wanted(name)
            })
            .collect()
    }

    /// The subfolders of one folder, in name order (symbolic links are not followed).
    pub fn dirs_in(&mut self, dir: &Path) -> Vec<PathBuf> {
        self.entries(dir, |ft| ft.is_dir()).0
    }

    /// The entries `keep` wants, in name order, and those that are neither files, folders nor
    /// links, with what they are.
    fn entries(
        &mut self,
        dir: &Path,
        keep: impl Fn(&std::fs::FileType) -> bool,
    ) -> (Vec<PathBuf>, Vec<(PathBuf, &'static str)>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Default::default(),
            Err(e) => {
                self.problems
                    .push(format!("cannot read folder {}: {e}", dir.display()));
                return Default::default();
            }
        };
        let mut out: Vec<PathBuf> = Vec::new();
        let mut special = Vec::new();
        for e in entries.filter_map(|e| e.ok()) {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                // Not followed (a link may lead out of the store), and said so once.
                let path = e.path();
                if !self.links.contains(&path) {
                    self.problems.push(format!(
                        "{} is a symbolic link: not followed, its sessions are not listed",
                        path.display()
                    ));
                    self.links.push(path);
                }
            } else if keep(&ft) {
                out.push(e.path());
            } else if !ft.is_file()
                && !ft.is_dir()
                && let Some(kind) = crate::regular_file::special_kind(ft)
            {
                special.push((e.path(), kind));
            }
        }
        out.sort();
        special.sort();
        (out, special)
    }
}

/// Every file below a project folder that moves as a whole (a sha256 folder), sessiontool's
/// own files left out, as paths relative to `dir` ([`crate::io::walk`]). What cannot be read
/// or is not a regular file is returned as a problem: a move must not leave a file behind
/// unseen.
pub fn files_below(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let (mut files, mut problems) = (Vec::new(), Vec::new());
    for walked in crate::io::walk::walk(dir) {
        match walked {
            Walked::File(path) => {
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                files.push(rel.to_path_buf());
            }
            Walked::Skipped { why: Skip::Own, .. } => {}
            // Copying one would block (a FIFO) or follow it out of the folder (a link);
            // leaving it behind unsaid would lose it.
            Walked::Skipped {
                path,
                why: why @ Skip::NotRegular(_),
            } => problems.push(format!(
                "{} is {}: sessiontool does not move it; move or remove it, then run again",
                path.display(),
                why.reason()
            )),
            Walked::Unreadable { error, .. } => {
                problems.push(format!("below {}: {error}", dir.display()))
            }
        }
    }
    (files, problems)
}

pub fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

pub use crate::io::is_own_file;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_keys_fit_their_projects() {
        let hash = FolderKey::Sha256 {
            hash: sha256_hex("/w/app"),
        };
        assert_eq!(hash.fits("/w/app"), Fit::Yes);
        assert_eq!(hash.fits("/w/other"), Fit::No);
        let named = FolderKey::Named {
            scheme: Scheme::Dashed,
            name: "-w-app".into(),
        };
        assert_eq!(named.fits("/w/app"), Fit::AskContent);
        assert_eq!(named.fits("/w.app"), Fit::AskContent, "same dashed name");
        assert_eq!(named.fits("/w/apps"), Fit::No);
        let slug = FolderKey::Slug {
            slug: "app".into(),
            project: Some("/w/app".into()),
        };
        assert_eq!(slug.fits("/w/app"), Fit::Yes);
        assert_eq!(slug.fits("/x/app"), Fit::No);
    }

    #[test]
    fn own_files_are_recognised() {
        assert!(is_own_file("a.jsonl.bak-20260101T000000Z"));
        assert!(is_own_file("a.jsonl.torn-20260101T000000Z"));
        assert!(is_own_file(".a.jsonl.x1.repair.tmp"));
        assert!(!is_own_file("session-2026-01-01T00-00-abcd.jsonl"));
    }

    /// A folder that moves whole: its sessions move, sessiontool's backups stay, and what
    /// cannot be copied (a FIFO, a link) stops the move, said, rather than staying behind.
    #[cfg(unix)]
    #[test]
    fn a_folder_to_move_names_what_cannot_move() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("chats")).unwrap();
        std::fs::write(root.join("chats/a.json"), b"{}").unwrap();
        std::fs::write(root.join("chats/a.json.bak-20260101T000000Z"), b"{}").unwrap();
        assert_eq!(
            files_below(root),
            (vec![PathBuf::from("chats/a.json")], vec![])
        );

        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        let fifo = std::ffi::CString::new(root.join("pipe").into_os_string().into_encoded_bytes())
            .unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (files, problems) = files_below(root);
        assert_eq!(files, vec![PathBuf::from("chats/a.json")]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].ends_with(
            "link is not a regular file (a symbolic link): sessiontool does not move it; move \
             or remove it, then run again"
        ));
        assert!(problems[1].contains("pipe is not a regular file (a FIFO)"));
    }
}
