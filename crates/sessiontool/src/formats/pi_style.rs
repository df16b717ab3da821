//! What pi's session JSONL and the Go agent's (modelled on it) share: a `session` header line
//! (`type`, `id`, `timestamp`, `cwd`) before the entries, a file read back line for line, 8-hex
//! entry ids, and tool results that name their call's tool. The field names that differ, and
//! each tool's JSON encoding, stay in each format's module.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::fields::take_string;
use super::{WriteOptions, Written, ordered};
use crate::diag::LossReport;
use crate::ids::{derived_uuid, sha256_hex};
use crate::model::{Meta, Node, Session};

/// The meta hints, named by each format, that let a session read from it be written back as it
/// was.
pub(crate) struct Hints {
    /// The file has no header line.
    pub no_header: &'static str,
    /// The header's own text, when rebuilding it would not give the same bytes.
    pub header_raw: &'static str,
    /// The last line has no final newline.
    pub no_final_newline: &'static str,
}

/// A session read from the format, written back: the header line (its kept text, else
/// `header`) unless the file had none, one line per node (`entry`), and no final newline where
/// the file had none.
pub(crate) fn write_lines(
    session: &Session,
    hints: &Hints,
    header: impl FnOnce(&Meta) -> Vec<u8>,
    entry: impl Fn(&Node) -> Vec<u8>,
) -> Written {
    let meta = &session.meta;
    let mut out = Vec::with_capacity(64 * 1024);
    if !meta.hints.contains_key(hints.no_header) {
        match meta.hints.get(hints.header_raw).and_then(Value::as_str) {
            Some(raw) => out.extend_from_slice(raw.as_bytes()),
            None => out.extend(header(meta)),
        }
        out.push(b'\n');
    }
    for node in &session.nodes {
        out.extend(entry(node));
        out.push(b'\n');
    }
    if meta.hints.contains_key(hints.no_final_newline) && out.ends_with(b"\n") {
        out.pop();
    }
    Written {
        bytes: out,
        losses: LossReport::default(),
    }
}

/// The header of a session read from the format: `type`, `version` (when given), `id`,
/// `timestamp`, `cwd` and the fields kept in `meta.extra`, in `order`.
pub(crate) fn header(meta: &Meta, version: Option<&Value>, order: &[&str]) -> Value {
    let mut h = Map::new();
    h.insert("type".into(), "session".into());
    if let Some(v) = version {
        h.insert("version".into(), v.clone());
    }
    if let Some(id) = &meta.id {
        h.insert("id".into(), id.clone().into());
    }
    if let Some(ts) = &meta.start_time {
        h.insert("timestamp".into(), ts.clone().into());
    }
    if let Some(cwd) = &meta.cwd {
        h.insert("cwd".into(), cwd.clone().into());
    }
    h.extend(meta.extra.clone());
    Value::Object(ordered(h, order))
}

/// The inverse of [`header`]: `id`, `timestamp` and `cwd` into `meta`, the other fields of `h`
/// (`type` and `version` taken out already) into `meta.extra`.
pub(crate) fn read_header(mut h: Map<String, Value>, meta: &mut Meta) {
    meta.id = take_string(&mut h, "id");
    meta.start_time = take_string(&mut h, "timestamp");
    meta.cwd = take_string(&mut h, "cwd");
    meta.extra = h;
}

/// What the header of a session from another format records.
pub(crate) struct Foreign {
    pub id: String,
    pub start: String,
    pub cwd: String,
}

/// The header facts of `session`: its id (one derived from `format` and its size when it has
/// none), its start (its own, else its first node's time, else `now`, else `epoch`) and its
/// working directory (`--cwd` when it names none; `""` and a loss entry when neither does, that
/// names `header`, the line that gets it).
pub(crate) fn foreign(
    session: &Session,
    options: &WriteOptions,
    format: &str,
    epoch: &str,
    header: &str,
    losses: &mut LossReport,
) -> Foreign {
    let first_time = session.nodes.iter().find_map(|n| n.timestamp.clone());
    let nodes = (session.nodes.len(), first_time);
    foreign_of(
        &session.meta,
        nodes,
        options,
        (format, epoch),
        header,
        losses,
    )
}

/// [`foreign`] from the metadata and what it takes of the nodes: how many there are and the
/// first time one gives (for a writer that does not hold them).
pub(crate) fn foreign_of(
    meta: &Meta,
    (nodes, first_time): (usize, Option<String>),
    options: &WriteOptions,
    (format, epoch): (&str, &str),
    header: &str,
    losses: &mut LossReport,
) -> Foreign {
    let id = meta
        .id
        .clone()
        .unwrap_or_else(|| derived_uuid(&format!("{format}/{nodes}")));
    let start = meta
        .start_time
        .clone()
        .or(first_time)
        .or_else(|| options.now.clone())
        .unwrap_or_else(|| epoch.into());
    let cwd = meta.cwd.clone().or_else(|| options.cwd.clone());
    if cwd.is_none() {
        losses.add(
            "no-cwd",
            1,
            format!(
                "the session names no working directory; {header} gets \"\" (give one with --cwd)"
            ),
        );
    }
    Foreign {
        id,
        start,
        cwd: cwd.unwrap_or_default(),
    }
}

/// An 8-hex id for the `k`th entry of a node, derived from the session and node ids (the node's
/// own id for its first entry when that is 8 hex digits already), and not in `used`.
pub(crate) fn entry_id(session: &str, node: &str, k: usize, used: &mut HashSet<String>) -> String {
    let is_hex = node.len() == 8 && node.bytes().all(|b| b.is_ascii_hexdigit());
    let mut id = if k == 0 && is_hex {
        node.to_string()
    } else {
        sha256_hex(&format!("{session}/{node}/{k}"))[..8].to_string()
    };
    let mut n = 0;
    while used.contains(&id) {
        n += 1;
        id = sha256_hex(&format!("{session}/{node}/{k}/{n}"))[..8].to_string();
    }
    used.insert(id.clone());
    id
}

/// The `name` of the tool call `call_id` among the content blocks (of type `kind`) of an
/// entry's `message`; `""` when it is not there.
pub(crate) fn call_name(message: Option<&Map<String, Value>>, kind: &str, call_id: &str) -> String {
    message
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks.iter().find_map(|b| {
                (b.get("type")?.as_str()? == kind && b.get("id")?.as_str()? == call_id)
                    .then(|| b.get("name")?.as_str().map(String::from))?
            })
        })
        .unwrap_or_default()
}

/// The metadata's end as the pi-style readers (pi, the Go agent) give it: the hint that the
/// last line has no line break first (the reader starts from it; `no_final_newline`: its name
/// in the format), the head and the last time.
pub(crate) fn end_meta(
    meta: &mut Meta,
    no_final_newline: &str,
    damage: &[crate::records::Finding],
    head: Option<String>,
    last_time: Option<String>,
) {
    if damage
        .iter()
        .any(|f| matches!(f.damage, crate::records::Damage::MissingFinalNewline))
    {
        meta.hints
            .shift_insert(0, no_final_newline.into(), true.into());
    }
    meta.head = head;
    meta.last_updated = last_time;
}
