//! What a simple-agent session keeps of a session from another format: its id as it is (`""`
//! when it has none), its working directory as `path`, and no session fields of the source
//! format. Its times are those of the messages written (see `json_document::session_times`).

use super::super::normalise::{Target, Unplaced};
use super::NAME;

/// The rules of the step for a simple-agent session. Messages, parts and calls keep their own
/// words in the writer (`record-fields`, `part-fields` on parts and on calls), and so does the
/// summary (`summary`, not `session-summary`): only the head and the session's fields go
/// through the step.
pub(super) const TARGET: Target = Target::keeping_ids(
    NAME,
    Unplaced {
        session_fields: Some("session fields of the source format"),
        ..Unplaced::UNSAID
    },
);
