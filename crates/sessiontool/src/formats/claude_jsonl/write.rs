//! Nodes back to entries, in the layout the Claude CLI writes; a node read from this format is
//! written as its line while it reads as it did, or rebuilt keeping what its line says (see
//! `origin`), so a session read from this format comes back byte for byte.

use serde_json::{Map, Value};

use super::blocks::block_from_part;
use super::origin::{AsRead, Kept, WrittenAs, written};
use crate::formats::{WriteError, Written, ordered};
use crate::model::{Body, Content, Event, Message, Meta, Node, Role, Usage};

/// Entry keys in the order Claude Code 2.x writes them (`type` and `message` swap places in
/// assistant entries, which also have `requestId`).
const USER_ORDER: [&str; 11] = [
    "parentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "type",
    "message",
    "uuid",
    "timestamp",
];
const ASSISTANT_ORDER: [&str; 12] = [
    "parentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "message",
    "requestId",
    "type",
    "uuid",
    "timestamp",
];
/// Entry fields the writer fills itself; absent from an entry's recorded key list, they are
/// left out.
const FILLED: [&str; 8] = [
    "parentUuid",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "type",
    "uuid",
    "timestamp",
];
const MESSAGE_ORDER: [&str; 8] = [
    "model",
    "id",
    "type",
    "role",
    "content",
    "stop_reason",
    "stop_sequence",
    "usage",
];
const USAGE_ORDER: [&str; 7] = [
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "output_tokens",
    "service_tier",
    "server_tool_use",
];

/// The fields every chain entry repeats, as the session states them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Base {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub version: Option<String>,
    pub git_branch: Option<String>,
}

impl Base {
    pub fn of(meta: &Meta) -> Self {
        Base {
            session_id: meta.id.clone(),
            cwd: meta.cwd.clone(),
            version: meta.tool_version.clone(),
            git_branch: meta.git_branch.clone(),
        }
    }

    /// The fields as a chain entry states them.
    pub fn of_entry(entry: &Value) -> Self {
        let field = |k: &str| entry.get(k).and_then(Value::as_str).map(String::from);
        Base {
            session_id: field("sessionId"),
            cwd: field("cwd"),
            version: field("version"),
            git_branch: field("gitBranch"),
        }
    }

    /// The fields every entry repeats, and the session's value of each.
    pub const KEYS: [&'static str; 4] = ["cwd", "sessionId", "version", "gitBranch"];

    pub fn fields(&self) -> [(&'static str, &Option<String>); 4] {
        let [cwd, session, version, branch] = Self::KEYS;
        [
            (cwd, &self.cwd),
            (session, &self.session_id),
            (version, &self.version),
            (branch, &self.git_branch),
        ]
    }
}

pub(super) fn write_native(session: &crate::model::Session) -> Result<Written, WriteError> {
    let base = Base::of(&session.meta);
    let as_read = AsRead::of(&session.meta);
    let mut out = crate::formats::output_buffer(session.nodes.len());
    for node in &session.nodes {
        native_entry(node, &base, as_read.python, &as_read, &mut out);
    }
    crate::formats::end_lines_as_read(&mut out, &session.meta, super::NAME);
    Ok(Written {
        bytes: out,
        losses: Default::default(),
    })
}

/// One node of a session read from this format, as its line: the entry's text while the node
/// reads as it did, else rebuilt with the session's `base` fields (`python`: with Python's
/// separators; `as_read`: the session as its entries were read).
pub(super) fn native_entry(
    node: &Node,
    base: &Base,
    python: bool,
    as_read: &AsRead,
    out: &mut Vec<u8>,
) {
    let unchanged = *base == as_read.base && python == as_read.python;
    match written(node, as_read, unchanged) {
        Some(WrittenAs::Line(line)) => out.extend_from_slice(line.as_bytes()),
        Some(WrittenAs::Rebuilt(kept)) => {
            let value = with_keys(entry(node, base, &kept), &kept.keys);
            out.extend_from_slice(&to_bytes(&value, python));
        }
        None => out.extend_from_slice(&to_bytes(&entry(node, base, &Kept::default()), python)),
    }
    out.push(b'\n');
}

/// The entry a node stands for, in canonical key order (`kept`: what it keeps of the entry it
/// was read from, but for its key orders).
pub(super) fn entry(node: &Node, base: &Base, kept: &Kept) -> Value {
    match &node.body {
        Body::Event(Event::Custom { data, .. }) | Body::Event(Event::Title { data, .. }) => {
            data.clone()
        }
        Body::Event(
            Event::Compaction { data, .. }
            | Event::Rewind { data, .. }
            | Event::ModelChange { data, .. },
        ) => data.clone(),
        Body::Message(m) => Value::Object(message_entry(node, m, base, kept)),
    }
}

fn message_entry(node: &Node, m: &Message, base: &Base, kept: &Kept) -> Map<String, Value> {
    let kind = if m.role == Role::Assistant {
        "assistant"
    } else {
        "user"
    };
    let mut e = Map::new();
    e.insert(
        "parentUuid".into(),
        node.parent.clone().map_or(Value::Null, Value::String),
    );
    for (key, value) in base.fields() {
        if let Some(v) = value {
            e.insert(key.into(), v.clone().into());
        }
    }
    e.insert("type".into(), kind.into());
    e.insert("message".into(), Value::Object(message_object(m, kept)));
    e.insert(
        "uuid".into(),
        kept.uuid.as_ref().unwrap_or(&node.id).as_str().into(),
    );
    if let Some(ts) = &node.timestamp {
        e.insert("timestamp".into(), ts.clone().into());
    }
    for (k, v) in &node.extra {
        e.insert(k.clone(), v.clone());
    }
    if kind == "assistant" {
        ordered(e, &ASSISTANT_ORDER)
    } else {
        ordered(e, &USER_ORDER)
    }
}

fn message_object(m: &Message, kept: &Kept) -> Map<String, Value> {
    let mut o = Map::new();
    let role = if m.role == Role::Assistant {
        "assistant"
    } else {
        "user"
    };
    o.insert("role".into(), role.into());
    let as_string = kept.content_string;
    let content = match m.parts.as_slice() {
        [p] if as_string && p.extra.is_empty() => match &p.content {
            Content::Text { text } => Some(Value::String(text.clone())),
            _ => None,
        },
        _ => None,
    };
    let content = content
        .unwrap_or_else(|| Value::Array(m.parts.iter().filter_map(block_from_part).collect()));
    o.insert("content".into(), content);
    if let Some(model) = &m.model {
        o.insert("model".into(), model.clone().into());
    }
    if let Some(u) = &m.usage {
        o.insert("usage".into(), Value::Object(usage_object(u)));
    } else if let Some(u) = &kept.usage {
        o.insert("usage".into(), u.clone());
    }
    for (k, v) in &m.extra {
        o.insert(k.clone(), v.clone());
    }
    ordered(o, &MESSAGE_ORDER)
}

pub(super) fn usage_object(u: &Usage) -> Map<String, Value> {
    let mut o = Map::new();
    for (k, v) in super::usage::counts(u) {
        if let Some(v) = v {
            o.insert(k.into(), v.into());
        }
    }
    for (k, v) in &u.extra {
        o.insert(k.clone(), v.clone());
    }
    ordered(o, &USAGE_ORDER)
}

/// Puts keys in a recorded order; keys not in it are kept after, except those in `filled`.
fn reorder(map: &mut Map<String, Value>, keys: &Value, filled: &[&str]) {
    let Some(keys) = keys.as_array() else { return };
    let mut old = std::mem::take(map);
    for k in keys.iter().filter_map(Value::as_str) {
        if let Some(v) = old.shift_remove(k) {
            map.insert(k.into(), v);
        }
    }
    for (k, v) in old {
        if !filled.contains(&k.as_str()) {
            map.insert(k, v);
        }
    }
}

/// Puts an entry's keys in the orders read (`hint`: see [`Kept::keys`]).
pub(super) fn with_keys(mut value: Value, hint: &Map<String, Value>) -> Value {
    let Value::Object(e) = &mut value else {
        return value;
    };
    if hint.is_empty() {
        return value;
    }
    if let Some(keys) = hint.get("record") {
        reorder(e, keys, &FILLED);
    }
    let Some(Value::Object(msg)) = e.get_mut("message") else {
        return value;
    };
    if let Some(keys) = hint.get("message") {
        reorder(msg, keys, &["role"]);
    }
    if let (Some(keys), Some(Value::Object(u))) = (hint.get("usage"), msg.get_mut("usage")) {
        reorder(u, keys, &[]);
    }
    if let (Some(Value::Array(list)), Some(Value::Array(blocks))) =
        (hint.get("blocks"), msg.get_mut("content"))
    {
        for (keys, block) in list.iter().zip(blocks.iter_mut()) {
            if let Value::Object(b) = block {
                reorder(b, keys, &[]);
            }
        }
    }
    value
}

/// JSON as `JSON.stringify(value)` writes it, or with Python's default `", "`/`": "`.
pub(super) fn to_bytes(value: &Value, python: bool) -> Vec<u8> {
    if python {
        let mut out = Vec::with_capacity(1024);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
        serde::Serialize::serialize(value, &mut ser).expect("a Value always serializes");
        out
    } else {
        serde_json::to_vec(value).expect("a Value always serializes")
    }
}

/// `json.dumps` separators: a space after every `,` and `:`.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.begin_array_value(writer, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}
