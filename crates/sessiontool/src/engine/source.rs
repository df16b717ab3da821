//! The bytes a two-pass conversion reads: a slice already in memory, or a file read in blocks
//! (pass one) and at positions (pass two), never held whole.

use std::fs::File;
use std::io::{self, Read};

/// Input read twice: once from start to end, then record by record.
pub trait Source: Sync {
    /// Bytes the conversion reads (a file's length when it was opened: what a tool appends
    /// later is not read).
    fn len(&self) -> u64;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` from `offset`; an input shorter than that is an error.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;

    /// The whole input, when it is in memory (then records are borrowed, not copied).
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    /// The input from its start, in order (pass one): at most [`len`](Self::len) bytes; the
    /// caller checks that it got them all.
    /// The file it reads, when it reads one (a copy can then be made by the kernel).
    fn file(&self) -> Option<&File> {
        None
    }
    fn reader(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new(Sequential::new(self)))
    }
}

/// Bytes already in memory.
#[derive(Clone, Copy)]
pub struct Bytes<'a>(pub &'a [u8]);

impl Source for Bytes<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| short())?;
        let bytes = self.0.get(start..start + buf.len()).ok_or_else(short)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(self.0)
    }
}

/// The error of an input that holds less than it did when it was opened.
pub(crate) fn short() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the input is shorter than when it was first read (did something rewrite it?)",
    )
}

/// A session file, read at positions.
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Reads `file` as it is now: its current length is all that will be read.
    pub fn new(file: File) -> io::Result<FileSource> {
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }

    pub fn file(&self) -> &File {
        &self.file
    }
}

impl Source for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn file(&self) -> Option<&File> {
        Some(&self.file)
    }

    /// The file read from its start through its own descriptor: a `File` fills a buffer
    /// without zeroing it first, which positioned reads through [`Sequential`] cannot (that
    /// cost a pass over every block). Pass two reads at positions, whatever this moved.
    fn reader(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        use std::io::{Seek, SeekFrom};
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))?;
        Ok(Box::new(file.take(self.len)))
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if offset + buf.len() as u64 > self.len {
            return Err(short());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file
                .read_exact_at(buf, offset)
                .map_err(|e| match e.kind() {
                    io::ErrorKind::UnexpectedEof => short(),
                    _ => e,
                })
        }
        #[cfg(not(unix))]
        {
            use std::io::{Seek, SeekFrom};
            let mut f = &self.file;
            f.seek(SeekFrom::Start(offset))?;
            f.read_exact(buf)
        }
    }
}

/// A source read from its start to its length, in order (pass one).
pub struct Sequential<'a, S: ?Sized> {
    source: &'a S,
    at: u64,
}

impl<'a, S: Source + ?Sized> Sequential<'a, S> {
    pub fn new(source: &'a S) -> Self {
        Sequential { source, at: 0 }
    }
}

impl<S: Source + ?Sized> Read for Sequential<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.source.len() - self.at;
        let n = (buf.len() as u64).min(left) as usize;
        if n == 0 {
            return Ok(0);
        }
        self.source.read_exact_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}
