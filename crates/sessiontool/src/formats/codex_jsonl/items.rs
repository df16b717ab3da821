//! Nodes read from this format back to their lines: each payload rebuilt in the order Codex's
//! structs serialize its fields (`models.rs` `ResponseItem`, `protocol.rs` `SessionMeta`,
//! `CompactedItem`), with what the line read keeps ([`Layout`]: its key order, item type, role).

use serde_json::{Map, Value};

use super::super::ordered;
use super::RECORD;
use super::origin::Layout;
use crate::model::{Body, Content, Event, Message, Meta, Node, Part, Role};

pub(super) const MESSAGE_ORDER: &[&str] = &["type", "role", "content"];
pub(super) const REASONING_ORDER: &[&str] = &["type", "summary", "content", "encrypted_content"];
pub(super) const FUNCTION_CALL_ORDER: &[&str] = &["type", "name", "arguments", "call_id"];
pub(super) const CUSTOM_CALL_ORDER: &[&str] = &["type", "status", "call_id", "name", "input"];
pub(super) const SHELL_CALL_ORDER: &[&str] = &["type", "call_id", "status", "action"];
pub(super) const OUTPUT_ORDER: &[&str] = &["type", "call_id", "output"];
pub(super) const COMPACTED_ORDER: &[&str] = &["message", "replacement_history"];
pub(super) const META_ORDER: &[&str] = &[
    "id",
    "forked_from_id",
    "timestamp",
    "cwd",
    "originator",
    "cli_version",
    "instructions",
    "source",
    "model_provider",
];

/// One line as a JSON object.
pub(super) fn line(timestamp: &str, kind: &str, payload: Value) -> Map<String, Value> {
    let mut m = Map::with_capacity(3);
    m.insert("timestamp".into(), timestamp.into());
    m.insert("type".into(), kind.into());
    m.insert("payload".into(), payload);
    m
}

/// The line a node read from this format becomes, keeping `layout` of the line it was read
/// from; `None` when the node has no single-line shape here (the writer then maps it as it
/// maps other formats').
pub(super) fn native_line(node: &Node, layout: &Layout) -> Option<Value> {
    if let Body::Event(Event::Custom { kind, data }) = &node.body
        && kind == RECORD
    {
        return Some(data.clone());
    }
    let ts = node.timestamp.as_deref()?;
    let (kind, payload, canonical) = native_payload(node, layout)?;
    let keys = layout
        .keys
        .as_ref()
        .and_then(|k| k.order_for(kind, &payload));
    let payload = apply_keys(payload, keys, canonical);
    let mut m = line(ts, kind, Value::Object(payload));
    for (k, v) in &node.extra {
        m.insert(k.clone(), v.clone());
    }
    Some(Value::Object(m))
}

type Payload<'a> = (&'a str, Map<String, Value>, &'static [&'static str]);

fn native_payload<'a>(node: &'a Node, layout: &Layout) -> Option<Payload<'a>> {
    match &node.body {
        Body::Event(Event::Custom { kind, data }) => {
            let Value::Object(d) = data else {
                return None;
            };
            Some((kind.as_str(), d.clone(), &[]))
        }
        Body::Event(Event::Compaction { summary, data, .. }) => {
            let mut p = Map::new();
            if let Some(s) = summary {
                p.insert("message".into(), s.clone().into());
            }
            if let Value::Object(d) = data {
                p.extend(d.clone());
            }
            Some(("compacted", ordered(p, COMPACTED_ORDER), COMPACTED_ORDER))
        }
        Body::Event(_) => None,
        Body::Message(m) => {
            let p = message_payload(m, layout)?;
            Some(("response_item", p.0, p.1))
        }
    }
}

fn message_payload(
    m: &Message,
    layout: &Layout,
) -> Option<(Map<String, Value>, &'static [&'static str])> {
    let item = layout.item.as_deref();
    let single = match m.parts.as_slice() {
        [p] => Some(p),
        _ => None,
    };
    match single.map(|p| &p.content) {
        Some(Content::Thought { .. }) if m.role == Role::Assistant => reasoning(single?),
        Some(Content::ToolCall { .. }) => tool_call(single?, item),
        Some(Content::ToolResult { .. }) => tool_output(single?, item),
        _ => {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                // Codex's developer messages are read as system ones.
                Role::System if layout.developer => "developer",
                Role::System => "system",
                _ => return None,
            };
            let output = m.role == Role::Assistant;
            let mut content = Vec::with_capacity(m.parts.len());
            for p in &m.parts {
                content.push(content_item(p, output)?);
            }
            let mut p = Map::new();
            p.insert("type".into(), "message".into());
            p.insert("role".into(), role.into());
            p.insert("content".into(), Value::Array(content));
            p.extend(m.extra.clone());
            Some((ordered(p, MESSAGE_ORDER), MESSAGE_ORDER))
        }
    }
}

/// A text or image part as a message content item; `None` for parts a message cannot hold.
pub(super) fn content_item(p: &Part, output: bool) -> Option<Value> {
    let mut o = Map::new();
    match &p.content {
        Content::Text { text } => {
            let t = if output { "output_text" } else { "input_text" };
            o.insert("type".into(), t.into());
            o.insert("text".into(), text.clone().into());
        }
        Content::Media {
            mime_type,
            data,
            uri,
            extra,
        } => {
            let url = match (uri, data) {
                (Some(u), _) => u.clone(),
                (None, Some(d)) => format!(
                    "data:{};base64,{d}",
                    mime_type.as_deref().unwrap_or("application/octet-stream")
                ),
                (None, None) => return None,
            };
            o.insert("type".into(), "input_image".into());
            o.insert("image_url".into(), url.into());
            o.extend(extra.clone());
        }
        Content::Other { value } => return Some(value.clone()),
        _ => return None,
    }
    o.extend(p.extra.clone());
    Some(Value::Object(o))
}

fn reasoning(p: &Part) -> Option<(Map<String, Value>, &'static [&'static str])> {
    let Content::Thought {
        text,
        encrypted,
        extra,
        ..
    } = &p.content
    else {
        return None;
    };
    let mut o = Map::new();
    o.insert("type".into(), "reasoning".into());
    o.insert("summary".into(), summary_of(text));
    o.insert("content".into(), Value::Null);
    o.insert(
        "encrypted_content".into(),
        encrypted.clone().map_or(Value::Null, Value::String),
    );
    // `summary` and `content` in extra are the file's own values, kept where the text alone
    // would not give them back.
    o.extend(extra.clone());
    Some((ordered(o, REASONING_ORDER), REASONING_ORDER))
}

/// A reasoning summary from the thought's text: one `summary_text` item, none for `""`.
pub(super) fn summary_of(text: &str) -> Value {
    if text.is_empty() {
        return Value::Array(Vec::new());
    }
    let mut s = Map::new();
    s.insert("type".into(), "summary_text".into());
    s.insert("text".into(), text.into());
    Value::Array(vec![Value::Object(s)])
}

fn tool_call(
    p: &Part,
    item: Option<&str>,
) -> Option<(Map<String, Value>, &'static [&'static str])> {
    let Content::ToolCall {
        id,
        name,
        args,
        extra,
    } = &p.content
    else {
        return None;
    };
    let mut o = Map::new();
    // The item type read, while the node is still a call.
    let order = match item.unwrap_or("function_call") {
        "custom_tool_call" => {
            o.insert("type".into(), "custom_tool_call".into());
            o.insert("name".into(), name.clone().into());
            let input = match args.get("input") {
                Some(Value::String(s)) if args.as_object().is_some_and(|a| a.len() == 1) => {
                    s.clone()
                }
                _ => args.to_string(),
            };
            o.insert("input".into(), input.into());
            CUSTOM_CALL_ORDER
        }
        "local_shell_call" => {
            o.insert("type".into(), "local_shell_call".into());
            o.insert("action".into(), args.clone());
            SHELL_CALL_ORDER
        }
        _ => {
            o.insert("type".into(), "function_call".into());
            o.insert("name".into(), name.clone().into());
            o.insert("arguments".into(), args.to_string().into());
            FUNCTION_CALL_ORDER
        }
    };
    if let Some(id) = id {
        o.insert("call_id".into(), id.clone().into());
    }
    // For a function call, `arguments` in extra is the file's own string (kept when it is not
    // the compact form of `args`).
    o.extend(extra.clone());
    Some((ordered(o, order), order))
}

fn tool_output(
    p: &Part,
    item: Option<&str>,
) -> Option<(Map<String, Value>, &'static [&'static str])> {
    let Content::ToolResult {
        call_id,
        output,
        extra,
        ..
    } = &p.content
    else {
        return None;
    };
    let mut o = Map::new();
    // The item type read, while the node is still an output.
    let item = item.filter(|i| *i == "custom_tool_call_output");
    o.insert("type".into(), item.unwrap_or("function_call_output").into());
    if let Some(id) = call_id {
        o.insert("call_id".into(), id.clone().into());
    }
    o.insert("output".into(), output.clone());
    o.extend(extra.clone());
    Some((ordered(o, OUTPUT_ORDER), OUTPUT_ORDER))
}

/// The `session_meta` payload of a session read from this format (`keys`: the order read, where
/// it is not Codex's).
pub(super) fn meta_payload(meta: &Meta, keys: Option<&[String]>) -> Map<String, Value> {
    let mut p = Map::new();
    if let Some(id) = &meta.id {
        p.insert("id".into(), id.clone().into());
    }
    if let Some(ts) = &meta.start_time {
        p.insert("timestamp".into(), ts.clone().into());
    }
    if let Some(cwd) = &meta.cwd {
        p.insert("cwd".into(), cwd.clone().into());
    }
    if let Some(v) = &meta.tool_version {
        p.insert("cli_version".into(), v.clone().into());
    }
    p.extend(meta.extra.clone());
    let p = ordered(p, META_ORDER);
    apply_keys(p, keys, &["id", "timestamp", "cwd", "cli_version"])
}

/// Puts keys in the order the reader saw. Keys of `canonical` the writer filled in that the
/// payload did not have are left out; other keys (added since) go after.
fn apply_keys(
    mut map: Map<String, Value>,
    keys: Option<&[String]>,
    canonical: &[&str],
) -> Map<String, Value> {
    let Some(keys) = keys else {
        return map;
    };
    let mut out = Map::with_capacity(map.len());
    for k in keys {
        if let Some(v) = map.shift_remove(k) {
            out.insert(k.clone(), v);
        }
    }
    for (k, v) in map {
        if !canonical.contains(&k.as_str()) {
            out.insert(k, v);
        }
    }
    out
}
