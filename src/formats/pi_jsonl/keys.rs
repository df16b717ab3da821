//! The cheap per-record facts of a pi line, for fsck: a typed pass that borrows strings and
//! skips message text without building values. The message and its blocks are looked into
//! only when they are objects (a damaged field of another type never hides the rest).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::formats::Keys;
use crate::formats::keys::{self, Lenient, RawField, parent_of};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    id: Lenient<'a>,
    #[serde(borrow, default, rename = "parentId")]
    parent: RawField<'a>,
    #[serde(borrow, default)]
    timestamp: RawField<'a>,
    #[serde(borrow, default)]
    message: RawField<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Lenient<'a>,
    #[serde(borrow, default, rename = "toolCallId")]
    tool_call_id: Lenient<'a>,
    #[serde(borrow, default)]
    content: RawField<'a>,
    #[serde(borrow, default)]
    usage: RawField<'a>,
}

/// `None` when the record is not a JSON object.
pub(super) fn pi_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r: Record = keys::record(record)?;
    let (parent, parent_span) = parent_of(record, &r.parent, false);
    let mut missing = Vec::new();
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    let mut session_id = None;
    let is_header = r.kind.0.as_deref() == Some("session");
    if is_header {
        if r.id.0.is_none() {
            missing.push("id");
        }
        session_id = r.id.0.clone();
    } else {
        if r.kind.0.is_none() {
            missing.push("type");
        }
        // Version 1 entries have neither id nor parentId; an entry with one has both.
        match (r.id.0.is_some(), r.parent.0.is_some()) {
            (true, false) => missing.push("parentId"),
            (false, true) => missing.push("id"),
            _ => {}
        }
        if r.timestamp.0.is_none() {
            missing.push("timestamp");
        }
    }
    if r.kind.0.as_deref() == Some("message") {
        match r.message.0.and_then(keys::object::<Message>) {
            None => missing.push("message"),
            Some(m) => {
                let role = m.role.0.as_deref();
                if role.is_none() {
                    missing.push("message.role");
                }
                if role == Some("assistant") && m.usage.0.is_none_or(|u| !u.get().starts_with('{'))
                {
                    // pi's CLI crashes on an assistant message without usage.
                    missing.push("message.usage");
                }
                if role == Some("toolResult") {
                    match m.tool_call_id.0 {
                        Some(id) => results.push(id),
                        None => missing.push("message.toolCallId"),
                    }
                }
                let content = m.content.0.map(RawValue::get).unwrap_or("");
                calls = keys::ids_of_type(content, "toolCall");
            }
        }
    }
    Some(Keys {
        // The header's `id` is the session's, not a node of the entry tree.
        id: if is_header { None } else { r.id.0 },
        parent,
        parent_span,
        session_id,
        kind: r.kind.0,
        seq: None,
        calls,
        results,
        missing,
    })
}
