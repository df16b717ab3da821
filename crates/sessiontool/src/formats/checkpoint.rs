//! Gemini CLI `/chat save` checkpoints (`checkpoint`): `checkpoint-<encodeURIComponent(tag)>.json`
//! holding the API history, `Content[]`. See FORMATS.md 3.
//!
//! Since v0.16 the file is `{"history": [...], "authType"?: "..."}`; before, a bare array. Both
//! are read; the object is written unless the bare array is asked for (older CLIs), and a file
//! read in one form is written back in that form.
//!
//! The CLI's first history entry is its own context turn, which `/chat resume` hides from the
//! screen (it still goes to the model). So that a converted session shows its first real
//! message, the writer puts a short context turn first unless the session already starts with
//! one (or `checkpoint_no_context` is set); the entries after it are exactly the conversation.
//!
//! The API returns function calls without ids and Gemini CLI saves them so, while it gives
//! each response an id: the reader gives a call the id of the response that answers it (see
//! `pair_call_ids`), so every other format pairs them, and the writer takes it off again.

pub mod close_calls;
mod target;

use std::path::Path;

use serde_json::{Map, Value};

use super::gemini_content::{
    gemini_role, is_gemini_family, parts_from_union, parts_to_json, role_from_gemini, to_api_parts,
};
use super::judge::file_name;
use super::one_branch::one_branch;
use super::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
    document_tail, tail_as_read, to_pretty_js, trim_start,
};
use crate::diag::{Diagnostic, Location, LossReport, Severity};
use crate::formats::{Reader, Repairer, Rules, Writer};
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role, Session};
use target::TARGET;

pub struct Checkpoint;

pub const NAME: &str = "checkpoint";

/// Event kinds for history entries that are not conversation: the CLI's own context turn (and
/// the model's "Got it" reply older CLIs put after it), and entries that are not objects. They
/// are written back only into a checkpoint; other formats' tools add their own context.
const CONTEXT_EVENT: &str = "checkpoint.context";
const ENTRY_EVENT: &str = "checkpoint.entry";
/// The reply Gemini CLI up to v0.7 wrote after its context turn.
const CONTEXT_REPLY: &str = "Got it. Thanks for the context!";

/// The first words of the context turns Gemini CLI itself writes, across versions.
const CONTEXT_STARTS: &[&str] = &[
    "<session_context>",
    "This is the Gemini CLI",
    "Okay, just setting up the context",
];

/// The context turn this writer adds, in the CLI's own wrapper (its resume skips such turns
/// when it shows history).
const CONTEXT_TEXT: &str = "<session_context>\nThis conversation was restored from a saved session by sessiontool.\n</session_context>";

impl Format for Checkpoint {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Gemini CLI /chat save checkpoint (Content[] or {history, authType})"
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
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    gemini_parts: true,
    ..Rules::DOCUMENT
};

impl Reader for Checkpoint {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        let head = trim_start(head);
        let named = file_name(path).is_some_and(|n| self.claims_name(n) > 0);
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let looks = if head.starts_with(b"[") {
            compact.starts_with("[{\"role\":")
                || compact.starts_with("[{\"parts\":")
                || compact == "[]"
        } else if head.starts_with(b"{") {
            compact.starts_with("{\"history\":")
        } else {
            false
        };
        match (looks, named) {
            (true, true) => 95,
            (true, false) => 80,
            (false, true) if head.starts_with(b"[") || head.starts_with(b"{") => 30,
            _ => 0,
        }
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        let (value, lossy) = super::json_document::document_value(input)?;
        let mut meta = Meta {
            source_format: Some(NAME.into()),
            ..Meta::default()
        };
        // The session's origin: the document's form, `[]` or `{}` (the history is the nodes',
        // the object's other fields the metadata's extra).
        let history = match value {
            Value::Array(h) => {
                meta.origin = Some(Origin::new(NAME, b"[]"));
                h
            }
            Value::Object(mut o) => match o.shift_remove("history") {
                Some(Value::Array(h)) => {
                    meta.origin = Some(Origin::new(NAME, b"{}"));
                    meta.extra = o;
                    h
                }
                _ => return Err(not_a_checkpoint(input.name)),
            },
            _ => return Err(not_a_checkpoint(input.name)),
        };
        meta.tail = document_tail(NAME, input.bytes);
        let mut diagnostics = Vec::new();
        if !lossy.is_lossless() {
            let read_as = "the checkpoint is read as Gemini CLI reads it";
            let at = Location::file(input.name);
            diagnostics.push(super::lossy_said(&lossy, at, read_as));
        }
        let mut nodes: Vec<Node> = Vec::with_capacity(history.len());
        for (i, entry) in history.into_iter().enumerate() {
            let parent = nodes.last().map(|n| n.id.clone());
            let id = format!("{}", i + 1);
            // A node's origin: its entry, as parsed (the writer reads whether it had `parts`
            // and which ids the reader gave its parts from it).
            let origin = Origin::new(NAME, &serde_json::to_vec(&entry).unwrap_or_default());
            let Value::Object(mut content) = entry else {
                diagnostics.push(Diagnostic {
                    code: "entry-not-object",
                    severity: Severity::Warning,
                    location: Location::file(input.name),
                    message: format!("history entry {} is not an object; kept as is", i + 1),
                });
                nodes.push(event_node(id, parent, ENTRY_EVENT, entry));
                continue;
            };
            let role = content
                .shift_remove("role")
                .and_then(|r| r.as_str().map(String::from));
            let parts = match content.shift_remove("parts") {
                Some(p) => parts_from_union(&p),
                None => Vec::new(),
            };
            let after_context = nodes.len() == 1 && nodes[0].message().is_none();
            if (i == 0 && is_context(&parts))
                || (after_context && role.as_deref() == Some("model") && is_context_reply(&parts))
            {
                content.insert("role".into(), role.clone().into());
                content.insert("parts".into(), parts_to_json(&parts));
                let ordered = super::ordered(content, &["role", "parts"]);
                nodes.push(event_node(
                    id,
                    parent,
                    CONTEXT_EVENT,
                    Value::Object(ordered),
                ));
                continue;
            }
            let mut m = Message::new(role_from_gemini(role.as_deref(), &parts), parts);
            if let Some(r) = role.filter(|r| r != "user" && r != "model") {
                // Keep an unusual role word so it is written back as it was.
                m.extra.insert("role".into(), r.into());
            }
            m.extra.extend(content);
            nodes.push(node(id, parent, m, origin));
        }
        pair_call_ids(&mut nodes);
        Ok(ReadOutcome {
            session: Session { meta, nodes },
            diagnostics,
        })
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        #[derive(serde::Deserialize)]
        struct K<'a> {
            #[serde(borrow)]
            role: Option<std::borrow::Cow<'a, str>>,
        }
        let k: K = serde_json::from_slice(record).ok()?;
        Some(Keys {
            kind: k.role,
            ..Keys::default()
        })
    }
}

impl Writer for Checkpoint {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let mut losses = LossReport::default();
        let mut session = one_branch(
            session,
            options,
            "nodes on other branches (a checkpoint holds one branch; choose with --leaf)",
            &mut losses,
        )?;
        let own = session.meta.source_format.as_deref() == Some(NAME);
        if !is_gemini_family(session.meta.source_format.as_deref()) {
            to_api_parts(&mut session, &mut losses);
        }
        // Parts of these formats are Gemini API parts: their unknown fields belong in a part.
        let gemini_parts = own
            || session
                .meta
                .source_format
                .as_deref()
                .and_then(super::by_name)
                .is_some_and(|f| f.gemini_parts());
        let mut history = Vec::with_capacity(session.nodes.len() + 1);
        let starts_with_context = session.nodes.first().is_some_and(|n| {
            matches!(&n.body, Body::Event(Event::Custom { kind, .. }) if kind == CONTEXT_EVENT)
                || n.message().is_some_and(|m| is_context(&m.parts))
        });
        if !own
            && !starts_with_context
            && !options.checkpoint_no_context
            && !session.nodes.is_empty()
        {
            history.push(content(
                "user",
                vec![Part::text(CONTEXT_TEXT)],
                &Extra::new(),
                false,
            ));
        }
        for node in &session.nodes {
            let m = match &node.body {
                Body::Message(m) => m,
                Body::Event(Event::Custom { kind, data })
                    if kind == CONTEXT_EVENT || kind == ENTRY_EVENT =>
                {
                    history.push(data.clone());
                    continue;
                }
                Body::Event(_) => {
                    losses.add(
                        "events",
                        1,
                        "session events (a checkpoint holds only the API history)",
                    );
                    continue;
                }
            };
            let Some(role) = gemini_role(m.role, &m.parts) else {
                losses.add(
                    "notices",
                    1,
                    "info/warning/error notices (never sent to the model)",
                );
                continue;
            };
            let mut parts = m.parts.clone();
            let entry = own.then(|| entry_as_read(node)).flatten();
            if let Some(entry) = &entry {
                unfill_ids(&mut parts, entry);
            } else if !own {
                if m.role == Role::System {
                    losses.add(
                        "system-messages",
                        1,
                        "system or developer instructions, written as a user turn (the API history has no system role)",
                    );
                }
                count_metadata_losses(node, m, &mut losses);
                if !gemini_parts {
                    let dropped: usize = parts.iter_mut().map(Part::strip_extras).sum();
                    losses.add(
                        "part-fields",
                        dropped,
                        "fields the source format keeps on thoughts, tool calls and results (times, display names, descriptions) that are not part of the API content",
                    );
                }
            }
            let role = match own {
                true => m.extra.get("role").and_then(Value::as_str).unwrap_or(role),
                false => role,
            };
            let no_parts =
                parts.is_empty() && entry.as_ref().is_some_and(|e| !e.contains_key("parts"));
            let extra = if own { m.extra.clone() } else { Extra::new() };
            history.push(content(role, parts, &extra, no_parts));
        }
        let array_form = options.checkpoint_array
            || Origin::of(&session.meta.origin, NAME).is_some_and(|d| d.starts_with(b"["));
        let value = if array_form {
            Value::Array(history)
        } else {
            let mut obj = Map::new();
            obj.insert("history".into(), Value::Array(history));
            if own {
                obj.extend(session.meta.extra.clone());
            } else {
                TARGET.unplaced.session_fields(&session.meta, &mut losses);
            }
            Value::Object(obj)
        };
        // Only a file of this format keeps its tail; conversions write the CLI's layout.
        let mut bytes = to_pretty_js(&value, false);
        bytes.extend_from_slice(tail_as_read(&session.meta, NAME).unwrap_or_default());
        Ok(Written { bytes, losses })
    }

    /// Named as `/chat save` names it, `checkpoint-<tag>.json`, the stem being the tag.
    fn file_name(&self, stem: &str) -> Option<String> {
        Some({
            match stem.starts_with("checkpoint-") {
                true => format!("{stem}.json"),
                false => format!("checkpoint-{stem}.json"),
            }
        })
    }

    /// `/chat save` writes `checkpoint-<tag>.json`.
    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(n.starts_with("checkpoint-") && n.ends_with(".json")) * 90
    }
}

impl Repairer for Checkpoint {
    fn close_calls_in_document(&self, bytes: &[u8], message: &str) -> Option<(Vec<u8>, usize)> {
        close_calls::close_open_calls(bytes, message)
    }
}

fn not_a_checkpoint(file: &str) -> ReadError {
    ReadError::new(
        Location::file(file),
        "not a checkpoint: expected a JSON array of {role, parts} or an object with `history` (Gemini CLI would load this as an empty conversation)",
    )
}

fn node(id: String, parent: Option<String>, m: Message, origin: Origin) -> Node {
    Node {
        id,
        parent,
        timestamp: None,
        body: Body::Message(m),
        extra: Extra::new(),
        origin: Some(origin),
    }
}

/// The history entry a node was read from (its origin), when it was read from a checkpoint.
fn entry_as_read(node: &Node) -> Option<Map<String, Value>> {
    match crate::json::value::to_value(Origin::of(&node.origin, NAME)?).ok()? {
        (Value::Object(entry), _) => Some(entry),
        _ => None,
    }
}

fn event_node(id: String, parent: Option<String>, kind: &str, data: Value) -> Node {
    Node {
        id,
        parent,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: kind.into(),
            data,
        }),
        extra: Extra::new(),
        origin: None,
    }
}

fn content(role: &str, parts: Vec<Part>, extra: &Extra, no_parts: bool) -> Value {
    let mut obj = Map::new();
    obj.insert("role".into(), role.into());
    if !no_parts {
        obj.insert("parts".into(), parts_to_json(&parts));
    }
    for (k, v) in extra {
        if k != "role" {
            obj.insert(k.clone(), v.clone());
        }
    }
    Value::Object(obj)
}

/// Gives a function call and the response that answers it one id. The Gemini API returns
/// calls without ids, and Gemini CLI records them so while it gives the response the id it
/// made up (`read_file-1772019600120-c0ffee12ab34d`); every other format pairs a call with its
/// result by id. A response answers a call of the model turn before it: the call with its id,
/// else the first call of its name not yet answered. A call without id gets the response's id,
/// a response without id the call's; when neither has one, both get `<name>-<entry>-<n>`.
/// A part's id given here is one its entry (the node's origin) does not have, so a checkpoint
/// is written back as it was ([`unfill_ids`]).
fn pair_call_ids(nodes: &mut [Node]) {
    for i in 1..nodes.len() {
        let (before, after) = nodes.split_at_mut(i);
        let (call_node, answer_node) = (&mut before[i - 1], &mut after[0]);
        let entry = call_node.id.clone();
        let (Some(calls), Some(answers)) = (call_node.message_mut(), answer_node.message_mut())
        else {
            continue;
        };
        if calls.role != Role::Assistant || answers.role == Role::Assistant {
            continue;
        }
        // (part index, id, name) of each call and each response.
        let call_at: Vec<(usize, Option<String>, String)> = calls
            .parts
            .iter()
            .enumerate()
            .filter_map(|(j, p)| match &p.content {
                Content::ToolCall { id, name, .. } => Some((j, id.clone(), name.clone())),
                _ => None,
            })
            .collect();
        let answer_at: Vec<(usize, Option<String>, Option<String>)> = answers
            .parts
            .iter()
            .enumerate()
            .filter_map(|(j, p)| match &p.content {
                Content::ToolResult { call_id, name, .. } => {
                    Some((j, call_id.clone(), name.clone()))
                }
                _ => None,
            })
            .collect();
        if call_at.is_empty() || answer_at.is_empty() {
            continue;
        }
        // Answer k -> call index into call_at: first by id, then by name in order (only where
        // one side has no id to go by).
        let mut used = vec![false; call_at.len()];
        let mut pair: Vec<Option<usize>> = vec![None; answer_at.len()];
        for (k, (_, aid, _)) in answer_at.iter().enumerate() {
            let hit = aid.as_ref().and_then(|aid| {
                (0..call_at.len()).find(|&c| !used[c] && call_at[c].1.as_ref() == Some(aid))
            });
            if let Some(c) = hit {
                used[c] = true;
                pair[k] = Some(c);
            }
        }
        for (k, (_, aid, aname)) in answer_at.iter().enumerate() {
            if pair[k].is_some() {
                continue;
            }
            let hit = (0..call_at.len()).find(|&c| {
                let (_, cid, cname) = &call_at[c];
                !used[c]
                    && (cid.is_none() || aid.is_none())
                    && aname.as_ref().is_none_or(|n| n == cname)
            });
            if let Some(c) = hit {
                used[c] = true;
                pair[k] = Some(c);
            }
        }
        let mut filled_calls = Vec::new();
        let mut filled_answers = Vec::new();
        for (k, c) in pair.into_iter().enumerate() {
            let Some(c) = c else { continue };
            let (cj, cid, cname) = &call_at[c];
            let (aj, aid, _) = &answer_at[k];
            let id = match (cid, aid) {
                (Some(_), Some(_)) => continue,
                (None, Some(id)) | (Some(id), None) => id.clone(),
                (None, None) => format!("{cname}-{entry}-{c}"),
            };
            if cid.is_none() {
                set_id(&mut calls.parts[*cj], Some(id.clone()));
                filled_calls.push(*cj);
            }
            if aid.is_none() {
                set_id(&mut answers.parts[*aj], Some(id));
                filled_answers.push(*aj);
            }
        }
    }
}

fn set_id(part: &mut Part, new: Option<String>) {
    match &mut part.content {
        Content::ToolCall { id, .. } => *id = new,
        Content::ToolResult { call_id, .. } => *call_id = new,
        _ => {}
    }
}

/// Takes off the ids [`pair_call_ids`] gave, for writing a checkpoint back: those of the parts
/// that had none in the node's entry.
fn unfill_ids(parts: &mut [Part], entry: &Map<String, Value>) {
    let Some(read) = entry.get("parts") else {
        return;
    };
    for (part, as_read) in parts.iter_mut().zip(parts_from_union(read)) {
        let had = match &as_read.content {
            Content::ToolCall { id, .. } => id.is_some(),
            Content::ToolResult { call_id, .. } => call_id.is_some(),
            _ => true,
        };
        if !had {
            set_id(part, None);
        }
    }
}

fn is_context_reply(parts: &[Part]) -> bool {
    matches!(parts, [Part { content: Content::Text { text }, .. }] if text == CONTEXT_REPLY)
}

fn is_context(parts: &[Part]) -> bool {
    match parts.first().map(|p| &p.content) {
        Some(Content::Text { text }) => CONTEXT_STARTS.iter().any(|s| text.starts_with(s)),
        _ => false,
    }
}

/// A checkpoint keeps only what the model sees: say what else the session had.
fn count_metadata_losses(node: &Node, m: &Message, losses: &mut LossReport) {
    if node.timestamp.is_some() {
        losses.add("timestamps", 1, "message timestamps");
    }
    if m.model.is_some() {
        losses.add("model-names", 1, "the model name of each reply");
    }
    if m.usage.is_some() {
        losses.add("usage", 1, "token usage");
    }
    for p in &m.parts {
        match &p.content {
            Content::ToolCall { extra, .. } if !extra.is_empty() => losses.add(
                "tool-call-details",
                1,
                "tool call details shown in the CLI (status, display name, description)",
            ),
            Content::ToolResult {
                status, display, ..
            } if status.is_some() || display.is_some() => losses.add(
                "tool-result-display",
                1,
                "tool result status and display text",
            ),
            _ => {}
        }
    }
}
