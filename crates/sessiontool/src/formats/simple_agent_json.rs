//! simple-agent-go session JSON (`simple-agent-json`): one session per file under
//! `~/.simple-agent/sessions/<YYYYMMDD_HHMMSS>_<6 chars>.json`, written whole by Go's
//! `json.MarshalIndent(session, "", "  ")` and `os.WriteFile` (no final newline). See
//! FORMATS.md 11 and seed 004.
//!
//! Go's encoder escapes `<`, `>`, `&`, U+2028 and U+2029 inside strings (`\u003c`, ...); the
//! writer does the same, unless the file read had any of them raw (edited by hand).
//!
//! Mapping to the model: each message is a node chained to the one before it, with a derived
//! id (`message-<n>`). `tool_calls[]` become tool call parts (the `arguments` string is kept
//! exactly), a `tool` message with `tool_call_id` a tool result part whose output is the content
//! string. Session fields: `id`, `path` (cwd), `created_at`, `updated_at`, `metadata.title`;
//! the rest (`version`, `provider`, `model`, `metadata`, `runs`, ...) stays in `extra`.
//!
//! The `meta.json` index is not a session: [`index_entry`] adds a session to it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::fields::take_string;
use super::json_document::{self, kept_fields, kept_message, ordered_like, session_times};
use super::normalise::{Facts, head};
use super::one_branch::{ONE_BRANCH, one_branch};
use super::tool_output::output_text;
use super::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
    document_tail, ordered, tail_as_read,
};
use crate::diag::{Diagnostic, Location, LossReport, Severity};
use crate::formats::{ProjectField, Reader, Rules, Writer};
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role, Session};

mod go;
mod origin;
mod target;

use origin::{DocumentAsRead, MessageAsRead};
use target::TARGET;

pub use go::{index_entry, rekey_index, to_pretty_go};

pub struct SimpleAgentJson;

pub const NAME: &str = "simple-agent-json";

/// Key order of the Go structs (`history/types.go`).
const SESSION_ORDER: &[&str] = &[
    "id",
    "version",
    "created_at",
    "updated_at",
    "path",
    "provider",
    "model",
    "metadata",
    "messages",
];
const MESSAGE_ORDER: &[&str] = &["role", "content", "tool_calls", "tool_call_id", "timestamp"];
const CALL_ORDER: &[&str] = &["id", "type", "function"];
const FUNCTION_ORDER: &[&str] = &["name", "arguments"];

/// Kind of the event that keeps a message this reader cannot map.
const UNKNOWN_MESSAGE: &str = "simple-agent-json.message";
/// Where a call's unknown `function` fields are kept (in the call part's `extra`).
const FUNCTION_EXTRA: &str = "function";
/// The time Go writes for a zero `time.Time`.
const GO_ZERO_TIME: &str = "0001-01-01T00:00:00Z";

impl Format for SimpleAgentJson {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "simple-agent-go session JSON (~/.simple-agent/sessions/*.json)"
    }

    fn tool(&self) -> &'static str {
        "simple-agent"
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
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    project_fields: &[ProjectField::path(&["path"])],
    ..Rules::DOCUMENT
};

impl Reader for SimpleAgentJson {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        let Some(head) = json_document::document_head(path, head) else {
            return 0;
        };
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let has = |k: &str| compact.contains(&format!("\"{k}\":"));
        if has("sessionId") || has("history") {
            return 0;
        }
        let core = has("id") && has("created_at") && has("updated_at");
        if core && compact.contains("\"version\":\"1.0\"") && has("messages") {
            90
        } else if core && (has("messages") || has("metadata")) {
            60
        } else {
            0
        }
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        let json_document::Document {
            mut root,
            keys: _,
            messages,
            lossy,
        } = json_document::parse(input, "simple-agent", true)?;
        let mut diagnostics: Vec<_> = lossy.into_iter().collect();
        match root.get("version").and_then(Value::as_str) {
            Some("1.0") => {}
            other => diagnostics.push(Diagnostic {
                code: "unknown-version",
                severity: Severity::Info,
                location: Location::file(input.name),
                message: format!("session version {other:?}; read as version 1.0"),
            }),
        }
        let title = match root.get_mut("metadata") {
            Some(Value::Object(md)) if md.get("title").is_some_and(Value::is_string) => md
                .shift_remove("title")
                .and_then(|t| t.as_str().map(String::from)),
            _ => None,
        };
        let meta = Meta {
            id: take_string(&mut root, "id"),
            cwd: take_string(&mut root, "path"),
            start_time: take_string(&mut root, "created_at"),
            last_updated: take_string(&mut root, "updated_at"),
            title,
            source_format: Some(NAME.into()),
            extra: root,
            // The document: its key orders and escaping, for the writer (`origin`).
            origin: Some(Origin::new(NAME, input.bytes)),
            tail: document_tail(NAME, input.bytes),
            ..Meta::default()
        };
        let mut nodes: Vec<Node> = Vec::with_capacity(messages.len());
        let mut call_names: HashMap<String, String> = HashMap::new();
        for (i, m) in messages.into_iter().enumerate() {
            let parent = nodes.last().map(|n| n.id.clone());
            let node = message_to_node(m, i, parent, &mut call_names, &mut diagnostics, input);
            nodes.push(node);
        }
        Ok(ReadOutcome {
            session: Session { meta, nodes },
            diagnostics,
        })
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        #[derive(serde::Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            id: Option<std::borrow::Cow<'a, str>>,
        }
        #[derive(serde::Deserialize)]
        struct K<'a> {
            #[serde(borrow)]
            role: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default)]
            tool_calls: Option<Vec<Call<'a>>>,
            #[serde(borrow)]
            tool_call_id: Option<std::borrow::Cow<'a, str>>,
        }
        let k: K = serde_json::from_slice(record).ok()?;
        Some(Keys {
            kind: k.role,
            calls: k
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .filter_map(|c| c.id)
                .collect(),
            results: k.tool_call_id.into_iter().collect(),
            ..Keys::default()
        })
    }
}

impl Writer for SimpleAgentJson {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let mut losses = LossReport::default();
        let session = one_branch(session, options, ONE_BRANCH, &mut losses)?;
        let own = session.meta.source_format.as_deref() == Some(NAME);
        let meta = &session.meta;
        let doc = DocumentAsRead::of(meta);
        let now = options.now.clone().unwrap_or_else(|| GO_ZERO_TIME.into());
        let mut messages = Vec::with_capacity(session.nodes.len());
        let mut last_ts = meta.start_time.clone();
        let mut model: Option<String> = None;
        for node in &session.nodes {
            if node.timestamp.is_some() {
                last_ts = node.timestamp.clone();
            }
            let ts = node
                .timestamp
                .clone()
                .or(last_ts.clone())
                .unwrap_or(now.clone());
            match &node.body {
                Body::Event(Event::Custom { kind, data }) if own && kind == UNKNOWN_MESSAGE => {
                    messages.push(data.clone());
                }
                Body::Event(e) => losses.add(
                    "events",
                    1,
                    format!(
                        "session events ({}) have no place in a simple-agent session",
                        e.kind()
                    ),
                ),
                Body::Message(m) if !m.role.is_conversation() => losses.add(
                    "notices",
                    1,
                    "info, warning and error notices (simple-agent records none)",
                ),
                Body::Message(m) => {
                    if model.is_none() && m.role == Role::Assistant {
                        model = m.model.clone();
                    }
                    for w in write_message(node, m, ts, own, &mut losses) {
                        messages.push(Value::Object(w));
                    }
                }
            }
        }
        let mut root = if own { meta.extra.clone() } else { Map::new() };
        if !own {
            TARGET.unplaced.session(meta, &mut losses);
        }
        let (start, last) = session_times(meta, &messages, now);
        let id = head::session_id(&TARGET, meta, Facts::of(&session.nodes), &mut losses)?;
        root.insert("id".into(), id.into());
        root.entry("version").or_insert_with(|| "1.0".into());
        root.insert("created_at".into(), start.into());
        root.insert("updated_at".into(), last.into());
        let cwd = head::cwd(&TARGET, meta, options, &mut losses);
        root.insert("path".into(), cwd.into());
        root.entry("provider").or_insert_with(|| "".into());
        root.entry("model")
            .or_insert_with(|| model.unwrap_or_default().into());
        let mut md = match root.shift_remove("metadata") {
            Some(Value::Object(md)) => md,
            _ => {
                let mut md = Map::new();
                md.insert("tags".into(), Value::Null);
                md.insert("token_count".into(), 0.into());
                md
            }
        };
        let mut with_title = Map::new();
        if let Some(t) = &meta.title {
            with_title.insert("title".into(), t.clone().into());
        } else if !md.contains_key("title") {
            with_title.insert("title".into(), "".into());
        }
        with_title.append(&mut md);
        let metadata_keys = doc.as_ref().and_then(|d| d.metadata_keys.as_deref());
        let with_title = ordered_like(with_title, metadata_keys, &[]);
        root.insert("metadata".into(), Value::Object(with_title));
        root.insert("messages".into(), Value::Array(messages));
        if meta.summary.is_some() {
            losses.add("summary", 1, "the session summary (no field for it)");
        }
        let root = ordered_like(root, doc.as_ref().map(|d| &d.keys[..]), SESSION_ORDER);
        let escape = !doc.as_ref().is_some_and(|d| d.raw_html);
        let mut bytes = to_pretty_go(&Value::Object(root), escape);
        bytes.extend_from_slice(tail_as_read(meta, NAME).unwrap_or_default());
        Ok(Written { bytes, losses })
    }
}

/// Arguments as the model holds them: the parsed JSON, or the string itself when it is not
/// JSON. The second value is the string to keep as a hint when re-encoding would differ.
fn parse_arguments(raw: &str) -> (Value, Option<String>) {
    match serde_json::from_str::<Value>(raw) {
        Ok(v) if !v.is_string() => {
            let same = serde_json::to_string(&v).is_ok_and(|s| s == raw);
            let keep = (!same).then(|| raw.to_string());
            (v, keep)
        }
        // A JSON string (or no JSON at all) stays the string it was.
        _ => (Value::String(raw.to_string()), Some(raw.to_string())),
    }
}

fn arguments_string(args: &Value, kept: Option<&str>) -> String {
    if let Some(raw) = kept {
        let (parsed, _) = parse_arguments(raw);
        if &parsed == args {
            return raw.to_string();
        }
    }
    match args {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// One tool call object as a call part, or `None` when it is not shaped like one (it then
/// stays in the message's `extra` with the whole list).
pub(super) fn call_part(value: &Value) -> Option<(Part, Option<String>)> {
    let mut c = value.as_object()?.clone();
    let Some(Value::Object(mut f)) = c.shift_remove("function") else {
        return None;
    };
    let name = take_string(&mut f, "name")?;
    let raw = take_string(&mut f, "arguments")?;
    let id = take_string(&mut c, "id");
    let (args, keep) = parse_arguments(&raw);
    if !f.is_empty() {
        c.insert(FUNCTION_EXTRA.into(), Value::Object(f));
    }
    let part = Part::new(Content::ToolCall {
        id,
        name,
        args,
        extra: c,
    });
    Some((part, keep))
}

fn message_to_node(
    value: Value,
    index: usize,
    parent: Option<String>,
    call_names: &mut HashMap<String, String>,
    diagnostics: &mut Vec<Diagnostic>,
    input: &Input,
) -> Node {
    let id = format!("message-{}", index + 1);
    let role = match value.get("role").and_then(Value::as_str) {
        Some("system") => Some(Role::System),
        Some("user") => Some(Role::User),
        Some("assistant") => Some(Role::Assistant),
        Some("tool") => Some(Role::Tool),
        _ => None,
    };
    let (Some(role), Value::Object(mut m)) = (role, value.clone()) else {
        diagnostics.push(Diagnostic {
            code: "unknown-message",
            severity: Severity::Warning,
            location: Location::file(input.name),
            message: format!(
                "message {} has no known role (system, user, assistant, tool); kept as is",
                index + 1
            ),
        });
        return kept_message(id, parent, UNKNOWN_MESSAGE, value);
    };
    // The message as parsed: its key order and shape, for the writer (`origin`).
    let origin = Origin::new(NAME, &serde_json::to_vec(&m).unwrap_or_default());
    m.shift_remove("role");
    let timestamp = take_string(&mut m, "timestamp");
    let content = match m.get("content") {
        None => None,
        Some(Value::String(s)) if s.is_empty() => {
            m.shift_remove("content");
            None
        }
        Some(Value::String(_)) => take_string(&mut m, "content"),
        // Not a string: not what simple-agent writes; kept as it was.
        Some(_) => None,
    };
    let mut parts = Vec::new();
    // Calls: only a list of well-formed calls is read into parts.
    if let Some(Value::Array(calls)) = m.get("tool_calls") {
        let read: Option<Vec<(Part, Option<String>)>> = calls.iter().map(call_part).collect();
        if let Some(read) = read {
            m.shift_remove("tool_calls");
            for (p, _) in read {
                if let Content::ToolCall {
                    id: Some(id), name, ..
                } = &p.content
                {
                    call_names.insert(id.clone(), name.clone());
                }
                parts.push(p);
            }
            if calls_empty(&parts) {
                // `"tool_calls": []` (never written by Go's omitempty, but seen in the seed).
                m.insert("tool_calls".into(), Value::Array(Vec::new()));
            }
        }
    }
    let call_id = if role == Role::Tool {
        take_string(&mut m, "tool_call_id")
    } else {
        None
    };
    match (call_id, content) {
        (Some(call_id), content) => {
            let output = content.map_or(Value::Null, Value::String);
            parts.insert(
                0,
                Part::new(Content::ToolResult {
                    name: call_names.get(&call_id).cloned(),
                    call_id: Some(call_id),
                    output,
                    is_error: false,
                    status: None,
                    display: None,
                    extra: Extra::new(),
                }),
            );
        }
        (None, Some(text)) => parts.insert(0, Part::text(text)),
        (None, None) => {}
    }
    Node {
        id,
        parent,
        timestamp,
        body: Body::Message(Message {
            role,
            parts,
            model: None,
            usage: None,
            extra: m,
        }),
        extra: Extra::new(),
        origin: Some(origin),
    }
}

fn calls_empty(parts: &[Part]) -> bool {
    !parts
        .iter()
        .any(|p| matches!(p.content, Content::ToolCall { .. }))
}

/// One node as one message, or several when a tool node holds several results.
fn write_message(
    node: &Node,
    m: &Message,
    timestamp: String,
    own: bool,
    losses: &mut LossReport,
) -> Vec<Map<String, Value>> {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        _ => "tool",
    };
    let base = kept_fields(node, m, own, "simple-agent", losses);
    if m.model.is_some() && !own {
        losses.add(
            "message-models",
            1,
            "per-message model names (one per session)",
        );
    }
    if m.usage.is_some() {
        losses.add("usage", 1, "token usage of messages");
    }
    let as_read = MessageAsRead::of(node);
    let kept_args = &as_read.arguments;
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for p in &m.parts {
        if p.signature.is_some() {
            losses.add("signatures", 1, "part signatures (no field for them)");
        }
        if !own && !p.extra.is_empty() {
            losses.add(
                "part-fields",
                p.extra.len(),
                "fields the source format keeps on parts",
            );
        }
        match &p.content {
            Content::Text { text } => texts.push(text.clone()),
            Content::ToolCall {
                id,
                name,
                args,
                extra,
            } => {
                let mut c = if own { extra.clone() } else { Map::new() };
                if !own {
                    losses.add(
                        "part-fields",
                        extra.len(),
                        "fields the source format keeps on tool calls",
                    );
                }
                let mut f = match c.shift_remove(FUNCTION_EXTRA) {
                    Some(Value::Object(f)) => f,
                    _ => Map::new(),
                };
                let kept = kept_args.get(calls.len()).cloned().flatten();
                f.insert("name".into(), name.clone().into());
                f.insert(
                    "arguments".into(),
                    arguments_string(args, kept.as_deref()).into(),
                );
                c.insert("id".into(), id.clone().unwrap_or_default().into());
                c.entry("type").or_insert_with(|| "function".into());
                c.insert("function".into(), Value::Object(ordered(f, FUNCTION_ORDER)));
                calls.push(Value::Object(ordered(c, CALL_ORDER)));
            }
            Content::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => {
                if *is_error && !own {
                    losses.add(
                        "error-flags",
                        1,
                        "tool results' error flags (no field for them)",
                    );
                }
                results.push((call_id.clone(), output.clone()));
            }
            Content::Thought { .. } => {
                losses.add("thoughts", 1, "model reasoning (no field for it)")
            }
            _ => {
                losses.add(
                    "parts",
                    1,
                    format!(
                        "{} parts (a message holds text and tool calls only)",
                        p.kind()
                    ),
                );
            }
        }
    }
    let content_hint = as_read.no_text;
    let keys = as_read.keys.as_deref();
    let mut out = Vec::new();
    let text = (!texts.is_empty()).then(|| texts.join("\n\n"));
    if results.is_empty() || role != "tool" {
        let mut w = base;
        w.insert("role".into(), role.into());
        match (text, content_hint) {
            (Some(t), _) => {
                w.insert("content".into(), t.into());
            }
            (None, Some("absent")) => {}
            (None, Some(_)) => {
                w.entry("content").or_insert_with(|| "".into());
            }
            // Go writes no content for a message that only calls tools.
            (None, None) if !calls.is_empty() => {}
            (None, None) => {
                w.entry("content").or_insert_with(|| "".into());
            }
        }
        if !calls.is_empty() {
            w.insert("tool_calls".into(), Value::Array(calls));
        }
        if !results.is_empty() {
            losses.add(
                "tool-results",
                results.len(),
                "tool results outside a tool message",
            );
        }
        w.insert("timestamp".into(), timestamp.into());
        out.push(ordered_like(w, keys, MESSAGE_ORDER));
        return out;
    }
    if text.is_some() {
        losses.add(
            "parts",
            1,
            "text beside tool results (written as the result)",
        );
    }
    let n = results.len();
    for (i, (call_id, output)) in results.into_iter().enumerate() {
        let mut w = if i + 1 == n { base.clone() } else { Map::new() };
        w.insert("role".into(), "tool".into());
        let absent = output.is_null() && content_hint == Some("absent");
        if !absent {
            let (mut s, _) = output_text(&output);
            if i == 0 && s.is_empty() {
                s = text.clone().unwrap_or_default();
            }
            w.insert("content".into(), s.into());
        }
        if let Some(id) = call_id {
            w.insert("tool_call_id".into(), id.into());
        }
        w.insert("timestamp".into(), timestamp.clone().into());
        out.push(ordered_like(w, keys, MESSAGE_ORDER));
    }
    out
}
