//! One entry object to a node, for sessions read from this format; `native::native_entry` is
//! its inverse up to key order and what a node's line tells its writer (`origin`).

use serde_json::{Map, Value};

use super::super::fields::take_string;
use super::blocks::parts_from_blocks;
use super::{MESSAGE_EVENT, RECORD};
use crate::model::{Body, Content, Event, Extra, Message, Node, Part, Role, Usage};

/// An entry as a node. `id`/`parent` are what the reader decided (the entry's own, or derived
/// for version 1); the entry's `type`, `id`, `parentId` and `timestamp` are taken out of `map`.
pub(super) fn read_entry(mut map: Map<String, Value>, id: String, parent: Option<String>) -> Node {
    let kind = match map.get("type") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Node {
                id,
                parent,
                timestamp: None,
                body: Body::Event(Event::Custom {
                    kind: RECORD.into(),
                    data: Value::Object(map),
                }),
                extra: Extra::new(),
                origin: None,
            };
        }
    };
    map.shift_remove("type");
    if map.get("id").is_some_and(Value::is_string) {
        map.shift_remove("id");
    }
    if matches!(map.get("parentId"), Some(Value::String(_) | Value::Null)) {
        map.shift_remove("parentId");
    }
    let timestamp = take_string(&mut map, "timestamp");
    let mut extra = Extra::new();
    let body = if kind == "message" && map.get("message").is_some_and(Value::is_object) {
        let Some(Value::Object(msg)) = map.shift_remove("message") else {
            unreachable!("checked above")
        };
        extra = map;
        match read_message(msg) {
            Ok(m) => Body::Message(m),
            Err(msg) => Body::Event(Event::Custom {
                kind: MESSAGE_EVENT.into(),
                data: Value::Object(msg),
            }),
        }
    } else {
        Body::Event(read_event(&kind, map))
    };
    Node {
        id,
        parent,
        timestamp,
        body,
        extra,
        origin: None,
    }
}

fn read_event(kind: &str, data: Map<String, Value>) -> Event {
    let s = |k: &str| data.get(k).and_then(Value::as_str).map(String::from);
    match kind {
        "compaction" => Event::Compaction {
            summary: s("summary"),
            tokens_before: data.get("tokensBefore").and_then(Value::as_u64),
            first_kept: s("firstKeptEntryId"),
            data: Value::Object(data),
        },
        "model_change" => Event::ModelChange {
            provider: s("provider"),
            model: s("modelId"),
            data: Value::Object(data),
        },
        "session_info" => Event::Title {
            title: s("name"),
            data: Value::Object(data),
        },
        _ => Event::Custom {
            kind: kind.into(),
            data: Value::Object(data),
        },
    }
}

/// A user, assistant or toolResult message; any other message (or one missing what its role
/// needs) is given back whole.
fn read_message(mut msg: Map<String, Value>) -> Result<Message, Map<String, Value>> {
    let role = match msg.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("toolResult") => Role::Tool,
        _ => return Err(msg),
    };
    let content_ok = matches!(
        (role, msg.get("content")),
        (Role::User, Some(Value::String(_))) | (_, Some(Value::Array(_)))
    );
    let usage_ok = msg.get("usage").is_none_or(Value::is_object);
    if !content_ok || !usage_ok {
        return Err(msg);
    }
    msg.shift_remove("role");
    let content = msg.shift_remove("content").expect("checked above");
    let mut message = Message::new(role, Vec::new());
    match role {
        Role::Tool => {
            let call_id = take_string(&mut msg, "toolCallId");
            let name = take_string(&mut msg, "toolName");
            let is_error = match msg.get("isError") {
                Some(Value::Bool(b)) => {
                    let b = *b;
                    msg.shift_remove("isError");
                    b
                }
                _ => false,
            };
            message.parts.push(Part::new(Content::ToolResult {
                call_id,
                name,
                output: content,
                is_error,
                status: None,
                display: None,
                extra: Extra::new(),
            }));
        }
        _ => match content {
            Value::String(text) => message.parts.push(Part::text(text)),
            Value::Array(blocks) => message.parts = parts_from_blocks(&blocks),
            _ => unreachable!("checked above"),
        },
    }
    if role == Role::Assistant {
        message.model = take_string(&mut msg, "model");
        if let Some(Value::Object(u)) = msg.shift_remove("usage") {
            message.usage = Some(usage_from(u));
        }
    }
    message.extra = msg;
    Ok(message)
}

/// pi's `usage` as model usage. pi counts `input` without the cache reads and writes (as the
/// Anthropic API does); the model's `input` is every prompt token, so they are added up (the
/// cache writes stay in `extra` as `cacheWrite`, where the writer takes them off again).
fn usage_from(mut u: Map<String, Value>) -> Usage {
    let mut take = |k: &str| {
        let n = u.get(k).and_then(Value::as_u64);
        if n.is_some() {
            u.shift_remove(k);
        }
        n
    };
    let input = take("input");
    let output = take("output");
    let cached = take("cacheRead");
    let total = take("totalTokens");
    let written = u.get("cacheWrite").and_then(Value::as_u64).unwrap_or(0);
    let input = match input {
        Some(n) => match n
            .checked_add(cached.unwrap_or(0))
            .and_then(|n| n.checked_add(written))
        {
            Some(all) => Some(all),
            None => {
                // Beyond any real count: kept as it was, not added up.
                u.insert("input".into(), n.into());
                None
            }
        },
        None => None,
    };
    Usage {
        input,
        output,
        cached,
        total,
        extra: u,
        ..Usage::default()
    }
}
