//! The cheap per-record facts of a Qwen record, for fsck: one pass over the record's fields
//! that borrows strings and skips everything else (message text, usage, display) without
//! building values.

use std::borrow::Cow;

use crate::formats::Keys;
use crate::formats::keys::{self, parent_of, string};
use crate::json::{Kind, Outlined, Raw};

/// `None` when the record is not a JSON object (or is not JSON), or a field the facts come
/// from has a shape no Qwen version writes (`message` not an object, say).
pub(super) fn qwen_keys(record: &[u8]) -> Option<Keys<'_>> {
    let r = keys::record(record)?;
    let [uuid, parent_raw, session_id, kind, message, result] = r.pick([
        "uuid",
        "parentUuid",
        "sessionId",
        "type",
        "message",
        "toolCallResult",
    ]);
    let (parent, parent_span) = parent_of(record, parent_raw, false);
    let (uuid, session_id, kind) = (string(uuid), string(session_id), string(kind));
    let mut missing = Vec::new();
    if uuid.is_none() {
        missing.push("uuid");
    }
    if parent_raw.is_none() {
        missing.push("parentUuid");
    }
    if session_id.is_none() {
        missing.push("sessionId");
    }
    if kind.is_none() {
        missing.push("type");
    }
    let mut calls = Vec::new();
    let mut results: Vec<Cow<str>> = Vec::new();
    let parts = match present(message, Kind::Object)? {
        Some(m) => present(r.pick_within(m, ["parts"])[0], Kind::Array)?,
        None => None,
    };
    let picked = parts.map(|p| r.pick_in_items_within(p, ["functionCall", "functionResponse"]));
    for part in picked.into_iter().flatten() {
        // A part that is not an object: not Qwen's record.
        let [call, response] = part?;
        // `functionCall` and `functionResponse` both name the call by `id`.
        if let Some(id) = call_id(&r, call)? {
            calls.push(id);
        }
        if let Some(id) = call_id(&r, response)? {
            results.push(id);
        }
    }
    if let Some(t) = present(result, Kind::Object)?
        && let Some(id) = string(r.pick_within(t, ["callId"])[0])
        && !results.contains(&id)
    {
        results.push(id);
    }
    Some(Keys {
        id: uuid,
        parent,
        parent_span,
        session_id,
        kind,
        seq: None,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}

/// A field that must be of `kind` when it is there and not `null`: `Some(None)` when absent
/// or null, `None` (the record is not Qwen's) when it has another type.
fn present(field: Option<Raw<'_>>, kind: Kind) -> Option<Option<Raw<'_>>> {
    match field {
        None => Some(None),
        Some(v) if v.is_null() => Some(None),
        Some(v) if v.kind() == kind => Some(Some(v)),
        Some(_) => None,
    }
}

/// The `id` of a `functionCall`/`functionResponse` object of `record`.
fn call_id<'a>(record: &Outlined<'a>, field: Option<Raw<'a>>) -> Option<Option<Cow<'a, str>>> {
    Some(present(field, Kind::Object)?.and_then(|c| string(record.pick_within(c, ["id"])[0])))
}
