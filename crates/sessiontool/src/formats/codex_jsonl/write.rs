//! Sessions to lines. A session read from this format is rebuilt line by line (see the hints in
//! `read`); nodes it no longer fits, and sessions from other formats, go through `foreign`.

use serde_json::Value;

use super::super::one_branch::one_branch;
use super::super::{WriteError, WriteOptions, Written};
use super::foreign::Foreign;
use super::items::{line, meta_payload, native_line};
use super::read::read_line;
use super::{HINT_RAW, META_INDEX, META_RAW, META_TIMESTAMP, NAME, RECORD};
use crate::diag::LossReport;
use crate::model::{Body, Content, Event, Meta, Node, Session};

pub(super) fn write(session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
    let native = session.meta.source_format.as_deref() == Some(NAME);
    let mut losses = LossReport::default();
    if !native {
        let bytes = Foreign::new(session, options, &mut losses)?.write()?;
        return Ok(Written { bytes, losses });
    }
    let session = one_branch(session, options, OTHER_BRANCHES, &mut losses)?;
    let meta = &session.meta;
    let meta_at = meta
        .hints
        .get(META_INDEX)
        .and_then(Value::as_u64)
        .map(|i| i as usize);
    let mut out = crate::formats::output_buffer(session.nodes.len());
    let mut foreign = Foreign::new(&session, options, &mut losses)?;
    for (i, node) in session.nodes.iter().enumerate() {
        if meta_at == Some(i) {
            push_meta(&mut out, meta);
        }
        if let Some(raw) = raw_line(node) {
            out.extend_from_slice(raw.as_bytes());
            out.push(b'\n');
            continue;
        }
        match native_line(node) {
            Some(v) => push(&mut out, &v),
            None => foreign.node_lines(node, &mut out),
        }
    }
    if meta_at.is_some_and(|i| i >= session.nodes.len()) {
        push_meta(&mut out, meta);
    }
    Ok(Written { bytes: out, losses })
}

/// What [`one_branch`] reports: Codex rollouts are linear.
pub(super) const OTHER_BRANCHES: &str =
    "nodes on other branches (a Codex rollout holds one conversation)";

fn push(out: &mut Vec<u8>, v: &Value) {
    serde_json::to_writer(&mut *out, v).expect("a JSON value always serializes");
    out.push(b'\n');
}

pub(super) fn push_meta(out: &mut Vec<u8>, meta: &Meta) {
    let raw = meta_raw(meta).map(|r| r.as_bytes().to_vec());
    if let Some(bytes) = raw.or_else(|| meta_line(meta)) {
        out.extend_from_slice(&bytes);
        out.push(b'\n');
    }
}

/// The `session_meta` line of a session read from this format, without its raw-text hint.
pub(super) fn meta_line(meta: &Meta) -> Option<Vec<u8>> {
    let ts = meta
        .hints
        .get(META_TIMESTAMP)
        .and_then(Value::as_str)
        .or(meta.start_time.as_deref())?;
    let l = line(ts, "session_meta", Value::Object(meta_payload(meta)));
    serde_json::to_vec(&l).ok()
}

/// The original text of the meta line, while the metadata still reads as it did.
fn meta_raw(meta: &Meta) -> Option<&str> {
    let raw = meta.hints.get(META_RAW)?.as_str()?;
    let v: Value = serde_json::from_str(raw).ok()?;
    let p = v.get("payload")?.as_object()?;
    let s = |k: &str| p.get(k).and_then(Value::as_str);
    let same = s("id") == meta.id.as_deref()
        && s("timestamp") == meta.start_time.as_deref()
        && s("cwd") == meta.cwd.as_deref()
        && s("cli_version") == meta.tool_version.as_deref()
        && p.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "id" | "timestamp" | "cwd" | "cli_version"))
            .eq(meta.extra.iter());
    same.then_some(raw)
}

/// The original text of a line, while the node still reads as it did.
fn raw_line(node: &Node) -> Option<&str> {
    let raw = node.hints.get(HINT_RAW)?.as_str()?;
    if let Body::Event(Event::Custom { kind, data }) = &node.body
        && kind == RECORD
    {
        let same = data.as_str() == Some(raw)
            || serde_json::from_str::<Value>(raw).is_ok_and(|v| v == *data);
        return same.then_some(raw);
    }
    let value: Value = serde_json::from_str(raw).ok()?;
    let again = read_line(value, node.id.clone());
    let same = again.timestamp == node.timestamp
        && again.extra == node.extra
        && unnamed(&again.body) == unnamed(&node.body);
    same.then_some(raw)
}

/// The body without what the reader derived from other lines: result names (from the calls),
/// models and usage (from `turn_context` and `token_count` lines).
fn unnamed(body: &Body) -> Body {
    let mut b = body.clone();
    if let Body::Message(m) = &mut b {
        super::usage::without_derived(m);
        for p in &mut m.parts {
            if let Content::ToolResult { name, .. } = &mut p.content {
                *name = None;
            }
        }
    }
    b
}
