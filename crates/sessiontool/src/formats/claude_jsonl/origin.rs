//! What an entry read from this format needs, beyond its node, to be written back as it was.
//!
//! The reader leaves nothing for the writer but each node's [`Origin`] (its entry's line) and
//! the session's (its first chain entry's line, then the first line written with Python's
//! separators when that is another). The writer reads them again here: whether the entries
//! were written with Python's separators, the session's fields the entries were read against,
//! and for each node the facts a rebuilt entry keeps (`message.content` as a string, the
//! entry's own uuid, the usage of a reply's earlier entry, key orders) and whether it is
//! written as its line.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::NAME;
use super::layout::Layout;
use super::read::Shape;
use super::write::{Base, entry, to_bytes, usage_object, with_keys};
use crate::json::value::to_value;
use crate::model::{Body, Meta, Node, Origin};

/// The session's facts as its entries were read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct AsRead {
    /// The fields of its first chain entry.
    pub(super) base: Base,
    /// Entries written with Python's `", "` and `": "` separators.
    pub(super) python: bool,
}

impl AsRead {
    /// From the session's origin; a session that has none is taken as it is now, in the
    /// layout the Claude CLI writes.
    pub(super) fn of(meta: &Meta) -> Self {
        let Some(bytes) = Origin::of(&meta.origin, NAME) else {
            return AsRead {
                base: Base::of(meta),
                python: false,
            };
        };
        let mut as_read = AsRead::default();
        let mut based = false;
        for line in bytes.split(|&b| b == b'\n') {
            let Ok((value, _)) = to_value(line) else {
                continue;
            };
            if !based && value.get("uuid").is_some_and(Value::is_string) {
                as_read.base = Base::of_entry(&value);
                based = true;
            }
            as_read.python |= python_written(&value, line);
        }
        as_read
    }
}

/// The session's origin: the line of its first chain entry (the session's fields), and the
/// first line written with Python's separators when it is another.
pub(super) fn meta_origin(first_chain: Option<&[u8]>, python: Option<&[u8]>) -> Option<Origin> {
    let python = python.filter(|p| Some(*p) != first_chain);
    let bytes = match (first_chain, python) {
        (Some(f), Some(p)) => [f, p].join(&b'\n'),
        (Some(line), None) | (None, Some(line)) => line.to_vec(),
        (None, None) => return None,
    };
    Some(Origin::new(NAME, &bytes))
}

/// Whether an entry's text is `value` written with Python's separators (and not compact).
pub(super) fn python_written(value: &Value, text: &[u8]) -> bool {
    value.is_object() && to_bytes(value, false) != text && to_bytes(value, true) == text
}

/// What a rebuilt entry keeps of the entry its node was read from.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// `message.content` was a string.
    pub(super) content_string: bool,
    /// The entry's uuid (a node read from a repeated uuid has another id).
    pub(super) uuid: Option<String>,
    /// `message.usage` as read: a reply's entry before its last has its usage only here (the
    /// node has none: it is counted on the reply's last entry, see `usage`).
    pub(super) usage: Option<Value>,
    /// Key orders where the entry's differ from the rebuilt one's (see [`Layout::diff`]).
    pub(super) keys: Map<String, Value>,
}

/// How a node read from this format is written.
pub(super) enum WrittenAs<'a> {
    /// As its line (invalid UTF-8 replaced, as it was read).
    Line(Cow<'a, str>),
    /// Rebuilt, keeping this of its entry.
    Rebuilt(Kept),
}

/// How `node` is written (`as_read`: the session's facts as read; `unchanged`: the session's
/// fields and separators are still those): as its line while it reads as it did, when
/// rebuilding it would not give the line's bytes or would give them anyway; else rebuilt with
/// what it keeps. `None` for a node not read from this format.
pub(super) fn written<'a>(
    node: &'a Node,
    as_read: &AsRead,
    unchanged: bool,
) -> Option<WrittenAs<'a>> {
    let text = Origin::of(&node.origin, NAME)?;
    let value = to_value(text).ok().map(|(v, _)| v);
    let mut kept = Kept::default();
    if let Some(Value::Object(entry)) = &value
        && let Some(Value::String(uuid)) = entry.get("uuid")
    {
        kept.content_string = entry
            .get("message")
            .and_then(|m| m.get("content"))
            .is_some_and(Value::is_string);
        // The reader names a repeated uuid's node `uuid#n` (`read::node_id`).
        let own = node.id == *uuid
            || node
                .id
                .strip_prefix(uuid.as_str())
                .is_some_and(|n| n.starts_with('#'));
        kept.uuid = own.then(|| uuid.clone());
    }
    // The key orders as read; not needed where the line is written as it is (the usual case).
    let layout_of = |v: &Value| v.as_object().map(Layout::of);
    let mut layout = match unchanged {
        true => None,
        false => value.as_ref().and_then(layout_of),
    };
    let shape = Shape {
        base: &as_read.base,
        origin: false,
    };
    let read = shape.node(value, text, 0, 1);
    let same = reads_same(node, &read, &mut kept);
    let line = || WrittenAs::Line(String::from_utf8_lossy(text));
    if same && unchanged {
        return Some(line());
    }
    let Body::Message(_) = read.body else {
        // Kept whole: written from its data, or as its line when that does not give it.
        let data = entry(&read, &as_read.base, &kept);
        return Some(match same && to_bytes(&data, as_read.python) != text {
            true => line(),
            false => WrittenAs::Rebuilt(kept),
        });
    };
    if layout.is_none() {
        // Changed: its line read again for the key orders.
        layout = to_value(text).ok().and_then(|(v, _)| layout_of(&v));
    }
    // The entry as the reader read it, rebuilt as the session was read.
    let built = entry(&read, &as_read.base, &kept);
    if let (Some(layout), Some(ours)) = (layout, built.as_object()) {
        kept.keys = layout.diff(&Layout::of(ours));
    }
    if same && to_bytes(&with_keys(built, &kept.keys), as_read.python) != text {
        return Some(line());
    }
    Some(WrittenAs::Rebuilt(kept))
}

/// Whether `node` reads as its entry did (`read`: as the reader made it), in what the writer
/// writes of it (an entry kept whole is written from its data alone). A reply's entry before
/// its last reads the same without its usage (the reply's last entry has it): the usage as read
/// goes into `kept`.
fn reads_same(node: &Node, read: &Node, kept: &mut Kept) -> bool {
    let (Body::Message(m), Body::Message(r)) = (&node.body, &read.body) else {
        return node.body == read.body;
    };
    let moved = m.usage.is_none() && r.usage.is_some();
    if moved {
        kept.usage = r.usage.as_ref().map(|u| Value::Object(usage_object(u)));
    }
    kept.uuid.is_some()
        && (&node.parent, &node.timestamp, &node.extra)
            == (&read.parent, &read.timestamp, &read.extra)
        && (m.role, &m.parts, &m.model, &m.extra) == (r.role, &r.parts, &r.model, &r.extra)
        && (moved || m.usage == r.usage)
}
