//! Large files in blocks that end on a line break, so that blocks can be analysed on several
//! threads at once and memory stays bounded by the block size (plus the longest line).

use std::io::{self, Read};

/// Bytes of whole lines: every line in `data` ends with `\n`, except the last line of the
/// file, which may not.
#[derive(Debug)]
pub struct Block {
    pub data: Vec<u8>,
    /// Number of the block's first line (1-based).
    pub line: u64,
    /// Absolute file offset of `data[0]`.
    pub offset: u64,
}

impl Block {
    /// The block's lines: `(content without \n, line, offset, terminated)`.
    pub fn lines(&self) -> impl Iterator<Item = (&[u8], u64, u64, bool)> + '_ {
        super::lines_of(&self.data, self.line, self.offset)
    }
}

/// What a [`BlockReader`] yields.
#[derive(Debug)]
pub enum Piece {
    Block(Block),
    /// A line longer than the limit, skipped without being buffered. `len` excludes its `\n`.
    Oversized {
        line: u64,
        offset: u64,
        len: u64,
    },
}

/// Reads a stream as [`Piece`]s of about `block_size` bytes.
pub struct BlockReader<R: Read> {
    reader: R,
    block_size: usize,
    max_line_len: usize,
    /// Bytes read after the last block's final `\n`.
    carry: Vec<u8>,
    offset: u64,
    line: u64,
    eof: bool,
    /// Buffers of blocks handed back by [`recycle`](Self::recycle), to be filled again:
    /// allocating (and faulting in) a fresh block every time costs more than reading it.
    spare: Vec<Vec<u8>>,
    /// Bytes the stream is expected to hold (0: unknown): a small file gets a small buffer.
    expected: u64,
}

impl<R: Read> BlockReader<R> {
    pub fn new(reader: R, block_size: usize, max_line_len: usize) -> Self {
        BlockReader {
            reader,
            block_size: block_size.max(1),
            max_line_len,
            carry: Vec::new(),
            offset: 0,
            line: 1,
            eof: false,
            spare: Vec::new(),
            expected: 0,
        }
    }

    /// Sizes buffers for a stream of about `bytes` (reading still goes to its real end).
    pub fn expect(mut self, bytes: u64) -> Self {
        self.expected = bytes;
        self
    }

    /// Bytes of the stream handed out so far, in blocks and skipped lines.
    pub fn consumed(&self) -> u64 {
        self.offset
    }

    /// Gives a block's buffer back for reuse.
    pub fn recycle(&mut self, mut data: Vec<u8>) {
        if self.spare.len() < 16 {
            data.clear();
            self.spare.push(data);
        }
    }

    pub fn next_piece(&mut self) -> io::Result<Option<Piece>> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.extend_from_slice(&self.carry);
        self.carry.clear();
        // Where the search for the last `\n` may start (bytes before it hold none).
        let mut searched = 0;
        loop {
            let wanted = if buf.len() < self.block_size {
                self.block_size - buf.len()
            } else {
                self.block_size
            };
            if !self.eof
                && (buf.len() < self.block_size
                    || memchr::memchr(b'\n', &buf[searched..]).is_none())
            {
                if buf.len() - line_start(&buf) > self.max_line_len {
                    return self.oversized(buf).map(Some);
                }
                let before = buf.len();
                searched = before;
                let left = self.expected.saturating_sub(self.offset + before as u64) as usize;
                buf.reserve(if left > 0 {
                    wanted.min(left + 1)
                } else {
                    wanted
                });
                // `read_to_end` fills spare capacity without zeroing it first.
                let n = (&mut self.reader)
                    .take(wanted as u64)
                    .read_to_end(&mut buf)?;
                if n < wanted {
                    self.eof = true;
                }
                continue;
            }
            if buf.is_empty() {
                return Ok(None);
            }
            let cut = if self.eof {
                buf.len()
            } else {
                memchr::memrchr(b'\n', &buf).map_or(buf.len(), |i| i + 1)
            };
            self.carry.extend_from_slice(&buf[cut..]);
            buf.truncate(cut);
            let block = Block {
                line: self.line,
                offset: self.offset,
                data: buf,
            };
            self.line += memchr::memchr_iter(b'\n', &block.data).count() as u64;
            self.offset += block.data.len() as u64;
            return Ok(Some(Piece::Block(block)));
        }
    }

    /// `buf` holds complete lines and then the start of a line over the limit: yields the
    /// complete lines first (keeping the long line's start), else skips the long line.
    fn oversized(&mut self, mut buf: Vec<u8>) -> io::Result<Piece> {
        let start = line_start(&buf);
        if start > 0 {
            self.carry = buf.split_off(start);
            let block = Block {
                line: self.line,
                offset: self.offset,
                data: buf,
            };
            self.line += memchr::memchr_iter(b'\n', &block.data).count() as u64;
            self.offset += block.data.len() as u64;
            return Ok(Piece::Block(block));
        }
        let (line, offset) = (self.line, self.offset);
        let mut len = buf.len() as u64;
        buf.resize(self.block_size.max(64 << 10), 0);
        loop {
            let n = read_full(&mut self.reader, &mut buf)?;
            if n == 0 {
                self.eof = true;
                self.offset += len;
                return Ok(Piece::Oversized { line, offset, len });
            }
            if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
                len += i as u64;
                self.carry = buf[i + 1..n].to_vec();
                self.offset += len + 1;
                self.line += 1;
                return Ok(Piece::Oversized { line, offset, len });
            }
            len += n as u64;
        }
    }
}

/// Index of the first byte after the last `\n` (0 when there is none).
fn line_start(buf: &[u8]) -> usize {
    memchr::memrchr(b'\n', buf).map_or(0, |i| i + 1)
}

/// Fills `buf` as far as the stream goes; returns how many bytes were read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{LineSplitter, Options, split_slice};

    /// Splits `data` through blocks of `size` and returns what `split_slice` would.
    fn via_blocks(
        data: &[u8],
        size: usize,
        max: usize,
    ) -> (Vec<(u64, Vec<u8>)>, Vec<crate::records::Finding>) {
        let mut reader = BlockReader::new(data, size, max);
        let mut records = Vec::new();
        let mut findings = Vec::new();
        let mut lines = LineSplitter::new(Options { max_line_len: max });
        while let Some(piece) = reader.next_piece().unwrap() {
            match piece {
                Piece::Block(block) => {
                    let mut recs = Vec::new();
                    for (content, line, offset, terminated) in block.lines() {
                        lines.line(content, line, offset, terminated, &mut recs, &mut findings);
                    }
                    records.extend(
                        recs.into_iter()
                            .map(|r| (r.span.offset, r.bytes.into_owned())),
                    );
                }
                Piece::Oversized { line, offset, len } => {
                    lines.finish(&mut findings);
                    findings.push(crate::records::Finding {
                        span: crate::records::Span { line, offset, len },
                        damage: crate::records::Damage::Oversized { len },
                    });
                }
            }
        }
        lines.finish(&mut findings);
        (records, findings)
    }

    #[test]
    fn blocks_give_what_split_slice_gives() {
        let data: &[u8] =
            b"{\"a\":1}\n{\"b\":2}{\"c\":3}\r\n\r\n\0\0{\"d\":\n{\"e\":[1,2,3]}\n{\"f\":\"x\"";
        let (want_r, want_f) = split_slice(data, Options::default());
        let want_r: Vec<_> = want_r
            .into_iter()
            .map(|r| (r.span.offset, r.bytes.into_owned()))
            .collect();
        for size in 1..data.len() + 2 {
            let (r, f) = via_blocks(data, size, 1 << 20);
            assert_eq!(r, want_r, "block size {size}");
            assert_eq!(f, want_f, "block size {size}");
        }
    }

    #[test]
    fn oversized_lines_are_skipped_not_buffered() {
        let mut data = b"{\"a\":1}\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 1000));
        data.extend(b"\n{\"b\":2}\n");
        let (want_r, want_f) = split_slice(&data, Options { max_line_len: 100 });
        let want_r: Vec<_> = want_r
            .into_iter()
            .map(|r| (r.span.offset, r.bytes.into_owned()))
            .collect();
        for size in [1, 7, 64, 200, 5000] {
            let (r, f) = via_blocks(&data, size, 100);
            assert_eq!(r, want_r, "block size {size}");
            assert_eq!(f, want_f, "block size {size}");
        }
    }
}
