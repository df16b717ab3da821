//! Each tool's store: where its session files are, what their folders say about their
//! project, and where a new session of the tool goes. One module per tool.

mod agent;
mod claude;
mod codex;
mod gemini;

pub use gemini::is_sha256;
mod llxprt;
mod pi;
mod qwen;
mod simple_agent;

use std::path::PathBuf;

use super::home::Home;
use super::stored::Discovery;
use super::tool::Tool;
use crate::formats::Format;
use crate::model::Meta;

pub trait ToolStore: Sync {
    fn tool(&self) -> Tool;
    /// The folders this store lives in (for messages saying where sessiontool looked).
    fn roots(&self, home: &Home) -> Vec<PathBuf>;
    /// Adds every session file of the store to `found`.
    fn discover(&self, home: &Home, found: &mut Discovery);
    /// Where a new session goes, and what registries must learn about it.
    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError>;
}

/// A session about to be written into a store.
pub struct NewSession<'a> {
    pub format: &'static dyn Format,
    /// The project's absolute path.
    pub project: &'a str,
    /// The metadata of the session as written (its id and start time name the file).
    pub meta: &'a Meta,
    /// For checkpoints: the tag.
    pub tag: Option<&'a str>,
}

impl NewSession<'_> {
    /// The session id, which every store but the checkpoint's needs.
    fn id(&self) -> Result<&str, PlaceError> {
        self.meta
            .id
            .as_deref()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| PlaceError("the session has no id to name its file".into()))
    }

    /// The id as one safe file-name component.
    fn safe_id(&self) -> Result<String, PlaceError> {
        let id = self.id()?;
        super::names::safe_component(id)
            .ok_or_else(|| PlaceError(format!("the session id {id:?} cannot name a file")))
    }

    fn start(&self) -> jiff::Timestamp {
        super::names::start_of(self.meta.start_time.as_deref())
    }

    fn refuse_format(&self, tool: Tool) -> PlaceError {
        PlaceError(format!(
            "{}'s store holds {}, not {}",
            tool,
            tool.current_format(),
            self.format.name()
        ))
    }
}

/// Where a new session goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub registrations: Vec<Registration>,
}

impl Target {
    fn at(path: PathBuf) -> Target {
        Target {
            path,
            registrations: Vec::new(),
        }
    }
}

/// An index a tool keeps beside its sessions that must name the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registration {
    /// Gemini CLI v0.29+: `projects.json` maps the project to its slug, and `.project_root`
    /// markers in `tmp/<slug>` and `history/<slug>` name the project.
    GeminiProject {
        gemini: PathBuf,
        project: String,
        slug: String,
    },
    /// simple-agent's `sessions/meta.json` path index.
    SimpleAgentIndex {
        index: PathBuf,
        cwd: String,
        id: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlaceError(pub String);

/// Every tool's store.
pub fn all() -> &'static [&'static dyn ToolStore] {
    &[
        &gemini::Gemini,
        &qwen::Qwen,
        &claude::Claude,
        &llxprt::Llxprt,
        &pi::Pi,
        &codex::Codex,
        &agent::Agent,
        &simple_agent::SimpleAgent,
    ]
}

pub fn of(tool: Tool) -> &'static dyn ToolStore {
    *all()
        .iter()
        .find(|s| s.tool() == tool)
        .expect("every tool has a store")
}
