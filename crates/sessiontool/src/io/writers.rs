//! Which other processes hold a file open for writing. A long-running agent keeps its session
//! file open and appends through that descriptor: replacing the file under it would send
//! everything it writes next to the old inode. On Linux the kernel answers whether anyone
//! does in one call (a read lease is granted only on a file nobody writes); who does is in
//! `/proc/<pid>/fd`
//! (the links name the open files by their real path) and `/proc/<pid>/fdinfo` (their open
//! flags). Processes this user may not look into, or that see the file under another path
//! (another mount namespace), are not seen; elsewhere nothing is seen. Callers therefore also keep
//! the old inode reachable (as the backup), so that what such a writer adds is never lost.

use std::path::Path;

/// A process that has the file open for writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command name (`/proc/<pid>/comm`), `?` when unreadable.
    pub command: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            0 => write!(f, "another process ({})", self.command),
            pid => write!(f, "process {pid} ({})", self.command),
        }
    }
}

/// The other processes that hold `path` open for writing (empty when none are seen).
pub fn holders(path: &Path) -> Vec<Holder> {
    #[cfg(target_os = "linux")]
    {
        match linux::anyone_writes(path) {
            Some(false) => Vec::new(),
            Some(true) => {
                let named = linux::holders(path);
                if named.is_empty() {
                    // The kernel says someone writes it; /proc does not show us who.
                    vec![Holder {
                        pid: 0,
                        command: "not visible to this user".into(),
                    }]
                } else {
                    named
                }
            }
            None => linux::holders(path),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Vec::new()
    }
}

/// `holders` in words for a refusal: `process 12 (node) and process 40 (codex)`.
pub fn describe(holders: &[Holder]) -> String {
    let words: Vec<String> = holders.iter().map(Holder::to_string).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;
    use std::path::Path;

    use super::Holder;

    /// `fcntl`'s F_SETSIG (Linux's fcntl.h; the libc crate does not name it).
    const F_SETSIG: libc::c_int = 10;

    /// Whether any process has the file open for writing, in one system call: the kernel
    /// grants a read lease only on a file nobody has open for writing. The lease is let go at
    /// once. `None` where leases cannot be taken (another user's file without CAP_LEASE, a
    /// file system without leases): then /proc is read.
    pub fn anyone_writes(path: &Path) -> Option<bool> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
            .ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let fd = file.as_raw_fd();
        // A process that opens the file for writing in the instant the lease is held makes the
        // kernel signal the holder (SIGIO by default, which would end this process): ask for
        // SIGURG instead, which is ignored unless handled.
        // SAFETY: fcntl on a descriptor this function owns; no pointers are passed.
        if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } != 0 {
            return None;
        }
        // SAFETY: as above.
        let rc = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) };
        if rc == 0 {
            // SAFETY: as above.
            unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
            return Some(false);
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN) => Some(true),
            _ => None,
        }
    }

    pub fn holders(path: &Path) -> Vec<Holder> {
        // The links in /proc/<pid>/fd name the file by its real path: one string compare
        // per descriptor, no stat.
        let Ok(real) = fs::canonicalize(path) else {
            return Vec::new();
        };
        let me = std::process::id();
        let Ok(procs) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for proc in procs.flatten() {
            let Some(pid) = proc
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            if writes(pid, &real) {
                let command = fs::read_to_string(format!("/proc/{pid}/comm"))
                    .map(|c| c.trim_end().to_string())
                    .unwrap_or_else(|_| "?".into());
                found.push(Holder { pid, command });
            }
        }
        found
    }

    /// Whether process `pid` has the file open with a mode that writes.
    fn writes(pid: u32, real: &Path) -> bool {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        for fd in fds.flatten() {
            if fs::read_link(fd.path()).is_ok_and(|target| target == real) {
                let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
                if fs::read_to_string(info).is_ok_and(|i| opened_for_writing(&i)) {
                    return true;
                }
            }
        }
        false
    }

    /// `flags:` in fdinfo is octal; its two low bits are the access mode (1 write, 2 both).
    pub(super) fn opened_for_writing(fdinfo: &str) -> bool {
        fdinfo
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .is_some_and(|flags| flags & 0o3 != 0)
    }
}

/// Another process holding a file open, for tests: a shell with the file on descriptor 3,
/// until dropped.
#[cfg(test)]
pub(crate) struct OtherProcess(std::process::Child);

#[cfg(test)]
impl OtherProcess {
    /// Holds `path` open for appending (`append`) or for reading.
    pub(crate) fn holding(path: &Path, append: bool) -> OtherProcess {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let redirect = if append { "3>>" } else { "3<" };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {redirect}\"$1\"; echo ready; read _"))
            .arg("sh")
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 6];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut ready)
            .unwrap();
        assert_eq!(&ready, b"ready\n");
        OtherProcess(child)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }
}

#[cfg(test)]
impl Drop for OtherProcess {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_says_whether_anyone_has_a_file_open_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        assert_eq!(linux::anyone_writes(&path), Some(false));
        let reader = std::fs::File::open(&path).unwrap();
        assert_eq!(linux::anyone_writes(&path), Some(false));
        let writer = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        assert_eq!(linux::anyone_writes(&path), Some(true));
        drop((reader, writer));
        assert_eq!(linux::anyone_writes(&path), Some(false));
    }

    #[test]
    fn fdinfo_flags_say_who_writes() {
        assert!(linux::opened_for_writing("pos:\t0\nflags:\t02102001\n"));
        assert!(linux::opened_for_writing("flags:\t0100002\n"));
        assert!(!linux::opened_for_writing("pos:\t0\nflags:\t0100000\n"));
        assert!(!linux::opened_for_writing("garbage"));
    }

    #[test]
    fn a_process_appending_through_an_open_descriptor_is_seen_and_a_reader_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        let writer = OtherProcess::holding(&path, true);
        let seen = holders(&path);
        assert!(
            seen.iter().any(|h| h.pid == writer.pid()),
            "{seen:?} lacks {}",
            writer.pid()
        );
        drop(writer);
        let reader = OtherProcess::holding(&path, false);
        assert!(holders(&path).is_empty());
        drop(reader);
    }
}
