//! Where a conversion's output goes: memory, nowhere (a dry run), or a file written as it is
//! made (through a buffer, the kernel asked to start writing to disk as it goes, whole stretches
//! of the input copied by the kernel where it can).

use std::fs::File;
use std::io::{self, BufWriter, Write};

use super::source::{self, Source};

/// What an output is written into: memory, or a file through a buffer.
pub trait Output: Send {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Puts `len` bytes of `source` from its start, copied where it can without passing
    /// through this process (by the kernel, file to file); `false` when it cannot (nothing
    /// was put: the caller puts them itself).
    fn put_copy_of(&mut self, _source: &dyn Source, _len: u64) -> io::Result<bool> {
        Ok(false)
    }
    /// Takes back the last byte written (a line break the input did not end with).
    fn take_back_last(&mut self) -> io::Result<()>;
}

impl Output for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn put_copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        let Some(all) = source.as_slice() else {
            return Ok(false);
        };
        let len = usize::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
        self.extend_from_slice(all.get(..len).ok_or(io::ErrorKind::UnexpectedEof)?);
        Ok(true)
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        self.pop();
        Ok(())
    }
}

/// An output thrown away (a dry run: the report without the bytes).
pub struct Discard;

impl Output for Discard {
    fn put(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A file written through a buffer of 1 MiB.
pub struct FileOutput<'f> {
    writer: BufWriter<&'f File>,
    written: u64,
    failed: bool,
    /// How far the kernel was asked to start writing the file to disk (see `write_behind`).
    started: u64,
}

/// Bytes handed to the kernel between two requests to start writing them to disk.
const WRITE_BEHIND: u64 = 8 << 20;

impl<'f> FileOutput<'f> {
    pub fn new(file: &'f File) -> Self {
        FileOutput {
            writer: BufWriter::with_capacity(1 << 20, file),
            written: 0,
            failed: false,
            started: 0,
        }
    }

    /// Asks the kernel to start writing to disk what it holds of the file so far, without
    /// waiting: the fsync that makes the output durable before it is renamed into place then
    /// has little left to wait for (at 100 MB it waited about 50 ms for all of it). Only a
    /// hint: it changes nothing of what is written or when it is durable.
    fn write_behind(&mut self) {
        let handed = self.written - self.writer.buffer().len() as u64;
        if handed < self.started + WRITE_BEHIND {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.writer.get_ref().as_raw_fd();
            // SAFETY: a plain system call on a descriptor this output borrows; it reads no
            // memory of ours. Its result is ignored: it is a hint.
            unsafe {
                libc::sync_file_range(
                    fd,
                    self.started as libc::off64_t,
                    (handed - self.started) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.started = handed;
    }

    /// Whether writing into the file failed (else an error of [`super::Plan::write`] was the
    /// input's).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Writes what is still buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Output for FileOutput<'_> {
    fn put_copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        let done = self.copy_of(source, len);
        self.failed |= done.is_err();
        done
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        let done = self.writer.write_all(bytes);
        self.failed |= done.is_err();
        if done.is_ok() {
            self.write_behind();
        }
        done
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        let done = self.take_back_last_byte();
        self.failed |= done.is_err();
        done
    }
}

impl FileOutput<'_> {
    /// [`Output::put_copy_of`]: `copy_file_range` from the source's file, after what is
    /// buffered. Where the kernel cannot (another file system on an old kernel, a special
    /// file) nothing is copied and `false` said.
    #[cfg(target_os = "linux")]
    fn copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        let Some(from) = source.file() else {
            return Ok(false);
        };
        self.writer.flush()?;
        let (fd_in, fd_out) = (from.as_raw_fd(), self.writer.get_ref().as_raw_fd());
        let mut offset: libc::loff_t = 0;
        let mut left = len;
        while left > 0 {
            // In pieces, so the kernel starts writing each to disk as the next is copied.
            let chunk = left.min(WRITE_BEHIND) as usize;
            // SAFETY: two descriptors this process holds open, and the offset of the input a
            // local the call updates; the output's own offset moves as a write moves it.
            let n = unsafe {
                libc::copy_file_range(fd_in, &mut offset, fd_out, std::ptr::null_mut(), chunk, 0)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                let unsupported = matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP)
                );
                if left == len && unsupported {
                    return Ok(false);
                }
                return Err(e);
            }
            if n == 0 {
                // The input is shorter than pass one found it.
                return Err(source::short());
            }
            left -= n as u64;
            self.written += n as u64;
            self.write_behind();
        }
        Ok(true)
    }

    #[cfg(not(target_os = "linux"))]
    fn copy_of(&mut self, _source: &dyn Source, _len: u64) -> io::Result<bool> {
        Ok(false)
    }

    fn take_back_last_byte(&mut self) -> io::Result<()> {
        if self.written == 0 {
            return Ok(());
        }
        self.writer.flush()?;
        self.written -= 1;
        let file = *self.writer.get_ref();
        file.set_len(self.written)?;
        use std::io::Seek;
        let mut f = file;
        f.seek(io::SeekFrom::Start(self.written))?;
        Ok(())
    }
}
