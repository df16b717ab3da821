//! A message entry's node made from its text ([`Raw`]) without building the entry as a
//! `serde_json::Value` first: the node [`Shape::node`](super::read::Shape::node) makes of the
//! same entry for a user other than this format's writer (no origin), field for field. Only
//! what is plain is read here: objects whose keys hold no escape, are given once and number at
//! most [`MOST_FIELDS`], and text, thinking, tool-use and tool-result blocks in their usual
//! shape. Anything else gives `None` (the entry) or goes through the `Value` code (a block),
//! which then makes it as it always did. `raw_node_tests.rs` holds the two ways to each
//! other.

use std::borrow::Cow;

use serde_json::Value;

use super::blocks::part_from_block;
use super::read::{interprets, node_id};
use super::usage::usage_from;
use super::write::Base;
use crate::json::scan::{skip_valid, skip_ws};
use crate::json::{Kind, Raw};
use crate::model::{Body, Content, Extra, Message, Node, Part, Role, Usage};

/// The most fields of an object read here (an entry has about twenty).
const MOST_FIELDS: usize = 32;

/// The node of the message entry `entry` (a chain entry whose `message.content` is a string or
/// an array, of type `user` or `assistant`), whose uuid is the `occurrence`-th of its value;
/// `values`: the values of the fields the reader does not interpret are read too (else they
/// are null, as [`MadeFor::Counting`](crate::engine::MadeFor) asks). `None` when the entry is
/// not plain enough to be read here (or not such an entry).
pub(super) fn message_node(
    entry: Raw<'_>,
    occurrence: u32,
    base: &Base,
    values: bool,
) -> Option<Node> {
    // One pass over the text: the message and its content's blocks are read where they are
    // met, not skipped first and read again.
    let text = entry.text();
    let mut message = None;
    let mut blocks = Vec::new();
    let (fields, _) = object_at(text, 0, |name, at| match name {
        "message" if text.as_bytes()[at] == b'{' => {
            let (m, end) = object_at(text, at, |name, at| match name {
                "content" if text.as_bytes()[at] == b'[' => {
                    blocks.clear();
                    Some(Some(blocks_at(text, at, &mut blocks)?))
                }
                _ => Some(None),
            })?;
            message = Some(m);
            Some(Some(end))
        }
        _ => Some(None),
    })?;
    let uuid = text_of(fields.get("uuid")?)?;
    let assistant = match text_of(fields.get("type")?)?.as_ref() {
        "assistant" => true,
        "user" => false,
        _ => return None,
    };
    let message = message?;
    if !fields
        .get("message")
        .is_some_and(|m| m.kind() == Kind::Object)
    {
        return None;
    }
    let content = message.get("content")?;
    if !matches!(content.kind(), Kind::String | Kind::Array) {
        return None;
    }
    // The entry's other fields, as `chain_node`'s `retain` leaves them.
    let mut parent = None;
    let mut timestamp = None;
    let mut extra = Extra::new();
    for (key, value) in fields.iter() {
        match (key, value.kind()) {
            ("uuid" | "type" | "message", _) => continue,
            ("parentUuid", Kind::String) => {
                parent = Some(text_of(value)?.into_owned());
                continue;
            }
            ("parentUuid", Kind::Null) => continue,
            ("timestamp", Kind::String) => {
                timestamp = Some(text_of(value)?.into_owned());
                continue;
            }
            _ if is_base_value(base, key, value) => continue,
            _ => {}
        }
        let value = match values || interprets(key) {
            true => value_of(value)?,
            false => Value::Null,
        };
        extra.insert(key.to_string(), value);
    }
    // The message's fields, as `chain_node` takes them out.
    let role_name = if assistant { "assistant" } else { "user" };
    let mut model = None;
    let mut usage = None;
    let mut message_extra = Extra::new();
    for (key, value) in message.iter() {
        match (key, value.kind()) {
            ("role", Kind::String) if text_of(value)? == role_name => continue,
            ("content", _) => continue,
            ("model", Kind::String) => {
                model = Some(text_of(value)?.into_owned());
                continue;
            }
            ("usage", Kind::Object) => {
                usage = Some(usage_of(value)?);
                continue;
            }
            _ => {}
        }
        message_extra.insert(key.to_string(), value_of(value)?);
    }
    let parts = match content.kind() {
        Kind::String => vec![Part::text(text_of(content)?)],
        _ => {
            let mut parts = Vec::with_capacity(blocks.len());
            for block in blocks {
                parts.push(part_of(block)?);
            }
            parts
        }
    };
    let role = match assistant {
        true => Role::Assistant,
        false
            if parts
                .iter()
                .any(|p| matches!(p.content, Content::ToolResult { .. })) =>
        {
            Role::Tool
        }
        false => Role::User,
    };
    Some(Node {
        id: node_id(&uuid, occurrence),
        parent,
        timestamp,
        body: Body::Message(Message {
            role,
            parts,
            model,
            usage,
            extra: message_extra,
        }),
        extra,
        origin: None,
    })
}

/// `message.usage` as [`usage_from`] makes it of the object's `Value`, read from its text: the
/// three counts it takes out taken where they are numbers a `u64` holds as written (what
/// `as_u64` takes), every other field kept in its place. An object that is not plain, or whose
/// input counts add up past a `u64` (which `usage_from` keeps apart), goes through the `Value`.
fn usage_of(value: Raw<'_>) -> Option<Usage> {
    let by_value = || match value_of(value)? {
        Value::Object(u) => Some(usage_from(u)),
        _ => None,
    };
    let Some((fields, _)) = object_at(value.text(), 0, |_, _| Some(None)) else {
        return by_value();
    };
    let count = |v: Raw<'_>| match v.kind() {
        Kind::Number => v.text().parse::<u64>().ok(),
        _ => None,
    };
    let (mut input, mut output, mut cached, mut written) = (None, None, None, 0);
    let mut extra = Extra::new();
    for (key, v) in fields.iter() {
        let taken = match key {
            "input_tokens" => Some(&mut input),
            "output_tokens" => Some(&mut output),
            "cache_read_input_tokens" => Some(&mut cached),
            _ => None,
        };
        if let Some(taken) = taken
            && let Some(n) = count(v)
        {
            *taken = Some(n);
            continue;
        }
        if key == "cache_creation_input_tokens" {
            written = count(v).unwrap_or(0);
        }
        extra.insert(key.to_string(), value_of(v)?);
    }
    let input = match input {
        Some(n) => match n
            .checked_add(cached.unwrap_or(0))
            .and_then(|n| n.checked_add(written))
        {
            Some(all) => Some(all),
            None => return by_value(),
        },
        None => None,
    };
    Some(Usage {
        input,
        output,
        cached,
        extra,
        ..Usage::default()
    })
}

/// A content block as `part_from_block` makes it: the usual kinds in their usual shape read
/// here, any other block built as a value and given to it.
fn part_of(block: Block<'_>) -> Option<Part> {
    let (b, block) = match block {
        Block::Plain(b, raw) => (b, raw),
        Block::Other(raw) => return Some(part_from_block(value_of(raw)?)),
    };
    let by_value = || Some(part_from_block(value_of(block)?));
    let is = |key: &str, kind: Kind| b.get(key).is_some_and(|v| v.kind() == kind);
    let kind = match b.get("type") {
        Some(t) if t.kind() == Kind::String => text_of(t)?,
        _ => return by_value(),
    };
    let string = |key: &str| -> Option<String> { Some(text_of(b.get(key)?)?.into_owned()) };
    let part = match kind.as_ref() {
        "text" if is("text", Kind::String) => Part {
            content: Content::Text {
                text: string("text")?,
            },
            signature: None,
            extra: b.rest(&["type", "text"])?,
        },
        "thinking"
            if is("thinking", Kind::String)
                && b.get("signature").is_none_or(|s| s.kind() == Kind::String) =>
        {
            Part {
                content: Content::Thought {
                    text: string("thinking")?,
                    subject: None,
                    encrypted: None,
                    extra: b.rest(&["type", "thinking", "signature"])?,
                },
                signature: match b.get("signature") {
                    Some(_) => Some(string("signature")?),
                    None => None,
                },
                extra: Extra::new(),
            }
        }
        "tool_use" if is("id", Kind::String) && is("name", Kind::String) && b.has("input") => {
            Part::new(Content::ToolCall {
                id: Some(string("id")?),
                name: string("name")?,
                args: value_of(b.get("input")?)?,
                extra: b.rest(&["type", "id", "name", "input"])?,
            })
        }
        "tool_result"
            if is("tool_use_id", Kind::String)
                && b.has("content")
                && b.get("is_error").is_none_or(|e| e.kind() == Kind::Bool) =>
        {
            // `is_error: false` stays a field of the block (see `part_from_block`).
            let is_error = b.get("is_error").and_then(Raw::as_bool) == Some(true);
            let taken: &[&str] = match is_error {
                true => &["type", "tool_use_id", "content", "is_error"],
                false => &["type", "tool_use_id", "content"],
            };
            Part::new(Content::ToolResult {
                call_id: Some(string("tool_use_id")?),
                name: None,
                output: value_of(b.get("content")?)?,
                is_error,
                status: None,
                display: None,
                extra: b.rest(taken)?,
            })
        }
        _ => return by_value(),
    };
    Some(part)
}

/// The fields of an object in order, when each key is written without an escape (its text is
/// its name), none is given twice and there are at most [`MOST_FIELDS`].
struct Fields<'a> {
    fields: [Option<(&'a str, Raw<'a>)>; MOST_FIELDS],
    /// Each name's [`mark`], compared before the names themselves.
    marks: [u32; MOST_FIELDS],
    len: usize,
}

/// A content block: an object whose fields are plain (with its text), or any other value.
enum Block<'a> {
    Plain(Box<Fields<'a>>, Raw<'a>),
    Other(Raw<'a>),
}

/// What [`object_at`] does with a field's value: skips it, or reads it in place (`Some(end)`:
/// where it ends); `None` gives up.
type Inside = Option<Option<usize>>;

/// The plain object at `at` in `text` (valid JSON), and where it ends; each field's value is
/// first offered to `inside` (by name and place). `None` when the object is not plain (see
/// [`Fields::push`]) or `inside` gives up.
fn object_at<'a>(
    text: &'a str,
    at: usize,
    mut inside: impl FnMut(&'a str, usize) -> Inside,
) -> Option<(Fields<'a>, usize)> {
    let b = text.as_bytes();
    let mut fields = Fields::new();
    let mut i = skip_ws(b, at + 1);
    if *b.get(i)? == b'}' {
        return Some((fields, i + 1));
    }
    loop {
        let key_end = skip_valid(b, i);
        let quoted = text.get(i..key_end)?;
        let value = skip_ws(b, skip_ws(b, key_end) + 1);
        let name = quoted.get(1..quoted.len().checked_sub(1)?)?;
        let end = match inside(name, value)? {
            Some(end) => end,
            None => skip_valid(b, value),
        };
        fields.push(quoted, Raw::valid(text.get(value..end)?))?;
        i = skip_ws(b, end);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some((fields, i + 1)),
            _ => return None,
        }
    }
}

/// The items of the array at `at` in `text` (valid JSON) into `blocks`, each object read in
/// place; where the array ends.
fn blocks_at<'a>(text: &'a str, at: usize, blocks: &mut Vec<Block<'a>>) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, at + 1);
    if *b.get(i)? == b']' {
        return Some(i + 1);
    }
    loop {
        let plain = match *b.get(i)? {
            b'{' => object_at(text, i, |_, _| Some(None)),
            _ => None,
        };
        let end = match plain {
            Some((fields, end)) => {
                blocks.push(Block::Plain(
                    Box::new(fields),
                    Raw::valid(text.get(i..end)?),
                ));
                end
            }
            None => {
                let end = skip_valid(b, i);
                blocks.push(Block::Other(Raw::valid(text.get(i..end)?)));
                end
            }
        };
        i = skip_ws(b, end);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

impl<'a> Fields<'a> {
    fn new() -> Fields<'a> {
        Fields {
            fields: [None; MOST_FIELDS],
            marks: [0; MOST_FIELDS],
            len: 0,
        }
    }

    /// Adds a field; `None` when its name is escaped or given before, or there are too many.
    fn push(&mut self, quoted: &'a str, value: Raw<'a>) -> Option<()> {
        let name = quoted.get(1..quoted.len() - 1)?;
        if self.len == MOST_FIELDS || name.contains('\\') {
            return None;
        }
        let mark = mark(name);
        let seen = self.marks[..self.len]
            .iter()
            .zip(&self.fields)
            .any(|(&m, field)| m == mark && field.is_some_and(|(k, _)| k == name));
        if seen {
            return None;
        }
        self.marks[self.len] = mark;
        self.fields[self.len] = Some((name, value));
        self.len += 1;
        Some(())
    }

    fn iter(&self) -> impl Iterator<Item = (&'a str, Raw<'a>)> + '_ {
        self.fields[..self.len].iter().flatten().copied()
    }

    fn get(&self, name: &str) -> Option<Raw<'a>> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The fields other than `taken`, in order, as a part's `extra`.
    fn rest(&self, taken: &[&str]) -> Option<Extra> {
        let mut extra = Extra::new();
        for (key, value) in self.iter().filter(|(k, _)| !taken.contains(k)) {
            extra.insert(key.to_string(), value_of(value)?);
        }
        Some(extra)
    }
}

/// A name's length and first and last bytes, in one number.
fn mark(name: &str) -> u32 {
    let b = name.as_bytes();
    let (first, last) = (b.first().copied(), b.last().copied());
    (b.len() as u32) << 16 | u32::from(first.unwrap_or(0)) << 8 | u32::from(last.unwrap_or(0))
}

/// Whether `value` is the session's own value of `key`, one of the fields every entry repeats
/// (left out of the node, as `chain_node` leaves it).
fn is_base_value(base: &Base, key: &str, value: Raw<'_>) -> bool {
    value.kind() == Kind::String
        && base.fields().into_iter().any(|(k, v)| {
            k == key
                && v.as_deref()
                    .is_some_and(|v| text_of(value).is_some_and(|t| t == v))
        })
}

/// A string decoded (a lone surrogate escape as U+FFFD, as the `Value` holds it).
fn text_of(value: Raw<'_>) -> Option<Cow<'_, str>> {
    value.as_str().map(|t| t.value)
}

/// `value` as `to_value` reads it; `None` when serde_json does not read it alone (the `Value`
/// path then reads the entry). Whole numbers and objects of plain keys and scalar values
/// (most tool inputs, a reply's `usage.cache_creation`) are built here: through serde_json
/// each cost a parser's set-up, about twice the work.
fn value_of(value: Raw<'_>) -> Option<Value> {
    match value.kind() {
        Kind::String => text_of(value).map(|t| Value::String(t.into_owned())),
        Kind::Null => Some(Value::Null),
        Kind::Bool => value.as_bool().map(Value::Bool),
        Kind::Number => match whole_number(value) {
            Some(n) => Some(n),
            None => serde_json::from_str(value.text()).ok(),
        },
        Kind::Object => match flat_object(value) {
            Some(o) => Some(o),
            None => serde_json::from_str(value.text()).ok(),
        },
        Kind::Array => serde_json::from_str(value.text()).ok(),
    }
}

/// A number written as digits only that a `u64` holds: the number serde_json reads (its
/// `arbitrary_precision` keeps the digits, which `From<u64>` writes the same, JSON having no
/// leading zeros). `None` for any other.
fn whole_number(value: Raw<'_>) -> Option<Value> {
    let digits = value.text();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok().map(|n| Value::Number(n.into()))
}

/// An object whose keys are plain (see [`Fields`]) and whose values are strings, numbers,
/// booleans or null, as serde_json reads it. `None` for any other, and for one holding a
/// lone surrogate escape (which serde_json refuses: the caller's `from_str` says so).
fn flat_object(value: Raw<'_>) -> Option<Value> {
    let (fields, _) = object_at(value.text(), 0, |_, _| Some(None))?;
    let mut map = serde_json::Map::with_capacity(fields.len);
    for (key, v) in fields.iter() {
        let v = match v.kind() {
            Kind::Object | Kind::Array => return None,
            Kind::String => {
                let t = v.as_str()?;
                if t.lossy {
                    return None;
                }
                Value::String(t.value.into_owned())
            }
            _ => value_of(v)?,
        };
        map.insert(key.to_string(), v);
    }
    Some(Value::Object(map))
}
