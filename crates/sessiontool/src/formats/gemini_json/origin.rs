//! What a Gemini session needs, beyond its nodes, to be written back as it was.
//!
//! The reader leaves nothing for the writer but origins: each message record as it parsed it
//! (on both nodes a record with tool results becomes; the JSONL recording's MessageRecords are
//! the same records, so its nodes carry them too), and the document without its messages (the
//! session's). The writer reads them again here: the key orders of the document and of each
//! message, the shape of a message's `content` (a string, a list, one part, or none), and how
//! many result parts each tool call had, in which shape.

use serde_json::{Map, Value};

use super::{NAME, all_objects, tool_call};
use crate::model::{Meta, Node, Origin};

/// A message record's origin: the record as parsed.
pub(crate) fn message_origin(record: &Value) -> Origin {
    Origin::new(NAME, &serde_json::to_vec(record).unwrap_or_default())
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

/// The message record a node was read from, as the reader read it.
pub(super) struct MessageAsRead {
    /// Its keys in file order.
    pub(super) keys: Vec<String>,
    /// Its `content`: `"string"`, `"array"`, `"part"` (one part object) or `"absent"`.
    pub(super) content: &'static str,
    /// Per tool call with a result: how many result parts it had, and the result's shape.
    pub(super) results: Vec<(usize, &'static str)>,
}

impl MessageAsRead {
    /// The record `node` was read from, when it was read from a Gemini session.
    pub(super) fn of(node: &Node) -> Option<Self> {
        let m = object(Origin::of(&node.origin, NAME)?)?;
        let content = match m.get("content") {
            None => "absent",
            Some(Value::String(_)) => "string",
            Some(Value::Array(_)) => "array",
            Some(_) => "part",
        };
        let mut results = Vec::new();
        if let Some(calls) = m.get("toolCalls").filter(|t| all_objects(t)) {
            for call in calls.as_array().into_iter().flatten() {
                if let (_, parts, Some(shape)) = tool_call(call.clone()) {
                    results.push((parts.len(), shape));
                }
            }
        }
        Some(MessageAsRead {
            keys: m.keys().cloned().collect(),
            content,
            results,
        })
    }
}
