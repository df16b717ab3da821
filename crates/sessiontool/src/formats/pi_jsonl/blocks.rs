//! Content blocks (`text`, `thinking`, `image`, `toolCall`) to model parts and back. Fields a
//! block has beyond the known ones stay with the part, in order; a block of another kind (or a
//! known kind without its required field) is kept whole as `Content::Other`.

use serde_json::{Map, Value};

use super::super::fields::take_string;
use super::super::ordered;
use crate::model::{Content, Extra, Part};

const TEXT_ORDER: [&str; 3] = ["type", "text", "textSignature"];
const THINKING_ORDER: [&str; 4] = ["type", "thinking", "thinkingSignature", "redacted"];
const IMAGE_ORDER: [&str; 3] = ["type", "data", "mimeType"];
const TOOL_CALL_ORDER: [&str; 5] = ["type", "id", "name", "arguments", "thoughtSignature"];

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
    match o.get("type").and_then(Value::as_str) {
        Some("text") if has_str("text") => {
            rest.shift_remove("type");
            let text = take_string(&mut rest, "text").unwrap_or_default();
            Part {
                content: Content::Text { text },
                signature: None,
                extra: rest,
            }
        }
        Some("thinking") if has_str("thinking") => {
            rest.shift_remove("type");
            let text = take_string(&mut rest, "thinking").unwrap_or_default();
            let signature = take_string(&mut rest, "thinkingSignature");
            Part {
                content: Content::Thought {
                    text,
                    subject: None,
                    encrypted: None,
                    extra: rest,
                },
                signature,
                extra: Extra::new(),
            }
        }
        Some("image") if has_str("data") && has_str("mimeType") => {
            rest.shift_remove("type");
            let data = take_string(&mut rest, "data");
            let mime_type = take_string(&mut rest, "mimeType");
            Part::new(Content::Media {
                mime_type,
                data,
                uri: None,
                extra: rest,
            })
        }
        Some("toolCall") if has_str("name") && o.contains_key("arguments") => {
            rest.shift_remove("type");
            let id = take_string(&mut rest, "id");
            let name = take_string(&mut rest, "name").unwrap_or_default();
            let args = rest.shift_remove("arguments").unwrap_or(Value::Null);
            let signature = take_string(&mut rest, "thoughtSignature");
            Part {
                content: Content::ToolCall {
                    id,
                    name,
                    args,
                    extra: rest,
                },
                signature,
                extra: Extra::new(),
            }
        }
        _ => other(),
    }
}

pub(super) fn parts_from_blocks(blocks: &[Value]) -> Vec<Part> {
    blocks.iter().map(part_from_block).collect()
}

/// A part as a pi block; `None` for the kinds pi has no block for (tool results, code).
/// `native`: the part was read from pi, so its unknown fields are written back.
pub(super) fn block_from_part(part: &Part, native: bool) -> Option<Value> {
    let mut b = Map::new();
    let extend = |b: &mut Map<String, Value>, extra: &Extra| {
        if native {
            for (k, v) in extra {
                b.insert(k.clone(), v.clone());
            }
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
            if let Some(s) = &part.signature {
                b.insert("thinkingSignature".into(), s.clone().into());
            }
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
            let mime = mime_type.clone().unwrap_or_else(|| "image/png".into());
            b.insert("mimeType".into(), mime.into());
            extend(&mut b, extra);
            &IMAGE_ORDER
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            b.insert("type".into(), "toolCall".into());
            if let Some(id) = id {
                b.insert("id".into(), id.clone().into());
            }
            b.insert("name".into(), name.clone().into());
            b.insert("arguments".into(), args.clone());
            if let Some(s) = &part.signature {
                b.insert("thoughtSignature".into(), s.clone().into());
            }
            extend(&mut b, extra);
            &TOOL_CALL_ORDER
        }
        Content::Other { value } if native => return Some(value.clone()),
        _ => return None,
    };
    extend(&mut b, &part.extra);
    Some(Value::Object(ordered(b, order)))
}
