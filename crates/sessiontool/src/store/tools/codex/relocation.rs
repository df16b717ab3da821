//! What `relocate` changes for Codex besides its rollouts: the rows of its state database that
//! follow them (and any other row recorded under OLD), as one more change of the plan.

use std::sync::Arc;

use super::state::relocation::{Moved, Relocation, plan};
use crate::check::Stamp;
use crate::store::home::Home;
use crate::store::rekey::Move;
use crate::store::relocate::{Change, OwnCommit, Plan};
use crate::store::tool::Tool;
use crate::store::txn::Finish;

pub(super) fn database_rows(home: &Home, mv: &Move, relocate: &mut Plan) {
    let moved: Vec<Moved> = relocate
        .files_of(Tool::Codex)
        .map(|c| Moved {
            from: &c.from,
            to: &c.to,
            bytes: c.bytes(),
        })
        .collect();
    match plan(home, &moved, &|p| mv.map_path(p)) {
        Ok(Some(relocation)) => {
            let db = relocation.database().to_path_buf();
            let read = match Stamp::of(&db) {
                Ok(read) => read,
                Err(e) => {
                    relocate
                        .problems
                        .push(format!("cannot read {}: {e}", db.display()));
                    return;
                }
            };
            let inside = relocation.describe();
            let change = Change::database(Tool::Codex, db, inside, read, Arc::new(relocation));
            relocate.changes.push(change);
        }
        Ok(None) => {}
        Err(e) => relocate.problems.push(e),
    }
}

impl OwnCommit for Relocation {
    fn finish(&self, stamp: &str) -> Box<dyn Finish> {
        self.clone().into_finish(stamp)
    }
}
