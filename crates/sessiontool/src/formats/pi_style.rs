//! What pi's session JSONL and the Go agent's (modelled on it) share: a `session` header line
//! (`type`, `id`, `timestamp`, `cwd`) before the entries, a file read back line for line, 8-hex
//! entry ids, and tool results that name their call's tool. The field names that differ, and
//! each tool's JSON encoding, stay in each format's module.

use std::collections::HashSet;
use std::io;

use serde_json::{Map, Value};

use super::fields::take_string;
use super::{Written, ordered};
use crate::diag::LossReport;
use crate::engine::reading::Reading;
use crate::engine::runs::each_branch_run;
use crate::engine::target::PassTwo;
use crate::engine::{Job, MadeFor, Output, Route};
use crate::ids::sha256_hex;
use crate::model::{Meta, Node, Origin, Session};

/// A session read from the format `name`, written back: the header line as the file had it
/// (its text while the metadata still reads as it did, else rebuilt by `header`; none when the
/// file had none), one line per node (`entry`), and the file's tail (no final line end where it
/// had none). `version`: the format keeps the header's `version` apart (see [`header_meta`]).
pub(crate) fn write_lines(
    session: &Session,
    name: &'static str,
    version: bool,
    header: impl Fn(&Meta) -> Vec<u8>,
    entry: impl Fn(&Node) -> Vec<u8>,
) -> Written {
    let meta = &session.meta;
    let mut out = Vec::with_capacity(64 * 1024);
    out.extend(header_line(meta, name, version, header));
    for node in &session.nodes {
        out.extend(entry(node));
        out.push(b'\n');
    }
    super::end_lines_as_read(&mut out, meta, name);
    Written {
        bytes: out,
        losses: LossReport::default(),
    }
}

/// The header line of [`write_lines`], line end included: the file's own while the metadata
/// still reads as it did, else rebuilt by `header`; nothing when the file had none.
fn header_line(
    meta: &Meta,
    name: &str,
    version: bool,
    header: impl Fn(&Meta) -> Vec<u8>,
) -> Vec<u8> {
    let mut out = match Origin::of(&meta.origin, name) {
        // The file had no header line.
        Some([]) => return Vec::new(),
        Some(text) => {
            let rebuilt = header(meta);
            let as_read = Meta {
                origin: meta.origin.clone(),
                ..header_meta(text, version)
            };
            if header(&as_read) == rebuilt {
                String::from_utf8_lossy(text).into_owned().into_bytes()
            } else {
                rebuilt
            }
        }
        None => header(meta),
    };
    out.push(b'\n');
    out
}

/// [`write_lines`] for the engine: a session read in two passes from the format `name`,
/// written back into it with the same bytes. Its nodes are made again run by run on the thread
/// pool, and each run's lines made there by `entry` (a line depends on its node alone).
pub(crate) fn lines_back(
    known: Box<dyn Reading>,
    meta: &Meta,
    name: &'static str,
    version: bool,
    header: impl Fn(&Meta) -> Vec<u8>,
    entry: fn(&Node) -> Vec<u8>,
) -> Route {
    Route::Own(Box::new(LinesBack {
        known,
        header: header_line(meta, name, version, header),
        entry,
        // As `end_lines_as_read` ends them.
        no_final_line_end: super::ended_without_line_end(meta, name),
    }))
}

/// See [`lines_back`].
struct LinesBack {
    known: Box<dyn Reading>,
    header: Vec<u8>,
    entry: fn(&Node) -> Vec<u8>,
    no_final_line_end: bool,
}

impl PassTwo for LinesBack {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let LinesBack {
            known,
            header,
            entry,
            no_final_line_end,
        } = *self;
        out.put(&header)?;
        let mut wrote = !header.is_empty();
        let all: Vec<u32> = (0..known.spots().len() as u32).collect();
        let lines_of = |nodes: Vec<Node>| {
            let mut lines = Vec::new();
            for node in &nodes {
                lines.extend(entry(node));
                lines.push(b'\n');
            }
            lines
        };
        each_branch_run(
            job,
            &*known,
            &all,
            MadeFor::OwnWriter,
            lines_of,
            |_, lines| {
                wrote |= !lines.is_empty();
                out.put(lines)
            },
        )?;
        // Every line put ended with its line end: the last one is taken back.
        if no_final_line_end && wrote {
            out.take_back_last()?;
        }
        Ok(LossReport::default())
    }
}

/// The metadata a header line's `text` gives (`version`: whether the format keeps the header's
/// `version` apart, as pi does, rather than among its other fields); none of its fields when
/// the text is not a JSON object.
fn header_meta(text: &[u8], version: bool) -> Meta {
    let mut meta = Meta::default();
    if let Ok((Value::Object(mut h), _)) = crate::json::value::to_value(text) {
        h.shift_remove("type");
        if version {
            h.shift_remove("version");
        }
        read_header(h, &mut meta);
    }
    meta
}

/// The header of a session read from the format `name`: `type`, `version` (when given), `id`,
/// `timestamp`, `cwd` and the fields kept in `meta.extra`, in the order of the header line it
/// was read from, else in `order`.
pub(crate) fn header(meta: &Meta, name: &str, version: Option<&Value>, order: &[&str]) -> Value {
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
    let h = ordered(h, order);
    let as_read =
        Origin::of(&meta.origin, name).and_then(|text| {
            match crate::json::value::to_value(text).ok()? {
                (Value::Object(line), _) => Some(line.keys().cloned().collect::<Vec<_>>()),
                _ => None,
            }
        });
    match as_read {
        Some(keys) => Value::Object(ordered(
            h,
            &keys.iter().map(String::as_str).collect::<Vec<_>>(),
        )),
        None => Value::Object(h),
    }
}

/// The inverse of [`header`]: `id`, `timestamp` and `cwd` into `meta`, the other fields of `h`
/// (`type` and `version` taken out already) into `meta.extra`.
pub(crate) fn read_header(mut h: Map<String, Value>, meta: &mut Meta) {
    meta.id = take_string(&mut h, "id");
    meta.start_time = take_string(&mut h, "timestamp");
    meta.cwd = take_string(&mut h, "cwd");
    meta.extra = h;
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

/// The metadata's end as the pi-style readers (pi, the Go agent) give it: the file's tail
/// (`name`: the format's), the head and the last time.
pub(crate) fn end_meta(
    meta: &mut Meta,
    name: &'static str,
    damage: &[crate::records::Finding],
    head: Option<String>,
    last_time: Option<String>,
) {
    meta.tail = super::lines_tail(name, damage);
    meta.head = head;
    meta.last_updated = last_time;
}
