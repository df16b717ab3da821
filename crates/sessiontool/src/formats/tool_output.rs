//! A tool result's output where a format holds it as text.

use std::borrow::Cow;

use serde_json::Value;

/// The text of a tool result's output, and whether it says the call failed: a string as it is,
/// Gemini's one-field `{output}` or `{error}` object by its string (the latter a failure),
/// nothing for `null`, anything else as compact JSON.
pub(crate) fn output_text(output: &Value) -> (String, bool) {
    let (text, failed) = output_str(output);
    (text.into_owned(), failed)
}

/// [`output_text`], borrowed where the output holds the text as it is.
pub(crate) fn output_str(output: &Value) -> (Cow<'_, str>, bool) {
    match output {
        Value::String(s) => (Cow::Borrowed(s), false),
        Value::Null => (Cow::Borrowed(""), false),
        Value::Object(o) if o.len() == 1 => match o.iter().next() {
            Some((k, Value::String(s))) if k == "output" => (Cow::Borrowed(s), false),
            Some((k, Value::String(s))) if k == "error" => (Cow::Borrowed(s), true),
            _ => (Cow::Owned(output.to_string()), false),
        },
        _ => (Cow::Owned(output.to_string()), false),
    }
}
