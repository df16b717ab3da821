//! The cheap per-record facts of a Gemini JSONL line, for fsck: one typed pass that borrows
//! strings and skips content, thoughts and results without building values.

use std::borrow::Cow;

use serde::Deserialize;

use crate::formats::keys::{Lenient, RawField};
use crate::formats::{Keys, Parent};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    id: Lenient<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Lenient<'a>,
    #[serde(borrow, default, rename = "projectHash")]
    project_hash: Lenient<'a>,
    #[serde(borrow, default, rename = "$set")]
    set: RawField<'a>,
    #[serde(borrow, default, rename = "$rewindTo")]
    rewind: Lenient<'a>,
    #[serde(borrow, default, rename = "toolCalls")]
    tool_calls: RawField<'a>,
}

/// What a `$set` line sets that matters to fsck.
#[derive(Deserialize)]
struct Set<'a> {
    #[serde(borrow, default)]
    messages: RawField<'a>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: Lenient<'a>,
    #[serde(borrow, default)]
    result: RawField<'a>,
}

/// `None` when the record is not a JSON object (or is not JSON), or is an object the CLI
/// ignores (none of a message, `$set`, `$rewindTo` or a header).
pub(super) fn gemini_jsonl_keys(record: &[u8]) -> Option<Keys<'_>> {
    if crate::formats::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    let r: Record = serde_json::from_slice(record).ok()?;
    // The CLI's reader tests the kinds of line in this order.
    // A rewind's target comes as its parent: the message it cuts the session back to.
    if let Some(target) = r.rewind.0 {
        return Some(Keys {
            parent: Parent::Id(target),
            ..line_of_kind("$rewindTo", None)
        });
    }
    if let Some(id) = r.id.0 {
        let mut calls = Vec::new();
        let mut results: Vec<Cow<str>> = Vec::new();
        // A `toolCalls` that is not a list of objects is not read as calls (nor by the CLI).
        let list: Vec<Call> = r
            .tool_calls
            .0
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        for call in list {
            let Some(call_id) = call.id.0 else { continue };
            if call.result.0.is_some_and(|v| v.get() != "null") {
                results.push(call_id.clone());
            }
            calls.push(call_id);
        }
        let mut missing = Vec::new();
        if r.kind.0.is_none() {
            missing.push("type");
        }
        return Some(Keys {
            id: Some(id),
            kind: r.kind.0,
            calls,
            results,
            missing,
            ..Keys::default()
        });
    }
    if let Some(set) = r.set.0.filter(|v| v.get().starts_with('{')) {
        // `$set.messages` replaces the whole list with messages not on lines of their own.
        let replaces = serde_json::from_str::<Set>(set.get()).is_ok_and(|s| s.messages.0.is_some());
        let kind = if replaces { "$set.messages" } else { "$set" };
        return Some(line_of_kind(kind, None));
    }
    if r.session_id.0.is_some() && r.project_hash.0.is_some() {
        return Some(line_of_kind("header", r.session_id.0));
    }
    // Any other object: the CLI ignores it, and fsck says it is not a record of this format.
    None
}

fn line_of_kind<'a>(kind: &'static str, session_id: Option<Cow<'a, str>>) -> Keys<'a> {
    Keys {
        kind: Some(Cow::Borrowed(kind)),
        session_id,
        ..Keys::default()
    }
}
