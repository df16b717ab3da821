//! Gemini CLI: `~/.gemini/tmp/<sha256 or slug>/chats/session-*.json[l]`, subagents in
//! `chats/<parent>/`, checkpoints `tmp/<folder>/checkpoint-<tag>.json`.

mod registration;
pub mod registry;
mod relocation;

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, by_id, inside};
use crate::store::home::Home;
use crate::store::migrate::Migration;
use crate::store::names::{self, checkpoint_file, checkpoint_tag, utc};
use crate::store::rekey::Move;
use crate::store::relocate::Plan;
use crate::store::scheme::Scheme;
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind, file_name};
use crate::store::tool::Tool;
use registration::GeminiProject;
use registry::{self as gemini_registry, FolderChoice};

pub struct Gemini;

/// Moves `.gemini`: the CLI keeps it under the folder this names instead of the home.
const HOME_VARIABLE: &str = "GEMINI_CLI_HOME";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Gemini: Tool = Tool::of(&Gemini);
}

impl ToolStore for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn current_format(&self) -> &'static str {
        "gemini-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[HOME_VARIABLE]
    }

    /// `~/.gemini` (`$GEMINI_CLI_HOME/.gemini`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(HOME_VARIABLE, || home.dir().to_path_buf())
            .join(".gemini")
    }

    fn resume(&self, id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        by_id(&["gemini", "--resume"], id)
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        Some((HOME_VARIABLE, home.dir().to_path_buf()))
    }

    fn migrations(&self) -> &'static [Migration] {
        const BOTH: [Migration; 2] = [
            Migration::gemini(Scheme::GeminiSlug),
            Migration::gemini(Scheme::Sha256),
        ];
        &BOTH
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home).join("tmp")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let gemini = self.folder(home);
        if let Some(damage) = gemini_registry::damage(&gemini) {
            found.problems.push(damage);
        }
        for dir in found.dirs_in(&gemini.join("tmp")) {
            let name = file_name(&dir).to_string();
            let folder = if is_sha256(&name) {
                FolderKey::Sha256 { hash: name }
            } else {
                let project = gemini_registry::project_of_slug(&gemini, &name);
                FolderKey::Slug {
                    slug: name,
                    project,
                }
            };
            let mut here = Vec::new();
            let mut add = |path: PathBuf, kind: StoredKind| {
                here.push(Stored {
                    tool: Tool::Gemini,
                    path,
                    kind,
                    folder: folder.clone(),
                })
            };
            let checkpoints = found.files_in(&dir, |n| checkpoint_tag(n).is_some());
            let chats = dir.join("chats");
            let sessions = found.files_in(&chats, is_session_name);
            let unreadable = found.files_in(&chats, |n| n.contains(".unreadable-"));
            let subagents: Vec<PathBuf> = found
                .dirs_in(&chats)
                .iter()
                .flat_map(|sub| found.files_in(sub, is_session_name))
                .collect();
            for path in checkpoints {
                let tag = checkpoint_tag(file_name(&path)).unwrap_or_default();
                add(path, StoredKind::Checkpoint { tag });
            }
            for path in sessions {
                add(path, StoredKind::Session);
            }
            for path in unreadable {
                add(path, StoredKind::Unreadable);
            }
            for path in subagents {
                add(path, StoredKind::Subagent);
            }
            found.files.append(&mut here);
        }
    }

    fn registries(&self, home: &Home) -> Vec<PathBuf> {
        vec![gemini_registry::registry_path(&self.folder(home))]
    }

    fn check_registries(&self, home: &Home, project: &str) -> Result<Vec<PathBuf>, PlaceError> {
        let gemini = self.folder(home);
        let FolderChoice { name, register } = gemini_registry::folder_for(&gemini, project, false)
            .map_err(|e| PlaceError(format!("{e}; nothing was written")))?;
        if !register {
            return Ok(Vec::new());
        }
        Ok(gemini_registry::markers(&gemini, &name)?.to_vec())
    }

    fn relocate_indexes(&self, home: &Home, mv: &Move, plan: &mut Plan) {
        relocation::registries(&self.folder(home), mv, plan)
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        let gemini = self.folder(home);
        // JSONL sessions exist since v0.39, which reads only slug folders.
        let slug_only = new.format.name() == "gemini-jsonl";
        let FolderChoice { name, register } =
            gemini_registry::folder_for(&gemini, new.project, slug_only)
                .map_err(|e| PlaceError(format!("{e}; nothing was written")))?;
        let tmp = gemini.join("tmp");
        let path = match new.format.name() {
            "checkpoint" => {
                let tag = new.tag.ok_or_else(|| {
                    PlaceError("a checkpoint needs a tag (--tag or --checkpoint TAG)".into())
                })?;
                inside(&tmp, &[&name, &checkpoint_file(tag)])?
            }
            ext @ ("gemini-json" | "gemini-jsonl") => {
                let ext = if ext == "gemini-json" {
                    "json"
                } else {
                    "jsonl"
                };
                let id = new.safe_id()?;
                let stamp = utc(new.start(), "%Y-%m-%dT%H-%M");
                let file = format!("session-{stamp}-{}.{ext}", names::prefix(&id, 8));
                inside(&tmp, &[&name, "chats", &file])?
            }
            _ => return Err(new.refuse_format(Tool::Gemini)),
        };
        let mut target = Target::at(path);
        if register {
            target.registrations.push(Box::new(GeminiProject {
                gemini,
                project: new.project.to_string(),
                slug: name,
            }));
        }
        Ok(target)
    }
}

/// Session files the CLI lists (`.json` legacy, `.jsonl` since v0.39).
fn is_session_name(name: &str) -> bool {
    (name.ends_with(".json") || name.ends_with(".jsonl")) && !name.contains(".unreadable-")
}

pub fn is_sha256(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
