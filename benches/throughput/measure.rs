//! Timing: the in-process ceiling (read + memchr newline count) and spawned commands (wall
//! time, exit code, peak memory), with a timeout.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
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

/// One spawned command's outcome.
#[derive(Debug, Clone)]
pub struct ProcRun {
    pub secs: f64,
    pub code: Option<i32>,
    /// Peak resident memory, KiB (from `/usr/bin/time -v`, else polled VmHWM).
    pub max_rss_kib: Option<u64>,
    pub timed_out: bool,
    /// The end of what the command wrote on standard error.
    pub stderr_tail: String,
}

/// How to run commands: GNU time for peak memory when it is there, logs for standard error.
pub struct Runner {
    pub time_bin: Option<PathBuf>,
    pub log_dir: PathBuf,
}

impl Runner {
    pub fn new(log_dir: PathBuf) -> io::Result<Runner> {
        std::fs::create_dir_all(&log_dir)?;
        let time = Path::new("/usr/bin/time");
        let gnu = time.exists()
            && Command::new(time)
                .args(["-v", "-o", "/dev/null", "true"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        Ok(Runner {
            time_bin: gnu.then(|| time.to_path_buf()),
            log_dir,
        })
    }

    /// Runs `argv` with `env` added, standard output discarded, and waits at most `timeout`
    /// (then kills its process group). `label` names the log files.
    pub fn run(
        &self,
        label: &str,
        argv: &[OsString],
        env: &[(&str, String)],
        timeout: Duration,
        rss: bool,
    ) -> io::Result<ProcRun> {
        let stderr_path = self.log_dir.join(format!("{label}.stderr"));
        let time_path = self.log_dir.join(format!("{label}.time"));
        let wrap = rss && self.time_bin.is_some();
        let mut cmd = if wrap {
            let mut c = Command::new(self.time_bin.as_ref().expect("checked"));
            c.arg("-v").arg("-o").arg(&time_path).args(argv);
            c
        } else {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        };
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr_path)?)
            .process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn()?;
        let pid = child.id();
        let (tx, rx) = mpsc::channel::<(io::Result<ExitStatus>, Instant)>();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let _ = tx.send((status, Instant::now()));
        });
        let poll_rss = rss && !wrap;
        let tick = if poll_rss {
            Duration::from_millis(5)
        } else {
            Duration::from_millis(200)
        };
        let mut hwm = None;
        let mut timed_out = false;
        let (status, end) = loop {
            match rx.recv_timeout(tick) {
                Ok(done) => break done,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if poll_rss && let Some(v) = vm_hwm_kib(pid) {
                        hwm = Some(hwm.unwrap_or(0).max(v));
                    }
                    if !timed_out && start.elapsed() > timeout {
                        timed_out = true;
                        // The child leads its own process group (also GNU time's child).
                        let _ = Command::new("kill")
                            .args(["-KILL", "--", &format!("-{pid}")])
                            .status();
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("waiter thread ended without a status"));
                }
            }
        };
        let _ = waiter.join();
        let status = status?;
        let max_rss_kib = if wrap {
            std::fs::read_to_string(&time_path)
                .ok()
                .and_then(|t| parse_time_rss(&t))
        } else {
            hwm
        };
        Ok(ProcRun {
            secs: (end - start).as_secs_f64(),
            code: status.code(),
            max_rss_kib,
            timed_out,
            stderr_tail: tail(&stderr_path, 600),
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
        let start = Instant::now();
        std::thread::scope(|s| {
            for worker in 0..parallel {
                let (next, failed) = (&next, &failed);
                s.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= batches.len() || failed.lock().expect("not poisoned").is_some() {
                            return;
                        }
                        let left = timeout.saturating_sub(start.elapsed());
                        let r =
                            self.run(&format!("{label}-w{worker}"), &batches[i], &[], left, false);
                        let bad = match r {
                            Ok(r) if r.code == Some(0) && !r.timed_out => None,
                            Ok(r) => Some(r),
                            Err(e) => Some(ProcRun {
                                secs: 0.0,
                                code: None,
                                max_rss_kib: None,
                                timed_out: false,
                                stderr_tail: e.to_string(),
                            }),
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
                code: Some(0),
                max_rss_kib: None,
                timed_out: false,
                stderr_tail: String::new(),
            },
        })
    }
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn parse_time_rss(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Maximum resident set size"))?;
    line.rsplit(':').next()?.trim().parse().ok()
}

fn tail(path: &Path, max: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let from = bytes.len().saturating_sub(max);
    String::from_utf8_lossy(&bytes[from..]).trim().to_string()
}

/// The median of some timings.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
