//! Two passes for readers that take a file's lines in order, each line one node at most (pi,
//! llxprt-code, the Go agent): the reader is a fold over its lines ([`Fold`]), which its whole
//! reader and pass one here both go through, so what pass one learns is what the whole reader
//! gives. Pass one keeps of each node only its place, id, parent and a few flags (its content
//! is dropped as soon as it is made); pass two makes a node again from its line alone, with the
//! id and parent pass one gave it ([`Lines::node`]). Memory is bounded by the number of lines.
//!
//! The lines go through the fold on one thread, in file order, as such readers' ids and
//! diagnostics depend on the lines before: pass one costs the whole reader's time, not its
//! memory.

use std::collections::HashMap;
use std::io;

use super::pass1::{self, Noted, Pass1, Pass1Options, Scan, Spot};
use super::reading::{BranchCalls, CallOf, Needs, Reading, TwoPassReader};
use super::skeleton::Skeleton;
use super::{Job, MadeFor, Plan, PlanError, Source};
use crate::check::document::OpenCalls;
use crate::diag::Diagnostic;
use crate::formats::{Format, Input, ReadOutcome};
use crate::model::{Body, Content, Event, Meta, Node, Session};
use crate::records::{Finding, Span};

/// A reader as a fold over a file's lines.
pub(crate) trait Fold: Send {
    /// The next line (`text`, where `span` says): its node, when it makes one (a header does
    /// not). The fold says what it notices of it into its own diagnostics.
    fn line(&mut self, text: &[u8], span: Span) -> Option<Node>;
    /// After the last line: the metadata and diagnostics as the whole reader ends them
    /// (`damage`: what the records layer found; `findings`: its diagnostics, which come first),
    /// and what the nodes made so far must still learn from the lines after them.
    fn end(self: Box<Self>, damage: &[Finding], findings: Vec<Diagnostic>) -> Ended;
}

/// What a fold ends with (what it has nothing to say of, left at its default).
#[derive(Default)]
pub(crate) struct Ended {
    pub meta: Meta,
    pub diagnostics: Vec<Diagnostic>,
    /// Nodes (by index) whose compaction names its first kept node by a line that came after
    /// it (pi's version 1 `firstKeptEntryIndex`): that node's id.
    pub first_kept: HashMap<u32, Option<String>>,
    /// Nodes (by index) whose tool results the fold named from the calls on lines before them:
    /// the names, in the order of the node's result parts.
    pub named: HashMap<u32, Vec<Option<String>>>,
}

/// A format whose reader is a [`Fold`].
pub(crate) trait Lines: Sync {
    /// The fold that reads a file called `name`.
    fn fold<'n>(&self, name: &'n str) -> Box<dyn Fold + 'n>;
    /// The node of a line (`bytes`, at `at`), made from it alone as the fold made it, with the
    /// id and parent the fold gave it; its origin only when it is `made_for` this format's
    /// writer.
    fn node(&self, bytes: &[u8], at: Line, made_for: MadeFor) -> Node;
    /// The format these are the lines of: its target ([`Format::stream_target`]) writes its
    /// own sessions back too.
    fn format(&self) -> &'static dyn Format;
}

/// Where a line's node stands, as the fold placed it.
pub(crate) struct Line {
    /// Its line number in the file.
    pub number: u64,
    pub id: String,
    pub parent: Option<String>,
}

/// The whole reader of a [`Lines`] format: every line of `input` through its fold, every node
/// kept.
pub(crate) fn read_whole(lines: &dyn Lines, input: &Input) -> ReadOutcome {
    let (records, damage) = crate::records::split_slice(input.bytes, Default::default());
    let findings = crate::formats::record_diagnostics(input.name, &damage);
    let mut fold = lines.fold(input.name);
    let mut nodes = Vec::with_capacity(records.len());
    for rec in &records {
        nodes.extend(fold.line(&rec.bytes, rec.span));
    }
    // The fold's nodes have their result names already.
    let Ended {
        meta,
        diagnostics,
        first_kept,
        ..
    } = fold.end(&damage, findings);
    for (i, first) in first_kept {
        set_first_kept(&mut nodes[i as usize], first);
    }
    ReadOutcome {
        session: Session { meta, nodes },
        diagnostics,
    }
}

/// Names `node`'s tool results, in the order of its parts, as `names` says.
fn set_result_names(node: &mut Node, names: &[Option<String>]) {
    let Some(m) = node.message_mut() else {
        return;
    };
    let results = m.parts.iter_mut().filter_map(|p| match &mut p.content {
        Content::ToolResult { name, .. } => Some(name),
        _ => None,
    });
    for (name, given) in results.zip(names) {
        name.clone_from(given);
    }
}

/// Sets what a compaction names as its first kept node.
fn set_first_kept(node: &mut Node, first: Option<String>) {
    if let Body::Event(Event::Compaction { first_kept, .. }) = &mut node.body {
        *first_kept = first;
    }
}

/// A [`Lines`] format's reader in two passes, as its `Format::two_pass` gives it.
pub(crate) struct TwoPassLines(pub &'static dyn Lines);

impl TwoPassReader for TwoPassLines {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        Ok(Some(Box::new(read(self.0, name, source, needs, options)?)))
    }

    /// Through the format's own target, which takes a session of its own format as its whole
    /// writer does (each line as it was while its node reads the same): the lines are read
    /// again one run at a time, as for any target.
    fn write_back<'a>(
        &self,
        job: Job<'a>,
        needs: Needs,
        adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        let format = self.0.format();
        let Some(crate::engine::Target(target)) = format.stream_target() else {
            return Ok(None);
        };
        super::through_target(job, format, self, target, needs.open_calls, adjust)
    }
}

/// Pass one over `source` (called `name` in messages), for what `needs` asks.
pub(crate) fn read<'l>(
    lines: &'l dyn Lines,
    name: &str,
    source: &dyn Source,
    needs: Needs,
    options: Pass1Options,
) -> io::Result<Known<'l>> {
    let scanner = Scanner { lines, name, needs };
    pass1::known(source, name, &scanner, options)
}

struct Scanner<'l, 'n> {
    lines: &'l dyn Lines,
    name: &'n str,
    needs: Needs,
}

/// A block's lines, kept for the fold, which goes through them in file order.
#[derive(Default)]
struct Block {
    lines: Vec<(Span, Box<str>)>,
}

/// The fold, and what is kept of each node.
#[derive(Default)]
struct Acc<'n> {
    fold: Option<Box<dyn Fold + 'n>>,
    /// Each node's record (its place in pass one's records).
    records: Vec<u32>,
    skeleton: Skeleton,
    flags: Vec<u8>,
    open: OpenCalls,
    calls: Vec<CallOf>,
}

/// The node is a message (else an event).
const MESSAGE: u8 = 1;
/// The node has a time.
const TIMED: u8 = 2;

impl<'l, 'n> Scan for Scanner<'l, 'n> {
    type Block = Block;
    type Acc = Acc<'n>;
    type Known = Known<'l>;

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        block.lines.push((span, record.raw.text().into()));
    }

    fn merge(&self, acc: &mut Acc<'n>, block: &mut Block, first: usize) {
        let fold = acc.fold.get_or_insert_with(|| self.lines.fold(self.name));
        for (k, (span, text)) in block.lines.drain(..).enumerate() {
            let Some(node) = fold.line(text.as_bytes(), span) else {
                continue;
            };
            let index = acc.records.len() as u32;
            acc.records.push((first + k) as u32);
            let id = acc.skeleton.intern(&node.id);
            let parent = node.parent.as_deref().map(|p| acc.skeleton.intern(p));
            acc.skeleton.push(id, parent);
            let mut flags = 0;
            if matches!(node.body, Body::Message(_)) {
                flags |= MESSAGE;
            }
            if node.timestamp.is_some() {
                flags |= TIMED;
            }
            acc.flags.push(flags);
            if self.needs.open_calls {
                acc.open.note(&node);
            }
            if self.needs.call_names {
                for p in node.message().map_or(&[][..], |m| m.parts.as_slice()) {
                    if let Content::ToolCall { id, name, .. } = &p.content {
                        let id = id.as_deref().map(Into::into);
                        acc.calls.push((index, id, name.as_str().into()));
                    }
                }
            }
        }
    }

    fn known(&self, pass: Pass1<Acc<'n>>, findings: Vec<Diagnostic>) -> Known<'l> {
        let Pass1 {
            spots,
            findings: damage,
            acc,
            ..
        } = pass;
        let fold = acc.fold.unwrap_or_else(|| self.lines.fold(self.name));
        let Ended {
            meta,
            diagnostics,
            first_kept,
            named,
        } = fold.end(&damage, findings);
        Known {
            lines: self.lines,
            meta,
            diagnostics,
            spots: acc.records.iter().map(|&r| spots[r as usize]).collect(),
            skeleton: acc.skeleton,
            flags: acc.flags,
            first_kept,
            named,
            open_calls: acc.open.count(),
            calls: acc.calls,
        }
    }
}

/// A session of such a format as pass one knows it.
pub(crate) struct Known<'l> {
    lines: &'l dyn Lines,
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    /// Where each node's line is (a header is no node).
    spots: Vec<Spot>,
    skeleton: Skeleton,
    flags: Vec<u8>,
    first_kept: HashMap<u32, Option<String>>,
    named: HashMap<u32, Vec<Option<String>>>,
    open_calls: usize,
    calls: Vec<CallOf>,
}

impl Reading for Known<'_> {
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

    /// The node the metadata names (these readers name the last one).
    fn head(&self) -> Option<u32> {
        self.meta
            .head
            .as_deref()
            .and_then(|h| self.skeleton.index_of(h))
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

    fn call_names(&mut self, branch: &[u32]) -> BranchCalls {
        BranchCalls::of(&self.calls, &self.skeleton, branch)
    }

    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let sk = &self.skeleton;
        let at = Line {
            number: self.spots[index as usize].line,
            id: sk.name(index),
            parent: sk.parent_id(index).map(|p| sk.ids.name(p).to_string()),
        };
        let mut node = self.lines.node(bytes, at, made_for);
        if let Some(first) = self.first_kept.get(&index) {
            set_first_kept(&mut node, first.clone());
        }
        if let Some(names) = self.named.get(&index) {
            set_result_names(&mut node, names);
        }
        node
    }
}

/// [`assert_reads_as_whole`] on every file in the folder `dir`: how many there were.
#[cfg(test)]
pub(crate) fn assert_folder_reads_as_whole(lines: &'static dyn Lines, dir: &str) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.unwrap().path();
        if path.is_file() {
            assert_reads_as_whole(
                lines,
                &path.display().to_string(),
                &std::fs::read(&path).unwrap(),
            );
            n += 1;
        }
    }
    n
}

/// Pass one (in blocks of `block_size`) and pass two of `bytes` give what `format`'s whole
/// reader gives: the metadata, the diagnostics in order, every node, the
/// kinds, the unanswered calls, the call names. For each format's tests.
#[cfg(test)]
pub(crate) fn assert_reads_as_whole(lines: &'static dyn Lines, name: &str, bytes: &[u8]) {
    use super::Bytes;
    let format = lines.format();
    for block_size in [1, 97, 4 << 20] {
        let whole = format
            .read(&Input {
                name,
                path: None,
                bytes,
            })
            .unwrap();
        let needs = Needs {
            nodes: true,
            open_calls: true,
            call_names: true,
        };
        let options = Pass1Options { block_size };
        let mut known = read(lines, name, &Bytes(bytes), needs, options).unwrap();
        let session = &whole.session;
        assert_eq!(known.meta(), &session.meta, "{name}");
        assert_eq!(known.diagnostics(), &whole.diagnostics[..], "{name}");
        assert_eq!(known.spots().len(), session.nodes.len(), "{name}");
        let tree = session.tree();
        assert_eq!(
            known.head().map(|h| h as usize),
            session.meta.head.as_deref().and_then(|h| tree.index_of(h)),
            "{name}: head"
        );
        let all: Vec<u32> = (0..session.nodes.len() as u32).collect();
        let source = Bytes(bytes);
        super::reading::each_node(&known, &source, &all, MadeFor::OwnWriter, |i, got| {
            let want = &session.nodes[i as usize];
            assert_eq!(&got, want, "{name}: node {i}");
            assert_eq!(known.is_message(i), want.message().is_some(), "{name}");
            assert_eq!(known.timed(i), want.timestamp.is_some(), "{name}");
        })
        .unwrap();
        let open = crate::check::document::unanswered_calls(session).len();
        assert_eq!(known.open_calls(), open, "{name}");
        let names = crate::formats::gemini_content::call_names(session.nodes.iter());
        assert_eq!(known.call_names(&all).names, names, "{name}");
    }
}
