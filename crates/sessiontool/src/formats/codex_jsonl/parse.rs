//! A `response_item` payload as a node body: messages, reasoning, tool calls and their outputs;
//! other items (and items of a shape this version does not know) as custom events, whole.

use serde_json::{Map, Value};

use super::items::{REASONING_ORDER, summary_of};
use crate::formats::ordered;
use crate::model::{Body, Content, Event, Extra, Message, Part, Role};

pub(super) fn response_item(p: Map<String, Value>) -> Body {
    let item = p
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let read = match item.as_str() {
        "message" => message(&p),
        "reasoning" => reasoning(&p),
        "function_call" | "custom_tool_call" | "local_shell_call" => tool_call(&p, &item),
        "function_call_output" | "custom_tool_call_output" => tool_output(&p),
        _ => None,
    };
    match read {
        Some(m) => Body::Message(m),
        None => Body::Event(Event::Custom {
            kind: "response_item".into(),
            data: Value::Object(p),
        }),
    }
}

/// The fields of `p` other than `known`, in order.
fn rest(p: &Map<String, Value>, known: &[&str]) -> Extra {
    p.iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn str_of<'a>(p: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    p.get(k).and_then(Value::as_str)
}

/// A message; role `developer` is read as system (the writer reads it again from the line:
/// [`super::origin`]).
fn message(p: &Map<String, Value>) -> Option<Message> {
    let role = match str_of(p, "role")? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" | "developer" => Role::System,
        _ => return None,
    };
    let expected = if role == Role::Assistant {
        "output_text"
    } else {
        "input_text"
    };
    let parts = p
        .get("content")?
        .as_array()?
        .iter()
        .map(|c| content_part(c, expected))
        .collect();
    let mut m = Message::new(role, parts);
    m.extra = rest(p, &["type", "role", "content"]);
    Some(m)
}

fn content_part(c: &Value, expected: &str) -> Part {
    let other = || Part::new(Content::Other { value: c.clone() });
    let Some(o) = c.as_object() else {
        return other();
    };
    match (str_of(o, "type"), str_of(o, "text"), str_of(o, "image_url")) {
        (Some(t), Some(text), _) if t == expected => {
            let mut part = Part::text(text);
            part.extra = rest(o, &["type", "text"]);
            part
        }
        (Some("input_image"), _, Some(url)) => {
            let (mime_type, data, uri) = match parse_data_url(url) {
                Some((m, d)) => (Some(m.to_string()), Some(d.to_string()), None),
                None => (None, None, Some(url.to_string())),
            };
            Part::new(Content::Media {
                mime_type,
                data,
                uri,
                extra: rest(o, &["type", "image_url"]),
            })
        }
        _ => other(),
    }
}

/// `data:<mime>;base64,<data>` as its mime type and data.
fn parse_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    (!mime.is_empty() && !mime.contains(',')).then_some((mime, data))
}

fn reasoning(p: &Map<String, Value>) -> Option<Message> {
    let summary = p.get("summary")?.as_array()?;
    let texts: Option<Vec<&str>> = summary
        .iter()
        .map(|s| {
            let o = s.as_object()?;
            (str_of(o, "type") == Some("summary_text")).then_some(())?;
            str_of(o, "text")
        })
        .collect();
    let text = texts.as_ref().map(|t| t.join("\n\n")).unwrap_or_default();
    let mut extra = rest(p, &["type", "summary", "content", "encrypted_content"]);
    if summary_of(&text) != *p.get("summary")? {
        extra.insert("summary".into(), p["summary"].clone());
    }
    match p.get("content") {
        None | Some(Value::Null) => {}
        Some(c) => {
            extra.insert("content".into(), c.clone());
        }
    }
    let encrypted = match p.get("encrypted_content") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(other) => {
            extra.insert("encrypted_content".into(), other.clone());
            None
        }
    };
    let extra = ordered(extra, REASONING_ORDER);
    let thought = Content::Thought {
        text,
        subject: None,
        encrypted,
        extra,
    };
    Some(Message::new(Role::Assistant, vec![Part::new(thought)]))
}

fn tool_call(p: &Map<String, Value>, item: &str) -> Option<Message> {
    let call_id = match p.get("call_id") {
        Some(Value::String(s)) => Some(s.clone()),
        None => None,
        Some(_) => return None,
    };
    let (name, args, extra) = match item {
        "function_call" => {
            let arguments = str_of(p, "arguments")?;
            let mut extra = rest(p, &["type", "name", "arguments", "call_id"]);
            let args = match serde_json::from_str::<Value>(arguments) {
                Ok(v) if serde_json::to_string(&v).ok().as_deref() == Some(arguments) => v,
                parsed => {
                    extra.insert("arguments".into(), arguments.into());
                    parsed.unwrap_or_else(|_| Value::String(arguments.into()))
                }
            };
            (str_of(p, "name")?.to_string(), args, extra)
        }
        "custom_tool_call" => {
            let mut args = Map::new();
            args.insert("input".into(), str_of(p, "input")?.into());
            let extra = rest(p, &["type", "name", "input", "call_id"]);
            (str_of(p, "name")?.to_string(), Value::Object(args), extra)
        }
        _ => {
            let action = p.get("action")?.clone();
            (
                "local_shell".to_string(),
                action,
                rest(p, &["type", "action", "call_id"]),
            )
        }
    };
    let call = Content::ToolCall {
        id: call_id,
        name,
        args,
        extra,
    };
    Some(Message::new(Role::Assistant, vec![Part::new(call)]))
}

fn tool_output(p: &Map<String, Value>) -> Option<Message> {
    let call_id = str_of(p, "call_id").map(String::from);
    let output = p.get("output")?.clone();
    let is_error = output.get("success") == Some(&Value::Bool(false));
    let result = Content::ToolResult {
        call_id,
        name: None,
        output,
        is_error,
        status: None,
        display: None,
        extra: rest(p, &["type", "call_id", "output"]),
    };
    Some(Message::new(Role::Tool, vec![Part::new(result)]))
}
