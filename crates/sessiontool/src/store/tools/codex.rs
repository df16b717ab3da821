//! Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`, archived
//! rollouts in `$CODEX_HOME/archived_sessions/`. The project is only in `session_meta.cwd`.
//! Codex 0.169 lists threads from its state database (`state_5.sqlite`): a new rollout is
//! registered there too, when the database exists.

mod recovery;
mod registration;
mod relocation;
pub mod state;

use std::path::{Path, PathBuf};

use super::{NewSession, PlaceError, Reregistered, Target, ToolStore, by_id, inside};
use crate::store::home::Home;
use crate::store::names::local;
use crate::store::rekey::Move;
use crate::store::relocate::Plan;
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind};
use crate::store::tool::Tool;
use registration::CodexThread;

pub struct Codex;

/// Where Codex keeps everything instead of `~/.codex`.
const HOME_VARIABLE: &str = "CODEX_HOME";
/// Where Codex keeps its SQLite databases instead (before `sqlite_home` in `config.toml`).
const SQLITE_HOME: &str = "CODEX_SQLITE_HOME";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Codex: Tool = Tool::of(&Codex);
}

impl ToolStore for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn current_format(&self) -> &'static str {
        "codex-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[HOME_VARIABLE, SQLITE_HOME]
    }

    /// `~/.codex` (`$CODEX_HOME`).
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(HOME_VARIABLE, || home.dir().join(".codex"))
    }

    fn resume(&self, id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        by_id(&["codex", "resume"], id)
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        Some((HOME_VARIABLE, self.folder(home)))
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        let codex = self.folder(home);
        vec![codex.join("sessions"), codex.join("archived_sessions")]
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        let rollout = |n: &str| n.starts_with("rollout-") && n.ends_with(".jsonl");
        let codex = self.folder(home);
        let mut paths = Vec::new();
        for year in found.dirs_in(&codex.join("sessions")) {
            for month in found.dirs_in(&year) {
                for day in found.dirs_in(&month) {
                    paths.extend(found.files_in(&day, rollout));
                }
            }
        }
        paths.extend(found.files_in(&codex.join("archived_sessions"), rollout));
        found.files.extend(paths.into_iter().map(|path| Stored {
            tool: Tool::Codex,
            path,
            kind: StoredKind::Session,
            folder: FolderKey::None,
        }));
    }

    /// Rows of Codex's state database whose rollout is gone.
    fn index_problems(&self, home: &Home, project: Option<&str>) -> Vec<String> {
        state::index::missing_rollouts(home, project)
    }

    /// The rows of its state database that follow the rollouts.
    fn relocate_indexes(&self, home: &Home, mv: &Move, plan: &mut Plan) {
        relocation::database_rows(home, mv, plan)
    }

    /// A rollout its state database has no row for, a stale row for, or a row made before this
    /// run repaired it.
    fn register_again<'b>(
        &self,
        home: &Home,
        path: &Path,
        bytes: &dyn Fn() -> Result<&'b [u8], String>,
        repaired: bool,
        dry_run: bool,
    ) -> Result<Option<Reregistered>, String> {
        recovery::register_again(home, path, bytes, repaired, dry_run)
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "codex-jsonl" {
            return Err(new.refuse_format(Tool::Codex));
        }
        let start = new.start();
        let day = local(start, "%Y/%m/%d");
        let stamp = local(start, "%Y-%m-%dT%H-%M-%S");
        let codex_home = self.folder(home);
        let dir = crate::store::confined::join_all(&codex_home.join("sessions"), &day)?;
        let file = format!("rollout-{stamp}-{}.jsonl", new.safe_id()?);
        let mut target = Target::at(inside(&dir, &[&file])?);
        // Codex 0.169 lists threads from its state database, not the folders.
        if let Some(databases) = state::locate(home).map_err(PlaceError)? {
            target.registrations.push(Box::new(CodexThread {
                databases,
                codex_home,
            }));
        }
        Ok(target)
    }
}

/// Where `$CODEX_SQLITE_HOME` puts Codex's SQLite databases, when it is set.
pub(crate) fn sqlite_home(home: &Home) -> Option<PathBuf> {
    home.override_of(SQLITE_HOME).map(PathBuf::from)
}
