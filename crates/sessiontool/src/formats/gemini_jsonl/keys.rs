//! The cheap per-record facts of a Gemini JSONL line, for fsck: one typed pass that borrows
//! strings and skips content, thoughts and results without building values.

use std::borrow::Cow;

use crate::formats::keys::{self, string};
use crate::formats::{Keys, Parent};
use crate::json::Kind;

/// `None` when the record is not a JSON object (or is not JSON), or is an object the CLI
/// ignores (none of a message, `$set`, `$rewindTo` or a header).
pub(super) fn gemini_jsonl_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r = keys::record(record)?;
    let [id, kind, session_id, project_hash, set, rewind, tool_calls] = r.pick([
        "id",
        "type",
        "sessionId",
        "projectHash",
        "$set",
        "$rewindTo",
        "toolCalls",
    ]);
    // The CLI's reader tests the kinds of line in this order.
    // A rewind's target comes as its parent: the message it cuts the session back to.
    if let Some(target) = string(rewind) {
        return Some(Keys {
            parent: Parent::Id(target),
            ..line_of_kind("$rewindTo", None)
        });
    }
    if let Some(id) = string(id) {
        let mut calls = Vec::new();
        let mut results: Vec<Cow<str>> = Vec::new();
        // A `toolCalls` that is not a list of objects is not read as calls (nor by the CLI).
        let list: Vec<_> = tool_calls
            .and_then(|t| t.items())
            .map(|items| items.collect::<Vec<_>>())
            .filter(|items| items.iter().all(|c| c.kind() == Kind::Object))
            .unwrap_or_default();
        for call in list {
            let [call_id, result] = call.pick(["id", "result"]);
            let Some(call_id) = string(call_id) else {
                continue;
            };
            if result.is_some_and(|v| !v.is_null()) {
                results.push(call_id.clone());
            }
            calls.push(call_id);
        }
        let kind = string(kind);
        let mut missing = Vec::new();
        if kind.is_none() {
            missing.push("type");
        }
        return Some(Keys {
            id: Some(id),
            kind,
            calls,
            results,
            missing,
            ..Keys::default()
        });
    }
    if let Some(set) = set.filter(|v| v.kind() == Kind::Object) {
        // `$set.messages` replaces the whole list with messages not on lines of their own.
        let replaces = set.get("messages").is_some();
        let kind = if replaces { "$set.messages" } else { "$set" };
        return Some(line_of_kind(kind, None));
    }
    let session_id = string(session_id);
    if session_id.is_some() && string(project_hash).is_some() {
        return Some(line_of_kind("header", session_id));
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
