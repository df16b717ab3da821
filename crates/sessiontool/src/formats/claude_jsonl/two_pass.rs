//! Claude Code sessions read in two passes by the engine ([`crate::engine`]): pass one keeps
//! a few facts per entry (where it is, its uuid and parent, whether it is a sidechain or has a
//! time) and the session-wide facts [`read`](super::read::read) gathers (the base fields of
//! the first chain entry, Python-style separators, the latest time, the title, every
//! diagnostic); pass two makes the node of one entry at a time with the very code `read`
//! uses ([`Shape`]). What comes out is what `read` gives, node for node, in bounded memory.

use serde_json::Value;

use super::NAME;
use super::origin::{AsRead, meta_origin, python_written};
use super::read::{
    Shape, duplicate_uuid, interprets, missing_parent, node_id, not_an_entry, unparseable,
};
use super::write::{Base, native_entry};
use crate::check::ident::Ident;
use crate::diag::{Diagnostic, Location};
use crate::engine::MadeFor;
use crate::engine::pass1::{Noted, Pass1, Scan, Spot};
use crate::engine::skeleton::Skeleton;
use crate::formats::lossy_diagnostic;
use crate::json::value::{to_value, to_value_keeping};
use crate::json::{Kind, Raw};
use crate::model::{Body, Meta, Node, Origin};
use crate::records::Span;

/// Pass one over a Claude Code session named `name` (in diagnostics); with `calls`, the tool
/// calls and results of every message are counted too (to say how many go unanswered).
pub(crate) struct Scanner<'n> {
    pub name: &'n str,
    pub calls: bool,
    /// With the name of each tool call (for a writer whose results name their call).
    pub call_names: bool,
}

impl<'n> Scanner<'n> {
    pub(crate) fn new(name: &'n str, calls: bool) -> Self {
        Scanner {
            name,
            calls,
            call_names: false,
        }
    }
}

/// What pass one keeps of an entry within its block.
enum Entry {
    /// Not JSON as `JSON.parse` reads it.
    Unparsed,
    /// JSON, but not an object.
    NotObject,
    /// An object without a uuid (`summary`, `file-history-snapshot`, ...).
    Other { timed: bool, title: Option<String> },
    Chain {
        /// As the skeleton interns them, made on the thread that reads the entry (a UUID
        /// packs without allocating).
        uuid: Ident,
        parent: Option<Ident>,
        hidden: bool,
        timed: bool,
        /// A `/compact` boundary's `logicalParentUuid` (an entry kept whole, `parentUuid:
        /// null`): its parent when that entry is earlier in the file.
        logical: Option<String>,
        /// A reply with usage: its `message.id` and `requestId` (the entries of one API reply
        /// share them; the usage stays on the last one).
        reply: Option<(String, String)>,
        /// A message (else the entry is kept whole, as an event).
        message: bool,
        /// See [`PLAIN`].
        plain: bool,
    },
}

struct BlockEntry {
    line: u64,
    offset: u64,
    entry: Entry,
}

/// The base fields, time and line of a chain entry.
#[derive(Clone)]
struct FirstChain {
    base: Base,
    start_time: Option<String>,
    line: Box<[u8]>,
}

#[derive(Default)]
pub(crate) struct Block {
    entries: Vec<BlockEntry>,
    parse_diags: Vec<Diagnostic>,
    first_chain: Option<FirstChain>,
    /// The block's first line written with Python's separators (the rest of the block is not
    /// looked at for that).
    python: Option<Box<[u8]>>,
    last_updated: Option<String>,
    /// Tool call ids made and answered: `(entry in the block, id)`.
    calls: Vec<String>,
    results: Vec<String>,
    /// With [`Scanner::call_names`]: `(entry in the block, call id, name)`.
    named_calls: Vec<(u32, String, String)>,
}

/// Node flags.
const CHAIN: u8 = 1;
/// The node has a time (`node.timestamp` is set).
const TIMED: u8 = 2;
/// A `/compact` boundary hung under its logical parent (the skeleton's parent).
const LOGICAL: u8 = 4;
/// A reply's entry other than its last: its usage is left to its line (`one_usage_per_reply`).
const USAGE_MOVED: u8 = 8;
/// The node is a message (every other node is an event).
const MESSAGE: u8 = 16;
/// The entry is JSON that does not parse into a value (nested too deep): a node of its text.
const UNPARSED: u8 = 32;
/// serde_json reads the entry as `JSON.parse` does ([`Facts::serde_reads_it`]): any of its
/// values read alone is read as in the whole.
const PLAIN: u8 = 64;

/// Id flags (by interned id: `read` keys these sets by id, not by node).
const ID_CHAIN: u8 = 1;
const ID_HIDDEN: u8 = 2;
const ID_PARENT: u8 = 4;

/// The whole file's facts.
#[derive(Default)]
pub(crate) struct Acc {
    skeleton: Skeleton,
    /// Per node: the occurrence of its uuid (0 off the chain) and its flags.
    occurrence: Vec<u32>,
    flags: Vec<u8>,
    /// Per interned id: how many chain entries had it as uuid so far, and its flags.
    seen: Vec<u32>,
    id_flags: Vec<u8>,
    parse_diags: Vec<Diagnostic>,
    node_diags: Vec<Diagnostic>,
    first_chain: Option<FirstChain>,
    /// The first line written with Python's separators.
    python: Option<Box<[u8]>>,
    last_updated: Option<String>,
    title: Option<String>,
    calls: Vec<u32>,
    answered: Vec<bool>,
    /// `(node, call id, name)` of every tool call, with [`Scanner::call_names`].
    call_names: Vec<(u32, Box<str>, Box<str>)>,
    /// Each reply's last entry so far, by its `message.id` and `requestId`.
    replies: std::collections::HashMap<(Box<str>, Box<str>), u32>,
}

impl Acc {
    fn intern(&mut self, id: &str) -> u32 {
        self.intern_ident(Ident::new(id))
    }

    fn intern_ident(&mut self, id: Ident) -> u32 {
        let n = self.skeleton.intern_ident(id);
        if n as usize >= self.seen.len() {
            self.seen.resize(n as usize + 1, 0);
            self.id_flags.resize(n as usize + 1, 0);
        }
        n
    }
}

impl Scan for Scanner<'_> {
    type Block = Block;
    type Acc = Acc;
    type Known = Known;

    /// The session from pass one's facts; `findings` are the records layer's diagnostics.
    fn known(&self, pass: Pass1<Acc>, findings: Vec<Diagnostic>) -> Known {
        let Pass1 {
            spots,
            acc,
            ends_with_newline,
            ..
        } = pass;
        let clean = findings.is_empty();
        let mut diagnostics = findings;
        diagnostics.extend(acc.parse_diags);
        diagnostics.extend(acc.node_diags);
        let sk = &acc.skeleton;
        let chain = |i: &u32| acc.flags[*i as usize] & CHAIN != 0;
        let id_flag = |i: u32, f: u8| acc.id_flags[sk.id(i) as usize] & f != 0;
        for i in (0..sk.len() as u32).filter(chain) {
            if let Some(p) = sk.parent_id(i)
                && acc.id_flags[p as usize] & ID_CHAIN == 0
            {
                diagnostics.push(missing_parent(
                    self.name,
                    &sk.name(i),
                    &sk.ids.name(p).to_string(),
                ));
            }
        }
        let terminal = |i: &u32| !id_flag(*i, ID_PARENT);
        let chain_rev = || (0..sk.len() as u32).rev().filter(chain);
        let head = chain_rev()
            .find(|i| terminal(i) && !id_flag(*i, ID_HIDDEN))
            .or_else(|| chain_rev().find(terminal))
            .or_else(|| chain_rev().next());
        let open_calls = acc
            .calls
            .iter()
            .filter(|&&c| !acc.answered.get(c as usize).copied().unwrap_or(false))
            .count();
        let origin = meta_origin(
            acc.first_chain.as_ref().map(|f| &*f.line),
            acc.python.as_deref(),
        );
        let python = acc.python.is_some();
        let first = acc.first_chain.unwrap_or(FirstChain {
            base: Base::default(),
            start_time: None,
            line: Box::default(),
        });
        // As the whole reader: a file of entries without a final line end is written back so.
        let tail = (!spots.is_empty() && !ends_with_newline).then(|| Origin::new(NAME, b""));
        let meta = Meta {
            id: first.base.session_id.clone(),
            cwd: first.base.cwd.clone(),
            tool_version: first.base.version.clone(),
            git_branch: first.base.git_branch.clone(),
            start_time: first.start_time,
            last_updated: acc.last_updated,
            title: acc.title,
            head: head.map(|h| sk.name(h)),
            source_format: Some(NAME.into()),
            origin,
            tail,
            ..Meta::default()
        };
        // The head, as `Tree` finds it: the first node of the head's id.
        let head = head.and_then(|h| acc.skeleton.index_of(&acc.skeleton.name(h)));
        Known {
            meta,
            diagnostics,
            head,
            open_calls,
            spots,
            clean,
            skeleton: acc.skeleton,
            occurrence: acc.occurrence,
            flags: acc.flags,
            call_names: acc.call_names,
            base: first.base,
            python,
        }
    }

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        let (raw, quick) = (record.raw, record.facts);
        let at = || Location::at(self.name, span.line, span.offset);
        let bytes = raw.text().as_bytes();
        // Built as `record_value` builds it only when a quick look finds what serde_json
        // would read differently from `JSON.parse` (the fields are read from `raw`).
        let mut value: Option<Value> = None;
        if !quick.serde_reads_it() {
            match to_value(bytes) {
                Ok((v, lossy)) => {
                    if !lossy.is_lossless() {
                        block.parse_diags.push(lossy_diagnostic(&lossy, at()));
                    }
                    value = Some(v);
                }
                Err(e) => {
                    block.parse_diags.push(unparseable(at(), e));
                    block.entries.push(BlockEntry {
                        line: span.line,
                        offset: span.offset,
                        entry: Entry::Unparsed,
                    });
                    return;
                }
            }
        }
        self.python_style(block, bytes, quick.spaced, value.as_ref(), raw);
        let entry = entry_of(record, block, self, quick.serde_reads_it());
        block.entries.push(BlockEntry {
            line: span.line,
            offset: span.offset,
            entry,
        });
    }

    fn merge(&self, acc: &mut Acc, block: &mut Block, _first: usize) {
        let block = std::mem::take(block);
        let first_node = acc.skeleton.len() as u32;
        for (k, id, name) in block.named_calls {
            acc.call_names
                .push((first_node + k, id.into(), name.into()));
        }
        acc.parse_diags.extend(block.parse_diags);
        if acc.first_chain.is_none() {
            acc.first_chain = block.first_chain;
        }
        if acc.python.is_none() {
            acc.python = block.python;
        }
        if let Some(ts) = block.last_updated
            && acc.last_updated.as_deref().is_none_or(|l| l < ts.as_str())
        {
            acc.last_updated = Some(ts);
        }
        for c in &block.calls {
            let n = acc.intern(c);
            acc.calls.push(n);
        }
        for r in &block.results {
            let n = acc.intern(r);
            if n as usize >= acc.answered.len() {
                acc.answered.resize(n as usize + 1, false);
            }
            acc.answered[n as usize] = true;
        }
        for e in block.entries {
            let at = || Location::at(self.name, e.line, e.offset);
            let (id, parent, occurrence, flags) = match e.entry {
                Entry::Unparsed | Entry::NotObject | Entry::Other { .. } => {
                    if matches!(e.entry, Entry::NotObject) {
                        acc.node_diags.push(not_an_entry(at()));
                    }
                    let timed = match &e.entry {
                        Entry::Other { timed, title } => {
                            if title.is_some() {
                                acc.title.clone_from(title);
                            }
                            *timed
                        }
                        _ => false,
                    };
                    let id = acc.intern(&format!("line-{}", e.line));
                    let unparsed = if matches!(e.entry, Entry::Unparsed) {
                        UNPARSED
                    } else {
                        0
                    };
                    (id, None, 0, unparsed | if timed { TIMED } else { 0 })
                }
                Entry::Chain {
                    uuid,
                    parent,
                    hidden,
                    timed,
                    logical,
                    reply,
                    message,
                    plain,
                } => {
                    let u = acc.intern_ident(uuid);
                    acc.seen[u as usize] += 1;
                    let n = acc.seen[u as usize];
                    let id = if n == 1 {
                        u
                    } else {
                        let uuid = acc.skeleton.ids.name(u).to_string();
                        acc.node_diags.push(duplicate_uuid(at(), &uuid, n));
                        acc.intern(&node_id(&uuid, n))
                    };
                    // As `follow_logical_parents`: the logical parent counts when a chain
                    // entry before this one has it as its id.
                    let logical = logical.filter(|l| {
                        acc.skeleton
                            .ids
                            .get(&Ident::new(l))
                            .is_some_and(|n| acc.id_flags[n as usize] & ID_CHAIN != 0)
                    });
                    acc.id_flags[id as usize] |= ID_CHAIN;
                    if hidden {
                        acc.id_flags[id as usize] |= ID_HIDDEN;
                    }
                    let mut flags = CHAIN | if timed { TIMED } else { 0 };
                    if logical.is_some() {
                        flags |= LOGICAL;
                    }
                    if message {
                        flags |= MESSAGE;
                    }
                    if plain {
                        flags |= PLAIN;
                    }
                    let parent = match parent {
                        Some(p) => Some(acc.intern_ident(p)),
                        None => logical.map(|p| acc.intern(&p)),
                    };
                    if let Some(p) = parent {
                        acc.id_flags[p as usize] |= ID_PARENT;
                    }
                    if let Some((message, request)) = reply {
                        let index = acc.skeleton.len() as u32;
                        if let Some(before) =
                            acc.replies.insert((message.into(), request.into()), index)
                        {
                            acc.flags[before as usize] |= USAGE_MOVED;
                        }
                    }
                    (id, parent, n, flags)
                }
            };
            acc.skeleton.push(id, parent);
            acc.occurrence.push(occurrence);
            acc.flags.push(flags);
        }
    }
}

impl Scanner<'_> {
    /// Whether the entry is one written with Python's `", "` and `": "` separators, as `read`
    /// decides it (the first object whose compact JSON is not its text but whose Python-style
    /// JSON is). Only text with white space between tokens can be; once one is found in a
    /// block, no other of the block is looked at.
    fn python_style(
        &self,
        block: &mut Block,
        bytes: &[u8],
        spaced: bool,
        value: Option<&Value>,
        raw: Raw,
    ) {
        if raw.kind() != Kind::Object || block.python.is_some() || !spaced {
            return;
        }
        let parsed;
        let v = match value {
            Some(v) => v,
            None => match to_value(bytes) {
                Ok((v, _)) => {
                    parsed = v;
                    &parsed
                }
                Err(_) => return,
            },
        };
        if python_written(v, bytes) {
            block.python = Some(bytes.into());
        }
    }
}

/// What `read` makes of an entry, in facts.
fn entry_of(record: Noted, block: &mut Block, scanner: &Scanner, plain: bool) -> Entry {
    let raw = record.raw;
    if raw.kind() != Kind::Object {
        return Entry::NotObject;
    }
    // Each level is looked at once: the entry's fields, then its message's.
    let [
        uuid,
        parent,
        kind,
        timestamp,
        sidechain,
        is_meta,
        message,
        request,
        logical,
    ] = record.pick([
        "uuid",
        "parentUuid",
        "type",
        "timestamp",
        "isSidechain",
        "isMeta",
        "message",
        "requestId",
        "logicalParentUuid",
    ]);
    let string = |r: Option<Raw>| r.and_then(|r| r.as_str()).map(|t| t.value.into_owned());
    let timestamp = timestamp.and_then(Raw::str_value);
    if let Some(ts) = &timestamp
        && block.last_updated.as_deref().is_none_or(|l| l < &**ts)
    {
        block.last_updated = Some(ts.to_string());
    }
    let Some(uuid) = uuid.and_then(Raw::str_value) else {
        return other_entry(raw, kind, timestamp.is_some());
    };
    if block.first_chain.is_none() {
        let [session_id, cwd, version, git_branch] =
            record.pick(["sessionId", "cwd", "version", "gitBranch"]);
        block.first_chain = Some(FirstChain {
            base: Base {
                session_id: string(session_id),
                cwd: string(cwd),
                version: string(version),
                git_branch: string(git_branch),
            },
            start_time: timestamp.as_deref().map(String::from),
            line: raw.text().as_bytes().into(),
        });
    }
    let flag = |r: Option<Raw>| r.and_then(Raw::as_bool) == Some(true);
    let kind = kind.and_then(Raw::str_value);
    // What `chain_node` makes a message of (else the entry is kept whole).
    let message = message.filter(|m| m.kind() == Kind::Object);
    let [content, id, usage] = match message {
        Some(m) => record.pick_within(m, ["content", "id", "usage"]),
        None => [None; 3],
    };
    let talk = matches!(kind.as_deref(), Some("user" | "assistant"));
    if (scanner.calls || scanner.call_names) && talk {
        message_calls(content, block, scanner);
    }
    let content_ok = content.is_some_and(|c| matches!(c.kind(), Kind::String | Kind::Array));
    let shaped = content_ok && talk;
    let logical = match (shaped, parent) {
        (false, Some(p)) if p.kind() == Kind::Null => string(logical),
        _ => None,
    };
    let reply = match message {
        Some(_) if shaped && kind.as_deref() == Some("assistant") => {
            match (usage.map(|u| u.kind()), string(id), string(request)) {
                (Some(Kind::Object), Some(id), Some(request)) => Some((id, request)),
                _ => None,
            }
        }
        _ => None,
    };
    Entry::Chain {
        uuid: Ident::new(&uuid),
        parent: parent.and_then(Raw::str_value).map(|p| Ident::new(&p)),
        hidden: flag(sidechain) || flag(is_meta),
        timed: timestamp.is_some(),
        logical,
        reply,
        message: shaped,
        plain,
    }
}

/// An object without a uuid: a title when `uuidless_event` makes one of it.
fn other_entry(raw: Raw, kind: Option<Raw>, timed: bool) -> Entry {
    let key = match kind.and_then(|k| k.as_str()).as_ref().map(|t| &*t.value) {
        Some("summary") => "summary",
        Some("custom-title") => "customTitle",
        Some("ai-title") => "aiTitle",
        _ => {
            return Entry::Other {
                timed: false,
                title: None,
            };
        }
    };
    match raw.get(key).and_then(Raw::as_str) {
        Some(title) => Entry::Other {
            timed,
            title: Some(title.value.into_owned()),
        },
        None => Entry::Other {
            timed: false,
            title: None,
        },
    }
}

/// The tool calls and results of a message entry (its `message.content`'s blocks that become
/// `ToolCall` parts with an id and `ToolResult` parts with a call id).
fn message_calls(content: Option<Raw>, block: &mut Block, scanner: &Scanner) {
    let Some(content) = content else {
        return;
    };
    let string = |r: Option<Raw>| r.and_then(|r| r.as_str()).map(|t| t.value.into_owned());
    // Each block read once (taking the items and then picking from each skips every block
    // twice); blocks that are not objects are `None`.
    let blocks = content.pick_in_items([
        "type",
        "id",
        "name",
        "input",
        "tool_use_id",
        "content",
        "is_error",
    ]);
    for [t, id, name, input, tool_use_id, content, is_error] in blocks.flatten() {
        match string(t).as_deref() {
            Some("tool_use") => {
                if let (Some(id), Some(name), Some(_)) = (string(id), string(name), input) {
                    if scanner.call_names {
                        let entry = block.entries.len() as u32;
                        block.named_calls.push((entry, id.clone(), name));
                    }
                    if scanner.calls {
                        block.calls.push(id);
                    }
                }
            }
            Some("tool_result") if scanner.calls => {
                let flag_ok = is_error.is_none_or(|e| e.kind() == Kind::Bool);
                if let (Some(id), Some(_), true) = (string(tool_use_id), content, flag_ok) {
                    block.results.push(id);
                }
            }
            _ => {}
        }
    }
}

/// A Claude Code session as pass one knows it.
pub(crate) struct Known {
    /// The metadata `read` gives.
    pub meta: Meta,
    /// The diagnostics `read` gives, in its order.
    pub diagnostics: Vec<Diagnostic>,
    pub skeleton: Skeleton,
    /// The head `read` names, as a node.
    pub head: Option<u32>,
    /// Tool calls no result in the session answers (with [`Scanner::calls`]).
    pub open_calls: usize,
    pub spots: Vec<Spot>,
    /// The records layer found nothing to say (no line glued, padded, cut, blank, ending in
    /// CRLF or holding invalid UTF-8).
    pub clean: bool,
    occurrence: Vec<u32>,
    flags: Vec<u8>,
    call_names: Vec<(u32, Box<str>, Box<str>)>,
    base: Base,
    python: bool,
}

impl Known {
    /// Whether node `index` is a message (else an event).
    pub(crate) fn is_message(&self, index: u32) -> bool {
        self.flags[index as usize] & MESSAGE != 0
    }

    /// Whether node `index` has a time (`node.timestamp` is set).
    pub(crate) fn timed(&self, index: u32) -> bool {
        self.flags[index as usize] & TIMED != 0
    }

    /// The name of each tool call id among the nodes of `branch` (in its order), from the
    /// first call with that id, as the whole session's `call_names` finds them (pass one with
    /// [`Scanner::call_names`]).
    pub(crate) fn call_names(&self, branch: &[u32]) -> std::collections::HashMap<String, String> {
        let mut position = vec![u32::MAX; self.spots.len()];
        for (k, &i) in branch.iter().enumerate() {
            position[i as usize] = position[i as usize].min(k as u32);
        }
        let mut first: std::collections::HashMap<&str, (u32, &str)> =
            std::collections::HashMap::new();
        for (node, id, name) in &self.call_names {
            let at = position[*node as usize];
            if at == u32::MAX {
                continue;
            }
            let e = first.entry(id).or_insert((at, name));
            if at < e.0 {
                *e = (at, name);
            }
        }
        first
            .into_iter()
            .map(|(id, (_, name))| (id.to_string(), name.to_string()))
            .collect()
    }

    /// The names of the tool calls of node `index`, in order (every `ToolCall` part of a
    /// Claude Code node has an id: pass one with [`Scanner::call_names`] saw them all).
    pub(crate) fn calls_of(&self, index: u32) -> Vec<String> {
        let from = self.call_names.partition_point(|c| c.0 < index);
        self.call_names[from..]
            .iter()
            .take_while(|c| c.0 == index)
            .map(|c| c.2.to_string())
            .collect()
    }

    /// The node of entry `index`, whose text is `bytes`, as `read` makes it for `made_for`
    /// (for this format's own writer: with its line, its origin).
    pub(crate) fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let node = self
            .message_from_text(index, bytes, made_for)
            .unwrap_or_else(|| self.node_by_value(index, bytes, made_for));
        self.with_whole_file_facts(index, node)
    }

    /// [`Known::node`] made through the entry's `Value` alone (what the text path is held to).
    #[cfg(test)]
    pub(super) fn node_through_value(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let node = self.node_by_value(index, bytes, made_for);
        self.with_whole_file_facts(index, node)
    }

    /// What the entry's node takes from the other entries: a reply's usage moved to its last
    /// entry, a compact boundary's logical parent.
    fn with_whole_file_facts(&self, index: u32, mut node: Node) -> Node {
        let i = index as usize;
        if self.flags[i] & USAGE_MOVED != 0
            && let Body::Message(m) = &mut node.body
        {
            m.usage = None;
        }
        if self.flags[i] & LOGICAL != 0 {
            node.parent = self
                .skeleton
                .parent_id(index)
                .map(|p| self.skeleton.ids.name(p).to_string());
        }
        node
    }

    /// The node of a plain message entry made from its text ([`super::raw_node`]), for any
    /// user but this format's writer (whose nodes keep their line, which it reads again);
    /// `None` for any other entry, or one not plain enough.
    pub(super) fn message_from_text(
        &self,
        index: u32,
        bytes: &[u8],
        made_for: MadeFor,
    ) -> Option<Node> {
        let i = index as usize;
        let wanted = CHAIN | MESSAGE | PLAIN;
        if made_for == MadeFor::OwnWriter || self.flags[i] & (wanted | UNPARSED) != wanted {
            return None;
        }
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        // Pass one checked the grammar and found the text parses (not `UNPARSED`).
        let values = made_for == MadeFor::Anyone;
        super::raw_node::message_node(Raw::valid(text), self.occurrence[i], &self.base, values)
    }

    /// The node of entry `index` as `read` makes it: through the entry's `serde_json::Value`
    /// and [`Shape`] (before the facts of other entries are applied).
    pub(super) fn node_by_value(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let shape = Shape {
            base: &self.base,
            origin: made_for == MadeFor::OwnWriter,
        };
        let i = index as usize;
        let value = match made_for {
            _ if self.flags[i] & UNPARSED != 0 => None,
            // Pass one checked the grammar and found the text parses (not `UNPARSED`).
            MadeFor::Counting => simdutf8::basic::from_utf8(bytes)
                .ok()
                .and_then(|text| to_value_keeping(Raw::valid(text), interprets).ok()),
            MadeFor::OwnWriter | MadeFor::Anyone => to_value(bytes).ok(),
        }
        .map(|(v, _)| v);
        shape.node(value, bytes, self.spots[i].line, self.occurrence[i])
    }

    /// How this format's writer writes the session back, given its metadata as it will be
    /// written (`meta`: filled and adjusted): `None` when every entry is written as the very
    /// bytes it was read from (the writer rebuilds an entry from the same fields it was read
    /// with, which gives its text, or writes its text); else the fields to rebuild entries
    /// with. `always`: a rewrite even then (tests compare the two).
    pub(crate) fn rewrite(&self, meta: &Meta, always: bool) -> Option<Rewrite> {
        let base = Base::of(meta);
        let python = AsRead::of(meta).python;
        let as_read = AsRead {
            base: self.base.clone(),
            python: self.python,
        };
        (always || base != as_read.base || python != as_read.python).then_some(Rewrite {
            base,
            python,
            as_read,
        })
    }

    /// Whether the writer leaves out the final line break (the file had none).
    pub(crate) fn drops_final_newline(meta: &Meta) -> bool {
        crate::formats::ended_without_line_end(meta, NAME)
    }
}

/// What a rewritten entry is rebuilt with.
pub(crate) struct Rewrite {
    base: Base,
    python: bool,
    /// The session as its entries were read.
    as_read: AsRead,
}

impl Rewrite {
    /// Entry `index` as this format's writer writes it (line break included).
    pub(crate) fn entry(&self, known: &Known, index: u32, bytes: &[u8], out: &mut Vec<u8>) {
        let node = known.node(index, bytes, MadeFor::OwnWriter);
        native_entry(&node, &self.base, self.python, &self.as_read, out);
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
        Known::is_message(self, index)
    }

    fn timed(&self, index: u32) -> bool {
        Known::timed(self, index)
    }

    fn open_calls(&self) -> usize {
        self.open_calls
    }

    fn call_names(&mut self, branch: &[u32]) -> crate::engine::reading::BranchCalls {
        // The root's parent is on the branch only when the parents make a loop.
        let root_parent = branch
            .first()
            .and_then(|&i| self.skeleton.parent(i))
            .filter(|p| branch.contains(p))
            .map(|p| (self.skeleton.name(p), self.calls_of(p)));
        crate::engine::reading::BranchCalls {
            names: Known::call_names(self, branch),
            root_parent,
        }
    }

    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        Known::node(self, index, bytes, made_for)
    }

    /// From each message's text where it can (see [`super::listing`]).
    fn head_branch(
        &self,
        source: &dyn crate::engine::Source,
        path: &[u32],
        prompt: &dyn Fn(&str) -> bool,
    ) -> std::io::Result<crate::engine::view::HeadBranch> {
        super::listing::head_branch(self, source, path, prompt)
    }
}
