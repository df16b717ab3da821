//! Pass one: the input split into records exactly as [`crate::records::split_slice`] splits
//! it (the same records, the same findings in the same order), in blocks that end on a line
//! break, several blocks at a time on the thread pool; for each record, where it is and what
//! the format keeps of it ([`Scan`]). Memory is the records' places and the format's facts,
//! plus the blocks being read: never the content.

use std::io;

use super::source::{Source, short};
use crate::diag::Diagnostic;
use crate::json::facts::{Facts, checked_outlined, facts};
use crate::json::{Outline, Raw};
use crate::records::{
    BlockReader, Damage, Finding, LineSplitter, Options, Piece, Record, Span, plain_line,
};

/// What a format keeps of each record in pass one.
pub trait Scan: Sync {
    /// One block's facts (blocks are analysed on several threads at once), from nothing
    /// known.
    type Block: Send + Default;
    /// The whole file's facts: the blocks merged in file order.
    type Acc: Send + Default;
    /// What the whole file's facts come to: the session's metadata and diagnostics as its
    /// whole reader gives them, the records' places.
    type Known;
    /// The next record of the block, as the records layer gives it (BOM, CR and NUL
    /// stripped, invalid UTF-8 replaced): one valid JSON value, checked once, here, with the
    /// facts learnt as it was checked and, for most records, where the entries of the object
    /// are (`outline`).
    fn record(&self, block: &mut Self::Block, record: Noted<'_>, span: Span);
    /// The next block, in file order; its first record is record number `first`. Takes from
    /// `block` what it keeps: the rest is freed by the thread that made the block (see
    /// `engine::bins`).
    fn merge(&self, acc: &mut Self::Acc, block: &mut Self::Block, first: usize);
    /// [`Self::Known`] from pass one's facts; `findings` are the records layer's diagnostics
    /// as the whole reader gives them.
    fn known(&self, pass: Pass1<Self::Acc>, findings: Vec<Diagnostic>) -> Self::Known;
}

/// Pass one over `source` (called `name` in diagnostics) and what it comes to.
pub fn known<S: Scan>(
    source: &dyn Source,
    name: &str,
    scan: &S,
    options: Pass1Options,
) -> io::Result<S::Known> {
    let pass = run(source, scan, options)?;
    let findings = crate::formats::record_diagnostics(name, &pass.findings);
    Ok(scan.known(pass, findings))
}

/// A record and what its check learnt of it.
#[derive(Clone, Copy)]
pub struct Noted<'r> {
    pub raw: Raw<'r>,
    pub facts: &'r Facts,
    /// Where the object's entries are, when the check noted them.
    pub outline: Option<&'r Outline>,
    /// The record's text is not the file's bytes (invalid UTF-8 was replaced): places within
    /// it are not places in the file.
    pub lossy: bool,
}

impl<'r> Noted<'r> {
    /// [`Raw::pick`], from the outline when there is one.
    pub fn pick<const N: usize>(&self, keys: [&str; N]) -> [Option<Raw<'r>>; N] {
        match self.outline {
            Some(outline) => outline.pick(self.raw, keys),
            None => self.raw.pick(keys),
        }
    }

    /// [`Raw::pick`] of `value`, a value in the record: from the outline when there is one.
    pub fn pick_within<const N: usize>(
        &self,
        value: Raw<'r>,
        keys: [&str; N],
    ) -> [Option<Raw<'r>>; N] {
        match self.outline {
            Some(outline) => outline.pick_within(self.raw, value, keys),
            None => value.pick(keys),
        }
    }

    /// [`Raw::items`] of `value`, a value in the record: from the outline when there is one.
    pub fn items_within(&self, value: Raw<'r>) -> crate::json::ItemsWithin<'r, 'r> {
        match self.outline {
            Some(outline) => outline.items_within(self.raw, value),
            None => crate::json::ItemsWithin::from_text(value),
        }
    }
}

impl<'r> crate::json::Picker<'r> for Noted<'r> {
    fn pick_in<const N: usize>(&self, object: Raw<'r>, keys: [&str; N]) -> [Option<Raw<'r>>; N] {
        self.pick_within(object, keys)
    }

    fn each_entry(&self, object: Raw<'r>, f: &mut dyn FnMut(crate::json::Key<'r>, Raw<'r>)) {
        match self.outline {
            Some(outline) => outline.each_entry_within(self.raw, object, f),
            None => crate::json::FromText.each_entry(object, f),
        }
    }
}

/// Where a record is: enough to read it again in pass two. 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spot {
    pub offset: u64,
    pub line: u64,
    /// Bytes in the file (a record is never over the 1 GiB line limit).
    pub len: u32,
    /// Its line holds invalid UTF-8, replaced by U+FFFD when the record is read.
    pub lossy: bool,
}

impl Spot {
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }
}

/// Whether the records at `spots` are the input's `len` bytes line by line: one after another
/// from the start, each followed by the one byte of its line break, nothing lossy. With a
/// records layer that found nothing (no line glued, padded, cut, blank or ending in CRLF, so
/// that byte is a `\n`), their lines written in order are the input's very bytes.
pub fn lines_intact(spots: &[Spot], len: u64) -> bool {
    let mut at = 0;
    for s in spots {
        if s.offset != at || s.lossy {
            return false;
        }
        at = s.end() + 1;
    }
    at == len
}

/// Everything pass one learnt.
pub struct Pass1<A> {
    pub spots: Vec<Spot>,
    pub findings: Vec<Finding>,
    pub acc: A,
    /// The input's last byte is a line break.
    pub ends_with_newline: bool,
}

/// How pass one reads.
#[derive(Debug, Clone, Copy)]
pub struct Pass1Options {
    pub block_size: usize,
}

impl Default for Pass1Options {
    fn default() -> Self {
        Pass1Options {
            block_size: 1 << 20,
        }
    }
}

/// Pass one over `source`.
pub fn run<S: Scan>(
    source: &dyn Source,
    scan: &S,
    options: Pass1Options,
) -> io::Result<Pass1<S::Acc>> {
    match parallel(source, scan, options)? {
        Some(done) => Ok(done),
        // A CRLF run is one finding however many blocks it spans, placed where the run ends:
        // only one splitter carried from block to block places it as `split_slice` does.
        None => sequential(source, scan, options),
    }
}

fn ends_with_newline(source: &dyn Source) -> io::Result<bool> {
    if source.is_empty() {
        return Ok(false);
    }
    let mut last = [0u8];
    source.read_exact_at(&mut last, source.len() - 1)?;
    Ok(last[0] == b'\n')
}

/// One block's records, findings and facts.
struct BlockOut<B> {
    spots: Vec<Spot>,
    findings: Vec<Finding>,
    block: B,
}

impl<B> BlockOut<B> {
    /// A record the records layer vouches for (valid JSON in UTF-8) into its place and the
    /// format's facts.
    fn record<S: Scan<Block = B>>(
        &mut self,
        scan: &S,
        bytes: &[u8],
        (facts, outline): (&Facts, Option<&Outline>),
        lossy: bool,
        span: Span,
    ) {
        self.spots.push(Spot {
            offset: span.offset,
            line: span.line,
            len: span.len as u32,
            lossy,
        });
        // Always UTF-8 (the records layer replaced what was not); never a panic if not.
        match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => self.noted(scan, text, (facts, outline), lossy, span),
            // The outline's places are in `bytes`: not kept for other text.
            Err(_) => self.noted(
                scan,
                &String::from_utf8_lossy(bytes),
                (facts, None),
                true,
                span,
            ),
        }
    }

    /// [`record`](Self::record) of a plain line, its text checked as UTF-8 already.
    fn plain<S: Scan<Block = B>>(
        &mut self,
        scan: &S,
        text: &str,
        (facts, outline): (&Facts, &Outline),
        span: Span,
    ) {
        self.spots.push(Spot {
            offset: span.offset,
            line: span.line,
            len: span.len as u32,
            lossy: false,
        });
        self.noted(scan, text, (facts, Some(outline)), false, span);
    }

    /// The record's text to the format's scan.
    fn noted<S: Scan<Block = B>>(
        &mut self,
        scan: &S,
        text: &str,
        (facts, outline): (&Facts, Option<&Outline>),
        lossy: bool,
        span: Span,
    ) {
        let record = Noted {
            raw: Raw::valid(text),
            facts,
            outline,
            lossy,
        };
        scan.record(&mut self.block, record, span);
    }
}

/// Pass one with each block on its own; `None` when the file has CRLF lines (see [`run`]).
fn parallel<S: Scan>(
    source: &dyn Source,
    scan: &S,
    options: Pass1Options,
) -> io::Result<Option<Pass1<S::Acc>>> {
    let (mut blocks, mut out) = start::<S>(source, options)?;
    // What a merge leaves of a block is freed by the thread that made it.
    let bins = super::bins::Bins::new();
    let merged = crate::records::analyse_in_order(
        &mut blocks,
        |piece| {
            let thread = bins.empty_own();
            let mut splitter = LineSplitter::new(Options::default());
            let mut b = analyse(piece, scan, &mut splitter);
            splitter.finish(&mut b.findings);
            (thread, b)
        },
        |(thread, mut b)| {
            let crlf = b
                .findings
                .iter()
                .any(|f| matches!(f.damage, Damage::Crlf { .. }));
            if crlf {
                return false;
            }
            let first = out.spots.len();
            out.spots.extend_from_slice(&b.spots);
            out.findings.append(&mut b.findings);
            scan.merge(&mut out.acc, &mut b.block, first);
            bins.give_back(thread, b);
            true
        },
    )?;
    if !merged {
        return Ok(None);
    }
    all_read(&blocks, source)?;
    Ok(Some(out))
}

/// Pass one on this thread, one splitter for the whole file.
fn sequential<S: Scan>(
    source: &dyn Source,
    scan: &S,
    options: Pass1Options,
) -> io::Result<Pass1<S::Acc>> {
    let (mut blocks, mut out) = start::<S>(source, options)?;
    let mut splitter = LineSplitter::new(Options::default());
    while let Some(piece) = blocks.next_piece()? {
        let mut b = analyse(&piece, scan, &mut splitter);
        let first = out.spots.len();
        out.spots.extend_from_slice(&b.spots);
        out.findings.extend(b.findings);
        scan.merge(&mut out.acc, &mut b.block, first);
        if let Piece::Block(block) = piece {
            blocks.recycle(block.data);
        }
    }
    splitter.finish(&mut out.findings);
    all_read(&blocks, source)?;
    Ok(out)
}

/// A source's blocks, read from its start.
type Blocks<'s> = BlockReader<Box<dyn io::Read + Send + 's>>;

/// The input's blocks from its start, and nothing learnt yet.
fn start<'s, S: Scan>(
    source: &'s dyn Source,
    options: Pass1Options,
) -> io::Result<(Blocks<'s>, Pass1<S::Acc>)> {
    let max_line_len = Options::default().max_line_len;
    let blocks =
        BlockReader::new(source.reader()?, options.block_size, max_line_len).expect(source.len());
    let out = Pass1 {
        spots: Vec::new(),
        findings: Vec::new(),
        acc: S::Acc::default(),
        ends_with_newline: ends_with_newline(source)?,
    };
    Ok((blocks, out))
}

/// The whole input was read: a file that shrank since it was opened is an error, never a
/// shorter session.
fn all_read<R: io::Read>(blocks: &BlockReader<R>, source: &dyn Source) -> io::Result<()> {
    match blocks.consumed() == source.len() {
        true => Ok(()),
        false => Err(short()),
    }
}

/// One piece's records and findings. A fresh `splitter` (parallel) is finished at the end of
/// the block; a shared one (sequential) is finished by the caller at the end of the file.
fn analyse<S: Scan>(piece: &Piece, scan: &S, splitter: &mut LineSplitter) -> BlockOut<S::Block> {
    let mut out = BlockOut {
        spots: Vec::new(),
        findings: Vec::new(),
        block: S::Block::default(),
    };
    match piece {
        Piece::Oversized { line, offset, len } => {
            splitter.oversized(*line, *offset, *len, &mut out.findings);
        }
        Piece::Block(block) => {
            let max_line_len = Options::default().max_line_len;
            let mut records: Vec<Record> = Vec::new();
            let mut outline = Outline::default();
            for (content, line, offset, terminated) in block.lines() {
                // A plain line that is valid JSON is one record with nothing to say: taken
                // here, as fsck's scan takes it, its grammar checked once.
                if terminated
                    && let Some(text) = plain_line(content, max_line_len)
                    && let Some(facts) = checked_outlined(content, &mut outline)
                {
                    // It ends a CRLF run the splitter may have open (also from an earlier
                    // block: in a file with CRLF lines one splitter reads them all).
                    splitter.finish(&mut out.findings);
                    let span = Span {
                        line,
                        offset,
                        len: content.len() as u64,
                    };
                    out.plain(scan, text, (&facts, &outline), span);
                    continue;
                }
                records.clear();
                splitter.line(
                    content,
                    line,
                    offset,
                    terminated,
                    &mut records,
                    &mut out.findings,
                );
                for r in &records {
                    let lossy = matches!(r.bytes, std::borrow::Cow::Owned(_));
                    out.record(scan, &r.bytes, (&facts(&r.bytes), None), lossy, r.span);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::source::FileSource;

    /// Counts the records it is given.
    struct Count;

    impl Scan for Count {
        type Block = usize;
        type Acc = usize;
        type Known = usize;
        fn record(&self, block: &mut usize, _: Noted<'_>, _: Span) {
            *block += 1;
        }
        fn merge(&self, acc: &mut usize, block: &mut usize, _: usize) {
            *acc += *block;
        }
        fn known(&self, pass: Pass1<usize>, _: Vec<Diagnostic>) -> usize {
            pass.acc
        }
    }

    #[test]
    fn lines_are_intact_only_when_the_records_are_every_byte_but_their_line_breaks() {
        let spot = |offset, len, lossy| Spot {
            offset,
            line: 0,
            len,
            lossy,
        };
        // `{"a":1}\n{"b":2}\n`: 16 bytes.
        let two = [spot(0, 7, false), spot(8, 7, false)];
        assert!(lines_intact(&two, 16));
        assert!(lines_intact(&[], 0));
        // No final line break, a byte after the last line, a blank line between, a first
        // line that does not start the file, a record read with U+FFFD.
        assert!(!lines_intact(&two, 15));
        assert!(!lines_intact(&two, 17));
        assert!(!lines_intact(&[spot(0, 7, false), spot(9, 7, false)], 17));
        assert!(!lines_intact(&[spot(1, 7, false)], 9));
        assert!(!lines_intact(&[spot(0, 7, true)], 8));
    }

    #[test]
    fn a_file_is_read_to_the_length_it_had_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let line = b"{\"a\":1}\n".repeat(1000);
        std::fs::write(&path, &line).unwrap();
        for block_size in [64, 4 << 20] {
            let options = Pass1Options { block_size };
            let source = FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
            // Lines a tool appends later are not read.
            let mut more = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            std::io::Write::write_all(&mut more, b"{\"b\":2}\n").unwrap();
            let pass = run(&source, &Count, options).unwrap();
            assert_eq!((pass.acc, pass.spots.len()), (1000, 1000));
            // A file cut shorter since it was opened is an error, not a shorter session.
            more.set_len(line.len() as u64 / 2).unwrap();
            let err = run(&source, &Count, options).err().expect("an error");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
            std::fs::write(&path, &line).unwrap();
        }
    }
}
