//! The report: one Markdown table per data set, a table against the goals of issue 15, notes,
//! and everything as JSON (`--results`).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::Opts;
use crate::format::{count, secs, si, size, thousands, times};
use crate::jobs::{Cell, Kind, Row, Who};
use crate::peer::Peer;

pub struct DataSet {
    /// `corpus`, `claude-100`, ...
    pub key: String,
    pub title: String,
    pub bytes: u64,
    pub records: u64,
    pub files: Vec<(PathBuf, u64)>,
    /// One session (peak memory is also given as a multiple of it).
    pub single: bool,
    pub rows: Vec<Row>,
}

pub fn write(
    opts: &Opts,
    bin: &Path,
    peer: Option<&Peer>,
    facts: &Facts,
    sets: &[DataSet],
    notes: &[String],
    runs: usize,
) -> io::Result<()> {
    let load_end = load_average();
    let mut md = String::new();
    md.push_str(&format!(
        "Machine: {}, {} cores, {:.1} GiB RAM, Linux {}; load average {} at the start, {} at \
         the end.\n",
        facts.cpu, facts.cores, facts.mem_gib, facts.kernel, facts.load, load_end
    ));
    md.push_str(&format!(
        "Inputs: seed {}, scale {}, in `{}`; medians of {runs} runs, the variants of a job \
         alternating; MB = 10^6 bytes; CPU = user + system time of the process; peak RSS = the \
         highest of all runs (GNU time's `%M`); MB/s of CPU = input bytes per CPU second; files \
         in the page cache (every file read once before timing).\n",
        opts.seed,
        opts.scale,
        opts.corpus.display()
    ));
    md.push_str(&format!("sessiontool: `{}`.\n", bin.display()));
    match peer {
        Some(p) => md.push_str(&format!(
            "Peer: {} (`{}`, found by {}){}.\n",
            p.version,
            p.bin.display(),
            p.found_by,
            if p.budget {
                ", with its default budget"
            } else {
                ", converting everything (`--max-context-tokens 0 --max-tool-output 0 \
                 --keep-reasoning`)"
            }
        )),
        None => md.push_str(&format!(
            "Peer: **peer not built** (no `--casr PATH`, `--casr-src DIR`, `${}` or `casr` on \
             PATH).\n",
            crate::peer::ENV
        )),
    }
    md.push_str("\n**Summary** (medians at the most threads; wall seconds, input MB per wall second, peak RSS)\n\n");
    md.push_str(&summary_table(sets));
    md.push_str("\n**Against the goals of issue 15** (the largest inputs measured)\n\n");
    md.push_str(&goals_table(sets));
    for set in sets {
        md.push_str(&format!("\n**{}**\n\n", set.title));
        md.push_str(&table(set, opts.callgrind));
        md.push_str("\nCommands (at the most threads):\n\n");
        for r in &set.rows {
            if let Some(c) = &r.command {
                md.push_str(&format!("- `{}` {}: `{c}`\n", r.name(), who(r.who)));
            }
        }
    }
    if !notes.is_empty() {
        md.push('\n');
        for n in notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    println!("\n{md}");

    let doc = json!({
        "machine": {
            "cpu": facts.cpu, "cores": facts.cores, "mem_gib": facts.mem_gib,
            "kernel": facts.kernel, "load_start": facts.load, "load_end": load_end,
        },
        "options": {
            "corpus": opts.corpus, "scale": opts.scale, "seed": opts.seed, "runs": runs,
            "sizes": opts.sizes, "threads": opts.threads, "only": opts.only, "skip": opts.skip,
            "convert_fraction": opts.convert_fraction, "bin": bin, "callgrind": opts.callgrind,
            "first_screen_bytes": opts.first_screen_bytes,
        },
        "peer": peer.map(|p| json!({"bin": p.bin, "found_by": p.found_by, "version": p.version, "budget": p.budget})),
        "page_cache": "warm (cannot be dropped without root; all files read once before timing)",
        "datasets": sets.iter().map(|set| json!({
            "name": set.key,
            "title": set.title,
            "files": set.files.len(),
            "bytes": set.bytes,
            "records": set.records,
            "rows": set.rows.iter().map(row_json).collect::<Vec<_>>(),
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
// Tables

fn table(set: &DataSet, callgrind: bool) -> String {
    let threads: Vec<usize> = {
        let mut t: Vec<usize> = set
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().map(|(t, _)| *t))
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let mut head = vec!["job".to_string(), "command".to_string()];
    head.extend(
        threads
            .iter()
            .map(|t| format!("MB/s (wall), {t} thread{}", if *t == 1 { "" } else { "s" })),
    );
    head.extend(
        ["CPU (most threads)", "MB/s of CPU", "peak RSS", "written"]
            .into_iter()
            .map(String::from),
    );
    if callgrind {
        head.push("instructions (callgrind, 1 thread)".into());
        head.push("per input byte".into());
    }
    let mut s = format!("| {} |\n", head.join(" | "));
    s.push_str(&format!("|---|---|{}\n", "---:|".repeat(head.len() - 2)));
    for r in &set.rows {
        let mut cols = vec![
            if r.who == Who::Peer {
                String::new()
            } else {
                format!("`{}`", r.name())
            },
            r.what.clone(),
        ];
        for t in &threads {
            cols.push(match r.cells.iter().find(|(n, _)| n == t) {
                Some((_, Cell::Done(st))) => match r.kind {
                    Kind::Throughput => format!(
                        "{} ({})",
                        thousands(r.bytes as f64 / 1e6 / st.secs),
                        secs(st.secs)
                    ),
                    Kind::FirstScreen => secs(st.secs),
                },
                Some((_, Cell::Note(n))) => n.clone(),
                None => "—".into(),
            });
        }
        let widest = r.widest().filter(|_| r.kind == Kind::Throughput);
        let cpu = widest.and_then(|(_, st)| st.cpu_secs);
        cols.push(cpu.map_or("—".into(), secs));
        cols.push(cpu.map_or("—".into(), |c| thousands(r.bytes as f64 / 1e6 / c)));
        cols.push(match r.peak_bytes() {
            Some(p) if set.single => format!("{} ({})", size(p), times(p as f64 / r.bytes as f64)),
            Some(p) => size(p),
            None => "—".into(),
        });
        cols.push(r.output_bytes.map_or("—".into(), size));
        if callgrind {
            match &r.instructions {
                Some(Ok(ir)) => {
                    cols.push(si(*ir as f64));
                    cols.push(format!("{:.1}", *ir as f64 / r.bytes as f64));
                }
                Some(Err(e)) => {
                    cols.push(e.clone());
                    cols.push("—".into());
                }
                None => cols.extend(["—".to_string(), "—".to_string()]),
            }
        }
        s.push_str(&format!("| {} |\n", cols.join(" | ")));
    }
    s
}

/// Rows of the goal table of issue 15: what is measured now, the peer, the goal, and each
/// criterion met (✓) or not (✗).
fn goals_table(sets: &[DataSet]) -> String {
    let mut s =
        String::from("| job | sessiontool now | casr | goal | met |\n|---|---|---|---|---|\n");
    // The largest single-session set of a format.
    let largest = |fmt: &str| {
        sets.iter()
            .filter(|d| d.single && d.key.starts_with(&format!("{fmt}-")))
            .max_by_key(|d| d.bytes)
    };
    let mut lines = Vec::new();
    if let Some(set) = largest("claude") {
        for (name, to) in [
            ("convert-codex", "Codex"),
            ("convert-gemini", "Gemini (legacy JSON)"),
        ] {
            let Some(tool) = row(set, name, Who::Tool) else {
                continue;
            };
            let peer = row(set, name, Who::Peer);
            let mut met = Vec::new();
            let two = tool.cell(2).map(|st| tool.bytes as f64 / 1e6 / st.secs);
            met.push(check(two.map(|v| {
                (v >= 500.0, format!("{} MB/s on 2 threads", thousands(v)))
            })));
            let peer_rate = peer
                .and_then(|p| p.widest())
                .map(|(_, st)| tool.bytes as f64 / 1e6 / st.secs);
            met.push(check(
                two.zip(peer_rate)
                    .map(|(a, b)| (a >= 3.0 * b, format!("{:.2}× casr", a / b))),
            ));
            met.push(check(
                tool.peak_bytes()
                    .map(|p| (p <= 300_000_000, format!("peak {}", size(p)))),
            ));
            lines.push(format!(
                "| convert Claude → {to}, {:.0} MB generated Claude JSONL | {} | {} | ≥ 500 MB/s on 2 threads, ≥ 3× casr's throughput in the same run; peak ≤ 300 MB | {} |",
                set.bytes as f64 / 1e6,
                summary(tool),
                peer.map_or("—".into(), summary),
                met.join("; ")
            ));
        }
    }
    let same: Vec<(String, f64)> = ["claude", "qwen", "codex"]
        .iter()
        .filter_map(|f| {
            let set = largest(f)?;
            let r = row(set, "convert-same", Who::Tool)?;
            let st = r.cell(2).or_else(|| r.widest().map(|(_, s)| s))?;
            Some((
                format!("{f} {:.0} MB", set.bytes as f64 / 1e6),
                r.bytes as f64 / 1e6 / st.secs,
            ))
        })
        .collect();
    if !same.is_empty() {
        lines.push(format!(
            "| same-format convert (records unchanged) | {} | — | ≥ 1 GB/s | {} |",
            same.iter()
                .map(|(k, v)| format!("{k}: {} MB/s", thousands(*v)))
                .collect::<Vec<_>>()
                .join("; "),
            same.iter()
                .map(|(k, v)| check(Some((*v >= 1000.0, k.clone()))))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    for f in ["claude", "qwen", "codex"] {
        let Some(set) = largest(f) else { continue };
        let mut now = Vec::new();
        let mut met = Vec::new();
        for name in ["show", "list", "recover"] {
            if let Some(p) = row(set, name, Who::Tool).and_then(Row::peak_bytes) {
                now.push(format!("{name}: peak {}", size(p)));
                met.push(check(Some((p <= 300_000_000, format!("{name} peak")))));
            }
        }
        if let Some(st) = row(set, "show-first", Who::Tool).and_then(|r| r.widest()) {
            now.push(format!("first screen of show: {}", secs(st.1.secs)));
            met.push(check(Some((st.1.secs < 0.5, "first screen".into()))));
        }
        if !now.is_empty() {
            lines.push(format!(
                "| show / list / recover of a {:.0} MB {} session ({} records) | {} | — | ≤ 300 MB peak, first screen of `show` in < 0.5 s | {} |",
                set.bytes as f64 / 1e6,
                f,
                count(set.records),
                now.join("; "),
                met.join("; ")
            ));
        }
    }
    if let Some(set) = sets.iter().find(|d| d.key == "corpus")
        && let Some(r) = row(set, "fsck", Who::Tool)
        && let Some(st) = r.cell(2)
    {
        let v = r.bytes as f64 / 1e6 / st.secs;
        lines.push(format!(
            "| fsck, {:.0} MB corpus, 2 threads | {} MB/s | — | ≥ 2.5 GB/s | {} |",
            set.bytes as f64 / 1e6,
            thousands(v),
            check(Some((v >= 2500.0, format!("{} MB/s", thousands(v)))))
        ));
    }
    if lines.is_empty() {
        s.push_str("| (nothing measured that a goal names) | | | | |\n");
    }
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s
}

fn who(w: Who) -> &'static str {
    match w {
        Who::Tool => "sessiontool",
        Who::Peer => "casr",
        Who::Reference => "reference",
    }
}

/// One table over every data set: a line per job, sessiontool beside casr, and the ceiling
/// and jq of each input as lines of their own.
fn summary_table(sets: &[DataSet]) -> String {
    let mut s = String::from("| input | job | sessiontool | casr |\n|---|---|---|---|\n");
    for set in sets {
        let input = set
            .title
            .split(" (`")
            .next()
            .unwrap_or(&set.title)
            .to_string();
        let mut names: Vec<&str> = Vec::new();
        for r in &set.rows {
            if !names.contains(&r.name()) {
                names.push(r.name());
            }
        }
        for name in names {
            let find = |w| set.rows.iter().find(|r| r.name() == name && r.who == w);
            let (tool, peer) = match find(Who::Reference) {
                Some(reference) => (Some(reference), None),
                None => (find(Who::Tool), find(Who::Peer)),
            };
            let label = match (name, tool.map(|r| r.who)) {
                ("ceiling", _) => "the ceiling: read + count newlines".to_string(),
                (_, Some(Who::Reference)) => format!("reference: {}", tool.map_or("", |r| &r.what)),
                _ => format!("`{name}`"),
            };
            s.push_str(&format!(
                "| {input} | {label} | {} | {} |\n",
                tool.map_or("—".into(), brief),
                peer.map_or("—".into(), brief)
            ));
        }
    }
    s
}

/// `6.00 s, 16.7 MB/s, 702 MB` (a throughput row), `2.17 s to the first screen`, or its note.
fn brief(r: &Row) -> String {
    let Some((_, st)) = r.widest() else {
        return r.cells.last().map_or("—".into(), |(_, c)| match c {
            Cell::Note(n) => n.clone(),
            Cell::Done(_) => "—".into(),
        });
    };
    match r.kind {
        Kind::FirstScreen => format!("{} to the first screen", secs(st.secs)),
        Kind::Throughput => {
            let mut s = format!(
                "{}, {} MB/s",
                secs(st.secs),
                thousands(r.bytes as f64 / 1e6 / st.secs)
            );
            if let Some(p) = r.peak_bytes() {
                s.push_str(&format!(", {}", size(p)));
            }
            s
        }
    }
}

fn row<'a>(set: &'a DataSet, name: &str, who: Who) -> Option<&'a Row> {
    set.rows.iter().find(|r| r.name() == name && r.who == who)
}

/// `33.1 MB/s on 2 threads (41.2 MB/s of CPU), peak 8.4 GB`.
fn summary(r: &Row) -> String {
    let Some((t, st)) = r.widest() else {
        return r.cells.first().map_or("—".into(), |(_, c)| match c {
            Cell::Note(n) => n.clone(),
            Cell::Done(_) => "—".into(),
        });
    };
    let mb = r.bytes as f64 / 1e6;
    let mut s = format!(
        "{} MB/s on {t} thread{}",
        thousands(mb / st.secs),
        if t == 1 { "" } else { "s" }
    );
    if let Some(c) = st.cpu_secs {
        s.push_str(&format!(" ({} MB/s of CPU)", thousands(mb / c)));
    }
    if let Some(p) = r.peak_bytes() {
        s.push_str(&format!(", peak {}", size(p)));
    }
    s
}

fn check(c: Option<(bool, String)>) -> String {
    match c {
        Some((true, what)) => format!("✓ {what}"),
        Some((false, what)) => format!("✗ {what}"),
        None => "— (not measured)".into(),
    }
}

fn row_json(r: &Row) -> serde_json::Value {
    let cells: Vec<serde_json::Value> = r
        .cells
        .iter()
        .map(|(t, c)| match c {
            Cell::Done(st) => json!({
                "threads": t,
                "median_secs": st.secs,
                "runs_secs": st.runs,
                "mb_per_s": (r.kind == Kind::Throughput).then(|| r.bytes as f64 / 1e6 / st.secs),
                "cpu_secs": st.cpu_secs,
                "runs_cpu_secs": st.cpu_runs,
                "mb_per_cpu_s": st.cpu_secs.map(|c| r.bytes as f64 / 1e6 / c),
                "max_rss_bytes": st.rss_kib.map(|k| k * 1024),
                "exit_code": st.exit,
            }),
            Cell::Note(n) => json!({ "threads": t, "note": n }),
        })
        .collect();
    json!({
        "job": r.id,
        "who": match r.who { Who::Tool => "sessiontool", Who::Peer => "peer", Who::Reference => "reference" },
        "what": r.what,
        "kind": match r.kind { Kind::Throughput => "throughput", Kind::FirstScreen => "first-screen" },
        "bytes": r.bytes,
        "records": r.records,
        "peak_rss_bytes": r.peak_bytes(),
        "output_bytes": r.output_bytes,
        "command": r.command,
        "instructions": r.instructions.as_ref().map(|i| match i {
            Ok(n) => json!(n),
            Err(e) => json!({ "error": e }),
        }),
        "results": cells,
    })
}

// ----------------------------------------------------------------------------------------------
// The machine

pub struct Facts {
    cpu: String,
    cores: usize,
    mem_gib: f64,
    kernel: String,
    load: String,
}

pub fn machine_facts() -> Facts {
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
    let mem_gib = meminfo("MemTotal:").map_or(0.0, |b| b as f64 / (1u64 << 30) as f64);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Facts {
        cpu,
        cores,
        mem_gib,
        kernel,
        load: load_average(),
    }
}

/// The 1-minute load average.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

/// Memory available now (bytes), as the kernel estimates it.
pub fn mem_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

fn meminfo(key: &str) -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = m
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}
