//! What `relocate` changes in simple-agent's `meta.json` path index: the keys naming OLD (or
//! below).

use std::path::Path;

use crate::formats::simple_agent_json::rekey_index;
use crate::store::rekey::Move;
use crate::store::relocate::{Change, Plan};
use crate::store::tool::Tool;

/// The path index at `index`, rekeyed (nothing when it does not exist).
pub(super) fn path_index(index: &Path, mv: &Move, plan: &mut Plan) {
    match crate::io::read_stamped(index) {
        Ok((bytes, read)) => match rekey_index(&bytes, &|p| mv.map_path(p)) {
            Ok(Some((bytes, n))) => plan.changes.push(Change::index(
                Tool::SimpleAgent,
                index.to_path_buf(),
                format!("{n} path_index key(s)"),
                (bytes, read),
                true,
            )),
            Ok(None) => {}
            Err(e) => plan.problems.push(format!("{}: {e}", index.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => plan
            .problems
            .push(format!("cannot read {}: {e}", index.display())),
    }
}
