//! What a session read from this format needs, beyond its nodes, to be written back as it was.
//!
//! The reader leaves nothing for the writer but the document (the session's [`Origin`]) and
//! each message as it parsed it (its node's). The writer reads them again here: the key orders
//! of the document, its `metadata` and each message; whether the file had `<`, `>` or `&`
//! unescaped (Go never writes them raw); how a message without text had its `content`; and the
//! `arguments` strings re-encoding would not give back.

use serde_json::{Map, Value};

use super::{NAME, call_part};
use crate::formats::{Input, json_document};
use crate::model::{Meta, Node, Origin};

/// The document a session was read from, as the reader read it.
pub(super) struct DocumentAsRead {
    /// The top-level keys in file order.
    pub(super) keys: Vec<String>,
    /// The keys of `metadata`, in file order.
    pub(super) metadata_keys: Option<Vec<String>>,
    /// The file had `<`, `>` or `&` unescaped: written back so.
    pub(super) raw_html: bool,
}

impl DocumentAsRead {
    pub(super) fn of(meta: &Meta) -> Option<Self> {
        let bytes = Origin::of(&meta.origin, NAME)?;
        let input = Input {
            name: NAME,
            path: None,
            bytes,
        };
        let doc = json_document::parse(&input, "simple-agent", true).ok()?;
        let metadata_keys = match doc.root.get("metadata") {
            Some(Value::Object(md)) => Some(md.keys().cloned().collect()),
            _ => None,
        };
        Some(DocumentAsRead {
            keys: doc.keys,
            metadata_keys,
            raw_html: bytes.iter().any(|b| matches!(b, b'<' | b'>' | b'&')),
        })
    }
}

/// The message a node was read from, as the reader read it.
#[derive(Default)]
pub(super) struct MessageAsRead {
    /// Its keys in file order.
    pub(super) keys: Option<Vec<String>>,
    /// How it had no text: `"absent"` (no `content`) or `"empty"` (`""`).
    pub(super) no_text: Option<&'static str>,
    /// Per call, the `arguments` string when re-encoding its parsed value would not give it.
    pub(super) arguments: Vec<Option<String>>,
}

impl MessageAsRead {
    /// The message `node` was read from; nothing known when it was not read from this format.
    pub(super) fn of(node: &Node) -> Self {
        Self::read(node).unwrap_or_default()
    }

    fn read(node: &Node) -> Option<Self> {
        let text = Origin::of(&node.origin, NAME)?;
        let Ok((Value::Object(m), _)) = crate::json::value::to_value(text) else {
            return None;
        };
        let no_text = match m.get("content") {
            None => Some("absent"),
            Some(Value::String(s)) if s.is_empty() => Some("empty"),
            _ => None,
        };
        Some(MessageAsRead {
            keys: Some(m.keys().cloned().collect()),
            no_text,
            arguments: arguments(&m),
        })
    }
}

/// The `arguments` strings of a message's calls that re-encoding would not give back, when its
/// `tool_calls` are all well-formed calls (else they were kept whole).
fn arguments(m: &Map<String, Value>) -> Vec<Option<String>> {
    let Some(Value::Array(calls)) = m.get("tool_calls") else {
        return Vec::new();
    };
    let read: Option<Vec<_>> = calls.iter().map(call_part).collect();
    read.into_iter().flatten().map(|(_, keep)| keep).collect()
}
