//! The cheap per-line facts of an llxprt line, for fsck: kind = line `type`, seq = `seq`; no
//! ids or parents (sessions are linear); calls and results from a `content` line's blocks.

use serde::Deserialize;

use crate::formats::Keys;
use crate::formats::keys::{Lenient, RawField};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    v: RawField<'a>,
    #[serde(borrow, default)]
    seq: RawField<'a>,
    #[serde(borrow, default)]
    ts: Lenient<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    payload: RawField<'a>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default)]
    content: Option<IContent<'a>>,
}

#[derive(Deserialize)]
struct IContent<'a> {
    #[serde(borrow, default)]
    blocks: Vec<Block<'a>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    id: Lenient<'a>,
    #[serde(borrow, default, rename = "callId")]
    call_id: Lenient<'a>,
}

pub(super) fn llxprt_keys(record: &[u8]) -> Option<Keys<'_>> {
    if crate::formats::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    let l: Line = serde_json::from_slice(record).ok()?;
    let number = |raw: &RawField| raw.0.and_then(|r| r.get().parse::<u64>().ok());
    let seq = number(&l.seq);
    let mut missing = Vec::new();
    if l.v.0.is_none_or(|r| r.get().parse::<f64>().is_err()) {
        missing.push("v");
    }
    if seq.is_none() {
        missing.push("seq");
    }
    if l.ts.0.is_none() {
        missing.push("ts");
    }
    if l.kind.0.is_none() {
        missing.push("type");
    }
    if l.payload.0.is_none_or(|r| !r.get().starts_with('{')) {
        missing.push("payload");
    }
    let mut calls = Vec::new();
    let mut results = Vec::new();
    if l.kind.0.as_deref() == Some("content")
        && let Some(raw) = l.payload.0
        && let Ok(Payload { content: Some(c) }) = serde_json::from_str::<Payload>(raw.get())
    {
        for b in c.blocks {
            match (b.kind.0.as_deref(), b.id.0, b.call_id.0) {
                (Some("tool_call"), Some(id), _) => calls.push(id),
                (Some("tool_response"), _, Some(id)) => results.push(id),
                _ => {}
            }
        }
    }
    Some(Keys {
        kind: l.kind.0,
        seq,
        calls,
        results,
        missing,
        ..Keys::default()
    })
}

/// The line with `seq` set to `seq`, every other byte as it was (`None` when the line has no
/// whole-number `seq` to replace).
pub(super) fn renumbered(record: &[u8], seq: u64) -> Option<Vec<u8>> {
    #[derive(Deserialize)]
    struct Seq<'a> {
        #[serde(borrow, default)]
        seq: RawField<'a>,
    }
    let raw = serde_json::from_slice::<Seq>(record).ok()?.seq.0?;
    raw.get().parse::<u64>().ok()?;
    let span = crate::formats::keys::span_in(record, raw.get().as_bytes())?;
    let mut out = Vec::with_capacity(record.len() + 4);
    out.extend_from_slice(&record[..span.start]);
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(&record[span.end..]);
    Some(out)
}
