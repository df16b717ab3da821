//! What a line read from this format needs, beyond its node, to be written back as it was.
//!
//! The reader leaves nothing for the writer but each node's [`Origin`] (its line) and the
//! session's (the `session_start` line). The writer reads them again here: the envelope's
//! `seq`, `v` and `ts`, the line type a title event came from, the keys of an IContent's
//! `metadata`, and whether the node (or the metadata) still reads as its line does, in which
//! case the line is written as it was.

use serde_json::Value;

use super::NAME;
use super::read::{read_line, read_meta};
use crate::model::{Meta, Node, Origin};

/// What a line says that its node does not: what a rebuilt line must keep.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Kept {
    /// The envelope's `seq` (a line without one was kept whole).
    pub(super) seq: Option<Value>,
    /// The envelope's `v`, when it is not 1.
    pub(super) v: Option<Value>,
    /// The line's type when the node's kind does not say it (`session_named`).
    pub(super) kind: Option<String>,
    /// The keys of the IContent's `metadata` object, in order (present: it was there).
    pub(super) metadata: Option<Vec<Value>>,
}

/// A line as the reader parsed it (a line that does not parse: its text, as a string).
fn parsed(text: &[u8]) -> Value {
    match crate::json::value::to_value(text) {
        Ok((v, _)) => v,
        Err(_) => Value::String(String::from_utf8_lossy(text).into_owned()),
    }
}

/// A node's line as the reader read it: its text, and what it says beyond the node.
pub(super) struct AsRead<'a> {
    pub(super) text: &'a [u8],
    pub(super) kept: Kept,
    /// Whether the node still reads as the line does.
    pub(super) same: bool,
}

impl<'a> AsRead<'a> {
    /// The line `node` was read from, when it was read from this format.
    pub(super) fn of(node: &'a Node) -> Option<Self> {
        let text = Origin::of(&node.origin, NAME)?;
        let (again, kept) = read_line(&parsed(text), node.id.clone());
        let same = (&again.timestamp, &again.extra, &again.body)
            == (&node.timestamp, &node.extra, &node.body);
        Some(AsRead { text, kept, same })
    }
}

/// The `session_start` line the metadata was read from, as the reader read it.
pub(super) struct StartAsRead<'a> {
    pub(super) text: &'a [u8],
    /// The envelope's `v`, `seq` and `ts`.
    pub(super) v: Option<Value>,
    pub(super) seq: Option<Value>,
    pub(super) ts: Option<Value>,
    /// Whether the metadata still reads as the line does.
    pub(super) same: bool,
}

impl<'a> StartAsRead<'a> {
    pub(super) fn of(meta: &'a Meta) -> Option<Self> {
        let text = Origin::of(&meta.origin, NAME)?;
        let line = parsed(text);
        let again = read_meta(&line);
        let same = again.id == meta.id
            && again.project_hash == meta.project_hash
            && again.cwd == meta.cwd
            && again.directories == meta.directories
            && again.start_time == meta.start_time
            && again.extra == meta.extra;
        let field = |k: &str| line.get(k).cloned();
        Some(StartAsRead {
            text,
            v: field("v"),
            seq: field("seq"),
            ts: field("ts"),
            same,
        })
    }
}
