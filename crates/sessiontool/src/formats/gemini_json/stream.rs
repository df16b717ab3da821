//! A session from another format written as a Gemini session one node at a time, for the
//! two-pass engine ([`crate::engine`]): the record's head (its fields up to `messages`), then
//! each message as the branch's nodes come, then the rest; as the legacy document or as the
//! CLI's JSONL recording ([`Layout`]). Byte for byte and loss for loss what the whole writers
//! ([`GeminiJson`](super::GeminiJson), and the Gemini JSONL writer that lays its document out
//! as lines) give for the same branch, through the same code ([`Messages`], [`root`],
//! [`ApiParts`]).
//!
//! What the whole writer learns from the whole branch comes in up front: the name of each
//! call id (a result that names no call gets it) and the document's times (the first and last
//! message's when the session has none). Only the last message is held: a tool message's
//! results fold into it. A session of the Gemini family (Qwen Code's) keeps its parts as they
//! are, as the whole writer keeps them; a Gemini session itself goes through the whole writer
//! (its own fields and layout are written back).

use std::collections::HashMap;
use std::io;

use serde_json::Value;

use super::direct::{self, Calls};
use super::{Messages, message_type, root};
use crate::diag::LossReport;
use crate::engine::MadeFor;
use crate::engine::target::{Lookup, NodeSink};
use crate::formats::gemini_content::{ApiParts, calls_of, is_gemini_family};
use crate::formats::one_branch::ONE_BRANCH;
use crate::formats::{WriteOptions, gemini_jsonl, to_pretty_js};
use crate::json::out::{Out, Style};
use crate::model::{Body, Meta, Node, Role};
use crate::tree::LeftOut;

/// Where the messages go in the document the writer makes with none.
const MESSAGES: &[u8] = b"\n  \"messages\": []";
/// The indentation of a message's first line in the document (two levels of two spaces).
const MESSAGE_INDENT: &[u8] = b"    ";
/// A message written but for its `toolCalls` (its last key), in the document: what comes
/// between its last value and that of `toolCalls` (at the message's depth plus one), and what
/// closes it.
const CALLS_KEY: &[u8] = b",\n      \"toolCalls\": ";
const MESSAGE_END: &[u8] = b"\n    }";
/// The same in the JSONL recording (a message a line).
const LINE_CALLS_KEY: &[u8] = b",\"toolCalls\":";
const LINE_END: &[u8] = b"}\n";

/// How the session's record is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One pretty document (`gemini-json`: `JSON.stringify(record, null, 2)`).
    Document,
    /// Gemini CLI's JSONL recording (`gemini-jsonl`): a header line, then a line per message,
    /// as the CLI writes a session it rewrites (the whole writer makes the document, then
    /// lays it out so).
    Lines,
}

/// What the writer of one session reads of it: its metadata, never its nodes.
pub(crate) struct DocumentStream {
    meta: Meta,
    options: WriteOptions,
    layout: Layout,
    /// The session is of the Gemini family (a Qwen Code session): its parts are API parts
    /// already, written as they are.
    family: bool,
    /// The session is a Gemini session (the legacy document or the JSONL recording, which hold
    /// the same MessageRecords): its fields and its messages' are written back.
    own: bool,
}

impl DocumentStream {
    /// `None` for a Gemini session into its own layout (what the whole writer gives back of
    /// it goes through the whole writer).
    pub(crate) fn new(meta: Meta, options: &WriteOptions, layout: Layout) -> Option<Self> {
        let source = meta.source_format.as_deref();
        let same = matches!(
            (source, layout),
            (Some(super::NAME), Layout::Document) | (Some(gemini_jsonl::NAME), Layout::Lines)
        );
        let own = matches!(source, Some(super::NAME | gemini_jsonl::NAME));
        let family = is_gemini_family(source);
        (!same).then(|| DocumentStream {
            family,
            own,
            meta,
            options: options.clone(),
            layout,
        })
    }

    /// The time of what has none (`--now`, else empty, as the whole writer).
    fn now(&self) -> String {
        self.options.now.clone().unwrap_or_default()
    }

    /// The document's start time and last update as the whole writer finds them
    /// (`session_times`: the session's own, else its first and last message's), from what is
    /// known of the branch before its messages are written: whether it has a message, whether
    /// any of its nodes has a time, and `first_message_time`, the last time of a node up to
    /// the first message (asked only when the session has no start time). A message without a
    /// time has the last time before it, else the session's start, else `now`. `None` when the
    /// last message's time is needed: which message is last depends on which results fold
    /// into the one before them.
    pub(crate) fn times<E>(
        &self,
        has_message: bool,
        timed: bool,
        first_message_time: impl FnOnce() -> Result<Option<String>, E>,
    ) -> Result<Option<[String; 2]>, E> {
        let now = self.now();
        let start = match &self.meta.start_time {
            Some(s) => s.clone(),
            None if has_message => first_message_time()?.unwrap_or_else(|| now.clone()),
            None => now.clone(),
        };
        let last = match &self.meta.last_updated {
            Some(l) => l.clone(),
            None if !has_message => now,
            None if timed => return Ok(None),
            // No node has a time: every message has the session's start, else `now`.
            None => self.meta.start_time.clone().unwrap_or(now),
        };
        Ok(Some([start, last]))
    }

    /// The writer: `names` are the branch's call names
    /// ([`crate::formats::gemini_content::call_names`]), `times` the document's start and last
    /// update ([`DocumentStream::times`]), `root_parent` the id and call names of the node the
    /// branch's root hangs under when that node is on the branch (the parents make a loop: a
    /// result that names no call of the session gets the name of its parent's call at its
    /// place). Its losses come in the order the whole writer reports them.
    pub(crate) fn writer(
        &self,
        names: HashMap<String, String>,
        left_out: &LeftOut,
        times: [String; 2],
        root_parent: Option<(String, Vec<String>)>,
    ) -> Writer {
        let mut branch = LossReport::default();
        left_out.report(&mut branch, ONE_BRANCH);
        let mut session = LossReport::default();
        let empty = root(
            &self.meta,
            &self.options,
            self.own,
            times,
            Value::Array(Vec::new()),
            &mut session,
        );
        let (head, tail) = match self.layout {
            Layout::Document => {
                let text = to_pretty_js(&empty, false);
                // Strings escape their quotes: the only `"messages": []` is the key's.
                let at = text
                    .windows(MESSAGES.len())
                    .position(|w| w == MESSAGES)
                    .expect("the document has its messages");
                let open = at + MESSAGES.len() - 1;
                (text[..open].to_vec(), text[open + 1..].to_vec())
            }
            Layout::Lines => {
                let Value::Object(mut header) = empty else {
                    unreachable!("the record is an object")
                };
                header.shift_remove("messages");
                let pad = header.shift_remove("memoryScratchpad");
                let mut line = Vec::new();
                gemini_jsonl::header_line(header, &mut line);
                let mut tail = Vec::new();
                gemini_jsonl::scratchpad_line(pad, &mut tail);
                (line, tail)
            }
        };
        Writer {
            layout: self.layout,
            own: self.own,
            family: self.family,
            head,
            tail,
            api: ApiParts::new(names),
            messages: Messages::new(self.own, self.meta.start_time.clone(), self.now()),
            pending: Vec::with_capacity(2),
            open: None,
            written: 0,
            parent: root_parent,
            branch,
            message_losses: LossReport::default(),
            session,
        }
    }
}

/// See [`DocumentStream::writer`].
pub(crate) struct Writer {
    layout: Layout,
    /// A Gemini session: its records' key orders and shapes are written back, from the nodes'
    /// origins (see [`DocumentStream::own`]).
    own: bool,
    /// Parts written as they are ([`DocumentStream::family`]).
    family: bool,
    head: Vec<u8>,
    tail: Vec<u8>,
    api: ApiParts,
    messages: Messages,
    /// The last message, which the next node's results may still fold into, made as a
    /// `Value` (a message this writer does not write straight from its node, [`direct`]).
    pending: Vec<Value>,
    /// The last message, written but for its calls, which the next node's results may still
    /// fold into (never beside `pending`).
    open: Option<Calls>,
    written: usize,
    /// The previous node's id and the names of its calls (a result that names no call of the
    /// session gets the name of its parent's call at its place).
    parent: Option<(String, Vec<String>)>,
    branch: LossReport,
    message_losses: LossReport,
    session: LossReport,
}

impl NodeSink for Writer {
    fn made_for(&self) -> MadeFor {
        match self.own {
            true => MadeFor::OwnWriter,
            false => MadeFor::Counting,
        }
    }

    /// The document's head, up to its messages.
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
    }

    /// The branch's next node: the messages before it that nothing can change any more.
    /// (The node is changed as the whole writer changes it; what is left of it is the
    /// caller's to free, on the thread that made it.)
    fn node(&mut self, _: u32, node: &mut Node, _: &Lookup, out: &mut Vec<u8>) -> io::Result<()> {
        let calls = calls_of(node);
        let parent_calls = match (&self.parent, &node.parent) {
            (Some((id, calls)), Some(p)) if id == p => calls.as_slice(),
            _ => &[],
        };
        // The whole writer makes API parts of every session's but the Gemini family's.
        if !self.family {
            self.api.node(node, parent_calls);
        }
        self.message_of(node, out);
        self.parent = Some((std::mem::take(&mut node.id), calls));
        Ok(())
    }

    /// The last message and the rest of the document; the conversion's losses.
    fn finish(mut self: Box<Self>, out: &mut Vec<u8>) -> LossReport {
        self.close(out);
        for done in std::mem::take(&mut self.pending) {
            self.message(&done, out);
        }
        if self.layout == Layout::Document {
            out.extend_from_slice(if self.written == 0 { b"]" } else { b"\n  ]" });
        }
        out.extend_from_slice(&self.tail);
        let mut losses = std::mem::take(&mut self.branch);
        self.api.report(&mut losses);
        let (messages, session) = (self.message_losses.losses, self.session.losses);
        for l in messages.into_iter().chain(session) {
            losses.add(l.code, l.count, l.message);
        }
        losses
    }
}

impl Writer {
    /// `node` into the messages: written straight from the node when it is a message of a
    /// session of another format ([`direct`]), else through the whole writer's `Value`s.
    fn message_of(&mut self, node: &mut Node, out: &mut Vec<u8>) {
        let role = match &node.body {
            Body::Message(m) if !self.own => m.role,
            _ => return self.through_values(node, out),
        };
        if role == Role::Tool {
            // Results fold into the message before them, as the whole writer folds them.
            if let Some(calls) = &mut self.open {
                if direct::fold(calls, node) {
                    self.messages.time_of(node);
                    return;
                }
            } else if !self.pending.is_empty() {
                return self.through_values(node, out);
            }
        }
        if !direct::writes(node) {
            return self.through_values(node, out);
        }
        self.close(out);
        for done in std::mem::take(&mut self.pending) {
            self.message(&done, out);
        }
        let kind = message_type(role, &mut self.message_losses);
        let ts = self.messages.time_of(node).to_owned();
        let losses = &mut self.message_losses;
        self.written += 1;
        self.open = start(self.layout, self.written, out, |o| {
            direct::head(o, node, kind, &ts, losses)
        });
        if self.open.is_none() && self.layout == Layout::Lines {
            out.push(b'\n');
        }
    }

    /// `node` into the messages as the whole writer's `Value`s.
    fn through_values(&mut self, node: &Node, out: &mut Vec<u8>) {
        self.messages
            .push(node, &mut self.pending, &mut self.message_losses);
        if !self.pending.is_empty() {
            // A message after the open one: nothing folds into that one any more.
            self.close(out);
        }
        while self.pending.len() > 1 {
            let done = self.pending.remove(0);
            self.message(&done, out);
        }
    }

    /// The open message's calls and its end.
    fn close(&mut self, out: &mut Vec<u8>) {
        let Some(calls) = self.open.take() else {
            return;
        };
        match self.layout {
            Layout::Document => {
                out.extend_from_slice(CALLS_KEY);
                calls.write(&mut Out::indented(out, Style::JS_PRETTY, 3));
                out.extend_from_slice(MESSAGE_END);
            }
            Layout::Lines => {
                out.extend_from_slice(LINE_CALLS_KEY);
                calls.write(&mut Out::new(out, Style::JS));
                out.extend_from_slice(LINE_END);
            }
        }
    }

    fn message(&mut self, message: &Value, out: &mut Vec<u8>) {
        match self.layout {
            Layout::Document => {
                out.extend_from_slice(if self.written == 0 { b"\n" } else { b",\n" });
                out.extend_from_slice(MESSAGE_INDENT);
                Out::indented(out, Style::JS_PRETTY, 2).value(message);
            }
            Layout::Lines => gemini_jsonl::push_line(out, message),
        }
        self.written += 1;
    }
}

/// Message number `nth` (from 1), written by `write` into a writer that stands where it goes.
fn start<T>(layout: Layout, nth: usize, out: &mut Vec<u8>, write: impl FnOnce(&mut Out) -> T) -> T {
    match layout {
        Layout::Document => {
            out.extend_from_slice(if nth == 1 { b"\n" } else { b",\n" });
            out.extend_from_slice(MESSAGE_INDENT);
            write(&mut Out::indented(out, Style::JS_PRETTY, 2))
        }
        Layout::Lines => write(&mut Out::new(out, Style::JS)),
    }
}
