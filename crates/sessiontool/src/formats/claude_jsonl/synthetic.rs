//! The entry a repair adds for a tool call that never got a result: a `user` entry with an
//! error `tool_result` block, chained after the call, so the API accepts the history again.

use serde_json::{Map, Value, json};

use crate::formats::OpenCall;

/// Fields copied from the call's entry (key order as Claude Code writes a user entry).
const BEFORE: [&str; 6] = [
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
];

pub(super) fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    let mut e = Map::new();
    e.insert("parentUuid".into(), call.parent_id.into());
    for key in BEFORE {
        if let Some(v) = source.get(key) {
            e.insert(key.into(), v.clone());
        }
    }
    e.insert("type".into(), "user".into());
    e.insert(
        "message".into(),
        json!({"role": "user", "content": [{"tool_use_id": call.call_id, "type": "tool_result",
               "content": call.message, "is_error": true}]}),
    );
    e.insert("uuid".into(), call.new_id.into());
    if let Some(ts) = source.get("timestamp") {
        e.insert("timestamp".into(), ts.clone());
    }
    e.insert(
        "toolUseResult".into(),
        format!("Error: {}", call.message).into(),
    );
    serde_json::to_vec(&Value::Object(e)).ok()
}
