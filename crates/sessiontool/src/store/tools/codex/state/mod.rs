//! Codex's SQLite state (Codex CLI 0.169.0, checked against the databases it writes): it
//! lists threads from `state_5.sqlite` (table `threads`, one row per rollout: id, rollout
//! path, times, source, model provider, working folder, title, ...) and `codex exec resume
//! --last` resumes the newest row of the current folder and model provider, never a rollout
//! without a row. `thread_history_1.sqlite` holds a projection of each rollout (turns and
//! items with byte offsets into it), which Codex rebuilds from the rollout when it is gone.
//!
//! Whatever sessiontool writes into Codex's store is registered here as Codex itself would
//! register it ([`row`]); relocating rewrites the row's folder and rollout path, and drops a
//! projection whose offsets the rewrite moved. Every change: only when the database exists
//! (Codex makes it, and indexes every rollout it finds when it does), under SQLite's own
//! write lock with a busy timeout (never while Codex writes), after a consistent backup of
//! the database (`<name>.bak-<time>`, SQLite's backup API), all in one transaction committed
//! after the session files are in place and rolled back when they are not.

mod config;
mod db;
pub mod index;
pub mod relocation;
pub mod row;

use std::path::{Path, PathBuf};

pub use db::Located;
pub use row::{Facts, ThreadRow, thread_row};

use crate::store::home::Home;
use crate::store::tool::Tool;
use db::Db;

/// Codex 0.169's state database, the one that lists threads.
pub const STATE_DB: &str = "state_5.sqlite";
/// Its projections of rollouts.
pub const HISTORY_DB: &str = "thread_history_1.sqlite";

/// Where a home's Codex databases are, and what Codex's configuration adds to a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Databases {
    pub state: PathBuf,
    pub history: PathBuf,
    /// The model provider of a rollout that names none.
    pub default_provider: String,
}

/// The databases of `home`'s Codex, when its state database exists: `$CODEX_SQLITE_HOME`,
/// else `sqlite_home` in `config.toml` (not with `--home`: nothing outside it is looked at),
/// else CODEX_HOME. An error when `config.toml` cannot be read (Codex could not start).
pub fn locate(home: &Home) -> Result<Option<Databases>, String> {
    let codex = Tool::Codex.folder(home);
    let state = |dir: &Path| dir.join(STATE_DB);
    // Without a database (a fresh home, an older Codex) there is nothing to keep consistent,
    // and the configuration is not read.
    let env_dir = super::sqlite_home(home);
    if env_dir.is_none() && home.isolated() && !state(&codex).exists() {
        return Ok(None);
    }
    let config = config::read(&codex)?;
    let dir = env_dir
        .or(config.sqlite_home.filter(|_| !home.isolated()))
        .unwrap_or(codex);
    if !state(&dir).exists() {
        return Ok(None);
    }
    Ok(Some(Databases {
        state: state(&dir),
        history: dir.join(HISTORY_DB),
        default_provider: config.default_provider,
    }))
}

/// Whether a rollout lies in `archived_sessions/` (Codex records it archived).
pub fn is_archived(codex_home: &Path, rollout: &Path) -> bool {
    rollout.starts_with(codex_home.join("archived_sessions"))
}

/// A change of Codex's databases under way: the state database's write lock is held and its
/// backup made; nothing is visible to Codex until [`commit`](Writer::commit), and dropping
/// the writer undoes everything.
pub struct Writer {
    databases: Databases,
    stamp: String,
    state: Db,
    /// Opened (locked and backed up) the first time a projection is dropped.
    history: Option<Db>,
    backups: Vec<PathBuf>,
}

impl Writer {
    /// Takes the state database's write lock (waiting while Codex writes), checks that its
    /// `threads` table is one this code writes whole rows into, and backs it up.
    pub fn begin(databases: &Databases, stamp: &str) -> Result<Writer, String> {
        let mut state = Db::open(&databases.state)?;
        state.begin()?;
        state.check_threads_table()?;
        let backup = state.backup(stamp)?;
        Ok(Writer {
            databases: databases.clone(),
            stamp: stamp.to_string(),
            state,
            history: None,
            backups: vec![backup],
        })
    }

    /// Registers the rollout at `path` (its `bytes`, as written) as Codex would when it
    /// finds it: a row from its content and modification time. A row the thread had is
    /// replaced (what the user set on it stays), and its projection of the old rollout goes.
    /// Returns the thread's id.
    pub fn register(
        &mut self,
        codex_home: &Path,
        path: &Path,
        bytes: &[u8],
    ) -> Result<String, String> {
        let mtime_ms = modified_ms(path)?;
        let row = thread_row(
            bytes,
            &Facts {
                path,
                mtime_ms,
                default_provider: &self.databases.default_provider,
                archived: is_archived(codex_home, path),
            },
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        if self.state.thread(&row.id)?.is_some() {
            self.drop_projection(&row.id)?;
        }
        self.state.upsert(&row)?;
        Ok(row.id)
    }

    /// Inserts the row of a thread that has none (relocate: a rollout Codex never indexed).
    pub fn insert(&mut self, row: &ThreadRow) -> Result<(), String> {
        self.state.insert(row)
    }

    /// Moves a thread's row to `cwd` and `rollout_path` (it must still be as planned); when
    /// the rollout's bytes were rewritten, its projection goes too.
    pub fn rekey(
        &mut self,
        was: &Located,
        cwd: &str,
        rollout_path: &str,
        rewritten: bool,
    ) -> Result<(), String> {
        self.state.rekey(was, cwd, rollout_path)?;
        if rewritten {
            self.drop_projection(&was.id)?;
        }
        Ok(())
    }

    /// Drops a thread's projection, if the history database holds one.
    pub fn drop_projection(&mut self, id: &str) -> Result<(), String> {
        if self.history.is_none() {
            if !self.databases.history.exists() {
                return Ok(());
            }
            let db = Db::open(&self.databases.history)?;
            if !db.has_projection(id)? {
                return Ok(());
            }
            let mut db = db;
            db.begin()?;
            self.backups.push(db.backup(&self.stamp)?);
            self.history = Some(db);
        }
        let history = self.history.as_ref().expect("opened above");
        history.drop_projection(id)
    }

    /// Makes every change visible: the projections first (dropping one is always safe),
    /// then the threads. Returns the backups made.
    pub fn commit(self) -> Result<Vec<PathBuf>, String> {
        if let Some(history) = self.history {
            history.commit()?;
        }
        self.state.commit()?;
        Ok(self.backups)
    }

    pub fn state_path(&self) -> &Path {
        &self.databases.state
    }
}

/// Whether the rollout at `path` (its `bytes`) needs its row written: the database has none,
/// or one recording another folder or file.
pub fn needs_registration(
    databases: &Databases,
    path: &Path,
    bytes: &[u8],
) -> Result<bool, String> {
    let facts = Facts {
        path,
        mtime_ms: 0,
        default_provider: &databases.default_provider,
        archived: false,
    };
    let Ok(row) = thread_row(bytes, &facts) else {
        return Ok(false); // not a thread Codex indexes
    };
    let db = Db::open_read_only(&databases.state)?;
    Ok(match db.thread(&row.id)? {
        None => true,
        Some(was) => was.cwd != row.cwd || Path::new(&was.rollout_path) != path,
    })
}

/// A file's modification time in milliseconds since the epoch.
pub fn modified_ms(path: &Path) -> Result<i64, String> {
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("cannot read the time of {}: {e}", path.display()))?;
    Ok(jiff::Timestamp::try_from(modified)
        .map(|t| t.as_millisecond())
        .unwrap_or(0))
}
