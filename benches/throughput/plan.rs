//! What is measured on each data set: the jobs with their command lines (sessiontool's and the
//! peer's), the ceiling and jq, and the check that a generated input is what it claims to be.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::Opts;
use crate::corpus::Corpus;
use crate::format::count;
use crate::jobs::{self, Cell, Job, Kind, Program, Row, Scratch, Stat, Variant, Who};
use crate::measure::{self, Output, Runner};
use crate::peer::Peer;
use crate::report::DataSet;
use crate::sessions::{Fmt, Input};

/// The jobs on the corpus (besides the ceiling).
pub const CORPUS_JOBS: &[&str] = &["ceiling", "jq", "fsck", "convert", "list"];

/// The jobs on a single session of `fmt`.
pub fn single_jobs(fmt: Fmt) -> &'static [&'static str] {
    match fmt {
        Fmt::Claude => &[
            "ceiling",
            "jq",
            "fsck",
            "convert-codex",
            "convert-gemini",
            "convert-qwen",
            "convert-same",
            "show",
            "show-first",
            "list",
            "recover",
        ],
        Fmt::Qwen => &[
            "ceiling",
            "jq",
            "fsck",
            "convert-claude",
            "convert-codex",
            "convert-same",
            "show",
            "show-first",
            "list",
            "recover",
        ],
        Fmt::Codex => &[
            "ceiling",
            "jq",
            "fsck",
            "convert-claude",
            "convert-gemini",
            "convert-qwen",
            "convert-same",
            "show",
            "show-first",
            "list",
            "recover",
        ],
    }
}

/// A conversion: its job name, sessiontool's target format and what casr does for it.
struct Conversion {
    name: &'static str,
    to: &'static str,
    peer: PeerJob,
}

/// casr's side of a job.
#[derive(Clone, Copy)]
enum PeerJob {
    /// `casr resume <alias> <id> --source <file>`.
    Resume(&'static str),
    /// casr cannot do this job; why, in the row.
    NotComparable(&'static str),
}

/// casr has no Qwen Code writer.
const PEER_NO_QWEN: &str = "not comparable: casr writes no Qwen Code sessions";

/// casr writes nothing when the source and the target are the same tool.
const PEER_SAME_TOOL: &str = "not comparable: casr writes nothing when source and target are \
     the same tool";

fn conversions(fmt: Fmt) -> Vec<Conversion> {
    let c = |name, to, peer| Conversion { name, to, peer };
    match fmt {
        Fmt::Claude => vec![
            c("convert-codex", "codex-jsonl", PeerJob::Resume("cod")),
            c("convert-gemini", "gemini-json", PeerJob::Resume("gmi")),
            c(
                "convert-qwen",
                "qwen-jsonl",
                PeerJob::NotComparable(PEER_NO_QWEN),
            ),
            c(
                "convert-same",
                "claude-jsonl",
                PeerJob::NotComparable(PEER_SAME_TOOL),
            ),
        ],
        // casr has no Qwen Code reader; it is run all the same, so its row shows what it does
        // with the file (it takes it for Claude Code's and stops: no messages).
        Fmt::Qwen => vec![
            c("convert-claude", "claude-jsonl", PeerJob::Resume("cc")),
            c("convert-codex", "codex-jsonl", PeerJob::Resume("cod")),
            c(
                "convert-same",
                "qwen-jsonl",
                PeerJob::NotComparable(PEER_SAME_TOOL),
            ),
        ],
        Fmt::Codex => vec![
            c("convert-claude", "claude-jsonl", PeerJob::Resume("cc")),
            c("convert-gemini", "gemini-json", PeerJob::Resume("gmi")),
            c(
                "convert-qwen",
                "qwen-jsonl",
                PeerJob::NotComparable(PEER_NO_QWEN),
            ),
            c(
                "convert-same",
                "codex-jsonl",
                PeerJob::NotComparable(PEER_SAME_TOOL),
            ),
        ],
    }
}

pub struct Ctx<'a> {
    opts: &'a Opts,
    bin: PathBuf,
    peer: Option<&'a Peer>,
    threads: Vec<usize>,
    pools: Vec<rayon::ThreadPool>,
    runner: Runner,
    jq: Option<String>,
    /// sessiontool's sub-commands that exist (an older `--bin` may lack some).
    has: Vec<&'static str>,
    out: PathBuf,
}

impl<'a> Ctx<'a> {
    pub fn new(
        opts: &'a Opts,
        bin: &Path,
        peer: Option<&'a Peer>,
        threads: Vec<usize>,
    ) -> io::Result<Ctx<'a>> {
        let pools = threads
            .iter()
            .map(|&n| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(io::Error::other)
            })
            .collect::<io::Result<_>>()?;
        let has = ["fsck", "convert", "show", "list", "recover"]
            .into_iter()
            .filter(|s| has_subcommand(bin, s))
            .collect();
        Ok(Ctx {
            opts,
            bin: bin.to_path_buf(),
            peer,
            threads,
            pools,
            runner: Runner::new(PathBuf::from("target/bench-logs"))?,
            jq: jq_version(),
            has,
            out: opts.corpus.join("out"),
        })
    }

    pub fn threads(&self) -> &[usize] {
        &self.threads
    }

    pub fn measure(
        &self,
        job: &Job,
        programs: &[&Program],
        runs: usize,
        timeout: Duration,
        callgrind: bool,
    ) -> io::Result<Vec<Row>> {
        jobs::measure(&self.runner, job, programs, runs, timeout, callgrind)
    }

    // -- data sets ------------------------------------------------------------------------------

    pub fn single_set(&self, input: &Input) -> DataSet {
        DataSet {
            key: input.key(),
            title: format!(
                "{} session, {:.1} MB, {} records (`{}`)",
                input.fmt.tool(),
                input.m.bytes as f64 / 1e6,
                count(input.m.records),
                input.key()
            ),
            bytes: input.m.bytes,
            records: input.m.records,
            files: vec![(input.file.clone(), input.m.bytes)],
            single: true,
            rows: Vec::new(),
        }
    }

    /// The read ceiling at each thread count, in process: read every byte, count newlines.
    pub fn ceiling_row(&self, key: &str, files: &[(PathBuf, u64)]) -> io::Result<Option<Row>> {
        let id = format!("{key}:ceiling");
        if self.opts.skip.iter().any(|p| id.contains(p.as_str())) {
            return Ok(None);
        }
        let bytes = files.iter().map(|(_, n)| n).sum();
        // Warm-up: the page cache cannot be dropped without root, so every figure is for
        // files in memory; this read puts them there (and counts the records).
        let records = measure::ceiling(&self.pools[0], files)?.1;
        let mut cells = Vec::new();
        for (pool, &n) in self.pools.iter().zip(&self.threads) {
            // Untimed: fills this pool's per-thread buffers.
            measure::ceiling(pool, files)?;
            let mut secs = Vec::new();
            for _ in 0..self.opts.runs.max(1) {
                secs.push(measure::ceiling(pool, files)?.0);
            }
            cells.push((n, Cell::Done(Stat::new(secs, Vec::new(), None, None))));
        }
        Ok(Some(Row {
            id,
            who: Who::Reference,
            what: "read + memchr newline count (the ceiling)".into(),
            kind: Kind::Throughput,
            bytes,
            records,
            cells,
            instructions: None,
            output_bytes: None,
            command: Some(
                "in the bench's own process: every file read in pieces of 16 MiB, newlines \
                 counted with memchr"
                    .into(),
            ),
        }))
    }

    // -- the corpus -----------------------------------------------------------------------------

    pub fn corpus_jobs(
        &self,
        corpus: &Corpus,
        notes: &mut Vec<String>,
    ) -> io::Result<(DataSet, Vec<Job>)> {
        let files = corpus.session_files()?;
        let m = &corpus.manifest;
        let set = DataSet {
            key: "corpus".into(),
            title: format!(
                "Corpus: {} Qwen Code sessions, {:.1} MB, {} records, {} of them damaged (`corpus`)",
                files.len(),
                m.corpus_bytes as f64 / 1e6,
                count(m.corpus_records),
                m.damaged.len()
            ),
            bytes: m.corpus_bytes,
            records: m.corpus_records,
            files,
            single: false,
            rows: Vec::new(),
        };
        let dir = corpus.sessions_dir();
        let mut jobs = Vec::new();
        if self.selected("corpus:fsck") {
            jobs.push(self.tool_job(
                "corpus:fsck",
                "fsck",
                "`sessiontool fsck --json`",
                (set.bytes, set.records),
                &[0, 4],
                |_| args(&["fsck", "--json"], &[&dir]),
                None,
            ));
        }
        if self.selected("corpus:convert") {
            let (input, bytes, records, n) =
                convert_subset(corpus, &set.files, self.opts.convert_fraction)?;
            notes.push(format!(
                "convert (corpus): every {}th file, {n} files, {:.1} MB, to gemini-json.",
                (1.0 / self.opts.convert_fraction.max(1e-6)).round(),
                bytes as f64 / 1e6
            ));
            let out = self.out.join("corpus-convert");
            jobs.push(self.tool_job(
                "corpus:convert",
                "convert",
                "`sessiontool convert --to gemini-json` (a subset of the files)",
                (bytes, records),
                &[0, 5],
                |_| {
                    args(
                        &["convert", "--to", "gemini-json", "--force", "-o"],
                        &[&out, &input],
                    )
                },
                Some(Scratch {
                    path: out.clone(),
                    dir: false,
                }),
            ));
        }
        if self.selected("corpus:list") {
            let home = corpus.home();
            jobs.push(self.tool_job(
                "corpus:list",
                "list",
                "`sessiontool list --all --json` (the corpus as Qwen Code's store)",
                (set.bytes, set.records),
                &[0],
                |_| args(&["list", "--all", "--json", "--home"], &[&home]),
                None,
            ));
        }
        Ok((set, jobs))
    }

    /// jq over the corpus: damaged files make jq stop with an error, so only the clean ones,
    /// in batches of up to 16 files / 8 MB, the largest first so two processes finish
    /// together; 1 or 2 processes at a time.
    pub fn corpus_jq(
        &self,
        corpus: &Corpus,
        set: &DataSet,
        notes: &mut Vec<String>,
    ) -> io::Result<Option<Row>> {
        if !self.selected("corpus:jq") {
            return Ok(None);
        }
        let Some(version) = &self.jq else {
            notes.push("jq: not installed; skipped.".into());
            return Ok(None);
        };
        let (mut bytes, mut records) = (0, 0);
        let mut clean: Vec<(&PathBuf, u64)> = set
            .files
            .iter()
            .filter(|(path, _)| !corpus.is_damaged(path))
            .map(|(path, len)| (path, *len))
            .collect();
        clean.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
        let mut batches: Vec<Vec<OsString>> = Vec::new();
        let mut batch_bytes = 0;
        for (path, len) in clean {
            bytes += len;
            records += count_lines(path)?;
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
        notes.push(format!(
            "jq (corpus): the {} damaged files left out (jq stops at the first bad line); {} \
             processes of up to 16 files, 1 or 2 at a time.",
            corpus.manifest.damaged.len(),
            batches.len()
        ));
        let timeout = Duration::from_secs(self.opts.timeout);
        let mut cells = Vec::new();
        for &n in self.threads.iter().filter(|&&n| n <= 2) {
            let (mut secs, mut cpu) = (Vec::new(), Vec::new());
            let mut cell = None;
            for _ in 0..self.opts.runs.max(1) {
                let r =
                    self.runner
                        .run_batches(&format!("corpus-jq-{n}p"), &batches, n, timeout)?;
                if r.timed_out {
                    cell = Some(Cell::Note(format!("> {} s", self.opts.timeout)));
                    break;
                }
                if r.code != Some(0) {
                    cell = Some(Cell::Note(format!("failed (exit {:?})", r.code)));
                    break;
                }
                secs.push(r.secs);
                cpu.push(r.cpu_secs);
            }
            let cell = cell.unwrap_or_else(|| Cell::Done(Stat::new(secs, cpu, None, Some(0))));
            cells.push((n, cell));
        }
        Ok(Some(Row {
            id: "corpus:jq".into(),
            who: Who::Reference,
            what: format!("`jq -c .` ({version}; 1 / 2 processes, the clean files)"),
            kind: Kind::Throughput,
            bytes,
            records,
            cells,
            instructions: None,
            output_bytes: None,
            command: Some(format!(
                "jq -c . FILE... ({} processes of up to 16 files, the clean files)",
                batches.len()
            )),
        }))
    }

    // -- one session ----------------------------------------------------------------------------

    pub fn single_jobs(&self, input: &Input) -> io::Result<Vec<Job>> {
        let key = input.key();
        let (bytes, records) = (input.m.bytes, input.m.records);
        let file = input.file.as_path();
        let id = |name: &str| format!("{key}:{name}");
        let mut jobs = Vec::new();
        if self.selected(&id("jq"))
            && let Some(v) = &self.jq
        {
            jobs.push(Job {
                id: id("jq"),
                kind: Kind::Throughput,
                bytes,
                records,
                ok_codes: vec![0],
                output: Output::Null,
                programs: vec![Program {
                    who: Who::Reference,
                    what: format!("`jq -c .` ({v})"),
                    why_not: None,
                    variants: vec![Variant {
                        threads: 1,
                        argv: ["jq", "-c", "."]
                            .into_iter()
                            .map(OsString::from)
                            .chain([file.as_os_str().to_owned()])
                            .collect(),
                        env: Vec::new(),
                        scratch: None,
                    }],
                }],
            });
        }
        if self.selected(&id("fsck")) {
            jobs.push(self.tool_job(
                &id("fsck"),
                "fsck",
                "`sessiontool fsck --json`",
                (bytes, records),
                &[0],
                |_| args(&["fsck", "--json"], &[file]),
                None,
            ));
        }
        for c in conversions(input.fmt) {
            if !self.selected(&id(c.name)) {
                continue;
            }
            let ext = if c.to == "gemini-json" {
                "json"
            } else {
                "jsonl"
            };
            let out = self.out.join(format!("{key}-{}.{ext}", c.name));
            let mut job = self.tool_job(
                &id(c.name),
                "convert",
                &format!("`sessiontool convert --to {}`", c.to),
                (bytes, records),
                &[0],
                |_| args(&["convert", "--to", c.to, "--force", "-o"], &[&out, file]),
                Some(Scratch {
                    path: out.clone(),
                    dir: false,
                }),
            );
            job.programs
                .push(self.peer_convert(&key, c.name, c.peer, input)?);
            jobs.push(job);
        }
        if self.selected(&id("show")) {
            jobs.push(self.tool_job(
                &id("show"),
                "show",
                "`sessiontool show` (all of it, to /dev/null)",
                (bytes, records),
                &[0],
                |_| args(&["show", "--width", "100", "--color", "never"], &[file]),
                None,
            ));
        }
        if self.selected(&id("show-first")) {
            let n = self.opts.first_screen_bytes;
            let mut job = self.tool_job(
                &id("show-first"),
                "show",
                &format!("`sessiontool show`: time to the first {n} bytes (first screen)"),
                (bytes, records),
                &[0],
                |_| args(&["show", "--width", "100", "--color", "never"], &[file]),
                None,
            );
            job.kind = Kind::FirstScreen;
            job.output = Output::FirstBytes(n);
            // One thread count: the default (the most threads).
            for p in &mut job.programs {
                let last = p.variants.pop();
                p.variants.clear();
                p.variants.extend(last);
            }
            jobs.push(job);
        }
        if self.selected(&id("list")) {
            let home = input.home.as_path();
            let mut job = self.tool_job(
                &id("list"),
                "list",
                "`sessiontool list --all --json` (a store holding this session)",
                (bytes, records),
                &[0],
                |_| args(&["list", "--all", "--json", "--home"], &[home]),
                None,
            );
            job.programs.push(self.peer_list(input));
            jobs.push(job);
        }
        if self.selected(&id("recover")) {
            // A healthy session: the check, its id, how to resume it; nothing is changed (the
            // dry run only makes sure of that).
            let home = input.home.as_path();
            jobs.push(self.tool_job(
                &id("recover"),
                "recover",
                "`sessiontool recover FILE --dry-run --json` (a healthy session in its store)",
                (bytes, records),
                &[0],
                |_| {
                    let mut a = args(&["recover"], &[file]);
                    a.extend(args(&["--dry-run", "--json", "--home"], &[home]));
                    a
                },
                None,
            ));
        }
        Ok(jobs)
    }

    /// casr converting `input` as `peer` says, or a program whose row says why not.
    fn peer_convert(
        &self,
        key: &str,
        name: &str,
        peer: PeerJob,
        input: &Input,
    ) -> io::Result<Program> {
        let alias = match peer {
            PeerJob::NotComparable(why) => {
                return Ok(Program {
                    who: Who::Peer,
                    what: "casr (peer)".into(),
                    variants: Vec::new(),
                    why_not: Some(why.into()),
                });
            }
            PeerJob::Resume(alias) => alias,
        };
        let what = format!("resume {alias}");
        let Some(peer) = self.peer else {
            return Ok(not_built(&what));
        };
        let home = self.out.join(format!("{key}-{name}-casr-home"));
        let argv = peer.convert_argv(alias, &input.m.session_id, &input.file)?;
        Ok(self.peer_program(
            peer.label(&what),
            argv,
            Peer::env(&home),
            Some(Scratch {
                path: home.clone(),
                dir: true,
            }),
        ))
    }

    /// casr listing the project of `input` in the store holding it (casr has no Qwen Code
    /// reader: that row says so).
    fn peer_list(&self, input: &Input) -> Program {
        let what = "list --workspace <project>";
        if input.fmt == Fmt::Qwen {
            return Program {
                who: Who::Peer,
                what: "casr (peer)".into(),
                variants: Vec::new(),
                why_not: Some("not comparable: casr has no Qwen Code reader".into()),
            };
        }
        let Some(peer) = self.peer else {
            return not_built(what);
        };
        self.peer_program(
            peer.label(what),
            peer.list_argv(&input.m.cwd),
            Peer::env(&input.home),
            None,
        )
    }

    /// The peer's program: one variant, at the most threads (casr's conversions do not
    /// depend on RAYON_NUM_THREADS; it is set for it all the same).
    fn peer_program(
        &self,
        what: String,
        argv: Vec<OsString>,
        env: Vec<(String, String)>,
        scratch: Option<Scratch>,
    ) -> Program {
        let threads = *self.threads.last().expect("at least one thread count");
        Program {
            who: Who::Peer,
            what,
            variants: vec![Variant {
                threads,
                argv,
                env,
                scratch,
            }],
            why_not: None,
        }
    }

    /// A job of sessiontool alone, at every thread count.
    #[allow(clippy::too_many_arguments)]
    fn tool_job(
        &self,
        id: &str,
        sub: &str,
        what: &str,
        (bytes, records): (u64, u64),
        ok_codes: &[i32],
        argv: impl Fn(usize) -> Vec<OsString>,
        scratch: Option<Scratch>,
    ) -> Job {
        let variants = if self.has.contains(&sub) {
            self.threads
                .iter()
                .map(|&threads| Variant {
                    threads,
                    argv: std::iter::once(self.bin.as_os_str().to_owned())
                        .chain(argv(threads))
                        .collect(),
                    env: Vec::new(),
                    scratch: scratch.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Job {
            id: id.to_string(),
            kind: Kind::Throughput,
            bytes,
            records,
            ok_codes: ok_codes.to_vec(),
            output: Output::Null,
            programs: vec![Program {
                who: Who::Tool,
                what: what.to_string(),
                why_not: (!self.has.contains(&sub))
                    .then(|| format!("not available (no `{sub}` sub-command)")),
                variants,
            }],
        }
    }

    fn selected(&self, id: &str) -> bool {
        self.opts.selected(id)
    }

    /// Checks a generated input with sessiontool itself before timing anything on it: the
    /// format it detects and fsck finding nothing wrong. A mismatch is a generator bug and is
    /// said in the report's notes (the figures would be for the wrong input).
    pub fn check_input(&self, input: &Input, notes: &mut Vec<String>) -> io::Result<()> {
        let log = self
            .runner
            .log_dir
            .join(format!("{}-check.json", input.key()));
        let detect = Command::new(&self.bin)
            .args(["detect", "--json"])
            .arg(&input.file)
            .stderr(Stdio::null())
            .output()?;
        let detected = serde_json::from_slice::<serde_json::Value>(&detect.stdout)
            .ok()
            .and_then(|v| {
                let text = v.to_string();
                (text.contains(&format!("\"{}\"", input.fmt.format()))).then_some(())
            });
        if detected.is_none() {
            notes.push(format!(
                "{}: sessiontool does not detect it as {} (generator bug?): {}",
                input.key(),
                input.fmt.format(),
                String::from_utf8_lossy(&detect.stdout).trim()
            ));
        }
        if self.has.contains(&"fsck") {
            let fsck = Command::new(&self.bin)
                .args(["fsck", "--json"])
                .arg(&input.file)
                .stderr(Stdio::null())
                .output()?;
            std::fs::write(&log, &fsck.stdout)?;
            if fsck.status.code() != Some(0) {
                notes.push(format!(
                    "{}: fsck exits {:?} on the generated input (generator bug?); see {}",
                    input.key(),
                    fsck.status.code(),
                    log.display()
                ));
            }
        }
        Ok(())
    }
}

/// The peer's row when there is no peer.
fn not_built(what: &str) -> Program {
    Program {
        who: Who::Peer,
        what: format!("casr `{what}` (peer)"),
        variants: Vec::new(),
        why_not: Some("peer not built".into()),
    }
}

fn args(fixed: &[&str], paths: &[&Path]) -> Vec<OsString> {
    let mut v: Vec<OsString> = fixed.iter().map(OsString::from).collect();
    v.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    v
}

/// A subset of the corpus for convert: every n-th file, hard-linked (no extra disk).
fn convert_subset(
    corpus: &Corpus,
    files: &[(PathBuf, u64)],
    fraction: f64,
) -> io::Result<(PathBuf, u64, u64, usize)> {
    let every = (1.0 / fraction.max(1e-6)).round().max(1.0) as usize;
    let dir = corpus.root.join("convert-subset");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let base = corpus.sessions_dir();
    let (mut bytes, mut records, mut n) = (0, 0, 0);
    for (i, (path, len)) in files.iter().enumerate() {
        if i % every != 0 {
            continue;
        }
        let rel = path.strip_prefix(&base).unwrap_or(path);
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().expect("has a parent"))?;
        std::fs::hard_link(path, &to).or_else(|_| std::fs::copy(path, &to).map(|_| ()))?;
        bytes += len;
        records += count_lines(path)?;
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

fn jq_version() -> Option<String> {
    let out = Command::new("jq").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn has_subcommand(bin: &Path, name: &str) -> bool {
    Command::new(bin)
        .args([name, "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
