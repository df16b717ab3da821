//! What a record read from this format needs, beyond its node, to be written back as it was.
//!
//! The reader leaves nothing for the writer but each node's [`Origin`] (the bytes of its
//! record, or of the records merged into it) and the session's (its first record with a
//! uuid). The writer reads them again here: the key orders a rebuilt record would get wrong,
//! the older `tokens` spelling of usage, and the record's text when rebuilding it cannot give
//! its bytes.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::read::{Member, merge, read_record};
use super::write::{apply_keys, native_record};
use super::{Common, Defaults, NAME};
use crate::diag::Location;
use crate::json::value::to_value;
use crate::model::{Body, Event, Meta, Node, Origin};
use crate::records::Span;

/// The session's fields as the reader took them (from its first record with a uuid): what
/// the records were read against.
pub(super) struct AsRead {
    pub(super) common: Common,
    defaults: Defaults,
}

impl AsRead {
    pub(super) fn of(meta: &Meta) -> Option<Self> {
        let map = object(Origin::of(&meta.origin, NAME)?)?;
        let field = |k: &str| map.get(k).and_then(Value::as_str).map(String::from);
        let common = Common {
            session_id: field("sessionId"),
            cwd: field("cwd"),
            version: field("version"),
            git_branch: field("gitBranch"),
        };
        Some(AsRead {
            defaults: Defaults::from_common(&common),
            common,
        })
    }
}

/// The key orders of a record and of the nested objects the writer rebuilds.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Layout {
    pub(super) record: Vec<String>,
    pub(super) message: Option<Vec<String>>,
    pub(super) usage: Option<Vec<String>>,
    pub(super) result: Option<Vec<String>>,
}

impl Layout {
    pub(super) fn of(map: &Map<String, Value>) -> Self {
        let keys = |v: Option<&Value>| {
            v.and_then(Value::as_object)
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
        };
        let usage = match map.get("usageMetadata") {
            Some(u @ Value::Object(_)) => Some(u),
            _ => map.get("tokens"),
        };
        Layout {
            record: map.keys().cloned().collect(),
            message: keys(map.get("message")),
            usage: keys(usage),
            result: keys(map.get("toolCallResult")),
        }
    }
}

/// What a node's record keeps from its text.
#[derive(Default)]
pub(super) struct Kept<'a> {
    /// Usage spelt `tokens` (an older layout), not `usageMetadata`.
    pub(super) tokens: bool,
    /// The record's key orders, where a rebuilt record's differ (`Layout::record` empty: as
    /// built).
    pub(super) keys: Layout,
    /// The record's text, when rebuilding the record (with `keys`) would not give its bytes.
    pub(super) raw: Option<Cow<'a, str>>,
}

impl<'a> Kept<'a> {
    /// What `node` keeps, when it was read from this format (`as_read`: the session's fields
    /// as read); nothing for any other node.
    pub(super) fn of(node: &'a Node, as_read: Option<&AsRead>) -> Self {
        let Some(bytes) = Origin::of(&node.origin, NAME) else {
            return Kept::default();
        };
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let map = match lines[..] {
            [line] => match to_value(line) {
                Ok((Value::Object(map), _)) if map.get("uuid").is_some_and(Value::is_string) => map,
                // A record kept whole: its value, or its text when the value does not give it.
                value => {
                    let value = match value {
                        Ok((v, _)) => v,
                        Err(_) => Value::String(text.to_string()),
                    };
                    let same = serde_json::to_string(&value).ok().as_deref() == Some(&*text);
                    return Kept {
                        raw: (!same).then_some(text),
                        ..Kept::default()
                    };
                }
            },
            _ => merged(&lines, &node.id),
        };
        let Some(as_read) = as_read else {
            return Kept::default();
        };
        let layout = Layout::of(&map);
        let tokens = !matches!(map.get("usageMetadata"), Some(Value::Object(_)))
            && matches!(map.get("tokens"), Some(Value::Object(_)));
        let (read, _) = read_record(map, node.id.clone(), &as_read.common);
        let mut kept = Kept {
            tokens: tokens && matches!(read.body, Body::Message(_)),
            ..Kept::default()
        };
        let Some(built) = native_record(&read, &as_read.defaults, kept.tokens) else {
            // Kept whole: written from its value; its text when that differs.
            if let Body::Event(Event::Custom { data, .. }) = &read.body
                && lines.len() == 1
                && serde_json::to_vec(data).ok().as_deref() != Some(bytes)
            {
                kept.raw = Some(text);
            }
            return kept;
        };
        let ours = Layout::of(&built);
        if ours != layout {
            let differs = |theirs: &Option<Vec<String>>, mine: &Option<Vec<String>>| {
                theirs
                    .as_ref()
                    .filter(|t| mine.as_ref() != Some(t))
                    .cloned()
            };
            kept.keys = Layout {
                record: match ours.record != layout.record {
                    true => layout.record.clone(),
                    false => Vec::new(),
                },
                message: differs(&layout.message, &ours.message),
                usage: differs(&layout.usage, &ours.usage),
                result: differs(&layout.result, &ours.result),
            };
        }
        // A node merged from several records is given back as those records while it reads
        // as they do (Qwen Code merges them again), not as one record made of them: nothing
        // one of them held apart (its time, its usage) is lost.
        let written = match lines.len() {
            1 => serde_json::to_vec(&apply_keys(built, &kept.keys)).unwrap_or_default(),
            _ => Vec::new(),
        };
        if written != bytes {
            kept.raw = Some(text);
        }
        kept
    }
}

/// Where the records merged again are said to be (nothing merging says here is kept).
const NO_SPAN: Span = Span {
    line: 0,
    offset: 0,
    len: 0,
};

/// The records of one node (`lines`, each a record's text) merged as the reader merges them.
fn merged(lines: &[&[u8]], uuid: &str) -> Map<String, Value> {
    let members: Vec<Member> = lines
        .iter()
        .map(|&l| (object(l).unwrap_or_default(), NO_SPAN, Cow::Borrowed(l)))
        .collect();
    merge(members, uuid, &Location::file(""), &mut Vec::new())
}

/// A node's text as written (one record, or the records merged into it, a line each) read
/// as the reader reads it: its record, or its records merged; `None` when a line is no
/// object.
pub(super) fn record_of(text: &[u8], uuid: &str) -> Option<Map<String, Value>> {
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    match lines[..] {
        [line] => object(line),
        _ => {
            let objects = lines.iter().all(|l| object(l).is_some());
            objects.then(|| merged(&lines, uuid))
        }
    }
}

/// A record's text read as an object, as the reader reads it.
fn object(bytes: &[u8]) -> Option<Map<String, Value>> {
    match to_value(bytes) {
        Ok((Value::Object(map), _)) => Some(map),
        _ => None,
    }
}
