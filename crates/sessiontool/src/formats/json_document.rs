//! What the whole-file JSON session formats (`gemini-json`, `simple-agent-json`, and for editing
//! in place `checkpoint`) share: telling a pretty-printed document from JSONL, parsing it with a
//! located error, the key orders their readers record and their writers follow, the node that
//! keeps a message whole, the session times and message fields their writers start from, and
//! a repair that changes nothing else.

use std::path::Path;

use serde_json::{Map, Value};

use super::{DAMAGED_HINT, Input, ReadError, ends_with_newline, ordered, to_pretty_js, trim_start};
use crate::diag::{Location, LossReport};
use crate::json::Raw;
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
pub(crate) struct Document<'a> {
    /// Every field but `messages`.
    pub root: Map<String, Value>,
    /// The top-level keys in file order, `messages` included.
    pub keys: Vec<String>,
    pub messages: Messages<'a>,
    /// What a `Value` could not hold of the document (said as a warning), if anything.
    pub lossy: Option<crate::diag::Diagnostic>,
}

/// A document's messages. Read one at a time from the document's text when they can be (a
/// whole session as a tree of values takes several times its size), else read with it.
pub(crate) enum Messages<'a> {
    /// Each message's text, checked: read into a value when its turn comes.
    Text(Vec<Raw<'a>>),
    Values(Vec<Value>),
}

impl<'a> Messages<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Messages::Text(m) => m.len(),
            Messages::Values(m) => m.len(),
        }
    }

    /// Each message as a value, in order; a message too deep to read is the document's error
    /// (`input` names it).
    pub(crate) fn values<'i>(
        self,
        input: &'i Input<'a>,
    ) -> impl Iterator<Item = Result<Value, ReadError>> + 'i
    where
        'a: 'i,
    {
        let (text, values) = match self {
            Messages::Text(m) => (m, Vec::new()),
            Messages::Values(m) => (Vec::new(), m),
        };
        let from_text = text.into_iter().map(move |raw| {
            crate::json::value::to_value(raw.text().as_bytes())
                .map(|(v, _)| v)
                .map_err(|e| {
                    let at = raw.text().as_ptr() as usize - input.bytes.as_ptr() as usize;
                    not_json(input, at, &e)
                })
        });
        from_text.chain(values.into_iter().map(Ok))
    }
}

/// Parses a document. `tool` names the session in the errors ("expected a JSON object (a Gemini
/// session) at the top level"); `null_messages`: `"messages": null` is a session without messages
/// (Go writes a nil slice so).
pub(crate) fn parse<'a>(
    input: &Input<'a>,
    tool: &str,
    null_messages: bool,
) -> Result<Document<'a>, ReadError> {
    match parse_by_message(input, tool, null_messages)? {
        Some(document) => Ok(document),
        None => parse_whole(input, tool, null_messages),
    }
}

/// [`parse`] of the whole document into one value.
fn parse_whole<'a>(
    input: &Input<'a>,
    tool: &str,
    null_messages: bool,
) -> Result<Document<'a>, ReadError> {
    let (value, lossy) = document_value(input)?;
    let lossy = (!lossy.is_lossless()).then(|| crate::diag::Diagnostic {
        code: crate::formats::LOSSY,
        severity: crate::diag::Severity::Warning,
        location: Location::file(input.name),
        message: format!(
            "{}: the session is read as its tool reads it, but rebuilding it (in another format, or rewritten) changes those values",
            lossy.describe()
        ),
    });
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
        _ => return Err(no_messages(input, tool)),
    };
    Ok(Document {
        root,
        keys,
        messages: Messages::Values(messages),
        lossy,
    })
}

/// [`parse`] with the messages left as their text, when the document is an object holding no
/// escape a value cannot hold (a lone surrogate is said: that document is read whole), its
/// other fields read as [`document_value`] reads them (a repeated key keeps its first place and
/// its last value). `None` for any other document: the whole read says what it is.
fn parse_by_message<'a>(
    input: &Input<'a>,
    tool: &str,
    null_messages: bool,
) -> Result<Option<Document<'a>>, ReadError> {
    let body = trim_start(input.bytes);
    if may_hold_a_surrogate_escape(body) {
        return Ok(None);
    }
    let Ok(text) = simdutf8::basic::from_utf8(body) else {
        return Ok(None);
    };
    let Some(entries) = Raw::parse(text).ok().and_then(Raw::entries) else {
        return Ok(None);
    };
    let mut root = Map::new();
    let mut messages = None;
    for (key, value) in entries {
        let name = key.name().value.into_owned();
        if name == "messages" {
            // Its place among the keys; the last one counts.
            root.insert(name, Value::Null);
            messages = Some(value);
            continue;
        }
        let Ok((value, _)) = crate::json::value::to_value(value.text().as_bytes()) else {
            return Ok(None);
        };
        root.insert(name, value);
    }
    let keys: Vec<String> = root.keys().cloned().collect();
    root.shift_remove("messages");
    let messages = match messages {
        Some(m) if m.kind() == crate::json::Kind::Array => {
            m.items().into_iter().flatten().collect()
        }
        Some(m) if m.is_null() && null_messages => Vec::new(),
        _ => return Err(no_messages(input, tool)),
    };
    Ok(Some(Document {
        root,
        keys,
        messages: Messages::Text(messages),
        lossy: None,
    }))
}

/// Whether `b` may hold a `\uD800`-`\uDFFF` escape (it may be a false alarm: an escaped
/// backslash before `u`).
fn may_hold_a_surrogate_escape(b: &[u8]) -> bool {
    memchr::memmem::find_iter(b, b"\\u").any(|i| {
        matches!(b.get(i + 2), Some(b'd' | b'D'))
            && matches!(b.get(i + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}

fn no_messages(input: &Input, tool: &str) -> ReadError {
    ReadError::new(
        Location::file(input.name),
        format!("no `messages` array: this is not a {tool} session file"),
    )
}

/// The whole document as its tool's `JSON.parse` reads it (see [`crate::json::value`]), or
/// where and why it is not JSON.
pub(crate) fn document_value(
    input: &Input,
) -> Result<(Value, crate::json::value::Lossy), ReadError> {
    use crate::json::value::to_value;
    let body = trim_start(input.bytes);
    let skipped = input.bytes.len() - body.len();
    to_value(body).map_err(|e| not_json(input, skipped, &e))
}

/// What a text of the document (`start`: where it starts in the input) is, when it cannot be
/// read: where and why.
fn not_json(input: &Input, start: usize, e: &crate::json::value::ToValueError) -> ReadError {
    use crate::json::value::ToValueError;
    let (at, what) = match e {
        ToValueError::Syntax(s) if s.cut_short => (
            s.at,
            "the session JSON ends before it is complete (truncated, probably by a crash)",
        ),
        ToValueError::Syntax(s) => (s.at, "the session JSON is not valid"),
        ToValueError::Utf8(at) => (*at, "the session JSON is not valid UTF-8"),
        ToValueError::TooDeep => (0, "the session JSON is nested too deep to read"),
    };
    ReadError::new(at_offset(input, start + at), format!("{what}: {e}")).with_hint(DAMAGED_HINT)
}

/// The location of a byte offset in the input: its line and offset.
pub(crate) fn at_offset(input: &Input, offset: usize) -> Location {
    let offset = offset.min(input.bytes.len());
    let line = memchr::memchr_iter(b'\n', &input.bytes[..offset]).count() as u64 + 1;
    Location::at(input.name, line, offset as u64)
}

/// Keys in the order read, for the hint [`ordered_as_read`] follows.
pub(crate) fn key_list(keys: impl IntoIterator<Item = impl AsRef<str>>) -> Value {
    Value::Array(
        keys.into_iter()
            .map(|k| Value::String(k.as_ref().to_string()))
            .collect(),
    )
}

/// Orders keys as the reader saw them when it recorded that (a [`key_list`] under `hint` in
/// `hints`), else as the tool writes them (`canonical`).
pub(crate) fn ordered_as_read(
    map: Map<String, Value>,
    hints: &Extra,
    hint: &str,
    canonical: &[&str],
) -> Map<String, Value> {
    match hints.get(hint).and_then(Value::as_array) {
        Some(keys) => {
            let keys: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
            ordered(ordered(map, canonical), &keys)
        }
        None => ordered(map, canonical),
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
        hints: Extra::new(),
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
    let final_newline = ends_with_newline(bytes);
    if to_pretty_js(&doc, final_newline) != body {
        return None;
    }
    let changed = edit(&mut doc)?;
    if changed == 0 {
        return None;
    }
    let mut out = bytes[..bytes.len() - body.len()].to_vec();
    out.extend(to_pretty_js(&doc, final_newline));
    Some((out, changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a parse gives, comparable: a reader's error (said by the parse, or by reading a
    /// message; where it is said to be may differ: at the message, not the document's start),
    /// or the document.
    fn outcome(r: Result<Document, ReadError>, input: &Input) -> String {
        match r {
            Err(e) => format!("error: {}", e.message),
            Ok(d) => {
                let messages: Result<Vec<String>, ReadError> = d
                    .messages
                    .values(input)
                    .map(|m| m.map(|v| serde_json::to_string(&v).unwrap()))
                    .collect();
                let messages = match messages {
                    Ok(m) => m,
                    Err(e) => return format!("error: {}", e.message),
                };
                format!(
                    "root {}\nkeys {:?}\nmessages {messages:?}\nlossy {:?}",
                    serde_json::to_string(&d.root).unwrap(),
                    d.keys,
                    d.lossy.map(|l| l.message)
                )
            }
        }
    }

    /// Reading the messages one at a time gives what reading the whole document gives.
    #[test]
    fn messages_read_one_at_a_time_are_the_whole_documents() {
        let deep = format!("{}1{}", "[".repeat(600), "]".repeat(600));
        let mut cases: Vec<String> = [
            r#"{"sessionId":"s","messages":[{"id":"a","content":"x"},{"id":"b","n":1.50e3}],"z":1}"#,
            r#"  {"messages":[],"messages":[{"id":"late"}],"a":1,"a":[2,{"b":-0}]}"#,
            "\u{feff}{\"messages\":[{\"id\":\"bom\"}]}\n",
            r#"{"messages":null}"#,
            r#"{"messages":{"not":"an array"}}"#,
            r#"{"other":[]}"#,
            r#"[{"messages":[]}]"#,
            r#"{"messages":[{"id":"a"}]} trailing"#,
            r#"{"messages":[{"id":"cut"#,
            r#"{"messages":[{"t":"\ud83d"}],"k":"\uDC00"}"#,
            r#"{"messages":[{"t":"\\ud83d is no escape"}]}"#,
            r#"{"messages":[{"big":123456789012345678901234567890,"e":1E400}]}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.push(format!(r#"{{"messages":[{{"deep":{deep}}}]}}"#));
        cases.push(format!(r#"{{"messages":[],"deep":{deep}}}"#));
        for name in ["gemini-json/plain.json", "simple-agent-json/plain.json"] {
            cases.push(std::fs::read_to_string(format!("fixtures/{name}")).unwrap());
        }
        let mut by_message = 0;
        for text in &cases {
            let input = Input {
                name: "doc.json",
                path: None,
                bytes: text.as_bytes(),
            };
            for null_messages in [false, true] {
                let lazy = outcome(parse(&input, "T", null_messages), &input);
                let whole = outcome(parse_whole(&input, "T", null_messages), &input);
                assert_eq!(lazy, whole, "{text}");
            }
            if let Ok(Some(_)) = parse_by_message(&input, "T", false) {
                by_message += 1;
            }
        }
        // The plain one, the repeated keys, the BOM, the big numbers, the deep message and
        // both fixtures (an escaped backslash before `u` is taken for a surrogate escape, and
        // a field too deep for a value sends the document to the whole read, which says so).
        assert_eq!(by_message, 7);
    }
}
