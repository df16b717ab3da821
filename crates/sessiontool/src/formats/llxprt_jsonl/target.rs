//! What an llxprt session keeps of a session from another format in its `session_start`
//! line: its id as it is (one derived from its start time when it has none), its start (its
//! own, else its first node's time, else `--now`), its working directory (`cwd`, and the
//! project's hash and workspace when the session gives none). What has no line is tallied by
//! the writer at the end, in its own fixed order and words (`write::LOSSES`): only the head
//! goes through the step.

use super::super::normalise::{CallIds, Cwd, MissingId, SessionIds, Start, Target, Time, Unplaced};
use super::NAME;

/// The rules of the step for an llxprt session.
pub(super) const TARGET: Target = Target {
    name: NAME,
    session_ids: SessionIds::any(MissingId::FromStartTime),
    start: Start {
        from: &[Time::Started, Time::FirstNode, Time::Now],
        otherwise: Ok("1970-01-01T00:00:00.000Z"),
    },
    cwd: Cwd::GIVEN,
    calls: CallIds::KEPT,
    // Unused: see the module's doc.
    unplaced: Unplaced::UNSAID,
};
