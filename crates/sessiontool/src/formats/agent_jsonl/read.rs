//! Lines to a session and back: the header to metadata, each entry to a node (which keeps its
//! line as its [`Origin`]); `native_entry` is the inverse of `entry_node`, and a node that still
//! reads as its line did is written as that line.

use crate::formats::record_value;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::fields::take_string;
use super::super::{Input, ReadError, ReadOutcome, Written, ordered, pi_style};
use super::blocks::{block_from_part, blocks_of_output, output_of_blocks};
use super::{
    ASSISTANT_ORDER, COMPACTION_ORDER, ENTRY_ORDER, HEADER_ORDER, NAME, RECORD, TOOL_RESULT_ORDER,
    USAGE_ORDER, USER_ORDER, go_json,
};
use crate::diag::Location;
use crate::diag::{Diagnostic, Severity};
use crate::engine::lines::Ended;
use crate::model::{
    Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role, Session, Usage,
};
use crate::records::{Finding, Span};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    Ok(crate::engine::lines::read_whole(&super::AgentJsonl, input))
}

/// The reader from line to line ([`crate::engine::lines::Fold`]): the header, the ids given
/// (a repeated one renamed), what it said, the last node. The whole reader and the engine's
/// pass one both read every line through it.
struct Fold<'n> {
    name: &'n str,
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    ids: HashSet<String>,
    /// The next suffix to try after each `id~line` taken.
    next_suffix: HashMap<String, u32>,
    lines: usize,
    /// The last node's id and time.
    prev: Option<String>,
    last_time: Option<String>,
}

impl crate::engine::lines::Fold for Fold<'_> {
    fn line(&mut self, text: &[u8], span: Span) -> Option<Node> {
        let first = self.lines == 0;
        self.lines += 1;
        let at = Location::at(self.name, span.line, span.offset);
        let value = record_value(text, &at, &mut self.diagnostics);
        if first {
            if let Ok(Value::Object(h)) = &value
                && h.get("type").and_then(Value::as_str) == Some("session")
            {
                read_header(h.clone(), text, &mut self.meta);
                return None;
            }
            // The file had no header line (written back without one).
            self.meta.origin = Some(Origin::new(NAME, b""));
            self.diagnostics.push(Diagnostic {
                code: "agent-no-header",
                severity: Severity::Warning,
                location: at.clone(),
                message: "the first line is not a session header".into(),
            });
        }
        if !matches!(value, Ok(Value::Object(_))) {
            self.diagnostics.push(Diagnostic {
                code: "agent-not-an-entry",
                severity: Severity::Warning,
                location: at.clone(),
                message: "line is not a JSON object; kept as is".into(),
            });
        }
        let node = value_node(value, text, span.line);
        let own = node.id.clone();
        let mut id = own.clone();
        if self.ids.contains(&id) {
            // Go on from the last suffix given on this line: thousands of records glued on
            // one line must not each try every suffix before theirs.
            let stem = format!("{own}~{}", span.line);
            let k = self.next_suffix.entry(stem.clone()).or_insert(1);
            while self.ids.contains(&id) {
                *k += 1;
                id = format!("{stem}.{k}");
            }
        }
        if id != own {
            self.diagnostics.push(Diagnostic {
                code: "agent-duplicate-id",
                severity: Severity::Warning,
                location: at.clone(),
                message: format!("entry id {own} was used before; read as {id}"),
            });
        }
        self.ids.insert(id.clone());
        let parent = node.parent.clone();
        let node = placed(node, Some(text), id, parent);
        if let Some(t) = &node.timestamp {
            self.last_time = Some(t.clone());
        }
        self.prev = Some(node.id.clone());
        Some(node)
    }

    fn end(self: Box<Self>, damage: &[Finding], findings: Vec<Diagnostic>) -> Ended {
        let Fold {
            mut meta,
            diagnostics: said,
            prev,
            last_time,
            ..
        } = *self;
        pi_style::end_meta(&mut meta, NAME, damage, prev, last_time);
        let mut diagnostics = findings;
        diagnostics.extend(said);
        Ended {
            meta,
            diagnostics,
            ..Ended::default()
        }
    }
}

use crate::engine::lines::Line;
use crate::engine::{MadeFor, Route};

impl crate::engine::lines::Lines for super::AgentJsonl {
    fn format(&self) -> &'static dyn crate::formats::Format {
        &super::AgentJsonl
    }

    fn fold<'n>(&self, name: &'n str) -> Box<dyn crate::engine::lines::Fold + 'n> {
        Box::new(Fold {
            name,
            meta: Meta {
                source_format: Some(NAME.into()),
                ..Meta::default()
            },
            diagnostics: Vec::new(),
            ids: HashSet::new(),
            next_suffix: HashMap::new(),
            lines: 0,
            prev: None,
            last_time: None,
        })
    }

    fn node(&self, bytes: &[u8], at: Line, made_for: MadeFor) -> Node {
        let value = crate::json::value::to_value(bytes)
            .map(|(v, _)| v)
            .map_err(|e| e.to_string());
        let origin = (made_for == MadeFor::OwnWriter).then_some(bytes);
        placed(
            value_node(value, bytes, at.number),
            origin,
            at.id,
            at.parent,
        )
    }
}

/// A line (`value`, its `text`, on line `line`) as its node, before the reader gives it its id:
/// an entry object's node, else the line kept whole.
fn value_node(value: Result<Value, String>, text: &[u8], line: u64) -> Node {
    match value {
        Ok(Value::Object(map)) => entry_node(map),
        other => {
            let data =
                other.unwrap_or_else(|_| Value::String(String::from_utf8_lossy(text).into_owned()));
            Node {
                id: format!("line-{line}"),
                parent: None,
                timestamp: None,
                body: Body::Event(Event::Custom {
                    kind: RECORD.into(),
                    data,
                }),
                extra: Extra::new(),
                origin: None,
            }
        }
    }
}

/// `node` (of the line `text`) with the id and parent the reader gave it (a repeated id is
/// renamed; the line keeps the entry's own), and the line as its origin (`line`, for this
/// format's writer).
fn placed(mut node: Node, line: Option<&[u8]>, id: String, parent: Option<String>) -> Node {
    node.id = id;
    node.parent = parent;
    node.origin = line.map(|text| Origin::new(NAME, text));
    node
}

/// A node read from this format as its line reads, and the line: `None` for any other node.
fn as_read(node: &Node) -> Option<(Node, &[u8])> {
    let text = Origin::of(&node.origin, NAME)?;
    let value = crate::json::value::to_value(text)
        .map(|(v, _)| v)
        .map_err(|e| e.to_string());
    Some((value_node(value, text, 0), text))
}

fn read_header(mut h: Map<String, Value>, text: &[u8], meta: &mut Meta) {
    h.shift_remove("type");
    pi_style::read_header(h, meta);
    meta.origin = Some(Origin::new(NAME, text));
}

pub(super) fn header(meta: &Meta) -> Value {
    pi_style::header(meta, NAME, None, &HEADER_ORDER)
}

fn role_of(s: &str) -> Option<Role> {
    match s {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool_result" => Some(Role::Tool),
        _ => None,
    }
}

fn custom(kind: String, map: Map<String, Value>, id: String, parent: Option<String>) -> Node {
    let timestamp = map
        .get("timestamp")
        .and_then(Value::as_str)
        .map(String::from);
    Node {
        id,
        parent,
        timestamp,
        body: Body::Event(Event::Custom {
            kind,
            data: Value::Object(map),
        }),
        extra: Extra::new(),
        origin: None,
    }
}

/// An entry object as a node. Entries that are not a well-formed message or compaction are
/// kept whole as custom events named by their type.
fn entry_node(mut map: Map<String, Value>) -> Node {
    let id = match map.get("id") {
        Some(Value::String(s)) => s.clone(),
        _ => format!(
            "entry-{}",
            crate::ids::sha256_hex(&Value::Object(map.clone()).to_string())[..8].to_owned()
        ),
    };
    let parent = map
        .get("parent_id")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(String::from);
    let kind = match map.get("type") {
        Some(Value::String(s)) => s.clone(),
        _ => return custom(RECORD.into(), map, id, parent),
    };
    let well_formed = map.get("id").is_some_and(Value::is_string)
        && map.get("parent_id").is_some_and(Value::is_string)
        && map.get("timestamp").is_some_and(Value::is_string);
    if !well_formed {
        return custom(kind, map, id, parent);
    }
    match kind.as_str() {
        "message" => {
            let Some(Value::Object(msg)) = map.get("message").cloned() else {
                return custom(kind, map, id, parent);
            };
            let Some(m) = read_message(msg) else {
                return custom(kind, map, id, parent);
            };
            for k in ["type", "id", "parent_id", "message"] {
                map.shift_remove(k);
            }
            let timestamp = take_string(&mut map, "timestamp");
            Node {
                id,
                parent,
                timestamp,
                body: Body::Message(m),
                extra: map,
                origin: None,
            }
        }
        "compaction"
            if map.get("summary").is_some_and(Value::is_string)
                && map.get("first_kept_entry_id").is_some_and(Value::is_string)
                && map.get("tokens_before").is_some_and(Value::is_u64) =>
        {
            for k in ["type", "id", "parent_id"] {
                map.shift_remove(k);
            }
            let timestamp = take_string(&mut map, "timestamp");
            let summary = take_string(&mut map, "summary");
            let first_kept = take_string(&mut map, "first_kept_entry_id");
            let tokens_before = map.shift_remove("tokens_before").and_then(|v| v.as_u64());
            Node {
                id,
                parent,
                timestamp,
                body: Body::Event(Event::Compaction {
                    summary,
                    tokens_before,
                    first_kept,
                    data: Value::Object(map),
                }),
                extra: Extra::new(),
                origin: None,
            }
        }
        _ => custom(kind, map, id, parent),
    }
}

fn read_message(mut msg: Map<String, Value>) -> Option<Message> {
    let role = role_of(msg.get("role")?.as_str()?)?;
    let Some(Value::Array(content)) = msg.get("content") else {
        return None;
    };
    let content = content.clone();
    if role == Role::Tool
        && !(msg.get("tool_call_id").is_some_and(Value::is_string)
            && msg.get("is_error").is_some_and(Value::is_boolean))
    {
        return None;
    }
    msg.shift_remove("role");
    msg.shift_remove("content");
    let model = take_string(&mut msg, "model");
    let usage = match msg.get("usage") {
        Some(Value::Object(u)) => read_usage(u).inspect(|_| {
            msg.shift_remove("usage");
        }),
        _ => None,
    };
    let parts = if role == Role::Tool {
        let call_id = take_string(&mut msg, "tool_call_id");
        let name = take_string(&mut msg, "tool_name");
        let is_error = msg.shift_remove("is_error").and_then(|v| v.as_bool()) == Some(true);
        vec![Part::new(Content::ToolResult {
            call_id,
            name,
            output: output_of_blocks(Value::Array(content)),
            is_error,
            status: None,
            display: None,
            extra: Extra::new(),
        })]
    } else {
        parts_from_blocks(&content)
    };
    Some(Message {
        role,
        parts,
        model,
        usage,
        extra: msg,
    })
}

fn parts_from_blocks(blocks: &[Value]) -> Vec<Part> {
    blocks.iter().map(super::blocks::part_from_block).collect()
}

fn read_usage(u: &Map<String, Value>) -> Option<Usage> {
    let mut usage = Usage::default();
    for (k, v) in u {
        let n = v.as_u64();
        match (k.as_str(), n) {
            ("input", Some(n)) => usage.input = Some(n),
            ("output", Some(n)) => usage.output = Some(n),
            ("cache_read", Some(n)) => usage.cached = Some(n),
            ("total_tokens", Some(n)) => usage.total = Some(n),
            ("input" | "output" | "cache_read" | "total_tokens", None) => return None,
            _ => {
                usage.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Some(usage)
}

pub(super) fn usage_value(u: &Usage, native: bool) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("input", u.input),
        ("output", u.output),
        ("cache_read", u.cached),
        ("total_tokens", u.total),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), v.into());
        }
    }
    if native {
        m.extend(u.extra.clone());
    }
    Value::Object(ordered(m, &USAGE_ORDER))
}

pub(super) fn role_str(role: Role) -> &'static str {
    match role {
        Role::Tool => "tool_result",
        Role::Assistant => "assistant",
        _ => "user",
    }
}

/// A message body (the entry's `message`). `native`: unknown fields are written back.
pub(super) fn message_value(m: &Message, native: bool) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("role".into(), role_str(m.role).into());
    let order: &[&str] = if m.role == Role::Tool {
        if let Some(Part {
            content:
                Content::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                    ..
                },
            ..
        }) = m.parts.first()
        {
            o.insert(
                "tool_call_id".into(),
                call_id.clone().unwrap_or_default().into(),
            );
            if let Some(n) = name {
                o.insert("tool_name".into(), n.clone().into());
            }
            o.insert("content".into(), blocks_of_output(output));
            o.insert("is_error".into(), (*is_error).into());
        }
        &TOOL_RESULT_ORDER
    } else {
        let blocks: Vec<Value> = m
            .parts
            .iter()
            .filter_map(|p| block_from_part(p, native))
            .collect();
        o.insert("content".into(), Value::Array(blocks));
        if let Some(model) = &m.model {
            o.insert("model".into(), model.clone().into());
        }
        if let Some(u) = &m.usage {
            o.insert("usage".into(), usage_value(u, native));
        }
        if m.role == Role::Assistant {
            &ASSISTANT_ORDER
        } else {
            &USER_ORDER
        }
    };
    if native {
        o.extend(m.extra.clone());
    }
    ordered(o, order)
}

/// The entry a node read from this format is rebuilt as (`id`: the entry's own, which a node
/// renamed for a repeated id does not have).
pub(super) fn native_entry(node: &Node, id: &str) -> Value {
    let parent = node.parent.clone().unwrap_or_default();
    match &node.body {
        Body::Message(m) => {
            let mut e = Map::new();
            e.insert("type".into(), "message".into());
            e.insert("id".into(), id.into());
            e.insert("parent_id".into(), parent.into());
            if let Some(ts) = &node.timestamp {
                e.insert("timestamp".into(), ts.clone().into());
            }
            e.extend(node.extra.clone());
            e.insert("message".into(), Value::Object(message_value(m, true)));
            Value::Object(ordered(e, &ENTRY_ORDER))
        }
        Body::Event(Event::Compaction {
            summary,
            tokens_before,
            first_kept,
            data,
        }) => {
            let mut e = Map::new();
            e.insert("type".into(), "compaction".into());
            e.insert("id".into(), id.into());
            e.insert("parent_id".into(), parent.into());
            if let Some(ts) = &node.timestamp {
                e.insert("timestamp".into(), ts.clone().into());
            }
            e.insert("summary".into(), summary.clone().unwrap_or_default().into());
            e.insert(
                "first_kept_entry_id".into(),
                first_kept.clone().unwrap_or_default().into(),
            );
            e.insert("tokens_before".into(), tokens_before.unwrap_or(0).into());
            if let Value::Object(d) = data {
                e.extend(d.clone());
            }
            Value::Object(ordered(e, &COMPACTION_ORDER))
        }
        Body::Event(Event::Custom { data, .. }) => data.clone(),
        Body::Event(other) => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

pub(super) fn write_native(session: &Session) -> Written {
    pi_style::write_lines(session, NAME, false, header_line, entry_line)
}

/// [`write_native`] in the engine's pass two.
pub(super) fn lines_back(known: Box<dyn crate::engine::reading::Reading>, meta: &Meta) -> Route {
    pi_style::lines_back(known, meta, NAME, false, header_line, entry_line)
}

fn header_line(meta: &Meta) -> Vec<u8> {
    go_json(&header(meta))
}

fn entry_line(node: &Node) -> Vec<u8> {
    match as_read(node) {
        // Still as its line reads: the line (as the reader took it: invalid UTF-8 replaced).
        Some((read, text))
            if (&read.parent, &read.timestamp, &read.body, &read.extra)
                == (&node.parent, &node.timestamp, &node.body, &node.extra) =>
        {
            String::from_utf8_lossy(text).into_owned().into_bytes()
        }
        Some((read, _)) => go_json(&native_entry(node, &read.id)),
        None => go_json(&native_entry(node, &node.id)),
    }
}
