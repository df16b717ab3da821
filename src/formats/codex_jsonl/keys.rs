//! The cheap per-line facts of a rollout line, for fsck: one typed pass that borrows strings
//! and skips the payload's content; only a `response_item` payload's `type` and `call_id` are
//! read.

use serde::Deserialize;

use crate::formats::Keys;
use crate::formats::keys::{Lenient, RawField};

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
    if crate::formats::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    let l: Line = serde_json::from_slice(record).ok()?;
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
        && let Some(raw) = l.payload.0
        && raw.get().starts_with('{')
        && let Ok(item) = serde_json::from_str::<Item>(raw.get())
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
