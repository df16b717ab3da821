//! Opening a file that is named to be read: only a regular file is opened. A FIFO named on the
//! command line would block the read forever (until something writes to it), a device can
//! have side effects when opened, a socket cannot be read at all. So the type is checked
//! before opening, and the file is opened non-blocking and checked again (something could
//! swap a FIFO in between), then set back to blocking for the read.

use std::fs::{self, File, FileType};
use std::io::{self, Read};
use std::path::Path;

/// Why a path was refused: it is not a regular file. Its text is
/// `not a regular file (a FIFO)`; [`is_not_regular`] tells it from other I/O errors.
#[derive(Debug, thiserror::Error)]
#[error("not a regular file ({kind})")]
pub struct NotRegular {
    /// What it is instead: `a FIFO`, `a socket`, `a character device`, `a block device`,
    /// `a folder`.
    pub kind: &'static str,
}

/// Opens `path` for reading when it is a regular file (a symbolic link to one included);
/// anything else is an error of kind `InvalidInput` holding a [`NotRegular`]. Never blocks on
/// a FIFO.
pub fn open(path: &Path) -> io::Result<File> {
    refuse_special(fs::metadata(path)?.file_type())?;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    refuse_special(file.metadata()?.file_type())?;
    #[cfg(unix)]
    set_blocking(&file)?;
    Ok(file)
}

/// The whole of `path`, read as [`open`] opens it.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether `e` is [`open`]'s refusal of something that is not a regular file; its kind then.
pub fn is_not_regular(e: &io::Error) -> Option<&'static str> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<NotRegular>())
        .map(|n| n.kind)
}

/// What a file type is, when it is not a regular file.
pub fn special_kind(file_type: FileType) -> Option<&'static str> {
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a FIFO");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
    }
    if file_type.is_symlink() {
        return Some("a symbolic link");
    }
    Some("a special file")
}

fn refuse_special(file_type: FileType) -> io::Result<()> {
    match special_kind(file_type) {
        None => Ok(()),
        Some(kind) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            NotRegular { kind },
        )),
    }
}

/// Clears `O_NONBLOCK` again: a regular file ignores it, but the descriptor may be handed on.
#[cfg(unix)]
fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns; F_GETFL/F_SETFL touch only
    // its status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    #[test]
    fn a_regular_file_reads_and_stays_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        fs::write(&p, b"{}\n").unwrap();
        assert_eq!(read(&p).unwrap(), b"{}\n");
        use std::os::fd::AsRawFd;
        let f = open(&p).unwrap();
        let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
    }

    /// Runs `f` on a thread and fails if it takes longer than 20 s (a read blocked on a FIFO
    /// fails the test instead of hanging the suite).
    fn within_20s(f: impl FnOnce() + Send + 'static) {
        let (done, finished) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            f();
            let _ = done.send(());
        });
        match finished.recv_timeout(std::time::Duration::from_secs(20)) {
            Ok(()) => worker.join().unwrap(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(worker.join().unwrap_err())
            }
            Err(_) => panic!("blocked for 20 s"),
        }
    }

    #[test]
    fn a_fifo_a_socket_a_device_and_a_folder_are_refused_without_blocking() {
        within_20s(refuses_special_files);
    }

    fn refuses_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.jsonl");
        mkfifo(&fifo);
        let socket = dir.path().join("s.jsonl");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (link.as_path(), "a FIFO"),
            (socket.as_path(), "a socket"),
            (Path::new("/dev/null"), "a character device"),
            (dir.path(), "a folder"),
        ] {
            let e = read(path).unwrap_err();
            assert_eq!(is_not_regular(&e), Some(kind), "{}", path.display());
            assert_eq!(e.to_string(), format!("not a regular file ({kind})"));
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        let missing = read(&dir.path().join("missing")).unwrap_err();
        assert_eq!(is_not_regular(&missing), None);
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
