//! Each tool's store: where its session files are, what their folders say about their
//! project, and where a new session of the tool goes. One module per tool.

mod agent;
mod claude;
pub(crate) mod codex;
pub(crate) mod gemini;

pub use gemini::is_sha256;
mod llxprt;
pub(crate) mod opencode;
mod pi;
mod qwen;
mod registration;
mod simple_agent;

pub use registration::{AfterSession, Registration, RegistryLocks, Reregistered};

use std::path::PathBuf;

use super::home::Home;
use super::stored::Discovery;
use super::tool::Tool;
use crate::formats::Format;
use crate::model::Meta;

/// Everything sessiontool knows about one tool, declared by the tool's module; a [`Tool`] is
/// a handle on it.
pub trait ToolStore: Sync {
    /// The name used on the command line and in JSON (`--tool qwen`).
    fn name(&self) -> &'static str;
    /// The format the tool writes new sessions in today.
    fn current_format(&self) -> &'static str;
    /// The environment variables that move the tool's folders, as the tool reads them.
    fn overrides(&self) -> &'static [&'static str] {
        &[]
    }
    /// The tool's own folder under `home`, where it keeps its sessions and indexes (`~/.gemini`,
    /// `$CODEX_HOME`), as its variables move it.
    fn folder(&self, home: &Home) -> PathBuf;
    /// The folders the tool keeps everything under (writers follow no link below them): its
    /// [`folder`](ToolStore::folder), unless its module says more.
    fn bases(&self, home: &Home) -> Vec<PathBuf> {
        vec![self.folder(home)]
    }
    /// The words that resume the session `id` stored at `path` (absolute), when the tool
    /// has a command for it and the command has what it needs (most need the id).
    fn resume(&self, _id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        None
    }
    /// With `--home DIR`, the variable and folder that point the tool at the store there.
    fn home_variable(&self, _home: &Home) -> Option<(&'static str, PathBuf)> {
        None
    }
    /// Sessions the tool keeps in a database rather than files, for `list` (problems reading
    /// it go to `problems`).
    fn database_entries(
        &self,
        _home: &Home,
        _problems: &mut Vec<String>,
    ) -> Vec<super::catalog::Entry> {
        Vec::new()
    }
    /// What the tool's own index says is wrong with its store (`list`'s problems), for the
    /// project when one is asked for.
    fn index_problems(&self, _home: &Home, _project: Option<&str>) -> Vec<String> {
        Vec::new()
    }
    /// The registries and indexes that record project paths, rewritten for a relocation
    /// (called once the session files' changes are planned).
    fn relocate_indexes(
        &self,
        _home: &Home,
        _mv: &super::rekey::Move,
        _plan: &mut super::relocate::Plan,
    ) {
    }
    /// For `recover`: registers the session file at `path` again in the tool's own index when
    /// the index has no entry for it or a stale one, or when `repaired` (this run rewrote the
    /// file); `None` when the tool keeps no such index or it is up to date. `bytes` gives the
    /// file read whole, asked only when there is an index to compare it with. A dry run says
    /// what it would do and writes nothing.
    fn register_again<'b>(
        &self,
        _home: &Home,
        _path: &std::path::Path,
        _bytes: &dyn Fn() -> Result<&'b [u8], String>,
        _repaired: bool,
        _dry_run: bool,
    ) -> Result<Option<Reregistered>, String> {
        Ok(None)
    }
    /// What its store can be migrated to (`migrate --to`), and how.
    fn migrations(&self) -> &'static [super::migrate::Migration] {
        &[]
    }
    /// The folders this store lives in (for messages saying where sessiontool looked).
    fn roots(&self, home: &Home) -> Vec<PathBuf>;
    /// Adds every session file of the store to `found`.
    fn discover(&self, home: &Home, found: &mut Discovery);
    /// Where a new session goes, and what registries must learn about it.
    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError>;

    /// The registry and index files [`place`](ToolStore::place) reads to decide and its
    /// registrations write: a writer holds their locks from before `place` to the last write.
    fn registries(&self, _home: &Home) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Whether a session of `project` could be placed as far as the registries say (not
    /// damaged), and the registry files besides [`registries`](ToolStore::registries) that
    /// placing it would write: for a caller that changes other things first.
    fn check_registries(&self, _home: &Home, _project: &str) -> Result<Vec<PathBuf>, PlaceError> {
        Ok(Vec::new())
    }
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
#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    /// What the tool's registries and indexes must learn of it, in the order they are written.
    pub registrations: Vec<Box<dyn Registration>>,
}

impl Target {
    fn at(path: PathBuf) -> Target {
        Target {
            path,
            registrations: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlaceError(pub String);

impl From<super::confined::NotAName> for PlaceError {
    fn from(e: super::confined::NotAName) -> Self {
        PlaceError(format!("{e}; nothing was written"))
    }
}

/// `base/names[0]/names[1]/...`, each name checked to be one plain name
/// ([`confined::join`](super::confined::join)): what the tools' `place` build paths with.
fn inside(base: &std::path::Path, names: &[&str]) -> Result<PathBuf, PlaceError> {
    let mut path = base.to_path_buf();
    for name in names {
        path = super::confined::join(&path, name)?;
    }
    Ok(path)
}

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
        &opencode::OpenCode,
    ]
}

pub fn of(tool: Tool) -> &'static dyn ToolStore {
    tool.store()
}

/// The words of a command that resumes a session by its id.
fn by_id(words: &[&str], id: Option<&str>) -> Option<Vec<String>> {
    let mut argv: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    argv.push(id?.to_string());
    Some(argv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Meta;
    use proptest::prelude::*;

    /// How deep below its store's first root each tool files a session: a project folder
    /// that came out empty (the root itself) or a name that escaped would change it.
    fn depth(tool: Tool, format: &str) -> usize {
        match (tool.name(), format) {
            ("gemini", "checkpoint") => 2,
            ("gemini" | "qwen" | "llxprt", _) => 3,
            ("claude" | "pi", _) => 2,
            ("codex", _) => 4,
            ("agent" | "simple-agent", _) => 1,
            (name, _) => unreachable!("no depth known for {name}'s store"),
        }
    }

    fn placed(home: &Home, tool: Tool, format: &str, project: &str, id: &str) {
        let format: &'static dyn Format = crate::formats::by_name(format).unwrap();
        let meta = Meta {
            id: Some(id.to_string()),
            start_time: Some("2026-01-02T03:04:05Z".into()),
            ..Meta::default()
        };
        let new = NewSession {
            format,
            project,
            meta: &meta,
            tag: Some(id),
        };
        let store = of(tool);
        if let Ok(target) = store.place(home, &new) {
            let root = &store.roots(home)[0];
            let rel = target
                .path
                .strip_prefix(root)
                .unwrap_or_else(|_| panic!("{tool} {project:?} {id:?}: {:?}", target.path));
            assert!(
                rel.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_))),
                "{tool} {project:?} {id:?}: {rel:?}"
            );
            assert_eq!(
                rel.components().count(),
                depth(tool, format.name()),
                "{tool} {project:?} {id:?}: {rel:?}"
            );
        }
    }

    fn every_store(home: &Home, project: &str, id: &str) {
        for tool in Tool::all().filter(|t| !t.read_only()) {
            placed(home, tool, tool.current_format(), project, id);
        }
        placed(home, Tool::Gemini, "checkpoint", project, id);
        placed(home, Tool::Gemini, "gemini-json", project, id);
    }

    /// Each tool's folder under a plain home and where its variable moves it, as its module
    /// declares them: the paths the tools use, which no change may move.
    #[test]
    fn each_tools_folder_under_a_home_and_moved_by_its_variable() {
        use std::path::Path;
        let home = Home::at("/h");
        let folders = [
            (Tool::Gemini, "/h/.gemini", "GEMINI_CLI_HOME", "/x/.gemini"),
            (Tool::Qwen, "/h/.qwen", "QWEN_RUNTIME_DIR", "/x"),
            (Tool::Claude, "/h/.claude", "CLAUDE_CONFIG_DIR", "/x"),
            (
                Tool::Llxprt,
                "/h/.local/state/llxprt-code",
                "LLXPRT_LOG_HOME",
                "/x",
            ),
            (Tool::Pi, "/h/.pi/agent", "PI_CODING_AGENT_DIR", "/x"),
            (Tool::Codex, "/h/.codex", "CODEX_HOME", "/x"),
            (
                Tool::Agent,
                "/h/.config/agent",
                "XDG_CONFIG_HOME",
                "/x/agent",
            ),
            (
                Tool::SimpleAgent,
                "/h/.simple-agent",
                "",
                "/h/.simple-agent",
            ),
            (
                Tool::OpenCode,
                "/h/.local/share/opencode",
                "XDG_DATA_HOME",
                "/x/opencode",
            ),
        ];
        assert_eq!(
            folders.map(|f| f.0).to_vec(),
            Tool::all().collect::<Vec<_>>()
        );
        for (tool, plain, var, moved) in folders {
            assert_eq!(tool.folder(&home), Path::new(plain), "{tool}");
            let home = Home::at("/h").with_override(var, "/x");
            assert_eq!(tool.folder(&home), Path::new(moved), "{tool} {var}");
        }
        // llxprt-code's older layout stays in the home; OpenCode's database and Codex's
        // SQLite folder are where their variables say only.
        assert_eq!(
            Tool::Llxprt.store().bases(&home),
            [
                PathBuf::from("/h/.local/state/llxprt-code/tmp"),
                PathBuf::from("/h/.llxprt/tmp")
            ]
        );
        assert_eq!(opencode::db_override(&home), None);
        assert_eq!(codex::sqlite_home(&home), None);
        let home = home
            .with_override("LLXPRT_LOG_HOME", "/l")
            .with_override("CODEX_SQLITE_HOME", "/s")
            .with_override("XDG_DATA_HOME", "/d")
            .with_override("OPENCODE_DB", "alt.db");
        assert_eq!(Tool::Llxprt.store().bases(&home)[0], Path::new("/l/tmp"));
        assert_eq!(codex::sqlite_home(&home).unwrap(), Path::new("/s"));
        assert_eq!(
            opencode::db_override(&home).unwrap(),
            Path::new("/d/opencode/alt.db")
        );
        let home = home.with_override("OPENCODE_DB", "/db/abs.db");
        assert_eq!(
            opencode::db_override(&home).unwrap(),
            Path::new("/db/abs.db")
        );
        let home = home.with_override("OPENCODE_DB", ":memory:");
        assert_eq!(opencode::db_override(&home), None);
    }

    #[test]
    fn a_tools_first_variable_moves_its_folders_and_no_other_tools() {
        let plain = Home::at("/h");
        for tool in Tool::all() {
            let Some(var) = tool.store().overrides().first() else {
                continue;
            };
            let moved = Home::at("/h").with_override(var, "/elsewhere/x");
            for other in Tool::all() {
                let (before, after) = (other.store().bases(&plain), other.store().bases(&moved));
                assert_eq!(
                    before != after,
                    other == tool,
                    "{var} and {other}'s folders: {before:?} -> {after:?}"
                );
            }
        }
        let vars = crate::store::home::overrides();
        let mut unique = vars.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), vars.len(), "{vars:?}");
    }

    #[test]
    fn an_empty_or_odd_project_or_id_never_names_the_store_itself_or_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        for project in [
            "",
            "/",
            "/w/app",
            "..",
            "/..",
            "/w/..",
            "a/../../b",
            "\\",
            "C:\\x",
        ] {
            for id in ["0b23371a-aaaa", "..", ".", "../x", "a/b", "\0", ""] {
                every_store(&home, project, id);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn a_hostile_project_or_id_never_leaves_its_store(
            project in prop_oneof![any::<String>(), "(/|\\.\\.|\\\\|\\.|:|\0|[a-z]){0,12}"],
            id in prop_oneof![any::<String>(), "(/|\\.\\.|\\\\|\\.|:|\0|[a-z0-9]){0,12}"],
        ) {
            let dir = tempfile::tempdir().unwrap();
            every_store(&Home::at(dir.path()), &project, &id);
        }
    }
}
