//! simple-agent-go: `~/.simple-agent/sessions/<id>.json` and the `meta.json` path index.

use std::path::PathBuf;

use super::{NewSession, PlaceError, Registration, Target, ToolStore, inside};
use crate::store::home::Home;
use crate::store::rekey::Move;
use crate::store::relocate::{self, Plan};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind};
use crate::store::tool::Tool;

pub struct SimpleAgent;

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

    fn bases(&self, home: &Home) -> Vec<PathBuf> {
        vec![home.simple_agent()]
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        vec![home.simple_agent().join("sessions")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let dir = home.simple_agent().join("sessions");
        let paths = found.files_in(&dir, |n| n.ends_with(".json") && n != INDEX);
        found.files.extend(paths.into_iter().map(|path| Stored {
            tool: Tool::SimpleAgent,
            path,
            kind: StoredKind::Session,
            folder: FolderKey::None,
        }));
    }

    fn registries(&self, home: &Home) -> Vec<PathBuf> {
        vec![home.simple_agent().join("sessions").join(INDEX)]
    }

    fn relocate_indexes(&self, home: &Home, mv: &Move, plan: &mut Plan) {
        relocate::simple_agent_index(home, mv, plan)
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "simple-agent-json" {
            return Err(new.refuse_format(Tool::SimpleAgent));
        }
        let dir = home.simple_agent().join("sessions");
        let id = new.safe_id()?;
        Ok(Target {
            path: inside(&dir, &[&format!("{id}.json")])?,
            registrations: vec![Registration::SimpleAgentIndex {
                index: dir.join(INDEX),
                cwd: new.project.to_string(),
                id: new.id()?.to_string(),
            }],
        })
    }
}
