//! Entries to nodes, and the hints that make the writer give back the same bytes.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::blocks::part_from_block;
use super::layout::Layout;
use super::write::{Base, HINT_FINAL_NEWLINE, entry, to_bytes, usage_object, with_hints};
use super::{ENTRY, HINT_CONTENT, HINT_KEYS, HINT_RAW, HINT_STYLE, HINT_UUID, NAME};
use crate::diag::{Diagnostic, Location, Severity};
use crate::formats::{Input, ReadError, ReadOutcome, record_diagnostics, record_value};
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Part, Role, Session};
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
                diagnostics.push(diag(
                    "claude-unparseable",
                    Severity::Warning,
                    at.clone(),
                    format!("entry cannot be parsed ({e}); kept as is"),
                ));
                parsed.push((None, at));
            }
        }
    }
    // The session's own fields: from its first chain entry.
    let first = parsed.iter().find_map(|(v, _)| {
        v.as_ref()
            .and_then(Value::as_object)
            .filter(|o| o.get("uuid").is_some_and(Value::is_string))
    });
    let field = |k: &str| {
        first
            .and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let base = Base {
        session_id: field("sessionId"),
        cwd: field("cwd"),
        version: field("version"),
        git_branch: field("gitBranch"),
    };
    let start_time = field("timestamp");
    let python = parsed
        .iter()
        .zip(&records)
        .find_map(|((v, _), rec)| {
            let v = v.as_ref().filter(|v| v.is_object())?;
            (to_bytes(v, false) != *rec.bytes && to_bytes(v, true) == *rec.bytes).then_some(true)
        })
        .unwrap_or(false);

    let mut nodes = Vec::with_capacity(parsed.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut hidden: HashSet<String> = HashSet::new();
    let mut chain: Vec<usize> = Vec::new();
    let mut last_updated: Option<String> = None;
    for ((value, at), rec) in parsed.into_iter().zip(&records) {
        let text = &*rec.bytes;
        let line = at.line.unwrap_or_default();
        let Some(value) = value else {
            let mut node = whole(format!("line-{line}"), None, Value::Null);
            node.hints.insert(
                HINT_RAW.into(),
                String::from_utf8_lossy(text).into_owned().into(),
            );
            nodes.push(node);
            continue;
        };
        let uuid = value.get("uuid").and_then(Value::as_str).map(String::from);
        if let Some(Value::String(ts)) = value.get("timestamp")
            && last_updated.as_deref().is_none_or(|l| l < ts.as_str())
        {
            last_updated = Some(ts.clone());
        }
        let mut node = match uuid {
            None => {
                if !value.is_object() {
                    diagnostics.push(diag(
                        "claude-not-an-entry",
                        Severity::Warning,
                        at.clone(),
                        "line is not a JSON object; kept as is".into(),
                    ));
                }
                let mut node = whole(format!("line-{line}"), None, value);
                uuidless_event(&mut node);
                node
            }
            Some(uuid) => {
                let n = seen.entry(uuid.clone()).or_insert(0);
                *n += 1;
                let id = if *n == 1 {
                    uuid.clone()
                } else {
                    diagnostics.push(diag(
                        "claude-duplicate-uuid",
                        Severity::Warning,
                        at.clone(),
                        format!("uuid {uuid} appears again (occurrence {n}); read as its own node"),
                    ));
                    format!("{uuid}#{n}")
                };
                let flag = |k: &str| value.get(k) == Some(&Value::Bool(true));
                if flag("isSidechain") || flag("isMeta") {
                    hidden.insert(id.clone());
                }
                chain.push(nodes.len());
                let mut node = chain_node(id.clone(), value, &base);
                if id != uuid {
                    node.hints.insert(HINT_UUID.into(), uuid.into());
                }
                node
            }
        };
        let written = to_bytes(&with_hints(entry(&node, &base), &node), python);
        if written != text {
            node.hints.insert(
                HINT_RAW.into(),
                String::from_utf8_lossy(text).into_owned().into(),
            );
        }
        nodes.push(node);
    }

    super::usage::one_usage_per_reply(&mut nodes, |u| Value::Object(usage_object(u)));
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
            diagnostics.push(diag(
                "claude-missing-parent",
                Severity::Warning,
                Location::file(input.name),
                format!(
                    "entry {} names parent {p}, which is not in the file; the history before it is cut off",
                    nodes[i].id
                ),
            ));
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
    let mut hints = Extra::new();
    if python {
        hints.insert(HINT_STYLE.into(), "python".into());
    }
    if !records.is_empty() && !input.bytes.ends_with(b"\n") {
        hints.insert(HINT_FINAL_NEWLINE.into(), false.into());
    }
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
        hints,
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
        hints: Extra::new(),
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
    let layout = Layout::of(&rec);
    rec.shift_remove("uuid");
    if !matches!(rec.get("parentUuid"), Some(v) if !v.is_string() && !v.is_null()) {
        rec.shift_remove("parentUuid");
    }
    rec.shift_remove("type");
    let timestamp = match rec.get("timestamp") {
        Some(Value::String(_)) => rec.shift_remove("timestamp").and_then(|v| match v {
            Value::String(s) => Some(s),
            _ => None,
        }),
        _ => None,
    };
    for (key, value) in base.fields() {
        if let (Some(Value::String(s)), Some(v)) = (rec.get(key), value)
            && s == v
        {
            rec.shift_remove(key);
        }
    }
    let Some(Value::Object(mut msg)) = rec.shift_remove("message") else {
        unreachable!("checked above")
    };
    let mut hints = Extra::new();
    let role_name = if assistant { "assistant" } else { "user" };
    if msg.get("role").and_then(Value::as_str) == Some(role_name) {
        msg.shift_remove("role");
    }
    let parts: Vec<Part> = match msg.shift_remove("content") {
        Some(Value::String(s)) => {
            hints.insert(HINT_CONTENT.into(), "string".into());
            vec![Part::text(s)]
        }
        Some(Value::Array(blocks)) => blocks.into_iter().map(part_from_block).collect(),
        _ => Vec::new(),
    };
    let model = match msg.get("model") {
        Some(Value::String(_)) => msg
            .shift_remove("model")
            .and_then(|v| v.as_str().map(String::from)),
        _ => None,
    };
    let usage = match msg.get("usage") {
        Some(Value::Object(_)) => match msg.shift_remove("usage") {
            Some(Value::Object(u)) => Some(super::usage::usage_from(u)),
            _ => None,
        },
        _ => None,
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
    let mut node = Node {
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
        hints,
    };
    let built = entry(&node, base);
    let hint = layout.diff(&Layout::of(
        built.as_object().expect("an entry is an object"),
    ));
    if !hint.is_empty() {
        node.hints.insert(HINT_KEYS.into(), Value::Object(hint));
    }
    node
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
