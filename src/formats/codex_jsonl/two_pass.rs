//! A Codex rollout in two passes (engine v2, [`crate::engine`]): pass one keeps what the whole
//! reader ([`super::read`]) learns from the whole file (the `session_meta` line, every
//! diagnostic in its order, the last node's time and id), a few bytes a line; a rollout
//! written back as a rollout then copies each line's bytes, the metadata line aside. Memory is
//! the lines' places, never their content (Codex rollouts of tens of gigabytes exist).
//!
//! What pass one does not learn yet, so the engine takes no route that needs it: the nodes
//! themselves (results named by their calls, usage and models attached), calls a sub-agent
//! inherited from its parent ([`super::read::mark_inherited_calls`]).

use serde_json::Value;

use super::read::{
    finish_meta, meta_not_first, node_id, not_a_line, read_meta, unknown_type, unparseable,
    whole_file_diagnostics,
};
use super::{LINE_TYPES, RECORD};
use crate::diag::{Diagnostic, Location};
use crate::engine::pass1::{Noted, Pass1, Scan, Spot};
use crate::json::{Kind, Raw};
use crate::model::Meta;
use crate::records::Span;

/// Pass one's reader of a rollout named `name` in messages.
pub(crate) struct Scanner<'n> {
    name: &'n str,
}

impl<'n> Scanner<'n> {
    pub(crate) fn new(name: &'n str) -> Self {
        Scanner { name }
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
}

/// What a line is, as the whole reader sorts it.
struct Line<'r> {
    /// `type`, when it is a string.
    kind: Option<std::borrow::Cow<'r, str>>,
    /// A `{timestamp, type, payload}` object (else the node keeps the line whole).
    shaped: bool,
    payload_object: bool,
    time: Option<String>,
    user_message: bool,
}

fn line_of<'r>(record: &Noted<'r>) -> Line<'r> {
    let raw = record.raw;
    let mut line = Line {
        kind: None,
        shaped: false,
        payload_object: false,
        time: None,
        user_message: false,
    };
    if raw.kind() != Kind::Object {
        return line;
    }
    let [timestamp, kind, payload] = record.pick(["timestamp", "type", "payload"]);
    line.kind = kind.and_then(Raw::as_str).map(|t| t.value);
    line.payload_object = payload.is_some_and(|p| p.kind() == Kind::Object);
    let time = timestamp.and_then(Raw::as_str);
    // As the whole reader: a line of the type it names lines kept whole is kept whole.
    line.shaped =
        time.is_some() && line.kind.as_deref().is_some_and(|k| k != RECORD) && line.payload_object;
    if line.shaped {
        line.time = time.map(|t| t.value.into_owned());
    }
    if line.kind.as_deref() == Some("event_msg")
        && let Some(payload) = payload.filter(|_| line.payload_object)
    {
        let [kind] = record.pick_within(payload, ["type"]);
        line.user_message =
            kind.and_then(Raw::as_str).map(|t| t.value).as_deref() == Some("user_message");
    }
    line
}

impl Scan for Scanner<'_> {
    type Block = Block;
    type Acc = Acc;

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
            return;
        }
        let line = line_of(&record);
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

    fn merge(&self, acc: &mut Acc, block: Block, first: usize) {
        let mut diags = block.diags.into_iter().peekable();
        let mut last_time = block.last_time;
        if let Some(line) = block.meta {
            while let Some((_, d)) = diags.next_if(|(n, _)| *n < line.number) {
                acc.diags.push(d);
            }
            let index = first + line.number;
            if acc.meta.is_none() {
                if index > 0 {
                    acc.diags.push(meta_not_first(&line.at));
                }
                // The grammar and serde_json both took this line.
                let value = serde_json::from_str(&line.text).expect("a line serde_json reads");
                acc.meta = Some((index, read_meta(value, line.text.as_bytes(), index)));
                last_time = block.last_time_but_meta;
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
    }
}

/// What pass one learnt of a rollout: enough to write it back as a rollout.
pub(crate) struct Known {
    /// The metadata [`super::read`] gives (without what its nodes would tell: see the module).
    pub meta: Meta,
    /// The diagnostics it gives, in its order.
    pub diagnostics: Vec<Diagnostic>,
    pub spots: Vec<Spot>,
    /// The line the metadata was read from.
    pub meta_line: Option<u32>,
}

impl Scanner<'_> {
    /// The rollout from pass one's facts; `findings` are the records layer's diagnostics.
    pub(crate) fn known(&self, pass: Pass1<Acc>, findings: Vec<Diagnostic>) -> Known {
        let Pass1 { spots, acc, .. } = pass;
        let meta_line = acc.meta.as_ref().map(|(i, _)| *i as u32);
        let nodes = acc.lines - usize::from(meta_line.is_some());
        let mut diagnostics = findings;
        diagnostics.extend(acc.diags);
        diagnostics.extend(whole_file_diagnostics(
            self.name,
            meta_line.is_some(),
            acc.user_messages,
            nodes,
        ));
        let head = head_id(&spots, meta_line);
        let mut meta = acc.meta.map(|(_, m)| m).unwrap_or_default();
        finish_meta(&mut meta, acc.last_time, head);
        Known {
            meta,
            diagnostics,
            spots,
            meta_line,
        }
    }
}

/// The last node's id, as the whole reader numbers the nodes of a line.
fn head_id(spots: &[Spot], meta_line: Option<u32>) -> Option<String> {
    let is_node = |i: usize| meta_line != Some(i as u32);
    let last = (0..spots.len()).rev().find(|&i| is_node(i))?;
    let line = spots[last].line;
    let k = (0..=last)
        .rev()
        .take_while(|&i| spots[i].line == line)
        .filter(|&i| is_node(i))
        .count();
    Some(node_id(line, k))
}

impl Known {
    /// The metadata line as the rollout writer writes `meta` (the metadata read, filled and
    /// adjusted): its own bytes while it still reads the same, else rebuilt; nothing when the
    /// rollout has none.
    pub(crate) fn meta_bytes(&self, meta: &Meta) -> Vec<u8> {
        let mut out = Vec::new();
        if self.meta_line.is_some() {
            super::write::push_meta(&mut out, meta);
        }
        out
    }
}
