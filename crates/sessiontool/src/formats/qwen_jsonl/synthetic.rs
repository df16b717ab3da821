//! The record a repair adds for a tool call that never got a result: a `tool_result` in the
//! shape Qwen Code writes for a failed call, so the model API accepts the history again.

use serde_json::{Map, Value, json};

use crate::formats::OpenCall;

/// The fields copied from the call's record, in the order Qwen writes them.
const COPIED: &[&str] = &[
    "sessionId",
    "timestamp",
    "type",
    "cwd",
    "version",
    "gitBranch",
];

pub(super) fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    let name = call_name(&source, call.call_id).unwrap_or_default();
    let mut r = Map::new();
    r.insert("uuid".into(), call.new_id.into());
    r.insert("parentUuid".into(), call.parent_id.into());
    for &key in COPIED {
        let value = if key == "type" {
            Some(Value::from("tool_result"))
        } else {
            source.get(key).cloned()
        };
        if let Some(v) = value {
            r.insert(key.into(), v);
        }
    }
    r.insert(
        "message".into(),
        json!({"role": "user", "parts": [{"functionResponse": {
            "id": call.call_id, "name": name, "response": {"error": call.message}}}]}),
    );
    r.insert(
        "toolCallResult".into(),
        json!({"callId": call.call_id, "status": "error", "resultDisplay": call.message,
               "error": {"message": call.message}, "errorType": "sessiontool_recovered"}),
    );
    serde_json::to_vec(&Value::Object(r)).ok()
}

/// The name of the call `id` in a record's `message.parts`.
fn call_name(record: &Map<String, Value>, id: &str) -> Option<String> {
    let parts = record.get("message")?.get("parts")?.as_array()?;
    parts.iter().find_map(|p| {
        let call = p.get("functionCall")?;
        (call.get("id")?.as_str()? == id).then(|| call.get("name")?.as_str().map(String::from))?
    })
}
