//! Records: splits the bytes of a JSONL file into records, one JSON value each, and names every
//! kind of damage on the way, with its line and absolute byte offset.
//!
//! Nothing is silent and nothing is lost: every input byte is in exactly one of a yielded
//! [`Record`], the span of a [`Finding`] whose [`Damage::excludes_span`] is true, or the line
//! breaks and JSON whitespace around them. Format readers and `check` build on this; `repair`
//! uses the spans to rewrite a file byte for byte.
//!
//! # What a line becomes
//!
//! Lines end at `\n`. Per line:
//! - Longer than [`Options::max_line_len`] (bytes before the `\n`): [`Damage::Oversized`], never
//!   buffered, nothing else looked at.
//! - `\r\n`: the `\r` is stripped. Consecutive CRLF lines make one [`Damage::Crlf`] finding
//!   with the number of lines, so a file with CRLF everywhere gives one finding.
//! - A UTF-8 BOM at file offset 0 is stripped ([`Damage::Bom`]); elsewhere it is just bytes.
//! - Invalid UTF-8: [`Damage::InvalidUtf8`] at the line's first bad byte (once per line);
//!   records are yielded with U+FFFD replacement ([`Record::bytes`] is then owned).
//! - NUL runs are stripped ([`Damage::NulPadding`]) and cut the line into segments analysed
//!   on their own (NUL is never valid JSON, so a NUL run always marks damage).
//! - Empty or whitespace-only: [`Damage::BlankLine`] (not for a line of NULs, which is padding).
//! - A segment that is one valid JSON value is one record. Otherwise it is split, string-aware,
//!   into leading objects at top-level `}{` / `} {`, each valid. What does not split is, in
//!   this order of preference: a torn fragment followed by complete objects
//!   ([`Damage::TornRecordGlued`]); on the unterminated last line, a torn tail
//!   ([`Damage::TornTail`]); else [`Damage::InvalidJson`].
//! - A line that yields more than one record (from any of its segments) gets one
//!   [`Damage::Glued`] finding.
//! - The last line without `\n`: a torn tail as above, or, when it ends with a record,
//!   [`Damage::MissingFinalNewline`]. NULs (and whitespace) at the end of the file are padding:
//!   the line before them is not torn when it ended with `\n`.
//! - On the unterminated last line, bytes that are a valid JSON prefix cut short are a torn
//!   tail even when a nested object closes at the cut (`{"a":{"b":1}` is not salvaged as
//!   fragment `{"a":` + record `{"b":1}`); on a terminated line it is salvaged (writers append
//!   `record\n` in one write, so a line ending in `\n` ends with a whole record).
//!
//! # Order of events
//!
//! In file order, line by line. For each line, its findings come first (ordered by offset),
//! then its records (ordered by offset). A [`Damage::Crlf`] finding is emitted when its run
//! ends: just before the events of the first line that does not end in `\r\n`, or at the end
//! of the input; its span points back to the run's first line.

mod blocks;
mod damage;
mod glue;
mod in_order;
mod jsonl;
mod line;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Read;

pub use blocks::{Block, BlockReader, Piece};
pub use damage::{Damage, Finding, Span};
pub use in_order::analyse_in_order;
pub(crate) use jsonl::record_bytes;
pub use jsonl::{DEFAULT_CHUNK_SIZE, Splitter};

use line::{Core, Item};

/// Limits for the splitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Longest line (bytes before its `\n`) that is buffered and parsed. Default: 1 GiB, twice
    /// what a JavaScript tool can write at all (V8 strings stop at 2^29 - 24 UTF-16 units), so
    /// every record a Node tool writes is read; a longer line is reported, never read.
    pub max_line_len: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_line_len: 1 << 30,
        }
    }
}

/// Exactly one JSON value's bytes (BOM, NUL, CR and surrounding whitespace stripped) and where
/// they are in the file. `bytes` borrows the input unless invalid UTF-8 had to be replaced
/// (then `bytes.len()` may differ from `span.len`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub span: Span,
    pub bytes: Cow<'a, [u8]>,
}

impl Record<'_> {
    pub fn into_owned(self) -> OwnedRecord {
        OwnedRecord {
            span: self.span,
            bytes: self.bytes.into_owned(),
        }
    }
}

/// A [`Record`] that owns its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRecord {
    pub span: Span,
    pub bytes: Vec<u8>,
}

/// What the splitter yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    Record(Record<'a>),
    Damage(Finding),
}

/// The whole stream into owned records and findings, each in file order.
pub fn read_all<R: Read>(
    reader: R,
    options: Options,
) -> std::io::Result<(Vec<OwnedRecord>, Vec<Finding>)> {
    let mut splitter = Splitter::new(reader, options);
    let mut records = Vec::new();
    let mut findings = Vec::new();
    while let Some(event) = splitter.next_event()? {
        match event {
            Event::Record(record) => records.push(record.into_owned()),
            Event::Damage(finding) => findings.push(finding),
        }
    }
    Ok((records, findings))
}

/// Same as [`read_all`] over bytes already in memory; records borrow `data` (unless invalid
/// UTF-8 was replaced). Gives exactly what [`Splitter`] gives.
pub fn split_slice(data: &[u8], options: Options) -> (Vec<Record<'_>>, Vec<Finding>) {
    let mut lines = LineSplitter::new(options);
    let mut records = Vec::new();
    let mut findings = Vec::new();
    for (content, line, offset, terminated) in lines_of(data, 1, 0) {
        lines.line(
            content,
            line,
            offset,
            terminated,
            &mut records,
            &mut findings,
        );
    }
    lines.finish(&mut findings);
    (records, findings)
}

/// The lines of `data`, whose first byte is at file `offset` and starts line number `line`:
/// `(content without its \n, line, offset, terminated)`.
pub fn lines_of(
    data: &[u8],
    line: u64,
    offset: u64,
) -> impl Iterator<Item = (&[u8], u64, u64, bool)> + '_ {
    let mut pos = 0;
    let mut line = line;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let start = pos;
        let (end, terminated) = match memchr::memchr(b'\n', &data[pos..]) {
            Some(i) => (pos + i, true),
            None => (data.len(), false),
        };
        pos = end + 1;
        line += 1;
        Some((
            &data[start..end],
            line - 1,
            offset + start as u64,
            terminated,
        ))
    })
}

/// Whether a terminated line is one record as it stands, with nothing for the splitter to say:
/// an object (`{` to `}`, so no CR, no BOM, no glued tail) within the length limit, with no NUL,
/// in UTF-8. Callers that take such lines themselves must still check that they are valid JSON
/// (else hand them to [`LineSplitter::line`]) and call [`LineSplitter::finish`] before the next
/// line they hand over.
pub fn is_plain_line(content: &[u8], max_line_len: usize) -> bool {
    memchr::memchr(0, content).is_none() && plain_line(content, max_line_len).is_some()
}

/// [`is_plain_line`] but for NUL, giving the line's text (checked as UTF-8 once, for the
/// caller too), for a caller that checks the whole line is one JSON value (never with a NUL:
/// the grammar check refuses it) before it takes the line as a record.
pub fn plain_line(content: &[u8], max_line_len: usize) -> Option<&str> {
    if plain_shape(content, max_line_len) {
        simdutf8::basic::from_utf8(content).ok()
    } else {
        None
    }
}

/// [`is_plain_line`] but for NUL and UTF-8, for a caller whose next step refuses a line that
/// is not one JSON value in UTF-8 (which never holds a NUL): fsck's scan, whose format reads
/// the line's keys only from such a line ([`crate::formats::Reader::keys`]). Checked once
/// there, not here as well.
pub fn plain_shape(content: &[u8], max_line_len: usize) -> bool {
    content.first() == Some(&b'{') && content.last() == Some(&b'}') && content.len() <= max_line_len
}

/// Whether `bytes` are one JSON value (white space around it allowed), as the records layer
/// judges every line: what `JSON.parse` takes.
pub fn is_valid_json(bytes: &[u8]) -> bool {
    glue::is_valid(bytes)
}

/// Line-at-a-time access to the splitter's analysis, for callers that bring their own lines
/// (a block of a large file processed on another thread, or a fast path that only hands over
/// the lines it could not take itself). Results are those of [`split_slice`] for the same
/// lines, as long as lines are given in order and [`finish`](Self::finish) is called at the
/// end (and whenever lines are skipped, so a CRLF run does not reach across them).
pub struct LineSplitter {
    core: Core,
    queue: VecDeque<Item>,
}

impl LineSplitter {
    pub fn new(options: Options) -> Self {
        LineSplitter {
            core: Core::new(options.max_line_len),
            queue: VecDeque::new(),
        }
    }

    /// Analyses one line (`content` without its `\n`) at absolute `offset`.
    pub fn line<'a>(
        &mut self,
        content: &'a [u8],
        line: u64,
        offset: u64,
        terminated: bool,
        records: &mut Vec<Record<'a>>,
        findings: &mut Vec<Finding>,
    ) {
        self.core
            .line(content, line, offset, terminated, &mut self.queue);
        drain(&mut self.queue, content, records, findings);
    }

    /// A line over the length limit that the caller skipped without reading it (a
    /// [`Piece::Oversized`]): what [`line`](Self::line) says of such a line. `len` excludes
    /// its `\n`.
    pub fn oversized(&mut self, line: u64, offset: u64, len: u64, findings: &mut Vec<Finding>) {
        self.core.oversized(line, offset, len, &mut self.queue);
        drain(&mut self.queue, &[], &mut Vec::new(), findings);
    }

    /// Reports a CRLF run still open.
    pub fn finish(&mut self, findings: &mut Vec<Finding>) {
        self.core.finish(&mut self.queue);
        drain(&mut self.queue, &[], &mut Vec::new(), findings);
    }
}

/// Moves a line's items out of the queue; records borrow `line` (the bytes from the line's
/// start).
fn drain<'a>(
    queue: &mut VecDeque<Item>,
    line: &'a [u8],
    records: &mut Vec<Record<'a>>,
    findings: &mut Vec<Finding>,
) {
    for item in queue.drain(..) {
        match item {
            Item::Finding(finding) => findings.push(finding),
            Item::Record { start, span, lossy } => {
                let bytes = &line[start..start + span.len as usize];
                records.push(Record {
                    span,
                    bytes: jsonl::record_bytes(bytes, lossy),
                });
            }
        }
    }
}
