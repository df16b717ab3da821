//! Pass one over a JSONL session: split into records (naming every damage), take each
//! record's keys, and keep only small facts: offsets and interned ids, never content. Large
//! files go in blocks that end on a line break, several blocks at a time on the thread pool.

use std::io::Read;

use super::capped::Capped;
use super::ident::{Ident, Interner};
use super::issue::Issue;
use crate::diag::Severity;
use crate::formats::{Format, Keys, Parent};
use crate::records::{Block, BlockReader, Damage, Finding, LineSplitter, Options, Piece, Record};

/// A record's parent link, interned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// No parent field (or the format has no links).
    None,
    Root,
    Id(u32),
}

/// What pass one keeps of a record.
#[derive(Debug, Clone)]
pub struct Rec {
    pub line: u64,
    pub offset: u64,
    /// Bytes (a record is never longer than the line limit, which fits).
    pub len: u32,
    pub id: Option<u32>,
    pub parent: Link,
    /// The parent is a logical link ([`Parent::Logical`]): the tool's own walk stops here.
    pub logical: bool,
    pub session: Option<u32>,
    pub kind: Option<u16>,
}

/// Everything pass one learnt about a file.
#[derive(Default)]
pub struct JsonlScan {
    pub bytes: u64,
    pub records: Vec<Rec>,
    /// Records-layer damage, in file order (the first of each kind listed, the rest counted).
    pub findings: Capped<Finding>,
    /// Record-level issues (missing fields, records that are not of this format).
    pub issues: Capped<Issue>,
    pub ids: Interner,
    pub kinds: Interner,
    /// `(record index, call id)` for each tool call made and each result given.
    pub calls: Vec<(u32, u32)>,
    pub results: Vec<(u32, u32)>,
    /// The first record says the session is a sub-agent that inherits its parent's history
    /// ([`Keys::subagent`]).
    pub subagent: bool,
    /// `(record index, call id)` of the calls that spawn a sub-agent ([`Keys::spawns`]).
    pub spawns: Vec<(u32, u32)>,
    /// The last sequence number seen (formats that number their records).
    last_seq: Option<u64>,
    /// The first record whose sequence number does not increase.
    pub first_bad_seq: Option<u32>,
    /// Whether the format lets repair renumber its records, and what else that changes.
    renumbers: Option<&'static str>,
}

/// How pass one reads.
#[derive(Debug, Clone, Copy)]
pub struct ScanOptions {
    pub records: Options,
    pub block_size: usize,
    /// The size of the input, when known: tables are sized once instead of growing.
    pub expected_bytes: u64,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            records: Options::default(),
            block_size: 1 << 20,
            expected_bytes: 0,
        }
    }
}

/// Pass one over `reader`; `progress` is told the bytes of each block as it is done.
pub fn scan<R: Read + Send>(
    reader: R,
    format: &dyn Format,
    options: ScanOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> std::io::Result<JsonlScan> {
    let mut blocks = BlockReader::new(reader, options.block_size, options.records.max_line_len)
        .expect(options.expected_bytes);
    let mut scan = JsonlScan {
        renumbers: format.renumbers(),
        ..JsonlScan::default()
    };
    crate::records::analyse_in_order(
        &mut blocks,
        |piece| analyse(piece, format, options.records),
        |out| {
            progress(out.bytes);
            if scan.records.is_empty() {
                scan.reserve_like(&out, options.expected_bytes);
            }
            scan.merge(out);
            true
        },
    )?;
    merge_crlf_runs(&mut scan.findings.listed);
    Ok(scan)
}

/// One block's facts, with ids not yet interned.
#[derive(Default)]
struct BlockOut {
    bytes: u64,
    records: Vec<LocalRec>,
    findings: Capped<Finding>,
    issues: Capped<Issue>,
    calls: Vec<(u32, Ident)>,
    results: Vec<(u32, Ident)>,
    spawns: Vec<(u32, Ident)>,
    /// The block's first record is a sub-agent's header ([`Keys::subagent`]).
    subagent_first: bool,
    /// Record types seen in the block (a handful), by local number.
    kinds: Vec<Box<str>>,
    /// The id and session of the block's last record so far: most records name them again
    /// (as parent, as session), and saying "the same" spares the merge a table lookup.
    prev_id: Option<Ident>,
    prev_session: Option<Ident>,
    /// Sequence numbers: the block's first `(seq, line, offset, record index)`, its last
    /// `seq`, and the first record (index in the block) whose number does not increase.
    first_seq: Option<(u64, u64, u64, u32)>,
    last_seq: Option<u64>,
    first_bad_seq: Option<u32>,
    renumbers: Option<&'static str>,
}

/// An id as the merge sees it.
enum Local {
    /// The previous record's id (parents) or session (sessions).
    Same,
    New(Ident),
}

struct LocalRec {
    line: u64,
    offset: u64,
    len: u32,
    id: Option<Ident>,
    parent: Option<Option<Local>>,
    logical: bool,
    session: Option<Local>,
    kind: Option<u16>,
}

fn analyse(piece: &Piece, format: &dyn Format, options: Options) -> BlockOut {
    let mut out = BlockOut {
        renumbers: format.renumbers(),
        ..BlockOut::default()
    };
    match piece {
        Piece::Oversized { line, offset, len } => {
            out.bytes = len + 1;
            out.findings.push(Finding {
                span: crate::records::Span {
                    line: *line,
                    offset: *offset,
                    len: *len,
                },
                damage: Damage::Oversized { len: *len },
            });
        }
        Piece::Block(block) => analyse_block(block, format, options, &mut out),
    }
    out
}

fn analyse_block(block: &Block, format: &dyn Format, options: Options, out: &mut BlockOut) {
    out.bytes = block.data.len() as u64;
    let mut splitter = LineSplitter::new(options);
    let mut slow_before = false;
    let mut records: Vec<Record> = Vec::new();
    for (content, line, offset, terminated) in block.lines() {
        if terminated
            && crate::records::plain_shape(content, options.max_line_len)
            && let Some(keys) = format.keys(content)
        {
            if slow_before {
                splitter.finish(&mut out.findings.listed);
                out.findings.maybe_trim();
                slow_before = false;
            }
            let span = crate::records::Span {
                line,
                offset,
                len: content.len() as u64,
            };
            out.add(span, keys);
            continue;
        }
        slow_before = true;
        records.clear();
        splitter.line(
            content,
            line,
            offset,
            terminated,
            &mut records,
            &mut out.findings.listed,
        );
        out.findings.maybe_trim();
        for record in &records {
            match format.keys(&record.bytes) {
                Some(keys) => out.add(record.span, keys),
                None => {
                    out.issues.push(
                        Issue::new(
                            "not-a-record",
                            Severity::Warning,
                            format!(
                                "a JSON value that is not a {} record; left as it is",
                                format.name()
                            ),
                        )
                        .at(record.span.line, record.span.offset),
                    );
                    // Still a record of the file: repair copies it, and indices must match.
                    out.add(record.span, Keys::default());
                }
            }
        }
    }
    splitter.finish(&mut out.findings.listed);
    out.findings.trim();
}

impl BlockOut {
    fn add(&mut self, span: crate::records::Span, keys: Keys) {
        let index = self.records.len() as u32;
        if let Some(why) = &keys.refused {
            // JSON the tool's own parser refuses: no record for the tool, as its reader says.
            self.issues.push(
                Issue::new(
                    "not-a-record",
                    Severity::Warning,
                    format!("{why}; left as it is"),
                )
                .at(span.line, span.offset),
            );
        }
        if let Some(seq) = keys.seq {
            match self.last_seq {
                None => self.first_seq = Some((seq, span.line, span.offset, index)),
                Some(prev) if seq <= prev => {
                    self.first_bad_seq.get_or_insert(index);
                    let issue = seq_issue(prev, seq, span.line, span.offset, self.renumbers);
                    self.issues.push(issue)
                }
                Some(_) => {}
            }
            self.last_seq = Some(seq);
        }
        if !keys.missing.is_empty() {
            self.issues.push(
                Issue::new(
                    "missing-field",
                    Severity::Error,
                    format!("record has no usable {}", keys.missing.join(", ")),
                )
                .at(span.line, span.offset),
            );
        }
        for call in &keys.calls {
            self.calls.push((index, Ident::new(call)));
        }
        for result in &keys.results {
            self.results.push((index, Ident::new(result)));
        }
        for spawn in &keys.spawns {
            self.spawns.push((index, Ident::new(spawn)));
        }
        if index == 0 && keys.subagent {
            self.subagent_first = true;
        }
        let kind = keys.kind.as_deref().map(|k| self.kind(k));
        let id = keys.id.as_deref().map(Ident::new);
        let logical = matches!(keys.parent, Parent::Logical(_));
        let parent = match &keys.parent {
            Parent::None => None,
            Parent::Root => Some(None),
            Parent::Id(p) | Parent::Logical(p) => Some(Some(same_or_new(&self.prev_id, p))),
        };
        let session = keys
            .session_id
            .as_deref()
            .map(|s| same_or_new(&self.prev_session, s));
        if let Some(Local::New(s)) = &session {
            self.prev_session = Some(s.clone());
        }
        self.prev_id.clone_from(&id);
        self.records.push(LocalRec {
            line: span.line,
            offset: span.offset,
            len: span.len as u32,
            id,
            parent,
            logical,
            session,
            kind,
        });
    }

    fn kind(&mut self, kind: &str) -> u16 {
        match self.kinds.iter().position(|k| &**k == kind) {
            Some(i) => i as u16,
            None => {
                self.kinds.push(kind.into());
                (self.kinds.len() - 1) as u16
            }
        }
    }
}

/// A record whose sequence number does not follow the one before; `renumbers` as
/// [`Format::renumbers`] says.
fn seq_issue(prev: u64, seq: u64, line: u64, offset: u64, renumbers: Option<&str>) -> Issue {
    let issue = Issue::new(
        "seq-not-increasing",
        Severity::Error,
        format!("sequence number {seq} after {prev}: the numbers must increase"),
    )
    .at(line, offset);
    let Some(caveat) = renumbers else {
        return issue;
    };
    issue.fix(format!(
        "renumber this record and any later one whose number is not above the one before, in file order (the tool reads in that order; nothing else changes, but {caveat})"
    ))
}

/// `Same` when `text` is the id in `prev`.
fn same_or_new(prev: &Option<Ident>, text: &str) -> Local {
    let id = Ident::new(text);
    if prev.as_ref() == Some(&id) {
        Local::Same
    } else {
        Local::New(id)
    }
}

impl JsonlScan {
    /// Sizes the tables for a whole file of `bytes` from what its first block holds.
    fn reserve_like(&mut self, first: &BlockOut, bytes: u64) {
        if first.records.is_empty() || first.bytes == 0 || bytes <= first.bytes {
            return;
        }
        let per_record = first.bytes / first.records.len() as u64;
        let records = (bytes / per_record.max(1)) as usize;
        let records = records + records / 16;
        self.records.reserve(records);
        // Ids: one per record, plus the session and call ids.
        self.ids.reserve(records + records / 8);
    }

    fn merge(&mut self, out: BlockOut) {
        let base = self.records.len() as u32;
        if let (Some(prev), Some((seq, line, offset, index))) = (self.last_seq, out.first_seq)
            && seq <= prev
        {
            self.first_bad_seq.get_or_insert(base + index);
            let issue = seq_issue(prev, seq, line, offset, self.renumbers);
            self.issues.push(issue);
        }
        if let Some(i) = out.first_bad_seq {
            self.first_bad_seq.get_or_insert(base + i);
        }
        if out.last_seq.is_some() {
            self.last_seq = out.last_seq;
        }
        let kinds: Vec<u16> = out
            .kinds
            .iter()
            .map(|k| self.kinds.intern(Ident::Text(k.clone())) as u16)
            .collect();
        self.bytes += out.bytes;
        self.findings.append(out.findings);
        self.issues.append(out.issues);
        // Within a block `Same` refers to the block's own previous record; the first record
        // of a block always comes as `New` (its block did not know the one before).
        let mut prev_id = None;
        let mut prev_session = None;
        for r in out.records {
            let parent = match r.parent {
                None => Link::None,
                Some(None) => Link::Root,
                Some(Some(Local::Same)) => prev_id.map_or(Link::None, Link::Id),
                Some(Some(Local::New(p))) => Link::Id(self.ids.intern(p)),
            };
            let session = match r.session {
                None => None,
                Some(Local::Same) => prev_session,
                Some(Local::New(s)) => {
                    let n = self.ids.intern(s);
                    prev_session = Some(n);
                    Some(n)
                }
            };
            let id = r.id.map(|i| self.ids.intern(i));
            prev_id = id;
            self.records.push(Rec {
                line: r.line,
                offset: r.offset,
                len: r.len,
                id,
                parent,
                logical: r.logical,
                session,
                kind: r.kind.map(|k| kinds[k as usize]),
            });
        }
        for (rec, call) in out.calls {
            let id = self.ids.intern(call);
            self.calls.push((base + rec, id));
        }
        for (rec, result) in out.results {
            let id = self.ids.intern(result);
            self.results.push((base + rec, id));
        }
        for (rec, spawn) in out.spawns {
            let id = self.ids.intern(spawn);
            self.spawns.push((base + rec, id));
        }
        if base == 0 && out.subagent_first {
            self.subagent = true;
        }
    }
}

/// Blocks are analysed apart, so a CRLF run over a block boundary comes as two findings:
/// join them back into one. Other findings on the run's lines (a blank line) may come between
/// the two.
fn merge_crlf_runs(findings: &mut Vec<Finding>) {
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    // Where in `out` the last CRLF run is.
    let mut last_run: Option<usize> = None;
    for f in findings.drain(..) {
        if let Damage::Crlf { lines } = &f.damage {
            if let Some(prev) = last_run.map(|i| &mut out[i])
                && let Damage::Crlf { lines: prev_lines } = &mut prev.damage
                && prev.span.line + *prev_lines == f.span.line
            {
                *prev_lines += lines;
                continue;
            }
            last_run = Some(out.len());
        }
        out.push(f);
    }
    *findings = out;
}
