//! simple-agent-go: `~/.simple-agent/sessions/<id>.json` and the `meta.json` path index.

mod registration;
mod relocation;

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, inside};
use crate::store::home::Home;
use crate::store::rekey::Move;
use crate::store::relocate::Plan;
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind};
use crate::store::tool::Tool;
use registration::SimpleAgentIndex;

pub struct SimpleAgent;

/// The path index, in the sessions' folder.
const INDEX: &str = "meta.json";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const SimpleAgent: Tool = Tool::of(&SimpleAgent);
}

impl ToolStore for SimpleAgent {
    fn name(&self) -> &'static str {
        "simple-agent"
    }

    fn current_format(&self) -> &'static str {
        "simple-agent-json"
    }

    /// `~/.simple-agent` (no variable moves it).
    fn folder(&self, home: &Home) -> PathBuf {
        home.dir().join(".simple-agent")
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![sessions(home)]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let paths = found.files_in(&sessions(home), |n| n.ends_with(".json") && n != INDEX);
        found.files.extend(paths.into_iter().map(|path| Stored {
            tool: Tool::SimpleAgent,
            path,
            kind: StoredKind::Session,
            folder: FolderKey::None,
        }));
    }

    fn registries(&self, home: &Home) -> Vec<PathBuf> {
        vec![sessions(home).join(INDEX)]
    }

    fn relocate_indexes(&self, home: &Home, mv: &Move, plan: &mut Plan) {
        relocation::path_index(&sessions(home).join(INDEX), mv, plan)
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "simple-agent-json" {
            return Err(new.refuse_format(Tool::SimpleAgent));
        }
        let dir = sessions(home);
        let id = new.safe_id()?;
        let mut target = Target::at(inside(&dir, &[&format!("{id}.json")])?);
        target.registrations.push(Box::new(SimpleAgentIndex {
            index: dir.join(INDEX),
            cwd: new.project.to_string(),
            id: new.id()?.to_string(),
        }));
        Ok(target)
    }
}

/// `~/.simple-agent/sessions`: the sessions and their index.
fn sessions(home: &Home) -> PathBuf {
    SimpleAgent.folder(home).join("sessions")
}
