//! What `relocate` changes in Codex's state database: each re-keyed rollout's row gets the
//! folder and path its rollout now records (a rollout Codex never indexed gets the row Codex
//! would give it), every other row recorded under the old folder follows it (a rerun after an
//! interrupted relocation finishes the job), and the projection of a rewritten rollout goes
//! (its byte offsets moved). Planned from a read of the database; carried out in the commit
//! of relocate's [`Txn`](crate::store::txn::Txn) under the database's write lock, refused when
//! a row changed since the plan.

use std::collections::BTreeMap;
use std::path::Path;

use super::db::{Db, Located};
use super::row::{Facts, ThreadRow, thread_row};
use super::{Databases, Writer};
use crate::store::home::Home;
use crate::store::tool::Tool;
use crate::store::txn::Finish;

/// A rollout relocate writes: where it was, where it goes, its new bytes.
pub struct Moved<'a> {
    pub from: &'a Path,
    pub to: &'a Path,
    pub bytes: &'a [u8],
}

#[derive(Debug, Clone)]
struct Rekey {
    was: Located,
    cwd: String,
    rollout_path: String,
    rewritten: bool,
}

/// The planned change of the state database.
#[derive(Debug, Clone)]
pub struct Relocation {
    databases: Databases,
    rekeys: Vec<Rekey>,
    inserts: Vec<ThreadRow>,
}

impl Relocation {
    pub fn database(&self) -> &Path {
        &self.databases.state
    }

    /// In words, for the plan.
    pub fn describe(&self) -> String {
        let dropped = self.rekeys.iter().filter(|r| r.rewritten).count();
        format!(
            "{} thread row(s) moved (cwd, rollout_path), {} registered; the projections of rewritten rollouts in {} dropped (up to {dropped}), Codex rebuilds them; backed up first",
            self.rekeys.len(),
            self.inserts.len(),
            super::HISTORY_DB
        )
    }

    /// The change, made with the files of `stamp`'s commit.
    pub fn into_finish(self, stamp: &str) -> Box<dyn Finish> {
        Box::new(Pending {
            relocation: self,
            stamp: stamp.to_string(),
            writer: None,
        })
    }
}

/// Plans the database change for the rollouts relocate writes; `map` is the move's path rule.
/// `None` when there is nothing to change (or no database).
pub fn plan(
    home: &Home,
    moved: &[Moved],
    map: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Relocation>, String> {
    let Some(databases) = super::locate(home)? else {
        return Ok(None);
    };
    let db = Db::open_read_only(&databases.state)?;
    let rows: BTreeMap<String, Located> = db
        .threads()?
        .into_iter()
        .map(|r| (r.id.clone(), r))
        .collect();
    let mut relocation = Relocation {
        databases,
        rekeys: Vec::new(),
        inserts: Vec::new(),
    };
    let mut covered = std::collections::BTreeSet::new();
    for m in moved {
        let mtime_ms = super::modified_ms(m.from)?;
        let Ok(row) = thread_row(
            m.bytes,
            &Facts {
                path: m.to,
                mtime_ms,
                default_provider: &relocation.databases.default_provider,
                archived: super::is_archived(&Tool::Codex.folder(home), m.to),
            },
        ) else {
            continue; // not a thread Codex indexes
        };
        covered.insert(row.id.clone());
        match rows.get(&row.id) {
            Some(was) => relocation.rekeys.push(Rekey {
                was: was.clone(),
                cwd: row.cwd.clone(),
                rollout_path: row.rollout_path.clone(),
                rewritten: true,
            }),
            None => relocation.inserts.push(row),
        }
    }
    // Rows recorded under the old folder whose rollout was rewritten before (or is not one
    // relocate rewrites): they follow the folder.
    for (id, was) in &rows {
        if covered.contains(id) {
            continue;
        }
        if let Some(cwd) = map(&was.cwd) {
            let rollout_path = moved
                .iter()
                .find(|m| Path::new(&was.rollout_path) == m.from)
                .map_or(was.rollout_path.clone(), |m| m.to.display().to_string());
            relocation.rekeys.push(Rekey {
                was: was.clone(),
                cwd,
                rollout_path,
                rewritten: false,
            });
        }
    }
    relocation
        .rekeys
        .retain(|r| r.rewritten || r.cwd != r.was.cwd || r.rollout_path != r.was.rollout_path);
    if relocation.rekeys.is_empty() && relocation.inserts.is_empty() {
        return Ok(None);
    }
    Ok(Some(relocation))
}

struct Pending {
    relocation: Relocation,
    stamp: String,
    writer: Option<Writer>,
}

impl Finish for Pending {
    fn prepare(&mut self) -> std::io::Result<()> {
        let mut writer = Writer::begin(&self.relocation.databases, &self.stamp)
            .map_err(std::io::Error::other)?;
        for r in &self.relocation.rekeys {
            writer
                .rekey(&r.was, &r.cwd, &r.rollout_path, r.rewritten)
                .map_err(std::io::Error::other)?;
        }
        for row in &self.relocation.inserts {
            writer.insert(row).map_err(std::io::Error::other)?;
        }
        self.writer = Some(writer);
        Ok(())
    }

    fn commit(self: Box<Self>) -> std::io::Result<()> {
        let writer = self
            .writer
            .ok_or_else(|| std::io::Error::other("Codex's state database was not prepared"))?;
        writer
            .commit()
            .map(|_| ())
            .map_err(|e| std::io::Error::other(format!("the files are in place, but {e}; run relocate again to update Codex's state database")))
    }
}
