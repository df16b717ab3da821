//! Content blocks (the Anthropic API's) to model parts and back.

use serde_json::{Map, Value};

use crate::model::{Content, Extra, Part};

fn take_str(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.shift_remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// A block as a part. Blocks of unknown type, or of a known type in a shape the writer would
/// not give back, are kept whole as [`Content::Other`].
pub(super) fn part_from_block(block: Value) -> Part {
    let Value::Object(mut b) = block else {
        return Part::new(Content::Other { value: block });
    };
    let kind = b.get("type").and_then(Value::as_str).unwrap_or_default();
    let shape_ok = match kind {
        "text" => b.get("text").is_some_and(Value::is_string),
        "thinking" => {
            b.get("thinking").is_some_and(Value::is_string)
                && b.get("signature").is_none_or(Value::is_string)
        }
        "redacted_thinking" => b.get("data").is_some_and(Value::is_string),
        "tool_use" => {
            b.get("id").is_some_and(Value::is_string)
                && b.get("name").is_some_and(Value::is_string)
                && b.contains_key("input")
        }
        "tool_result" => {
            b.get("tool_use_id").is_some_and(Value::is_string)
                && b.contains_key("content")
                && b.get("is_error").is_none_or(Value::is_boolean)
        }
        "image" => image_source(&b).is_some(),
        _ => false,
    };
    if !shape_ok {
        return Part::new(Content::Other {
            value: Value::Object(b),
        });
    }
    let kind = kind.to_string();
    b.shift_remove("type");
    match kind.as_str() {
        "text" => {
            let text = take_str(&mut b, "text").unwrap_or_default();
            Part {
                content: Content::Text { text },
                signature: None,
                extra: b,
            }
        }
        "thinking" => {
            let text = take_str(&mut b, "thinking").unwrap_or_default();
            let signature = take_str(&mut b, "signature");
            Part {
                content: Content::Thought {
                    text,
                    subject: None,
                    encrypted: None,
                    extra: b,
                },
                signature,
                extra: Extra::new(),
            }
        }
        "redacted_thinking" => {
            let data = take_str(&mut b, "data");
            Part::new(Content::Thought {
                text: String::new(),
                subject: None,
                encrypted: data,
                extra: b,
            })
        }
        "tool_use" => {
            let id = take_str(&mut b, "id");
            let name = take_str(&mut b, "name").unwrap_or_default();
            let args = b.shift_remove("input").unwrap_or(Value::Null);
            Part::new(Content::ToolCall {
                id,
                name,
                args,
                extra: b,
            })
        }
        "tool_result" => {
            let call_id = take_str(&mut b, "tool_use_id");
            let output = b.shift_remove("content").unwrap_or(Value::Null);
            // `is_error: false` stays a field of the block: the CLI writes it only sometimes.
            let is_error = b.get("is_error") == Some(&Value::Bool(true));
            if is_error {
                b.shift_remove("is_error");
            }
            Part::new(Content::ToolResult {
                call_id,
                name: None,
                output,
                is_error,
                status: None,
                display: None,
                extra: b,
            })
        }
        _ => {
            // image
            let (mime_type, data, uri) = image_source(&b).unwrap_or_default();
            b.shift_remove("source");
            Part::new(Content::Media {
                mime_type,
                data,
                uri,
                extra: b,
            })
        }
    }
}

type Source = (Option<String>, Option<String>, Option<String>);

/// `source` of an image block in one of the two shapes the writer rebuilds exactly:
/// `{type: "base64", media_type, data}` or `{type: "url", url}`.
fn image_source(b: &Map<String, Value>) -> Option<Source> {
    let src = b.get("source")?.as_object()?;
    let keys: Vec<&str> = src.keys().map(String::as_str).collect();
    let s = |k: &str| src.get(k).and_then(Value::as_str).map(String::from);
    match src.get("type")?.as_str()? {
        "base64" if keys == ["type", "media_type", "data"] => {
            Some((Some(s("media_type")?), Some(s("data")?), None))
        }
        "url" if keys == ["type", "url"] => Some((None, None, Some(s("url")?))),
        _ => None,
    }
}

/// A part as a block, in the key order the Claude CLI writes. `None` for kinds the API has no
/// block for (code, code results), which only come from other formats.
pub(super) fn block_from_part(part: &Part) -> Option<Value> {
    let mut b = Map::new();
    let extra: &Extra = match &part.content {
        Content::Text { text } => {
            b.insert("type".into(), "text".into());
            b.insert("text".into(), text.clone().into());
            &part.extra
        }
        Content::Thought {
            text,
            encrypted,
            extra,
            ..
        } => {
            if let Some(data) = encrypted {
                b.insert("type".into(), "redacted_thinking".into());
                b.insert("data".into(), data.clone().into());
            } else {
                b.insert("type".into(), "thinking".into());
                b.insert("thinking".into(), text.clone().into());
                if let Some(sig) = &part.signature {
                    b.insert("signature".into(), sig.clone().into());
                }
            }
            extra
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            b.insert("type".into(), "tool_use".into());
            if let Some(id) = id {
                b.insert("id".into(), id.clone().into());
            }
            b.insert("name".into(), name.clone().into());
            b.insert("input".into(), args.clone());
            extra
        }
        Content::ToolResult {
            call_id,
            output,
            is_error,
            extra,
            ..
        } => {
            if let Some(id) = call_id {
                b.insert("tool_use_id".into(), id.clone().into());
            }
            b.insert("type".into(), "tool_result".into());
            b.insert("content".into(), output.clone());
            if *is_error {
                b.insert("is_error".into(), true.into());
            }
            extra
        }
        Content::Media {
            mime_type,
            data,
            uri,
            extra,
        } => {
            b.insert("type".into(), "image".into());
            let mut src = Map::new();
            if let Some(uri) = uri.as_ref().filter(|_| data.is_none()) {
                src.insert("type".into(), "url".into());
                src.insert("url".into(), uri.clone().into());
            } else {
                src.insert("type".into(), "base64".into());
                src.insert(
                    "media_type".into(),
                    mime_type.clone().unwrap_or_default().into(),
                );
                src.insert("data".into(), data.clone().unwrap_or_default().into());
            }
            b.insert("source".into(), Value::Object(src));
            extra
        }
        Content::Other { value } => return Some(value.clone()),
        Content::Code { .. } | Content::CodeResult { .. } => return None,
    };
    for (k, v) in extra {
        b.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Some(Value::Object(b))
}
