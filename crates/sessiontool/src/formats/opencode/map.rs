//! OpenCode's rows as the session model.
//!
//! A message row becomes one node, or several when an assistant message goes on after its
//! tool calls (a later step of the same reply): each run of text, reasoning and tool calls is
//! an assistant node, and the results of its calls follow as a tool node, as every other
//! format orders them. Parts map to:
//!
//! - `text` → text; `reasoning` → thought; `file` → media (its `url` as the URI);
//! - `tool` → a call, and a result from its `state`: `completed` its output, `error` its
//!   error; `pending`/`running` (OpenCode stopped while the tool ran) the error result
//!   `[Tool execution was interrupted]`, as OpenCode replays it to the model (said in a
//!   `tool-call-interrupted` warning);
//! - `step-start`, `step-finish`, `snapshot`, `patch`, `agent`, `retry`, `compaction`,
//!   `subtask` and any newer kind → an `other` part holding the part's JSON whole (a target
//!   that cannot hold it lists it as a loss).
//!
//! Node ids are OpenCode's own: the message id, then for a later run the id of its first part,
//! and for a tool node the id of its first tool part. Nodes chain in OpenCode's order.

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::rows::Row;
use crate::diag::{Diagnostic, Location, Severity};
use crate::formats::ReadOutcome;
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Part, Role, Session, Usage};

/// What OpenCode sends the model for a tool part left pending or running.
pub const INTERRUPTED: &str = "[Tool execution was interrupted]";

/// The session row's columns the model has a place for; the others go to `meta.extra`.
const SESSION_FIELDS: [&str; 6] = [
    "id",
    "directory",
    "title",
    "version",
    "time_created",
    "time_updated",
];

/// Columns of the session row that hold JSON text (drizzle's `mode: "json"`).
const SESSION_JSON_COLUMNS: [&str; 6] = [
    "summary_diffs",
    "revert",
    "permission",
    "model",
    "metadata",
    "goal",
];

pub(crate) struct Mapper {
    location: Location,
    diagnostics: Vec<Diagnostic>,
    nodes: Vec<Node>,
}

pub(crate) fn session(
    name: &str,
    row: Map<String, Value>,
    messages: Vec<Row>,
    parts: Vec<Row>,
    orphans: Vec<Row>,
) -> ReadOutcome {
    let mut m = Mapper {
        location: Location::file(name.to_string()),
        diagnostics: Vec::new(),
        nodes: Vec::new(),
    };
    let meta = m.meta(row);
    if !orphans.is_empty() {
        let ids: Vec<String> = orphans
            .iter()
            .map(|p| {
                format!(
                    "{} (of {})",
                    p.id,
                    p.message_id.as_deref().unwrap_or("no message")
                )
            })
            .collect();
        m.warn(
            "part-without-message",
            Severity::Error,
            format!(
                "{} part(s) of this session belong to no message in the database, so OpenCode never shows them and neither does this reading: {}",
                orphans.len(),
                ids.join(", ")
            ),
        );
    }
    // Parts come sorted by message id: each message takes its run.
    let mut by_message: std::collections::HashMap<String, Vec<Row>> = Default::default();
    for p in parts {
        by_message
            .entry(p.message_id.clone().unwrap_or_default())
            .or_default()
            .push(p);
    }
    for msg in messages {
        let parts = by_message.remove(&msg.id).unwrap_or_default();
        m.message(msg, parts);
    }
    let mut session = Session {
        meta,
        nodes: m.nodes,
    };
    session.meta.head = session.nodes.last().map(|n| n.id.clone());
    ReadOutcome {
        session,
        diagnostics: m.diagnostics,
    }
}

impl Mapper {
    fn warn(&mut self, code: &'static str, severity: Severity, message: String) {
        self.diagnostics.push(Diagnostic {
            code,
            severity,
            location: self.location.clone(),
            message,
        });
    }

    fn meta(&mut self, mut row: Map<String, Value>) -> Meta {
        let text = |row: &Map<String, Value>, k: &str| {
            row.get(k).and_then(Value::as_str).map(String::from)
        };
        let time =
            |row: &Map<String, Value>, k: &str| row.get(k).and_then(Value::as_i64).and_then(millis);
        let meta = Meta {
            id: text(&row, "id"),
            cwd: text(&row, "directory"),
            title: text(&row, "title"),
            tool_version: text(&row, "version"),
            start_time: time(&row, "time_created"),
            last_updated: time(&row, "time_updated"),
            ..Meta::default()
        };
        for k in SESSION_FIELDS {
            row.shift_remove(k);
        }
        let mut meta = meta;
        for (k, v) in row {
            let v = match (SESSION_JSON_COLUMNS.contains(&k.as_str()), &v) {
                (true, Value::String(s)) => match serde_json::from_str(s) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        self.warn(
                            "invalid-json",
                            Severity::Warning,
                            format!("the session's `{k}` column is not JSON ({e}); kept as text"),
                        );
                        v
                    }
                },
                _ => v,
            };
            meta.extra.insert(k, v);
        }
        meta
    }

    /// The JSON of a row's `data`, as OpenCode's `JSON.parse` reads it; `None` (said) when it
    /// cannot be read.
    fn data(&mut self, what: &str, row: &Row) -> Option<Map<String, Value>> {
        let Some(text) = &row.data else {
            self.warn(
                "invalid-json",
                Severity::Error,
                format!("{what} {}: its data is not text; it is skipped (OpenCode cannot read it either)", row.id),
            );
            return None;
        };
        match crate::formats::record_value(text.as_bytes(), &self.location, &mut self.diagnostics) {
            Ok(Value::Object(map)) => Some(map),
            Ok(_) => {
                self.warn(
                    "invalid-json",
                    Severity::Error,
                    format!(
                        "{what} {}: its data is JSON but not an object; it is skipped",
                        row.id
                    ),
                );
                None
            }
            Err(e) => {
                self.warn(
                    "invalid-json",
                    Severity::Error,
                    format!("{what} {}: its data is not JSON ({e}); it is skipped (OpenCode fails on this session too)", row.id),
                );
                None
            }
        }
    }

    fn message(&mut self, row: Row, parts: Vec<Row>) {
        let Some(mut data) = self.data("message", &row) else {
            return;
        };
        let timestamp = data
            .get("time")
            .and_then(|t| t.get("created"))
            .and_then(Value::as_i64)
            .or(row.time_created)
            .and_then(millis);
        let role = match data.shift_remove("role") {
            Some(Value::String(r)) if r == "user" => Role::User,
            Some(Value::String(r)) if r == "assistant" => Role::Assistant,
            other => {
                self.warn(
                    "unknown-role",
                    Severity::Warning,
                    format!("message {}: role {other:?} is neither user nor assistant; kept as an event", row.id),
                );
                if let Some(r) = other {
                    data.insert("role".into(), r);
                }
                self.push(row.id, timestamp, custom("opencode.message", data));
                return;
            }
        };
        let parts: Vec<(String, Map<String, Value>)> = parts
            .into_iter()
            .filter_map(|p| self.data("part", &p).map(|d| (p.id, d)))
            .collect();
        if parts.is_empty() {
            // OpenCode sends nothing of a message without parts (one cut off before its first).
            data.insert("role".into(), Value::String(role.as_str().into()));
            self.push(row.id, timestamp, custom("opencode.empty-message", data));
            return;
        }
        if let Some(error) = data.get("error") {
            let name = error
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("an error");
            self.warn(
                "assistant-error",
                Severity::Info,
                format!("message {}: the reply ended with {name}; OpenCode leaves such a reply out of what it sends the model (unless it was aborted after some output)", row.id),
            );
        }
        let model = match role {
            Role::User => data
                .get("model")
                .and_then(|m| m.get("modelID"))
                .and_then(Value::as_str)
                .map(String::from),
            _ => data
                .get("modelID")
                .and_then(Value::as_str)
                .map(String::from),
        };
        let usage = data.get("tokens").map(usage);
        let mut extra = data;
        extra.remove("modelID");
        extra.remove("tokens");
        let template = Message {
            role,
            parts: Vec::new(),
            model,
            usage,
            extra,
        };
        match role {
            Role::User => {
                let mut msg = template;
                msg.parts = parts
                    .into_iter()
                    .map(|(id, p)| self.user_part(id, p))
                    .collect();
                self.push(row.id, timestamp, Body::Message(msg));
            }
            _ => self.assistant(row.id, timestamp, template, parts),
        }
    }

    fn push(&mut self, id: String, timestamp: Option<String>, body: Body) {
        let parent = self.nodes.last().map(|n| n.id.clone());
        self.nodes.push(Node {
            id,
            parent,
            timestamp,
            body,
            extra: Extra::new(),
            origin: None,
        });
    }

    fn user_part(&mut self, id: String, mut p: Map<String, Value>) -> Part {
        match p.get("type").and_then(Value::as_str) {
            Some("text") => text_part(id, p),
            Some("file") => file_part(id, p),
            _ => {
                p.insert("id".into(), Value::String(id));
                Part::new(Content::Other {
                    value: Value::Object(p),
                })
            }
        }
    }

    /// An assistant message: runs of parts, each closed by the results of its tool calls.
    fn assistant(
        &mut self,
        id: String,
        timestamp: Option<String>,
        template: Message,
        parts: Vec<(String, Map<String, Value>)>,
    ) {
        let mut run_id = id.clone();
        let mut run: Vec<Part> = Vec::new();
        let mut results: Vec<(String, Part, Option<String>)> = Vec::new();
        let mut first = true;
        for (part_id, p) in parts {
            let kind = p
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            // A run that made calls ends where the reply goes on (a new step, more text).
            let goes_on = matches!(kind.as_str(), "text" | "reasoning" | "step-start");
            if goes_on && !results.is_empty() {
                self.flush_run(
                    &run_id,
                    &id,
                    &timestamp,
                    &template,
                    std::mem::take(&mut run),
                    first,
                );
                first = false;
                self.flush_results(std::mem::take(&mut results));
                run_id = part_id.clone();
            }
            match kind.as_str() {
                "text" => run.push(text_part(part_id, p)),
                "reasoning" => run.push(reasoning_part(part_id, p)),
                "file" => run.push(file_part(part_id, p)),
                "tool" => {
                    let (call, result, end) = self.tool_part(&id, part_id.clone(), p);
                    run.push(call);
                    results.push((part_id, result, end));
                }
                _ => {
                    let mut p = p;
                    p.insert("id".into(), Value::String(part_id));
                    run.push(Part::new(Content::Other {
                        value: Value::Object(p),
                    }));
                }
            }
        }
        self.flush_run(&run_id, &id, &timestamp, &template, run, first);
        self.flush_results(results);
    }

    fn flush_run(
        &mut self,
        id: &str,
        message: &str,
        timestamp: &Option<String>,
        template: &Message,
        parts: Vec<Part>,
        first: bool,
    ) {
        if parts.is_empty() && !first {
            return;
        }
        let mut msg = template.clone();
        if !first {
            // Usage and the message's fields belong to the message: said once, on its first run.
            msg.usage = None;
            msg.extra = Map::from_iter([(
                "opencode.continues".to_string(),
                Value::String(message.to_string()),
            )]);
        }
        msg.parts = parts;
        self.push(id.to_string(), timestamp.clone(), Body::Message(msg));
    }

    fn flush_results(&mut self, results: Vec<(String, Part, Option<String>)>) {
        let Some((id, _, end)) = results.first() else {
            return;
        };
        let (id, end) = (id.clone(), end.clone());
        let parts = results.into_iter().map(|(_, p, _)| p).collect();
        self.push(id, end, Body::Message(Message::new(Role::Tool, parts)));
    }

    /// A tool part as its call and its result (with the result's end time).
    fn tool_part(
        &mut self,
        message: &str,
        id: String,
        mut p: Map<String, Value>,
    ) -> (Part, Part, Option<String>) {
        let call_id = p
            .shift_remove("callID")
            .and_then(|v| v.as_str().map(String::from));
        let name = p
            .shift_remove("tool")
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut state = match p.shift_remove("state") {
            Some(Value::Object(s)) => s,
            _ => Map::new(),
        };
        p.remove("type");
        let args = state
            .shift_remove("input")
            .unwrap_or(Value::Object(Map::new()));
        let status = state
            .shift_remove("status")
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let end = state
            .get("time")
            .and_then(|t| t.get("end"))
            .and_then(Value::as_i64)
            .and_then(millis);
        let mut call_extra = p;
        call_extra.insert("id".into(), Value::String(id));
        let call = Part::new(Content::ToolCall {
            id: call_id.clone(),
            name: name.clone(),
            args,
            extra: call_extra,
        });
        let interrupted = state
            .get("metadata")
            .and_then(|m| m.get("interrupted"))
            .and_then(Value::as_bool)
            == Some(true);
        let (output, is_error) = match status.as_str() {
            "completed" => (state.shift_remove("output").unwrap_or(Value::Null), false),
            "error" if interrupted => match state.get("metadata").and_then(|m| m.get("output")) {
                // OpenCode sends the output of a tool cut off by the user as a normal result.
                Some(Value::String(out)) => (Value::String(out.clone()), false),
                _ => (state.shift_remove("error").unwrap_or(Value::Null), true),
            },
            "error" => (state.shift_remove("error").unwrap_or(Value::Null), true),
            other => {
                self.warn(
                    "tool-call-interrupted",
                    Severity::Warning,
                    format!(
                        "message {message}: the {name} call {} was left {}; it gets the result {INTERRUPTED:?}, as OpenCode sends it to the model",
                        call_id.as_deref().unwrap_or("?"),
                        if other.is_empty() { "without a state" } else { other }
                    ),
                );
                (Value::String(INTERRUPTED.into()), true)
            }
        };
        let display = state.shift_remove("title");
        let result = Part::new(Content::ToolResult {
            call_id,
            name: Some(name),
            output,
            is_error,
            status: (!status.is_empty()).then_some(status),
            display,
            extra: state,
        });
        (call, result, end)
    }
}

fn text_part(id: String, mut p: Map<String, Value>) -> Part {
    p.remove("type");
    let text = match p.shift_remove("text") {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    p.insert("id".into(), Value::String(id));
    let mut part = Part::text(text);
    part.extra = p;
    part
}

fn reasoning_part(id: String, mut p: Map<String, Value>) -> Part {
    p.remove("type");
    let text = match p.shift_remove("text") {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    p.insert("id".into(), Value::String(id));
    Part::new(Content::Thought {
        text,
        subject: None,
        encrypted: None,
        extra: p,
    })
}

fn file_part(id: String, mut p: Map<String, Value>) -> Part {
    p.remove("type");
    let mime = p
        .shift_remove("mime")
        .and_then(|v| v.as_str().map(String::from));
    let uri = p
        .shift_remove("url")
        .and_then(|v| v.as_str().map(String::from));
    p.insert("id".into(), Value::String(id));
    Part::new(Content::Media {
        mime_type: mime,
        data: None,
        uri,
        extra: p,
    })
}

fn usage(tokens: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    let cache = tokens.get("cache");
    let mut extra = Extra::new();
    if let Some(write) = cache.and_then(|c| c.get("write")) {
        extra.insert("cache_write".into(), write.clone());
    }
    Usage {
        input: n(tokens.get("input")),
        output: n(tokens.get("output")),
        cached: n(cache.and_then(|c| c.get("read"))),
        thoughts: n(tokens.get("reasoning")),
        tool: None,
        total: n(tokens.get("total")),
        extra,
    }
}

fn custom(kind: &str, data: Map<String, Value>) -> Body {
    Body::Event(Event::Custom {
        kind: kind.to_string(),
        data: Value::Object(data),
    })
}

/// Milliseconds since the epoch as RFC 3339 with milliseconds (`2026-11-24T15:31:44.281Z`).
pub(crate) fn millis(ms: i64) -> Option<String> {
    let t = Timestamp::from_millisecond(ms).ok()?;
    Some(t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}
