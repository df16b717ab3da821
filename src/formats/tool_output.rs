//! A tool result's output where a format holds it as text.

use serde_json::Value;

/// The text of a tool result's output, and whether it says the call failed: a string as it is,
/// Gemini's one-field `{output}` or `{error}` object by its string (the latter a failure),
/// nothing for `null`, anything else as compact JSON.
pub(crate) fn output_text(output: &Value) -> (String, bool) {
    match output {
        Value::String(s) => (s.clone(), false),
        Value::Null => (String::new(), false),
        Value::Object(o) if o.len() == 1 => match o.iter().next() {
            Some((k, Value::String(s))) if k == "output" => (s.clone(), false),
            Some((k, Value::String(s))) if k == "error" => (s.clone(), true),
            _ => (output.to_string(), false),
        },
        _ => (output.to_string(), false),
    }
}
