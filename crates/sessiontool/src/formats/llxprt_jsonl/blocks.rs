//! IContent (`{speaker, blocks, metadata?}`, llxprt's `services/history/IContent.ts`) to and
//! from messages. Blocks are built in the field order of llxprt's interfaces; a line whose
//! blocks were in another order keeps its text (see `read`).

use serde_json::{Map, Value};

use crate::formats::fields::take_u64;
use crate::formats::ordered;
use crate::model::{Content, Extra, Message, Part, Role, Usage};

const TEXT: &[&str] = &["type", "text"];
const TOOL_CALL: &[&str] = &["type", "id", "name", "parameters", "description"];
const TOOL_RESPONSE: &[&str] = &[
    "type",
    "callId",
    "toolName",
    "result",
    "error",
    "isComplete",
];
const MEDIA: &[&str] = &[
    "type", "mimeType", "data", "encoding", "caption", "filename",
];
const THINKING: &[&str] = &[
    "type",
    "thought",
    "isHidden",
    "sourceField",
    "signature",
    "streamId",
    "streamStatus",
    "encryptedContent",
];
const CODE: &[&str] = &["type", "code", "language"];
const USAGE: &[&str] = &[
    "promptTokens",
    "completionTokens",
    "totalTokens",
    "cachedTokens",
];

pub(super) fn role_of(speaker: &str) -> Option<Role> {
    match speaker {
        "human" => Some(Role::User),
        "ai" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

pub(super) fn speaker_of(role: Role) -> &'static str {
    match role {
        Role::Assistant => "ai",
        Role::Tool => "tool",
        _ => "human",
    }
}

/// An IContent as a message and the key order of its `metadata` (when it had one); `None`
/// when it is not one llxprt replays (speaker and blocks array) or has fields beside those.
pub(super) fn read_icontent(value: &Value) -> Option<(Message, Option<Vec<Value>>)> {
    let o = value.as_object()?;
    let role = role_of(o.get("speaker")?.as_str()?)?;
    let blocks = o.get("blocks")?.as_array()?;
    if o.keys()
        .any(|k| !matches!(k.as_str(), "speaker" | "blocks" | "metadata"))
    {
        return None;
    }
    let mut m = Message::new(role, blocks.iter().map(read_block).collect());
    let mut keys = None;
    if let Some(meta) = o.get("metadata") {
        let Value::Object(meta) = meta.clone() else {
            return None;
        };
        keys = Some(meta.keys().map(|k| Value::String(k.clone())).collect());
        for (k, v) in meta {
            match (k.as_str(), v) {
                ("model", Value::String(s)) if m.model.is_none() => m.model = Some(s),
                ("usage", Value::Object(u)) if m.usage.is_none() => m.usage = Some(read_usage(u)),
                (_, v) => {
                    m.extra.insert(k, v);
                }
            }
        }
    }
    Some((m, keys))
}

/// The IContent of a message with `speaker`, its metadata keys in `keys`' order.
pub(super) fn build_icontent(
    m: &Message,
    speaker: &str,
    keys: Option<&[Value]>,
    lost: &mut Vec<&'static str>,
) -> Value {
    let mut o = Map::new();
    o.insert("speaker".into(), speaker.into());
    let blocks: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|p| build_block(p, lost))
        .collect();
    o.insert("blocks".into(), Value::Array(blocks));
    let mut meta = Map::new();
    if let Some(model) = &m.model {
        meta.insert("model".into(), model.clone().into());
    }
    if let Some(u) = &m.usage {
        meta.insert("usage".into(), Value::Object(build_usage(u)));
    }
    meta.extend(m.extra.clone());
    if keys.is_some() || !meta.is_empty() {
        let order: Vec<&str> = keys
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        o.insert("metadata".into(), Value::Object(ordered(meta, &order)));
    }
    Value::Object(o)
}

fn read_usage(mut u: Map<String, Value>) -> Usage {
    let mut take = |k: &str| take_u64(&mut u, k);
    Usage {
        input: take("promptTokens"),
        output: take("completionTokens"),
        total: take("totalTokens"),
        cached: take("cachedTokens"),
        thoughts: take("reasoningTokens"),
        tool: take("toolTokens"),
        extra: u,
    }
}

fn build_usage(u: &Usage) -> Map<String, Value> {
    let mut o = Map::new();
    let fields = [
        ("promptTokens", u.input),
        ("completionTokens", u.output),
        ("totalTokens", u.total),
        ("cachedTokens", u.cached),
        ("reasoningTokens", u.thoughts),
        ("toolTokens", u.tool),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            o.insert(k.into(), v.into());
        }
    }
    o.extend(u.extra.clone());
    ordered(o, USAGE)
}

fn take_str(o: &mut Map<String, Value>, k: &str) -> Option<String> {
    match o.get(k) {
        Some(Value::String(_)) => o.shift_remove(k).and_then(|v| v.as_str().map(String::from)),
        _ => None,
    }
}

/// One block as a part; a block of an unknown type or shape is kept whole.
pub(super) fn read_block(block: &Value) -> Part {
    let other = || {
        Part::new(Content::Other {
            value: block.clone(),
        })
    };
    let Some(mut o) = block.as_object().cloned() else {
        return other();
    };
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut signature = None;
    let content = match kind.as_str() {
        "text" => match take_str(&mut o, "text") {
            Some(text) => Content::Text { text },
            None => return other(),
        },
        "tool_call" => {
            let (Some(id), Some(name), Some(args)) = (
                take_str(&mut o, "id"),
                take_str(&mut o, "name"),
                o.shift_remove("parameters"),
            ) else {
                return other();
            };
            o.shift_remove("type");
            Content::ToolCall {
                id: Some(id),
                name,
                args,
                extra: o.clone(),
            }
        }
        "tool_response" => {
            let (Some(call_id), Some(name)) =
                (take_str(&mut o, "callId"), take_str(&mut o, "toolName"))
            else {
                return other();
            };
            let output = o.shift_remove("result").unwrap_or(Value::Null);
            let is_error = o.get("error").is_some_and(Value::is_string);
            o.shift_remove("type");
            Content::ToolResult {
                call_id: Some(call_id),
                name: Some(name),
                output,
                is_error,
                status: None,
                display: None,
                extra: o.clone(),
            }
        }
        "media" => {
            let enc = o.get("encoding").and_then(Value::as_str).map(String::from);
            let data = take_str(&mut o, "data");
            let (data, uri) = match enc.as_deref() {
                Some("url") => (None, data),
                _ => (data, None),
            };
            if matches!(enc.as_deref(), Some("url" | "base64")) {
                o.shift_remove("encoding");
            }
            let mime_type = take_str(&mut o, "mimeType");
            o.shift_remove("type");
            Content::Media {
                mime_type,
                data,
                uri,
                extra: o.clone(),
            }
        }
        "thinking" => {
            let Some(text) = take_str(&mut o, "thought") else {
                return other();
            };
            signature = take_str(&mut o, "signature");
            let encrypted = take_str(&mut o, "encryptedContent");
            o.shift_remove("type");
            Content::Thought {
                text,
                subject: None,
                encrypted,
                extra: o.clone(),
            }
        }
        "code" => {
            let Some(code) = take_str(&mut o, "code") else {
                return other();
            };
            let language = take_str(&mut o, "language");
            o.shift_remove("type");
            Content::Code {
                code,
                language,
                extra: o.clone(),
            }
        }
        _ => return other(),
    };
    // `text` blocks keep their other fields (`providerMetadata`) on the part.
    let extra: Extra = if kind == "text" {
        o.shift_remove("type");
        o
    } else {
        Extra::new()
    };
    Part {
        content,
        signature,
        extra,
    }
}

/// A part as a block; `None` (and a loss code) for what llxprt has no block for.
pub(super) fn build_block(p: &Part, lost: &mut Vec<&'static str>) -> Option<Value> {
    let mut o = Map::new();
    let order = match &p.content {
        Content::Text { text } => {
            o.insert("type".into(), "text".into());
            o.insert("text".into(), text.clone().into());
            o.extend(p.extra.clone());
            TEXT
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            o.insert("type".into(), "tool_call".into());
            o.insert("id".into(), id.clone().unwrap_or_default().into());
            o.insert("name".into(), name.clone().into());
            o.insert("parameters".into(), args.clone());
            o.extend(extra.clone());
            TOOL_CALL
        }
        Content::ToolResult {
            call_id,
            name,
            output,
            is_error,
            extra,
            ..
        } => {
            o.insert("type".into(), "tool_response".into());
            o.insert("callId".into(), call_id.clone().unwrap_or_default().into());
            let name = name.clone().unwrap_or_else(|| "unknown_tool".into());
            o.insert("toolName".into(), name.into());
            o.insert("result".into(), output.clone());
            o.extend(extra.clone());
            if *is_error && !o.contains_key("error") {
                let msg = output
                    .get("error")
                    .and_then(|e| e.as_str().map(String::from).or_else(|| Some(e.to_string())))
                    .or_else(|| output.as_str().map(String::from))
                    .unwrap_or_else(|| "error".into());
                o.insert("error".into(), msg.into());
            }
            TOOL_RESPONSE
        }
        Content::Media {
            mime_type,
            data,
            uri,
            extra,
        } => {
            o.insert("type".into(), "media".into());
            o.insert(
                "mimeType".into(),
                mime_type.clone().unwrap_or_default().into(),
            );
            let (d, enc) = match (data, uri) {
                (Some(d), _) => (d.clone(), "base64"),
                (None, Some(u)) => (u.clone(), "url"),
                (None, None) => (String::new(), "base64"),
            };
            o.insert("data".into(), d.into());
            o.insert("encoding".into(), enc.into());
            o.extend(extra.clone());
            MEDIA
        }
        Content::Thought {
            text,
            subject,
            encrypted,
            extra,
        } => {
            if subject.is_some() {
                lost.push("thought-subject");
            }
            o.insert("type".into(), "thinking".into());
            o.insert("thought".into(), text.clone().into());
            if let Some(s) = &p.signature {
                o.insert("signature".into(), s.clone().into());
            }
            if let Some(e) = encrypted {
                o.insert("encryptedContent".into(), e.clone().into());
            }
            o.extend(extra.clone());
            THINKING
        }
        Content::Code {
            code,
            language,
            extra,
        } => {
            o.insert("type".into(), "code".into());
            o.insert("code".into(), code.clone().into());
            if let Some(l) = language {
                o.insert("language".into(), l.clone().into());
            }
            o.extend(extra.clone());
            CODE
        }
        Content::CodeResult { output, .. } => {
            lost.push("code-result");
            o.insert("type".into(), "text".into());
            o.insert("text".into(), output.clone().unwrap_or_default().into());
            TEXT
        }
        Content::Other { value } => {
            if value.get("type").is_some_and(Value::is_string) {
                return Some(value.clone());
            }
            lost.push("other-parts");
            return None;
        }
    };
    if p.signature.is_some() && !matches!(p.content, Content::Thought { .. }) {
        lost.push("signatures");
    }
    Some(Value::Object(ordered(o, order)))
}
