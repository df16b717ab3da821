//! Closing an unanswered call the way Gemini JSONL itself updates a message: the whole
//! MessageRecord appended again under the same id (the reader keeps the first position and
//! the last value), now with an error result for every call that had none.

use serde_json::Value;

use crate::formats::OpenCall;
use crate::formats::gemini_json::close_calls::close_message_calls;

/// The call's record again, its open calls answered. The repair puts it after the last
/// record with that id, so it is the value the reader keeps. Every open call of the record is
/// answered at once: a second re-append for another call of the same record is then the same
/// line, and the last value still answers all of them.
pub(super) fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(mut record) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    if close_message_calls(&mut record, call.message) == 0 {
        return None;
    }
    serde_json::to_vec(&Value::Object(record)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::gemini_jsonl::GeminiJsonl;

    const GEMINI_JSONL: &dyn crate::formats::Format = &GeminiJsonl;

    #[test]
    fn the_message_is_appended_again_with_results() {
        let record = br#"{"id":"m1","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"a","name":"ls","args":{},"status":"executing"},{"id":"b","name":"cat","args":{},"result":null,"status":"cancelled"}]}"#;
        let out = GEMINI_JSONL
            .synthetic_result(&OpenCall {
                call_record: record,
                call_id: "a",
                new_id: "ignored",
                parent_id: "",
                message: "gone",
            })
            .unwrap();
        let keys = GEMINI_JSONL.keys(&out).unwrap();
        assert_eq!(keys.id.as_deref(), Some("m1"), "same id: a re-append");
        assert_eq!(keys.results, ["a", "b"]);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""args":{},"result":[{"functionResponse":{"id":"a","name":"ls","response":{"error":"gone"}}}]"#), "{text}");
    }
}
