//! What a Gemini session (a JSON ConversationRecord, or the same records as JSONL lines) keeps
//! of a session from another format: its id as it is (`""` when it has none), its working
//! directory only as the project's hash, and neither its title nor the source format's
//! session fields. Its times are those of the messages written (see
//! `json_document::session_times`); its messages, parts and calls keep their own words in the
//! writer.

use super::super::normalise::{Target, Unplaced};
use super::NAME;

/// The rules of the step for both Gemini layouts. Gemini says the session's fields before its
/// title: the writer calls [`Unplaced::session_fields`] and [`Unplaced::title`] in that order.
/// The summary is kept (the record has a `summary`).
pub(super) const TARGET: Target = Target::keeping_ids(
    NAME,
    Unplaced {
        title: Some("the session title (no field for it)"),
        session_fields: Some(
            "session fields of the source format (for example a checkpoint's authType)",
        ),
        ..Unplaced::UNSAID
    },
);
