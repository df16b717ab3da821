//! Throughput benchmark: sessiontool against the machine's own ceiling and against `jq`, on a
//! generated corpus of Qwen Code sessions (~2,000 files, ~1 GiB) and on one ~1 GiB session.
//!
//! ```text
//! cargo bench --bench throughput                       # full size, 5 runs each
//! cargo bench --bench throughput -- --scale 0.05 --runs 3   # a quick look
//! cargo bench --bench throughput -- --help
//! ```
//! Prints a Markdown table (MB = 10^6 bytes) and writes `target/bench-results.json`.

mod corpus;
mod measure;
mod qwen;
mod text;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use serde_json::json;

use measure::{ProcRun, Runner, median};

/// Throughput of sessiontool (fsck, convert) beside the read ceiling and jq.
#[derive(Parser, Debug)]
#[command(name = "throughput")]
struct Opts {
    /// Where the generated corpus lives (reused when its manifest matches).
    #[arg(long, default_value = "target/bench-corpus")]
    corpus: PathBuf,
    /// Size factor: 1 = ~2,000 files / ~1 GiB plus one ~1 GiB file; 0.1 = ten times smaller.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Seed of the corpus generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// jq on the big file: give up after this many seconds and report "> timeout".
    #[arg(long, default_value_t = 120)]
    jq_timeout: u64,
    /// Any other command: give up after this many seconds.
    #[arg(long, default_value_t = 1200)]
    timeout: u64,
    /// Leave out measurements: jq, fsck, convert, convert-big, corpus, big (comma-separated).
    #[arg(long, value_delimiter = ',')]
    skip: Vec<String>,
    /// The sessiontool binary (default: the one cargo built for this bench, release profile).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Convert only this fraction of the corpus files (every n-th file, hard-linked into
    /// `<corpus>/convert-subset/`): convert is slow and would dominate the run time.
    #[arg(long, default_value_t = 0.25)]
    convert_fraction: f64,
    /// Convert the big file only when it is at most this many MB: convert holds the whole
    /// session in memory (about 11x the file size).
    #[arg(long, default_value_t = 300)]
    convert_big_max_mb: u64,
    /// Where to write the results as JSON.
    #[arg(long, default_value = "target/bench-results.json")]
    results: PathBuf,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

const THREADS: [usize; 2] = [1, 2];

/// One data set: the corpus folder or the big file.
struct Dataset {
    key: &'static str,
    title: String,
    /// What the commands get: the folder or the file.
    path: PathBuf,
    files: Vec<(PathBuf, u64)>,
    /// Newlines per file (from the warm-up read).
    lines: Vec<u64>,
    bytes: u64,
    records: u64,
}

/// One timed measurement at one thread count.
#[derive(Clone)]
enum Cell {
    Done(Stat),
    /// Not measured, with why (`—`, `> 120 s`, `failed (exit 8)`).
    Note(String),
}

#[derive(Clone)]
struct Stat {
    runs: Vec<f64>,
    secs: f64,
    bytes: u64,
    records: u64,
    rss_kib: Option<u64>,
    exit: Option<i32>,
}

impl Stat {
    fn mbps(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.secs
    }
}

struct Row {
    what: String,
    cells: [Cell; 2],
}

fn main() {
    let opts = Opts::parse();
    if let Err(e) = run(&opts) {
        eprintln!("throughput: {e}");
        std::process::exit(1);
    }
}

fn run(opts: &Opts) -> io::Result<()> {
    let skip = |what: &str| opts.skip.iter().any(|s| s == what);
    let runs = opts.runs.max(1);
    let corpus = corpus::ensure(&opts.corpus, opts.seed, opts.scale)?;
    let bin = opts
        .bin
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sessiontool")));
    let runner = Runner::new(PathBuf::from("target/bench-logs"))?;

    let mut sets = Vec::new();
    if !skip("corpus") {
        let files = corpus.session_files()?;
        sets.push(Dataset {
            key: "corpus",
            title: format!(
                "Corpus: {} files, {:.1} MB, {} records",
                files.len(),
                corpus.manifest.corpus_bytes as f64 / 1e6,
                thousands(corpus.manifest.corpus_records as f64)
            ),
            path: corpus.sessions_dir(),
            bytes: corpus.manifest.corpus_bytes,
            records: corpus.manifest.corpus_records,
            lines: Vec::new(),
            files,
        });
    }
    if !skip("big") {
        let big = corpus.big_file();
        sets.push(Dataset {
            key: "big",
            title: format!(
                "One big session: {:.1} MB, {} records",
                corpus.manifest.big_bytes as f64 / 1e6,
                thousands(corpus.manifest.big_records as f64)
            ),
            files: vec![(big.clone(), corpus.manifest.big_bytes)],
            path: big,
            bytes: corpus.manifest.big_bytes,
            records: corpus.manifest.big_records,
            lines: Vec::new(),
        });
    }

    // Page cache: we cannot drop it (no root), so every figure is for files in memory.
    eprintln!("warm-up: reading every file once (page cache cannot be dropped without root)");
    for set in &mut sets {
        set.lines = set
            .files
            .iter()
            .map(|(p, _)| count_lines(p))
            .collect::<io::Result<_>>()?;
    }

    let jq = jq_version();
    let fsck_ok = has_subcommand(&bin, "fsck");
    let pools: Vec<rayon::ThreadPool> = THREADS
        .iter()
        .map(|&n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(io::Error::other)
        })
        .collect::<io::Result<_>>()?;
    let convert_out = PathBuf::from("target/bench-convert-out");
    let timeout = Duration::from_secs(opts.timeout);
    let mut notes: Vec<String> = Vec::new();
    let mut tables = Vec::new();

    for set in &sets {
        eprintln!("== {}", set.title);
        let mut rows = Vec::new();

        // The ceiling.
        let mut cells = Vec::new();
        for pool in &pools {
            // Untimed: fills this pool's per-thread buffers.
            measure::ceiling(pool, &set.files)?;
            let mut secs = Vec::new();
            for _ in 0..runs {
                secs.push(measure::ceiling(pool, &set.files)?.0);
            }
            cells.push(Cell::Done(stat(secs, set.bytes, set.records, None, None)));
        }
        rows.push(row("read + memchr newline count (the ceiling)", cells));
        progress(rows.last().expect("pushed"));

        // jq.
        if skip("jq") {
        } else if let Some(v) = &jq {
            rows.push(measure_jq(
                opts, &runner, set, &corpus, runs, v, &mut notes,
            )?);
            progress(rows.last().expect("pushed"));
        } else if set.key == "corpus" {
            notes.push("jq: not installed; skipped.".into());
        }

        // fsck.
        if skip("fsck") {
        } else if !fsck_ok {
            eprintln!("fsck: not available (subcommand missing)");
            if set.key == "corpus" {
                notes.push("fsck: not available (subcommand missing).".into());
            }
        } else {
            let mut cells = Vec::new();
            for n in THREADS {
                let argv = args(&bin, &["fsck", "--json"], &[&set.path]);
                cells.push(time_command(
                    &runner,
                    &format!("fsck-{}-{n}t", set.key),
                    &argv,
                    n,
                    runs,
                    timeout,
                    &[0, 4],
                    (set.bytes, set.records),
                    || Ok(()),
                )?);
            }
            exit_note(&mut notes, "fsck", set, &cells, "damage found, as planted");
            rows.push(row("`sessiontool fsck --json`", cells));
            progress(rows.last().expect("pushed"));
        }

        // convert.
        let too_big = set.key == "big" && set.bytes > opts.convert_big_max_mb * 1_000_000;
        if too_big && !skip("convert") && !skip("convert-big") {
            notes.push(format!(
                "convert (big file): skipped, {:.0} MB is over --convert-big-max-mb {} \
                 (convert holds the whole session in memory, ~11x the file size).",
                set.bytes as f64 / 1e6,
                opts.convert_big_max_mb
            ));
        }
        let convert_here =
            !skip("convert") && (set.key == "corpus" || !(skip("convert-big") || too_big));
        if convert_here {
            let (input, bytes, records, what) = if set.key == "corpus"
                && opts.convert_fraction < 1.0
            {
                let (dir, bytes, records, n) = convert_subset(&corpus, set, opts.convert_fraction)?;
                notes.push(format!(
                    "convert (corpus): on a subset, every {}th file: {} files, {:.1} MB.",
                    (1.0 / opts.convert_fraction).round(),
                    n,
                    bytes as f64 / 1e6
                ));
                (
                    dir,
                    bytes,
                    records,
                    "`sessiontool convert --to gemini-json` (subset)",
                )
            } else {
                (
                    set.path.clone(),
                    set.bytes,
                    set.records,
                    "`sessiontool convert --to gemini-json`",
                )
            };
            let out = if set.key == "corpus" {
                convert_out.join("corpus")
            } else {
                convert_out.join("big.json")
            };
            let mut cells = Vec::new();
            for n in THREADS {
                let argv = args(&bin, &["convert"], &[&input, Path::new("-o"), &out])
                    .into_iter()
                    .chain(["--to", "gemini-json", "--force"].map(OsString::from))
                    .collect::<Vec<_>>();
                let clear = || {
                    if out.is_dir() {
                        std::fs::remove_dir_all(&out)
                    } else if out.exists() {
                        std::fs::remove_file(&out)
                    } else {
                        Ok(())
                    }
                };
                cells.push(time_command(
                    &runner,
                    &format!("convert-{}-{n}t", set.key),
                    &argv,
                    n,
                    runs,
                    timeout,
                    &[0, 5],
                    (bytes, records),
                    clear,
                )?);
            }
            exit_note(
                &mut notes,
                "convert",
                set,
                &cells,
                "some files not converted",
            );
            rows.push(row(what, cells));
            progress(rows.last().expect("pushed"));
        }
        tables.push((set, rows));
    }

    // The report.
    let facts = machine_facts();
    let mut md = String::new();
    md.push_str(&format!(
        "Machine: {}, {} cores, {:.1} GiB RAM, Linux {}.\n",
        facts.cpu, facts.cores, facts.mem_gib, facts.kernel
    ));
    md.push_str(&format!(
        "Corpus: seed {}, scale {}, in `{}`; medians of {runs} runs; MB = 10^6 bytes; \
         files in page cache (cannot drop it without root: every file was read once before \
         timing).\n",
        opts.seed,
        opts.scale,
        opts.corpus.display()
    ));
    md.push_str(&format!("sessiontool: `{}`.\n", bin.display()));
    for (set, rows) in &tables {
        md.push_str(&format!("\n**{}**\n\n", set.title));
        md.push_str(&markdown_table(rows));
    }
    if !notes.is_empty() {
        md.push('\n');
        for n in &notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    println!("\n{md}");

    let doc = json!({
        "machine": {
            "cpu": facts.cpu, "cores": facts.cores, "mem_gib": facts.mem_gib,
            "kernel": facts.kernel,
        },
        "options": {
            "corpus": opts.corpus, "scale": opts.scale, "seed": opts.seed, "runs": runs,
            "convert_fraction": opts.convert_fraction, "bin": bin,
        },
        "jq": jq,
        "page_cache": "warm (cannot be dropped without root; all files read once before timing)",
        "manifest": corpus.manifest,
        "datasets": tables.iter().map(|(set, rows)| json!({
            "name": set.key,
            "title": set.title,
            "path": set.path,
            "files": set.files.len(),
            "bytes": set.bytes,
            "records": set.records,
            "rows": rows.iter().map(|r| row_json(r, &rows[0])).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "notes": notes,
        "markdown": md,
    });
    if let Some(dir) = opts.results.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(
        &opts.results,
        serde_json::to_vec_pretty(&doc).map_err(io::Error::other)?,
    )?;
    eprintln!("results: {}", opts.results.display());
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// Measurements

fn measure_jq(
    opts: &Opts,
    runner: &Runner,
    set: &Dataset,
    corpus: &corpus::Corpus,
    runs: usize,
    version: &str,
    notes: &mut Vec<String>,
) -> io::Result<Row> {
    if set.key == "big" {
        let timeout = Duration::from_secs(opts.jq_timeout);
        let argv = args(Path::new("jq"), &["-c", "."], &[&set.path]);
        let mut secs = Vec::new();
        for _ in 0..runs {
            let r = runner.run("jq-big", &argv, &[], timeout, false)?;
            if r.timed_out {
                let c = Cell::Note(format!("> {} s", opts.jq_timeout));
                return Ok(row(&format!("`jq -c .` ({version})"), vec![c, dash()]));
            }
            if r.code != Some(0) {
                return Ok(row("`jq -c .`", vec![failed(&r), dash()]));
            }
            secs.push(r.secs);
        }
        let c = Cell::Done(stat(secs, set.bytes, set.records, None, Some(0)));
        return Ok(row(&format!("`jq -c .` ({version})"), vec![c, dash()]));
    }
    // The corpus: damaged files make jq stop with an error, so only the clean ones, in
    // batches of up to 16 files / 8 MB, the largest first so two processes finish together.
    let (mut bytes, mut records) = (0, 0);
    let mut clean: Vec<(&PathBuf, u64, u64)> = set
        .files
        .iter()
        .zip(&set.lines)
        .filter(|((path, _), _)| !corpus.is_damaged(path))
        .map(|((path, len), lines)| (path, *len, *lines))
        .collect();
    clean.sort_by_key(|&(_, len, _)| std::cmp::Reverse(len));
    let mut batches: Vec<Vec<OsString>> = Vec::new();
    let mut batch_bytes = 0;
    for (path, len, lines) in clean {
        bytes += len;
        records += lines;
        let full = batches
            .last()
            .is_none_or(|b| b.len() >= 3 + 16 || batch_bytes + len > 8_000_000);
        if full {
            batches.push(["jq", "-c", "."].map(OsString::from).to_vec());
            batch_bytes = 0;
        }
        batches.last_mut().expect("pushed").push(path.into());
        batch_bytes += len;
    }
    let damaged = corpus.manifest.damaged.len();
    notes.push(format!(
        "jq (corpus): the {damaged} damaged files left out (jq stops at the first bad line); \
         {} processes of up to 16 files, 1 or 2 at a time.",
        batches.len()
    ));
    let timeout = Duration::from_secs(opts.timeout);
    let mut cells = Vec::new();
    for n in THREADS {
        let mut secs = Vec::new();
        let mut cell = None;
        for _ in 0..runs {
            let r = runner.run_batches(&format!("jq-corpus-{n}p"), &batches, n, timeout)?;
            if r.timed_out {
                cell = Some(Cell::Note(format!("> {} s", opts.timeout)));
                break;
            }
            if r.code != Some(0) {
                cell = Some(failed(&r));
                break;
            }
            secs.push(r.secs);
        }
        cells.push(cell.unwrap_or_else(|| Cell::Done(stat(secs, bytes, records, None, Some(0)))));
    }
    Ok(row(
        &format!("`jq -c .` ({version}; 1 / 2 processes, clean files)"),
        cells,
    ))
}

/// Runs a sessiontool command `runs` times with `RAYON_NUM_THREADS=threads`.
#[allow(clippy::too_many_arguments)]
fn time_command(
    runner: &Runner,
    label: &str,
    argv: &[OsString],
    threads: usize,
    runs: usize,
    timeout: Duration,
    ok_codes: &[i32],
    (bytes, records): (u64, u64),
    before: impl Fn() -> io::Result<()>,
) -> io::Result<Cell> {
    let env = [("RAYON_NUM_THREADS", threads.to_string())];
    let (mut secs, mut rss) = (Vec::new(), Vec::new());
    let mut exit = None;
    for _ in 0..runs {
        before()?;
        let r = runner.run(label, argv, &env, timeout, true)?;
        if r.timed_out {
            return Ok(Cell::Note(format!("> {} s", timeout.as_secs())));
        }
        if !r.code.is_some_and(|c| ok_codes.contains(&c)) {
            eprintln!("{label}: failed (exit {:?}): {}", r.code, r.stderr_tail);
            return Ok(failed(&r));
        }
        exit = r.code;
        secs.push(r.secs);
        rss.extend(r.max_rss_kib);
    }
    let rss = rss.iter().max().copied();
    Ok(Cell::Done(stat(secs, bytes, records, rss, exit)))
}

/// A subset of the corpus for convert: every n-th file, hard-linked (no extra disk).
fn convert_subset(
    corpus: &corpus::Corpus,
    set: &Dataset,
    fraction: f64,
) -> io::Result<(PathBuf, u64, u64, usize)> {
    let every = (1.0 / fraction.max(1e-6)).round().max(1.0) as usize;
    let dir = corpus.root.join("convert-subset");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let (mut bytes, mut records, mut n) = (0, 0, 0);
    for (i, ((path, len), lines)) in set.files.iter().zip(&set.lines).enumerate() {
        if i % every != 0 {
            continue;
        }
        let rel = path.strip_prefix(&set.path).unwrap_or(path);
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().expect("has a parent"))?;
        std::fs::hard_link(path, &to).or_else(|_| std::fs::copy(path, &to).map(|_| ()))?;
        bytes += len;
        records += lines;
        n += 1;
    }
    Ok((dir, bytes, records, n))
}

fn count_lines(path: &Path) -> io::Result<u64> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 16 << 20];
    let mut lines = 0;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(lines);
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
}

/// Says so when a command exited with a non-zero code that still counts as a run.
fn exit_note(notes: &mut Vec<String>, what: &str, set: &Dataset, cells: &[Cell], meaning: &str) {
    let codes: Vec<i32> = cells
        .iter()
        .filter_map(|c| match c {
            Cell::Done(st) => st.exit.filter(|&c| c != 0),
            Cell::Note(_) => None,
        })
        .collect();
    if let Some(code) = codes.first() {
        notes.push(format!(
            "{what} ({}): exit code {code} ({meaning}).",
            set.key
        ));
    }
}

fn stat(runs: Vec<f64>, bytes: u64, records: u64, rss_kib: Option<u64>, exit: Option<i32>) -> Stat {
    Stat {
        secs: median(&runs),
        runs,
        bytes,
        records,
        rss_kib,
        exit,
    }
}

fn row(what: &str, cells: Vec<Cell>) -> Row {
    let mut it = cells.into_iter();
    Row {
        what: what.to_string(),
        cells: [
            it.next().unwrap_or_else(dash),
            it.next().unwrap_or_else(dash),
        ],
    }
}

fn dash() -> Cell {
    Cell::Note("—".into())
}

fn failed(r: &ProcRun) -> Cell {
    match r.code {
        Some(c) => Cell::Note(format!("failed (exit {c})")),
        None => Cell::Note("failed (killed)".into()),
    }
}

fn progress(r: &Row) {
    let show = |c: &Cell| match c {
        Cell::Done(s) => format!("{} MB/s ({:.3} s)", thousands(s.mbps()), s.secs),
        Cell::Note(n) => n.clone(),
    };
    eprintln!(
        "  {}: 1 thread {}; 2 threads {}",
        r.what,
        show(&r.cells[0]),
        show(&r.cells[1])
    );
}

fn args(program: &Path, fixed: &[&str], paths: &[&Path]) -> Vec<OsString> {
    let mut v = vec![program.as_os_str().to_owned()];
    v.extend(fixed.iter().map(OsString::from));
    v.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    v
}

fn jq_version() -> Option<String> {
    let out = std::process::Command::new("jq")
        .arg("--version")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn has_subcommand(bin: &Path, name: &str) -> bool {
    std::process::Command::new(bin)
        .args([name, "--help"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

// ----------------------------------------------------------------------------------------------
// Output

fn markdown_table(rows: &[Row]) -> String {
    let ceiling = &rows[0];
    let mut s = String::from(
        "| what | MB/s, 1 thread | MB/s, 2 threads | records/s, 2 threads | of the ceiling, 1 / 2 threads | peak RSS, 2 threads |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let mbps = |c: &Cell| match c {
            Cell::Done(st) => thousands(st.mbps()),
            Cell::Note(n) => n.clone(),
        };
        let recs = match (&r.cells[1], &r.cells[0]) {
            (Cell::Done(st), _) | (_, Cell::Done(st)) => {
                let rate = st.records as f64 / st.secs;
                if matches!(r.cells[1], Cell::Done(_)) {
                    si(rate)
                } else {
                    format!("{} (1 thread)", si(rate))
                }
            }
            _ => "—".into(),
        };
        let ratio = |i: usize| match (&r.cells[i], &ceiling.cells[i]) {
            (Cell::Done(a), Cell::Done(c)) => format!("{:.1}%", 100.0 * a.mbps() / c.mbps()),
            _ => "—".into(),
        };
        let rss = r
            .cells
            .iter()
            .rev()
            .find_map(|c| match c {
                Cell::Done(Stat {
                    rss_kib: Some(k), ..
                }) => Some(format!("{:.0} MiB", *k as f64 / 1024.0)),
                _ => None,
            })
            .unwrap_or_else(|| "—".into());
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} / {} | {} |\n",
            r.what,
            mbps(&r.cells[0]),
            mbps(&r.cells[1]),
            recs,
            ratio(0),
            ratio(1),
            rss
        ));
    }
    s
}

fn row_json(r: &Row, ceiling: &Row) -> serde_json::Value {
    let cell = |i: usize| match &r.cells[i] {
        Cell::Done(st) => {
            let of_ceiling = match &ceiling.cells[i] {
                Cell::Done(c) => Some(st.mbps() / c.mbps()),
                Cell::Note(_) => None,
            };
            json!({
                "threads": THREADS[i],
                "median_secs": st.secs,
                "runs_secs": st.runs,
                "bytes": st.bytes,
                "records": st.records,
                "mb_per_s": st.mbps(),
                "records_per_s": st.records as f64 / st.secs,
                "of_ceiling": of_ceiling,
                "max_rss_mib": st.rss_kib.map(|k| k as f64 / 1024.0),
                "exit_code": st.exit,
            })
        }
        Cell::Note(n) => json!({ "threads": THREADS[i], "note": n }),
    };
    json!({ "what": r.what, "results": [cell(0), cell(1)] })
}

/// 12345.6 -> "12,346"; below 100 with one decimal.
fn thousands(x: f64) -> String {
    if x < 100.0 {
        return format!("{x:.1}");
    }
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 1234567 -> "1.23 M".
fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

struct Facts {
    cpu: String,
    cores: usize,
    mem_gib: f64,
    kernel: String,
}

fn machine_facts() -> Facts {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    let simd: Vec<&str> = [("avx2", "AVX2"), ("avx512bw", "AVX-512")]
        .into_iter()
        .filter(|(f, _)| flags.contains(f))
        .map(|(_, name)| name)
        .collect();
    let cpu = if simd.is_empty() {
        cpu
    } else {
        format!("{cpu} ({})", simd.join(", "))
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let l = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map(|kib| kib / 1024.0 / 1024.0)
        .unwrap_or(0.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Facts {
        cpu,
        cores,
        mem_gib,
        kernel,
    }
}
