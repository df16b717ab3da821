//! The cheap per-line facts of a rollout line, for fsck: one pass over the line's fields that
//! borrows strings and skips the payload's content; only a `response_item` payload's `type`
//! and `call_id` are read.

use crate::formats::Keys;
use crate::formats::keys::{self, object, string};

/// `None` when the line is not a JSON object (or not JSON).
pub(super) fn codex_keys(record: &[u8]) -> Option<Keys<'_>> {
    let l = keys::record(record)?;
    let [timestamp, kind, payload] = l.pick(["timestamp", "type", "payload"]);
    let kind = string(kind);
    let mut missing = Vec::new();
    if string(timestamp).is_none() {
        missing.push("timestamp");
    }
    if kind.is_none() {
        missing.push("type");
    }
    if payload.is_none() {
        missing.push("payload");
    }
    let mut calls = Vec::new();
    let mut results = Vec::new();
    if kind.as_deref() == Some("response_item")
        && let Some(item) = object(payload)
        && let [Some(item_kind), Some(id)] = item.pick(["type", "call_id"]).map(string)
    {
        match &*item_kind {
            "function_call" | "custom_tool_call" | "local_shell_call" => calls.push(id),
            "function_call_output" | "custom_tool_call_output" => results.push(id),
            _ => {}
        }
    }
    Some(Keys {
        kind,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}
