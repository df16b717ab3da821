//! A part written straight into the output as [`part_to_json`] makes it and
//! [`Out::value`] writes it, without the `Value` in between: the stream writer writes every
//! message's parts (a session's texts and results are most of its bytes) this way.

use serde_json::Value;

use crate::formats::gemini_content::part_to_json;
use crate::json::out::Out;
use crate::model::{Content, Part};

/// `part` as `part_to_json(part)`. A part with fields beyond the model's (one of the Gemini
/// family's, whose extras land among the part's own keys) goes through [`part_to_json`].
pub(super) fn part(o: &mut Out, part: &Part) {
    if part.extras() > 0 {
        o.value(&part_to_json(part));
        return;
    }
    if let Content::Other { value } = &part.content {
        o.value(value);
        return;
    }
    o.begin_object();
    match &part.content {
        Content::Text { text } => {
            o.key("text").str(text);
        }
        Content::Thought { text, subject, .. } => {
            match subject {
                Some(s) if !s.is_empty() => o.key("text").str(&format!("**{s}** {text}")),
                _ => o.key("text").str(text),
            };
            o.key("thought").bool(true);
        }
        Content::ToolCall { id, name, args, .. } => {
            o.key("functionCall").begin_object();
            if let Some(id) = id {
                o.key("id").str(id);
            }
            o.key("name").str(name).key("args").value(args).end_object();
        }
        Content::ToolResult {
            call_id,
            name,
            output,
            ..
        } => {
            o.key("functionResponse").begin_object();
            if let Some(id) = call_id {
                o.key("id").str(id);
            }
            if let Some(name) = name {
                o.key("name").str(name);
            }
            response(o.key("response"), output);
            o.end_object();
        }
        Content::Media {
            mime_type,
            data,
            uri,
            ..
        } => {
            match uri {
                Some(uri) => {
                    o.key("fileData").begin_object().key("fileUri").str(uri);
                    if let Some(m) = mime_type {
                        o.key("mimeType").str(m);
                    }
                }
                None => {
                    o.key("inlineData").begin_object();
                    if let Some(m) = mime_type {
                        o.key("mimeType").str(m);
                    }
                    o.key("data").str(data.as_deref().unwrap_or_default());
                }
            }
            o.end_object();
        }
        Content::Code { code, language, .. } => {
            o.key("executableCode").begin_object().key("code").str(code);
            if let Some(l) = language {
                o.key("language").str(l);
            }
            o.end_object();
        }
        Content::CodeResult {
            outcome, output, ..
        } => {
            o.key("codeExecutionResult").begin_object();
            if let Some(v) = outcome {
                o.key("outcome").str(v);
            }
            if let Some(v) = output {
                o.key("output").str(v);
            }
            o.end_object();
        }
        Content::Other { .. } => unreachable!("written above"),
    }
    if let Some(sig) = &part.signature {
        o.key("thoughtSignature").str(sig);
    }
    o.end_object();
}

/// `parts` as `parts_to_json(parts)`.
pub(super) fn parts(o: &mut Out, parts: &[Part]) {
    o.begin_array();
    for p in parts {
        part(o, p);
    }
    o.end_array();
}

/// A result's `response` as `response_object` makes it: an object as it is, `{}` for none,
/// anything else as `{output: ...}`.
fn response(o: &mut Out, output: &Value) {
    match output {
        Value::Object(_) => {
            o.value(output);
        }
        Value::Null => {
            o.begin_object().end_object();
        }
        other => {
            o.begin_object().key("output").value(other).end_object();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::gemini_content::parts_from_union;
    use crate::json::out::Style;
    use serde_json::json;

    /// Every kind of part, with and without a signature and extras, in both layouts' styles.
    #[test]
    fn parts_are_written_as_part_to_json_makes_them() {
        let read = parts_from_union(&json!([
            {"text": "hello \"you\"\n"},
            {"text": "pondering", "thought": true, "thoughtSignature": "c2ln"},
            {"functionCall": {"id": "c1", "name": "ls", "args": {"path": ".", "n": [1, 2.5]}}},
            {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "x"},
            {"functionCall": {"name": "ls", "args": {}, "extra": 1}},
            {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a b"}}},
            {"functionResponse": {"response": {}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
            {"inlineData": {}},
            {"fileData": {"fileUri": "gs://b/f", "mimeType": "text/plain"}},
            {"fileData": {"fileUri": "gs://b/f"}},
            {"executableCode": {"code": "print(1)", "language": "PYTHON"}},
            {"executableCode": {"code": "print(1)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
            {"codeExecutionResult": {}},
            {"videoMetadata": {"fps": 2}},
            {"text": "with extra", "partMetadata": {"k": 1}},
            "bare"
        ]));
        let mut more = read.clone();
        more.push(Part::new(Content::Thought {
            text: "t".into(),
            subject: Some("S".into()),
            encrypted: None,
            extra: Default::default(),
        }));
        for output in [json!(null), json!("text"), json!([1, {"a": "b"}])] {
            more.push(Part::new(Content::ToolResult {
                call_id: None,
                name: Some("n".into()),
                output,
                is_error: false,
                status: None,
                display: None,
                extra: Default::default(),
            }));
        }
        for style in [Style::JS, Style::JS_PRETTY] {
            let (mut direct, mut made) = (Vec::new(), Vec::new());
            parts(&mut Out::indented(&mut direct, style, 3), &more);
            Out::indented(&mut made, style, 3)
                .value(&crate::formats::gemini_content::parts_to_json(&more));
            assert_eq!(
                String::from_utf8(direct).unwrap(),
                String::from_utf8(made).unwrap()
            );
        }
    }
}
