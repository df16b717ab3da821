//! Content blocks (`text`, `thinking`, `image`, `tool_call`) to model parts and back. Fields a
//! block has beyond the known ones stay with the part, in order; a block of another kind (or a
//! known kind without its required field) is kept whole as `Content::Other`.

use serde_json::{Map, Value};

use super::super::fields::take_string;
use super::super::ordered;
use super::super::tool_output::output_text;
use crate::model::{Content, Extra, Part};

const TEXT_ORDER: [&str; 2] = ["type", "text"];
const THINKING_ORDER: [&str; 2] = ["type", "thinking"];
const IMAGE_ORDER: [&str; 3] = ["type", "data", "mime_type"];
const TOOL_CALL_ORDER: [&str; 4] = ["type", "id", "name", "arguments"];

pub(super) fn part_from_block(block: &Value) -> Part {
    let other = || {
        Part::new(Content::Other {
            value: block.clone(),
        })
    };
    let Value::Object(o) = block else {
        return other();
    };
    let has_str = |k: &str| o.get(k).is_some_and(Value::is_string);
    let mut rest = o.clone();
    rest.shift_remove("type");
    match o.get("type").and_then(Value::as_str) {
        Some("text") if has_str("text") => {
            let text = take_string(&mut rest, "text").unwrap_or_default();
            Part {
                content: Content::Text { text },
                signature: None,
                extra: rest,
            }
        }
        Some("thinking") if has_str("thinking") => {
            let text = take_string(&mut rest, "thinking").unwrap_or_default();
            Part::new(Content::Thought {
                text,
                subject: None,
                encrypted: None,
                extra: rest,
            })
        }
        Some("image") if has_str("data") => {
            let data = take_string(&mut rest, "data");
            let mime_type = take_string(&mut rest, "mime_type");
            Part::new(Content::Media {
                mime_type,
                data,
                uri: None,
                extra: rest,
            })
        }
        Some("tool_call") if has_str("name") && o.contains_key("arguments") => {
            let id = take_string(&mut rest, "id");
            let name = take_string(&mut rest, "name").unwrap_or_default();
            let args = rest.shift_remove("arguments").unwrap_or(Value::Null);
            Part::new(Content::ToolCall {
                id,
                name,
                args,
                extra: rest,
            })
        }
        _ => other(),
    }
}

/// A part as a block; `None` for the kinds this format has no block for (tool results, code,
/// media without data). `native`: the part was read from this format, so its unknown fields
/// (and blocks of unknown kinds) are written back.
pub(super) fn block_from_part(part: &Part, native: bool) -> Option<Value> {
    let mut b = Map::new();
    let extend = |b: &mut Map<String, Value>, extra: &Extra| {
        if native {
            b.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    };
    let order: &[&str] = match &part.content {
        Content::Text { text } => {
            b.insert("type".into(), "text".into());
            b.insert("text".into(), text.clone().into());
            &TEXT_ORDER
        }
        Content::Thought { text, extra, .. } => {
            b.insert("type".into(), "thinking".into());
            b.insert("thinking".into(), text.clone().into());
            extend(&mut b, extra);
            &THINKING_ORDER
        }
        Content::Media {
            mime_type,
            data: Some(data),
            extra,
            ..
        } => {
            b.insert("type".into(), "image".into());
            b.insert("data".into(), data.clone().into());
            if let Some(m) = mime_type {
                b.insert("mime_type".into(), m.clone().into());
            }
            extend(&mut b, extra);
            &IMAGE_ORDER
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            b.insert("type".into(), "tool_call".into());
            if let Some(id) = id {
                b.insert("id".into(), id.clone().into());
            }
            b.insert("name".into(), name.clone().into());
            b.insert("arguments".into(), args.clone());
            extend(&mut b, extra);
            &TOOL_CALL_ORDER
        }
        Content::Other { value } if native => return Some(value.clone()),
        _ => return None,
    };
    extend(&mut b, &part.extra);
    Some(Value::Object(ordered(b, order)))
}

/// A tool result's `output` as content blocks: the blocks when it is an array (as read), else
/// one text block of its [`output_text`].
pub(super) fn blocks_of_output(output: &Value) -> Value {
    if output.is_array() {
        return output.clone();
    }
    let (text, _) = output_text(output);
    serde_json::json!([{"type": "text", "text": text}])
}

/// Content blocks as a tool result's `output`: one plain text block becomes its string.
pub(super) fn output_of_blocks(content: Value) -> Value {
    if let Value::Array(a) = &content
        && let [Value::Object(b)] = a.as_slice()
        && b.len() == 2
        && b.get("type").and_then(Value::as_str) == Some("text")
        && let Some(Value::String(t)) = b.get("text")
    {
        return Value::String(t.clone());
    }
    content
}
