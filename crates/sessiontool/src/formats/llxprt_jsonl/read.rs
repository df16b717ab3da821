//! Lines to nodes, with the diagnostics for llxprt's own rules (its `ReplayEngine`).

use crate::formats::record_value;
use serde_json::{Map, Value};

use super::super::fields::take_string;
use super::super::{Input, ReadError, ReadOutcome};
use super::blocks::read_icontent;
use super::origin::Kept;
use super::{LINE_TYPES, NAME, RECORD};
use crate::diag::{Diagnostic, Location, Severity};
use crate::engine::lines::Ended;
use crate::model::{Body, Content, Event, Extra, Message, Meta, Node, Origin, Part, Role};
use crate::records::{Finding, Span};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    Ok(crate::engine::lines::read_whole(&super::LlxprtJsonl, input))
}

/// The reader from line to line ([`crate::engine::lines::Fold`]), as llxprt's `ReplayEngine`
/// reads a file: the `session_start` line, the `seq` numbers, each line's node under the one
/// before. The whole reader and the engine's pass one both read every line through it.
struct Fold<'n> {
    name: &'n str,
    meta: Meta,
    have_meta: bool,
    diagnostics: Vec<Diagnostic>,
    last_seq: Option<u64>,
    /// Lines read so far; the line of the last record and its place on that line.
    lines: usize,
    prev_line: u64,
    on_line: u32,
    /// The last node's id and time, and the title of the last title event.
    prev: Option<String>,
    last_time: Option<String>,
    title: Option<Option<String>>,
}

impl crate::engine::lines::Fold for Fold<'_> {
    fn line(&mut self, text: &[u8], span: Span) -> Option<Node> {
        let index = self.lines;
        self.lines += 1;
        let at = Location::at(self.name, span.line, span.offset);
        let value: Value = match record_value(text, &at, &mut self.diagnostics) {
            Ok(v) => v,
            Err(_) => Value::String(String::from_utf8_lossy(text).into_owned()),
        };
        let diagnostics = &mut self.diagnostics;
        let mut say = |code, severity, message: String| {
            diagnostics.push(Diagnostic {
                code,
                severity,
                location: at.clone(),
                message,
            })
        };
        let kind = value.get("type").and_then(Value::as_str).map(String::from);
        match value.get("seq") {
            Some(s) if s.is_u64() => {
                let seq = s.as_u64().unwrap_or(0);
                if self.last_seq.is_some_and(|l| seq <= l) {
                    say(
                        "llxprt-seq-not-increasing",
                        Severity::Error,
                        format!(
                            "seq {seq} does not increase (after {}): llxprt marks the session corrupt, does not offer it for --continue and refuses checkpoints",
                            self.last_seq.unwrap_or(0)
                        ),
                    );
                }
                self.last_seq = Some(self.last_seq.map_or(seq, |l| l.max(seq)));
            }
            _ if value.is_object() => say(
                "llxprt-bad-seq",
                Severity::Warning,
                "line has no valid seq: llxprt skips it".into(),
            ),
            _ => {}
        }
        if index == 0 {
            if kind.as_deref() == Some("session_start")
                && value.get("payload").is_some_and(Value::is_object)
            {
                if !start_is_valid(&value) {
                    say(
                        "llxprt-bad-session-start",
                        Severity::Error,
                        "session_start lacks sessionId, projectHash, provider, model or startTime: llxprt cannot resume this session".into(),
                    );
                }
                self.have_meta = true;
                self.meta = read_meta(&value);
                self.meta.origin = Some(Origin::new(NAME, text));
                return None;
            }
            say(
                "llxprt-no-session-start",
                Severity::Error,
                "the first line is not a session_start: llxprt cannot resume this session".into(),
            );
        } else if kind.as_deref() == Some("session_start") {
            say(
                "llxprt-late-session-start",
                Severity::Warning,
                "session_start after line 1: llxprt ignores it; kept as is".into(),
            );
        }
        self.on_line = if span.line == self.prev_line {
            self.on_line + 1
        } else {
            1
        };
        self.prev_line = span.line;
        let id = match self.on_line {
            1 => format!("line-{}", span.line),
            k => format!("line-{}.{k}", span.line),
        };
        let node = line_node(&value, Some(text), id, self.prev.take());
        if let Body::Event(Event::Custom { kind, .. }) = &node.body {
            if kind == RECORD {
                say(
                    "llxprt-not-a-line",
                    Severity::Warning,
                    "line is not a {v, seq, ts, type, payload} object; kept as is".into(),
                );
            } else if !LINE_TYPES.contains(&kind.as_str()) {
                say(
                    "llxprt-unknown-type",
                    Severity::Info,
                    format!("line of type {kind:?} is unknown to this version; kept as is"),
                );
            } else if matches!(kind.as_str(), "content" | "session_event") {
                say(
                    "llxprt-malformed",
                    Severity::Warning,
                    format!("malformed {kind} line: llxprt skips it; kept as is"),
                );
            }
        }
        if let Some(t) = &node.timestamp {
            self.last_time = Some(t.clone());
        }
        if let Body::Event(Event::Title { title, .. }) = &node.body {
            self.title = Some(title.clone());
        }
        self.prev = Some(node.id.clone());
        Some(node)
    }

    fn end(self: Box<Self>, _damage: &[Finding], findings: Vec<Diagnostic>) -> Ended {
        let Fold {
            name,
            mut meta,
            have_meta,
            diagnostics: said,
            lines,
            prev,
            last_time,
            title,
            ..
        } = *self;
        let mut diagnostics = findings;
        diagnostics.extend(said);
        if !have_meta && lines == 0 {
            diagnostics.push(Diagnostic {
                code: "llxprt-no-session-start",
                severity: Severity::Error,
                location: Location::file(name),
                message: "empty file: llxprt cannot resume it".into(),
            });
        }
        meta.last_updated = last_time;
        meta.head = prev;
        meta.title = title.flatten();
        meta.source_format = Some(NAME.into());
        Ended {
            meta,
            diagnostics,
            ..Ended::default()
        }
    }
}

use crate::engine::MadeFor;
use crate::engine::lines::Line;

impl crate::engine::lines::Lines for super::LlxprtJsonl {
    fn format(&self) -> &'static dyn crate::formats::Format {
        &super::LlxprtJsonl
    }

    fn fold<'n>(&self, name: &'n str) -> Box<dyn crate::engine::lines::Fold + 'n> {
        Box::new(Fold {
            name,
            meta: Meta::default(),
            have_meta: false,
            diagnostics: Vec::new(),
            last_seq: None,
            lines: 0,
            prev_line: 0,
            on_line: 0,
            prev: None,
            last_time: None,
            title: None,
        })
    }

    fn node(&self, bytes: &[u8], at: Line, made_for: MadeFor) -> Node {
        let value = match crate::json::value::to_value(bytes) {
            Ok((v, _)) => v,
            Err(_) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        };
        let origin = (made_for == MadeFor::OwnWriter).then_some(bytes);
        line_node(&value, origin, at.id, at.parent)
    }
}

/// A line (`value`, its `text`) as its node, with the id the reader gave it, under `parent`
/// (the node before it), and its text as its origin (`text`, for this format's writer).
fn line_node(value: &Value, text: Option<&[u8]>, id: String, parent: Option<String>) -> Node {
    let (mut node, _) = read_line(value, id);
    node.parent = parent;
    node.origin = text.map(|text| Origin::new(NAME, text));
    node
}

fn start_is_valid(line: &Value) -> bool {
    ["sessionId", "projectHash", "provider", "model", "startTime"]
        .iter()
        .all(|k| {
            line.pointer(&format!("/payload/{k}"))
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        })
}

/// The metadata of a `session_start` line (its envelope aside).
pub(super) fn read_meta(line: &Value) -> Meta {
    let mut p = line
        .get("payload")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut take = |k: &str| take_string(&mut p, k);
    let id = take("sessionId");
    let project_hash = take("projectHash");
    let cwd = take("cwd");
    let start_time = take("startTime");
    let directories = match p.get("workspaceDirs") {
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            let dirs = a
                .iter()
                .filter_map(|d| d.as_str().map(String::from))
                .collect();
            p.shift_remove("workspaceDirs");
            Some(dirs)
        }
        _ => None,
    };
    Meta {
        id,
        project_hash,
        cwd,
        directories,
        start_time,
        extra: p,
        ..Meta::default()
    }
}

/// One line as a node (its parent and origin aside), and what the line says beyond it.
pub(super) fn read_line(value: &Value, id: String) -> (Node, Kept) {
    let mut kept = Kept::default();
    let mut node = Node {
        id,
        parent: None,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: RECORD.into(),
            data: value.clone(),
        }),
        extra: Extra::new(),
        origin: None,
    };
    let Value::Object(line) = value else {
        return (node, kept);
    };
    let (Some(Value::String(ts)), Some(Value::String(kind)), Some(payload)) =
        (line.get("ts"), line.get("type"), line.get("payload"))
    else {
        return (node, kept);
    };
    if !line.get("seq").is_some_and(Value::is_u64) || !line.get("v").is_some_and(Value::is_number) {
        return (node, kept);
    }
    node.timestamp = Some(ts.clone());
    kept.seq = Some(line["seq"].clone());
    if line["v"] != 1 {
        kept.v = Some(line["v"].clone());
    }
    node.extra = line
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "v" | "seq" | "ts" | "type" | "payload"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    node.body = body(kind, payload, &mut kept);
    (node, kept)
}

fn body(kind: &str, payload: &Value, kept: &mut Kept) -> Body {
    let custom = || {
        Body::Event(Event::Custom {
            kind: kind.into(),
            data: payload.clone(),
        })
    };
    let Some(p) = payload.as_object() else {
        return custom();
    };
    let s = |k: &str| p.get(k).and_then(Value::as_str).map(String::from);
    let only = |keys: &[&str]| p.keys().all(|k| keys.contains(&k.as_str()));
    match kind {
        "content" if only(&["content"]) => match p.get("content").and_then(read_icontent) {
            Some((m, keys)) => {
                kept.metadata = keys;
                Body::Message(m)
            }
            None => custom(),
        },
        "compressed" => Body::Event(Event::Compaction {
            summary: p
                .get("summary")
                .and_then(read_icontent)
                .map(|(m, _)| m.text()),
            tokens_before: None,
            first_kept: None,
            data: payload.clone(),
        }),
        "rewind" => Body::Event(Event::Rewind {
            target: None,
            count: p.get("itemsRemoved").and_then(Value::as_u64),
            data: payload.clone(),
        }),
        "provider_switch" => Body::Event(Event::ModelChange {
            provider: s("provider"),
            model: s("model"),
            data: payload.clone(),
        }),
        "session_event" if only(&["severity", "message"]) => {
            let role = match s("severity").as_deref() {
                Some("info") => Role::Info,
                Some("warning") => Role::Warning,
                Some("error") => Role::Error,
                _ => return custom(),
            };
            match s("message") {
                Some(text) => {
                    Body::Message(Message::new(role, vec![Part::new(Content::Text { text })]))
                }
                None => custom(),
            }
        }
        "session_metadata" | "session_named" => {
            let field = if kind == "session_named" {
                "name"
            } else {
                "title"
            };
            if kind == "session_named" {
                kept.kind = Some(kind.into());
            }
            Body::Event(Event::Title {
                title: s(field),
                data: payload.clone(),
            })
        }
        _ => custom(),
    }
}

/// The payload of an event node, rebuilt from its data with the fields the model names (`kind`:
/// the line type its line had, when its kind does not say it).
pub(super) fn event_payload(event: &Event, kind: Option<&str>) -> Option<(String, Value)> {
    let set = |data: &Value, pairs: &[(&str, Option<Value>)]| {
        let mut o: Map<String, Value> = data.as_object().cloned().unwrap_or_default();
        for (k, v) in pairs {
            if let Some(v) = v {
                o.insert((*k).into(), v.clone());
            }
        }
        Value::Object(o)
    };
    Some(match event {
        Event::Rewind { count, data, .. } => (
            "rewind".into(),
            set(data, &[("itemsRemoved", count.map(Value::from))]),
        ),
        Event::ModelChange {
            provider,
            model,
            data,
        } => (
            "provider_switch".into(),
            set(
                data,
                &[
                    ("provider", provider.clone().map(Value::from)),
                    ("model", model.clone().map(Value::from)),
                ],
            ),
        ),
        Event::Title { title, data } => {
            let kind = kind.unwrap_or("session_metadata");
            let field = if kind == "session_named" {
                "name"
            } else {
                "title"
            };
            (
                kind.into(),
                set(data, &[(field, title.clone().map(Value::from))]),
            )
        }
        Event::Compaction { data, .. } if data.is_object() => ("compressed".into(), data.clone()),
        Event::Custom { kind, data } if kind != RECORD => (kind.clone(), data.clone()),
        _ => return None,
    })
}
