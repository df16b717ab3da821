//! Key orders of an entry and of the objects in it the writer rebuilds, and where what was
//! read differs from what the writer gives (the `claude-jsonl.keys` hint).

use serde_json::{Map, Value};

type Keys = Vec<String>;

/// The key orders of an entry and the objects inside it the writer rebuilds.
#[derive(Debug, PartialEq)]
pub(super) struct Layout {
    record: Keys,
    message: Option<Keys>,
    usage: Option<Keys>,
    blocks: Vec<Option<Keys>>,
}

fn keys_of(v: Option<&Value>) -> Option<Keys> {
    v.and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
}

fn list(keys: &Keys) -> Value {
    Value::Array(keys.iter().map(|k| Value::String(k.clone())).collect())
}

impl Layout {
    pub(super) fn of(rec: &Map<String, Value>) -> Self {
        let msg = rec.get("message");
        let blocks = match msg.and_then(|m| m.get("content")) {
            Some(Value::Array(b)) => b.iter().map(|b| keys_of(Some(b))).collect(),
            _ => Vec::new(),
        };
        Layout {
            record: rec.keys().cloned().collect(),
            message: keys_of(msg),
            usage: keys_of(msg.and_then(|m| m.get("usage"))),
            blocks,
        }
    }

    /// Where `self` (what was read) differs from `built` (what the writer gives).
    pub(super) fn diff(&self, built: &Layout) -> Map<String, Value> {
        let mut hint = Map::new();
        if self.record != built.record {
            hint.insert("record".into(), list(&self.record));
        }
        for (name, theirs, ours) in [
            ("message", &self.message, &built.message),
            ("usage", &self.usage, &built.usage),
        ] {
            if let Some(t) = theirs
                && ours.as_ref() != Some(t)
            {
                hint.insert(name.into(), list(t));
            }
        }
        if self.blocks != built.blocks {
            let blocks = self
                .blocks
                .iter()
                .enumerate()
                .map(|(i, t)| match t {
                    Some(t) if built.blocks.get(i).and_then(Option::as_ref) != Some(t) => list(t),
                    _ => Value::Null,
                })
                .collect();
            hint.insert("blocks".into(), Value::Array(blocks));
        }
        hint
    }
}
