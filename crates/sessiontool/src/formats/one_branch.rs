//! What every format that holds one branch does before it writes: take the `--leaf` branch (or
//! the head's) and report the nodes left out.

use super::{WriteError, WriteOptions};
use crate::diag::LossReport;
use crate::model::Session;

/// The `message` of a format that says nothing more of its own.
pub(crate) const ONE_BRANCH: &str =
    "nodes on other branches (this format holds one branch; choose with --leaf)";

/// The branch `options.leaf` names (the head's when none), with the nodes on other branches
/// counted in `losses` under `other-branches`, described by `message` (records outside the
/// conversation under `outside-conversation`).
pub(crate) fn one_branch(
    session: &Session,
    options: &WriteOptions,
    message: &'static str,
    losses: &mut LossReport,
) -> Result<Session, WriteError> {
    let (branch, left_out) = session
        .branch(options.leaf.as_deref())
        .map_err(WriteError)?;
    left_out.report(losses, message);
    Ok(branch)
}
