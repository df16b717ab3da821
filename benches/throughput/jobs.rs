//! A job is one thing measured on one data set (`claude-100:convert-codex`): sessiontool's
//! command line at each thread count and, where there is one, the peer's, run in alternating
//! rounds so a noisy moment hits every variant alike. The result is one row per program.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::format::{last_line, median, shell_line};
use crate::measure::{Output, Runner};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Who {
    /// sessiontool.
    Tool,
    /// casr.
    Peer,
    /// The ceiling and jq.
    Reference,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Bytes in, seconds: MB/s.
    Throughput,
    /// Seconds until the first bytes of output.
    FirstScreen,
}

/// A path a command writes: removed before every run (a folder is made again, empty), measured
/// after the last one, then removed.
#[derive(Clone)]
pub struct Scratch {
    pub path: PathBuf,
    pub dir: bool,
}

impl Scratch {
    pub fn clear(&self) -> io::Result<()> {
        if self.path.is_dir() {
            std::fs::remove_dir_all(&self.path)?;
        } else if self.path.exists() {
            std::fs::remove_file(&self.path)?;
        }
        if self.dir {
            std::fs::create_dir_all(&self.path)?;
        } else if let Some(p) = self.path.parent() {
            std::fs::create_dir_all(p)?;
        }
        Ok(())
    }

    /// Bytes below the path (a file's size, a folder's files).
    pub fn bytes(&self) -> u64 {
        walkdir::WalkDir::new(&self.path)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }
}

/// One command line at one thread count.
pub struct Variant {
    pub threads: usize,
    pub argv: Vec<OsString>,
    pub env: Vec<(String, String)>,
    pub scratch: Option<Scratch>,
}

pub struct Program {
    pub who: Who,
    pub what: String,
    /// No variants: nothing to run, and this says why in every cell of the row ("peer not
    /// built", "not comparable: ...").
    pub variants: Vec<Variant>,
    pub why_not: Option<String>,
}

pub struct Job {
    /// `<data set>:<name>`, what `--only` and `--skip` match.
    pub id: String,
    pub kind: Kind,
    pub bytes: u64,
    pub records: u64,
    /// Exit codes that count as a run (fsck: 4 when it finds the damage planted).
    pub ok_codes: Vec<i32>,
    pub output: Output,
    pub programs: Vec<Program>,
}

impl Job {
    /// The name without the data set: `convert-codex`.
    pub fn name(&self) -> &str {
        self.id.split_once(':').map_or(&*self.id, |(_, n)| n)
    }
}

/// One measurement at one thread count.
#[derive(Clone, Debug)]
pub enum Cell {
    Done(Stat),
    /// Not measured, with why (`—`, `> 120 s`, `failed (exit 8)`).
    Note(String),
}

#[derive(Clone, Debug)]
pub struct Stat {
    /// Wall seconds of each run (for [`Kind::FirstScreen`], to the first bytes).
    pub runs: Vec<f64>,
    pub secs: f64,
    pub cpu_runs: Vec<f64>,
    /// Median CPU seconds; `None` where not measured (the in-process ceiling).
    pub cpu_secs: Option<f64>,
    pub rss_kib: Option<u64>,
    pub exit: Option<i32>,
}

impl Stat {
    pub fn new(
        runs: Vec<f64>,
        cpu_runs: Vec<f64>,
        rss_kib: Option<u64>,
        exit: Option<i32>,
    ) -> Stat {
        Stat {
            secs: median(&runs),
            cpu_secs: (!cpu_runs.is_empty()).then(|| median(&cpu_runs)),
            runs,
            cpu_runs,
            rss_kib,
            exit,
        }
    }
}

pub struct Row {
    pub id: String,
    pub who: Who,
    pub what: String,
    pub kind: Kind,
    pub bytes: u64,
    pub records: u64,
    /// (threads, cell), fewest threads first.
    pub cells: Vec<(usize, Cell)>,
    /// Instructions under callgrind (1 thread), when asked.
    pub instructions: Option<Result<u64, String>>,
    /// What the command wrote (bytes), from the last run.
    pub output_bytes: Option<u64>,
    /// The command line as run (at the most threads), for the report.
    pub command: Option<String>,
}

impl Row {
    pub fn name(&self) -> &str {
        self.id.split_once(':').map_or(&*self.id, |(_, n)| n)
    }

    pub fn cell(&self, threads: usize) -> Option<&Stat> {
        self.cells.iter().find_map(|(t, c)| match c {
            Cell::Done(s) if *t == threads => Some(s),
            _ => None,
        })
    }

    /// The measurement with the most threads.
    pub fn widest(&self) -> Option<(usize, &Stat)> {
        self.cells.iter().rev().find_map(|(t, c)| match c {
            Cell::Done(s) => Some((*t, s)),
            Cell::Note(_) => None,
        })
    }

    /// The highest peak memory of all runs, bytes.
    pub fn peak_bytes(&self) -> Option<u64> {
        self.cells
            .iter()
            .filter_map(|(_, c)| match c {
                Cell::Done(s) => s.rss_kib,
                Cell::Note(_) => None,
            })
            .max()
            .map(|k| k * 1024)
    }

    /// A row of notes only, one at each of `threads`.
    pub fn noted(job: &Job, p: &Program, threads: &[usize], note: &str) -> Row {
        Row {
            id: job.id.clone(),
            who: p.who,
            what: p.what.clone(),
            kind: job.kind,
            bytes: job.bytes,
            records: job.records,
            cells: threads
                .iter()
                .map(|&t| (t, Cell::Note(note.to_string())))
                .collect(),
            instructions: None,
            output_bytes: None,
            command: None,
        }
    }
}

/// Measures every variant of `programs` (of `job`), `runs` rounds, each round running each
/// variant once; with `callgrind`, then counts each program's instructions once on 1 thread.
pub fn measure(
    runner: &Runner,
    job: &Job,
    programs: &[&Program],
    runs: usize,
    timeout: Duration,
    callgrind: bool,
) -> io::Result<Vec<Row>> {
    struct Acc {
        secs: Vec<f64>,
        cpu: Vec<f64>,
        rss: Option<u64>,
        exit: Option<i32>,
        failed: Option<String>,
    }
    let mut acc: Vec<Vec<Acc>> = programs
        .iter()
        .map(|p| {
            p.variants
                .iter()
                .map(|_| Acc {
                    secs: Vec::new(),
                    cpu: Vec::new(),
                    rss: None,
                    exit: None,
                    failed: None,
                })
                .collect()
        })
        .collect();
    let label = |p: &Program, v: &Variant| {
        let who = match p.who {
            Who::Tool => "sessiontool",
            Who::Peer => "peer",
            Who::Reference => "ref",
        };
        format!("{}-{who}-{}t", job.id.replace(':', "-"), v.threads)
    };
    for _ in 0..runs {
        for (pi, p) in programs.iter().enumerate() {
            for (vi, v) in p.variants.iter().enumerate() {
                let a = &mut acc[pi][vi];
                if a.failed.is_some() {
                    continue;
                }
                if let Some(s) = &v.scratch {
                    s.clear()?;
                }
                let mut env = v.env.clone();
                env.push(("RAYON_NUM_THREADS".into(), v.threads.to_string()));
                let r = runner.run(&label(p, v), &v.argv, &env, timeout, job.output)?;
                let secs = match job.output {
                    Output::Null => Some(r.secs),
                    Output::FirstBytes(_) => r.first_bytes,
                };
                if r.timed_out {
                    a.failed = Some(format!("> {} s", timeout.as_secs()));
                    continue;
                }
                let code_ok = match job.output {
                    // Killed once the bytes arrived, or done before.
                    Output::FirstBytes(_) => r.code.is_none_or(|c| job.ok_codes.contains(&c)),
                    Output::Null => r.code.is_some_and(|c| job.ok_codes.contains(&c)),
                };
                let Some(secs) = secs.filter(|_| code_ok) else {
                    eprintln!(
                        "{}: failed (exit {:?}): {}",
                        label(p, v),
                        r.code,
                        r.stderr_tail
                    );
                    let how = match r.code {
                        Some(c) => format!("failed (exit {c})"),
                        None => "failed (killed)".into(),
                    };
                    a.failed = Some(match last_line(&r.stderr_tail) {
                        Some(why) => format!("{how}: {why}"),
                        None => how,
                    });
                    continue;
                };
                a.secs.push(secs);
                a.cpu.push(r.cpu_secs);
                if matches!(job.output, Output::Null) {
                    a.rss = a.rss.max(r.max_rss_kib);
                }
                a.exit = r.code;
            }
        }
    }
    let mut rows = Vec::new();
    for (pi, p) in programs.iter().enumerate() {
        let cells = p
            .variants
            .iter()
            .zip(acc[pi].drain(..))
            .map(|(v, a)| {
                let cell = match a.failed {
                    Some(n) => Cell::Note(n),
                    None => Cell::Done(Stat::new(a.secs, a.cpu, a.rss, a.exit)),
                };
                (v.threads, cell)
            })
            .collect();
        let output_bytes = p
            .variants
            .last()
            .and_then(|v| v.scratch.as_ref())
            .map(Scratch::bytes);
        let instructions = match (callgrind, p.variants.first()) {
            (true, Some(v)) => {
                if let Some(s) = &v.scratch {
                    s.clear()?;
                }
                let mut env = v.env.clone();
                env.push(("RAYON_NUM_THREADS".into(), "1".into()));
                Some(runner.callgrind(&label(p, v), &v.argv, &env, timeout * 50)?)
            }
            _ => None,
        };
        for v in &p.variants {
            if let Some(s) = &v.scratch {
                // 1 GB outputs: do not keep them around.
                s.clear()?;
            }
        }
        rows.push(Row {
            id: job.id.clone(),
            who: p.who,
            what: p.what.clone(),
            kind: job.kind,
            bytes: job.bytes,
            records: job.records,
            cells,
            instructions,
            output_bytes,
            command: p.variants.last().map(|v| {
                let mut env = v.env.clone();
                env.push(("RAYON_NUM_THREADS".into(), v.threads.to_string()));
                shell_line(&env, &v.argv)
            }),
        });
    }
    Ok(rows)
}
