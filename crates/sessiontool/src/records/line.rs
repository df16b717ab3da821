//! One line at a time: the analysis shared by the streaming [`Splitter`](super::Splitter) and
//! [`split_slice`](super::split_slice), so both give identical results by construction.

use std::collections::VecDeque;
use std::ops::Range;

use serde::de::IgnoredAny;

use super::damage::{Damage, Finding, Span};
use super::glue;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a line turns into, in the order it is to be emitted.
#[derive(Debug)]
pub(crate) enum Item {
    Finding(Finding),
    /// A record whose bytes start `start` bytes after the line's first byte and are
    /// `span.len` long; `lossy`: the line has invalid UTF-8, replace it when yielding.
    Record {
        start: usize,
        span: Span,
        lossy: bool,
    },
}

/// Line analysis with the little state that crosses lines (the current CRLF run).
pub(crate) struct Core {
    max_line_len: usize,
    crlf_run: Option<(Span, u64)>,
    findings: Vec<Finding>,
    records: Vec<(Range<usize>, Span)>,
}

/// Where the line being analysed is.
#[derive(Clone, Copy)]
struct At {
    line: u64,
    offset: u64,
}

impl At {
    fn span(self, rel: Range<usize>) -> Span {
        Span {
            line: self.line,
            offset: self.offset + rel.start as u64,
            len: (rel.end - rel.start) as u64,
        }
    }
}

impl Core {
    pub(crate) fn new(max_line_len: usize) -> Self {
        Core {
            max_line_len,
            crlf_run: None,
            findings: Vec::new(),
            records: Vec::new(),
        }
    }

    pub(crate) fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// Analyses line number `line`, whose first byte is at absolute `offset`. `content` is the
    /// line without its `\n`; `terminated` says whether a `\n` followed it (false only for the
    /// last line of the input). Appends the line's items: findings first (by offset), then
    /// records (by offset).
    pub(crate) fn line(
        &mut self,
        content: &[u8],
        line: u64,
        offset: u64,
        terminated: bool,
        out: &mut VecDeque<Item>,
    ) {
        if content.len() > self.max_line_len {
            self.oversized(line, offset, content.len() as u64, out);
            return;
        }
        let at = At { line, offset };
        let mut body = 0..content.len();
        if terminated && content.last() == Some(&b'\r') {
            body.end -= 1;
            match &mut self.crlf_run {
                Some((_, lines)) => *lines += 1,
                None => self.crlf_run = Some((at.span(body.end..content.len()), 1)),
            }
        } else {
            self.flush_crlf(out);
        }
        if offset == 0 && content.starts_with(BOM) {
            self.findings.push(finding(at.span(0..3), Damage::Bom));
            body.start = 3;
        }
        let lossy = match simdutf8::compat::from_utf8(&content[body.clone()]) {
            Ok(_) => false,
            Err(e) => {
                let bad = body.start + e.valid_up_to();
                let len = e.error_len().unwrap_or(body.end - bad);
                let span = at.span(bad..bad + len);
                let damage = Damage::InvalidUtf8 { at: span.offset };
                self.findings.push(finding(span, damage));
                true
            }
        };
        self.body(content, body, at, terminated);
        if let [(first, _), .., (last, _)] = self.records.as_slice() {
            let span = at.span(first.start..last.end);
            let records = u32::try_from(self.records.len()).unwrap_or(u32::MAX);
            self.findings.push(finding(span, Damage::Glued { records }));
        }

        self.findings.sort_by_key(|f| f.span.offset);
        out.extend(self.findings.drain(..).map(Item::Finding));
        out.extend(self.records.drain(..).map(|(range, span)| Item::Record {
            start: range.start,
            span,
            lossy,
        }));
    }

    /// Reports a line longer than the limit; `len` excludes its `\n`.
    pub(crate) fn oversized(&mut self, line: u64, offset: u64, len: u64, out: &mut VecDeque<Item>) {
        self.flush_crlf(out);
        let span = Span { line, offset, len };
        out.push_back(Item::Finding(finding(span, Damage::Oversized { len })));
    }

    /// End of input: reports a CRLF run still open.
    pub(crate) fn finish(&mut self, out: &mut VecDeque<Item>) {
        self.flush_crlf(out);
    }

    fn flush_crlf(&mut self, out: &mut VecDeque<Item>) {
        if let Some((span, lines)) = self.crlf_run.take() {
            out.push_back(Item::Finding(finding(span, Damage::Crlf { lines })));
        }
    }

    /// The line's body (BOM and `\r` stripped): NUL runs cut it into segments, each analysed on
    /// its own.
    fn body(&mut self, content: &[u8], body: Range<usize>, at: At, terminated: bool) {
        let bytes = &content[body.clone()];
        // End of the last byte that is neither whitespace nor NUL: the segment holding it is the
        // one that may be a torn tail.
        let last_significant = bytes
            .iter()
            .rposition(|&b| b != 0 && !glue::is_json_ws(b))
            .map(|i| body.start + i + 1);
        if last_significant.is_none() && !bytes.contains(&0) {
            self.findings
                .push(finding(at.span(body.clone()), Damage::BlankLine));
            return;
        }
        let mut pos = body.start;
        while pos < body.end {
            let seg_end = memchr::memchr(0, &content[pos..body.end]).map_or(body.end, |i| pos + i);
            let trimmed = glue::trim_ws(&content[pos..seg_end]);
            if !trimmed.is_empty() {
                let seg = pos + trimmed.start..pos + trimmed.end;
                let last = !terminated && Some(seg.end) == last_significant;
                self.segment(content, seg, at, last);
            }
            pos = seg_end;
            let nul_end = content[pos..body.end]
                .iter()
                .position(|&b| b != 0)
                .map_or(body.end, |i| pos + i);
            if nul_end > pos {
                let damage = Damage::NulPadding {
                    len: (nul_end - pos) as u64,
                };
                self.findings.push(finding(at.span(pos..nul_end), damage));
            }
            pos = nul_end;
        }
    }

    /// One segment: trimmed, non-empty, no NUL. `last`: it ends the unterminated last line.
    ///
    /// A segment becomes: leading records split at `}{`, then possibly bytes that are not a
    /// record — a torn fragment with records glued after it, or (when `last`) a torn tail, or
    /// invalid JSON.
    fn segment(&mut self, content: &[u8], seg: Range<usize>, at: At, last: bool) {
        let s = &content[seg.clone()];
        let base = seg.start;
        let mut torn_tail = false;
        if glue::is_valid(s) {
            self.records.push((seg.clone(), at.span(seg.clone())));
        } else {
            let split = glue::split_objects(s);
            for piece in split.pieces {
                let range = base + piece.start..base + piece.end;
                self.records.push((range.clone(), at.span(range)));
            }
            if split.rest < s.len() {
                torn_tail = self.remainder(content, base + split.rest..seg.end, at, last);
            }
        }
        if last && !torn_tail {
            let eof = at.span(content.len()..content.len());
            self.findings
                .push(finding(eof, Damage::MissingFinalNewline));
        }
    }

    /// The bytes of a segment after its leading records (starting at a non-space byte, not
    /// empty). Returns true when they were reported as a torn tail.
    fn remainder(&mut self, content: &[u8], rest: Range<usize>, at: At, last: bool) -> bool {
        let r = &content[rest.clone()];
        let Err(err) = serde_json::from_slice::<IgnoredAny>(r) else {
            // One more value glued after the objects (an array, a number, ...).
            self.records.push((rest.clone(), at.span(rest)));
            return false;
        };
        // On the unterminated last line, bytes that are merely cut short (a valid JSON prefix)
        // are a torn tail even if a nested object closes right at the cut: `{"a":{"b":1}` is
        // far likelier a record cut after `}` than a fragment `{"a":` with `{"b":1}` glued on.
        let cut_short = err.classify() == serde_json::error::Category::Eof;
        let salvage = if last && cut_short {
            None
        } else {
            glue::torn_prefix(r)
        };
        match salvage {
            Some((p, pieces)) => {
                let frag = glue::trim_ws(&r[..p]);
                let frag = rest.start + frag.start..rest.start + frag.end;
                let damage = Damage::TornRecordGlued {
                    fragment_len: frag.len() as u64,
                };
                self.findings.push(finding(at.span(frag), damage));
                for piece in pieces {
                    let range = rest.start + piece.start..rest.start + piece.end;
                    self.records.push((range.clone(), at.span(range)));
                }
                false
            }
            None if last => {
                self.findings.push(finding(at.span(rest), Damage::TornTail));
                true
            }
            None => {
                let message = error_message(&err, at.offset + rest.start as u64);
                let damage = Damage::InvalidJson { message };
                self.findings.push(finding(at.span(rest), damage));
                false
            }
        }
    }
}

fn finding(span: Span, damage: Damage) -> Finding {
    Finding { span, damage }
}

/// serde_json's message with its position (relative to the bytes parsed, always line 1 here)
/// replaced by the absolute byte offset in the file.
fn error_message(err: &serde_json::Error, start: u64) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match text.strip_suffix(&suffix) {
        Some(code) if err.line() == 1 => {
            let at = start + err.column().saturating_sub(1) as u64;
            format!("{code} at byte {at}")
        }
        _ => text,
    }
}
