//! What a checkpoint keeps of a session from another format: only the API history, and the
//! source format's session fields said as lost. A checkpoint has no id, time nor working
//! directory, so the head's rules are unused; what its history has no place for (timestamps,
//! models, usage, call details) is said by the writer in its own words.

use super::super::normalise::{Target, Unplaced};
use super::NAME;

/// The rules of the step for a checkpoint.
pub(super) const TARGET: Target = Target::keeping_ids(
    NAME,
    // The title and summary are unsaid, as the checkpoint writer always did.
    Unplaced {
        session_fields: Some("session fields of the source format"),
        ..Unplaced::UNSAID
    },
);
