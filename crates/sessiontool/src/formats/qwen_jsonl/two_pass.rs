//! Qwen Code sessions read in two passes by the engine's views (`show`, `tree`, `list`):
//! pass one keeps per record where it is, its uuid and parent, what kind of node it makes and
//! which session it names, and the session-wide facts [`read`](super::read::read) gathers
//! (the first record's fields, the latest time, the head, the title, every diagnostic); pass
//! two makes the node of one record at a time with the very code `read` uses. What comes out
//! is what `read` gives, node for node, in memory bounded by the number of records.
//!
//! Records sharing a uuid are one node, merged as Qwen Code merges them: the node's place is
//! its first record's, and pass one keeps where the later ones are. The few such groups are
//! merged again from their records at the end of pass one (to say what the merge says) and
//! whenever their node is made.

use std::collections::HashMap;
use std::io;

use rayon::prelude::*;

use serde_json::{Map, Value};

use super::read::{
    Member, RecordType, group_node, is_foreign, join_lines, merge, missing_parent, mixed_sessions,
    not_a_record, record_type, tail_without_uuid_said, unknown_record, unparseable, whole_id,
    whole_node,
};
pub(crate) use super::write::RecordWriter;
use super::write::head_last;
use super::{Common, NAME};
use crate::check::ident::{Ident, QuickMap};
use crate::diag::{Diagnostic, Location, LossReport};
use crate::engine::pass1::{Noted, Pass1, Scan, Spot};
use crate::engine::reading::each_node;
use crate::engine::skeleton::Skeleton;
use crate::engine::view::HeadBranch;
use crate::engine::{MadeFor, Source, pass2};
use crate::formats::gemini_content::{CallPart, call_part};
use crate::formats::{WriteOptions, lossy_diagnostic};
use crate::json::value::to_value;
use crate::json::{Kind, Raw};
use crate::model::{Body, Content, Event, Meta, Node, Origin, Role};
use crate::records::Span;

/// Pass one over a Qwen Code session named `name` (in diagnostics), read from `source` (the
/// records of a uuid's group are read again from it at the end).
pub(crate) struct Scanner<'n> {
    pub name: &'n str,
    pub source: &'n dyn Source,
    /// Read each message's tool calls and results, to count the calls no result answers
    /// ([`Known::open_calls`]; else 0).
    pub calls: bool,
}

/// Merged nodes read again at once on the thread pool ([`Scan::known`]).
const MERGED_WINDOW: usize = 64;

/// The node is a message (`user`, `assistant` or `tool_result`).
const MESSAGE: u8 = 1;
/// The node is a record kept whole (no string `uuid`, or not an object).
const WHOLE: u8 = 2;
/// The record did not parse (kept as its text).
const UNPARSED: u8 = 4;
/// A type the reader does not know (the node keeps the record whole).
const UNKNOWN: u8 = 8;
/// A `user` or an `assistant` message (what `list` counts).
const TALK: u8 = 16;
/// A `user` message.
const USER: u8 = 32;
/// A string `timestamp` (in any of the node's records: the merge keeps the latest).
const TIMED: u8 = 64;
/// A `sessionId` other than the first record's (for a node of one record).
const FOREIGN: u8 = 128;

/// A tool call: its id (when a string) and its name.
type Call = (Option<Box<str>>, Box<str>);

/// What pass one keeps of a record within its block.
struct Rec {
    line: u64,
    offset: u64,
    flags: u8,
    /// The uuid, for a record that has one, and its parent's: as the skeleton interns them,
    /// made on the thread that reads the record (a UUID packs without allocating).
    uuid: Option<Ident>,
    parent: Option<Ident>,
    /// Its `sessionId`, an index into the block's `sessions`.
    session: Option<usize>,
    /// The title of a `custom_title` record.
    title: Option<Box<str>>,
    /// What an unknown type is called in the diagnostic.
    unknown: Option<Box<str>>,
    /// The tool calls of a message and the call ids its results answer.
    calls: Vec<Call>,
    results: Vec<Box<str>>,
}

/// The fields of the first record with a uuid: the session's.
#[derive(Clone, Default)]
struct First {
    common: Common,
    start_time: Option<String>,
    /// Its bytes (the meta's origin).
    origin: Option<Origin>,
}

#[derive(Default)]
pub(crate) struct Block {
    recs: Vec<Rec>,
    /// What reading each record said (lossy values, unparseable lines, records without a
    /// uuid), in record order.
    said: Vec<Diagnostic>,
    /// The `sessionId`s the block's records name.
    sessions: indexmap::IndexSet<String>,
    first: Option<First>,
    last_updated: Option<String>,
}

#[derive(Default)]
pub(crate) struct Acc {
    skeleton: Skeleton,
    /// Per node: its first record (an index into pass one's spots), and its flags.
    first_record: Vec<u32>,
    flags: Vec<u8>,
    /// The node each uuid names (ids of records kept whole are not uuids).
    by_uuid: QuickMap<u32, u32>,
    /// The later records of the nodes made of several, by node.
    more: QuickMap<u32, Vec<u32>>,
    /// The titles of `custom_title` records, by node, in node order.
    titles: Vec<(u32, Box<str>)>,
    /// Unknown record types, by node.
    unknown: Vec<(u32, Box<str>)>,
    /// Each node's tool calls (node, id, name), in node order, and the call ids results
    /// answer.
    calls: Vec<(u32, Option<Box<str>>, Box<str>)>,
    answered: std::collections::HashSet<Box<str>>,
    said: Vec<Diagnostic>,
    first: Option<First>,
    last_updated: Option<String>,
    /// The uuid of the last record that has one (interned).
    head: Option<u32>,
    /// The last record has no uuid: its place.
    tail_without_uuid: Option<(u64, u64)>,
    /// Records kept whole on the current line (their ids count them).
    line: (u64, usize),
}

impl Scan for Scanner<'_> {
    type Block = Block;
    type Acc = Acc;
    type Known = io::Result<Known>;

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        let raw = record.raw;
        let at = || Location::at(self.name, span.line, span.offset);
        let mut rec = Rec {
            line: span.line,
            offset: span.offset,
            flags: WHOLE,
            uuid: None,
            parent: None,
            session: None,
            title: None,
            unknown: None,
            calls: Vec::new(),
            results: Vec::new(),
        };
        // Read as `record_value` reads it: a value built only when serde_json might read the
        // text otherwise than `JSON.parse`, to say so; the fields are read from `raw`.
        if !record.facts.serde_reads_it() {
            match to_value(raw.text().as_bytes()) {
                Ok((_, lossy)) if !lossy.is_lossless() => {
                    block.said.push(lossy_diagnostic(&lossy, at()));
                }
                Ok(_) => {}
                Err(e) => {
                    block.said.push(unparseable(at(), e));
                    rec.flags |= UNPARSED;
                    block.recs.push(rec);
                    return;
                }
            }
        }
        let is_object = raw.kind() == Kind::Object;
        let string = |r: Option<Raw>| r.and_then(|r| r.as_str()).map(|t| t.value.into_owned());
        let [
            uuid,
            parent,
            kind,
            timestamp,
            session,
            subtype,
            payload,
            message,
        ] = if is_object {
            record.pick([
                "uuid",
                "parentUuid",
                "type",
                "timestamp",
                "sessionId",
                "subtype",
                "systemPayload",
                "message",
            ])
        } else {
            [None; 8]
        };
        let Some(uuid) = uuid.and_then(Raw::str_value) else {
            block.said.push(not_a_record(at(), is_object));
            block.recs.push(rec);
            return;
        };
        let timestamp = timestamp.and_then(Raw::str_value);
        let timed = if timestamp.is_some() { TIMED } else { 0 };
        if block.first.is_none() {
            let [cwd, version, git_branch] = record.pick(["cwd", "version", "gitBranch"]);
            block.first = Some(First {
                common: Common {
                    session_id: string(session),
                    cwd: string(cwd),
                    version: string(version),
                    git_branch: string(git_branch),
                },
                start_time: timestamp.as_deref().map(String::from),
                origin: Some(Origin::new(NAME, raw.text().as_bytes())),
            });
        }
        if let Some(ts) = timestamp
            && block.last_updated.as_deref().is_none_or(|l| l < &*ts)
        {
            block.last_updated = Some(ts.into_owned());
        }
        rec.flags = timed;
        let type_text = kind.map(|k| k.as_str().map(|t| t.value));
        let subtype_text = subtype.and_then(Raw::as_str).map(|t| t.value);
        match record_type(
            type_text.as_ref().map(|t| t.as_deref()),
            subtype_text.as_deref(),
        ) {
            RecordType::Message(role) => {
                rec.flags |= match role {
                    Role::User => MESSAGE | TALK | USER,
                    Role::Assistant => MESSAGE | TALK,
                    _ => MESSAGE,
                };
                if let Some(m) = message.filter(|m| self.calls && m.kind() == Kind::Object) {
                    let [parts] = record.pick_within(m, ["parts"]);
                    message_calls(&record, parts, &mut rec);
                }
            }
            RecordType::System if subtype_text.as_deref() == Some("custom_title") => {
                rec.title = payload
                    .and_then(|p| p.get("customTitle"))
                    .and_then(Raw::as_str)
                    .map(|t| t.value.into_owned().into());
            }
            RecordType::System => {}
            RecordType::Unknown(kind) => {
                rec.flags |= UNKNOWN;
                rec.unknown = Some(kind.into());
            }
        }
        rec.parent = parent.and_then(Raw::str_value).map(|p| Ident::new(&p));
        rec.session =
            session
                .and_then(Raw::str_value)
                .map(|s| match block.sessions.get_index_of(&*s) {
                    Some(k) => k,
                    None => block.sessions.insert_full(s.into_owned()).0,
                });
        rec.uuid = Some(Ident::new(&uuid));
        block.recs.push(rec);
    }

    fn merge(&self, acc: &mut Acc, block: &mut Block, first: usize) {
        let block = std::mem::take(block);
        acc.said.extend(block.said);
        if acc.first.is_none() {
            acc.first = block.first;
        }
        if let Some(ts) = block.last_updated
            && acc.last_updated.as_deref().is_none_or(|l| l < ts.as_str())
        {
            acc.last_updated = Some(ts);
        }
        // The first record with a uuid is in this block or an earlier one (blocks come in
        // file order): whether a session is another is known here.
        let first_session = acc
            .first
            .as_ref()
            .and_then(|f| f.common.session_id.as_ref());
        let foreign: Vec<bool> = block
            .sessions
            .iter()
            .map(|s| Some(s) != first_session)
            .collect();
        for (k, rec) in block.recs.into_iter().enumerate() {
            let record = (first + k) as u32;
            let Some(uuid) = rec.uuid else {
                // Kept whole: a node of its own, named by its line.
                if acc.line.0 != rec.line {
                    acc.line = (rec.line, 0);
                }
                acc.line.1 += 1;
                let id = acc.skeleton.intern(&whole_id(rec.line, acc.line.1));
                acc.skeleton.push(id, None);
                acc.first_record.push(record);
                acc.flags.push(rec.flags);
                acc.tail_without_uuid = Some((rec.line, rec.offset));
                continue;
            };
            acc.tail_without_uuid = None;
            let id = acc.skeleton.intern_ident(uuid);
            acc.head = Some(id);
            if let Some(&node) = acc.by_uuid.get(&id) {
                acc.more.entry(node).or_default().push(record);
                acc.flags[node as usize] |= rec.flags & TIMED;
                continue;
            }
            let node = acc.skeleton.len() as u32;
            acc.by_uuid.insert(id, node);
            let parent = rec.parent.map(|p| acc.skeleton.intern_ident(p));
            acc.skeleton.push(id, parent);
            acc.first_record.push(record);
            let foreign = rec.session.is_some_and(|s| foreign[s]);
            acc.flags
                .push(rec.flags | if foreign { FOREIGN } else { 0 });
            if let Some(title) = rec.title {
                acc.titles.push((node, title));
            }
            if let Some(kind) = rec.unknown {
                acc.unknown.push((node, kind));
            }
            acc.calls
                .extend(rec.calls.into_iter().map(|(id, name)| (node, id, name)));
            acc.answered.extend(rec.results);
        }
    }

    fn known(&self, pass: Pass1<Acc>, findings: Vec<Diagnostic>) -> io::Result<Known> {
        let Pass1 { spots, mut acc, .. } = pass;
        let clean = findings.is_empty();
        let first = acc.first.unwrap_or_default();
        let sk = acc.skeleton;
        let at = |record: u32| {
            let s = spots[record as usize];
            Location::at(self.name, s.line, s.offset)
        };
        let node_spots: Vec<Spot> = acc
            .first_record
            .iter()
            .map(|&r| spots[r as usize])
            .collect();
        let more: HashMap<u32, Vec<Spot>> = acc
            .more
            .into_iter()
            .map(|(node, records)| (node, records.iter().map(|&r| spots[r as usize]).collect()))
            .collect();

        let mut diagnostics = findings;
        diagnostics.extend(acc.said);
        // A node made of several records is what its records merged make of it: its merge
        // said (read again here), and its kind, title, session and calls taken from the node
        // of the merged records instead of its first record's.
        let mut merged: Vec<u32> = more.keys().copied().collect();
        merged.sort_unstable();
        let of_one = |n: &u32| !more.contains_key(n);
        let mut titles = acc.titles;
        titles.retain(|(n, _)| of_one(n));
        let mut unknown = acc.unknown;
        unknown.retain(|(n, _)| of_one(n));
        acc.calls.retain(|(n, _, _)| of_one(n));
        let mut foreign = (0..sk.len())
            .filter(|&n| acc.flags[n] & FOREIGN != 0 && of_one(&(n as u32)))
            .count();
        // Read again on the thread pool, a window at a time (the nodes are whole in memory
        // until their facts are taken), their facts taken in node order.
        let read_again = |&node: &u32| -> io::Result<_> {
            let mut said = Vec::new();
            let spots = (node_spots[node as usize], &more[&node]);
            let map = self.merged(&sk.name(node), spots.0, spots.1, &mut said)?;
            let foreign = is_foreign(&map, &first.common);
            let (made, kind) = group_node(map, sk.name(node), None, &first.common);
            Ok((said, foreign, made, kind))
        };
        let windows = merged.chunks(MERGED_WINDOW).flat_map(|window| {
            let made: Vec<io::Result<_>> = window.par_iter().map(read_again).collect();
            window.iter().copied().zip(made)
        });
        for (node, made) in windows {
            let (said, is_foreign, made, kind) = made?;
            diagnostics.extend(said);
            foreign += usize::from(is_foreign);
            // Kept whole or not as the merged records are (a later record can bring the
            // subtype a system record needs).
            let flags = &mut acc.flags[node as usize];
            *flags &= !UNKNOWN;
            if let Some(kind) = kind {
                *flags |= UNKNOWN;
                unknown.push((node, kind.into()));
            }
            if let Body::Event(Event::Title { title: Some(t), .. }) = &made.body {
                titles.push((node, t.as_str().into()));
            }
            if self.calls {
                let (calls, results) = node_calls(&made);
                acc.calls
                    .extend(calls.into_iter().map(|(id, name)| (node, id, name)));
                acc.answered.extend(results);
            }
        }
        // Said after every merge's words, as the whole reader says them (one place's words
        // keep their order when the diagnostics are sorted by place).
        unknown.sort_by_key(|(n, _)| *n);
        for (node, kind) in &unknown {
            diagnostics.push(unknown_record(kind, at(acc.first_record[*node as usize])));
        }
        if let (Some((line, offset)), Some(_)) = (acc.tail_without_uuid, &acc.head) {
            diagnostics.push(tail_without_uuid_said(Location::at(
                self.name, line, offset,
            )));
        }
        if foreign > 0 {
            diagnostics.push(mixed_sessions(self.name, foreign, &first.common));
        }
        for node in 0..sk.len() as u32 {
            if let Some(p) = sk.parent_id(node)
                && sk.node_of(p).is_none()
            {
                let parent = sk.ids.name(p).to_string();
                diagnostics.push(missing_parent(
                    &sk.name(node),
                    &parent,
                    at(acc.first_record[node as usize]),
                ));
            }
        }
        crate::diag::sort_in_file_order(&mut diagnostics);
        titles.sort_by_key(|(n, _)| *n);
        let mut calls = acc.calls;
        calls.sort_by_key(|(n, _, _)| *n);
        let open_calls = calls
            .iter()
            .filter(|(_, id, _)| id.as_ref().is_some_and(|id| !acc.answered.contains(id)))
            .count();
        let meta = Meta {
            id: first.common.session_id.clone(),
            cwd: first.common.cwd.clone(),
            tool_version: first.common.version.clone(),
            git_branch: first.common.git_branch.clone(),
            start_time: first.start_time,
            last_updated: acc.last_updated,
            title: titles.last().map(|(_, t)| t.to_string()),
            head: acc.head.map(|h| sk.ids.name(h).to_string()),
            source_format: Some(NAME.into()),
            origin: first.origin,
            ..Meta::default()
        };
        let head = acc.head.and_then(|h| sk.node_of(h));
        Ok(Known {
            meta,
            diagnostics,
            skeleton: sk,
            head,
            spots: node_spots,
            more,
            flags: acc.flags,
            common: first.common,
            clean,
            #[cfg(test)]
            calls,
            open_calls,
        })
    }
}

impl Scanner<'_> {
    /// The records of a group merged as the reader merges them; what the merge says is said.
    fn merged(
        &self,
        uuid: &str,
        first: Spot,
        more: &[Spot],
        diagnostics: &mut Vec<Diagnostic>,
    ) -> io::Result<Map<String, Value>> {
        let spots: Vec<Spot> = std::iter::once(first).chain(more.iter().copied()).collect();
        let records = pass2::records_at(self.source, &spots)?;
        let location = Location::at(self.name, first.line, first.offset);
        Ok(merge(
            members(&records, &spots),
            uuid,
            &location,
            diagnostics,
        ))
    }
}

/// A group's records as the reader's merge takes them (each an object with a uuid: pass one
/// saw it).
fn members<'a>(records: &'a [impl AsRef<[u8]>], spots: &[Spot]) -> Vec<Member<'a>> {
    records
        .iter()
        .zip(spots)
        .map(|(bytes, s)| {
            let bytes = bytes.as_ref();
            let map = match to_value(bytes) {
                Ok((Value::Object(map), _)) => map,
                _ => Map::new(),
            };
            let span = Span {
                line: s.line,
                offset: s.offset,
                len: u64::from(s.len),
            };
            (map, span, std::borrow::Cow::Borrowed(bytes))
        })
        .collect()
}

/// The tool calls and results of a message's `parts` (an array), as the reader makes them
/// ([`call_part`]).
fn message_calls<'r>(record: &Noted<'r>, parts: Option<Raw<'r>>, rec: &mut Rec) {
    for part in parts.into_iter().flat_map(|p| record.items_within(p)) {
        match call_part(part, record) {
            CallPart::Call { id, name } => rec.calls.push((id.map(Into::into), name.into())),
            CallPart::Result {
                call_id: Some(id), ..
            } => rec.results.push(id.into()),
            CallPart::Result { call_id: None } | CallPart::Neither => {}
        }
    }
}

/// The tool calls (id, name) and answered call ids of a node made whole.
fn node_calls(node: &Node) -> (Vec<Call>, Vec<Box<str>>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for p in node.message().map_or(&[][..], |m| &m.parts) {
        match &p.content {
            Content::ToolCall { id, name, .. } => {
                calls.push((id.as_deref().map(Into::into), name.as_str().into()))
            }
            Content::ToolResult {
                call_id: Some(id), ..
            } => results.push(id.as_str().into()),
            _ => {}
        }
    }
    (calls, results)
}

/// A Qwen Code session as pass one knows it.
pub(crate) struct Known {
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    skeleton: Skeleton,
    head: Option<u32>,
    /// Each node's first record.
    spots: Vec<Spot>,
    /// The later records of the nodes made of several.
    more: HashMap<u32, Vec<Spot>>,
    flags: Vec<u8>,
    common: Common,
    /// The records layer found nothing to say of the lines (no CRLF, blank, glued or cut
    /// line): each record's line ends in one `\n`.
    clean: bool,
    /// Each node's tool calls (node, id, name), in node order: what the open calls were
    /// counted from (kept for the tests to hold them to the reader's).
    #[cfg(test)]
    calls: Vec<(u32, Option<Box<str>>, Box<str>)>,
    /// Tool calls with an id no result in the session answers (as
    /// [`crate::check::document::unanswered_calls`] counts them).
    pub open_calls: usize,
}

impl Known {
    /// Whether node `index` is a record kept whole (written back from its value or text).
    pub(crate) fn kept_whole(&self, index: u32) -> bool {
        self.flags[index as usize] & (WHOLE | UNKNOWN) != 0
    }

    /// The writer of this session written back as Qwen Code records (`meta` as it is to be
    /// written: `None` when that makes it another format's), and whether it gives back each
    /// node of one record as the record's bytes: then only the nodes merged from several
    /// records need making.
    pub(crate) fn same_format_writer(
        &self,
        meta: &Meta,
        options: &WriteOptions,
    ) -> Option<(RecordWriter, bool)> {
        let first = match self.skeleton.len() {
            0 => String::new(),
            _ => self.skeleton.name(0),
        };
        let writer = RecordWriter::native(meta, options, &first)?;
        let copies = writer.gives_back_records_read_with(&self.common);
        Some((writer, copies))
    }

    /// The order the writer puts the nodes in: file order, with the head (`leaf`, a node,
    /// else the session's) moved last as [`head_last`] moves it.
    pub(crate) fn write_order(&self, leaf: Option<u32>, losses: &mut LossReport) -> Vec<u32> {
        let sk = &self.skeleton;
        let head = leaf.or(self.head).map(|h| h as usize);
        let writes = |i: usize| !self.kept_whole(i as u32);
        let has_children = |h: usize| (0..sk.len() as u32).any(|i| sk.parent(i) == Some(h as u32));
        head_last(sk.len(), head, writes, has_children, losses)
            .into_iter()
            .map(|i| i as u32)
            .collect()
    }

    /// Whether the records of the nodes in `order` (each node's first, then the ones merged
    /// into it) are the input's `len` bytes line by line: written back, they are the input's
    /// very bytes.
    pub(crate) fn lines_intact(&self, order: &[u32], len: u64) -> bool {
        if !self.clean || !order.iter().enumerate().all(|(k, &i)| k as u32 == i) {
            return false;
        }
        if self.more.is_empty() {
            return crate::engine::pass1::lines_intact(&self.spots, len);
        }
        let records: Vec<Spot> = order
            .iter()
            .flat_map(|&i| {
                std::iter::once(self.spots[i as usize])
                    .chain(self.more_records_of(i).iter().copied())
            })
            .collect();
        crate::engine::pass1::lines_intact(&records, len)
    }

    /// The records merged into node `index` after its first, in file order.
    pub(crate) fn more_records_of(&self, index: u32) -> &[Spot] {
        self.more.get(&index).map_or(&[], Vec::as_slice)
    }

    /// Node `index` from its records' bytes, as `read` makes it (with the bytes it was read
    /// from, its origin, only when it is `made_for` this format's writer).
    fn make(&self, index: u32, records: &[&[u8]], made_for: MadeFor) -> Node {
        let i = index as usize;
        let id = self.skeleton.name(index);
        let first = records[0];
        if self.flags[i] & WHOLE != 0 {
            let value = match to_value(first) {
                Ok((v, _)) if self.flags[i] & UNPARSED == 0 => v,
                _ => Value::String(String::from_utf8_lossy(first).into_owned()),
            };
            return whole_node(id, value, first);
        }
        let map = if records.len() == 1 {
            match to_value(first) {
                Ok((Value::Object(map), _)) => map,
                _ => Map::new(),
            }
        } else {
            let mut spots = vec![self.spots[i]];
            spots.extend(self.more[&index].iter().copied());
            merge(
                members(records, &spots),
                &id,
                &Location::file(""),
                &mut Vec::new(),
            )
        };
        let origin = (made_for == MadeFor::OwnWriter)
            .then(|| Origin::new(NAME, &join_lines(records.iter().copied())));
        group_node(map, id, origin, &self.common).0
    }
}

impl crate::engine::reading::Reading for Known {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    fn spots(&self) -> &[Spot] {
        &self.spots
    }

    fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn head(&self) -> Option<u32> {
        self.head
    }

    fn is_message(&self, index: u32) -> bool {
        self.flags[index as usize] & MESSAGE != 0
    }

    fn timed(&self, index: u32) -> bool {
        self.flags[index as usize] & TIMED != 0
    }

    fn open_calls(&self) -> usize {
        self.open_calls
    }

    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        self.make(index, &[bytes], made_for)
    }

    fn more_records(&self, index: u32) -> &[Spot] {
        self.more_records_of(index)
    }

    fn node_of_records(&self, index: u32, records: &[&[u8]], made_for: MadeFor) -> Node {
        self.make(index, records, made_for)
    }

    /// The messages counted from pass one's kinds; nodes made only for the user messages
    /// looked at for the prompt, one at a time until one is taken.
    fn head_branch(
        &self,
        source: &dyn Source,
        path: &[u32],
        prompt: &dyn Fn(&str) -> bool,
    ) -> io::Result<HeadBranch> {
        let flag = |i: u32, f: u8| self.flags[i as usize] & f != 0;
        let mut out = HeadBranch {
            messages: path.iter().filter(|&&i| flag(i, TALK)).count(),
            ..HeadBranch::default()
        };
        for &i in path.iter().filter(|&&i| flag(i, USER)) {
            each_node(self, source, &[i], MadeFor::Counting, |_, node| {
                if let Body::Message(m) = &node.body {
                    let text = m.text();
                    if prompt(&text) {
                        out.first_prompt = Some(text);
                    }
                }
            })?;
            if out.first_prompt.is_some() {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
