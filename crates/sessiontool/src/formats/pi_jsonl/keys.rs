//! The cheap per-record facts of a pi line, for fsck: one pass over the line's fields that
//! borrows strings and skips message text without building values. The message and its blocks
//! are looked into only when they are objects (a damaged field of another type never hides the
//! rest).

use std::borrow::Cow;

use crate::formats::Keys;
use crate::formats::keys::{self, object, parent_of, string};
use crate::json::Kind;

/// `None` when the record is not a JSON object.
pub(super) fn pi_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r = keys::record(record)?;
    let [kind, id, parent_raw, timestamp, message] =
        r.pick(["type", "id", "parentId", "timestamp", "message"]);
    let (kind, id) = (string(kind), string(id));
    let (parent, parent_span) = parent_of(record, parent_raw, false);
    let mut missing = Vec::new();
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    let mut session_id = None;
    let is_header = kind.as_deref() == Some("session");
    if is_header {
        if id.is_none() {
            missing.push("id");
        }
        session_id = id.clone();
    } else {
        if kind.is_none() {
            missing.push("type");
        }
        // Version 1 entries have neither id nor parentId; an entry with one has both.
        match (id.is_some(), parent_raw.is_some()) {
            (true, false) => missing.push("parentId"),
            (false, true) => missing.push("id"),
            _ => {}
        }
        if timestamp.is_none() {
            missing.push("timestamp");
        }
    }
    if kind.as_deref() == Some("message") {
        match object(message) {
            None => missing.push("message"),
            Some(m) => {
                let [role, tool_call_id, content, usage] =
                    r.pick_within(m, ["role", "toolCallId", "content", "usage"]);
                let role = string(role);
                if role.is_none() {
                    missing.push("message.role");
                }
                if role.as_deref() == Some("assistant")
                    && usage.is_none_or(|u| u.kind() != Kind::Object)
                {
                    // pi's CLI crashes on an assistant message without usage.
                    missing.push("message.usage");
                }
                if role.as_deref() == Some("toolResult") {
                    match string(tool_call_id) {
                        Some(id) => results.push(id),
                        None => missing.push("message.toolCallId"),
                    }
                }
                calls = keys::ids_of_type(content, "toolCall");
            }
        }
    }
    Some(Keys {
        // The header's `id` is the session's, not a node of the entry tree.
        id: if is_header { None } else { id },
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
