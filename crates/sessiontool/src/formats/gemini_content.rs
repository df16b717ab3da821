//! The Gemini API `Content`/`Part` shapes, shared by the three Gemini-family formats
//! (legacy session JSON, checkpoints, Qwen tree JSONL): one codec, so they agree.
//!
//! A Part object holds one of `text` (with `thought: true` for a thought), `functionCall`,
//! `functionResponse`, `inlineData`, `fileData`, `executableCode`, `codeExecutionResult`, plus
//! wrapper fields such as `thoughtSignature`. Anything else is kept as [`Content::Other`].

use std::collections::HashMap;

use serde_json::{Map, Value};

// Used here, and taken from here by the Qwen and Gemini JSONL readers.
pub(crate) use super::fields::take_string;
use crate::diag::LossReport;
use crate::model::{Content, Extra, Node, Part, Role, Session};

/// What [`part_from_json`] makes of a part, as far as tool calls go, read from its text
/// (`Raw`) without building it: a call (its id when a string, its name), a result (the call
/// id it answers, when a string), or neither. The same rules: a string `text` makes text
/// first; a `functionCall` object with a string `name` makes a call; else a
/// `functionResponse` object makes a result.
pub(crate) enum CallPart {
    Call { id: Option<String>, name: String },
    Result { call_id: Option<String> },
    Neither,
}

pub(crate) fn call_part<'a>(
    part: crate::json::Raw<'a>,
    p: &impl crate::json::Picker<'a>,
) -> CallPart {
    use crate::json::{Kind, Raw};
    if part.kind() != Kind::Object {
        return CallPart::Neither;
    }
    let string = |r: Option<Raw>| r.and_then(Raw::as_str).map(|t| t.value.into_owned());
    let [text, call, response] = p.pick_in(part, ["text", "functionCall", "functionResponse"]);
    if text.is_some_and(|t| t.kind() == Kind::String) {
        return CallPart::Neither;
    }
    if let Some(call) = call.filter(|c| c.kind() == Kind::Object) {
        let [id, name] = p.pick_in(call, ["id", "name"]);
        if let Some(name) = string(name) {
            return CallPart::Call {
                id: string(id),
                name,
            };
        }
    }
    match response.filter(|r| r.kind() == Kind::Object) {
        Some(r) => CallPart::Result {
            call_id: string(p.pick_in(r, ["id"])[0]),
        },
        None => CallPart::Neither,
    }
}

/// Reads one Part object (or a bare string, which the API treats as a text part).
pub fn part_from_json(value: &Value) -> Part {
    let obj = match value {
        Value::String(s) => return Part::text(s.clone()),
        Value::Object(o) => o,
        other => {
            return Part::new(Content::Other {
                value: other.clone(),
            });
        }
    };
    let mut extra = obj.clone();
    let signature = take_string(&mut extra, "thoughtSignature");
    // The part's main value is moved out of `extra` (a clone of the whole part), not cloned
    // a second time: texts and results are most of a session's bytes.
    let content = if let Some(Value::String(_)) = obj.get("text") {
        let text = take_string(&mut extra, "text").unwrap_or_default();
        if obj.get("thought") == Some(&Value::Bool(true)) {
            extra.shift_remove("thought");
            Content::Thought {
                text,
                subject: None,
                encrypted: None,
                extra: Extra::new(),
            }
        } else {
            Content::Text { text }
        }
    } else if let Some(Value::Object(call)) = obj.get("functionCall")
        && let Some(Value::String(name)) = call.get("name")
    {
        let mut inner = take_object(&mut extra, "functionCall");
        let id = take_string(&mut inner, "id");
        inner.shift_remove("name");
        let args = inner
            .shift_remove("args")
            .unwrap_or(Value::Object(Map::new()));
        Content::ToolCall {
            id,
            name: name.clone(),
            args,
            extra: inner,
        }
    } else if let Some(Value::Object(_)) = obj.get("functionResponse") {
        let mut inner = take_object(&mut extra, "functionResponse");
        let call_id = take_string(&mut inner, "id");
        let name = take_string(&mut inner, "name");
        let output = inner.shift_remove("response").unwrap_or(Value::Null);
        let is_error = output.get("error").is_some() && output.get("output").is_none();
        Content::ToolResult {
            call_id,
            name,
            output,
            is_error,
            status: None,
            display: None,
            extra: inner,
        }
    } else if let Some(Value::Object(_)) = obj.get("inlineData") {
        let mut inner = take_object(&mut extra, "inlineData");
        Content::Media {
            mime_type: take_string(&mut inner, "mimeType"),
            data: take_string(&mut inner, "data"),
            uri: None,
            extra: inner,
        }
    } else if let Some(Value::Object(_)) = obj.get("fileData") {
        let mut inner = take_object(&mut extra, "fileData");
        // fileData keeps its own key order: fileUri first is what the SDK writes.
        Content::Media {
            uri: take_string(&mut inner, "fileUri"),
            mime_type: take_string(&mut inner, "mimeType"),
            data: None,
            extra: inner,
        }
    } else if let Some(Value::Object(_)) = obj.get("executableCode") {
        let mut inner = take_object(&mut extra, "executableCode");
        Content::Code {
            code: take_string(&mut inner, "code").unwrap_or_default(),
            language: take_string(&mut inner, "language"),
            extra: inner,
        }
    } else if let Some(Value::Object(_)) = obj.get("codeExecutionResult") {
        let mut inner = take_object(&mut extra, "codeExecutionResult");
        Content::CodeResult {
            outcome: take_string(&mut inner, "outcome"),
            output: take_string(&mut inner, "output"),
            extra: inner,
        }
    } else {
        return Part::new(Content::Other {
            value: value.clone(),
        });
    };
    Part {
        content,
        signature,
        extra,
    }
}

/// The object at `key`, moved out of `map` (empty when it is not an object, which callers have
/// ruled out).
fn take_object(map: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match map.shift_remove(key) {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    }
}

/// Writes one Part object. Thought subjects have no place in a Gemini part: a subject is
/// written as a bold heading before the text, as Gemini CLI itself does when it turns its
/// thought summaries back into history (`**subject** description`).
pub fn part_to_json(part: &Part) -> Value {
    let mut obj = Map::new();
    match &part.content {
        Content::Text { text } => {
            obj.insert("text".into(), text.clone().into());
        }
        Content::Thought { text, subject, .. } => {
            let text = match subject {
                Some(s) if !s.is_empty() => format!("**{s}** {text}"),
                _ => text.clone(),
            };
            obj.insert("text".into(), text.into());
            obj.insert("thought".into(), true.into());
        }
        Content::ToolCall {
            id,
            name,
            args,
            extra,
        } => {
            let mut call = Map::new();
            if let Some(id) = id {
                call.insert("id".into(), id.clone().into());
            }
            call.insert("name".into(), name.clone().into());
            call.insert("args".into(), args.clone());
            call.extend(extra.clone());
            obj.insert("functionCall".into(), call.into());
        }
        Content::ToolResult {
            call_id,
            name,
            output,
            extra,
            ..
        } => {
            let mut resp = Map::new();
            if let Some(id) = call_id {
                resp.insert("id".into(), id.clone().into());
            }
            if let Some(name) = name {
                resp.insert("name".into(), name.clone().into());
            }
            resp.insert("response".into(), response_object(output));
            resp.extend(extra.clone());
            obj.insert("functionResponse".into(), resp.into());
        }
        Content::Media {
            mime_type,
            data,
            uri,
            extra,
        } => {
            let mut inner = Map::new();
            if let Some(uri) = uri {
                inner.insert("fileUri".into(), uri.clone().into());
                if let Some(m) = mime_type {
                    inner.insert("mimeType".into(), m.clone().into());
                }
                inner.extend(extra.clone());
                obj.insert("fileData".into(), inner.into());
            } else {
                if let Some(m) = mime_type {
                    inner.insert("mimeType".into(), m.clone().into());
                }
                inner.insert("data".into(), data.clone().unwrap_or_default().into());
                inner.extend(extra.clone());
                obj.insert("inlineData".into(), inner.into());
            }
        }
        Content::Code {
            code,
            language,
            extra,
        } => {
            let mut inner = Map::new();
            inner.insert("code".into(), code.clone().into());
            if let Some(l) = language {
                inner.insert("language".into(), l.clone().into());
            }
            inner.extend(extra.clone());
            obj.insert("executableCode".into(), inner.into());
        }
        Content::CodeResult {
            outcome,
            output,
            extra,
        } => {
            let mut inner = Map::new();
            if let Some(o) = outcome {
                inner.insert("outcome".into(), o.clone().into());
            }
            if let Some(o) = output {
                inner.insert("output".into(), o.clone().into());
            }
            inner.extend(extra.clone());
            obj.insert("codeExecutionResult".into(), inner.into());
        }
        Content::Other { value } => return value.clone(),
    }
    // A part read from this family keeps its wrapper fields in their original places.
    for (k, v) in &part.extra {
        obj.insert(k.clone(), v.clone());
    }
    if let Some(sig) = &part.signature {
        obj.insert("thoughtSignature".into(), sig.clone().into());
    }
    Value::Object(obj)
}

/// Gemini wants `response` to be an object; results from formats that carry plain text or
/// a list are wrapped as `{output: ...}`, the shape the CLIs write.
fn response_object(output: &Value) -> Value {
    match output {
        Value::Object(_) => output.clone(),
        Value::Null => Value::Object(Map::new()),
        other => {
            let mut m = Map::new();
            m.insert("output".into(), other.clone());
            Value::Object(m)
        }
    }
}

/// Whether a session read from `source` already holds Gemini API parts (the CLI's own records
/// of them included): Gemini CLI's two session formats, its checkpoints and Qwen Code's records.
/// A session from any other format (or of unknown origin) goes through [`to_api_parts`] before
/// a Gemini-family writer writes it.
pub(crate) fn is_gemini_family(source: Option<&str>) -> bool {
    matches!(
        source,
        Some(
            super::gemini_json::NAME
                | super::gemini_jsonl::NAME
                | super::checkpoint::NAME
                | super::qwen_jsonl::NAME
        )
    )
}

/// Makes the parts of a session read from another format what the Gemini API accepts, for a
/// Gemini-family writer (the API rejects unknown fields in a part and a `functionResponse`
/// without `name`):
///
/// - every field only the source format knows (a part's `extra` maps: Claude's `is_error`,
///   llxprt's `isComplete`, times, display names) is removed and counted (`part-fields`);
/// - parts of kinds the API has no part for ([`Content::Other`] that does not read as a Gemini
///   part, as a bare string does) are removed and counted (`parts`);
/// - a tool result gets the `name` of the call it answers (by call id, else by its position
///   among the results answering the message before it); one whose call is not found is
///   counted (`tool-result-names`);
/// - a failed result becomes `response: {error: "..."}` (the message from the source's own
///   error field when it has one, as llxprt's `error`, else the result's text), the shape
///   Gemini CLI writes for a failed call.
pub(crate) fn to_api_parts(session: &mut Session, losses: &mut LossReport) {
    let names = call_names(session.nodes.iter());
    let index: HashMap<&str, usize> = session
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    // The calls of each message's parent, for results that name no call this session has.
    let parent_calls: Vec<Vec<String>> = session
        .nodes
        .iter()
        .map(|n| {
            n.parent
                .as_deref()
                .and_then(|p| index.get(p))
                .map(|&i| calls_of(&session.nodes[i]))
                .unwrap_or_default()
        })
        .collect();
    let mut api = ApiParts::new(names);
    for (node, calls) in session.nodes.iter_mut().zip(&parent_calls) {
        api.node(node, calls);
    }
    api.report(losses);
}

/// The name of each tool call id, from the first call with that id among `nodes` (what a
/// result that names no call gets).
pub(crate) fn call_names<'n>(nodes: impl Iterator<Item = &'n Node>) -> HashMap<String, String> {
    let mut names: HashMap<String, String> = HashMap::new();
    for node in nodes {
        for p in node.message().map_or(&[][..], |m| &m.parts) {
            if let Content::ToolCall {
                id: Some(id), name, ..
            } = &p.content
            {
                names.entry(id.clone()).or_insert_with(|| name.clone());
            }
        }
    }
    names
}

/// The names of a node's tool calls, in order.
pub(crate) fn calls_of(node: &Node) -> Vec<String> {
    node.message()
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| match &p.content {
                    Content::ToolCall { name, .. } => Some(name.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// [`to_api_parts`] one node at a time: the names of the session's calls known up front, the
/// losses counted as the nodes go and reported at the end.
pub(crate) struct ApiParts {
    names: HashMap<String, String>,
    fields: usize,
    other: usize,
    unnamed: usize,
}

impl ApiParts {
    /// `names`: [`call_names`] of the whole session (the branch written).
    pub(crate) fn new(names: HashMap<String, String>) -> Self {
        ApiParts {
            names,
            fields: 0,
            other: 0,
            unnamed: 0,
        }
    }

    /// Whether the session has a call with the id `call_id` (a result that names it gets its
    /// name, not one of its parent's calls).
    pub(crate) fn has_call(&self, call_id: &str) -> bool {
        self.names.contains_key(call_id)
    }

    /// The same names, counting nothing yet: for parts made again that were counted already.
    pub(crate) fn uncounted(&self) -> ApiParts {
        ApiParts::new(self.names.clone())
    }

    /// Makes `node`'s parts API parts; `parent_calls`: [`calls_of`] the node's parent, when the
    /// session has it.
    pub(crate) fn node(&mut self, node: &mut Node, parent_calls: &[String]) {
        let Some(m) = node.message_mut() else {
            return;
        };
        // A block no reader understood may still read as a part (a bare string is text);
        // what does not has no Gemini shape.
        let before = m.parts.len();
        m.parts = std::mem::take(&mut m.parts)
            .into_iter()
            .map(|p| match &p.content {
                Content::Other { value } => part_from_json(value),
                _ => p,
            })
            .filter(|p| !matches!(p.content, Content::Other { .. }))
            .collect();
        self.other += before - m.parts.len();
        let mut k = 0;
        for p in &mut m.parts {
            let carried = match &mut p.content {
                Content::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                    extra,
                    ..
                } => {
                    // llxprt keeps the message of a failed call beside its result.
                    let error_text = match extra.get("error") {
                        Some(Value::String(e)) => Some(e.clone()),
                        _ => None,
                    };
                    // Claude's `is_error` flag is carried by the shape of the response.
                    let mut carried = usize::from(error_text.is_some());
                    carried += usize::from(extra.get("is_error").is_some_and(Value::is_boolean));
                    if *is_error || error_text.is_some() {
                        *output = error_response(output, error_text);
                        *is_error = true;
                    }
                    if name.is_none() {
                        *name = call_id
                            .as_ref()
                            .and_then(|id| self.names.get(id).cloned())
                            .or_else(|| parent_calls.get(k).cloned());
                        self.unnamed += usize::from(name.is_none());
                    }
                    k += 1;
                    carried
                }
                _ => 0,
            };
            self.fields += p.strip_extras() - carried;
        }
    }

    /// The losses counted, in the order [`to_api_parts`] reports them.
    pub(crate) fn report(&self, losses: &mut LossReport) {
        losses.add(
            "part-fields",
            self.fields,
            "fields the source format keeps on parts (times, display names, descriptions, flags) that are not part of a Gemini API part",
        );
        losses.add(
            "parts",
            self.other,
            "parts of kinds the Gemini API has no part for (the source format's own blocks)",
        );
        losses.add(
            "tool-result-names",
            self.unnamed,
            "tool results whose call is not in the session: written without the `name` the Gemini API requires",
        );
    }
}

/// A failed tool result as the `response` Gemini CLI writes for one, `{error: "..."}`. What
/// the result held besides the message stays beside it as `output`.
fn error_response(output: &Value, error_text: Option<String>) -> Value {
    if let Value::Object(o) = output
        && o.contains_key("error")
    {
        return output.clone();
    }
    let mut r = Map::new();
    match error_text {
        Some(e) => {
            match output {
                Value::Null => {}
                Value::Object(o) if o.is_empty() => {}
                Value::Object(o) => r.extend(o.clone()),
                other => {
                    r.insert("output".into(), other.clone());
                }
            }
            r.insert("error".into(), e.into());
        }
        None => {
            r.insert("error".into(), result_text(output));
        }
    }
    Value::Object(r)
}

/// The text of a tool result as other formats hold it: a string, an `{output}` object, or a
/// list of text blocks (Anthropic's, pi's); anything else as it is.
fn result_text(output: &Value) -> Value {
    match output {
        Value::Object(o) if o.len() == 1 && o.contains_key("output") => o["output"].clone(),
        Value::Array(items) if !items.is_empty() => {
            let texts: Option<Vec<&str>> = items
                .iter()
                .map(|b| match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect();
            match texts {
                Some(t) => Value::String(t.join("\n")),
                None => output.clone(),
            }
        }
        Value::Null => Value::String("the tool reported an error".into()),
        other => other.clone(),
    }
}

/// A `PartListUnion` (string, one Part, or an array of Parts and strings) as parts.
pub fn parts_from_union(value: &Value) -> Vec<Part> {
    match value {
        Value::Array(items) => items.iter().map(part_from_json).collect(),
        Value::Null => Vec::new(),
        other => vec![part_from_json(other)],
    }
}

pub fn parts_to_json(parts: &[Part]) -> Value {
    Value::Array(parts.iter().map(part_to_json).collect())
}

/// `{role, parts}` for a message role; notices have no Gemini role.
pub fn gemini_role(role: Role, parts: &[Part]) -> Option<&'static str> {
    match role {
        Role::Assistant => Some("model"),
        Role::User | Role::Tool | Role::System => Some("user"),
        Role::Info | Role::Warning | Role::Error => {
            let _ = parts;
            None
        }
    }
}

/// The model role of a Gemini `Content`: `model` is the assistant; a `user` turn that holds
/// only tool responses is a tool turn.
pub fn role_from_gemini(role: Option<&str>, parts: &[Part]) -> Role {
    match role {
        Some("model") => Role::Assistant,
        Some("system") => Role::System,
        _ if !parts.is_empty()
            && parts
                .iter()
                .all(|p| matches!(p.content, Content::ToolResult { .. })) =>
        {
            Role::Tool
        }
        _ => Role::User,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_part_kind_round_trips() {
        let parts = json!([
            {"text": "hello"},
            {"text": "pondering", "thought": true, "thoughtSignature": "c2ln"},
            {"functionCall": {"id": "c1", "name": "ls", "args": {"path": "."}}, "thoughtSignature": "x"},
            {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a b"}}},
            {"functionResponse": {"id": "c2", "name": "rm", "response": {"error": "denied"}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
            {"fileData": {"fileUri": "gs://b/f", "mimeType": "text/plain"}},
            {"executableCode": {"code": "print(1)", "language": "PYTHON"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
            {"videoMetadata": {"fps": 2}},
            {"text": "with extra", "partMetadata": {"k": 1}}
        ]);
        let read = parts_from_union(&parts);
        assert_eq!(
            read.iter().map(Part::kind).collect::<Vec<_>>(),
            [
                "text",
                "thought",
                "tool_call",
                "tool_result",
                "tool_result",
                "media",
                "media",
                "code",
                "code_result",
                "other",
                "text"
            ]
        );
        assert!(matches!(
            read[4].content,
            Content::ToolResult { is_error: true, .. }
        ));
        assert_eq!(read[1].signature.as_deref(), Some("c2ln"));
        assert_eq!(parts_to_json(&read), parts);
    }

    #[test]
    fn union_forms() {
        assert_eq!(parts_from_union(&json!("hi")).len(), 1);
        assert_eq!(parts_from_union(&json!({"text": "hi"})).len(), 1);
        assert_eq!(parts_from_union(&json!(["a", {"text": "b"}])).len(), 2);
        assert!(parts_from_union(&json!(null)).is_empty());
    }
}
