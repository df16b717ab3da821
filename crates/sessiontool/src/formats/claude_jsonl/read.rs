//! Entries to nodes, each keeping its line (its [`Origin`]) for this format's writer.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::blocks::part_from_block;
use super::origin::{meta_origin, python_written};
use super::write::Base;
use super::{ENTRY, NAME};
use crate::diag::{Diagnostic, Location, Severity};
use crate::formats::{Input, ReadError, ReadOutcome, record_diagnostics, record_value};
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role, Session};
use crate::records::{Options, split_slice};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    let (records, findings) = split_slice(input.bytes, Options::default());
    let mut diagnostics = record_diagnostics(input.name, &findings);
    let mut parsed = Vec::with_capacity(records.len());
    for rec in &records {
        let at = Location::at(input.name, rec.span.line, rec.span.offset);
        match record_value(&rec.bytes, &at, &mut diagnostics) {
            Ok(v) => parsed.push((Some(v), at)),
            Err(e) => {
                diagnostics.push(unparseable(at.clone(), e));
                parsed.push((None, at));
            }
        }
    }
    // The session's own fields: from its first chain entry.
    let first = parsed.iter().zip(&records).find(|((v, _), _)| {
        v.as_ref()
            .is_some_and(|v| v.is_object() && v.get("uuid").is_some_and(Value::is_string))
    });
    let base = first.map_or_else(Base::default, |((v, _), _)| {
        Base::of_entry(v.as_ref().expect("found parsed"))
    });
    let start_time = first.and_then(|((v, _), _)| {
        let ts = v.as_ref()?.get("timestamp")?.as_str()?;
        Some(ts.to_string())
    });
    // Whether the entries were written with Python's separators: the first line that is.
    let python = parsed
        .iter()
        .zip(&records)
        .find_map(|((v, _), rec)| python_written(v.as_ref()?, &rec.bytes).then_some(&*rec.bytes));
    let origin = meta_origin(first.map(|(_, rec)| &*rec.bytes), python);

    let mut nodes = Vec::with_capacity(parsed.len());
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut hidden: HashSet<String> = HashSet::new();
    let mut chain: Vec<usize> = Vec::new();
    let mut last_updated: Option<String> = None;
    for ((value, at), rec) in parsed.into_iter().zip(&records) {
        let line = at.line.unwrap_or_default();
        let mut occurrence = 0;
        if let Some(value) = &value {
            if let Some(Value::String(ts)) = value.get("timestamp")
                && last_updated.as_deref().is_none_or(|l| l < ts.as_str())
            {
                last_updated = Some(ts.clone());
            }
            match value.get("uuid").and_then(Value::as_str) {
                None if !value.is_object() => diagnostics.push(not_an_entry(at.clone())),
                None => {}
                Some(uuid) => {
                    let n = seen.entry(uuid.to_string()).or_insert(0);
                    *n += 1;
                    occurrence = *n;
                    if *n > 1 {
                        diagnostics.push(duplicate_uuid(at.clone(), uuid, *n));
                    }
                    let flag = |k: &str| value.get(k) == Some(&Value::Bool(true));
                    if flag("isSidechain") || flag("isMeta") {
                        hidden.insert(node_id(uuid, occurrence));
                    }
                    chain.push(nodes.len());
                }
            }
        }
        let shape = Shape {
            base: &base,
            origin: true,
        };
        nodes.push(shape.node(value, &rec.bytes, line, occurrence));
    }

    super::usage::one_usage_per_reply(&mut nodes);
    follow_logical_parents(&mut nodes, &chain);
    let ids: HashSet<&str> = chain.iter().map(|&i| nodes[i].id.as_str()).collect();
    let parents: HashSet<&str> = chain
        .iter()
        .filter_map(|&i| nodes[i].parent.as_deref())
        .collect();
    for &i in &chain {
        if let Some(p) = &nodes[i].parent
            && !ids.contains(p.as_str())
        {
            diagnostics.push(missing_parent(input.name, &nodes[i].id, p));
        }
    }
    let terminal = |i: &usize| !parents.contains(nodes[*i].id.as_str());
    let head = chain
        .iter()
        .rev()
        .find(|i| terminal(i) && !hidden.contains(&nodes[**i].id))
        .or_else(|| chain.iter().rev().find(|i| terminal(i)))
        .or(chain.last())
        .map(|&i| nodes[i].id.clone());
    let title = nodes.iter().rev().find_map(|n| match &n.body {
        Body::Event(Event::Title { title, .. }) => title.clone(),
        _ => None,
    });
    // A file of entries whose last line has no line end is written back so.
    let tail =
        (!records.is_empty() && !input.bytes.ends_with(b"\n")).then(|| Origin::new(NAME, b""));
    let meta = Meta {
        id: base.session_id,
        cwd: base.cwd,
        tool_version: base.version,
        git_branch: base.git_branch,
        start_time,
        last_updated,
        title,
        head,
        source_format: Some(NAME.into()),
        origin,
        tail,
        ..Meta::default()
    };
    Ok(ReadOutcome {
        session: Session { meta, nodes },
        diagnostics,
    })
}

fn diag(code: &'static str, severity: Severity, location: Location, message: String) -> Diagnostic {
    Diagnostic {
        code,
        severity,
        location,
        message,
    }
}

/// An entry `JSON.parse` would not read.
pub(super) fn unparseable(at: Location, e: impl std::fmt::Display) -> Diagnostic {
    diag(
        "claude-unparseable",
        Severity::Warning,
        at,
        format!("entry cannot be parsed ({e}); kept as is"),
    )
}

pub(super) fn not_an_entry(at: Location) -> Diagnostic {
    diag(
        "claude-not-an-entry",
        Severity::Warning,
        at,
        "line is not a JSON object; kept as is".into(),
    )
}

pub(super) fn duplicate_uuid(at: Location, uuid: &str, occurrence: u32) -> Diagnostic {
    diag(
        "claude-duplicate-uuid",
        Severity::Warning,
        at,
        format!("uuid {uuid} appears again (occurrence {occurrence}); read as its own node"),
    )
}

pub(super) fn missing_parent(file: &str, id: &str, parent: &str) -> Diagnostic {
    diag(
        "claude-missing-parent",
        Severity::Warning,
        Location::file(file),
        format!(
            "entry {id} names parent {parent}, which is not in the file; the history before it is cut off"
        ),
    )
}

/// The id of a chain entry's node: its uuid, and for a uuid seen before, `uuid#n` with its
/// occurrence.
pub(super) fn node_id(uuid: &str, occurrence: u32) -> String {
    if occurrence > 1 {
        format!("{uuid}#{occurrence}")
    } else {
        uuid.to_string()
    }
}

/// Whether `key`, an entry's own field, is one whose value the reader reads (everything else
/// is kept as it is in the node's `extra`, or the whole entry in an event's data).
pub(crate) fn interprets(key: &str) -> bool {
    matches!(
        key,
        "uuid"
            | "parentUuid"
            | "logicalParentUuid"
            | "type"
            | "timestamp"
            | "message"
            | "summary"
            | "customTitle"
            | "aiTitle"
    ) || Base::KEYS.contains(&key)
}

/// What turns one entry into its node once the facts of the whole file are known (the
/// session's base fields): [`read`], the two-pass engine and the writer (reading a node's
/// line again, `origin`) share it.
pub(super) struct Shape<'a> {
    pub(super) base: &'a Base,
    /// Whether the node keeps its line, for this format's writer (a writer of another format
    /// never reads it).
    pub(super) origin: bool,
}

impl Shape<'_> {
    /// The node of the entry `text` (line `line`), parsed as `value` (`None`: it does not
    /// parse); `occurrence` numbers the entries with the same uuid (1 for the first).
    pub(super) fn node(
        &self,
        value: Option<Value>,
        text: &[u8],
        line: u64,
        occurrence: u32,
    ) -> Node {
        let mut node = match value {
            None => whole(format!("line-{line}"), None, Value::Null),
            Some(value) => match value.get("uuid").and_then(Value::as_str) {
                None => {
                    let mut node = whole(format!("line-{line}"), None, value);
                    uuidless_event(&mut node);
                    node
                }
                Some(uuid) => chain_node(node_id(uuid, occurrence), value, self.base),
            },
        };
        if self.origin {
            node.origin = Some(Origin::new(NAME, text));
        }
        node
    }
}

/// A node that keeps an entry whole.
fn whole(id: String, parent: Option<String>, data: Value) -> Node {
    Node {
        id,
        parent,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: ENTRY.into(),
            data,
        }),
        extra: Extra::new(),
        origin: None,
    }
}

/// `summary`, `custom-title` and `ai-title` entries name the session.
fn uuidless_event(node: &mut Node) {
    let Body::Event(Event::Custom { data, .. }) = &node.body else {
        return;
    };
    let key = match data.get("type").and_then(Value::as_str) {
        Some("summary") => "summary",
        Some("custom-title") => "customTitle",
        Some("ai-title") => "aiTitle",
        _ => return,
    };
    let Some(title) = data.get(key).and_then(Value::as_str).map(String::from) else {
        return;
    };
    node.timestamp = data
        .get("timestamp")
        .and_then(Value::as_str)
        .map(String::from);
    node.body = Body::Event(Event::Title {
        title: Some(title),
        data: data.clone(),
    });
}

/// A chain entry: a message when it has the shape of one, else kept whole in its place.
fn chain_node(id: String, value: Value, base: &Base) -> Node {
    let parent = value
        .get("parentUuid")
        .and_then(Value::as_str)
        .map(String::from);
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let content_ok = value
        .get("message")
        .and_then(|m| m.get("content"))
        .is_some_and(|c| c.is_string() || c.is_array());
    if !(content_ok && matches!(kind, "user" | "assistant")) {
        let mut node = whole(id, parent, value);
        if let Body::Event(Event::Custom { data, .. }) = &node.body {
            node.timestamp = data
                .get("timestamp")
                .and_then(Value::as_str)
                .map(String::from);
        }
        return node;
    }
    let assistant = kind == "assistant";
    let Value::Object(mut rec) = value else {
        unreachable!("a uuid is only found in an object")
    };
    // What the node holds in its own fields is taken out in one pass over the entry (its
    // other fields stay in their order: they are the node's `extra`).
    let mut timestamp = None;
    let mut message = Value::Null;
    rec.retain(|key, value| match key.as_str() {
        "uuid" | "type" => false,
        // Kept as it was when it is neither an id nor null.
        "parentUuid" => !(value.is_string() || value.is_null()),
        "timestamp" => match value {
            Value::String(s) => {
                timestamp = Some(std::mem::take(s));
                false
            }
            _ => true,
        },
        "message" => {
            message = value.take();
            false
        }
        // A field every entry repeats is left out where it has the session's value.
        key => !base
            .fields()
            .into_iter()
            .any(|(k, v)| k == key && v.is_some() && value.as_str() == v.as_deref()),
    });
    let Value::Object(mut msg) = message else {
        unreachable!("checked above")
    };
    let role_name = if assistant { "assistant" } else { "user" };
    let mut content = Value::Null;
    let mut model = None;
    let mut usage = None;
    msg.retain(|key, value| match key.as_str() {
        "role" => value.as_str() != Some(role_name),
        "content" => {
            content = value.take();
            false
        }
        "model" => match value {
            Value::String(s) => {
                model = Some(std::mem::take(s));
                false
            }
            _ => true,
        },
        "usage" => match value {
            Value::Object(u) => {
                usage = Some(super::usage::usage_from(std::mem::take(u)));
                false
            }
            _ => true,
        },
        _ => true,
    });
    let parts: Vec<Part> = match content {
        Value::String(s) => vec![Part::text(s)],
        Value::Array(blocks) => blocks.into_iter().map(part_from_block).collect(),
        _ => Vec::new(),
    };
    let role = if assistant {
        Role::Assistant
    } else if parts
        .iter()
        .any(|p| matches!(p.content, Content::ToolResult { .. }))
    {
        Role::Tool
    } else {
        Role::User
    };
    Node {
        id,
        parent,
        timestamp,
        body: Body::Message(Message {
            role,
            parts,
            model,
            usage,
            extra: msg,
        }),
        extra: rec,
        origin: None,
    }
}

/// A `/compact` boundary (`system` entry, `subtype: compact_boundary`) has `parentUuid: null`
/// and names the last entry before it in `logicalParentUuid`. Claude Code's history walk stops
/// at the boundary (what the model sees starts with the summary after it), but the history
/// before it is the same session's: the node hangs under its logical parent, when that entry
/// is earlier in the file, so the tree, `show` and conversions keep it on the head branch. The
/// entry itself is kept whole, so it is written back as it was.
fn follow_logical_parents(nodes: &mut [Node], chain: &[usize]) {
    let mut seen: HashSet<String> = HashSet::new();
    for &i in chain {
        let node = &mut nodes[i];
        if node.parent.is_none()
            && let Body::Event(Event::Custom { data, .. }) = &node.body
            && data.get("parentUuid") == Some(&Value::Null)
            && let Some(logical) = data.get("logicalParentUuid").and_then(Value::as_str)
            && seen.contains(logical)
        {
            node.parent = Some(logical.to_string());
        }
        seen.insert(node.id.clone());
    }
}
