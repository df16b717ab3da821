//! The lock every writer of a registry or index takes around its read-modify-write, so two
//! writers never lose each other's entries.
//!
//! It is the lock Gemini CLI takes on `projects.json` (the npm package proper-lockfile, 4.x),
//! so it excludes the real CLI too: a FOLDER `<file>.lock` made with `mkdir` (atomic: one
//! maker wins), removed on release. A holder keeps the folder's modification time fresh; a
//! lock whose time is more than 10 s old was left by a process that died, and is removed and
//! taken. proper-lockfile refreshes every 5 s (half the stale time) and gives up the lock as
//! compromised when the time it finds is not the one it set; this does the same. simple-agent
//! has no lock of its own on `meta.json`: sessiontool's writers use the same kind there.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// How long a lock may go without a refresh before it counts as left behind, how often a
/// holder refreshes, and how long a writer waits for a live one.
#[derive(Debug, Clone, Copy)]
struct Timing {
    stale: Duration,
    refresh: Duration,
    wait: Duration,
}

/// proper-lockfile's default `stale` (10 s). A lock left by a crash right after it was taken
/// turns stale at most 11 s later (proper-lockfile first sets the time up to 1 s ahead), so a
/// writer waits 15 s before it gives up on a lock that stays fresh.
const PROPER_LOCKFILE: Timing = Timing {
    stale: Duration::from_secs(10),
    refresh: Duration::from_millis(2500),
    wait: Duration::from_secs(15),
};

/// A held `<target>.lock`; released when dropped. Not reentrant: a process that takes it
/// twice waits for itself and times out.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
    held: Arc<Held>,
    keeper: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

#[derive(Debug)]
struct Held {
    /// The modification time last set (as read back); `None` once the lock was lost.
    mtime: Mutex<Option<SystemTime>>,
}

impl FileLock {
    /// Takes `<target>.lock`, waiting while another process holds it (up to 15 s) and taking
    /// over one left behind. The folder holding `target` must exist.
    pub fn acquire(target: &Path) -> std::io::Result<FileLock> {
        Self::acquire_with(target, PROPER_LOCKFILE)
    }

    fn acquire_with(target: &Path, timing: Timing) -> std::io::Result<FileLock> {
        let dir = lock_path(target);
        let deadline = std::time::Instant::now() + timing.wait;
        let mut delay = Duration::from_millis(5);
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return FileLock::hold(dir, timing),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("cannot make the lock folder {}: {e}", dir.display()),
                    ));
                }
            }
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if !meta.is_dir() => {
                    return Err(std::io::Error::other(format!(
                        "{} is in the way of the lock folder Gemini CLI and sessiontool use (it is not a folder): move it away and retry",
                        dir.display()
                    )));
                }
                Ok(meta) if is_stale(&meta, timing.stale) => {
                    // Left by a process that died (proper-lockfile removes it the same way).
                    match std::fs::remove_dir(&dir) {
                        Ok(()) => continue,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => {
                            return Err(std::io::Error::new(
                                e.kind(),
                                format!(
                                    "cannot remove the stale lock folder {}: {e}",
                                    dir.display()
                                ),
                            ));
                        }
                    }
                }
                Ok(_) => {}
                // Released meanwhile: take it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "{} is held by another process (Gemini CLI or another sessiontool writing the same registry) and was not released in {} s; nothing was written. Retry when it is done; if no such process runs, remove that folder and retry",
                        dir.display(),
                        timing.wait.as_secs()
                    ),
                ));
            }
            std::thread::sleep(delay.min(deadline - now) + jitter());
            delay = (delay * 2).min(Duration::from_millis(200));
        }
    }

    fn hold(dir: PathBuf, timing: Timing) -> std::io::Result<FileLock> {
        let mtime = match std::fs::metadata(&dir).and_then(|m| m.modified()) {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(e);
            }
        };
        let held = Arc::new(Held {
            mtime: Mutex::new(Some(mtime)),
        });
        let (stop, stopped) = mpsc::channel::<()>();
        let keeper = {
            let (dir, held) = (dir.clone(), held.clone());
            std::thread::Builder::new()
                .name("registry-lock".into())
                .spawn(move || {
                    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(timing.refresh)
                    {
                        if !held.refresh(&dir) {
                            break;
                        }
                    }
                })
        };
        let keeper = match keeper {
            Ok(k) => k,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(e);
            }
        };
        Ok(FileLock {
            dir,
            held,
            keeper: Some((stop, keeper)),
        })
    }

    /// The lock folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether the lock is still this process's: its folder is there with the time last set
    /// (another process found it stale and took it over, or someone removed it, otherwise).
    /// Check before a write that must not race with another writer.
    pub fn verify(&self) -> std::io::Result<()> {
        let mtime = self.held.mtime.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::fs::metadata(&self.dir).and_then(|m| m.modified()).ok();
        match *mtime {
            Some(t) if now == Some(t) => Ok(()),
            _ => Err(std::io::Error::other(format!(
                "the lock {} was lost (another process took it over as stale): nothing more is written; retry",
                self.dir.display()
            ))),
        }
    }

    /// Releases the lock, saying whether its folder could be removed.
    pub fn release(mut self) -> std::io::Result<()> {
        self.release_now()
    }

    fn release_now(&mut self) -> std::io::Result<()> {
        let Some((stop, keeper)) = self.keeper.take() else {
            return Ok(());
        };
        drop(stop);
        let _ = keeper.join();
        let last = self
            .held
            .mtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let found = std::fs::metadata(&self.dir).and_then(|m| m.modified()).ok();
        // A lock taken over by another process (its time is not ours) is theirs: leave it.
        if last.is_some() && found == last {
            std::fs::remove_dir(&self.dir)?;
        }
        Ok(())
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // A folder that cannot be removed turns stale in 10 s and is taken over then.
        let _ = self.release_now();
    }
}

impl Held {
    /// Sets the lock folder's time to now, when it still has the time last set; false when
    /// the lock was lost (then it is not touched again).
    fn refresh(&self, dir: &Path) -> bool {
        let mut mtime = self.mtime.lock().unwrap_or_else(|e| e.into_inner());
        let Some(last) = *mtime else {
            return false;
        };
        let found = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
        if found != Some(last) {
            *mtime = None;
            return false;
        }
        let touched = std::fs::File::open(dir)
            .and_then(|f| f.set_modified(SystemTime::now()))
            .and_then(|()| std::fs::metadata(dir)?.modified());
        match touched {
            Ok(t) => {
                *mtime = Some(t);
                true
            }
            // Not refreshed this time (proper-lockfile keeps trying too); the next round
            // tries again, and the time found still is the one last set.
            Err(_) => true,
        }
    }
}

/// `<target>.lock`, as proper-lockfile names it.
pub fn lock_path(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

fn is_stale(meta: &std::fs::Metadata, stale: Duration) -> bool {
    meta.modified()
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > stale)
}

/// A few milliseconds that differ between processes, so waiters do not retry in step.
fn jitter() -> Duration {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Duration::from_micros(u64::from((nanos ^ std::process::id()) % 5000))
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: Timing = Timing {
        stale: Duration::from_millis(1500),
        refresh: Duration::from_millis(100),
        wait: Duration::from_millis(400),
    };

    fn age(dir: &Path, by: Duration) {
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(SystemTime::now() - by)
            .unwrap();
    }

    #[test]
    fn a_lock_is_a_folder_beside_its_file_removed_on_release() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("projects.json");
        let lock = FileLock::acquire_with(&target, QUICK).unwrap();
        assert_eq!(lock.path(), dir.path().join("projects.json.lock"));
        assert!(lock.path().is_dir());
        lock.verify().unwrap();
        let err = FileLock::acquire_with(&target, QUICK).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(err.to_string().contains("projects.json.lock"), "{err}");
        drop(lock);
        assert!(!dir.path().join("projects.json.lock").exists());
        FileLock::acquire_with(&target, QUICK).unwrap();
    }

    #[test]
    fn a_held_lock_stays_fresh_past_the_stale_time() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("meta.json");
        let lock = FileLock::acquire_with(&target, QUICK).unwrap();
        std::thread::sleep(QUICK.stale * 2);
        lock.verify().unwrap();
        let err = FileLock::acquire_with(&target, QUICK).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
        lock.release().unwrap();
    }

    #[test]
    fn a_stale_lock_is_taken_over_and_the_old_holder_leaves_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("projects.json");
        let first = FileLock::acquire_with(
            &target,
            Timing {
                refresh: Duration::from_secs(3600),
                ..QUICK
            },
        )
        .unwrap();
        age(first.path(), QUICK.stale * 2);
        let second = FileLock::acquire_with(&target, QUICK).unwrap();
        assert!(first.verify().is_err(), "the first holder knows it lost it");
        drop(first);
        assert!(second.path().is_dir(), "the first holder did not remove it");
        second.verify().unwrap();
    }

    #[test]
    fn something_else_in_the_locks_place_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("projects.json");
        std::fs::write(lock_path(&target), "x").unwrap();
        let err = FileLock::acquire_with(&target, QUICK).unwrap_err();
        assert!(err.to_string().contains("not a folder"), "{err}");
        let missing = dir.path().join("no/such/projects.json");
        let err = FileLock::acquire_with(&missing, QUICK).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn writers_in_threads_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("count");
        std::fs::write(&target, "0").unwrap();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..20 {
                        let _lock = FileLock::acquire(&target).unwrap();
                        let n: u32 = std::fs::read_to_string(&target).unwrap().parse().unwrap();
                        std::fs::write(&target, (n + 1).to_string()).unwrap();
                    }
                });
            }
        });
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "160");
    }
}
