//! The cheap per-record facts of a line, for fsck: a typed pass that borrows strings.

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
    #[serde(borrow, default)]
    parent_id: RawField<'a>,
    #[serde(borrow, default)]
    timestamp: RawField<'a>,
    #[serde(borrow, default)]
    message: RawField<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Lenient<'a>,
    #[serde(borrow, default)]
    tool_call_id: Lenient<'a>,
    #[serde(borrow, default)]
    content: RawField<'a>,
}

/// `None` when the record is not a JSON object.
pub(super) fn agent_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r: Record = keys::record(record)?;
    let (parent, parent_span) = parent_of(record, &r.parent_id, true);
    let mut missing = Vec::new();
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    let kind = r.kind.0.as_deref();
    let is_header = kind == Some("session");
    if kind.is_none() {
        missing.push("type");
    }
    if r.id.0.is_none() {
        missing.push("id");
    }
    if r.timestamp.0.is_none() {
        missing.push("timestamp");
    }
    if matches!(kind, Some("message" | "compaction")) && r.parent_id.0.is_none() {
        missing.push("parent_id");
    }
    if kind == Some("message") {
        match r.message.0.and_then(keys::object::<Message>) {
            None => missing.push("message"),
            Some(m) => {
                let role = m.role.0.as_deref();
                if role.is_none() {
                    missing.push("message.role");
                }
                if role == Some("tool_result") {
                    match m.tool_call_id.0 {
                        Some(id) => results.push(id),
                        None => missing.push("message.tool_call_id"),
                    }
                }
                let content = m.content.0.map(RawValue::get).unwrap_or("");
                if !content.starts_with('[') {
                    missing.push("message.content");
                }
                calls = keys::ids_of_type(content, "tool_call");
            }
        }
    }
    Some(Keys {
        session_id: if is_header { r.id.0.clone() } else { None },
        id: if is_header { None } else { r.id.0 },
        parent,
        parent_span,
        kind: r.kind.0,
        seq: None,
        calls,
        results,
        missing,
    })
}
