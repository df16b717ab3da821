//! What the whole-file JSON session formats (`gemini-json`, `simple-agent-json`, and for editing
//! in place `checkpoint`) share: telling a pretty-printed document from JSONL, parsing it with a
//! located error, the key orders their readers record and their writers follow, the node that
//! keeps a message whole, the session times and message fields their writers start from, and
//! a repair that changes nothing else.

use std::path::Path;

use serde_json::{Map, Value};

use super::{DAMAGED_HINT, Input, ReadError, ordered, to_pretty_js, trim_start};
use crate::diag::{Location, LossReport};
use crate::model::{Body, Event, Extra, Message, Meta, Node};

/// `head` without a byte order mark and leading white space, when it can start a document
/// written whole: an object whose first line does not end it (one object per line is JSONL), in
/// a file not named `.jsonl`. `None` when it cannot.
pub(crate) fn document_head<'a>(path: Option<&Path>, head: &'a [u8]) -> Option<&'a [u8]> {
    let head = trim_start(head);
    let jsonl_name = path
        .and_then(|p| p.extension())
        .is_some_and(|e| e == "jsonl");
    if !head.starts_with(b"{") || jsonl_name {
        return None;
    }
    let first_line_ends_object = head
        .iter()
        .position(|&b| b == b'\n')
        .is_some_and(|nl| trim_end(&head[..nl]).ends_with(b"}"));
    (!first_line_ends_object).then_some(head)
}

fn trim_end(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &b[..end]
}

/// A document's top-level object, split for a reader.
pub(crate) struct Document {
    /// Every field but `messages`.
    pub root: Map<String, Value>,
    /// The top-level keys in file order, `messages` included.
    pub keys: Vec<String>,
    pub messages: Vec<Value>,
    /// What a `Value` could not hold of the document (said as a warning), if anything.
    pub lossy: Option<crate::diag::Diagnostic>,
}

/// Parses a document. `tool` names the session in the errors ("expected a JSON object (a Gemini
/// session) at the top level"); `null_messages`: `"messages": null` is a session without messages
/// (Go writes a nil slice so).
pub(crate) fn parse(input: &Input, tool: &str, null_messages: bool) -> Result<Document, ReadError> {
    let (value, lossy) = document_value(input)?;
    let lossy = (!lossy.is_lossless()).then(|| lossy_said(&lossy, input.name));
    let Value::Object(mut root) = value else {
        return Err(ReadError::new(
            Location::file(input.name),
            format!("expected a JSON object (a {tool} session) at the top level"),
        ));
    };
    let keys: Vec<String> = root.keys().cloned().collect();
    let messages = match root.shift_remove("messages") {
        Some(Value::Array(m)) => m,
        Some(Value::Null) if null_messages => Vec::new(),
        _ => {
            return Err(ReadError::new(
                Location::file(input.name),
                format!("no `messages` array: this is not a {tool} session file"),
            ));
        }
    };
    Ok(Document {
        root,
        keys,
        messages,
        lossy,
    })
}

/// What a reader says of a document (`file`) whose values cannot hold all of it.
pub(crate) fn lossy_said(lossy: &crate::json::value::Lossy, file: &str) -> crate::diag::Diagnostic {
    let read_as = "the session is read as its tool reads it";
    crate::formats::lossy_said(lossy, Location::file(file), read_as)
}

/// The whole document as its tool's `JSON.parse` reads it (see [`crate::json::value`]), or
/// where and why it is not JSON.
pub(crate) fn document_value(
    input: &Input,
) -> Result<(Value, crate::json::value::Lossy), ReadError> {
    use crate::json::value::{ToValueError, to_value};
    let body = trim_start(input.bytes);
    let skipped = input.bytes.len() - body.len();
    to_value(body).map_err(|e| {
        let (at, what) = match &e {
            ToValueError::Syntax(s) if s.cut_short => (
                s.at,
                "the session JSON ends before it is complete (truncated, probably by a crash)",
            ),
            ToValueError::Syntax(s) => (s.at, "the session JSON is not valid"),
            ToValueError::Utf8(at) => (*at, "the session JSON is not valid UTF-8"),
            ToValueError::TooDeep => (0, "the session JSON is nested too deep to read"),
        };
        ReadError::new(at_offset(input, skipped + at), format!("{what}: {e}"))
            .with_hint(DAMAGED_HINT)
    })
}

/// The location of a byte offset in the input: its line and offset.
pub(crate) fn at_offset(input: &Input, offset: usize) -> Location {
    let offset = offset.min(input.bytes.len());
    let line = memchr::memchr_iter(b'\n', &input.bytes[..offset]).count() as u64 + 1;
    Location::at(input.name, line, offset as u64)
}

/// Orders keys as `read` has them (the object a node was read from), else as the tool writes
/// them (`canonical`).
pub(crate) fn ordered_like(
    map: Map<String, Value>,
    read: Option<&[String]>,
    canonical: &[&str],
) -> Map<String, Value> {
    let map = ordered(map, canonical);
    match read {
        Some(keys) => ordered(map, &keys.iter().map(String::as_str).collect::<Vec<_>>()),
        None => map,
    }
}

/// A written session's start and last-update times: the session's own, else those of its
/// first and last written messages, else `now`.
pub(crate) fn session_times(meta: &Meta, messages: &[Value], now: String) -> (String, String) {
    let start = meta
        .start_time
        .clone()
        .or_else(|| timestamp_of(messages.first()))
        .unwrap_or_else(|| now.clone());
    let last = meta
        .last_updated
        .clone()
        .or_else(|| timestamp_of(messages.last()))
        .unwrap_or(now);
    (start, last)
}

/// The `timestamp` string of a message.
fn timestamp_of(message: Option<&Value>) -> Option<String> {
    message
        .and_then(|m| m.get("timestamp"))
        .and_then(Value::as_str)
        .map(String::from)
}

/// The fields a written message starts from: those the message and its node kept when the
/// session is this format's (`own`); else none, and their count lost (`tool` names the session).
pub(crate) fn kept_fields(
    node: &Node,
    m: &Message,
    own: bool,
    tool: &str,
    losses: &mut LossReport,
) -> Map<String, Value> {
    let mut fields = Map::new();
    if own {
        fields.extend(m.extra.clone());
        fields.extend(node.extra.clone());
    } else {
        losses.add(
            "record-fields",
            m.extra.len() + node.extra.len(),
            format!("fields of the source records that a {tool} session has no place for"),
        );
    }
    fields
}

/// A message the reader cannot map, kept whole as a custom event of `kind` (its `timestamp`,
/// when it has one, is the node's), so the writer puts it back as it was.
pub(crate) fn kept_message(id: String, parent: Option<String>, kind: &str, data: Value) -> Node {
    Node {
        id,
        parent,
        timestamp: timestamp_of(Some(&data)),
        body: Body::Event(Event::Custom {
            kind: kind.into(),
            data,
        }),
        extra: Extra::new(),
        origin: None,
    }
}

/// A document as `JSON.stringify(value, null, 2)` writes it, after `edit` (which changes the
/// parsed value and says how many things it changed): the same bytes apart from those changes,
/// a leading byte order mark, white space and a final newline kept. `None` when the document
/// would not be written back byte for byte (it is then left alone), or `edit` changed nothing.
pub(crate) fn edit_pretty_js(
    bytes: &[u8],
    edit: impl FnOnce(&mut Value) -> Option<usize>,
) -> Option<(Vec<u8>, usize)> {
    let body = trim_start(bytes);
    let mut doc: Value = serde_json::from_slice(body).ok()?;
    let tail = &body[body.trim_ascii_end().len()..];
    let pretty = |doc: &Value| [to_pretty_js(doc, false).as_slice(), tail].concat();
    if pretty(&doc) != body {
        return None;
    }
    let changed = edit(&mut doc)?;
    if changed == 0 {
        return None;
    }
    let mut out = bytes[..bytes.len() - body.len()].to_vec();
    out.extend(pretty(&doc));
    Some((out, changed))
}
