//! A node read from this format back to its entry object (before its line's key orders): the
//! inverse of `entry::read_entry`.

use serde_json::{Map, Value};

use super::super::ordered;
use super::blocks::block_from_part;
use super::origin::AsRead;
use super::{
    ASSISTANT_ORDER, ENTRY_ORDER, MESSAGE_EVENT, RECORD, TOOL_RESULT_ORDER, USAGE_ORDER, USER_ORDER,
};
use crate::model::{Body, Content, Event, Message, Node, Part, Role, Usage};

/// pi's `usage` object. Native extras (`cacheWrite`, `cost`) are written back in place;
/// counts pi has no field for (`thoughts`, `tool`) are not written. pi's `input` leaves out
/// the cache reads and writes the model's `input` holds.
pub(super) fn usage_value(u: &Usage, native: bool) -> Value {
    let written = u
        .extra
        .get("cacheWrite")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let input = u.input.map(|n| {
        n.saturating_sub(u.cached.unwrap_or(0))
            .saturating_sub(written)
    });
    let mut m = Map::new();
    for (k, v) in [
        ("input", input),
        ("output", u.output),
        ("cacheRead", u.cached),
        ("totalTokens", u.total),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), v.into());
        }
    }
    if native {
        for (k, v) in &u.extra {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(ordered(m, &USAGE_ORDER))
}

/// The entry a node read from this format becomes, before its line's key orders: with the id
/// its line had (`as_read`; none for a version 1 entry), else its own.
pub(super) fn native_entry(node: &Node, as_read: Option<&AsRead>) -> Map<String, Value> {
    let mut e = Map::new();
    let kind = match &node.body {
        Body::Message(_) => "message",
        Body::Event(Event::Compaction { .. }) => "compaction",
        Body::Event(Event::ModelChange { .. }) => "model_change",
        Body::Event(Event::Title { .. }) => "session_info",
        Body::Event(Event::Custom { kind, data }) if kind == RECORD => {
            return match data {
                Value::Object(o) => o.clone(),
                _ => Map::new(),
            };
        }
        Body::Event(Event::Custom { kind, .. }) if kind == MESSAGE_EVENT => "message",
        Body::Event(e) => e.kind(),
    };
    e.insert("type".into(), kind.into());
    let id = match as_read {
        Some(line) => line.own_id().cloned(),
        None => Some(node.id.clone().into()),
    };
    if let Some(id) = id {
        e.insert("id".into(), id);
        let parent = node.parent.clone().map_or(Value::Null, Value::String);
        e.insert("parentId".into(), parent);
    }
    if let Some(ts) = &node.timestamp {
        e.insert("timestamp".into(), ts.clone().into());
    }
    match &node.body {
        Body::Message(m) => {
            let string = as_read.is_some_and(AsRead::content_string);
            e.insert("message".into(), Value::Object(native_message(m, string)));
            e.extend(node.extra.clone());
        }
        Body::Event(Event::Custom { kind, data }) if kind == MESSAGE_EVENT => {
            e.insert("message".into(), data.clone());
            e.extend(node.extra.clone());
        }
        Body::Event(ev) => {
            e.extend(node.extra.clone());
            e.extend(event_fields(ev));
        }
    }
    ordered(e, &ENTRY_ORDER)
}

/// The type-specific fields of an event entry: its data, with the model's fields put back.
fn event_fields(ev: &Event) -> Map<String, Value> {
    let (data, sets): (&Value, Vec<(&str, Option<Value>)>) = match ev {
        Event::Compaction {
            summary,
            tokens_before,
            first_kept,
            data,
        } => {
            let v1 = data.get("firstKeptEntryIndex").is_some();
            let kept = first_kept.clone().filter(|_| !v1).map(Value::String);
            let sets = vec![
                ("summary", summary.clone().map(Value::String)),
                ("firstKeptEntryId", kept),
                ("tokensBefore", tokens_before.map(Value::from)),
            ];
            (data, sets)
        }
        Event::ModelChange {
            provider,
            model,
            data,
        } => (
            data,
            vec![
                ("provider", provider.clone().map(Value::String)),
                ("modelId", model.clone().map(Value::String)),
            ],
        ),
        Event::Title { title, data } => (data, vec![("name", title.clone().map(Value::String))]),
        Event::Rewind { data, .. } | Event::Custom { data, .. } => (data, vec![]),
    };
    let mut m = match data {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    for (k, v) in sets {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    }
    m
}

/// A message's object (`string`: a user message's content was a string in its line).
fn native_message(m: &Message, string: bool) -> Map<String, Value> {
    let mut msg = Map::new();
    let order: &[&str] = match m.role {
        Role::Tool => {
            msg.insert("role".into(), "toolResult".into());
            let result = m.parts.iter().find_map(|p| match &p.content {
                Content::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                    ..
                } => Some((call_id, name, output, *is_error)),
                _ => None,
            });
            if let Some((call_id, name, output, is_error)) = result {
                if let Some(id) = call_id {
                    msg.insert("toolCallId".into(), id.clone().into());
                }
                if let Some(name) = name {
                    msg.insert("toolName".into(), name.clone().into());
                }
                msg.insert("content".into(), output.clone());
                msg.insert("isError".into(), is_error.into());
            }
            &TOOL_RESULT_ORDER
        }
        role => {
            let name = if role == Role::Assistant {
                "assistant"
            } else {
                "user"
            };
            msg.insert("role".into(), name.into());
            let content = match (string, m.parts.as_slice()) {
                (true, [p]) => match &p.content {
                    Content::Text { text } => Value::String(text.clone()),
                    _ => blocks_value(&m.parts),
                },
                _ => blocks_value(&m.parts),
            };
            msg.insert("content".into(), content);
            if let Some(model) = &m.model {
                msg.insert("model".into(), model.clone().into());
            }
            if let Some(u) = &m.usage {
                msg.insert("usage".into(), usage_value(u, true));
            }
            if role == Role::Assistant {
                &ASSISTANT_ORDER
            } else {
                &USER_ORDER
            }
        }
    };
    msg.extend(m.extra.clone());
    ordered(msg, order)
}

fn blocks_value(parts: &[Part]) -> Value {
    Value::Array(
        parts
            .iter()
            .filter_map(|p| block_from_part(p, true))
            .collect(),
    )
}
