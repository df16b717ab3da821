//! What an entry read from this format needs, beyond its node, to be written back as it was.
//!
//! The reader leaves nothing for the writer but each node's [`Origin`] (its line) and the
//! session's (the header line; empty when the file had none). The writer reads them again
//! here: whether the entry had an id of its own (version 1 entries have none; a repeated id
//! was renamed when read), whether a user message's content was a string, the key orders a
//! rebuilt entry would get wrong, and whether the node still reads as its line does (then the
//! line is written as it was).

use serde_json::{Map, Value};

use super::entry::read_entry;
use super::{NAME, RECORD};
use crate::model::{Body, Event, Meta, Node, Origin};

/// A node's line as the reader read it: its text and, when it is a JSON object, the entry.
pub(super) struct AsRead<'a> {
    pub(super) text: &'a [u8],
    entry: Option<Map<String, Value>>,
    /// A line that is no entry object, as its node keeps it.
    whole: Option<Value>,
}

impl<'a> AsRead<'a> {
    /// The line `node` was read from, when it was read from this format.
    pub(super) fn of(node: &'a Node) -> Option<Self> {
        let text = Origin::of(&node.origin, NAME)?;
        let (entry, whole) = match crate::json::value::to_value(text) {
            Ok((Value::Object(map), _)) => (Some(map), None),
            Ok((value, _)) => (None, Some(value)),
            Err(_) => (None, Some(super::read::unparsed(text))),
        };
        Some(AsRead { text, entry, whole })
    }

    /// What the reader keeps of a line that is no entry object: its value, or its text when
    /// it does not parse.
    fn whole(&self) -> Option<&Value> {
        self.whole.as_ref()
    }

    /// The entry's own `id`: `None` when it had none (version 1, or a line that is no entry),
    /// and pi's entries have none to write.
    pub(super) fn own_id(&self) -> Option<&Value> {
        self.entry.as_ref()?.get("id").filter(|v| v.is_string())
    }

    /// Whether the entry's message held its content as a string rather than blocks.
    pub(super) fn content_string(&self) -> bool {
        self.entry
            .as_ref()
            .and_then(|e| e.get("message")?.get("content"))
            .is_some_and(Value::is_string)
    }

    /// The entry's key orders (none for a line that is no object).
    pub(super) fn layout(&self) -> Option<super::write::Layout> {
        self.entry.as_ref().map(super::write::Layout::of)
    }

    /// Whether `node` still reads as its line does: the same time, body and fields, and, for
    /// an entry with an id, the same parent (a version 1 entry's parent is its place in the
    /// file, which its line does not write).
    pub(super) fn reads_as(&self, node: &Node) -> bool {
        let Some(entry) = &self.entry else {
            return self.whole() == record_data(node);
        };
        let mut again = read_entry(entry.clone(), node.id.clone(), node.parent.clone());
        // A version 1 compaction's first kept entry is found by the reader in the entry list
        // (`firstKeptEntryIndex`), not in the line.
        if let (
            Body::Event(Event::Compaction { first_kept, .. }),
            Body::Event(Event::Compaction { first_kept: f, .. }),
        ) = (&mut again.body, &node.body)
            && entry.contains_key("firstKeptEntryIndex")
        {
            first_kept.clone_from(f);
        }
        let parent = match self.own_id() {
            Some(_) => super::read::entry_parent(entry) == node.parent,
            None => true,
        };
        parent
            && (&again.timestamp, &again.body, &again.extra)
                == (&node.timestamp, &node.body, &node.extra)
    }
}

/// The data of a node that keeps a line whole (`None` for any other node).
pub(super) fn record_data(node: &Node) -> Option<&Value> {
    match &node.body {
        Body::Event(Event::Custom { kind, data }) if kind == RECORD => Some(data),
        _ => None,
    }
}

/// The header's `version`, from the header line the session was read from (`None`: version 1,
/// no header, or a session from another format).
pub(super) fn version(meta: &Meta) -> Option<Value> {
    let text = Origin::of(&meta.origin, NAME)?;
    match crate::json::value::to_value(text) {
        Ok((Value::Object(mut h), _)) => h.shift_remove("version"),
        _ => None,
    }
}
