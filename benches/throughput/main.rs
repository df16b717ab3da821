//! Throughput and memory benchmark: sessiontool's convert, show, list and fsck beside the
//! machine's own ceiling, `jq` and a peer converter (casr, built from its source outside this
//! repository), on generated inputs: a corpus of ~2,000 Qwen Code sessions (~1 GiB) laid out as
//! Qwen's store, and one long Claude Code, Qwen Code and Codex session at each size (100 MB and
//! 1 GB), each in its tool's store layout.
//!
//! ```text
//! cargo bench --bench throughput                                  # everything, 5 runs each
//! cargo bench --bench throughput -- --sizes 100 --runs 3          # the 100 MB rows
//! cargo bench --bench throughput -- --scale 0.01 --runs 1         # a quick look (1 MB / 10 MB)
//! cargo bench --bench throughput -- --only claude-1000:convert-codex --casr PATH
//! cargo bench --bench throughput -- --scale 0.01 --callgrind      # instruction counts
//! cargo bench --bench throughput -- --help
//! ```
//! The peer is `--casr PATH`, else `--casr-src DIR` (built here), else `$CASR`, else `casr` on
//! PATH; without one its rows say "peer not built". Every command line run is printed under its
//! table. Prints Markdown tables (MB = 10^6 bytes) and writes `target/bench-results.json`.

mod claude;
mod codex;
mod corpus;
mod format;
mod jobs;
mod measure;
mod peer;
mod plan;
mod qwen;
mod report;
mod sessions;
mod text;

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use jobs::{Cell, Row, Stat, Who};
use report::DataSet;
use sessions::Fmt;

/// Throughput and peak memory of sessiontool (convert, show, list, fsck) beside the read
/// ceiling, jq and a peer converter (casr), on generated Claude Code, Qwen Code and Codex
/// sessions.
#[derive(Parser, Debug)]
#[command(name = "throughput")]
pub struct Opts {
    /// Where the generated inputs live (reused when their manifests match).
    #[arg(long, default_value = "target/bench-corpus")]
    pub corpus: PathBuf,
    /// Size factor for every input: 1 = the corpus of ~2,000 files / ~1 GiB and single sessions
    /// of the nominal --sizes; 0.01 = a hundred times smaller.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Nominal sizes of the single-session inputs, MB (times --scale).
    #[arg(long, value_delimiter = ',', default_values_t = [100, 1000])]
    pub sizes: Vec<u64>,
    /// Formats of the single-session inputs: claude, qwen, codex.
    #[arg(long, value_delimiter = ',', default_values_t = ["claude".to_string(), "qwen".to_string(), "codex".to_string()])]
    pub formats: Vec<String>,
    /// Timed runs per measurement (the median is reported); the variants of a job alternate.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Thread counts (RAYON_NUM_THREADS) of the commands and of the ceiling.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2])]
    pub threads: Vec<usize>,
    /// Seed of the generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only the jobs whose id contains one of these (ids: `corpus:fsck`,
    /// `claude-100:convert-codex`, `qwen-1000:show`, ...; see the tables).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Leave out the jobs whose id contains one of these (`jq`, `1000`, `convert`, `corpus`).
    #[arg(long, value_delimiter = ',')]
    pub skip: Vec<String>,
    /// The sessiontool binary (default: the one cargo built for this bench, release profile).
    #[arg(long)]
    pub bin: Option<PathBuf>,
    /// The peer: a casr binary built from its source (cross_agent_session_resumer). Without
    /// it, --casr-src, $CASR, then `casr` on PATH; with none of them the peer rows say "peer
    /// not built".
    #[arg(long)]
    pub casr: Option<PathBuf>,
    /// A clone of casr's repository (outside this one): built with `cargo build --release`
    /// before anything is timed, and its `target/release/casr` used as the peer.
    #[arg(long, conflicts_with = "casr")]
    pub casr_src: Option<PathBuf>,
    /// Run casr with its own default budget (history capped at 200k tokens, tool outputs cut
    /// at 4,000 characters, reasoning dropped) instead of converting everything.
    #[arg(long)]
    pub casr_budget: bool,
    /// `show`'s first screen: the time until this many bytes of output arrived.
    #[arg(long, default_value_t = 4096)]
    pub first_screen_bytes: usize,
    /// Also count each command's instructions once under `valgrind --tool=callgrind` (1
    /// thread; about 50x slower: use a small --scale).
    #[arg(long)]
    pub callgrind: bool,
    /// jq: give up after this many seconds and report "> timeout".
    #[arg(long, default_value_t = 120)]
    pub jq_timeout: u64,
    /// Any other command: give up after this many seconds.
    #[arg(long, default_value_t = 1200)]
    pub timeout: u64,
    /// Run a job even when its expected peak memory (its peak per input byte at the smaller
    /// size in this run, else 12x the input) is over 90% of the memory available now.
    #[arg(long)]
    pub no_mem_guard: bool,
    /// Convert only this fraction of the corpus files (every n-th file, hard-linked into
    /// `<corpus>/convert-subset/`): convert is slow and would dominate the run time.
    #[arg(long, default_value_t = 0.25)]
    pub convert_fraction: f64,
    /// Where to write the results as JSON.
    #[arg(long, default_value = "target/bench-results.json")]
    pub results: PathBuf,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Opts {
    fn selected(&self, id: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|p| id.contains(p.as_str())))
            && !self.skip.iter().any(|p| id.contains(p.as_str()))
    }
}

fn main() {
    let opts = Opts::parse();
    if let Err(e) = run(&opts) {
        eprintln!("throughput: {e}");
        std::process::exit(1);
    }
}

fn run(opts: &Opts) -> io::Result<()> {
    let runs = opts.runs.max(1);
    let mut threads = opts.threads.clone();
    threads.sort_unstable();
    threads.dedup();
    threads.retain(|&t| t > 0);
    if threads.is_empty() {
        return Err(io::Error::other(
            "--threads: give at least one count above 0",
        ));
    }
    let mut formats = Vec::new();
    for f in &opts.formats {
        match Fmt::ALL.iter().find(|x| x.key() == f) {
            Some(x) => formats.push(*x),
            None => return Err(io::Error::other(format!("--formats: unknown {f:?}"))),
        }
    }
    let mut sizes = opts.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let bin = opts
        .bin
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sessiontool")));
    let peer = peer::find(
        opts.casr.as_deref(),
        opts.casr_src.as_deref(),
        opts.casr_budget,
    )
    .map_err(io::Error::other)?;
    match &peer {
        Some(p) => eprintln!("peer: {} ({}, {})", p.version, p.bin.display(), p.found_by),
        None => eprintln!(
            "peer not built: no casr (give --casr PATH, --casr-src DIR or {}=PATH)",
            peer::ENV
        ),
    }
    let ctx = plan::Ctx::new(opts, &bin, peer.as_ref(), threads.clone())?;
    let timeout = Duration::from_secs(opts.timeout);
    let facts = report::machine_facts();
    let mut notes: Vec<String> = Vec::new();
    let mut sets: Vec<DataSet> = Vec::new();
    // Peak memory per input byte of each job, from the smaller sizes: the memory guard.
    let mut ratios: HashMap<(String, bool), f64> = HashMap::new();

    if plan::CORPUS_JOBS
        .iter()
        .any(|n| opts.selected(&format!("corpus:{n}")))
    {
        let corpus = corpus::ensure(&opts.corpus, opts.seed, opts.scale)?;
        let (mut set, jobs) = ctx.corpus_jobs(&corpus, &mut notes)?;
        eprintln!("== {}", set.title);
        let refs = [
            ctx.ceiling_row(&set.key, &set.files)?,
            ctx.corpus_jq(&corpus, &set, &mut notes)?,
        ];
        for r in refs.into_iter().flatten() {
            progress(&r);
            set.rows.push(r);
        }
        for job in jobs {
            set.rows
                .extend(measure_job(opts, &ctx, &job, runs, timeout, &mut ratios)?);
        }
        sets.push(set);
    }
    for &size in &sizes {
        for &fmt in &formats {
            let key = format!("{}-{size}", fmt.key());
            if !plan::single_jobs(fmt)
                .iter()
                .any(|n| opts.selected(&format!("{key}:{n}")))
            {
                continue;
            }
            let input = sessions::ensure(&opts.corpus, fmt, size, opts.seed, opts.scale)?;
            let mut set = ctx.single_set(&input);
            eprintln!("== {}", set.title);
            ctx.check_input(&input, &mut notes)?;
            if let Some(r) = ctx.ceiling_row(&set.key, &set.files)? {
                progress(&r);
                set.rows.push(r);
            }
            for job in ctx.single_jobs(&input)? {
                set.rows
                    .extend(measure_job(opts, &ctx, &job, runs, timeout, &mut ratios)?);
            }
            sets.push(set);
        }
    }
    let peer_rows = sets
        .iter()
        .any(|s| s.rows.iter().any(|r| r.who == Who::Peer));
    if peer.is_none() && peer_rows {
        notes.push(format!(
            "peer not built: casr's rows are empty (give its binary with --casr PATH or {}=PATH, \
             or a clone of its source with --casr-src DIR).",
            peer::ENV
        ));
    }
    report::write(opts, &bin, peer.as_ref(), &facts, &sets, &notes, runs)
}

/// Measures one job, unless the memory it is expected to need is not there.
fn measure_job(
    opts: &Opts,
    ctx: &plan::Ctx,
    job: &jobs::Job,
    runs: usize,
    timeout: Duration,
    ratios: &mut HashMap<(String, bool), f64>,
) -> io::Result<Vec<Row>> {
    let timeout = if job.name() == "jq" {
        Duration::from_secs(opts.jq_timeout)
    } else {
        timeout
    };
    let available = report::mem_available();
    let mut rows = Vec::new();
    let mut keep = Vec::new();
    for p in &job.programs {
        let threads: Vec<usize> = match (p.variants.is_empty(), p.who) {
            // The peer runs once, at the most threads: its note goes there.
            (true, Who::Peer) => ctx.threads().last().copied().into_iter().collect(),
            (true, _) => ctx.threads().to_vec(),
            (false, _) => p.variants.iter().map(|v| v.threads).collect(),
        };
        if p.variants.is_empty() {
            let note = p.why_not.as_deref().unwrap_or("not run");
            rows.push(jobs::Row::noted(job, p, &threads, note));
            continue;
        }
        let key = (job.name().to_string(), p.who == Who::Peer);
        let ratio = ratios.get(&key).copied().unwrap_or(12.0);
        let need = job.bytes as f64 * ratio;
        match available {
            Some(avail) if !opts.no_mem_guard && need > 0.9 * avail as f64 => {
                let note = format!(
                    "skipped: expects {:.1} GB ({ratio:.1}× the input), {:.1} GB available",
                    need / 1e9,
                    avail as f64 / 1e9
                );
                eprintln!("{}: {note}", job.id);
                rows.push(jobs::Row::noted(job, p, &threads, &note));
            }
            _ => keep.push(p),
        }
    }
    if !keep.is_empty() {
        let callgrind = opts.callgrind && job.kind == jobs::Kind::Throughput;
        let measured = ctx.measure(job, &keep, runs, timeout, callgrind)?;
        for r in &measured {
            progress(r);
            if let Some(peak) = r.peak_bytes() {
                let key = (job.name().to_string(), r.who == Who::Peer);
                let ratio = peak as f64 / job.bytes.max(1) as f64;
                let e = ratios.entry(key).or_insert(0.0);
                *e = e.max(ratio);
            }
        }
        rows.extend(measured);
    }
    // Keep the order of the job's programs.
    rows.sort_by_key(|r| job.programs.iter().position(|p| p.who == r.who));
    Ok(rows)
}

fn progress(r: &Row) {
    let show = |c: &Cell| match c {
        Cell::Done(Stat { secs, .. }) => match r.kind {
            jobs::Kind::Throughput => format!(
                "{} MB/s ({secs:.3} s)",
                format::thousands(r.bytes as f64 / 1e6 / secs)
            ),
            jobs::Kind::FirstScreen => format!("{secs:.3} s"),
        },
        Cell::Note(n) => n.clone(),
    };
    let cells: Vec<String> = r
        .cells
        .iter()
        .map(|(t, c)| format!("{t} thread(s) {}", show(c)))
        .collect();
    eprintln!("  {}: {}", r.what, cells.join("; "));
}
