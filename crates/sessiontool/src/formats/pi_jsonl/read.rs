//! Lines to a session: the header to metadata, each entry to a node (version 1 entries chained
//! in file order under derived ids), and the hints that make the writer give back the bytes.

use crate::formats::record_value;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::{Input, ReadError, ReadOutcome, pi_style};
use super::entry::read_entry;
use super::js;
use super::native::native_entry;
use super::write::{Layout, apply_key_hints, header, key_hint};
use super::{
    HINT_HEADER_RAW, HINT_ID, HINT_KEYS, HINT_NO_HEADER, HINT_NO_ID, HINT_RAW, HINT_VERSION,
    LINE_HINTS, NAME, RECORD,
};
use crate::diag::{Diagnostic, Location, Severity};
use crate::model::{Body, Event, Extra, Meta, Node, Session};

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    let (records, mut diagnostics, mut meta) = pi_style::start_read(input, NAME, &LINE_HINTS);
    let mut nodes: Vec<Node> = Vec::with_capacity(records.len());
    let mut ids = Ids {
        taken: HashSet::with_capacity(records.len()),
        ..Ids::default()
    };
    // pi's own entry list (every line that parses, the header first): what version 1's
    // `firstKeptEntryIndex` counts in.
    let mut entry_ids: Vec<Option<String>> = Vec::with_capacity(records.len());
    for (i, rec) in records.iter().enumerate() {
        let at = Location::at(input.name, rec.span.line, rec.span.offset);
        let text: &[u8] = &rec.bytes;
        let value = record_value(text, &at, &mut diagnostics);
        if i == 0 {
            if let Ok(Value::Object(h)) = &value
                && h.get("type").and_then(Value::as_str) == Some("session")
            {
                read_header(h.clone(), text, &mut meta, &at, &mut diagnostics);
                entry_ids.push(None);
                continue;
            }
            meta.hints.insert(HINT_NO_HEADER.into(), true.into());
            diagnostics.push(Diagnostic {
                code: "pi-no-header",
                severity: Severity::Error,
                location: at.clone(),
                message: "the first line is not a session header; pi would overwrite this file \
                          with a new session, losing its content"
                    .into(),
            });
        }
        let prev = nodes.last().map(|n| n.id.clone());
        let node = match value {
            Ok(Value::Object(map)) => {
                let node = entry_node(
                    map,
                    text,
                    rec.span.line,
                    prev,
                    &mut ids,
                    &at,
                    &mut diagnostics,
                );
                entry_ids.push(Some(node.id.clone()));
                node
            }
            other => {
                let (value, code, message) = match other {
                    Ok(v) => {
                        entry_ids.push(None);
                        (
                            v,
                            "pi-not-an-entry",
                            "line is not a JSON object; kept as is",
                        )
                    }
                    Err(_) => (
                        Value::String(String::from_utf8_lossy(text).into_owned()),
                        "pi-unparseable",
                        "line cannot be parsed; kept as is",
                    ),
                };
                diagnostics.push(Diagnostic {
                    code,
                    severity: Severity::Warning,
                    location: at,
                    message: message.into(),
                });
                whole_node(value, text, rec.span.line, prev, &mut ids)
            }
        };
        nodes.push(node);
    }
    resolve_first_kept(&mut nodes, &entry_ids);
    meta.head = nodes.last().map(|n| n.id.clone());
    meta.last_updated = nodes.iter().rev().find_map(|n| n.timestamp.clone());
    meta.title = nodes.iter().rev().find_map(|n| match &n.body {
        Body::Event(Event::Title { title, .. }) => title.clone(),
        _ => None,
    });
    crate::diag::sort_in_file_order(&mut diagnostics);
    Ok(ReadOutcome {
        session: Session { meta, nodes },
        diagnostics,
    })
}

fn read_header(
    mut h: Map<String, Value>,
    text: &[u8],
    meta: &mut Meta,
    at: &Location,
    diagnostics: &mut Vec<Diagnostic>,
) {
    h.shift_remove("type");
    if let Some(v) = h.shift_remove("version") {
        meta.hints.insert(HINT_VERSION.into(), v);
    } else {
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
    if js::to_vec(&header(meta)) != text {
        let raw = String::from_utf8_lossy(text).into_owned();
        meta.hints.insert(HINT_HEADER_RAW.into(), raw.into());
    }
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

fn entry_node(
    map: Map<String, Value>,
    text: &[u8],
    line: u64,
    prev: Option<String>,
    ids: &mut Ids,
    at: &Location,
    diagnostics: &mut Vec<Diagnostic>,
) -> Node {
    let layout = Layout::of(&map);
    let own_id = map.get("id").and_then(Value::as_str).map(String::from);
    let mut hints = Extra::new();
    let (id, parent) = match own_id {
        Some(own) => {
            let id = unique(own.clone(), line, ids);
            if id != own {
                diagnostics.push(Diagnostic {
                    code: "pi-duplicate-id",
                    severity: Severity::Warning,
                    location: at.clone(),
                    message: format!(
                        "entry id {own} was used before; read as {id} (written back as {own})"
                    ),
                });
                hints.insert(HINT_ID.into(), own.into());
            }
            let parent = map
                .get("parentId")
                .and_then(Value::as_str)
                .map(String::from);
            (id, parent)
        }
        None => {
            hints.insert(HINT_NO_ID.into(), true.into());
            (unique(format!("v1-{line}"), line, ids), prev)
        }
    };
    let mut node = read_entry(map, id, parent);
    node.hints.extend(hints);
    if let Body::Event(Event::Custom { kind, .. }) = &node.body
        && kind == RECORD
    {
        diagnostics.push(Diagnostic {
            code: "pi-not-an-entry",
            severity: Severity::Warning,
            location: at.clone(),
            message: "line has no string `type`; kept as is".into(),
        });
    }
    keep_layout(&mut node, &layout, text);
    node
}

/// Leaves the hints that make the writer give back `text`: key orders, else the text itself.
fn keep_layout(node: &mut Node, layout: &Layout, text: &[u8]) {
    let built = native_entry(node);
    if js::to_vec(&built) == text {
        return;
    }
    if let Some(hint) = key_hint(layout, &built) {
        let ordered = apply_key_hints(built, Some(&hint));
        node.hints.insert(HINT_KEYS.into(), hint);
        if js::to_vec(&ordered) == text {
            return;
        }
        node.hints.shift_remove(HINT_KEYS);
    }
    let raw = String::from_utf8_lossy(text).into_owned();
    node.hints.insert(HINT_RAW.into(), raw.into());
}

/// A line that is not an entry object, kept whole (version 1 chaining still applies).
fn whole_node(value: Value, text: &[u8], line: u64, prev: Option<String>, ids: &mut Ids) -> Node {
    let mut hints = Extra::new();
    hints.insert(HINT_NO_ID.into(), true.into());
    hints.insert(
        HINT_RAW.into(),
        String::from_utf8_lossy(text).into_owned().into(),
    );
    Node {
        id: unique(format!("line-{line}"), line, ids),
        parent: prev,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: RECORD.into(),
            data: value,
        }),
        extra: Extra::new(),
        hints,
    }
}

/// Version 1 compactions name the first kept entry by its index in pi's entry list.
fn resolve_first_kept(nodes: &mut [Node], entry_ids: &[Option<String>]) {
    for node in nodes {
        if let Body::Event(Event::Compaction {
            first_kept: first_kept @ None,
            data,
            ..
        }) = &mut node.body
            && let Some(i) = data.get("firstKeptEntryIndex").and_then(Value::as_u64)
        {
            *first_kept = entry_ids.get(i as usize).cloned().flatten();
        }
    }
}
