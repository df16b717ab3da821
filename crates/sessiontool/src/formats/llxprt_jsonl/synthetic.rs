//! The line that answers a tool call that never got a result, in the shape llxprt itself
//! gives such a call when it restores history (`createSyntheticToolMessage` in
//! `services/history/historyToolPairing.ts`): a `tool` turn with a `tool_response` block,
//! `result: null`, the message as `error`, `isComplete: true`, and metadata
//! `{synthetic: true, reason}`.
//!
//! Not wired into [`crate::formats::Repairer::synthetic_result`]: the line must carry a `seq`
//! greater than the call's line and smaller than the next line's, and llxprt numbers lines
//! 1, 2, 3, ... without gaps, so a line inserted after the call needs every later line
//! renumbered (llxprt marks a file whose `seq` does not increase as corrupt).

use serde_json::{Value, json};

use crate::formats::OpenCall;

/// The line for `call` with sequence number `seq`; `None` when the call's line is not JSON.
pub fn synthetic_line(call: &OpenCall, seq: u64) -> Option<Vec<u8>> {
    let source: Value = serde_json::from_slice(call.call_record).ok()?;
    let ts = source.get("ts").and_then(Value::as_str).unwrap_or("");
    let name = source
        .pointer("/payload/content/blocks")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks.iter().find(|b| {
                b.get("type").and_then(Value::as_str) == Some("tool_call")
                    && b.get("id").and_then(Value::as_str) == Some(call.call_id)
            })
        })
        .and_then(|b| b.get("name").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .unwrap_or("unknown_tool");
    let line = json!({"v": 1, "seq": seq, "ts": ts, "type": "content", "payload": {"content": {
        "speaker": "tool",
        "blocks": [{"type": "tool_response", "callId": call.call_id, "toolName": name,
                    "result": null, "error": call.message, "isComplete": true}],
        "metadata": {"synthetic": true, "reason": "sessiontool_recovered"}}}});
    serde_json::to_vec(&line).ok()
}
