//! The cheap per-entry facts of a Claude Code entry, for fsck: one typed pass that borrows
//! strings and skips message text, tool inputs and results without building values.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::formats::Keys;
use crate::formats::keys::{Lenient, RawField, parent_of};

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
    if crate::formats::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    let e: Entry = serde_json::from_slice(record).ok()?;
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
    let content = e.message.0.and_then(|m| content_of(m));
    match content {
        Some(raw) => {
            if raw.get().starts_with('[')
                && let Ok(blocks) = serde_json::from_str::<Vec<MaybeBlock<'_>>>(raw.get())
            {
                for b in blocks.into_iter().filter_map(|b| b.0) {
                    match b.kind.0.as_deref() {
                        Some("tool_use") => calls.extend(b.id.0),
                        Some("tool_result") => results.extend(b.tool_use_id.0),
                        _ => {}
                    }
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

/// `message.content` as raw text, when `message` is an object that has it.
fn content_of(message: &RawValue) -> Option<&RawValue> {
    if !message.get().starts_with('{') {
        return None;
    }
    let m: Message = serde_json::from_str(message.get()).ok()?;
    m.content.0
}

/// A block, or `None` for an element that is not an object (a string in `content`).
struct MaybeBlock<'a>(Option<Block<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeBlock<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        if !raw.get().starts_with('{') {
            return Ok(MaybeBlock(None));
        }
        Ok(MaybeBlock(serde_json::from_str(raw.get()).ok()))
    }
}
