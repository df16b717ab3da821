//! Sessions to lines. A session read from this format is written line by line: each node as
//! its line while it reads the same, else rebuilt (see `origin`); nodes it no longer fits, and
//! sessions from other formats, go through `foreign`.

use serde_json::Value;

use super::super::one_branch::one_branch;
use super::super::{WriteError, WriteOptions, Written};
use super::NAME;
use super::foreign::Foreign;
use super::items::{line, meta_payload, native_line};
use super::origin::{Kept, Layout, line_of};
use crate::diag::LossReport;
use crate::model::{Meta, Node, Session};

pub(super) fn write(session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
    let native = session.meta.source_format.as_deref() == Some(NAME);
    let mut losses = LossReport::default();
    if !native {
        let bytes = Foreign::new(session, options, &mut losses)?.write()?;
        return Ok(Written { bytes, losses });
    }
    let session = one_branch(session, options, OTHER_BRANCHES, &mut losses)?;
    let meta = &session.meta;
    let mut out = crate::formats::output_buffer(session.nodes.len());
    // The `session_meta` line first, unless a node says it came right after that node's line
    // (see `origin`).
    let meta_after = session
        .nodes
        .iter()
        .position(|n| line_of(n).is_some_and(|(_, after)| after));
    if meta_after.is_none() {
        push_meta(&mut out, meta);
    }
    let mut foreign = Foreign::new(&session, options, &mut losses)?;
    for (i, node) in session.nodes.iter().enumerate() {
        push_node(node, &mut foreign, &mut out);
        if meta_after == Some(i) {
            push_meta(&mut out, meta);
        }
    }
    Ok(Written { bytes: out, losses })
}

/// A node's line: rebuilt as Codex writes it when that gives the line it was read from (most
/// lines: checked first, it costs less than reading the line again); else its line while it
/// reads the same, else rebuilt keeping what its line says (see `origin`).
fn push_node(node: &Node, foreign: &mut Foreign, out: &mut Vec<u8>) {
    let line = line_of(node).map(|(line, _)| line);
    let start = out.len();
    if let Some(line) = line
        && let Some(v) = native_line(node, &Layout::default())
    {
        serde_json::to_writer(&mut *out, &v).expect("a JSON value always serializes");
        if out[start..] == *line {
            out.push(b'\n');
            return;
        }
        out.truncate(start);
    }
    let layout = match line.map(|line| Kept::of(node, line)) {
        Some(Kept::Line(text)) => {
            out.extend_from_slice(text.as_bytes());
            out.push(b'\n');
            return;
        }
        Some(Kept::Rebuilt(layout)) => layout,
        None => Layout::default(),
    };
    match native_line(node, &layout) {
        Some(v) => push(out, &v),
        None => foreign.node_lines(node, out),
    }
}

/// What [`one_branch`] reports: Codex rollouts are linear.
pub(super) const OTHER_BRANCHES: &str =
    "nodes on other branches (a Codex rollout holds one conversation)";

fn push(out: &mut Vec<u8>, v: &Value) {
    serde_json::to_writer(&mut *out, v).expect("a JSON value always serializes");
    out.push(b'\n');
}

/// The `session_meta` line of a session read from this format, when it had one.
pub(super) fn push_meta(out: &mut Vec<u8>, meta: &Meta) {
    if let Some(bytes) = super::origin::meta_line(meta) {
        out.extend_from_slice(&bytes);
        out.push(b'\n');
    }
}

/// The `session_meta` line rebuilt from `meta` (`ts`: the line's own time, else the session's
/// start; `keys`: the payload's key order, where it is not Codex's).
pub(super) fn meta_line(meta: &Meta, ts: Option<&str>, keys: Option<&[String]>) -> Option<Vec<u8>> {
    let ts = ts.or(meta.start_time.as_deref())?;
    let l = line(ts, "session_meta", Value::Object(meta_payload(meta, keys)));
    serde_json::to_vec(&l).ok()
}
