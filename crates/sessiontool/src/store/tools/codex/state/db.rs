//! One of Codex's SQLite databases, opened the way a careful second writer opens it: never
//! created (a missing database is Codex's to make), its write lock taken with SQLite's own
//! locking (`BEGIN IMMEDIATE`, waiting up to [`BUSY_TIMEOUT`] while Codex holds it), a
//! consistent copy made with SQLite's backup API inside that transaction (so the copy is the
//! database exactly as it was before this change, never a file copy of a live WAL database),
//! and every change rolled back unless committed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params_from_iter};

use super::row::{Cell, ThreadRow};

/// How long a write waits for Codex to finish a write of its own.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

fn busy_timeout() -> Duration {
    crate::io::sqlite::busy_timeout(BUSY_TIMEOUT)
}

/// A column of a table: whether it must be given a value.
#[derive(Debug, Clone, Copy)]
struct Column {
    required: bool,
}

pub struct Db {
    pub path: PathBuf,
    conn: Connection,
    in_transaction: bool,
}

/// A thread's row as far as relocating and checking need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub id: String,
    pub cwd: String,
    pub rollout_path: String,
}

fn sql_error(path: &Path, e: rusqlite::Error) -> String {
    if crate::io::sqlite::is_busy(&e) {
        format!(
            "{} is locked by another process (Codex writing to it) for over {} ms; try again when it is done",
            path.display(),
            busy_timeout().as_millis()
        )
    } else {
        format!("{}: {e}", path.display())
    }
}

impl Db {
    /// Opens an existing database for reading and writing.
    pub fn open(path: &Path) -> Result<Db, String> {
        Self::open_with(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
    }

    /// Opens an existing database for reading only.
    pub fn open_read_only(path: &Path) -> Result<Db, String> {
        Self::open_with(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }

    fn open_with(path: &Path, mode: OpenFlags) -> Result<Db, String> {
        let flags = mode | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_error(path, e))?;
        conn.busy_timeout(busy_timeout())
            .map_err(|e| sql_error(path, e))?;
        Ok(Db {
            path: path.to_path_buf(),
            conn,
            in_transaction: false,
        })
    }

    fn err(&self, e: rusqlite::Error) -> String {
        sql_error(&self.path, e)
    }

    /// The columns of `table` (empty when there is no such table).
    fn columns(&self, table: &str) -> Result<BTreeMap<String, Column>, String> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, \"notnull\", dflt_value IS NULL, pk FROM pragma_table_info(?1)")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([table], |r| {
                let name: String = r.get(0)?;
                let not_null: bool = r.get(1)?;
                let no_default: bool = r.get(2)?;
                let pk: i64 = r.get(3)?;
                Ok((
                    name,
                    Column {
                        required: not_null && no_default && pk == 0,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Takes the write lock (waiting while Codex holds it): from here until
    /// [`commit`](Db::commit) no other process writes the database.
    pub fn begin(&mut self) -> Result<(), String> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err(e))?;
        self.in_transaction = true;
        Ok(())
    }

    pub fn commit(mut self) -> Result<(), String> {
        crate::fault::point("codex-state.before-commit").map_err(|e| e.to_string())?;
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| sql_error(&self.path, e))?;
        self.in_transaction = false;
        Ok(())
    }

    /// Copies the database as it is before this transaction changes anything to
    /// `<name>.bak-<stamp>` beside it (written whole under a temp name first). Call after
    /// [`begin`](Db::begin), before any change: the write lock held, nobody else can commit,
    /// so a second connection's read (SQLite's backup API refuses a source connection that
    /// holds the write lock) is the state this transaction starts from.
    pub fn backup(&self, stamp: &str) -> Result<PathBuf, String> {
        debug_assert!(self.in_transaction);
        let io = |e: std::io::Error| format!("cannot back up {}: {e}", self.path.display());
        let temp = crate::io::temp::temp_name_beside(&self.path, "backup");
        let copied = Db::open_read_only(&self.path).and_then(|reader| {
            reader
                .conn
                .backup(
                    rusqlite::MAIN_DB,
                    &temp,
                    None::<fn(rusqlite::backup::Progress)>,
                )
                .map_err(|e| format!("cannot back up {}: {e}", self.path.display()))
        });
        let finish = || -> std::io::Result<PathBuf> {
            std::fs::File::open(&temp)?.sync_all()?;
            let backup = crate::io::replace::fresh_name(&self.path, None, "bak", stamp);
            // A link, then the temp name goes: an existing name is never replaced.
            std::fs::hard_link(&temp, &backup)?;
            std::fs::remove_file(&temp)?;
            crate::io::sync_dir(self.path.parent().unwrap_or(Path::new(".")))?;
            Ok(backup)
        };
        let result = copied.and_then(|()| finish().map_err(io));
        // What the backup connection may have left (its journal) goes with the temp name.
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut name = temp.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        crate::fault::point("codex-state.backed-up").map_err(|e| e.to_string())?;
        result
    }

    /// The rows of every thread.
    pub fn threads(&self) -> Result<Vec<Located>, String> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, cwd, rollout_path FROM threads")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Located {
                    id: r.get(0)?,
                    cwd: r.get(1)?,
                    rollout_path: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The row of thread `id`, if any.
    pub fn thread(&self, id: &str) -> Result<Option<Located>, String> {
        self.conn
            .query_row(
                "SELECT id, cwd, rollout_path FROM threads WHERE id = ?1",
                [id],
                |r| {
                    Ok(Located {
                        id: r.get(0)?,
                        cwd: r.get(1)?,
                        rollout_path: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Refuses a `threads` table this code cannot write a whole row into: a column Codex
    /// requires that sessiontool does not know, or one of the columns every version has
    /// missing.
    pub fn check_threads_table(&self) -> Result<(), String> {
        let columns = self.columns("threads")?;
        let known: Vec<&str> = ThreadRow::known_columns();
        let unknown: Vec<&String> = columns
            .iter()
            .filter(|(name, c)| c.required && !known.contains(&name.as_str()))
            .map(|(name, _)| name)
            .collect();
        let missing: Vec<&str> = ["id", "rollout_path", "cwd", "created_at", "updated_at"]
            .into_iter()
            .filter(|c| !columns.contains_key(*c))
            .collect();
        if columns.is_empty() || !unknown.is_empty() || !missing.is_empty() {
            return Err(format!(
                "{} has a threads table this sessiontool does not know (required but unknown: {unknown:?}; missing: {missing:?}): a newer or older Codex made it",
                self.path.display()
            ));
        }
        Ok(())
    }

    /// Inserts the row, or updates the thread's row as Codex does when it reconciles a
    /// rollout: a paginated thread stays paginated, an empty preview keeps the old one, the
    /// originator, creator and git facts already recorded stay, the recency moves forward,
    /// and what the user set (name, pin, section, project, memory mode) is kept.
    pub fn upsert(&self, row: &ThreadRow) -> Result<(), String> {
        let present = self.columns("threads")?;
        let cells: Vec<(&str, Cell)> = row
            .cells()
            .into_iter()
            .filter(|(c, _)| present.contains_key(*c))
            .collect();
        let names: Vec<&str> = cells.iter().map(|(c, _)| *c).collect();
        let updates: Vec<String> = names
            .iter()
            .filter(|c| !matches!(**c, "id" | "memory_mode"))
            .map(|c| {
                let value = match *c {
                    "history_mode" => "CASE WHEN threads.history_mode = 'paginated' THEN threads.history_mode ELSE excluded.history_mode END".to_string(),
                    "preview" => "COALESCE(NULLIF(excluded.preview, ''), threads.preview)".to_string(),
                    "originator" | "git_sha" | "git_branch" | "git_origin_url" => {
                        format!("COALESCE(threads.{c}, excluded.{c})")
                    }
                    "recency_at_ms" => "MAX(excluded.recency_at_ms, threads.recency_at_ms + 1)".to_string(),
                    "recency_at" if names.contains(&"recency_at_ms") => {
                        "MAX(excluded.recency_at, MAX(excluded.recency_at_ms, threads.recency_at_ms + 1) / 1000)".to_string()
                    }
                    _ => format!("excluded.{c}"),
                };
                format!("{c} = {value}")
            })
            .collect();
        let sql = format!(
            "INSERT INTO threads ({}) VALUES ({}) ON CONFLICT(id) DO UPDATE SET {}",
            names.join(", "),
            vec!["?"; names.len()].join(", "),
            updates.join(", ")
        );
        self.conn
            .execute(&sql, params_from_iter(cells.iter().map(|(_, v)| to_sql(v))))
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Inserts the row of a thread that has none; an error if one appeared meanwhile.
    pub fn insert(&self, row: &ThreadRow) -> Result<(), String> {
        if self.thread(&row.id)?.is_some() {
            return Err(format!(
                "{}: a row for thread {} appeared since the plan was made; nothing was changed, run it again",
                self.path.display(),
                row.id
            ));
        }
        self.upsert(row)
    }

    /// Moves a thread's row to a new working folder and rollout path, if it still records
    /// what it recorded when the plan was made; otherwise an error (nothing is committed).
    pub fn rekey(&self, was: &Located, cwd: &str, rollout_path: &str) -> Result<(), String> {
        let changed = self
            .conn
            .execute(
                "UPDATE threads SET cwd = ?1, rollout_path = ?2 WHERE id = ?3 AND cwd = ?4 AND rollout_path = ?5",
                rusqlite::params![cwd, rollout_path, was.id, was.cwd, was.rollout_path],
            )
            .map_err(|e| self.err(e))?;
        if changed != 1 {
            return Err(format!(
                "{}: the row of thread {} changed since the plan was made; nothing was changed, run it again",
                self.path.display(),
                was.id
            ));
        }
        Ok(())
    }

    /// Whether the thread has a projection in this (thread history) database.
    pub fn has_projection(&self, id: &str) -> Result<bool, String> {
        let mut any = false;
        for table in PROJECTION_TABLES {
            if self.columns(table)?.is_empty() {
                continue;
            }
            let n: i64 = self
                .conn
                .query_row(
                    &format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?1"),
                    [id],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e))?;
            any |= n > 0;
        }
        Ok(any)
    }

    /// Drops the thread's projection of its rollout (its turns, items and the cursor into the
    /// rollout's bytes): it holds byte offsets of the old bytes. Codex projects the rollout
    /// again from its start when the thread is next read (items and turns come out the same:
    /// their ids are in the rollout).
    pub fn drop_projection(&self, id: &str) -> Result<(), String> {
        for table in PROJECTION_TABLES {
            if self.columns(table)?.is_empty() {
                continue;
            }
            self.conn
                .execute(&format!("DELETE FROM {table} WHERE thread_id = ?1"), [id])
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

/// The tables of `thread_history_1.sqlite` that project a rollout (`thread_realtime_items`
/// goes with the cursor row, by Codex's own trigger).
const PROJECTION_TABLES: [&str; 4] = [
    "thread_items",
    "thread_turns",
    "thread_realtime_items",
    "thread_history_projection_state",
];

fn to_sql(cell: &Cell) -> rusqlite::types::Value {
    match cell {
        Cell::Int(i) => rusqlite::types::Value::Integer(*i),
        Cell::Text(s) => rusqlite::types::Value::Text(s.clone()),
        Cell::Null => rusqlite::types::Value::Null,
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if self.in_transaction {
            // Not committed: nothing of it stays.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
