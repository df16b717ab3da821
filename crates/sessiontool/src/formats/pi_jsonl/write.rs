//! Writing a session read from this format: the header and every entry in file order, each as
//! `JSON.stringify(entry) + "\n"`: its line as it was while the node reads the same, else
//! rebuilt in the line's key orders.

use serde_json::{Map, Value};

use super::super::{Written, ordered, pi_style};
use super::js;
use super::native::native_entry;
use super::origin::{AsRead, record_data, version};
use super::{HEADER_ORDER, NAME};
use crate::engine::Route;
use crate::engine::reading::Reading;
use crate::model::{Meta, Node, Session};

pub(super) fn write_native(session: &Session) -> Written {
    pi_style::write_lines(session, NAME, true, header_line, entry_bytes)
}

/// [`write_native`] in the engine's pass two.
pub(super) fn lines_back(known: Box<dyn Reading>, meta: &Meta) -> Route {
    pi_style::lines_back(known, meta, NAME, true, header_line, entry_bytes)
}

fn header_line(meta: &Meta) -> Vec<u8> {
    js::to_vec(&header(meta))
}

/// The header of a session read from this format: its own version (none for version 1).
pub(super) fn header(meta: &Meta) -> Value {
    pi_style::header(meta, NAME, version(meta).as_ref(), &HEADER_ORDER)
}

/// One entry's bytes: its line while the node reads as it did, else the rebuilt entry (in its
/// line's key orders when it came from one).
pub(super) fn entry_bytes(node: &Node) -> Vec<u8> {
    let Some(line) = AsRead::of(node) else {
        return js::to_vec(&native_entry(node, None));
    };
    if line.reads_as(node) {
        // As the reader took it: invalid UTF-8 replaced.
        return String::from_utf8_lossy(line.text).into_owned().into_bytes();
    }
    rebuilt(node, &line)
}

/// A node read from `line`, rebuilt: under the line's own id (or none), in its key orders.
pub(super) fn rebuilt(node: &Node, line: &AsRead) -> Vec<u8> {
    if let Some(data) = record_data(node).filter(|d| !d.is_object()) {
        return js::to_vec(data);
    }
    let built = native_entry(node, Some(line));
    let keys = line.layout().and_then(|layout| key_hint(&layout, &built));
    js::to_vec(&apply_key_hints(built, keys.as_ref()))
}

/// Puts the entry, its `message` and the message's `usage` in the key orders `hint` names.
pub(super) fn apply_key_hints(
    mut e: Map<String, Value>,
    hint: Option<&Value>,
) -> Map<String, Value> {
    let Some(Value::Object(hint)) = hint else {
        return e;
    };
    let order = |name: &str| -> Option<Vec<&str>> {
        let list = hint.get(name)?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).collect())
    };
    if let Some(Value::Object(msg)) = e.get_mut("message") {
        if let (Some(usage_order), Some(Value::Object(u))) = (order("usage"), msg.get_mut("usage"))
        {
            *u = ordered(std::mem::take(u), &usage_order);
        }
        if let Some(message_order) = order("message") {
            *msg = ordered(std::mem::take(msg), &message_order);
        }
    }
    if let Some(entry_order) = order("entry") {
        e = ordered(e, &entry_order);
    }
    e
}

/// The key orders of an entry, its `message` and the message's `usage`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Layout {
    entry: Vec<String>,
    message: Option<Vec<String>>,
    usage: Option<Vec<String>>,
}

impl Layout {
    pub(super) fn of(e: &Map<String, Value>) -> Self {
        let keys = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
        let msg = e.get("message").and_then(Value::as_object);
        let usage = msg.and_then(|m| m.get("usage")).and_then(Value::as_object);
        Layout {
            entry: keys(e),
            message: msg.map(keys),
            usage: usage.map(keys),
        }
    }
}

/// The `HINT_KEYS` hint that turns `built`'s key orders into `read`'s: only the objects whose
/// order differs.
pub(super) fn key_hint(read: &Layout, built: &Map<String, Value>) -> Option<Value> {
    let ours = Layout::of(built);
    let list = |v: &[String]| Value::Array(v.iter().map(|k| Value::from(k.as_str())).collect());
    let mut hint = Map::new();
    if read.entry != ours.entry {
        hint.insert("entry".into(), list(&read.entry));
    }
    for (name, theirs, mine) in [
        ("message", &read.message, &ours.message),
        ("usage", &read.usage, &ours.usage),
    ] {
        if let (Some(t), Some(m)) = (theirs, mine)
            && t != m
        {
            hint.insert(name.into(), list(t));
        }
    }
    (!hint.is_empty()).then_some(Value::Object(hint))
}
