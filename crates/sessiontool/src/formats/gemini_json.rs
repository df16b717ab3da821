//! Gemini CLI legacy session JSON (`gemini-json`): one pretty-printed ConversationRecord per
//! file, written by Gemini CLI v0.4 to v0.38 and Qwen Code up to v0.3. See FORMATS.md 1.
//!
//! Mapping to the model: each MessageRecord is a node chained to the one before it. A `gemini`
//! message becomes an assistant message (thought summaries, then content, then tool calls);
//! the results stored inside its `toolCalls[].result` become a tool message right after it,
//! so that every format sees calls and results the same way. The writer folds them back.

pub mod close_calls;
mod direct;
pub(crate) mod engine;
pub(crate) mod origin;
mod part_out;
pub mod salvage;
pub(crate) mod stream;
mod target;
pub(crate) mod two_pass;

use std::path::Path;

use serde_json::{Map, Value};

use super::fields::{take_string, take_u64};
use super::gemini_content::{is_gemini_family, parts_from_union, parts_to_json, to_api_parts};
use super::json_document::{self, kept_fields, kept_message, ordered_like, session_times};
use super::judge::file_name;
use super::normalise::{Facts, head};
use super::one_branch::{ONE_BRANCH, one_branch};
use super::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
    document_tail, ordered, tail_as_read, to_pretty_js,
};
use crate::diag::{Diagnostic, Location, LossReport, Severity};
use crate::formats::{ProjectField, Reader, Repairer, Rules, Writer};
use crate::ids::sha256_hex;
use crate::model::{
    Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role, Session, Usage,
};
use target::TARGET;

pub struct GeminiJson;

pub const NAME: &str = "gemini-json";

/// Key order of the CLI's ConversationRecord, MessageRecord and ToolCallRecord. Keys the CLI
/// adds later (`kind`, `summary`, `directories`) land in the order they were added, so the
/// writer follows the order the reader saw (the origins, `origin`).
const SESSION_ORDER: &[&str] = &[
    "sessionId",
    "projectHash",
    "startTime",
    "lastUpdated",
    "messages",
    "kind",
    "summary",
    "directories",
];
const MESSAGE_ORDER: &[&str] = &[
    "id",
    "timestamp",
    "type",
    "content",
    "displayContent",
    "thoughts",
    "tokens",
    "model",
    "toolCalls",
];
/// The rest of a ToolCallRecord (displayName, description, ...) keeps the order it was read in.
const TOOL_CALL_ORDER: &[&str] = &[
    "id",
    "name",
    "args",
    "result",
    "status",
    "timestamp",
    "resultDisplay",
];

/// Kind of the event that keeps a message of a type this reader does not know.
const UNKNOWN_MESSAGE: &str = "gemini-json.message";

impl Format for GeminiJson {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Gemini CLI legacy session JSON (v0.4-v0.38; Qwen Code up to v0.3)"
    }

    fn tool(&self) -> &'static str {
        "gemini"
    }

    fn rules(&self) -> &'static Rules {
        &RULES
    }

    fn reader(&self) -> Option<&dyn Reader> {
        Some(self)
    }

    fn writer(&self) -> Option<&dyn Writer> {
        Some(self)
    }

    fn repairer(&self) -> Option<&dyn Repairer> {
        Some(self)
    }

    fn two_pass(&self) -> Option<crate::engine::TwoPass> {
        Some(crate::engine::TwoPass(&GeminiJson))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&GeminiJson))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    project_fields: &[
        ProjectField::hash(&["projectHash"]),
        ProjectField::list(&["directories"]),
    ],
    ..Rules::DOCUMENT
};

impl Reader for GeminiJson {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        // The CLI names these files `.json`; a `.jsonl` name, or one object per line, is JSONL.
        let Some(head) = json_document::document_head(path, head) else {
            return 0;
        };
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        let has = |k: &str| text.contains(&format!("\"{k}\""));
        if has("sessionId") && has("messages") {
            90
        } else if has("sessionId") && has("projectHash") {
            70
        } else if file_name(path).is_some_and(|n| n.starts_with("session-") && n.ends_with(".json"))
        {
            40
        } else {
            0
        }
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        let json_document::Document {
            root,
            keys,
            messages,
            lossy,
        } = json_document::parse(input, "Gemini", false)?;
        let mut diagnostics: Vec<_> = lossy.into_iter().collect();
        let meta = meta_of(root, &keys, input.bytes);
        let mut nodes: Vec<Node> = Vec::with_capacity(messages.len() * 2);
        let mut seen = std::collections::HashSet::new();
        // Each record's origin: its text as written, else (a document the text cannot be
        // looked at in) the record as parsed.
        let texts = origin::message_texts(input.bytes).filter(|t| t.len() == messages.len());
        for (i, m) in messages.into_iter().enumerate() {
            let parent = nodes.last().map(|n| n.id.clone());
            let origin = match &texts {
                Some(texts) => Origin::new(NAME, texts[i].as_bytes()),
                None => origin::message_origin(&m),
            };
            let new = message_nodes(m, i, parent, &mut seen, &mut diagnostics, input.name);
            nodes.extend(origin::with_origin(new, Some(origin)));
        }
        Ok(ReadOutcome {
            session: Session { meta, nodes },
            diagnostics,
        })
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        #[derive(serde::Deserialize)]
        struct K<'a> {
            #[serde(borrow)]
            id: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, rename = "type")]
            kind: Option<std::borrow::Cow<'a, str>>,
        }
        let k: K = serde_json::from_slice(record).ok()?;
        Some(Keys {
            id: k.id,
            kind: k.kind,
            ..Keys::default()
        })
    }

    fn salvage(&self, bytes: &[u8]) -> Option<salvage::Salvage> {
        salvage::salvage(bytes)
    }
}

impl Writer for GeminiJson {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let mut losses = LossReport::default();
        let mut session = one_branch(session, options, ONE_BRANCH, &mut losses)?;
        let now = options.now.clone().unwrap_or_default();
        // Gemini JSONL holds the very same MessageRecords: its extras are this format's too.
        let own = matches!(
            session.meta.source_format.as_deref(),
            Some(NAME | super::gemini_jsonl::NAME)
        );
        // Gemini CLI sends `content` and the results as they are: they must be API parts.
        if !is_gemini_family(session.meta.source_format.as_deref()) {
            to_api_parts(&mut session, &mut losses);
        }
        let mut messages: Vec<Value> = Vec::new();
        let mut writer = Messages::new(own, session.meta.start_time.clone(), now.clone());
        for node in &session.nodes {
            writer.push(node, &mut messages, &mut losses);
        }
        let (start, last) = session_times(&session.meta, &messages, now);
        let root = root(
            &session.meta,
            options,
            own,
            [start, last],
            Value::Array(messages),
            &mut losses,
        );
        // Only a file of this format keeps its tail; conversions write the CLI's layout.
        let mut bytes = to_pretty_js(&root, false);
        bytes.extend_from_slice(tail_as_read(&session.meta, NAME).unwrap_or_default());
        Ok(Written { bytes, losses })
    }

    /// Any other `.json`.
    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(n.ends_with(".json")) * 10
    }
}

impl Repairer for GeminiJson {
    fn close_calls_in_document(&self, bytes: &[u8], message: &str) -> Option<(Vec<u8>, usize)> {
        close_calls::close_open_calls(bytes, message)
    }
}

/// The `messages` of a session, one node at a time: each node's message is pushed, or its
/// results folded into the message before it.
pub(crate) struct Messages {
    /// The session is this format's (its fields are kept, its calls keep no status they lack).
    own: bool,
    /// The time of a message without one: the last time seen (the start time before any).
    last_ts: Option<String>,
    now: String,
}

impl Messages {
    pub(crate) fn new(own: bool, start_time: Option<String>, now: String) -> Self {
        Messages {
            own,
            last_ts: start_time,
            now,
        }
    }

    /// `node` into `messages`: a new message at the end, or results folded into the last one
    /// (only the last one is looked at); what has no place, counted in `losses`.
    pub(crate) fn push(&mut self, node: &Node, messages: &mut Vec<Value>, losses: &mut LossReport) {
        let own = self.own;
        if node.timestamp.is_some() {
            self.last_ts.clone_from(&node.timestamp);
        }
        let ts = || {
            node.timestamp
                .clone()
                .or(self.last_ts.clone())
                .unwrap_or(self.now.clone())
        };
        match &node.body {
            Body::Event(Event::Custom { kind, data }) if kind == UNKNOWN_MESSAGE => {
                messages.push(data.clone());
            }
            Body::Event(e) => losses.add(
                "events",
                1,
                format!(
                    "session events ({}) have no place in a Gemini session",
                    e.kind()
                ),
            ),
            Body::Message(m) if m.role == Role::Tool => {
                if !fold_results(messages, node, own) {
                    let w = write_message(node, m, "user", ts(), own, losses);
                    messages.push(Value::Object(w));
                }
            }
            Body::Message(m) => {
                let kind = message_type(m.role, losses);
                let w = write_message(node, m, kind, ts(), own, losses);
                messages.push(Value::Object(w));
            }
        }
    }

    /// The time a message of `node` is written with (its own, else the last one seen, else
    /// `now`), noting it as [`Messages::push`] does.
    pub(crate) fn time_of<'a>(&'a mut self, node: &'a Node) -> &'a str {
        if node.timestamp.is_some() {
            self.last_ts.clone_from(&node.timestamp);
        }
        node.timestamp
            .as_deref()
            .or(self.last_ts.as_deref())
            .unwrap_or(&self.now)
    }
}

/// The MessageRecord `type` of a message of `role` (a system message, which has none, said).
fn message_type(role: Role, losses: &mut LossReport) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "gemini",
        Role::Info => "info",
        Role::Warning => "warning",
        Role::Error => "error",
        Role::Tool => "user",
        Role::System => {
            losses.add(
                "system-messages",
                1,
                "system messages written as `info` notices (Gemini sessions have no system role)",
            );
            "info"
        }
    }
}

/// The losses of what a message of another format's has no place for, in the words each writer
/// of its messages says them.
fn lose_signature(losses: &mut LossReport) {
    losses.add(
        "thought-signatures",
        1,
        "thought signatures (legacy sessions keep thought summaries only)",
    );
}

/// See [`lose_signature`].
fn lose_call_fields(count: usize, losses: &mut LossReport) {
    losses.add(
        "part-fields",
        count,
        "fields the source format keeps on tool calls",
    );
}

/// See [`lose_signature`].
fn lose_usage_fields(count: usize, losses: &mut LossReport) {
    losses.add(
        "usage-fields",
        count,
        "token counts the source format names that Gemini's `tokens` has no field for",
    );
}

/// The ConversationRecord around `messages`: `times` are its start and last update; the
/// session fields with no place in it (a session of another format's), counted in `losses`.
pub(crate) fn root(
    meta: &Meta,
    options: &WriteOptions,
    own: bool,
    times: [String; 2],
    messages: Value,
    losses: &mut LossReport,
) -> Value {
    let mut root = if own { meta.extra.clone() } else { Map::new() };
    if !own {
        TARGET.unplaced.session_fields(meta, losses);
    }
    let [start, last] = times;
    // Any id is taken and none is refused (`MissingId::Empty`): this cannot fail.
    let id = head::session_id(&TARGET, meta, Facts::default(), losses).unwrap_or_default();
    root.insert("sessionId".into(), id.into());
    let hash = meta
        .project_hash
        .clone()
        .or_else(|| {
            head::cwd_of(&TARGET, meta, options)
                .as_deref()
                .map(sha256_hex)
        })
        .unwrap_or_default();
    root.insert("projectHash".into(), hash.into());
    root.insert("startTime".into(), start.into());
    root.insert("lastUpdated".into(), last.into());
    root.insert("messages".into(), messages);
    if let Some(s) = &meta.summary {
        root.insert("summary".into(), s.clone().into());
    }
    if let Some(d) = &meta.directories {
        root.insert("directories".into(), d.clone().into());
    }
    if meta.source_format.as_deref() != Some(NAME) {
        TARGET.unplaced.title(meta, losses);
    }
    let keys = origin::document_keys(meta);
    Value::Object(ordered_like(root, keys.as_deref(), SESSION_ORDER))
}

fn take_string_list(map: &mut Map<String, Value>, key: &str) -> Option<Vec<String>> {
    let Some(Value::Array(items)) = map.get(key) else {
        return None;
    };
    let list: Option<Vec<String>> = items.iter().map(|v| v.as_str().map(String::from)).collect();
    if list.is_some() {
        map.shift_remove(key);
    }
    list
}

/// The session's metadata from the document's fields but `messages` (`root`), its keys in
/// file order and the file's bytes.
pub(crate) fn meta_of(root: Map<String, Value>, keys: &[String], bytes: &[u8]) -> Meta {
    Meta {
        origin: Some(origin::document_origin(&root, keys)),
        tail: document_tail(NAME, bytes),
        ..record_meta(root, NAME)
    }
}

/// The session's metadata from a ConversationRecord's fields but `messages` (those it does not
/// map stay in `extra`): the legacy document's and the JSONL recording's (`source_format`)
/// alike.
pub(crate) fn record_meta(mut fields: Map<String, Value>, source_format: &str) -> Meta {
    Meta {
        id: take_string(&mut fields, "sessionId"),
        project_hash: take_string(&mut fields, "projectHash"),
        start_time: take_string(&mut fields, "startTime"),
        last_updated: take_string(&mut fields, "lastUpdated"),
        summary: take_string(&mut fields, "summary"),
        directories: take_string_list(&mut fields, "directories"),
        source_format: Some(source_format.into()),
        extra: fields,
        ..Meta::default()
    }
}

/// The nodes of message `index` (`value`), the first under `parent` (the node before it): an
/// id that an earlier node has (`seen`, every id so far) is read as `<id>#<index>`, said.
pub(crate) fn message_nodes(
    value: Value,
    index: usize,
    parent: Option<String>,
    seen: &mut std::collections::HashSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
    file: &str,
) -> Vec<Node> {
    let mut new = message_to_nodes(value, index, parent, diagnostics, file);
    for n in &mut new {
        if !seen.insert(n.id.clone()) {
            let renamed = format!("{}#{}", n.id, index);
            diagnostics.push(Diagnostic {
                code: "duplicate-id",
                severity: Severity::Warning,
                location: Location::file(file),
                message: format!(
                    "message {} repeats id {:?}; read as {:?}",
                    index + 1,
                    n.id,
                    renamed
                ),
            });
            n.id = renamed.clone();
            seen.insert(renamed);
        }
    }
    // Chain the second node of a pair (the tool results) to the first after renames.
    if new.len() == 2 {
        new[1].parent = Some(new[0].id.clone());
    }
    new
}

/// One MessageRecord as one node, or two when it carries tool results.
pub(crate) fn message_to_nodes(
    value: Value,
    index: usize,
    parent: Option<String>,
    diagnostics: &mut Vec<Diagnostic>,
    file: &str,
) -> Vec<Node> {
    let Value::Object(mut m) = value else {
        diagnostics.push(Diagnostic {
            code: "message-not-object",
            severity: Severity::Warning,
            location: Location::file(file),
            message: format!("message {} is not an object; kept as is", index + 1),
        });
        return vec![kept_message(
            format!("message-{}", index + 1),
            parent,
            UNKNOWN_MESSAGE,
            value,
        )];
    };
    let id = match m.get("id") {
        Some(Value::String(s)) => s.clone(),
        _ => format!("message-{}", index + 1),
    };
    let role = match m.get("type").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("gemini") => Role::Assistant,
        Some("info") => Role::Info,
        Some("warning") => Role::Warning,
        Some("error") => Role::Error,
        other => {
            diagnostics.push(Diagnostic {
                code: "unknown-message-type",
                severity: Severity::Info,
                location: Location::file(file),
                message: format!(
                    "message {} has type {:?}, which this version does not know; kept as is",
                    index + 1,
                    other.unwrap_or("(none)")
                ),
            });
            return vec![kept_message(id, parent, UNKNOWN_MESSAGE, Value::Object(m))];
        }
    };
    m.shift_remove("id");
    m.shift_remove("type");
    let timestamp = take_string(&mut m, "timestamp");
    let mut parts = Vec::new();
    // An empty list stays as it was (in `extra`): the writer only writes non-empty ones.
    if let Some(Value::Array(thoughts)) = m.get("thoughts").filter(|t| all_objects(t)) {
        let thoughts = thoughts.clone();
        m.shift_remove("thoughts");
        parts.extend(thoughts.into_iter().map(thought_part));
    }
    if let Some(content) = m.shift_remove("content") {
        // An empty string is no text part.
        let string = content.is_string();
        parts.extend(parts_from_union(&content).into_iter().filter(|p| {
            !(string && matches!(&p.content, Content::Text { text } if text.is_empty()))
        }));
    }
    let mut results: Vec<Part> = Vec::new();
    let mut any_result = false;
    let mut result_ts: Option<String> = None;
    if let Some(Value::Array(calls)) = m.get("toolCalls").filter(|t| all_objects(t)) {
        let calls = calls.clone();
        m.shift_remove("toolCalls");
        for call in calls {
            let (call_part, result_parts, shape) = tool_call(call);
            if let Content::ToolCall { extra, .. } = &call_part.content
                && !result_parts.is_empty()
                && let Some(Value::String(ts)) = extra.get("timestamp")
                && result_ts.as_deref().is_none_or(|t| t < ts.as_str())
            {
                result_ts = Some(ts.clone());
            }
            parts.push(call_part);
            if shape.is_some() {
                any_result = true;
                results.extend(result_parts);
            }
        }
    }
    let usage = match m.get("tokens") {
        Some(Value::Object(t)) => {
            let t = t.clone();
            m.shift_remove("tokens");
            Some(usage_from_tokens(t))
        }
        _ => None,
    };
    let model = take_string(&mut m, "model");
    let message = Message {
        role,
        parts,
        model,
        usage,
        extra: m,
    };
    let first = Node {
        id: id.clone(),
        parent,
        timestamp: timestamp.clone(),
        body: Body::Message(message),
        extra: Extra::new(),
        origin: None,
    };
    if !any_result {
        return vec![first];
    }
    vec![
        first,
        Node {
            id: format!("{id}.results"),
            parent: Some(id),
            timestamp: result_ts.or(timestamp),
            body: Body::Message(Message::new(Role::Tool, results)),
            extra: Extra::new(),
            origin: None,
        },
    ]
}

fn thought_part(value: Value) -> Part {
    match value {
        Value::Object(mut t) => {
            let subject = take_string(&mut t, "subject");
            let text = take_string(&mut t, "description").unwrap_or_default();
            Part::new(Content::Thought {
                text,
                subject,
                encrypted: None,
                extra: t,
            })
        }
        other => Part::new(Content::Other { value: other }),
    }
}

/// A ToolCallRecord as its call part, its result parts, and the shape its `result` had
/// (`None` when it had no result).
fn tool_call(value: Value) -> (Part, Vec<Part>, Option<&'static str>) {
    let Value::Object(mut tc) = value else {
        return (Part::new(Content::Other { value }), Vec::new(), None);
    };
    let id = take_string(&mut tc, "id");
    let name = take_string(&mut tc, "name").unwrap_or_default();
    let args = tc.shift_remove("args").unwrap_or(Value::Object(Map::new()));
    let result = match tc.get("result") {
        Some(Value::Null) | None => None,
        Some(_) => tc.shift_remove("result"),
    };
    let Some(result) = result else {
        let call = Content::ToolCall {
            id,
            name,
            args,
            extra: tc,
        };
        return (Part::new(call), Vec::new(), None);
    };
    let shape = match &result {
        Value::String(_) => "string",
        Value::Array(_) => "array",
        _ => "part",
    };
    let status = take_string(&mut tc, "status");
    let display = tc.shift_remove("resultDisplay");
    let mut parts = parts_from_union(&result);
    // The call's status and display belong to its result: put them on the first response.
    let failed = status.as_deref() == Some("error");
    if let Some(Part {
        content:
            Content::ToolResult {
                status: s,
                display: d,
                is_error,
                ..
            },
        ..
    }) = parts
        .iter_mut()
        .find(|p| matches!(p.content, Content::ToolResult { .. }))
    {
        *s = status;
        *d = display;
        *is_error |= failed;
    } else {
        // No functionResponse to carry them: keep them on the call.
        if let Some(s) = status {
            tc.insert("status".into(), s.into());
        }
        if let Some(d) = display {
            tc.insert("resultDisplay".into(), d);
        }
    }
    let call = Content::ToolCall {
        id,
        name,
        args,
        extra: tc,
    };
    (Part::new(call), parts, Some(shape))
}

fn usage_from_tokens(mut t: Map<String, Value>) -> Usage {
    let mut take = |k: &str| take_u64(&mut t, k);
    Usage {
        input: take("input"),
        output: take("output"),
        cached: take("cached"),
        thoughts: take("thoughts"),
        tool: take("tool"),
        total: take("total"),
        extra: t,
    }
}

fn tokens_from_usage(u: &Usage) -> Value {
    let mut t = Map::new();
    let mut put = |k: &str, v: Option<u64>| {
        if let Some(v) = v {
            t.insert(k.into(), v.into());
        }
    };
    put("input", u.input);
    put("output", u.output);
    put("cached", u.cached);
    put("thoughts", u.thoughts);
    put("tool", u.tool);
    put("total", u.total);
    for (k, v) in &u.extra {
        t.insert(k.clone(), v.clone());
    }
    // The CLI always writes input, output, cached and total.
    for k in ["input", "output", "cached", "total"] {
        t.entry(k).or_insert(0.into());
    }
    Value::Object(ordered(
        t,
        &["input", "output", "cached", "thoughts", "tool", "total"],
    ))
}

fn write_message(
    node: &Node,
    m: &Message,
    kind: &str,
    timestamp: String,
    own: bool,
    losses: &mut LossReport,
) -> Map<String, Value> {
    // Fields another format kept are that format's; this one has no place for them.
    let mut out = kept_fields(node, m, own, "Gemini", losses);
    out.insert("id".into(), node.id.clone().into());
    out.insert("timestamp".into(), timestamp.into());
    out.insert("type".into(), kind.into());
    let mut thoughts = Vec::new();
    let mut calls = Vec::new();
    let mut content = Vec::new();
    for p in &m.parts {
        match &p.content {
            Content::Thought {
                text,
                subject,
                extra,
                ..
            } if kind == "gemini" => {
                let mut t = Map::new();
                t.insert("subject".into(), subject.clone().unwrap_or_default().into());
                t.insert("description".into(), text.clone().into());
                t.extend(extra.clone());
                if p.signature.is_some() {
                    lose_signature(losses);
                }
                thoughts.push(Value::Object(t));
            }
            Content::ToolCall {
                id,
                name,
                args,
                extra,
            } if kind == "gemini" => {
                let mut c = if own { extra.clone() } else { Map::new() };
                if let Some(id) = id {
                    c.insert("id".into(), id.clone().into());
                }
                c.insert("name".into(), name.clone().into());
                c.insert("args".into(), args.clone());
                if !own {
                    // The CLI records every call with a result, status and time; an answered
                    // call gets its own when its result is folded in.
                    c.insert("result".into(), Value::Null);
                    c.insert("status".into(), "cancelled".into());
                    if let Some(ts) = &node.timestamp {
                        c.insert("timestamp".into(), ts.clone().into());
                    }
                    lose_call_fields(extra.len(), losses);
                }
                if p.signature.is_some() {
                    lose_signature(losses);
                }
                calls.push(c);
            }
            _ => content.push(p.clone()),
        }
    }
    let as_read = origin::MessageAsRead::of(node);
    let shape = as_read.as_ref().map(|a| a.content);
    let single_text = match content.as_slice() {
        [] => Some(String::new()),
        [
            Part {
                content: Content::Text { text },
                signature: None,
                extra,
            },
        ] if extra.is_empty() => Some(text.clone()),
        _ => None,
    };
    let content_value = match (shape, single_text) {
        (Some("absent"), Some(t)) if t.is_empty() => None,
        (Some("array"), _) => Some(parts_to_json(&content)),
        (Some("part"), _) if content.len() == 1 => {
            Some(super::gemini_content::part_to_json(&content[0]))
        }
        (_, Some(t)) => Some(Value::String(t)),
        _ => Some(parts_to_json(&content)),
    };
    if let Some(c) = content_value {
        out.insert("content".into(), c);
    }
    if !thoughts.is_empty() {
        out.insert("thoughts".into(), Value::Array(thoughts));
    }
    if let Some(u) = &m.usage {
        let mut u = u.clone();
        if !own {
            lose_usage_fields(u.extra.len(), losses);
            u.extra.clear();
        }
        out.insert("tokens".into(), tokens_from_usage(&u));
    }
    if let Some(model) = &m.model {
        out.insert("model".into(), model.clone().into());
    }
    if !calls.is_empty() {
        let calls = calls
            .into_iter()
            .map(|c| Value::Object(ordered(c, TOOL_CALL_ORDER)))
            .collect();
        out.insert("toolCalls".into(), Value::Array(calls));
    }
    ordered_like(out, as_read.as_ref().map(|a| &a.keys[..]), MESSAGE_ORDER)
}

/// Puts a tool message's results into the `toolCalls` of the assistant message they answer.
/// Returns false when there is no such message (the results are then written on their own).
/// `own`: the session is this format's, so a call without a status keeps none.
fn fold_results(messages: &mut [Value], tool: &Node, own: bool) -> bool {
    let Some(Value::Object(last)) = messages.last_mut() else {
        return false;
    };
    if last.get("type").and_then(Value::as_str) != Some("gemini") {
        return false;
    }
    let Some(Value::Array(calls)) = last.get_mut("toolCalls") else {
        return false;
    };
    let groups = group_results(tool);
    // Every group must find its call, or nothing is folded (no result is ever dropped).
    let mut targets = Vec::with_capacity(groups.len());
    for (i, g) in groups.iter().enumerate() {
        let by_id = g.call_id.as_deref().and_then(|id| {
            calls
                .iter()
                .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
        });
        // Calls from the Gemini API often carry no id: match those by name, in order.
        let pos = by_id.or_else(|| {
            calls.iter().enumerate().position(|(j, c)| {
                !targets.contains(&j)
                    && c.get("id").is_none()
                    && (g.name.is_none()
                        || c.get("name").and_then(Value::as_str) == g.name.as_deref())
            })
        });
        let pos = pos.or_else(|| (g.call_id.is_none() && i < calls.len()).then_some(i));
        match pos {
            Some(p) if !targets.contains(&p) => targets.push(p),
            _ => return false,
        }
    }
    for (g, pos) in groups.into_iter().zip(targets) {
        let Value::Object(call) = &mut calls[pos] else {
            return false;
        };
        let result = match g.shape {
            "string" if g.parts.len() == 1 => match &g.parts[0].content {
                Content::Text { text } => Value::String(text.clone()),
                _ => parts_to_json(&g.parts),
            },
            "part" if g.parts.len() == 1 => super::gemini_content::part_to_json(&g.parts[0]),
            _ => parts_to_json(&g.parts),
        };
        if call.get("id").is_none()
            && let Some(id) = &g.call_id
        {
            call.insert("id".into(), id.clone().into());
        }
        call.insert("result".into(), result);
        if let Some(s) = g.status {
            call.insert("status".into(), s.into());
        } else if g.is_error {
            call.insert("status".into(), "error".into());
        } else if !own {
            // The call was written as `cancelled` until a result was found for it.
            call.insert("status".into(), "success".into());
        }
        if let Some(d) = g.display {
            call.insert("resultDisplay".into(), d);
        }
        let c = std::mem::take(call);
        *call = ordered(c, TOOL_CALL_ORDER);
    }
    true
}

struct ResultGroup {
    call_id: Option<String>,
    name: Option<String>,
    shape: &'static str,
    parts: Vec<Part>,
    status: Option<String>,
    display: Option<Value>,
    is_error: bool,
}

/// Splits a tool message into one group per call: the layout the reader recorded when there is
/// one, otherwise each function response starts a group and other parts join the one before.
fn group_results(tool: &Node) -> Vec<ResultGroup> {
    let Some(m) = tool.message() else {
        return Vec::new();
    };
    result_layout(tool)
        .into_iter()
        .map(|(parts, shape)| new_group(m.parts[parts].to_vec(), shape))
        .collect()
}

/// The groups of [`group_results`] as the places of their parts and their shapes.
fn result_layout(tool: &Node) -> Vec<(std::ops::Range<usize>, &'static str)> {
    let mut groups: Vec<(std::ops::Range<usize>, &'static str)> = Vec::new();
    let recorded = origin::results_as_read(tool);
    let Some(tool) = tool.message() else {
        return groups;
    };
    let fits = recorded
        .as_ref()
        .is_some_and(|r| r.iter().map(|(n, _)| n).sum::<usize>() == tool.parts.len());
    if let (true, Some(layout)) = (fits, recorded) {
        let mut at = 0;
        for (n, shape) in layout {
            groups.push((at..at + n, shape));
            at += n;
        }
        return groups;
    }
    for (i, p) in tool.parts.iter().enumerate() {
        let starts = matches!(p.content, Content::ToolResult { .. });
        match groups.last_mut() {
            Some((g, _)) if !starts => g.end = i + 1,
            _ => groups.push((i..i + 1, "array")),
        }
    }
    groups
}

fn new_group(parts: Vec<Part>, shape: &'static str) -> ResultGroup {
    let mut g = ResultGroup {
        call_id: None,
        name: None,
        shape,
        parts,
        status: None,
        display: None,
        is_error: false,
    };
    if let Some(Content::ToolResult {
        call_id,
        name,
        status,
        display,
        is_error,
        ..
    }) = g
        .parts
        .iter()
        .map(|p| &p.content)
        .find(|c| matches!(c, Content::ToolResult { .. }))
    {
        g.call_id = call_id.clone();
        g.name = name.clone();
        g.status = status.clone();
        g.display = display.clone();
        g.is_error = *is_error;
    }
    g
}

/// A non-empty list of objects: only such a `thoughts` or `toolCalls` list is read into parts;
/// anything else stays in `extra`, as it was.
fn all_objects(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_object))
}
