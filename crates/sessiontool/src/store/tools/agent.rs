//! The Go agent (seed 002): `$XDG_CONFIG_HOME/agent/sessions/YYYYMMDD-HHMMSS-<8 hex>.jsonl`.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, inside};
use crate::store::home::Home;
use crate::store::names::{prefix, utc};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind};
use crate::store::tool::Tool;

pub struct Agent;

/// Where XDG programs keep their configuration, `~/.config` when it is not set.
const CONFIG_HOME: &str = "XDG_CONFIG_HOME";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Agent: Tool = Tool::of(&Agent);
}

impl ToolStore for Agent {
    fn name(&self) -> &'static str {
        "agent"
    }

    fn current_format(&self) -> &'static str {
        "agent-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[CONFIG_HOME]
    }

    /// `$XDG_CONFIG_HOME/agent` (default `~/.config/agent`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(CONFIG_HOME, || home.dir().join(".config"))
            .join("agent")
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home).join("sessions")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let sessions = self.folder(home).join("sessions");
        let paths = found.files_in(&sessions, |n| n.ends_with(".jsonl"));
        found.files.extend(paths.into_iter().map(|path| Stored {
            tool: Tool::Agent,
            path,
            kind: StoredKind::Session,
            folder: FolderKey::None,
        }));
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "agent-jsonl" {
            return Err(new.refuse_format(Tool::Agent));
        }
        let stamp = utc(new.start(), "%Y%m%d-%H%M%S");
        let id = new.safe_id()?;
        let file = format!("{stamp}-{}.jsonl", prefix(&id, 8));
        Ok(Target::at(inside(
            &self.folder(home).join("sessions"),
            &[&file],
        )?))
    }
}
