//! The streaming JSONL splitter: a reusable buffer, refilled in large chunks, that grows only to
//! the longest line (and never past the line limit).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, Read};

use super::line::{Core, Item};
use super::{Event, Options, Record};

/// How much is read at a time.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

/// Splits a JSONL stream into [`Event`]s: records and damage findings, in file order.
///
/// A lending iterator: call [`next_event`](Self::next_event) until it returns `Ok(None)`; each
/// event borrows the splitter's buffer until the next call. Memory: one buffer as large as the
/// longest line plus one chunk; a line over [`Options::max_line_len`] is skipped to its newline
/// without being buffered (and reported as [`Damage::Oversized`](super::Damage::Oversized)).
pub struct Splitter<R: Read> {
    reader: R,
    core: Core,
    /// Storage; the unconsumed bytes are `buf[pos..filled]`.
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    /// `buf[pos..scanned]` holds no `\n`.
    scanned: usize,
    /// Absolute file offset of `buf[0]`.
    buf_offset: u64,
    /// Number of the next line.
    line: u64,
    chunk: usize,
    eof: bool,
    finished: bool,
    /// Events of the current line, still to be returned; records point into `buf` from
    /// `queue_base`.
    queue: VecDeque<Item>,
    queue_base: usize,
}

impl<R: Read> Splitter<R> {
    pub fn new(reader: R, options: Options) -> Self {
        Self::with_chunk_size(reader, options, DEFAULT_CHUNK_SIZE)
    }

    /// Like [`new`](Self::new), reading `chunk_size` bytes at a time (at least 1). Small sizes
    /// are for tests: results never depend on where chunk boundaries fall.
    pub fn with_chunk_size(reader: R, options: Options, chunk_size: usize) -> Self {
        Splitter {
            reader,
            core: Core::new(options.max_line_len),
            buf: Vec::new(),
            pos: 0,
            filled: 0,
            scanned: 0,
            buf_offset: 0,
            line: 1,
            chunk: chunk_size.max(1),
            eof: false,
            finished: false,
            queue: VecDeque::new(),
            queue_base: 0,
        }
    }

    /// The next record or finding; `Ok(None)` at the end of the input. The returned borrow is
    /// valid until the next call. After an I/O error the splitter should not be used again.
    pub fn next_event(&mut self) -> io::Result<Option<Event<'_>>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Ok(Some(match item {
                    Item::Finding(finding) => Event::Damage(finding),
                    Item::Record { start, span, lossy } => {
                        let start = self.queue_base + start;
                        let bytes = &self.buf[start..start + span.len as usize];
                        Event::Record(Record {
                            span,
                            bytes: record_bytes(bytes, lossy),
                        })
                    }
                }));
            }
            if self.finished {
                return Ok(None);
            }
            self.advance()?;
        }
    }

    /// Size of the buffer (for tests of its bound).
    #[cfg(test)]
    pub(crate) fn buffer_len(&self) -> usize {
        self.buf.len()
    }

    /// Analyses the next line (or the end of input) into the queue.
    fn advance(&mut self) -> io::Result<()> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..self.filled]) {
                let newline = self.scanned + i;
                self.queue_base = self.pos;
                let content = &self.buf[self.pos..newline];
                let offset = self.buf_offset + self.pos as u64;
                self.core
                    .line(content, self.line, offset, true, &mut self.queue);
                self.line += 1;
                self.pos = newline + 1;
                self.scanned = self.pos;
                return Ok(());
            }
            self.scanned = self.filled;
            if self.eof {
                if self.pos < self.filled {
                    self.queue_base = self.pos;
                    let content = &self.buf[self.pos..self.filled];
                    let offset = self.buf_offset + self.pos as u64;
                    self.core
                        .line(content, self.line, offset, false, &mut self.queue);
                    self.pos = self.filled;
                }
                self.core.finish(&mut self.queue);
                self.finished = true;
                return Ok(());
            }
            if self.filled - self.pos > self.core.max_line_len() {
                return self.skip_oversized();
            }
            self.fill()?;
        }
    }

    /// Moves the partial line to the front, grows the buffer if it is full, reads one chunk.
    fn fill(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.buf_offset += self.pos as u64;
            self.filled -= self.pos;
            self.scanned -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() - self.filled < self.chunk {
            self.buf.resize(self.filled + self.chunk, 0);
        }
        let n = read_some(&mut self.reader, &mut self.buf[self.filled..])?;
        if n == 0 {
            self.eof = true;
        }
        self.filled += n;
        Ok(())
    }

    /// The line starting at `pos` is over the limit and has no `\n` in the buffer: discards
    /// it and reads on, counting, until its `\n` or the end of input.
    fn skip_oversized(&mut self) -> io::Result<()> {
        let line = self.line;
        let start = self.buf_offset + self.pos as u64;
        let mut len = (self.filled - self.pos) as u64;
        if self.buf.len() < self.chunk {
            self.buf.resize(self.chunk, 0);
        }
        loop {
            self.buf_offset = start + len;
            self.pos = 0;
            self.filled = 0;
            self.scanned = 0;
            let n = read_some(&mut self.reader, &mut self.buf[..])?;
            if n == 0 {
                self.eof = true;
                self.core.oversized(line, start, len, &mut self.queue);
                return Ok(());
            }
            self.filled = n;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[..n]) {
                len += i as u64;
                self.core.oversized(line, start, len, &mut self.queue);
                self.line += 1;
                self.pos = i + 1;
                self.scanned = self.pos;
                return Ok(());
            }
            len += n as u64;
        }
    }
}

/// One `read`, retried on `Interrupted`.
fn read_some<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// A record's bytes as yielded: borrowed, or with invalid UTF-8 replaced by U+FFFD.
pub(crate) fn record_bytes(bytes: &[u8], lossy: bool) -> Cow<'_, [u8]> {
    if !lossy {
        return Cow::Borrowed(bytes);
    }
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}
