//! The Gemini API `Content`/`Part` shapes, shared by the three Gemini-family formats
//! (legacy session JSON, checkpoints, Qwen tree JSONL): one codec, so they agree.
//!
//! A Part object holds one of `text` (with `thought: true` for a thought), `functionCall`,
//! `functionResponse`, `inlineData`, `fileData`, `executableCode`, `codeExecutionResult`, plus
//! wrapper fields such as `thoughtSignature`. Anything else is kept as [`Content::Other`].

use serde_json::{Map, Value};

use crate::model::{Content, Extra, Part, Role};

/// Reads one Part object (or a bare string, which the API treats as a text part).
pub fn part_from_json(value: &Value) -> Part {
    let obj = match value {
        Value::String(s) => return Part::text(s.clone()),
        Value::Object(o) => o,
        other => {
            return Part::new(Content::Other {
                value: other.clone(),
            });
        }
    };
    let mut extra = obj.clone();
    let signature = take_string(&mut extra, "thoughtSignature");
    let content = if let Some(Value::String(text)) = obj.get("text") {
        extra.shift_remove("text");
        if obj.get("thought") == Some(&Value::Bool(true)) {
            extra.shift_remove("thought");
            Content::Thought {
                text: text.clone(),
                subject: None,
                encrypted: None,
                extra: Extra::new(),
            }
        } else {
            Content::Text { text: text.clone() }
        }
    } else if let Some(Value::Object(call)) = obj.get("functionCall")
        && let Some(Value::String(name)) = call.get("name")
    {
        extra.shift_remove("functionCall");
        let mut inner = call.clone();
        let id = take_string(&mut inner, "id");
        inner.shift_remove("name");
        let args = inner
            .shift_remove("args")
            .unwrap_or(Value::Object(Map::new()));
        Content::ToolCall {
            id,
            name: name.clone(),
            args,
            extra: inner,
        }
    } else if let Some(Value::Object(resp)) = obj.get("functionResponse") {
        extra.shift_remove("functionResponse");
        let mut inner = resp.clone();
        let call_id = take_string(&mut inner, "id");
        let name = take_string(&mut inner, "name");
        let output = inner.shift_remove("response").unwrap_or(Value::Null);
        let is_error = output.get("error").is_some() && output.get("output").is_none();
        Content::ToolResult {
            call_id,
            name,
            output,
            is_error,
            status: None,
            display: None,
            extra: inner,
        }
    } else if let Some(Value::Object(data)) = obj.get("inlineData") {
        extra.shift_remove("inlineData");
        let mut inner = data.clone();
        Content::Media {
            mime_type: take_string(&mut inner, "mimeType"),
            data: take_string(&mut inner, "data"),
            uri: None,
            extra: inner,
        }
    } else if let Some(Value::Object(file)) = obj.get("fileData") {
        extra.shift_remove("fileData");
        let mut inner = file.clone();
        // fileData keeps its own key order: fileUri first is what the SDK writes.
        Content::Media {
            uri: take_string(&mut inner, "fileUri"),
            mime_type: take_string(&mut inner, "mimeType"),
            data: None,
            extra: inner,
        }
    } else if let Some(Value::Object(code)) = obj.get("executableCode") {
        extra.shift_remove("executableCode");
        let mut inner = code.clone();
        Content::Code {
            code: take_string(&mut inner, "code").unwrap_or_default(),
            language: take_string(&mut inner, "language"),
            extra: inner,
        }
    } else if let Some(Value::Object(res)) = obj.get("codeExecutionResult") {
        extra.shift_remove("codeExecutionResult");
        let mut inner = res.clone();
        Content::CodeResult {
            outcome: take_string(&mut inner, "outcome"),
            output: take_string(&mut inner, "output"),
            extra: inner,
        }
    } else {
        return Part::new(Content::Other {
            value: value.clone(),
        });
    };
    Part {
        content,
        signature,
        extra,
    }
}

/// Writes one Part object. Thought subjects have no place in a Gemini part: a subject is
/// written as a bold heading before the text, as Gemini CLI itself does when it turns its
/// thought summaries back into history (`**subject** description`).
pub fn part_to_json(part: &Part) -> Value {
    let mut obj = Map::new();
    match &part.content {
        Content::Text { text } => {
            obj.insert("text".into(), text.clone().into());
        }
        Content::Thought { text, subject, .. } => {
            let text = match subject {
                Some(s) if !s.is_empty() => format!("**{s}** {text}"),
                _ => text.clone(),
            };
            obj.insert("text".into(), text.into());
            obj.insert("thought".into(), true.into());
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            let mut call = Map::new();
            if let Some(id) = id {
                call.insert("id".into(), id.clone().into());
            }
            call.insert("name".into(), name.clone().into());
            call.insert("args".into(), args.clone());
            call.extend(extra.clone());
            obj.insert("functionCall".into(), call.into());
        }
        Content::ToolResult {
            call_id,
            name,
            output,
            extra,
            ..
        } => {
            let mut resp = Map::new();
            if let Some(id) = call_id {
                resp.insert("id".into(), id.clone().into());
            }
            if let Some(name) = name {
                resp.insert("name".into(), name.clone().into());
            }
            resp.insert("response".into(), response_object(output));
            resp.extend(extra.clone());
            obj.insert("functionResponse".into(), resp.into());
        }
        Content::Media {
            mime_type,
            data,
            uri,
            extra,
        } => {
            let mut inner = Map::new();
            if let Some(uri) = uri {
                inner.insert("fileUri".into(), uri.clone().into());
                if let Some(m) = mime_type {
                    inner.insert("mimeType".into(), m.clone().into());
                }
                inner.extend(extra.clone());
                obj.insert("fileData".into(), inner.into());
            } else {
                if let Some(m) = mime_type {
                    inner.insert("mimeType".into(), m.clone().into());
                }
                inner.insert("data".into(), data.clone().unwrap_or_default().into());
                inner.extend(extra.clone());
                obj.insert("inlineData".into(), inner.into());
            }
        }
        Content::Code {
            code,
            language,
            extra,
        } => {
            let mut inner = Map::new();
            inner.insert("code".into(), code.clone().into());
            if let Some(l) = language {
                inner.insert("language".into(), l.clone().into());
            }
            inner.extend(extra.clone());
            obj.insert("executableCode".into(), inner.into());
        }
        Content::CodeResult {
            outcome,
            output,
            extra,
        } => {
            let mut inner = Map::new();
            if let Some(o) = outcome {
                inner.insert("outcome".into(), o.clone().into());
            }
            if let Some(o) = output {
                inner.insert("output".into(), o.clone().into());
            }
            inner.extend(extra.clone());
            obj.insert("codeExecutionResult".into(), inner.into());
        }
        Content::Other { value } => return value.clone(),
    }
    // A part read from this family keeps its wrapper fields in their original places.
    for (k, v) in &part.extra {
        obj.insert(k.clone(), v.clone());
    }
    if let Some(sig) = &part.signature {
        obj.insert("thoughtSignature".into(), sig.clone().into());
    }
    Value::Object(obj)
}

/// Gemini wants `response` to be an object; results from formats that carry plain text or
/// a list are wrapped as `{output: ...}`, the shape the CLIs write.
fn response_object(output: &Value) -> Value {
    match output {
        Value::Object(_) => output.clone(),
        Value::Null => Value::Object(Map::new()),
        other => {
            let mut m = Map::new();
            m.insert("output".into(), other.clone());
            Value::Object(m)
        }
    }
}

/// A `PartListUnion` (string, one Part, or an array of Parts and strings) as parts.
pub fn parts_from_union(value: &Value) -> Vec<Part> {
    match value {
        Value::Array(items) => items.iter().map(part_from_json).collect(),
        Value::Null => Vec::new(),
        other => vec![part_from_json(other)],
    }
}

pub fn parts_to_json(parts: &[Part]) -> Value {
    Value::Array(parts.iter().map(part_to_json).collect())
}

/// `{role, parts}` for a message role; notices have no Gemini role.
pub fn gemini_role(role: Role, parts: &[Part]) -> Option<&'static str> {
    match role {
        Role::Assistant => Some("model"),
        Role::User | Role::Tool | Role::System => Some("user"),
        Role::Info | Role::Warning | Role::Error => {
            let _ = parts;
            None
        }
    }
}

/// The model role of a Gemini `Content`: `model` is the assistant; a `user` turn that holds
/// only tool responses is a tool turn.
pub fn role_from_gemini(role: Option<&str>, parts: &[Part]) -> Role {
    match role {
        Some("model") => Role::Assistant,
        Some("system") => Role::System,
        _ if !parts.is_empty()
            && parts
                .iter()
                .all(|p| matches!(p.content, Content::ToolResult { .. })) =>
        {
            Role::Tool
        }
        _ => Role::User,
    }
}

pub(crate) fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.shift_remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_part_kind_round_trips() {
        let parts = json!([
            {"text": "hello"},
            {"text": "pondering", "thought": true, "thoughtSignature": "c2ln"},
            {"functionCall": {"id": "c1", "name": "ls", "args": {"path": "."}}, "thoughtSignature": "x"},
            {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a b"}}},
            {"functionResponse": {"id": "c2", "name": "rm", "response": {"error": "denied"}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
            {"fileData": {"fileUri": "gs://b/f", "mimeType": "text/plain"}},
            {"executableCode": {"code": "print(1)", "language": "PYTHON"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
            {"videoMetadata": {"fps": 2}},
            {"text": "with extra", "partMetadata": {"k": 1}}
        ]);
        let read = parts_from_union(&parts);
        assert_eq!(
            read.iter().map(Part::kind).collect::<Vec<_>>(),
            [
                "text",
                "thought",
                "tool_call",
                "tool_result",
                "tool_result",
                "media",
                "media",
                "code",
                "code_result",
                "other",
                "text"
            ]
        );
        assert!(matches!(
            read[4].content,
            Content::ToolResult { is_error: true, .. }
        ));
        assert_eq!(read[1].signature.as_deref(), Some("c2ln"));
        assert_eq!(parts_to_json(&read), parts);
    }

    #[test]
    fn union_forms() {
        assert_eq!(parts_from_union(&json!("hi")).len(), 1);
        assert_eq!(parts_from_union(&json!({"text": "hi"})).len(), 1);
        assert_eq!(parts_from_union(&json!(["a", {"text": "b"}])).len(), 2);
        assert!(parts_from_union(&json!(null)).is_empty());
    }
}
