//! pi: `~/.pi/agent/sessions/--<path>--/<ISO time>_<uuid>.jsonl`.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, inside};
use crate::store::home::Home;
use crate::store::names::utc;
use crate::store::scheme::{Scheme, pi};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind, file_name};
use crate::store::tool::Tool;

pub struct Pi;

/// Where pi keeps everything instead of `~/.pi/agent`.
const AGENT_DIR: &str = "PI_CODING_AGENT_DIR";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Pi: Tool = Tool::of(&Pi);
}

impl ToolStore for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn current_format(&self) -> &'static str {
        "pi-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[AGENT_DIR]
    }

    /// `~/.pi/agent` (`$PI_CODING_AGENT_DIR`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(AGENT_DIR, || home.dir().join(".pi/agent"))
    }

    fn resume(&self, _id: Option<&str>, path: &str) -> Option<Vec<String>> {
        Some(vec!["pi".into(), "--session".into(), path.into()])
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        Some((AGENT_DIR, self.folder(home)))
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home).join("sessions")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        for dir in found.dirs_in(&self.folder(home).join("sessions")) {
            let folder = FolderKey::Named {
                scheme: Scheme::Pi,
                name: file_name(&dir).to_string(),
            };
            for path in found.files_in(&dir, |n| n.ends_with(".jsonl")) {
                found.files.push(Stored {
                    tool: Tool::Pi,
                    path,
                    kind: StoredKind::Session,
                    folder: folder.clone(),
                });
            }
        }
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "pi-jsonl" {
            return Err(new.refuse_format(Tool::Pi));
        }
        // pi writes the ISO time with `:` and `.` as `-`: 2025-12-01T10-00-00-000Z.
        let stamp = utc(new.start(), "%Y-%m-%dT%H-%M-%S-%3fZ");
        let file = format!("{stamp}_{}.jsonl", new.safe_id()?);
        Ok(Target::at(inside(
            &self.folder(home).join("sessions"),
            &[&pi(new.project), &file],
        )?))
    }
}
