//! The line a repair adds for a tool call that never got a result: a `function_call_output`
//! (or `custom_tool_call_output` for a custom tool call) whose `output` is the message, a plain
//! string as Codex writes a tool's output (`FunctionCallOutputPayload` serializes as a string).

use serde_json::{Map, Value};

use super::items::line;
use crate::formats::OpenCall;

pub(super) fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    let ts = source
        .get("timestamp")
        .and_then(Value::as_str)
        .unwrap_or("");
    let item = match source
        .get("payload")
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
    {
        Some("custom_tool_call") => "custom_tool_call_output",
        _ => "function_call_output",
    };
    let mut p = Map::new();
    p.insert("type".into(), item.into());
    p.insert("call_id".into(), call.call_id.into());
    p.insert("output".into(), call.message.into());
    serde_json::to_vec(&line(ts, "response_item", Value::Object(p))).ok()
}
