//! Claude Code: `${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<dashed realpath>/<sessionId>.jsonl`.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, by_id, inside};
use crate::store::home::Home;
use crate::store::scheme::{Scheme, claude_of_real_path};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind, file_name};
use crate::store::tool::Tool;

pub struct Claude;

/// Where Claude Code keeps everything instead of `~/.claude`.
const CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Claude: Tool = Tool::of(&Claude);
}

impl ToolStore for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn current_format(&self) -> &'static str {
        "claude-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[CONFIG_DIR]
    }

    /// `~/.claude` (`$CLAUDE_CONFIG_DIR`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(CONFIG_DIR, || home.dir().join(".claude"))
    }

    fn resume(&self, id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        by_id(&["claude", "--resume"], id)
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        Some((CONFIG_DIR, self.folder(home)))
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home).join("projects")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        for dir in found.dirs_in(&self.folder(home).join("projects")) {
            let folder = FolderKey::Named {
                scheme: Scheme::Claude,
                name: file_name(&dir).to_string(),
            };
            for path in found.files_in(&dir, |n| n.ends_with(".jsonl")) {
                // Older versions keep subagent transcripts beside the sessions as agent-*.
                let kind = if file_name(&path).starts_with("agent-") {
                    StoredKind::Subagent
                } else {
                    StoredKind::Session
                };
                found.files.push(Stored {
                    tool: Tool::Claude,
                    path,
                    kind,
                    folder: folder.clone(),
                });
            }
            // Newer versions: <session>/subagents/agent-*.jsonl.
            for session_dir in found.dirs_in(&dir) {
                let subagents =
                    found.files_in(&session_dir.join("subagents"), |n| n.ends_with(".jsonl"));
                found.files.extend(subagents.into_iter().map(|path| Stored {
                    tool: Tool::Claude,
                    path,
                    kind: StoredKind::Subagent,
                    folder: folder.clone(),
                }));
            }
        }
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "claude-jsonl" {
            return Err(new.refuse_format(Tool::Claude));
        }
        let name = claude_of_real_path(new.project);
        let projects = self.folder(home).join("projects");
        let folder = if name.prefix {
            // Its hash suffix cannot be computed here: use the folder the CLI made.
            existing_with_prefix(&projects, &name.name).ok_or_else(|| {
                PlaceError(format!(
                    "the project path is over 200 characters and Claude Code has no folder for it yet under {}: start Claude Code in the project once, then retry",
                    projects.display()
                ))
            })?
        } else {
            inside(&projects, &[&name.name])?
        };
        let file = format!("{}.jsonl", new.safe_id()?);
        Ok(Target::at(inside(&folder, &[&file])?))
    }
}

fn existing_with_prefix(projects: &std::path::Path, prefix: &str) -> Option<PathBuf> {
    std::fs::read_dir(projects)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| file_name(p).starts_with(prefix) && p.is_dir())
}
