//! What a line read from this format needs, beyond its node, to be written back as it was.
//!
//! The reader leaves nothing for the writer but each node's [`Origin`] (its line) and the
//! session's (its `session_meta` line). The writer reads them again here: a node (or the
//! metadata) that still reads as its line did is written as that line; one that changed is
//! rebuilt with what its line says and the model cannot: the payload's key order where Codex's
//! structs give another, the item type of a `custom_tool_call` or `local_shell_call` (and its
//! output), the role `developer` (read as system).
//!
//! Where the `session_meta` line was: first, unless a node's origin says otherwise. A
//! `session_meta` line after nodes is kept after the line of the node read just before it, in
//! that node's origin (its line, `\n`, the `session_meta` line): the writer writes the metadata
//! after that node, and first when no node of the session says so (the node is gone, or the
//! line was first), where Codex reads it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::items::{meta_payload, native_line};
use super::read::{read_line, read_meta};
use super::{NAME, RECORD};
use crate::model::{Body, Content, Event, Meta, Node, Origin};

/// What a rebuilt line keeps of the line its node was read from (nothing, for a node read
/// from elsewhere).
#[derive(Debug, Default, PartialEq)]
pub(super) struct Layout {
    /// The payload's key order, where Codex's structs give another.
    pub(super) keys: Option<Keys>,
    /// The response item's type, where the node does not say it (`custom_tool_call`,
    /// `local_shell_call`, `custom_tool_call_output`).
    pub(super) item: Option<String>,
    /// A message of role `developer` (read as system).
    pub(super) developer: bool,
}

/// A payload's key order, and the line and item types it is the order of.
#[derive(Debug, PartialEq)]
pub(super) struct Keys {
    pub(super) kind: String,
    pub(super) item: Option<String>,
    pub(super) order: Vec<String>,
}

impl Keys {
    /// The order, when `payload` (of a line of type `kind`) is of the line and item it was read
    /// from: another kind of line or item has another order.
    pub(super) fn order_for(&self, kind: &str, payload: &Map<String, Value>) -> Option<&[String]> {
        let item = payload.get("type").and_then(Value::as_str);
        (self.kind == kind && self.item.as_deref() == item).then_some(&self.order[..])
    }
}

/// What the writer does with a node read from this format.
pub(super) enum Kept<'a> {
    /// It reads as its line did: the line (as the reader took it, invalid UTF-8 replaced).
    Line(Cow<'a, str>),
    /// It changed: rebuilt, keeping this of its line.
    Rebuilt(Layout),
}

/// A node's line, and whether the `session_meta` line came right after it.
pub(super) fn line_of(node: &Node) -> Option<(&[u8], bool)> {
    let bytes = Origin::of(&node.origin, NAME)?;
    // A line holds no `\n`: a second one is the `session_meta` line.
    Some(match memchr::memchr(b'\n', bytes) {
        Some(end) => (&bytes[..end], true),
        None => (bytes, false),
    })
}

/// `line` and, when the `session_meta` line came right after it, that line: a node's origin.
pub(super) fn origin(line: &[u8], meta_after: Option<&[u8]>) -> Origin {
    match meta_after {
        None => Origin::new(NAME, line),
        Some(meta) => Origin::new(NAME, &[line, b"\n", meta].concat()),
    }
}

impl<'a> Kept<'a> {
    /// What to write for `node`, whose line is `line`.
    pub(super) fn of(node: &Node, line: &'a [u8]) -> Self {
        let (text, mut read) = read(line);
        // A record kept whole: the same while its value (or text) is.
        if let Body::Event(Event::Custom { kind, data }) = &node.body
            && kind == RECORD
        {
            let same = data.as_str() == Some(&*text)
                || matches!(&read.body, Body::Event(Event::Custom { data: d, .. }) if d == data);
            if same {
                return Kept::Line(text);
            }
        } else if read.timestamp == node.timestamp
            && read.extra == node.extra
            && same_body(&mut read.body, &node.body)
        {
            return Kept::Line(text);
        }
        Kept::Rebuilt(layout(line))
    }
}

/// `line` as the reader takes it (invalid UTF-8 replaced) and reads it (a node with no id,
/// parent or origin).
fn read(line: &[u8]) -> (Cow<'_, str>, Node) {
    let text = String::from_utf8_lossy(line);
    let value =
        serde_json::from_slice::<Value>(line).unwrap_or_else(|_| Value::String(text.to_string()));
    (text, read_line(value, String::new()))
}

/// What a node rebuilt in place of the one read from `line` keeps of it.
pub(super) fn layout(line: &[u8]) -> Layout {
    let value = serde_json::from_slice::<Value>(line).ok();
    let str_of = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);
    let kind = str_of(value.as_ref().and_then(|v| v.get("type")));
    let payload = value
        .as_ref()
        .and_then(|v| v.get("payload"))
        .and_then(Value::as_object);
    let item = str_of(payload.and_then(|p| p.get("type")));
    let developer = str_of(payload.and_then(|p| p.get("role"))).as_deref() == Some("developer");
    let order: Option<Vec<String>> = payload.map(|p| p.keys().cloned().collect());
    let (_, node) = read(line);
    // What the model has no field for, on a message (an item of another shape is an event,
    // whose payload is kept as it is).
    let message = matches!(node.body, Body::Message(_));
    let mut layout = Layout {
        item: item
            .as_deref()
            .filter(|i| {
                message
                    && matches!(
                        *i,
                        "custom_tool_call" | "local_shell_call" | "custom_tool_call_output"
                    )
            })
            .map(String::from),
        developer: message && item.as_deref() == Some("message") && developer,
        keys: None,
    };
    // The payload's keys, where the line rebuilt from its own node has them in another order.
    let built = native_line(&node, &layout);
    let built = built
        .as_ref()
        .and_then(|b| b.get("payload"))
        .and_then(Value::as_object);
    if let (Some(built), Some(order), Some(kind)) = (built, order, kind)
        && built.keys().ne(order.iter())
    {
        layout.keys = Some(Keys { kind, item, order });
    }
    layout
}

/// Whether `read` (a node as its line reads) is `node`, but for what the reader derives from
/// other lines (result names from the calls, models and usage from `turn_context` and
/// `token_count` lines): those are taken from `node` first.
fn same_body(read: &mut Body, node: &Body) -> bool {
    if let (Body::Message(r), Body::Message(n)) = (&mut *read, node) {
        r.model.clone_from(&n.model);
        r.usage.clone_from(&n.usage);
        for (r, n) in r.parts.iter_mut().zip(&n.parts) {
            if let (
                Content::ToolResult { name, .. },
                Content::ToolResult {
                    name: node_name, ..
                },
            ) = (&mut r.content, &n.content)
            {
                name.clone_from(node_name);
            }
        }
    }
    *read == *node
}

/// The `session_meta` line as the writer writes `meta` (of a session read from this format):
/// its own line while the metadata still reads as it did, else rebuilt; `None` when the
/// rollout had none.
pub(super) fn meta_line(meta: &Meta) -> Option<Cow<'_, [u8]>> {
    let line = Origin::of(&meta.origin, NAME)?;
    let value: Value = serde_json::from_slice(line).ok()?;
    let p = value.get("payload")?.as_object()?;
    let s = |k: &str| p.get(k).and_then(Value::as_str);
    let same = s("id") == meta.id.as_deref()
        && s("timestamp") == meta.start_time.as_deref()
        && s("cwd") == meta.cwd.as_deref()
        && s("cli_version") == meta.tool_version.as_deref()
        && p.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "id" | "timestamp" | "cwd" | "cli_version"))
            .eq(meta.extra.iter());
    if !same {
        return rebuilt_meta(meta, line, value).map(Cow::Owned);
    }
    Some(match String::from_utf8_lossy(line) {
        Cow::Borrowed(_) => Cow::Borrowed(line),
        Cow::Owned(text) => Cow::Owned(text.into_bytes()),
    })
}

/// The `session_meta` line rebuilt from `meta` (for the tests: as if it changed).
#[cfg(test)]
pub(super) fn rebuilt_meta_line(meta: &Meta) -> Option<Vec<u8>> {
    let line = Origin::of(&meta.origin, NAME)?;
    rebuilt_meta(meta, line, serde_json::from_slice(line).ok()?)
}

/// `meta` as a `session_meta` line, with the time of the line it was read from (`line`, read as
/// `value`), and its payload's key order where Codex's differs.
fn rebuilt_meta(meta: &Meta, line: &[u8], value: Value) -> Option<Vec<u8>> {
    let order: Vec<String> = value.get("payload")?.as_object()?.keys().cloned().collect();
    let ts = value
        .get("timestamp")
        .and_then(Value::as_str)
        .map(String::from);
    let as_read = meta_payload(&read_meta(value, line), None);
    let keys = as_read.keys().ne(order.iter()).then_some(order);
    super::write::meta_line(meta, ts.as_deref(), keys.as_deref())
}
