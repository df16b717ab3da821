//! What a Gemini session needs, beyond its nodes, to be written back as it was.
//!
//! The reader leaves nothing for the writer but origins: each message record as it parsed it
//! (on both nodes a record with tool results becomes; the JSONL recording's MessageRecords are
//! the same records, so its nodes carry them too), and the document without its messages (the
//! session's). The writer reads them again here: the key orders of the document and of each
//! message, the shape of a message's `content` (a string, a list, one part, or none), and how
//! many result parts each tool call had, in which shape.

use serde_json::{Map, Value};

use super::NAME;
use crate::json::{Kind, Outlined, Raw};
use crate::model::{Meta, Node, Origin};

/// A message record's origin: the record as parsed.
pub(crate) fn message_origin(record: &Value) -> Origin {
    Origin::new(NAME, &serde_json::to_vec(record).unwrap_or_default())
}

/// `nodes` (a record's) with `origin` (none: left without).
pub(crate) fn with_origin(mut nodes: Vec<Node>, origin: Option<Origin>) -> Vec<Node> {
    if let Some(origin) = origin {
        for n in &mut nodes {
            n.origin = Some(origin.clone());
        }
    }
    nodes
}

/// The texts of a legacy document's messages as written (the last `messages` a repeated key
/// gives, as the reader takes it), when the document is one the text can be looked at in.
/// `bytes` is a document the reader has read (`json_document::parse`): its grammar is not
/// checked again.
pub(super) fn message_texts(bytes: &[u8]) -> Option<Vec<&str>> {
    let text = simdutf8::basic::from_utf8(crate::formats::trim_start(bytes)).ok()?;
    let text = text.trim_end_matches([' ', '\t', '\n', '\r']);
    let messages = Raw::valid(text)
        .entries()?
        .filter(|(key, _)| key.is("messages"))
        .last()?
        .1;
    Some(messages.items()?.map(Raw::text).collect())
}

/// The session's origin: the document's fields in file order (`keys`, `messages` among them),
/// with its messages left out (they are the nodes').
pub(super) fn document_origin(root: &Map<String, Value>, keys: &[String]) -> Origin {
    let mut doc = Map::with_capacity(keys.len());
    for k in keys {
        let v = match k.as_str() {
            "messages" => Value::Array(Vec::new()),
            _ => root.get(k).cloned().unwrap_or(Value::Null),
        };
        doc.insert(k.clone(), v);
    }
    Origin::new(NAME, &serde_json::to_vec(&doc).unwrap_or_default())
}

/// The document's keys in file order, for a session read from one.
pub(super) fn document_keys(meta: &Meta) -> Option<Vec<String>> {
    object_keys(Origin::of(&meta.origin, NAME)?)
}

fn object(text: &[u8]) -> Option<Map<String, Value>> {
    match crate::json::value::to_value(text).ok()? {
        (Value::Object(m), _) => Some(m),
        _ => None,
    }
}

fn object_keys(text: &[u8]) -> Option<Vec<String>> {
    object(text).map(|m| m.keys().cloned().collect())
}

/// The message record a node was read from, as the reader read it: looked at in its text,
/// never parsed into values (a record's content can be most of a session).
pub(super) struct MessageAsRead {
    /// Its keys in file order.
    pub(super) keys: Vec<String>,
    /// Its `content`: `"string"`, `"array"`, `"part"` (one part object) or `"absent"`.
    pub(super) content: &'static str,
}

/// A node's record, when it was read from a Gemini session: checked once, the places of its
/// entries noted on the way ([`Outlined`]).
fn record(node: &Node) -> Option<Outlined<'_>> {
    let text = std::str::from_utf8(Origin::of(&node.origin, NAME)?).ok()?;
    Outlined::parse(text)
}

impl MessageAsRead {
    /// The record `node` was read from, when it was read from a Gemini session.
    pub(super) fn of(node: &Node) -> Option<Self> {
        let m = record(node)?;
        let mut keys: Vec<String> = Vec::new();
        for key in m.keys() {
            let key = key.to_cow();
            // A repeated key keeps its first place, as in the parsed record.
            if !keys.iter().any(|k| *k == key) {
                keys.push(key.into_owned());
            }
        }
        let [content] = m.pick(["content"]);
        let content = match content.map(Raw::kind) {
            None => "absent",
            Some(Kind::String) => "string",
            Some(Kind::Array) => "array",
            Some(_) => "part",
        };
        Some(MessageAsRead { keys, content })
    }
}

/// Per tool call of the record a tool node was read from that had a result (as the reader's
/// `tool_call` reads it): how many result parts, and the result's shape.
pub(super) fn results_as_read(tool: &Node) -> Option<Vec<(usize, &'static str)>> {
    let record = record(tool)?;
    let [calls] = record.pick(["toolCalls"]);
    let calls = calls?;
    let objects = calls.items()?.all(|c| c.kind() == Kind::Object);
    if !objects || calls.items()?.next().is_none() {
        return Some(Vec::new());
    }
    let mut results = Vec::new();
    for call in calls.items()? {
        let Some(result) = call.get("result").filter(|r| !r.is_null()) else {
            continue;
        };
        let shape = match result.kind() {
            Kind::String => "string",
            Kind::Array => "array",
            _ => "part",
        };
        // As many parts as `parts_from_union` makes of it: one per item of a list, else one.
        let parts = match result.kind() {
            Kind::Array => result.items()?.count(),
            _ => 1,
        };
        results.push((parts, shape));
    }
    Some(results)
}
