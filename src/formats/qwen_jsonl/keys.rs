//! The cheap per-record facts of a Qwen record, for fsck: one typed pass that borrows strings
//! and skips everything else (message text, usage, display) without building values.

use std::borrow::Cow;

use serde::Deserialize;

use crate::formats::Keys;
use crate::formats::keys::{self, Lenient, RawField, parent_of};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    uuid: Lenient<'a>,
    #[serde(borrow, default, rename = "parentUuid")]
    parent: RawField<'a>,
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Lenient<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default, rename = "toolCallResult")]
    result: Option<ToolCallResult<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default, rename = "functionCall")]
    call: Option<Call<'a>>,
    #[serde(borrow, default, rename = "functionResponse")]
    response: Option<Call<'a>>,
}

/// `functionCall` and `functionResponse` both name the call by `id`.
#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: Lenient<'a>,
}

#[derive(Deserialize)]
struct ToolCallResult<'a> {
    #[serde(borrow, default, rename = "callId")]
    call_id: Lenient<'a>,
}

/// `None` when the record is not a JSON object (or is not JSON), or a field the facts come
/// from has a shape no Qwen version writes (`message` not an object, say).
pub(super) fn qwen_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r: Record = keys::record(record)?;
    let (parent, parent_span) = parent_of(record, &r.parent, false);
    let mut missing = Vec::new();
    if r.uuid.0.is_none() {
        missing.push("uuid");
    }
    if r.parent.0.is_none() {
        missing.push("parentUuid");
    }
    if r.session_id.0.is_none() {
        missing.push("sessionId");
    }
    if r.kind.0.is_none() {
        missing.push("type");
    }
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    for part in r.message.and_then(|m| m.parts).unwrap_or_default() {
        if let Some(id) = part.call.and_then(|c| c.id.0) {
            calls.push(id);
        }
        if let Some(id) = part.response.and_then(|c| c.id.0) {
            results.push(id);
        }
    }
    if let Some(id) = r.result.and_then(|t| t.call_id.0)
        && !results.contains(&id)
    {
        results.push(id);
    }
    Some(Keys {
        id: r.uuid.0,
        parent,
        parent_span,
        session_id: r.session_id.0,
        kind: r.kind.0,
        seq: None,
        calls,
        results,
        missing,
    })
}
