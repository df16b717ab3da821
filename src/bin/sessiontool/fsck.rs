//! `sessiontool fsck`: check session files and folders for every kind of damage; with
//! `--repair`, fix what can be fixed without guessing (backup first, atomic replace).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{ArgGroup, Parser, ValueHint};
use rayon::prelude::*;
use serde::Serialize;
use sessiontool::check::{self, CheckOptions, FileReport, Progress};
use sessiontool::diag::Severity;
use sessiontool::io::walk::{self, Skip, Walked};
use sessiontool::regular_file;
use sessiontool::repair::{self, RepairOptions, Repaired};

use crate::error::CliError;
use crate::escape;
use crate::input::format_arg;
use output::{print_codes, print_file, print_summary};

mod output;

const EXAMPLES: &str = "Examples:
  sessiontool fsck ~/.qwen/projects                 check every session below a folder
  cat chat.jsonl | sessiontool fsck -               check standard input
  sessiontool fsck --repair -n chat.jsonl           show what a repair would change
  sessiontool fsck --repair chat.jsonl              fix it (the original is kept as chat.jsonl.bak-<time>)
  sessiontool fsck --json ~/.gemini/tmp > report.json
  sessiontool fsck --codes                          list every finding code

Exit codes (as fsck(8), added together): 0 clean; 1 errors were corrected; 4 errors are left
uncorrected; 8 operational error (a file could not be read or written, or a path named is not
a regular file: a FIFO, a socket, a device); 16 usage error. In a folder, what is not a
regular file is listed as skipped, with why, and never opened.";

pub const EXIT_CORRECTED: i32 = 1;
pub const EXIT_UNCORRECTED: i32 = 4;
pub const EXIT_OPERATIONAL: i32 = 8;

/// Check session files for damage (torn lines, glued records, broken parent links,
/// unanswered tool calls, truncated documents); repair it with --repair.
#[derive(Parser)]
#[command(
    after_help = EXAMPLES,
    override_usage = "sessiontool fsck [OPTIONS] <PATH>...\n       sessiontool fsck --codes [--json]",
    // The repair's own options are refused without a repair (-n is one that writes nothing).
    group = ArgGroup::new("repairing").args(["repair", "dry_run"]).multiple(true)
)]
pub struct Args {
    /// Session files and folders (folders are searched recursively); `-` checks standard
    /// input.
    #[arg(
        value_name = "PATH",
        required_unless_present = "codes",
        value_hint = ValueHint::AnyPath
    )]
    paths: Vec<PathBuf>,
    /// Fix what can be fixed; the original is backed up first.
    #[arg(long)]
    repair: bool,
    /// With --repair: show what would be changed, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Report tool calls without a result, but do not close them.
    #[arg(long)]
    keep_open_tool_calls: bool,
    /// With --repair: put backups in this folder instead of beside each file.
    #[arg(
        long,
        value_name = "DIR",
        value_hint = ValueHint::DirPath,
        requires = "repairing"
    )]
    backup_dir: Option<PathBuf>,
    /// With --repair: replace files without keeping a backup of the original.
    #[arg(long, conflicts_with = "backup_dir", requires = "repairing")]
    no_backup: bool,
    /// With --repair: repair even a file another process holds open for writing (what it
    /// writes afterwards goes to the backup, and the repair says so).
    #[arg(long, requires = "repairing")]
    force: bool,
    /// Read every file as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_parser = crate::input::readable_formats())]
    from: Option<String>,
    /// Also list clean files and files that are not sessions.
    #[arg(short, long)]
    verbose: bool,
    /// One machine-readable JSON document on standard output.
    #[arg(long)]
    json: bool,
    /// List every finding code with its severity and meaning, and exit.
    #[arg(long, conflicts_with_all = ["paths", "repair", "dry_run"])]
    codes: bool,
}

/// Standard input: a path of `-`.
const STDIN: &str = "-";

/// The result for one file.
#[derive(Serialize)]
pub(crate) struct Checked {
    #[serde(flatten)]
    report: FileReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair: Option<Repaired>,
    /// Why the file could not be checked or repaired.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Folder walks: not a session file (listed, not checked).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skipped: bool,
    /// Folder walks: why an entry was skipped without being read, when it is not a regular
    /// file: `not a regular file (a FIFO)`, `not a regular file (a symbolic link)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Serialize, Default)]
pub(crate) struct Summary {
    files: usize,
    skipped: usize,
    bytes: u64,
    records: u64,
    damaged: usize,
    errors: usize,
    warnings: usize,
    fixable: usize,
    repaired: usize,
    /// Files that could not be checked or repaired (`unreadable` among them).
    failed: usize,
    /// Files that could not be checked at all: unreadable, or plainly not the `--from` format
    /// (counted in `files` and `failed`).
    unreadable: usize,
    /// Of `skipped`: entries that are not regular files (each printed with its reason).
    #[serde(skip)]
    not_regular: usize,
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    exit_code: i32,
    summary: &'a Summary,
    files: &'a [Checked],
}

pub fn run(mut args: Args) -> Result<i32, CliError> {
    if args.codes {
        return print_codes(args.json);
    }
    if args.dry_run && !args.repair {
        args.repair = true;
    }
    let stdin = args.paths.iter().any(|p| p.as_os_str() == STDIN);
    if stdin && args.repair {
        return Err(usage("standard input cannot be repaired in place")
            .hint("save it to a file and repair that (`sessiontool fsck --repair FILE`)"));
    }
    if stdin && args.paths.len() > 1 {
        return Err(usage("`-` (standard input) is checked alone")
            .hint("check the files and standard input in two runs"));
    }
    let format = args.from.as_deref().map(format_arg).transpose()?;
    if stdin {
        return check_stdin(&args, format);
    }
    let files = collect(&args.paths)?;
    // Progress in bytes: one big file moves the bar as smoothly as many small ones.
    let total: u64 = files
        .iter()
        .filter(|f| f.special.is_none())
        .filter_map(|f| std::fs::metadata(&f.path).ok())
        .map(|m| m.len())
        .sum();
    let bar = crate::progress::bytes_bar(total, args.json);
    let ticker = bar.clone();
    let options = CheckOptions {
        keep_open_tool_calls: args.keep_open_tool_calls,
        format: format.map(|f| f.name()),
        progress: Some(Progress(Arc::new(move |n| ticker.inc(n)))),
        ..CheckOptions::default()
    };
    let repair_options = RepairOptions {
        backup_dir: args.backup_dir.clone(),
        no_backup: args.no_backup,
        force: args.force,
        dry_run: args.dry_run,
        stamp: None,
        quiet: None,
    };
    if let Some(dir) = &args.backup_dir {
        sessiontool::io::create_dir_checked(dir).map_err(|e| {
            CliError::output(format!(
                "cannot create backup folder {}: {e}",
                dir.display()
            ))
        })?;
    }
    let results: Vec<Checked> = files
        .par_iter()
        .map(|f| match (&f.unreadable, f.special) {
            (Some(why), _) => Checked {
                report: empty_report(&f.path),
                repair: None,
                error: Some(format!("{}: {why}", f.path.display())),
                skipped: false,
                reason: None,
            },
            (None, Some(kind)) => not_regular(f, kind),
            (None, None) => check_one(
                &f.path,
                f.named,
                &options,
                args.repair.then_some(&repair_options),
            ),
        })
        .collect();
    bar.finish_and_clear();
    Ok(report(&args, &results))
}

/// The report, as JSON or for people; returns the exit code.
fn report(args: &Args, results: &[Checked]) -> i32 {
    let summary = summarize(results);
    let code = exit_code(results);
    if args.json {
        let doc = Document {
            schema: "sessiontool.fsck/1",
            exit_code: code,
            summary: &summary,
            files: results,
        };
        crate::report::print_json(&doc);
    } else {
        for c in results {
            print_file(c, args.verbose);
        }
        print_summary(&summary, args, code);
    }
    code
}

/// `fsck -`: standard input, copied to an unnamed temp file (so it is checked in bounded
/// memory, as a file is) and checked as `<stdin>`.
fn check_stdin(
    args: &Args,
    format: Option<&'static dyn sessiontool::formats::Format>,
) -> Result<i32, CliError> {
    let operational = |e: std::io::Error| {
        CliError::new(EXIT_OPERATIONAL, format!("cannot read standard input: {e}"))
    };
    let mut copy = tempfile::tempfile().map_err(operational)?;
    std::io::copy(&mut std::io::stdin().lock(), &mut copy).map_err(operational)?;
    let options = CheckOptions {
        keep_open_tool_calls: args.keep_open_tool_calls,
        format: format.map(|f| f.name()),
        ..CheckOptions::default()
    };
    let name = "<stdin>";
    let checked = match check::check_open(&copy, name, &options) {
        Ok(report) => Checked {
            report,
            repair: None,
            error: None,
            skipped: false,
            reason: None,
        },
        Err(e) => Checked {
            report: empty_report(Path::new(name)),
            repair: None,
            error: Some(e.to_string()),
            skipped: false,
            reason: None,
        },
    };
    Ok(report(args, &[checked]))
}

fn usage(message: impl Into<String>) -> CliError {
    CliError::new(crate::FSCK_USAGE, message)
}

/// A path to check.
struct ToCheck {
    path: PathBuf,
    /// Named on the command line (not found in a folder).
    named: bool,
    /// What it is when it is not a regular file (`a FIFO`): never opened, so never blocks.
    special: Option<&'static str>,
    /// Why a folder's walk could not read it.
    unreadable: Option<String>,
}

/// The files to check. Backups and sidecars that sessiontool wrote are not sessions to check
/// again; what is not a regular file (a FIFO, a socket, a device, a symbolic link in a
/// folder) is kept, to be reported without being opened.
fn collect(paths: &[PathBuf]) -> Result<Vec<ToCheck>, CliError> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| {
            CliError::new(
                EXIT_OPERATIONAL,
                format!("cannot read {}: {e}", escape::path(p)),
            )
            .hint("check the path")
        })?;
        if meta.is_dir() {
            // Backups and sidecars sessiontool wrote are left out without a word: they are
            // not sessions; what is not a regular file is said, unopened; a folder that cannot
            // be read is a failure of its own, and the walk goes on.
            for walked in walk::walk(p) {
                files.push(match walked {
                    Walked::File(path) => ToCheck {
                        path,
                        named: false,
                        special: None,
                        unreadable: None,
                    },
                    Walked::Skipped { why: Skip::Own, .. } => continue,
                    Walked::Skipped {
                        path,
                        why: Skip::NotRegular(kind),
                    } => ToCheck {
                        path,
                        named: false,
                        special: Some(kind),
                        unreadable: None,
                    },
                    Walked::Unreadable { path, error } => ToCheck {
                        path,
                        named: false,
                        special: None,
                        unreadable: Some(error),
                    },
                });
            }
        } else {
            files.push(ToCheck {
                path: p.clone(),
                named: true,
                special: regular_file::special_kind(meta.file_type()),
                unreadable: None,
            });
        }
    }
    Ok(files)
}

/// What is said of a path that is not a regular file: named on the command line, an error
/// (exit 8); met in a folder, skipped with the reason (printed even without -v).
fn not_regular(f: &ToCheck, kind: &str) -> Checked {
    let what = format!("not a regular file ({kind})");
    let (error, reason) = if f.named {
        (Some(format!("{} is {what}", f.path.display())), None)
    } else {
        (None, Some(what))
    };
    Checked {
        report: empty_report(&f.path),
        repair: None,
        error,
        skipped: !f.named,
        reason,
    }
}

fn check_one(
    path: &Path,
    named: bool,
    options: &CheckOptions,
    repair: Option<&RepairOptions>,
) -> Checked {
    let mut diagnosis = match check::diagnose(path, options) {
        Ok(d) => d,
        Err(e) => {
            return Checked {
                report: empty_report(path),
                repair: None,
                error: Some(e.to_string()),
                skipped: false,
                reason: None,
            };
        }
    };
    let skipped = diagnosis.report.format.is_none() && !named;
    let wants_repair =
        repair.is_some() && diagnosis.format.is_some() && diagnosis.report.fixable() > 0;
    // The report is copied only when the repair needs the diagnosis too (a report of a badly
    // damaged file holds a finding per line).
    let report = if wants_repair {
        diagnosis.report.clone()
    } else {
        std::mem::replace(&mut diagnosis.report, empty_report(path))
    };
    let mut checked = Checked {
        report,
        repair: None,
        error: None,
        skipped,
        reason: None,
    };
    if repair.is_some()
        && let Some(dir) = path.parent()
    {
        // What a crashed or killed earlier repair left beside the file.
        sessiontool::io::clear_stale_temps(dir);
    }
    if let Some(repair_options) = repair
        && diagnosis.format.is_some()
        && diagnosis.report.fixable() > 0
    {
        match repair::repair(path, diagnosis, repair_options) {
            Ok(r) => checked.repair = Some(r),
            Err(e) => checked.error = Some(e.to_string()),
        }
    }
    checked
}

fn empty_report(path: &Path) -> FileReport {
    FileReport {
        file: path.display().to_string(),
        format: None,
        bytes: 0,
        records: 0,
        issues: Vec::new(),
    }
}

fn summarize(results: &[Checked]) -> Summary {
    let mut s = Summary::default();
    for c in results {
        if c.skipped {
            s.skipped += 1;
            s.not_regular += usize::from(c.reason.is_some());
            continue;
        }
        s.files += 1;
        s.bytes += c.report.bytes;
        s.records += c.report.records;
        s.errors += c.report.count(Severity::Error);
        s.warnings += c.report.count(Severity::Warning);
        s.fixable += c.report.fixable();
        if !c.report.is_clean() {
            s.damaged += 1;
        }
        if c.repair.as_ref().is_some_and(|r| r.changed) {
            s.repaired += 1;
        }
        if c.error.is_some() {
            s.failed += 1;
            s.unreadable += usize::from(c.report.format.is_none());
        }
    }
    s
}

/// fsck(8) style: the codes of all files added together (each at most once).
fn exit_code(results: &[Checked]) -> i32 {
    let mut code = 0;
    for c in results.iter().filter(|c| !c.skipped) {
        let io_error = c.error.is_some() && c.report.format.is_none();
        if io_error {
            code |= EXIT_OPERATIONAL;
            continue;
        }
        let errors_left = match &c.repair {
            Some(r) if r.changed => r.left.iter().any(|i| i.severity == Severity::Error),
            _ => c.report.count(Severity::Error) > 0,
        };
        if errors_left || c.error.is_some() {
            code |= EXIT_UNCORRECTED;
        }
        if c.repair.as_ref().is_some_and(|r| r.changed) {
            code |= EXIT_CORRECTED;
        }
    }
    code
}
