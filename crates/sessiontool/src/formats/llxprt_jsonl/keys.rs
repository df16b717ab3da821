//! The cheap per-line facts of an llxprt line, for fsck: kind = line `type`, seq = `seq`; no
//! ids or parents (sessions are linear); calls and results from a `content` line's blocks.

use crate::formats::Keys;
use crate::formats::keys::{self, object, objects, string};
use crate::json::Kind;

pub(super) fn llxprt_keys(record: &[u8]) -> Option<Keys<'_>> {
    let l = keys::record(record)?;
    let [v, seq, ts, kind, payload] = l.pick(["v", "seq", "ts", "type", "payload"]);
    let seq = seq.and_then(|r| r.text().parse::<u64>().ok());
    let kind = string(kind);
    let mut missing = Vec::new();
    if v.and_then(|r| r.as_number())
        .is_none_or(|n| n.parse::<f64>().is_err())
    {
        missing.push("v");
    }
    if seq.is_none() {
        missing.push("seq");
    }
    if string(ts).is_none() {
        missing.push("ts");
    }
    if kind.is_none() {
        missing.push("type");
    }
    if payload.is_none_or(|r| r.kind() != Kind::Object) {
        missing.push("payload");
    }
    let mut calls = Vec::new();
    let mut results = Vec::new();
    if kind.as_deref() == Some("content")
        && let Some(content) = object(payload).and_then(|p| l.pick_within(p, ["content"])[0])
        && let Some(blocks) = content_blocks(content)
    {
        for b in blocks {
            let [t, id, call_id] = b.pick(["type", "id", "callId"]).map(string);
            match (t.as_deref(), id, call_id) {
                (Some("tool_call"), Some(id), _) => calls.push(id),
                (Some("tool_response"), _, Some(id)) => results.push(id),
                _ => {}
            }
        }
    }
    Some(Keys {
        kind,
        seq,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}

/// The blocks of an IContent, when it is an object whose `blocks` (absent: none) is a list of
/// objects; `None` otherwise (such content holds no calls the tool would read).
fn content_blocks(content: crate::json::Raw<'_>) -> Option<Vec<crate::json::Raw<'_>>> {
    if content.kind() != Kind::Object {
        return None;
    }
    let Some(blocks) = content.get("blocks") else {
        return Some(Vec::new());
    };
    let list: Vec<_> = blocks.items()?.collect();
    let all = objects(Some(blocks)).count() == list.len();
    all.then_some(list)
}

/// The line with `seq` set to `seq`, every other byte as it was (`None` when the line has no
/// whole-number `seq` to replace).
pub(super) fn renumbered(record: &[u8], seq: u64) -> Option<Vec<u8>> {
    let raw = keys::record(record)?.get("seq")?;
    raw.text().parse::<u64>().ok()?;
    let span = crate::formats::keys::span_in(record, raw.text().as_bytes())?;
    let mut out = Vec::with_capacity(record.len() + 4);
    out.extend_from_slice(&record[..span.start]);
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(&record[span.end..]);
    Some(out)
}
