//! A Codex rollout in two passes (engine v2, [`crate::engine`]): pass one keeps what the whole
//! reader ([`super::read`]) learns from the whole file (the `session_meta` line, every
//! diagnostic in its order, the last node's time and id), a few bytes a line; a rollout
//! written back as a rollout then copies each line's bytes, the metadata line aside. Memory is
//! the lines' places, never their content (Codex rollouts of tens of gigabytes exist).
//!
//! For the nodes themselves ([`Scanner::with_nodes`]: `show`, `tree`), pass one also reads each
//! line as the whole reader does and keeps what the nodes after it take from it: the models
//! and token usage that go on assistant messages ([`super::usage::Attach`]), the names results
//! take from their calls ([`super::read::Names`]), the calls a sub-agent inherited from its
//! parent; pass two makes a line's node again and gives it those.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::Value;

use super::read::{
    Names, finish_meta, meta_not_first, node_id, not_a_line, read_line, read_meta, spawned,
    unknown_type, unparseable, whole_file_diagnostics,
};
use super::usage::{Attach, Counted, Step, step_of};
use super::{LINE_TYPES, NAME, RECORD};
use crate::diag::{Diagnostic, Location};
use crate::engine::MadeFor;
use crate::engine::pass1::{Noted, Pass1, Scan, Spot};
use crate::engine::skeleton::Skeleton;
use crate::engine::view::HeadBranch;
use crate::json::{Kind, Raw};
use crate::model::{Content, Meta, Node, Origin, Role, Usage};
use crate::records::Span;

/// Pass one's reader of a rollout named `name` in messages.
pub(crate) struct Scanner<'n> {
    name: &'n str,
    /// Whether nodes will be made in pass two (else lines are only copied).
    nodes: bool,
    /// Whether the calls no result answers are counted (with the nodes).
    calls: bool,
    /// Whether the name of each call id is kept, from its first call (the Gemini writer
    /// names results by their calls: [`Known::call_names`]).
    pub(crate) call_names: bool,
}

impl<'n> Scanner<'n> {
    /// For a rollout whose lines are copied.
    pub(crate) fn new(name: &'n str) -> Self {
        Scanner {
            name,
            nodes: false,
            calls: false,
            call_names: false,
        }
    }

    /// For a rollout whose nodes are made in pass two; `calls`: counting the calls no
    /// result answers ([`Known::open_calls`]).
    pub(crate) fn with_nodes(name: &'n str, calls: bool) -> Self {
        Scanner {
            name,
            nodes: true,
            calls,
            call_names: false,
        }
    }
}

/// What one block of lines says.
#[derive(Default)]
pub(crate) struct Block {
    /// The diagnostics of its lines, with each line's number in the block, in order.
    diags: Vec<(usize, Diagnostic)>,
    /// Its first `session_meta` line with an object payload (the rollout's metadata when no
    /// block before has one).
    meta: Option<MetaLine>,
    /// The time of its last timed line, and of its last timed line but `meta`'s.
    last_time: Option<String>,
    last_time_but_meta: Option<String>,
    user_messages: usize,
    lines: usize,
    /// What each line gives the nodes after it (with [`Scanner::with_nodes`]).
    facts: Vec<LineFacts>,
}

/// What a line gives the nodes after it, and the node it makes.
#[derive(Debug, PartialEq)]
struct LineFacts {
    /// [`MESSAGE`], [`USER`], [`ASSISTANT`].
    flags: u8,
    step: Step,
    /// Its calls (id, name) and the call ids of its results, in the order of its parts.
    calls: Vec<(String, Option<String>)>,
}

impl LineFacts {
    /// What the whole reader's node of the line gives.
    fn of(node: &Node) -> LineFacts {
        let mut calls = Vec::new();
        for p in node
            .message()
            .map(|m| m.parts.as_slice())
            .unwrap_or_default()
        {
            match &p.content {
                Content::ToolCall {
                    id: Some(id), name, ..
                } => calls.push((id.clone(), Some(name.clone()))),
                Content::ToolResult {
                    call_id: Some(id), ..
                } => calls.push((id.clone(), None)),
                _ => {}
            }
        }
        let timed = if node.timestamp.is_some() { TIMED } else { 0 };
        LineFacts {
            flags: timed
                | match node.message().map(|m| m.role) {
                    None => 0,
                    Some(Role::User) => MESSAGE | USER,
                    Some(Role::Assistant) => MESSAGE | ASSISTANT,
                    Some(_) => MESSAGE,
                },
            step: step_of(node),
            calls,
        }
    }
}

/// A block's first `session_meta` line with an object payload.
struct MetaLine {
    /// Its number in the block.
    number: usize,
    at: Location,
    text: String,
    /// A `{timestamp, type, payload}` object: as a node (when an earlier block has the
    /// metadata), one the whole reader has nothing to say of.
    shaped: bool,
}

/// What the whole rollout says, the blocks merged in order.
#[derive(Default)]
pub(crate) struct Acc {
    diags: Vec<Diagnostic>,
    /// The metadata line's number, and the metadata read from it.
    meta: Option<(usize, Meta)>,
    last_time: Option<String>,
    user_messages: usize,
    lines: usize,
    nodes: NodeFacts,
}

/// What the nodes take from the lines before and after them (with [`Scanner::with_nodes`]).
#[derive(Default)]
struct NodeFacts {
    /// Per node: [`MESSAGE`], [`USER`], [`ASSISTANT`].
    flags: Vec<u8>,
    attach: Attach,
    names: Names,
    /// The model of the assistant messages from each of these nodes on.
    models: Vec<(u32, Box<str>)>,
    usage: HashMap<u32, Usage>,
    /// The names of a node's results, in the order of its parts.
    result_names: HashMap<u32, Vec<Option<String>>>,
    /// The ids of the calls to `spawn_agent`, in order, and of every result while they may
    /// be a sub-agent's inherited calls ([`super::read::mark_inherited_calls`]) or calls are
    /// counted.
    spawn_calls: Vec<String>,
    answered: Option<HashSet<String>>,
    /// The ids of every call, in order, when calls are counted.
    call_ids: Option<Vec<String>>,
    /// The name of each call id from its first call, when asked for.
    first_names: Option<HashMap<String, String>>,
}

const MESSAGE: u8 = 1;
/// A message of the user's (else the assistant's, or another role's).
const USER: u8 = 2;
const ASSISTANT: u8 = 4;
/// The node has a time (its line is `{timestamp, type, payload}`).
const TIMED: u8 = 8;

/// What a line is, as the whole reader sorts it.
struct Line<'r> {
    /// `type`, when it is a string.
    kind: Option<std::borrow::Cow<'r, str>>,
    /// A `{timestamp, type, payload}` object (else the node keeps the line whole).
    shaped: bool,
    payload_object: bool,
    time: Option<String>,
    user_message: bool,
    /// The payload, when it is an object.
    payload: Option<Raw<'r>>,
    /// The payload's fields any line's facts are read from ([`PAYLOAD_KEYS`]), picked once.
    fields: [Option<Raw<'r>>; PAYLOAD_KEYS.len()],
}

/// The payload fields pass one reads, by place ([`Line::field`]).
const PAYLOAD_KEYS: [&str; 12] = [
    "type",
    "info",
    "model",
    "role",
    "content",
    "call_id",
    "output",
    "summary",
    "name",
    "arguments",
    "input",
    "action",
];

impl<'r> Line<'r> {
    /// The payload's field `key` (one of [`PAYLOAD_KEYS`]).
    fn field(&self, key: &str) -> Option<Raw<'r>> {
        let i = PAYLOAD_KEYS.iter().position(|k| *k == key);
        self.fields[i.expect("a key of PAYLOAD_KEYS")]
    }

    fn fields<const N: usize>(&self, keys: [&str; N]) -> [Option<Raw<'r>>; N] {
        keys.map(|k| self.field(k))
    }
}

fn line_of<'r>(record: &Noted<'r>) -> Line<'r> {
    let raw = record.raw;
    let mut line = Line {
        kind: None,
        shaped: false,
        payload_object: false,
        time: None,
        user_message: false,
        payload: None,
        fields: [None; PAYLOAD_KEYS.len()],
    };
    if raw.kind() != Kind::Object {
        return line;
    }
    let [timestamp, kind, payload] = record.pick(["timestamp", "type", "payload"]);
    line.kind = kind.and_then(Raw::as_str).map(|t| t.value);
    line.payload_object = payload.is_some_and(|p| p.kind() == Kind::Object);
    line.payload = payload.filter(|_| line.payload_object);
    if let Some(payload) = line.payload {
        line.fields = record.pick_within(payload, PAYLOAD_KEYS);
    }
    let time = timestamp.and_then(Raw::as_str);
    // As the whole reader: a line of the type it names lines kept whole is kept whole.
    line.shaped =
        time.is_some() && line.kind.as_deref().is_some_and(|k| k != RECORD) && line.payload_object;
    if line.shaped {
        line.time = time.map(|t| t.value.into_owned());
    }
    if line.kind.as_deref() == Some("event_msg") && line.payload_object {
        let kind = line.field("type");
        line.user_message =
            kind.and_then(Raw::as_str).map(|t| t.value).as_deref() == Some("user_message");
    }
    line
}

/// What a line gives the nodes, read from its text where no message can come of it (every
/// line but a `response_item`: an event of the whole reader's, whose only facts are a turn's
/// model and a token count); `None` where the whole reader's node is made to know.
fn quick_facts(record: &Noted, line: &Line) -> Option<LineFacts> {
    let plain = |step| LineFacts {
        flags: 0,
        step,
        calls: Vec::new(),
    };
    // Not `{timestamp, type, payload}`: a line the reader keeps whole.
    if line.payload.is_none() || !line.shaped {
        return Some(plain(Step::Other));
    }
    match line.kind.as_deref()? {
        "response_item" => response_item_facts(line),
        "turn_context" => {
            let model = line.field("model");
            let model = model.and_then(Raw::as_str).map(|t| t.value.into_owned());
            Some(plain(Step::Context(model)))
        }
        "event_msg" => {
            let [kind, info] = line.fields(["type", "info"]);
            let count = kind
                .and_then(Raw::as_str)
                .is_some_and(|t| t.value == "token_count");
            match info.filter(|i| count && i.kind() == Kind::Object) {
                Some(info) => Some(plain(Step::Count(Box::new(Counted::of_raw(info, record)?)))),
                None => Some(plain(Step::Other)),
            }
        }
        _ => Some(plain(Step::Other)),
    }
}

/// [`quick_facts`] of a `response_item` whose node is plain to know from its text (as
/// `parse::response_item` makes it): a tool's output (a result of the call it names), a
/// message (its role; only thoughts when it has no content); an item of a type the reader does
/// not know (an event). `None` for the others (reasoning, tool calls): their node is made.
fn response_item_facts<'r>(line: &Line<'r>) -> Option<LineFacts> {
    let [item, role, content, call_id, output] =
        line.fields(["type", "role", "content", "call_id", "output"]);
    let event = LineFacts {
        flags: 0,
        step: Step::Other,
        calls: Vec::new(),
    };
    let text = |v: Option<Raw<'r>>| v.and_then(Raw::as_str).map(|t| t.value);
    match text(item).as_deref().unwrap_or("") {
        "function_call_output" | "custom_tool_call_output" => {
            if output.is_none() {
                return Some(event);
            }
            let calls = text(call_id)
                .map(|id| (id.into_owned(), None))
                .into_iter()
                .collect();
            Some(LineFacts {
                flags: MESSAGE,
                step: Step::Message,
                calls,
            })
        }
        "message" => {
            let flags = match text(role).as_deref() {
                Some("user") => MESSAGE | USER,
                Some("assistant") => MESSAGE | ASSISTANT,
                Some("system" | "developer") => MESSAGE,
                _ => return Some(event),
            };
            let Some(mut items) = content.and_then(Raw::items) else {
                return Some(event);
            };
            let empty = items.next().is_none();
            let step = match flags & ASSISTANT {
                0 => Step::Message,
                _ => Step::Assistant {
                    thought_only: empty,
                },
            };
            Some(LineFacts {
                flags,
                step,
                calls: Vec::new(),
            })
        }
        "reasoning" => Some(reasoning_facts(line).unwrap_or(event)),
        kind @ ("function_call" | "custom_tool_call" | "local_shell_call") => {
            Some(call_facts(line, kind).unwrap_or(event))
        }
        _ => Some(event),
    }
}

/// A reasoning item is a reply of thoughts only when its `summary` is a list (as
/// `parse::reasoning` reads it; `None`: an event).
fn reasoning_facts(line: &Line) -> Option<LineFacts> {
    let summary = line.field("summary");
    (summary?.kind() == Kind::Array).then_some(LineFacts {
        flags: MESSAGE | ASSISTANT,
        step: Step::Assistant { thought_only: true },
        calls: Vec::new(),
    })
}

/// A tool call item (`kind`) is a reply with its call, named as `parse::tool_call` names it,
/// when it has what that reads (`None`: an event). A `call_id` that is not a string makes an
/// event; none, a call without an id.
fn call_facts(line: &Line, kind: &str) -> Option<LineFacts> {
    let [call_id, name, arguments, input, action] =
        line.fields(["call_id", "name", "arguments", "input", "action"]);
    let id = match call_id {
        None => None,
        Some(id) => Some(id.as_str()?.value.into_owned()),
    };
    let is_str = |v: Option<Raw>| v.is_some_and(|v| v.kind() == Kind::String);
    let name = match kind {
        "function_call" if is_str(arguments) => name?.as_str()?.value.into_owned(),
        "custom_tool_call" if is_str(input) => name?.as_str()?.value.into_owned(),
        "local_shell_call" if action.is_some() => "local_shell".to_string(),
        _ => return None,
    };
    Some(LineFacts {
        flags: MESSAGE | ASSISTANT,
        step: Step::Assistant {
            thought_only: false,
        },
        calls: id.map(|id| (id, Some(name))).into_iter().collect(),
    })
}

impl Scan for Scanner<'_> {
    type Block = Block;
    type Acc = Acc;
    type Known = Known;

    /// The rollout from pass one's facts; `findings` are the records layer's diagnostics.
    fn known(&self, pass: Pass1<Acc>, findings: Vec<Diagnostic>) -> Known {
        let Pass1 { mut spots, acc, .. } = pass;
        let meta_at = acc.meta.as_ref().map(|(i, _)| *i as u32);
        if let Some(i) = meta_at {
            spots.remove(i as usize);
        }
        let mut diagnostics = findings;
        diagnostics.extend(acc.diags);
        diagnostics.extend(whole_file_diagnostics(
            self.name,
            meta_at.is_some(),
            acc.user_messages,
            spots.len(),
        ));
        let mut nodes = acc.nodes;
        let usage = &mut nodes.usage;
        nodes.attach.finish(&mut |k, u| {
            usage.insert(k as u32, u);
        });
        let mut known = Known {
            meta: acc.meta.map(|(_, m)| m).unwrap_or_default(),
            diagnostics,
            spots,
            meta_at,
            skeleton: OnceLock::new(),
            open_calls: 0,
            nodes,
        };
        let last = (known.spots.len() as u32).checked_sub(1);
        let head = last.map(|i| known.id(i));
        finish_meta(&mut known.meta, acc.last_time, head);
        if self.nodes {
            known.mark_inherited_calls();
            known.count_open_calls();
        }
        known
    }

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        let number = block.lines;
        block.lines += 1;
        let at = || Location::at(self.name, span.line, span.offset);
        // Codex reads its lines with serde_json: where it may refuse what the grammar took
        // (a lone surrogate escape, nesting past its limit), serde_json says.
        if !record.facts.serde_reads_it()
            && let Err(e) = serde_json::from_str::<Value>(record.raw.text())
        {
            block.diags.push((number, unparseable(&at(), &e)));
            if self.nodes {
                // Kept whole, as its text.
                block.facts.push(LineFacts {
                    flags: 0,
                    step: Step::Other,
                    calls: Vec::new(),
                });
            }
            return;
        }
        let line = line_of(&record);
        if self.nodes {
            // serde_json reads the line (checked above where it might not); were it not to,
            // the whole reader would keep the line whole, as its text.
            let whole = || match serde_json::from_str(record.raw.text()) {
                Ok(value) => LineFacts::of(&read_line(value, String::new())),
                Err(_) => LineFacts {
                    flags: 0,
                    step: Step::Other,
                    calls: Vec::new(),
                },
            };
            let quick = quick_facts(&record, &line).map(|mut f| {
                if line.time.is_some() {
                    f.flags |= TIMED;
                }
                f
            });
            // Test builds hold the reading from the text to the whole reader's node, on every
            // line any test reads.
            if cfg!(debug_assertions)
                && let Some(quick) = &quick
            {
                assert_eq!(*quick, whole(), "{}", record.raw.text());
            }
            block.facts.push(quick.unwrap_or_else(whole));
        }
        if block.meta.is_none()
            && line.kind.as_deref() == Some("session_meta")
            && line.payload_object
        {
            block.meta = Some(MetaLine {
                number,
                at: at(),
                text: record.raw.text().to_string(),
                shaped: line.shaped,
            });
            block.last_time_but_meta = block.last_time.clone();
            if line.shaped {
                block.last_time = line.time;
            }
            return;
        }
        if line.user_message {
            block.user_messages += 1;
        }
        match line.kind.as_deref() {
            Some(RECORD) => block.diags.push((number, unknown_type(&at(), RECORD))),
            _ if !line.shaped => block.diags.push((number, not_a_line(&at()))),
            Some(kind) if !LINE_TYPES.contains(&kind) => {
                block.diags.push((number, unknown_type(&at(), kind)))
            }
            _ => {}
        }
        if line.shaped {
            block.last_time.clone_from(&line.time);
            block.last_time_but_meta = line.time;
        }
    }

    fn merge(&self, acc: &mut Acc, block: &mut Block, first: usize) {
        let mut diags = std::mem::take(&mut block.diags).into_iter().peekable();
        let mut last_time = block.last_time.take();
        // This block's line that is the metadata, not a node.
        let mut meta_number = None;
        if let Some(line) = &block.meta {
            while let Some((_, d)) = diags.next_if(|(n, _)| *n < line.number) {
                acc.diags.push(d);
            }
            let index = first + line.number;
            // The grammar and serde_json both took this line.
            let value = serde_json::from_str(&line.text)
                .ok()
                .filter(|_| acc.meta.is_none());
            if let Some(value) = value {
                if index > 0 {
                    acc.diags.push(meta_not_first(&line.at));
                }
                acc.meta = Some((index, read_meta(value, line.text.as_bytes())));
                last_time = block.last_time_but_meta.take();
                meta_number = Some(line.number);
            } else if !line.shaped {
                // An earlier block has the metadata: this is an ordinary line.
                acc.diags.push(not_a_line(&line.at));
            }
        }
        acc.diags.extend(diags.map(|(_, d)| d));
        if last_time.is_some() {
            acc.last_time = last_time;
        }
        acc.user_messages += block.user_messages;
        acc.lines += block.lines;
        // Every result may answer an inherited call until the metadata says whether this is
        // a sub-agent's rollout.
        let answers = self.calls || acc.meta.as_ref().is_none_or(|(_, m)| spawned(m));
        let nodes = &mut acc.nodes;
        if self.calls && nodes.call_ids.is_none() {
            nodes.call_ids = Some(Vec::new());
        }
        if self.call_names && nodes.first_names.is_none() {
            nodes.first_names = Some(HashMap::new());
        }
        if !answers {
            nodes.answered = None;
        } else if nodes.answered.is_none() {
            nodes.answered = Some(HashSet::new());
        }
        // The line facts are read, not taken: what the nodes keep is copied, and the rest is
        // freed by the thread that made the block.
        for (number, f) in block.facts.iter().enumerate() {
            if meta_number == Some(number) {
                continue;
            }
            nodes.line(f);
        }
    }
}

impl NodeFacts {
    /// The next node's line.
    fn line(&mut self, f: &LineFacts) {
        let i = self.flags.len() as u32;
        self.flags.push(f.flags);
        let usage = &mut self.usage;
        let model = self.attach.step(i as usize, &f.step, &mut |k, u| {
            usage.insert(k as u32, u);
        });
        if let Some(model) = model
            && self.models.last().is_none_or(|(_, m)| **m != *model)
        {
            self.models.push((i, model.into()));
        }
        let mut names = Vec::new();
        for (id, name) in &f.calls {
            match name {
                Some(name) => {
                    self.names.call(id, name);
                    if let Some(first) = &mut self.first_names
                        && !first.contains_key(id)
                    {
                        first.insert(id.clone(), name.clone());
                    }
                    if let Some(ids) = &mut self.call_ids {
                        ids.push(id.clone());
                    }
                    if name == super::keys::SPAWN_AGENT {
                        self.spawn_calls.push(id.clone());
                    }
                }
                None => {
                    names.push(self.names.result(id));
                    if let Some(answered) = &mut self.answered {
                        answered.insert(id.clone());
                    }
                }
            }
        }
        if !names.is_empty() {
            self.result_names.insert(i, names);
        }
    }
}

/// What pass one learnt of a rollout.
pub(crate) struct Known {
    /// The metadata [`super::read`] gives.
    pub meta: Meta,
    /// The diagnostics it gives, in its order.
    pub diagnostics: Vec<Diagnostic>,
    /// Where each node's line is (the metadata line is no node).
    pub spots: Vec<Spot>,
    /// The node the metadata line stands before (the number of nodes when it is the last).
    pub meta_at: Option<u32>,
    /// The nodes' ids and parents, interned when first asked for ([`Known::skeleton`]: about
    /// 60 bytes a node, only for what finds nodes by id or walks the tree).
    skeleton: OnceLock<Skeleton>,
    /// The tool calls no result answers, but for the inherited ones (counted when asked).
    pub open_calls: usize,
    nodes: NodeFacts,
}

impl Known {
    /// Node `index`'s id, as the whole reader numbers the nodes of a line.
    pub(crate) fn id(&self, index: u32) -> String {
        let i = index as usize;
        let line = self.spots[i].line;
        let k = self.spots[..=i]
            .iter()
            .rev()
            .take_while(|s| s.line == line)
            .count();
        node_id(line, k)
    }

    /// The nodes' ids and parents (each node's parent is the one before it).
    pub(crate) fn skeleton(&self) -> &Skeleton {
        self.skeleton.get_or_init(|| {
            let mut skeleton = Skeleton::default();
            for i in 0..self.spots.len() as u32 {
                let id = skeleton.intern(&self.id(i));
                let parent = i.checked_sub(1).map(|p| skeleton.id(p));
                skeleton.push(id, parent);
            }
            skeleton
        })
    }

    /// As [`super::read::mark_inherited_calls`].
    fn mark_inherited_calls(&mut self) {
        if !spawned(&self.meta) {
            return;
        }
        let answered = self.nodes.answered.as_ref();
        self.meta.inherited_calls = self
            .nodes
            .spawn_calls
            .iter()
            .filter(|id| !answered.is_some_and(|a| a.contains(*id)))
            .cloned()
            .collect();
    }

    /// As [`crate::check::document::unanswered_calls`] counts them.
    fn count_open_calls(&mut self) {
        let (Some(ids), Some(answered)) = (&self.nodes.call_ids, &self.nodes.answered) else {
            return;
        };
        let inherited = self.meta.inherited_call_ids();
        self.open_calls = ids
            .iter()
            .filter(|id| !answered.contains(*id) && !inherited.contains(id.as_str()))
            .count();
    }

    /// Whether node `index` is a message (else an event).
    pub(crate) fn is_message(&self, index: u32) -> bool {
        self.nodes.flags[index as usize] & MESSAGE != 0
    }

    /// Whether node `index` has a time.
    pub(crate) fn timed(&self, index: u32) -> bool {
        self.nodes.flags[index as usize] & TIMED != 0
    }

    /// The name of each call id of the rollout, from its first call (as
    /// [`crate::formats::gemini_content::call_names`] finds them on the whole session); empty
    /// unless pass one was asked for them ([`Scanner::call_names`]).
    pub(crate) fn call_names(&mut self) -> HashMap<String, String> {
        self.nodes.first_names.take().unwrap_or_default()
    }

    /// The node of line `index`, whose text is `bytes`, as the whole reader makes it (for
    /// this format's own writer: with the line it was read from, its origin).
    pub(crate) fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let value = serde_json::from_slice::<Value>(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
        let mut node = read_line(value, self.id(index));
        node.parent = index.checked_sub(1).map(|p| self.id(p));
        if made_for == MadeFor::OwnWriter {
            // The `session_meta` line after the line of the node just before it (see `origin`).
            let meta = match self.meta_at {
                Some(at) if at == index + 1 => Origin::of(&self.meta.origin, NAME),
                _ => None,
            };
            node.origin = Some(super::origin::origin(bytes, meta));
        }
        let Some(m) = node.message_mut() else {
            return node;
        };
        if let Some(names) = self.nodes.result_names.get(&index) {
            let mut names = names.iter();
            for p in &mut m.parts {
                if let Content::ToolResult {
                    call_id: Some(_),
                    name,
                    ..
                } = &mut p.content
                {
                    *name = names.next().cloned().flatten();
                }
            }
        }
        if m.role == crate::model::Role::Assistant {
            let at = self.nodes.models.partition_point(|(i, _)| *i <= index);
            if let Some((_, model)) = at.checked_sub(1).map(|k| &self.nodes.models[k]) {
                m.model = Some(model.to_string());
            }
        }
        if let Some(u) = self.nodes.usage.get(&index) {
            m.usage = Some(u.clone());
        }
        node
    }

    /// The metadata line as the rollout writer writes `meta` (the metadata read, filled and
    /// adjusted): its own bytes while it still reads the same, else rebuilt; nothing when the
    /// rollout has none.
    pub(crate) fn meta_bytes(&self, meta: &Meta) -> Vec<u8> {
        let mut out = Vec::new();
        if self.meta_at.is_some() {
            super::write::push_meta(&mut out, meta);
        }
        out
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
        Known::skeleton(self)
    }

    /// Known without the skeleton (which interns every node's id).
    fn id_of(&self, index: u32) -> String {
        self.id(index)
    }

    /// The node before (rollouts are linear).
    fn parent_of(&self, index: u32) -> Option<String> {
        index.checked_sub(1).map(|p| self.id(p))
    }

    /// A rollout is one line of nodes: the first ones, down to `leaf`.
    fn path_to(&self, leaf: u32) -> Vec<u32> {
        (0..=leaf).collect()
    }

    /// The last node (rollouts are linear).
    fn head(&self) -> Option<u32> {
        (self.spots.len() as u32).checked_sub(1)
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

    /// The rollout's, whatever the branch (every node is on it); the first node hangs under
    /// nothing.
    fn call_names(&mut self, _branch: &[u32]) -> crate::engine::reading::BranchCalls {
        crate::engine::reading::BranchCalls {
            names: Known::call_names(self),
            root_parent: None,
        }
    }

    fn linear(&self) -> bool {
        true
    }

    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        Known::node(self, index, bytes, made_for)
    }

    /// The messages counted from pass one's roles; nodes made only for the user messages
    /// looked at for the prompt, a few at a time, until it is found.
    fn head_branch(
        &self,
        source: &dyn crate::engine::Source,
        path: &[u32],
        prompt: &dyn Fn(&str) -> bool,
    ) -> std::io::Result<HeadBranch> {
        let flags = |i: u32| self.nodes.flags[i as usize];
        let mut out = HeadBranch {
            messages: path
                .iter()
                .filter(|&&i| flags(i) & (USER | ASSISTANT) != 0)
                .count(),
            first_prompt: None,
        };
        let users: Vec<u32> = path
            .iter()
            .copied()
            .filter(|&i| flags(i) & USER != 0)
            .collect();
        for few in users.chunks(16) {
            crate::engine::pass2::each_record(source, &self.spots, few, |i, bytes| {
                if out.first_prompt.is_none()
                    && let Some(m) = self.node(i, bytes, MadeFor::Counting).message()
                {
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
