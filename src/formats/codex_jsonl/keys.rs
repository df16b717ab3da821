//! The cheap per-line facts of a rollout line, for fsck: one typed pass that borrows strings
//! and skips the payload's content; only a `response_item` payload's `type` and `call_id` are
//! read.

use serde::Deserialize;

use crate::formats::Keys;
use crate::formats::keys::{self, Lenient, RawField};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    timestamp: Lenient<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    payload: RawField<'a>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    call_id: Lenient<'a>,
}

/// `None` when the line is not a JSON object (or not JSON).
pub(super) fn codex_keys(record: &[u8]) -> Option<Keys<'_>> {
    let l: Line = keys::record(record)?;
    let mut missing = Vec::new();
    if l.timestamp.0.is_none() {
        missing.push("timestamp");
    }
    if l.kind.0.is_none() {
        missing.push("type");
    }
    if l.payload.0.is_none() {
        missing.push("payload");
    }
    let mut calls = Vec::new();
    let mut results = Vec::new();
    if l.kind.0.as_deref() == Some("response_item")
        && let Some(item) = l.payload.0.and_then(keys::object::<Item>)
        && let (Some(kind), Some(id)) = (item.kind.0, item.call_id.0)
    {
        match &*kind {
            "function_call" | "custom_tool_call" | "local_shell_call" => calls.push(id),
            "function_call_output" | "custom_tool_call_output" => results.push(id),
            _ => {}
        }
    }
    Some(Keys {
        kind: l.kind.0,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}
