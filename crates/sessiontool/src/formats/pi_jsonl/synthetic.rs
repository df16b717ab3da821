//! The entry a repair adds for a tool call that never got a result: a `toolResult` message
//! with `isError: true`, as pi writes for a failed tool, so the model API accepts the history.
//!
//! Versions 2 and 3: the entry has `id` and `parentId` (the repair's `new_id`/`parent_id`).
//! Version 1 (the call's entry has no `id`): the entry has neither, as every version 1 entry;
//! version 1 chains entries in file order, and the repair inserts the result right after the
//! call's entry (or the result before it), which is where it belongs.
//!
//! The entry is marked `"sessiontool":"recovered"` at entry level: pi keeps fields it does not
//! know and never reads this one, whereas `message.details` is read by the tool's renderer.

use serde_json::{Map, Value, json};

use crate::formats::{OpenCall, pi_style};

pub(super) fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    let message = source.get("message").and_then(Value::as_object);
    let name = pi_style::call_name(message, "toolCall", call.call_id);
    let entry_time = source.get("timestamp").cloned();
    let message_time = message
        .and_then(|m| m.get("timestamp"))
        .filter(|t| t.is_number())
        .cloned()
        .or_else(|| {
            let ts = entry_time
                .as_ref()?
                .as_str()?
                .parse::<jiff::Timestamp>()
                .ok()?;
            Some(ts.as_millisecond().into())
        })
        .unwrap_or(Value::from(0));
    let mut e = Map::new();
    e.insert("type".into(), "message".into());
    if source.get("id").is_some_and(Value::is_string) {
        e.insert("id".into(), call.new_id.into());
        e.insert("parentId".into(), call.parent_id.into());
    }
    if let Some(ts) = entry_time {
        e.insert("timestamp".into(), ts);
    }
    e.insert(
        "message".into(),
        json!({
            "role": "toolResult",
            "toolCallId": call.call_id,
            "toolName": name,
            "content": [{"type": "text", "text": call.message}],
            "isError": true,
            "timestamp": message_time,
        }),
    );
    e.insert("sessiontool".into(), "recovered".into());
    Some(super::js::to_vec(&Value::Object(e)))
}
