//! The cheap per-record facts of a line, for fsck: one pass over the line's fields that
//! borrows strings.

use std::borrow::Cow;

use crate::formats::Keys;
use crate::formats::keys::{self, object, parent_of, string};
use crate::json::Kind;

/// `None` when the record is not a JSON object.
pub(super) fn agent_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r = keys::record(record)?;
    let [kind, id, parent_raw, timestamp, message] =
        r.pick(["type", "id", "parent_id", "timestamp", "message"]);
    let (kind, id) = (string(kind), string(id));
    let (parent, parent_span) = parent_of(record, parent_raw, true);
    let mut missing = Vec::new();
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    let is_header = kind.as_deref() == Some("session");
    if kind.is_none() {
        missing.push("type");
    }
    if id.is_none() {
        missing.push("id");
    }
    if timestamp.is_none() {
        missing.push("timestamp");
    }
    if matches!(kind.as_deref(), Some("message" | "compaction")) && parent_raw.is_none() {
        missing.push("parent_id");
    }
    if kind.as_deref() == Some("message") {
        match object(message) {
            None => missing.push("message"),
            Some(m) => {
                let [role, tool_call_id, content] =
                    r.pick_within(m, ["role", "tool_call_id", "content"]);
                let role = string(role);
                if role.is_none() {
                    missing.push("message.role");
                }
                if role.as_deref() == Some("tool_result") {
                    match string(tool_call_id) {
                        Some(id) => results.push(id),
                        None => missing.push("message.tool_call_id"),
                    }
                }
                if content.is_none_or(|c| c.kind() != Kind::Array) {
                    missing.push("message.content");
                }
                calls = keys::ids_of_type(content, "tool_call");
            }
        }
    }
    Some(Keys {
        session_id: if is_header { id.clone() } else { None },
        id: if is_header { None } else { id },
        parent,
        parent_span,
        kind,
        seq: None,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}
