//! Timing: the in-process ceiling (read + memchr newline count) and spawned commands (wall
//! time and CPU time from the kernel's accounting of the child, `wait4`; peak memory from GNU
//! time; the time until the first bytes of output; instruction counts under callgrind), with a
//! timeout.
//!
//! Peak memory comes from `/usr/bin/time -f %M`, not from our own `wait4`: Linux starts a
//! child's `ru_maxrss` at its parent's high-water mark (exec keeps the larger of the old and
//! the new image's), so every command forked from this process would report at least the
//! benchmark's own 40–60 MB. GNU time is a small process; what it forks starts near zero.
//! Without GNU time, the child's `VmHWM` (reset by exec) is polled every 5 ms.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// Pieces of one file read by one task: big files are split so two threads share them.
const PIECE: u64 = 16 << 20;

/// Reads every file in pieces of at most 16 MiB with `threads` threads and counts newlines.
/// Returns (seconds, newlines).
pub fn ceiling(pool: &rayon::ThreadPool, files: &[(PathBuf, u64)]) -> io::Result<(f64, u64)> {
    let mut pieces = Vec::new();
    for (i, (_, len)) in files.iter().enumerate() {
        let mut off = 0;
        while off < *len {
            pieces.push((i, off, PIECE.min(len - off)));
            off += PIECE;
        }
    }
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let start = Instant::now();
    let lines = pool.install(|| {
        pieces
            .par_iter()
            .map(|&(i, off, len)| {
                let file = File::open(&files[i].0)?;
                BUF.with_borrow_mut(|buf| {
                    buf.resize(len as usize, 0);
                    file.read_exact_at(buf, off)?;
                    Ok(memchr::memchr_iter(b'\n', buf).count() as u64)
                })
            })
            .sum::<io::Result<u64>>()
    })?;
    Ok((start.elapsed().as_secs_f64(), lines))
}

/// Where a command's standard output goes.
#[derive(Clone, Copy, Debug)]
pub enum Output {
    /// `/dev/null`.
    Null,
    /// A pipe read until this many bytes arrived; then the command is killed. The time to
    /// them is [`ProcRun::first_bytes`].
    FirstBytes(usize),
}

/// One spawned command's outcome.
#[derive(Debug, Clone)]
pub struct ProcRun {
    pub secs: f64,
    /// User + system time of the child (and of the children it waited for).
    pub cpu_secs: f64,
    pub code: Option<i32>,
    /// Peak resident memory of the child, KiB (`ru_maxrss`).
    pub max_rss_kib: Option<u64>,
    pub timed_out: bool,
    /// With [`Output::FirstBytes`]: seconds until that many bytes (or the end of the output).
    pub first_bytes: Option<f64>,
    /// The end of what the command wrote on standard error.
    pub stderr_tail: String,
}

impl ProcRun {
    fn failed(msg: String) -> ProcRun {
        ProcRun {
            secs: 0.0,
            cpu_secs: 0.0,
            code: None,
            max_rss_kib: None,
            timed_out: false,
            first_bytes: None,
            stderr_tail: msg,
        }
    }
}

/// How to run commands: GNU time for peak memory when it is there, logs of standard error in
/// `log_dir`.
pub struct Runner {
    pub log_dir: PathBuf,
    time_bin: Option<PathBuf>,
}

/// What `wait4` reports.
struct Waited {
    status: libc::c_int,
    usage: libc::rusage,
    at: Instant,
}

enum Event {
    Exited(io::Result<Waited>),
    FirstBytes(Instant),
}

impl Runner {
    pub fn new(log_dir: PathBuf) -> io::Result<Runner> {
        std::fs::create_dir_all(&log_dir)?;
        let time = Path::new("/usr/bin/time");
        let gnu = time.exists()
            && Command::new(time)
                .args(["-f", "%M", "-o", "/dev/null", "true"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        Ok(Runner {
            log_dir,
            time_bin: gnu.then(|| time.to_path_buf()),
        })
    }

    /// Runs `argv` with `env` added and waits at most `timeout` (then kills its process
    /// group). `label` names the log file.
    pub fn run(
        &self,
        label: &str,
        argv: &[OsString],
        env: &[(String, String)],
        timeout: Duration,
        output: Output,
    ) -> io::Result<ProcRun> {
        let stderr_path = self.log_dir.join(format!("{label}.stderr"));
        let time_path = self.log_dir.join(format!("{label}.maxrss"));
        let _ = std::fs::remove_file(&time_path);
        let rss = matches!(output, Output::Null);
        let wrap = rss && self.time_bin.is_some();
        let mut cmd = match (&self.time_bin, wrap) {
            (Some(time), true) => {
                let mut c = Command::new(time);
                c.args(["-f", "%M", "-o"]).arg(&time_path).args(argv);
                c
            }
            _ => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null())
            .stdout(match output {
                Output::Null => Stdio::null(),
                Output::FirstBytes(_) => Stdio::piped(),
            })
            .stderr(File::create(&stderr_path)?)
            .process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn()?;
        let pid = child.id() as libc::pid_t;
        let (tx, rx) = mpsc::channel::<Event>();
        // The child is reaped here, by wait4, for its resource usage; `child` is never waited.
        let waiter = {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(Event::Exited(wait4(pid)));
            })
        };
        let reader = match (output, child.stdout.take()) {
            (Output::FirstBytes(n), Some(mut pipe)) => Some(std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 << 10];
                let mut got = 0;
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => {
                            got += k;
                            if got >= n {
                                break;
                            }
                        }
                    }
                }
                let _ = tx.send(Event::FirstBytes(Instant::now()));
            })),
            _ => {
                drop(tx);
                None
            }
        };
        let mut timed_out = false;
        let mut first_bytes = None;
        let poll = rss && !wrap;
        let mut hwm = None;
        let tick = Duration::from_millis(if poll { 5 } else { 100 });
        let waited = loop {
            match rx.recv_timeout(tick) {
                Ok(Event::Exited(w)) => break w,
                Ok(Event::FirstBytes(at)) => {
                    first_bytes = Some((at - start).as_secs_f64());
                    // Seen enough: the rest of the output is not measured.
                    kill_group(pid);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if poll && let Some(v) = vm_hwm_kib(pid) {
                        hwm = Some(hwm.unwrap_or(0).max(v));
                    }
                    if !timed_out && start.elapsed() > timeout {
                        timed_out = true;
                        kill_group(pid);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("waiter thread ended without a status"));
                }
            }
        };
        let _ = waiter.join();
        if let Some(r) = reader {
            let _ = r.join();
            // The reader's event may have come after the exit.
            if first_bytes.is_none()
                && let Ok(Event::FirstBytes(at)) = rx.try_recv()
            {
                first_bytes = Some((at - start).as_secs_f64());
            }
        }
        drop(child);
        let w = waited?;
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let code = libc::WIFEXITED(w.status).then(|| libc::WEXITSTATUS(w.status));
        Ok(ProcRun {
            secs: (w.at - start).as_secs_f64(),
            cpu_secs: tv(w.usage.ru_utime) + tv(w.usage.ru_stime),
            code,
            max_rss_kib: if wrap {
                // `%M`, after a "Command exited with non-zero status" line when there is one.
                std::fs::read_to_string(&time_path)
                    .ok()
                    .and_then(|t| t.lines().last()?.trim().parse().ok())
            } else {
                hwm
            },
            timed_out,
            first_bytes,
            stderr_tail: tail(&stderr_path, 600),
        })
    }

    /// Runs `argv` once under `valgrind --tool=callgrind` and returns the instructions it
    /// executed (callgrind's `summary`/`totals`), or why not.
    pub fn callgrind(
        &self,
        label: &str,
        argv: &[OsString],
        env: &[(String, String)],
        timeout: Duration,
    ) -> io::Result<Result<u64, String>> {
        let out = self.log_dir.join(format!("{label}.callgrind"));
        let _ = std::fs::remove_file(&out);
        let mut full: Vec<OsString> = vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={}", out.display()).into(),
        ];
        full.extend(argv.iter().cloned());
        let r = self.run(
            &format!("{label}.callgrind"),
            &full,
            env,
            timeout,
            Output::Null,
        )?;
        if r.timed_out {
            return Ok(Err(format!("> {} s", timeout.as_secs())));
        }
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let ir = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("summary:")
                    .or_else(|| l.strip_prefix("totals:"))
            })
            .and_then(|v| v.split_whitespace().next()?.parse().ok());
        Ok(match (ir, r.code) {
            (Some(ir), _) => Ok(ir),
            (None, code) => Err(format!("no count (exit {code:?}): {}", r.stderr_tail)),
        })
    }

    /// Runs one command per batch, `parallel` at a time (like `xargs -P`), within one overall
    /// timeout; the first failure stops the rest. Returns the wall time and the worst outcome.
    pub fn run_batches(
        &self,
        label: &str,
        batches: &[Vec<OsString>],
        parallel: usize,
        timeout: Duration,
    ) -> io::Result<ProcRun> {
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<ProcRun>> = Mutex::new(None);
        let cpu = Mutex::new(0.0);
        let start = Instant::now();
        std::thread::scope(|s| {
            for worker in 0..parallel {
                let (next, failed, cpu) = (&next, &failed, &cpu);
                s.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= batches.len() || failed.lock().expect("not poisoned").is_some() {
                            return;
                        }
                        let left = timeout.saturating_sub(start.elapsed());
                        let r = self.run(
                            &format!("{label}-w{worker}"),
                            &batches[i],
                            &[],
                            left,
                            Output::Null,
                        );
                        let bad = match r {
                            Ok(r) if r.code == Some(0) && !r.timed_out => {
                                *cpu.lock().expect("not poisoned") += r.cpu_secs;
                                None
                            }
                            Ok(r) => Some(r),
                            Err(e) => Some(ProcRun::failed(e.to_string())),
                        };
                        if let Some(b) = bad {
                            failed.lock().expect("not poisoned").get_or_insert(b);
                            return;
                        }
                    }
                });
            }
        });
        let secs = start.elapsed().as_secs_f64();
        Ok(match failed.into_inner().expect("not poisoned") {
            Some(mut f) => {
                f.secs = secs;
                f
            }
            None => ProcRun {
                secs,
                cpu_secs: cpu.into_inner().expect("not poisoned"),
                code: Some(0),
                max_rss_kib: None,
                timed_out: false,
                first_bytes: None,
                stderr_tail: String::new(),
            },
        })
    }
}

fn wait4(pid: libc::pid_t) -> io::Result<Waited> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 fills it and the status for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above; the pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok(Waited {
                status,
                usage,
                at: Instant::now(),
            });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn vm_hwm_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Kills the process group the child leads (it and anything it started).
fn kill_group(pid: libc::pid_t) {
    // SAFETY: a signal to the group of our own child, which leads its group.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

fn tail(path: &Path, max: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let from = bytes.len().saturating_sub(max);
    String::from_utf8_lossy(&bytes[from..]).trim().to_string()
}
