//! The older Codex rollout layout (`codex-legacy-jsonl`), read only: what codex-rs wrote from
//! its first Rust versions until `RolloutLine` wrapped every line in `{timestamp, type,
//! payload}` (codex-rs/core/src/rollout.rs, then rollout/recorder.rs, spring and summer 2025).
//!
//! - The first line is `SessionMeta` serialized bare: `{"id": "<uuid>", "timestamp":
//!   "<UTC, ms>Z", "instructions": <string|null>}`, later with `"git": {"commit_hash",
//!   "branch", "repository_url"}` (`SessionMetaWithGit`, its `meta` flattened); no `type`.
//! - Every other line is a `ResponseItem` serialized bare (`{"type": "message", "role",
//!   "content"}`, `reasoning`, `function_call {name, arguments, call_id}`,
//!   `function_call_output {call_id, output}`, `local_shell_call`, ...), no timestamp of its
//!   own; or a state line `{"record_type": "state", ...}` (`SessionStateSnapshot`).
//!
//! Codex's own resume read it that way (first line as `SessionMeta`, blank and unparseable
//! lines skipped, state lines apart, the rest as items); claude-code-log's Codex provider and
//! codex-history read the same lines (a typeless first line with an `id` is the session meta,
//! a bare item a response item). Items are read exactly as the items of a `response_item`
//! line of the current layout; each line is one node chained to the one before, with ids from
//! line numbers. sessiontool does not write this layout (Codex has not read it since): convert
//! it to `codex-jsonl` for the Codex of today.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::super::judge;
use super::super::{Confidence, Format, Input, Keys, OpenCall, ReadError, ReadOutcome};
use super::RECORD;
use crate::diag::{Diagnostic, Location, Severity};
use crate::engine::MadeFor;
use crate::engine::lines::{Ended, Line};
use crate::formats::keys::{self, string};
use crate::formats::{HeaderRule, Reader, Repairer, Rules};
use crate::model::{Body, Event, Extra, Meta, Node};
use crate::records::{Finding, Span};

pub struct CodexLegacyJsonl;

pub const NAME: &str = "codex-legacy-jsonl";

/// Kind of the event that holds a `{"record_type": "state"}` line whole.
pub const STATE: &str = "codex-legacy-jsonl.state";

/// The response item types codex-rs wrote bare (and the later ones readers accept).
const ITEM_TYPES: [&str; 8] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "local_shell_call",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
];

impl Format for CodexLegacyJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollout JSONL, the older layout (bare session meta, then bare items); read only"
    }

    fn tool(&self) -> &'static str {
        "codex"
    }

    fn rules(&self) -> &'static Rules {
        &RULES
    }

    fn reader(&self) -> Option<&dyn Reader> {
        Some(self)
    }

    fn repairer(&self) -> Option<&dyn Repairer> {
        Some(self)
    }

    fn two_pass(&self) -> Option<crate::engine::TwoPass> {
        Some(crate::engine::TwoPass(&crate::engine::lines::TwoPassLines(
            &CodexLegacyJsonl,
        )))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// Codex read the first line as `SessionMeta` and failed the resume without it.
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "session_meta",
        missing: "Codex could not resume it",
        first: true,
    }),
    closes_tool_calls: true,
    ..Rules::DOCUMENT
};

impl Reader for CodexLegacyJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        let judge_line = |line: &[u8]| judge::json_line(line, judge_object, |_| None);
        let _ = path;
        crate::formats::judge_lines(head, judge_line).unwrap_or(0)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        legacy_keys(record)
    }

    fn is_context_message(&self, user_text: &str) -> bool {
        super::is_context_message(user_text)
    }
}

impl Repairer for CodexLegacyJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
            return None;
        };
        let item = match source.get("type").and_then(Value::as_str) {
            Some("custom_tool_call") => "custom_tool_call_output",
            _ => "function_call_output",
        };
        let mut p = Map::new();
        p.insert("type".into(), item.into());
        p.insert("call_id".into(), call.call_id.into());
        p.insert("output".into(), call.message.into());
        serde_json::to_vec(&p).ok()
    }
}

/// The session meta line: an object with string `id` and `timestamp` and no `type` (no other
/// tool writes such a first line); a bare response item is this layout too, less surely.
fn judge_object(o: &Map<String, Value>) -> Option<Confidence> {
    if o.contains_key("uuid") || o.contains_key("sessionId") || o.contains_key("payload") {
        return Some(0);
    }
    if is_meta_for_detection(o) {
        return Some(90);
    }
    if o.get("record_type").and_then(Value::as_str) == Some("state") {
        return None;
    }
    match o.get("type").and_then(Value::as_str) {
        Some(t) if ITEM_TYPES.contains(&t) && !o.contains_key("timestamp") => {
            let shaped = o.contains_key("role") || o.contains_key("call_id");
            Some(if shaped { 60 } else { 0 })
        }
        _ => Some(0),
    }
}

/// The fields `SessionMeta` (and `SessionMetaWithGit`) had in this layout, and the few a
/// transitional writer added; a line with any other key is not this meta (a pi or agent
/// header whose `type` key was damaged has `id` and `timestamp` too).
const META_KEYS: [&str; 7] = [
    "id",
    "timestamp",
    "instructions",
    "git",
    "cwd",
    "originator",
    "cli_version",
];

fn is_meta_for_detection(o: &Map<String, Value>) -> bool {
    is_meta(o) && o.keys().all(|k| META_KEYS.contains(&k.as_str()))
}

/// The meta as Codex read it: `SessionMeta` from a typeless line with `id` and `timestamp`
/// (serde passing over any other field).
fn is_meta(o: &Map<String, Value>) -> bool {
    !o.contains_key("type")
        && o.get("id").is_some_and(Value::is_string)
        && o.get("timestamp").is_some_and(Value::is_string)
}

fn legacy_keys(record: &[u8]) -> Option<Keys<'_>> {
    let l = keys::record(record)?;
    if let Some(refused) = super::keys::refused(&l) {
        return Some(refused);
    }
    let [kind, id, timestamp, record_type] = l.pick(["type", "id", "timestamp", "record_type"]);
    let mut k = Keys::default();
    if string(record_type).as_deref() == Some("state") {
        k.kind = Some("state".into());
    } else if kind.is_some() {
        k.kind = Some("response_item".into());
        if string(kind).is_none() {
            k.missing.push("type");
        }
        super::keys::item_keys(Some(*l), &mut k);
    } else if string(id).is_some() && string(timestamp).is_some() {
        k.kind = Some("session_meta".into());
    } else {
        k.missing.push("type");
    }
    Some(k)
}

fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    Ok(crate::engine::lines::read_whole(&CodexLegacyJsonl, input))
}

/// The reader, a fold over the lines (the whole reader's and the engine's pass one): the meta
/// from the first meta line, each other line one node chained to the one before, with its id
/// from its line number; a result named by the last call before it with its id.
struct Fold<'n> {
    name: &'n str,
    meta: Option<Meta>,
    diagnostics: Vec<Diagnostic>,
    /// The last node's id.
    prev: Option<String>,
    nodes: u32,
    names: super::read::Names,
    /// The names the results of a node got from the calls before it (pass two makes a node
    /// from its line alone).
    named: HashMap<u32, Vec<Option<String>>>,
    /// The cwd the first environment context names (this layout's meta has none).
    context_cwd: Option<String>,
}

impl crate::engine::lines::Fold for Fold<'_> {
    fn line(&mut self, text: &[u8], span: Span) -> Option<Node> {
        let at = Location::at(self.name, span.line, span.offset);
        let value = match serde_json::from_slice::<Value>(text) {
            Ok(v) => v,
            Err(e) => {
                self.diagnostics.push(super::read::unparseable(&at, &e));
                Value::String(String::from_utf8_lossy(text).into_owned())
            }
        };
        if self.meta.is_none()
            && let Value::Object(o) = &value
            && is_meta(o)
        {
            if self.nodes > 0 {
                self.diagnostics.push(diag(
                    "codex-meta-not-first",
                    Severity::Warning,
                    &at,
                    "the session meta is not the first line; Codex read it from the first line"
                        .into(),
                ));
            }
            let Value::Object(o) = value else {
                unreachable!("matched above")
            };
            self.meta = Some(read_meta(o));
            return None;
        }
        if line_kind(&value) == LineKind::Other && !value.is_string() {
            self.diagnostics.push(diag(
                "codex-not-a-line",
                Severity::Warning,
                &at,
                "line is neither the session meta nor a response item; kept as is".into(),
            ));
        }
        let parent = self.prev.take();
        Some(self.noted(line_node(value, span.line, parent)))
    }

    fn end(self: Box<Self>, _damage: &[Finding], findings: Vec<Diagnostic>) -> Ended {
        let Fold {
            name,
            meta,
            diagnostics: said,
            prev,
            named,
            context_cwd,
            ..
        } = *self;
        let mut diagnostics = findings;
        diagnostics.extend(said);
        let have_meta = meta.is_some();
        let mut meta = meta.unwrap_or_default();
        if !have_meta {
            diagnostics.push(diag(
                "codex-no-session-meta",
                Severity::Warning,
                &Location::file(name),
                "no session meta line (`{id, timestamp}`) first: Codex could not resume this rollout"
                    .into(),
            ));
        }
        diagnostics.push(diag(
            "codex-legacy-layout",
            Severity::Info,
            &Location::file(name),
            "the older rollout layout (no {timestamp, type, payload} lines): today's Codex does not read it; `sessiontool convert --to codex-jsonl` gives it the current one".into(),
        ));
        if meta.cwd.is_none() {
            meta.cwd = context_cwd;
        }
        // Items carry no time: the session's is the meta's.
        meta.last_updated = meta.start_time.clone();
        meta.head = prev;
        meta.source_format = Some(NAME.into());
        Ended {
            meta,
            diagnostics,
            named,
            ..Ended::default()
        }
    }
}

impl Fold<'_> {
    /// `node`, the next one: its calls noted, its results named, its environment context read.
    fn noted(&mut self, mut node: Node) -> Node {
        let index = self.nodes;
        self.nodes += 1;
        self.prev = Some(node.id.clone());
        if let Some(m) = node.message_mut() {
            let names = super::read::name_results_of(&mut self.names, m);
            if names.iter().any(Option::is_some) {
                self.named.insert(index, names);
            }
        }
        if self.context_cwd.is_none() {
            self.context_cwd = context_cwd(&node);
        }
        node
    }
}

/// The cwd an environment context Codex sent the model names.
fn context_cwd(node: &Node) -> Option<String> {
    let text = node.message()?.text();
    let context = text.trim_start().strip_prefix("<environment_context>")?;
    let (_, rest) = context.split_once("<cwd>")?;
    Some(rest.split_once("</cwd>")?.0.trim().to_string())
}

/// What a line that is not the meta is.
#[derive(PartialEq)]
enum LineKind {
    /// `{"record_type": "state", ...}`.
    State,
    /// A response item: an object with a string `type`.
    Item,
    /// Anything else (kept whole).
    Other,
}

fn line_kind(value: &Value) -> LineKind {
    match value {
        Value::Object(o) if o.get("record_type").and_then(Value::as_str) == Some("state") => {
            LineKind::State
        }
        Value::Object(o) if o.get("type").is_some_and(Value::is_string) => LineKind::Item,
        _ => LineKind::Other,
    }
}

/// The node of a line that is not the meta, `line` its line number, chained to `parent`.
fn line_node(value: Value, line: u64, parent: Option<String>) -> Node {
    let body = match (line_kind(&value), value) {
        (LineKind::State, data) => Body::Event(Event::Custom {
            kind: STATE.into(),
            data,
        }),
        (LineKind::Item, Value::Object(o)) => super::parse::response_item(o),
        (_, data) => Body::Event(Event::Custom {
            kind: RECORD.into(),
            data,
        }),
    };
    let mut node = node(format!("line-{line}"), body);
    node.parent = parent;
    node
}

impl crate::engine::lines::Lines for CodexLegacyJsonl {
    fn format(&self) -> &'static dyn Format {
        &CodexLegacyJsonl
    }

    fn fold<'n>(&self, name: &'n str) -> Box<dyn crate::engine::lines::Fold + 'n> {
        Box::new(Fold {
            name,
            meta: None,
            diagnostics: Vec::new(),
            prev: None,
            nodes: 0,
            names: Default::default(),
            named: HashMap::new(),
            context_cwd: None,
        })
    }

    /// As the fold made it (this layout is not written: no origin is kept).
    fn node(&self, bytes: &[u8], at: Line, _made_for: MadeFor) -> Node {
        let value = serde_json::from_slice::<Value>(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
        let mut node = line_node(value, at.number, at.parent);
        node.id = at.id;
        node
    }
}

fn node(id: String, body: Body) -> Node {
    Node {
        id,
        parent: None,
        timestamp: None,
        body,
        extra: Extra::new(),
        origin: None,
    }
}

fn read_meta(mut p: Map<String, Value>) -> Meta {
    let mut take = |k: &str| super::super::fields::take_string(&mut p, k);
    let id = take("id");
    let start_time = take("timestamp");
    // Not in this layout's meta, but kept where a transitional writer put them.
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
        ..Meta::default()
    }
}

fn diag(code: &'static str, severity: Severity, at: &Location, message: String) -> Diagnostic {
    Diagnostic {
        code,
        severity,
        location: at.clone(),
        message,
    }
}

#[cfg(test)]
#[path = "legacy_two_pass_tests.rs"]
mod two_pass_tests;
