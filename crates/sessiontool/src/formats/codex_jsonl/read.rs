//! Lines to nodes. Each line is one node, chained to the one before; the first `session_meta`
//! is the metadata. Each keeps the line it was read from, for the writer ([`super::origin`]).

use std::collections::HashMap;

use serde_json::Value;

use super::super::fields::take_string;
use super::super::{Input, ReadError, ReadOutcome, record_diagnostics};
use super::{LINE_TYPES, NAME, RECORD};
use crate::diag::{Diagnostic, Location, Severity};
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Origin, Session};
use crate::records::{Options, split_slice};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    let (records, findings) = split_slice(input.bytes, Options::default());
    let mut diagnostics = record_diagnostics(input.name, &findings);
    let mut meta = Meta::default();
    let mut have_meta = false;
    let mut nodes: Vec<Node> = Vec::with_capacity(records.len());
    let mut per_line: HashMap<u64, usize> = HashMap::new();
    let mut user_messages = 0usize;
    for rec in records {
        let span = rec.span;
        let at = Location::at(input.name, span.line, span.offset);
        let (value, parsed) = match serde_json::from_slice::<Value>(&rec.bytes) {
            Ok(v) => (v, true),
            Err(e) => {
                diagnostics.push(unparseable(&at, &e));
                let text = String::from_utf8_lossy(&rec.bytes).into_owned();
                (Value::String(text), false)
            }
        };
        let text = &*rec.bytes;
        let kind = value.get("type").and_then(Value::as_str);
        if !have_meta
            && kind == Some("session_meta")
            && value.get("payload").is_some_and(Value::is_object)
        {
            have_meta = true;
            if let Some(last) = nodes.last_mut() {
                diagnostics.push(meta_not_first(&at));
                // Where the line was: after the last node's (see `origin`).
                let line = Origin::of(&last.origin, NAME).unwrap_or_default();
                last.origin = Some(super::origin::origin(line, Some(text)));
            }
            meta = read_meta(value, text);
            continue;
        }
        if kind == Some("event_msg")
            && value.pointer("/payload/type").and_then(Value::as_str) == Some("user_message")
        {
            user_messages += 1;
        }
        let n = per_line.entry(span.line).or_insert(0);
        *n += 1;
        let mut node = read_line(value, node_id(span.line, *n));
        match &node.body {
            // A line that could not be parsed is said above.
            Body::Event(Event::Custom { kind, data }) if kind == RECORD && parsed => {
                diagnostics.push(match data.get("type").and_then(Value::as_str) {
                    Some(RECORD) => unknown_type(&at, RECORD),
                    _ => not_a_line(&at),
                });
            }
            // A line kept whole is not a line of an unknown type (an unparseable one is said
            // above).
            Body::Event(Event::Custom { kind, .. })
                if kind != RECORD && !LINE_TYPES.contains(&kind.as_str()) =>
            {
                diagnostics.push(unknown_type(&at, kind));
            }
            _ => {}
        }
        node.parent = nodes.last().map(|p| p.id.clone());
        node.origin = Some(Origin::new(NAME, text));
        nodes.push(node);
    }
    name_results(&mut nodes);
    super::usage::attach(&mut nodes);
    diagnostics.extend(whole_file_diagnostics(
        input.name,
        have_meta,
        user_messages,
        nodes.len(),
    ));
    finish_meta(
        &mut meta,
        nodes.iter().rev().find_map(|n| n.timestamp.clone()),
        nodes.last().map(|n| n.id.clone()),
    );
    let mut session = Session { meta, nodes };
    mark_inherited_calls(&mut session);
    Ok(ReadOutcome {
        session,
        diagnostics,
    })
}

/// In a sub-agent spawned by its parent (`source.subagent.thread_spawn`), the `spawn_agent`
/// call its copied history ends with is answered in the parent's rollout: it is marked as
/// inherited ([`crate::model::Meta::inherited_calls`]), not taken for unanswered.
pub(super) fn mark_inherited_calls(session: &mut Session) {
    if !spawned(&session.meta) {
        return;
    }
    let ids: Vec<String> = crate::check::document::unanswered_calls(session)
        .into_iter()
        .filter(|(_, _, name)| *name == super::keys::SPAWN_AGENT)
        .map(|(_, id, _)| id.to_string())
        .collect();
    session.meta.inherited_calls = ids;
}

/// Whether the rollout is a sub-agent's, spawned by its parent.
pub(super) fn spawned(meta: &Meta) -> bool {
    meta.extra
        .get("source")
        .and_then(|s| s.get("subagent"))
        .and_then(|s| s.get("thread_spawn"))
        .is_some_and(Value::is_object)
}

fn diag(code: &'static str, severity: Severity, at: &Location, message: String) -> Diagnostic {
    Diagnostic {
        code,
        severity,
        location: at.clone(),
        message,
    }
}

/// A line serde_json (Codex's own parser) cannot read.
pub(super) fn unparseable(at: &Location, e: &serde_json::Error) -> Diagnostic {
    diag(
        "codex-unparseable",
        Severity::Warning,
        at,
        format!("{}; kept as is", super::keys::refusal(e)),
    )
}

pub(super) fn meta_not_first(at: &Location) -> Diagnostic {
    diag(
        "codex-meta-not-first",
        Severity::Warning,
        at,
        "session_meta is not the first line; Codex reads it from the first line".into(),
    )
}

pub(super) fn not_a_line(at: &Location) -> Diagnostic {
    diag(
        "codex-not-a-line",
        Severity::Warning,
        at,
        "line is not a {timestamp, type, payload} object; kept as is".into(),
    )
}

pub(super) fn unknown_type(at: &Location, kind: &str) -> Diagnostic {
    diag(
        "codex-unknown-type",
        Severity::Info,
        at,
        format!("line of type {kind:?} is unknown to this version; kept as is"),
    )
}

/// What the whole rollout lacks for Codex: a `session_meta` line, a prompt.
pub(super) fn whole_file_diagnostics(
    file: &str,
    have_meta: bool,
    user_messages: usize,
    nodes: usize,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if !have_meta {
        out.push(diag(
            "codex-no-session-meta",
            Severity::Warning,
            &Location::file(file),
            "no session_meta line: Codex cannot list or resume this rollout".into(),
        ));
    }
    if user_messages == 0 && nodes > 0 {
        out.push(diag(
            "codex-no-user-message",
            Severity::Info,
            &Location::file(file),
            "no event_msg user_message line: `codex resume` does not offer this rollout".into(),
        ));
    }
    out
}

/// The id of the `k`th node (from 1) read from line `line` (several when lines are glued).
pub(super) fn node_id(line: u64, k: usize) -> String {
    match k {
        1 => format!("line-{line}"),
        k => format!("line-{line}.{k}"),
    }
}

/// The metadata's fields learnt from the whole rollout: the last node's time and id.
pub(super) fn finish_meta(meta: &mut Meta, last_time: Option<String>, head: Option<String>) {
    meta.last_updated = last_time;
    meta.head = head;
    meta.source_format = Some(NAME.into());
}

/// The metadata of the `session_meta` line `text` (read as `value`), which keeps it as its
/// origin.
pub(super) fn read_meta(value: Value, text: &[u8]) -> Meta {
    let Value::Object(mut line) = value else {
        unreachable!("checked by the caller")
    };
    let Some(Value::Object(mut p)) = line.shift_remove("payload") else {
        unreachable!("checked by the caller")
    };
    let mut take = |k: &str| take_string(&mut p, k);
    let id = take("id");
    let start_time = take("timestamp");
    let cwd = take("cwd");
    let tool_version = take("cli_version");
    let git_branch = p
        .get("git")
        .and_then(|g| g.get("branch"))
        .and_then(Value::as_str)
        .map(String::from);
    Meta {
        id,
        start_time,
        cwd,
        tool_version,
        git_branch,
        extra: p,
        origin: Some(Origin::new(NAME, text)),
        ..Meta::default()
    }
}

/// One line as a node (its parent and origin aside).
pub(super) fn read_line(value: Value, id: String) -> Node {
    let whole = |value: Value| Node {
        id: id.clone(),
        parent: None,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: RECORD.into(),
            data: value,
        }),
        extra: Extra::new(),
        origin: None,
    };
    // A line whose type is the name this reader gives lines it keeps whole is kept whole
    // too (its time and type would be lost as a node of that kind).
    let shaped = matches!(&value, Value::Object(o)
        if o.get("timestamp").is_some_and(Value::is_string)
        && o.get("type").is_some_and(|t| t.is_string() && t != RECORD)
        && o.get("payload").is_some_and(Value::is_object));
    if !shaped {
        return whole(value);
    }
    let Value::Object(mut line) = value else {
        unreachable!()
    };
    let timestamp = line
        .shift_remove("timestamp")
        .and_then(|v| v.as_str().map(String::from));
    let kind = line
        .shift_remove("type")
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let Some(Value::Object(payload)) = line.shift_remove("payload") else {
        unreachable!()
    };
    let body = match kind.as_str() {
        "response_item" => super::parse::response_item(payload),
        "compacted" => {
            let mut data = payload;
            let summary = match data.get("message") {
                Some(Value::String(_)) => data
                    .shift_remove("message")
                    .and_then(|v| v.as_str().map(String::from)),
                _ => None,
            };
            Body::Event(Event::Compaction {
                summary,
                tokens_before: None,
                first_kept: None,
                data: Value::Object(data),
            })
        }
        _ => Body::Event(Event::Custom {
            kind,
            data: Value::Object(payload),
        }),
    };
    Node {
        id,
        parent: None,
        timestamp,
        body,
        extra: line,
        origin: None,
    }
}

/// Results get the name of the call they answer (derived, never written back).
pub(super) fn name_results(nodes: &mut [Node]) {
    let mut names = Names::default();
    for node in nodes {
        if let Some(m) = node.message_mut() {
            name_results_of(&mut names, m);
        }
    }
}

/// [`name_results`] for one message after those `names` saw: its calls noted, its results
/// named; the names of its tool results, in the order of its parts.
pub(super) fn name_results_of(names: &mut Names, m: &mut Message) -> Vec<Option<String>> {
    let mut named = Vec::new();
    for p in &mut m.parts {
        match &mut p.content {
            Content::ToolCall {
                id: Some(id), name, ..
            } => names.call(id, name),
            Content::ToolResult {
                call_id: Some(id),
                name,
                ..
            } => {
                *name = names.result(id);
                named.push(name.clone());
            }
            Content::ToolResult { name, .. } => named.push(name.clone()),
            _ => {}
        }
    }
    named
}

/// The names of the calls seen so far, by call id: a result gets the name of the last call
/// before it with its id.
#[derive(Default)]
pub(crate) struct Names(HashMap<String, String>);

impl Names {
    pub(super) fn call(&mut self, id: &str, name: &str) {
        self.0.insert(id.to_string(), name.to_string());
    }

    pub(super) fn result(&self, id: &str) -> Option<String> {
        self.0.get(id).cloned()
    }
}
