//! The cheap per-entry facts of a Claude Code entry, for fsck: one pass over the entry's
//! fields that borrows strings and skips message text, tool inputs and results without
//! building values.

use crate::formats::keys::{self, object, parent_of, string};
use crate::formats::{Keys, Parent};

/// `None` when the entry is not a JSON object (or not JSON).
pub(super) fn claude_keys(record: &[u8]) -> Option<Keys<'_>> {
    let e = keys::record(record)?;
    let [uuid, parent_raw, session_id, kind, message, logical] = e.pick([
        "uuid",
        "parentUuid",
        "sessionId",
        "type",
        "message",
        "logicalParentUuid",
    ]);
    let (uuid, session_id, kind) = (string(uuid), string(session_id), string(kind));
    if uuid.is_none() {
        // Not a chain entry (`summary`, `file-history-snapshot`, ...): nothing to link.
        return Some(Keys {
            kind,
            ..Keys::default()
        });
    }
    let (mut parent, parent_span) = parent_of(record, parent_raw, false);
    // A `/compact` boundary starts the tool's history anew (`parentUuid: null`) and names the
    // record before it in `logicalParentUuid`.
    if parent == Parent::Root
        && let Some(l) = string(logical)
    {
        parent = Parent::Logical(l);
    }
    let mut missing = Vec::new();
    if parent_raw.is_none() {
        missing.push("parentUuid");
    }
    if session_id.is_none() {
        missing.push("sessionId");
    }
    if kind.is_none() {
        missing.push("type");
    }
    let needs_message = matches!(kind.as_deref(), Some("user" | "assistant"));
    let mut calls = Vec::new();
    let mut results = Vec::new();
    // `message.content`, when `message` is an object that has it.
    match object(message).and_then(|m| e.pick_within(m, ["content"])[0]) {
        Some(content) => {
            let blocks = e.pick_in_items_within(content, ["type", "id", "tool_use_id"]);
            for [t, id, tool_use_id] in blocks.flatten() {
                match string(t).as_deref() {
                    Some("tool_use") => calls.extend(string(id)),
                    Some("tool_result") => results.extend(string(tool_use_id)),
                    _ => {}
                }
            }
        }
        None if needs_message => missing.push("message"),
        None => {}
    }
    Some(Keys {
        id: uuid,
        parent,
        parent_span,
        session_id,
        kind,
        seq: None,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}
