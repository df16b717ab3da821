//! Closing tool calls that never got a result. Gemini CLI's resume sends every recorded call
//! as a `functionCall` but a `functionResponse` only for calls with a `result`, and the API
//! rejects a call without its response. The fix writes an error result into the call's own
//! `result`, where the CLI would have put one; nothing else in the document changes.

use serde_json::{Value, json};

use crate::formats::json_document::edit_pretty_js;

/// The document with every unanswered call of a `gemini` message given an error result, and
/// how many were closed. `None` when there is nothing to close, or when the document would
/// not be written back byte for byte apart from the new results (then it is left alone).
pub fn close_open_calls(bytes: &[u8], message: &str) -> Option<(Vec<u8>, usize)> {
    edit_pretty_js(bytes, |doc| {
        let mut closed = 0;
        for m in doc.get_mut("messages")?.as_array_mut()? {
            if let Some(m) = m.as_object_mut() {
                closed += close_message_calls(m, message);
            }
        }
        Some(closed)
    })
}

/// Gives every unanswered call of one `gemini` MessageRecord an error result; returns how
/// many. Shared with Gemini JSONL, whose records are the same MessageRecords.
pub(crate) fn close_message_calls(m: &mut serde_json::Map<String, Value>, message: &str) -> usize {
    if m.get("type").and_then(Value::as_str) != Some("gemini") {
        return 0;
    }
    let Some(calls) = m.get_mut("toolCalls").and_then(Value::as_array_mut) else {
        return 0;
    };
    let mut closed = 0;
    for call in calls {
        let Some(call) = call.as_object_mut() else {
            continue;
        };
        if call.get("result").is_some_and(|r| !r.is_null()) {
            continue;
        }
        let mut response = serde_json::Map::new();
        if let Some(id) = call.get("id") {
            response.insert("id".into(), id.clone());
        }
        response.insert("name".into(), call.get("name").cloned().unwrap_or_default());
        response.insert("response".into(), json!({ "error": message }));
        let result = json!([{ "functionResponse": response }]);
        // Keep the CLI's key order: `result` right after `args`.
        match call.get_mut("result") {
            Some(slot) => *slot = result,
            None => {
                let at = call
                    .keys()
                    .position(|k| k == "args")
                    .map_or(call.len(), |i| i + 1);
                call.shift_insert(at, "result".into(), result);
            }
        }
        closed += 1;
    }
    closed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Input;
    use crate::formats::gemini_json::GeminiJson;
    use crate::model::Content;

    const GEMINI_JSON: &dyn crate::formats::Format = &GeminiJson;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/fixtures/gemini-json/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn null_results_get_an_error_result_and_nothing_else_changes() {
        let bytes = fixture("tools.json");
        let (out, closed) = close_open_calls(&bytes, "recovered").unwrap();
        assert_eq!(closed, 1);
        // Only the lines of the new result differ.
        let before: Vec<&str> = std::str::from_utf8(&bytes).unwrap().lines().collect();
        let after: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        let changed = before.iter().filter(|l| !after.contains(l)).count();
        assert_eq!(changed, 1, "only `\"result\": null` goes");
        let input = Input {
            name: "t",
            path: None,
            bytes: &out,
        };
        let session = GEMINI_JSON.read(&input).unwrap().session;
        let errors = session
            .nodes
            .iter()
            .filter_map(|n| n.message())
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(&p.content, Content::ToolResult { is_error: true, .. }))
            .count();
        assert!(errors >= 1);
        assert!(close_open_calls(&out, "recovered").is_none(), "idempotent");
    }

    #[test]
    fn complete_sessions_are_left_alone() {
        assert!(close_open_calls(&fixture("plain.json"), "x").is_none());
    }
}
