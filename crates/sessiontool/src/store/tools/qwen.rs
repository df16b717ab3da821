//! Qwen Code: `~/.qwen/projects/<dashed>/chats/<id>.jsonl` (v0.4+), and the legacy
//! `~/.qwen/tmp/<sha256>/chats/*.json` (Gemini's legacy JSON, up to v0.3) that newer versions
//! no longer list.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, by_id, inside};
use crate::store::home::Home;
use crate::store::migrate::Migration;
use crate::store::names::checkpoint_tag;
use crate::store::scheme::{Scheme, dashed};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind, file_name};
use crate::store::tool::Tool;

pub struct Qwen;

/// Where Qwen Code keeps everything instead of `~/.qwen`.
const RUNTIME_DIR: &str = "QWEN_RUNTIME_DIR";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Qwen: Tool = Tool::of(&Qwen);
}

impl ToolStore for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn current_format(&self) -> &'static str {
        "qwen-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[RUNTIME_DIR]
    }

    /// `~/.qwen` (`$QWEN_RUNTIME_DIR`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(RUNTIME_DIR, || home.dir().join(".qwen"))
    }

    fn resume(&self, id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        by_id(&["qwen", "--resume"], id)
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        Some((RUNTIME_DIR, self.folder(home)))
    }

    fn migrations(&self) -> &'static [Migration] {
        const LEGACY: [Migration; 1] = [Migration::qwen_legacy()];
        &LEGACY
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        let qwen = self.folder(home);
        vec![qwen.join("projects"), qwen.join("tmp")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let qwen = self.folder(home);
        for dir in found.dirs_in(&qwen.join("projects")) {
            let folder = FolderKey::Named {
                scheme: Scheme::Dashed,
                name: file_name(&dir).to_string(),
            };
            for path in found.files_in(&dir.join("chats"), |n| n.ends_with(".jsonl")) {
                found
                    .files
                    .push(stored(path, StoredKind::Session, folder.clone()));
            }
        }
        for dir in found.dirs_in(&qwen.join("tmp")) {
            let folder = FolderKey::Sha256 {
                hash: file_name(&dir).to_string(),
            };
            for path in found.files_in(&dir, |n| checkpoint_tag(n).is_some()) {
                let tag = checkpoint_tag(file_name(&path)).unwrap_or_default();
                found
                    .files
                    .push(stored(path, StoredKind::Checkpoint { tag }, folder.clone()));
            }
            for path in found.files_in(&dir.join("chats"), |n| n.ends_with(".json")) {
                found
                    .files
                    .push(stored(path, StoredKind::Legacy, folder.clone()));
            }
        }
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "qwen-jsonl" {
            return Err(new.refuse_format(Tool::Qwen));
        }
        let file = format!("{}.jsonl", new.safe_id()?);
        Ok(Target::at(inside(
            &self.folder(home).join("projects"),
            &[&dashed(new.project), "chats", &file],
        )?))
    }
}

fn stored(path: PathBuf, kind: StoredKind, folder: FolderKey) -> Stored {
    Stored {
        tool: Tool::Qwen,
        path,
        kind,
        folder,
    }
}
