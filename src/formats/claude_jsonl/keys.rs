//! The cheap per-entry facts of a Claude Code entry, for fsck: one typed pass that borrows
//! strings and skips message text, tool inputs and results without building values.

use serde::Deserialize;

use crate::formats::Keys;
use crate::formats::keys::{self, Lenient, RawField, parent_of};

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default)]
    uuid: Lenient<'a>,
    #[serde(borrow, default, rename = "parentUuid")]
    parent: RawField<'a>,
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Lenient<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    message: RawField<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: RawField<'a>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    id: Lenient<'a>,
    #[serde(borrow, default)]
    tool_use_id: Lenient<'a>,
}

/// `None` when the entry is not a JSON object (or not JSON).
pub(super) fn claude_keys(record: &[u8]) -> Option<Keys<'_>> {
    let e: Entry = keys::record(record)?;
    if e.uuid.0.is_none() {
        // Not a chain entry (`summary`, `file-history-snapshot`, ...): nothing to link.
        return Some(Keys {
            kind: e.kind.0,
            ..Keys::default()
        });
    }
    let (parent, parent_span) = parent_of(record, &e.parent, false);
    let mut missing = Vec::new();
    if e.parent.0.is_none() {
        missing.push("parentUuid");
    }
    if e.session_id.0.is_none() {
        missing.push("sessionId");
    }
    if e.kind.0.is_none() {
        missing.push("type");
    }
    let needs_message = matches!(e.kind.0.as_deref(), Some("user" | "assistant"));
    let mut calls = Vec::new();
    let mut results = Vec::new();
    // `message.content`, when `message` is an object that has it.
    let content = e.message.0.and_then(keys::object::<Message>);
    match content.and_then(|m| m.content.0) {
        Some(raw) => {
            for b in keys::objects::<Block>(raw.get()) {
                match b.kind.0.as_deref() {
                    Some("tool_use") => calls.extend(b.id.0),
                    Some("tool_result") => results.extend(b.tool_use_id.0),
                    _ => {}
                }
            }
        }
        None if needs_message => missing.push("message"),
        None => {}
    }
    Some(Keys {
        id: e.uuid.0,
        parent,
        parent_span,
        session_id: e.session_id.0,
        kind: e.kind.0,
        seq: None,
        calls,
        results,
        missing,
    })
}
