//! Lines to a session: the header to metadata, each entry to a node (version 1 entries chained
//! in file order under derived ids), each keeping its line (the header's: the session's) as its
//! origin for the writer (`origin`).

use crate::formats::record_value;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::{Input, ReadError, ReadOutcome, pi_style};
use super::entry::read_entry;
use super::{NAME, RECORD};
use crate::diag::{Diagnostic, Location, Severity};
use crate::engine::lines::Ended;
use crate::model::{Body, Event, Extra, Meta, Node, Origin};
use crate::records::{Finding, Span};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    Ok(crate::engine::lines::read_whole(&super::PiJsonl, input))
}

/// The reader from line to line ([`crate::engine::lines::Fold`]): what it knows of the lines
/// before (the metadata, the ids given, pi's entry list, the last node) and what it said. The
/// whole reader and the engine's pass one both read every line through it.
pub(super) struct Fold<'n> {
    name: &'n str,
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    ids: Ids,
    /// pi's own entry list (every line that parses, the header first): what version 1's
    /// `firstKeptEntryIndex` counts in.
    entry_ids: Vec<Option<String>>,
    /// The last node's id (a version 1 entry hangs under it) and time, the last title set.
    prev: Option<String>,
    last_time: Option<String>,
    title: Option<String>,
    /// Nodes made, and the version 1 compactions among them: the entry each keeps from.
    nodes: u32,
    kept: Vec<(u32, usize)>,
    /// Lines read so far.
    lines: usize,
}

impl<'n> Fold<'n> {
    /// Before the first line of the file called `name`.
    pub(super) fn new(name: &'n str) -> Self {
        Fold {
            name,
            meta: Meta {
                source_format: Some(NAME.into()),
                ..Meta::default()
            },
            diagnostics: Vec::new(),
            ids: Ids::default(),
            entry_ids: Vec::new(),
            prev: None,
            last_time: None,
            title: None,
            nodes: 0,
            kept: Vec::new(),
            lines: 0,
        }
    }

    /// The next line (`text`, on line `line` at byte `offset`): its node, or `None` for the
    /// session header.
    fn record(&mut self, text: &[u8], line: u64, offset: u64) -> Option<Node> {
        let at = Location::at(self.name, line, offset);
        let first = self.lines == 0;
        self.lines += 1;
        let value = record_value(text, &at, &mut self.diagnostics);
        if first {
            if let Ok(Value::Object(h)) = &value
                && h.get("type").and_then(Value::as_str) == Some("session")
            {
                read_header(h.clone(), text, &mut self.meta, &at, &mut self.diagnostics);
                self.entry_ids.push(None);
                return None;
            }
            // The file had no header line (written back without one).
            self.meta.origin = Some(Origin::new(NAME, b""));
            self.diagnostics.push(Diagnostic {
                code: "pi-no-header",
                severity: Severity::Error,
                location: at.clone(),
                message: "the first line is not a session header; pi would overwrite this file \
                          with a new session, losing its content"
                    .into(),
            });
        }
        let prev = self.prev.take();
        let node = match value {
            Ok(Value::Object(map)) => {
                let own = map.get("id").and_then(Value::as_str).map(String::from);
                let (id, parent) = match &own {
                    Some(own) => {
                        let id = unique(own.clone(), line, &mut self.ids);
                        if id != *own {
                            self.diagnostics.push(Diagnostic {
                                code: "pi-duplicate-id",
                                severity: Severity::Warning,
                                location: at.clone(),
                                message: format!(
                                    "entry id {own} was used before; read as {id} (written back as {own})"
                                ),
                            });
                        }
                        (id, entry_parent(&map))
                    }
                    None => (unique(format!("v1-{line}"), line, &mut self.ids), prev),
                };
                let node = entry_node(map, Some(text), id, parent);
                if is_whole(&node) {
                    self.diagnostics.push(Diagnostic {
                        code: "pi-not-an-entry",
                        severity: Severity::Warning,
                        location: at,
                        message: "line has no string `type`; kept as is".into(),
                    });
                }
                self.entry_ids.push(Some(node.id.clone()));
                node
            }
            other => {
                let (value, code, message) = match other {
                    Ok(v) => {
                        self.entry_ids.push(None);
                        (
                            v,
                            "pi-not-an-entry",
                            "line is not a JSON object; kept as is",
                        )
                    }
                    Err(_) => (
                        unparsed(text),
                        "pi-unparseable",
                        "line cannot be parsed; kept as is",
                    ),
                };
                self.diagnostics.push(Diagnostic {
                    code,
                    severity: Severity::Warning,
                    location: at,
                    message: message.into(),
                });
                let id = unique(format!("line-{line}"), line, &mut self.ids);
                whole_node(value, Some(text), id, prev)
            }
        };
        if let Some(k) = kept_index(&node) {
            self.kept.push((self.nodes, k));
        }
        if let Some(t) = &node.timestamp {
            self.last_time = Some(t.clone());
        }
        if let Some(t) = title_of(&node) {
            self.title = Some(t);
        }
        self.nodes += 1;
        self.prev = Some(node.id.clone());
        Some(node)
    }
}

impl crate::engine::lines::Fold for Fold<'_> {
    fn line(&mut self, text: &[u8], span: Span) -> Option<Node> {
        self.record(text, span.line, span.offset)
    }

    fn end(self: Box<Self>, damage: &[Finding], findings: Vec<Diagnostic>) -> Ended {
        let Fold {
            mut meta,
            diagnostics: said,
            entry_ids,
            prev,
            last_time,
            title,
            kept,
            ..
        } = *self;
        pi_style::end_meta(&mut meta, NAME, damage, prev, last_time);
        meta.title = title;
        let mut diagnostics = findings;
        diagnostics.extend(said);
        crate::diag::sort_in_file_order(&mut diagnostics);
        let first_kept = kept
            .into_iter()
            .map(|(node, k)| (node, entry_ids.get(k).cloned().flatten()))
            .collect();
        Ended {
            meta,
            diagnostics,
            first_kept,
            ..Ended::default()
        }
    }
}

use crate::engine::MadeFor;
use crate::engine::lines::Line;

impl crate::engine::lines::Lines for super::PiJsonl {
    fn format(&self) -> &'static dyn crate::formats::Format {
        &super::PiJsonl
    }

    fn fold<'n>(&self, name: &'n str) -> Box<dyn crate::engine::lines::Fold + 'n> {
        Box::new(Fold::new(name))
    }

    fn node(&self, bytes: &[u8], at: Line, made_for: MadeFor) -> Node {
        let Line { id, parent, .. } = at;
        let origin = (made_for == MadeFor::OwnWriter).then_some(bytes);
        match crate::json::value::to_value(bytes) {
            Ok((Value::Object(map), _)) => entry_node(map, origin, id, parent),
            Ok((value, _)) => whole_node(value, origin, id, parent),
            Err(_) => whole_node(unparsed(bytes), origin, id, parent),
        }
    }
}

/// What a line that does not parse is kept as: its text (invalid UTF-8 replaced).
pub(super) fn unparsed(text: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(text).into_owned())
}

/// The parent an entry with an id names (`parentId`).
pub(super) fn entry_parent(map: &Map<String, Value>) -> Option<String> {
    map.get("parentId")
        .and_then(Value::as_str)
        .map(String::from)
}

/// Whether a node keeps its line whole (no string `type`).
fn is_whole(node: &Node) -> bool {
    matches!(&node.body, Body::Event(Event::Custom { kind, .. }) if kind == RECORD)
}

/// The title a node sets, when it is a title event that names one.
fn title_of(node: &Node) -> Option<String> {
    match &node.body {
        Body::Event(Event::Title { title, .. }) => title.clone(),
        _ => None,
    }
}

/// A version 1 compaction's first kept entry, by its index in pi's entry list: the index, when
/// the node is such a compaction.
fn kept_index(node: &Node) -> Option<usize> {
    match &node.body {
        Body::Event(Event::Compaction {
            first_kept: None,
            data,
            ..
        }) => data
            .get("firstKeptEntryIndex")
            .and_then(Value::as_u64)
            .map(|i| i as usize),
        _ => None,
    }
}

fn read_header(
    mut h: Map<String, Value>,
    text: &[u8],
    meta: &mut Meta,
    at: &Location,
    diagnostics: &mut Vec<Diagnostic>,
) {
    h.shift_remove("type");
    // The version stays in the header line (the session's origin), for the writer.
    if h.shift_remove("version").is_none() {
        diagnostics.push(Diagnostic {
            code: "pi-version-1",
            severity: Severity::Info,
            location: at.clone(),
            message: "version 1 session (entries without ids); pi rewrites it as version 3 when \
                      it opens it"
                .into(),
        });
    }
    pi_style::read_header(h, meta);
    if meta.id.is_none() {
        diagnostics.push(Diagnostic {
            code: "pi-header-without-id",
            severity: Severity::Error,
            location: at.clone(),
            message: "the session header has no string `id`; pi treats the file as empty and \
                      overwrites it"
                .into(),
        });
    }
    meta.origin = Some(Origin::new(NAME, text));
}

/// Ids given so far, and the next suffix to try after each `base~line` taken: entries sharing
/// a base on one line (thousands of records glued together) get their ids in constant time.
#[derive(Default)]
struct Ids {
    taken: HashSet<String>,
    next: HashMap<String, u64>,
}

/// A fresh id for a line: `base`, or `base~line` when taken, then `base~line.2`, ...
fn unique(base: String, line: u64, ids: &mut Ids) -> String {
    let mut id = base;
    if ids.taken.contains(&id) {
        let stem = format!("{id}~{line}");
        let k = ids.next.entry(stem.clone()).or_insert(1);
        id = if *k == 1 {
            stem.clone()
        } else {
            format!("{stem}.{k}")
        };
        while ids.taken.contains(&id) {
            *k += 1;
            id = format!("{stem}.{k}");
        }
    }
    ids.taken.insert(id.clone());
    id
}

/// An entry (`map`, the line's `text`) as its node, with the id and parent the reader gave it
/// (its own id, renamed when an earlier entry had it, or a version 1 entry's), and its line as
/// its origin (`line`, for this format's writer: it gives back its own id from it).
fn entry_node(
    map: Map<String, Value>,
    line: Option<&[u8]>,
    id: String,
    parent: Option<String>,
) -> Node {
    let mut node = read_entry(map, id, parent);
    node.origin = line.map(|text| Origin::new(NAME, text));
    node
}

/// A line that is not an entry object, kept whole (version 1 chaining still applies), with the
/// id the reader gave it (`line`: its origin, for this format's writer).
fn whole_node(value: Value, line: Option<&[u8]>, id: String, parent: Option<String>) -> Node {
    Node {
        id,
        parent,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: RECORD.into(),
            data: value,
        }),
        extra: Extra::new(),
        origin: line.map(|text| Origin::new(NAME, text)),
    }
}
