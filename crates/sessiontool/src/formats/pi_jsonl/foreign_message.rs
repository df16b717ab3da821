//! Messages from other formats as pi `message` entries (see `foreign`).

use serde_json::{Map, Value, json};

use super::super::ordered;
use super::ASSISTANT_ORDER;
use super::blocks::block_from_part;
use super::foreign::{Out, TARGET};
use crate::diag::LossReport;
use crate::formats::normalise::Calls;
use crate::model::{Content, Message, Node, Part, Role, Usage};

/// The provider and api pi would record for a model, guessed from its name.
pub(super) fn api_of(model: &str) -> (&'static str, &'static str) {
    let m = model.to_ascii_lowercase();
    if m.contains("claude") {
        ("anthropic", "anthropic-messages")
    } else if m.contains("gemini") {
        ("google", "google-generative-ai")
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
    {
        ("openai", "openai-responses")
    } else {
        ("openai", "openai-completions")
    }
}

fn millis(ts: Option<&str>) -> Value {
    ts.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(Value::from(0), |t| t.as_millisecond().into())
}

pub(super) fn message_entries(
    node: &Node,
    m: &Message,
    calls: &mut Calls,
    losses: &mut LossReport,
    out: &mut Out,
) {
    match m.role {
        Role::Info | Role::Warning | Role::Error => {
            losses.add(
                "notices",
                1,
                "notices the tool showed its user (pi has no entry for them)",
            );
            return;
        }
        Role::System => {
            losses.add(
                "system-messages",
                1,
                "system messages (pi has no entry for them)",
            );
            return;
        }
        _ => {}
    }
    TARGET.unplaced.message(node, m, losses);
    let time = millis(node.timestamp.as_deref());
    let mut blocks = Vec::new();
    let mut results = Vec::new();
    for part in &m.parts {
        TARGET.unplaced.part(part, losses);
        let mut part = part.clone();
        part.strip_extras();
        match &mut part.content {
            Content::ToolResult { display, .. } => {
                if display.is_some() {
                    losses.add(
                        "tool-display",
                        1,
                        "what the source tool showed its user for a result (pi keeps only the result)",
                    );
                }
                results.push(part);
                continue;
            }
            Content::ToolCall { id, name, .. } if m.role == Role::Assistant => {
                // pi derives an id from the node and the block's place, not the session.
                let place = ("", node.id.as_str(), blocks.len());
                *id = Some(calls.call(id.as_deref(), name, place));
            }
            Content::Thought {
                encrypted: Some(_), ..
            } => {
                losses.add(
                    "encrypted-thoughts",
                    1,
                    "encrypted reasoning (pi thinking blocks hold text and a signature)",
                );
            }
            _ => {}
        }
        let allowed = matches!(
            (&part.content, m.role),
            (Content::Text { .. }, _)
                | (
                    Content::Thought { .. } | Content::ToolCall { .. },
                    Role::Assistant
                )
                | (
                    Content::Media { data: Some(_), .. },
                    Role::User | Role::Tool
                )
        );
        match block_from_part(&part, false).filter(|_| allowed) {
            Some(b) => blocks.push(b),
            None => losses.add(
                "parts",
                1,
                format!(
                    "parts pi cannot hold in this message (first: {} in a {} message)",
                    part.kind(),
                    m.role.as_str()
                ),
            ),
        }
    }
    let answered = !results.is_empty();
    for r in results {
        out.push(("message", tool_result(&r, calls, &time), None));
    }
    if blocks.is_empty() && m.role != Role::Assistant {
        if !answered {
            losses.add(
                "messages",
                1,
                "user messages with nothing pi can hold (empty, or only parts listed here), left out",
            );
        }
        return;
    }
    let mut msg = Map::new();
    if m.role == Role::Assistant {
        let model = m.model.clone().unwrap_or_else(|| "unknown".into());
        let (provider, api) = api_of(&model);
        let has_calls = blocks.iter().any(|b| b["type"] == "toolCall");
        msg.insert("role".into(), "assistant".into());
        msg.insert("content".into(), Value::Array(blocks));
        msg.insert("api".into(), api.into());
        msg.insert("provider".into(), provider.into());
        msg.insert("model".into(), model.into());
        msg.insert("usage".into(), usage(m.usage.as_ref(), losses));
        msg.insert(
            "stopReason".into(),
            if has_calls { "toolUse" } else { "stop" }.into(),
        );
        msg.insert("timestamp".into(), time);
        msg = ordered(msg, &ASSISTANT_ORDER);
    } else {
        msg.insert("role".into(), "user".into());
        msg.insert("content".into(), Value::Array(blocks));
        msg.insert("timestamp".into(), time);
    }
    let mut f = Map::new();
    f.insert("message".into(), Value::Object(msg));
    out.push(("message", f, None));
}

/// pi's full `usage`: every count (zeros where unknown) and a zero `cost`.
fn usage(u: Option<&Usage>, losses: &mut LossReport) -> Value {
    let d = Usage::default();
    let u = u.unwrap_or(&d);
    if u.tool.is_some() {
        losses.add(
            "usage-fields",
            1,
            "tool-use prompt token counts (pi's usage has no field for them)",
        );
    }
    // pi counts thoughts in `output` and the cache reads apart from `input`.
    let cached = u.cached.unwrap_or(0);
    let input = u.input.unwrap_or(0).saturating_sub(cached);
    let output = u
        .output
        .unwrap_or(0)
        .saturating_add(u.thoughts.unwrap_or(0));
    let total = u
        .total
        .unwrap_or(input.saturating_add(output).saturating_add(cached));
    json!({"input": input, "output": output, "cacheRead": cached, "cacheWrite": 0,
           "totalTokens": total,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

fn tool_result(part: &Part, calls: &mut Calls, time: &Value) -> Map<String, Value> {
    let Content::ToolResult {
        call_id,
        name,
        output,
        is_error,
        ..
    } = &part.content
    else {
        unreachable!("only results are passed")
    };
    // A result without an id answers the oldest open call of its name (or the oldest open call).
    let answer = calls.answer(call_id.as_deref(), name.as_deref());
    let id = answer.id;
    let tool = name
        .clone()
        .or(answer.name)
        .unwrap_or_else(|| "unknown".into());
    let (text, error) = output_text(output);
    let mut content = vec![json!({"type": "text", "text": text})];
    if let Content::ToolResult { .. } = &part.content
        && let Some(Value::Array(extra)) = output.get("parts")
    {
        content.extend(extra.iter().filter_map(|p| p.get("inlineData")).map(|d| {
            json!({"type": "image", "data": d.get("data").cloned().unwrap_or_default(),
                   "mimeType": d.get("mimeType").cloned().unwrap_or_default()})
        }));
    }
    let mut msg = Map::new();
    msg.insert("role".into(), "toolResult".into());
    msg.insert("toolCallId".into(), id.into());
    msg.insert("toolName".into(), tool.into());
    msg.insert("content".into(), Value::Array(content));
    msg.insert("isError".into(), (*is_error || error).into());
    msg.insert("timestamp".into(), time.clone());
    let mut f = Map::new();
    f.insert("message".into(), Value::Object(msg));
    f
}

/// A result's text and whether it says it is an error: a string as is, Gemini's `{output}` or
/// `{error}`, text blocks joined, anything else as JSON.
fn output_text(output: &Value) -> (String, bool) {
    match output {
        Value::String(s) => (s.clone(), false),
        Value::Object(o) => match (o.get("output"), o.get("error")) {
            (Some(Value::String(s)), _) => (s.clone(), false),
            (_, Some(Value::String(s))) => (s.clone(), true),
            (_, Some(e)) => (e.to_string(), true),
            (Some(v), None) => (v.to_string(), false),
            (None, None) => (output.to_string(), false),
        },
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("text").is_some_and(Value::is_string)) =>
        {
            let texts: Vec<&str> = items.iter().filter_map(|i| i["text"].as_str()).collect();
            (texts.join("\n"), false)
        }
        Value::Null => (String::new(), false),
        other => (other.to_string(), false),
    }
}
