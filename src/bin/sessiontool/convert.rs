//! `sessiontool convert`: one session, or every session below a folder, into another format.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clap::Parser;
use rayon::prelude::*;
use serde::Serialize;
use sessiontool::convert::budget::Budget;
use sessiontool::convert::{self as conv, Conversion};
use sessiontool::diag::{Diagnostic, LossReport};
use sessiontool::formats::{self, Format, WriteOptions};
use sessiontool::regular_file;

use crate::error::{CliError, EXIT_OUTPUT, EXIT_PARTIAL};
use crate::escape;
use crate::input::{self, format_arg};
use crate::report;
use crate::store_args::{self, StoreArgs};

const EXAMPLES: &str = "Examples:
  sessiontool convert session-2025-10-21T20-04-0b23371a.json -o 0b23371a.jsonl
  sessiontool convert chat.jsonl --to gemini-json --leaf 6f1c... -o chat.json
  sessiontool convert session.json --to checkpoint -o checkpoint-mytag.json
  cat session.json | sessiontool convert - --to qwen-jsonl -o -
  sessiontool convert ~/.gemini/tmp/<project>/chats -o converted/ --to qwen-jsonl
  sessiontool convert old.json --to qwen-jsonl --store --project ~/src/app
  sessiontool convert old.json --to checkpoint --store --tag before-refactor";

/// Convert a session to another format (formats from content, names, or --from/--to).
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file, a folder of sessions, or `-` for standard input.
    input: PathBuf,
    /// Where to write: a file, `-` for standard output, or a folder when INPUT is a folder.
    #[arg(
        short,
        long,
        required_unless_present = "store",
        conflicts_with = "store"
    )]
    output: Option<PathBuf>,
    /// Write into the store of the --to format's tool, for --project (default: the current
    /// folder): the right folder and file name, the tool's registries updated, and the
    /// session recorded under the project (its cwd and projectHash).
    #[arg(long, requires = "to")]
    store: bool,
    /// With --store: the project the session is placed under.
    #[arg(long, value_name = "DIR", requires = "store")]
    project: Option<PathBuf>,
    /// With --store --to checkpoint: the tag (`/chat resume TAG`).
    #[arg(long, value_name = "TAG", requires = "store")]
    tag: Option<String>,
    #[command(flatten)]
    store_args: StoreArgs,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT")]
    from: Option<String>,
    /// The output format (default: from the output name: .jsonl -> qwen-jsonl,
    /// checkpoint-*.json -> checkpoint, other .json -> gemini-json).
    #[arg(long, value_name = "FORMAT")]
    to: Option<String>,
    /// Replace an output that exists.
    #[arg(long)]
    force: bool,
    /// For one-branch targets: follow the branch ending at this node (default: the head).
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// The project folder to record when the input does not say (Qwen keys sessions by it).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Checkpoint: write the bare array older Gemini CLIs (before v0.16) read.
    #[arg(long)]
    checkpoint_array: bool,
    /// Checkpoint: do not add the context turn the CLI hides on resume.
    #[arg(long)]
    no_context: bool,
    /// Keep the session within about N tokens for the target's model: the first prompt and
    /// the newest turns that fit, never a tool call without its result; what is left out is
    /// in the loss report. An estimate (4 bytes of text a token, 1,600 an image). Off by
    /// default: nothing is cut unless asked.
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Print a machine-readable report on standard output (on standard error when the
    /// converted session itself goes to standard output).
    #[arg(long)]
    json: bool,
}

/// The `schema` of every `convert --json` document; `mode` tells its three shapes apart.
const SCHEMA: &str = "sessiontool.convert/1";

#[derive(Serialize)]
struct FileReport {
    input: String,
    output: String,
    /// `None` when the file could not be read as a session (failed or skipped).
    from: Option<&'static str>,
    to: &'static str,
    diagnostics: Vec<Diagnostic>,
    losses: LossReport,
    /// An output replaced with --force: where the file it replaced was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    replaced: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Not a session file in any known format (listed, not converted).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skipped: bool,
    /// Why a skipped entry was not even read: `not a regular file (a FIFO)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// --max-tokens: what fitting the session into it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<Budget>,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let from = args.from.as_deref().map(format_arg).transpose()?;
    let to = args.to.as_deref().map(format_arg).transpose()?;
    let options = WriteOptions {
        leaf: args.leaf.clone(),
        checkpoint_array: args.checkpoint_array,
        checkpoint_no_context: args.no_context,
        now: Some(now()),
        cwd: args.cwd.clone(),
        max_tokens: args.max_tokens,
        close_open_calls: false,
    };
    if args.store {
        let to = to.expect("clap requires --to with --store");
        return run_store(&args, from, to, &options);
    }
    let output = args
        .output
        .clone()
        .expect("clap requires -o without --store");
    if args.input.is_dir() {
        return run_dir(&args, &output, from, to, &options);
    }
    let to = match to {
        Some(t) => t,
        None => formats::guess_from_name(&output).ok_or_else(|| {
            CliError {
                code: 2,
                message: format!(
                    "cannot tell the output format from {:?}",
                    output.display().to_string()
                ),
                location: None,
                hint: None,
            }
            .hint("name it with --to (see `sessiontool formats`)")
        })?,
    };
    let loaded = input::load(&args.input)?;
    let conversion = conv::convert(&loaded.input(), from, to, &options)?;
    let to_stdout = output == Path::new("-");
    let replaced = if to_stdout {
        None
    } else {
        write_output(&output, &conversion.bytes, args.force)?
    };
    let file_report = FileReport {
        input: loaded.name.clone(),
        output: output.display().to_string(),
        from: Some(conversion.from),
        to: conversion.to,
        diagnostics: conversion.diagnostics.clone(),
        losses: conversion.losses.clone(),
        replaced: replaced.map(|p| p.display().to_string()),
        error: None,
        skipped: false,
        reason: None,
        budget: conversion.budget.clone(),
    };
    if args.json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            mode: &'static str,
            #[serde(flatten)]
            report: &'a FileReport,
        }
        let doc = Doc {
            schema: SCHEMA,
            mode: "file",
            report: &file_report,
        };
        if to_stdout {
            report::eprint_json(&doc);
        } else {
            report::print_json(&doc);
        }
    } else {
        print_human(&file_report, &conversion);
    }
    if to_stdout {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(&conversion.bytes)
            .and_then(|_| out.flush())
            .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
    }
    Ok(0)
}

fn print_human(r: &FileReport, c: &Conversion) {
    report::print_diagnostics(&c.diagnostics);
    report::print_losses(r.to, &c.losses);
    if let Some(b) = &c.budget {
        report::print_budget(b);
    }
    if r.output != "-" {
        eprintln!(
            "wrote {} ({}) from {} ({})",
            escape::line(&r.output),
            r.to,
            escape::line(&r.input),
            r.from.unwrap_or("?")
        );
        if let Some(kept) = &r.replaced {
            eprintln!("the file it replaced is kept as {kept}");
        }
    }
}

/// Writes an output; returns where a file it replaced (--force) was kept.
fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<Option<PathBuf>, CliError> {
    sessiontool::io::write_output(path, bytes, force).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::output(format!("{} exists; nothing was written", path.display()))
                .hint("pass --force to replace it")
        } else {
            CliError::output(format!("cannot write {}: {e}", path.display()))
        }
    })
}

/// Converts every session file below a folder, in parallel, into the output folder, keeping
/// the relative layout. Files no format recognises are listed, not skipped silently.
fn run_dir(
    args: &Args,
    output: &Path,
    from: Option<&'static dyn Format>,
    to: Option<&'static dyn Format>,
    options: &WriteOptions,
) -> Result<i32, CliError> {
    let to = to.ok_or_else(|| {
        CliError {
            code: 2,
            message: "converting a folder needs --to".into(),
            location: None,
            hint: None,
        }
        .hint("for example: --to qwen-jsonl (see `sessiontool formats`)")
    })?;
    if output == Path::new("-") {
        return Err(
            CliError::output("a folder cannot be written to standard output")
                .hint("name an output folder with -o"),
        );
    }
    // Entries that are not regular files (a FIFO, a socket, a link) are listed as skipped,
    // never opened.
    let files: Vec<(PathBuf, Option<&'static str>)> = walkdir::WalkDir::new(&args.input)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            let special = regular_file::special_kind(e.file_type());
            (e.into_path(), special)
        })
        .collect();
    std::fs::create_dir_all(output)
        .map_err(|e| CliError::output(format!("cannot create {}: {e}", output.display())))?;
    let bar = crate::progress::bar(files.len() as u64, "files", false);
    let reports = Mutex::new(Vec::new());
    files.par_iter().for_each(|(file, special)| {
        let r = match special {
            Some(kind) => FileReport {
                input: file.display().to_string(),
                output: String::new(),
                from: None,
                to: to.name(),
                diagnostics: Vec::new(),
                losses: LossReport::default(),
                replaced: None,
                error: None,
                skipped: true,
                reason: Some(format!("not a regular file ({kind})")),
                budget: None,
            },
            None => convert_one(file, &args.input, output, args.force, from, to, options),
        };
        bar.inc(1);
        reports.lock().expect("no panics while locked").push(r);
    });
    bar.finish_and_clear();
    let mut reports = reports.into_inner().expect("no panics while locked");
    reports.sort_by(|a, b| a.input.cmp(&b.input));
    let failed = reports.iter().filter(|r| r.error.is_some()).count();
    let skipped = reports.iter().filter(|r| r.skipped).count();
    if args.json {
        let doc = serde_json::json!({
            "schema": SCHEMA,
            "mode": "folder",
            "files": reports,
            "converted": reports.len() - failed - skipped,
            "failed": failed,
            "skipped": skipped,
        });
        report::print_json(&doc);
    } else {
        for r in &reports {
            let input = escape::line(&r.input);
            match &r.error {
                Some(e) => eprintln!("{input}: not converted: {}", escape::line(e)),
                None if r.skipped => eprintln!(
                    "{input}: skipped: {}",
                    r.reason.as_deref().unwrap_or("not a session file")
                ),
                None => {
                    report::print_diagnostics(&r.diagnostics);
                    if !r.losses.is_empty() {
                        eprint!("{input}: ");
                        report::print_losses(r.to, &r.losses);
                    }
                }
            }
        }
        eprintln!(
            "converted {} of {} files into {} ({}); {} failed, {} skipped",
            reports.len() - failed - skipped,
            reports.len(),
            escape::path(output),
            to.name(),
            failed,
            skipped
        );
    }
    Ok(if failed > 0 { EXIT_PARTIAL } else { 0 })
}

fn convert_one(
    file: &Path,
    input_dir: &Path,
    output: &Path,
    force: bool,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
) -> FileReport {
    let rel = file.strip_prefix(input_dir).unwrap_or(file);
    let out = output.join(output_name(rel, to));
    let mut report = FileReport {
        input: file.display().to_string(),
        output: out.display().to_string(),
        from: None,
        to: to.name(),
        diagnostics: Vec::new(),
        losses: LossReport::default(),
        replaced: None,
        error: None,
        skipped: false,
        reason: None,
        budget: None,
    };
    let result = input::load(file).and_then(|loaded| {
        if from.is_none() && formats::detect(loaded.path.as_deref(), &loaded.bytes).is_none() {
            return Err(CliError::input(SKIPPED));
        }
        let c = conv::convert(&loaded.input(), from, to, options)?;
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError {
                code: EXIT_OUTPUT,
                message: format!("cannot create {}: {e}", parent.display()),
                location: None,
                hint: None,
            })?;
        }
        let mut c = c;
        c.replaced = write_output(&out, &c.bytes, force)?;
        Ok(c)
    });
    match result {
        Ok(c) => {
            report.replaced = c.replaced.map(|p| p.display().to_string());
            report.from = Some(c.from);
            report.diagnostics = c.diagnostics;
            report.losses = c.losses;
            report.budget = c.budget;
        }
        Err(e) if e.message == SKIPPED => report.skipped = true,
        Err(e) => {
            let mut msg = e.message.clone();
            if let Some(at) = &e.location {
                msg = format!("{msg} (at {at})");
            }
            if let Some(h) = &e.hint {
                msg = format!("{msg}; {h}");
            }
            report.error = Some(msg);
        }
    }
    report
}

const SKIPPED: &str = "not a session file";

/// `--store`: converts one session into a tool's store and says where it went.
fn run_store(
    args: &Args,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
) -> Result<i32, CliError> {
    use sessiontool::store::place::{self, PlaceFailure, Request};
    let home = args.store_args.home()?;
    let project = store_args::project(args.project.as_deref())?;
    let loaded = input::load(&args.input)?;
    let request = Request {
        from,
        to,
        project: &project,
        tag: args.tag.as_deref(),
        options,
        force: args.force,
        dry_run: false,
    };
    let placed = place::place(&home, &loaded.input(), &request).map_err(|e| match e {
        PlaceFailure::Convert(c) => CliError::from(c),
        PlaceFailure::Exists(p) => {
            CliError::output(format!("{} exists; nothing was written", p.display()))
                .hint("pass --force to replace it")
        }
        other => CliError::output(other.to_string()),
    })?;
    let c = &placed.conversion;
    if args.json {
        let doc = serde_json::json!({
            "schema": SCHEMA,
            "mode": "store",
            "input": loaded.name,
            "output": placed.path.to_string_lossy(),
            "tool": placed.tool,
            "project": project,
            "from": c.from,
            "to": c.to,
            "registered": placed.registered,
            "diagnostics": c.diagnostics,
            "losses": c.losses,
        });
        let mut doc = doc;
        if let Some(kept) = &c.replaced {
            doc["replaced"] = kept.to_string_lossy().into();
        }
        if let Some(b) = &c.budget {
            doc["budget"] = serde_json::to_value(b).expect("a budget serializes");
        }
        report::print_json(&doc);
    } else {
        report::print_diagnostics(&c.diagnostics);
        report::print_losses(c.to, &c.losses);
        if let Some(b) = &c.budget {
            report::print_budget(b);
        }
        for r in &placed.registered {
            eprintln!("registered: {}", escape::line(r));
        }
        eprintln!(
            "wrote {} ({}) into {}'s store for {}",
            escape::path(&placed.path),
            c.to,
            placed.tool,
            escape::line(&project)
        );
        if let Some(kept) = &c.replaced {
            eprintln!("the session it replaced is kept as {}", kept.display());
        }
    }
    Ok(0)
}

/// The output file name for a converted file: its stem with the target's usual name.
fn output_name(rel: &Path, to: &dyn Format) -> PathBuf {
    let stem = rel
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    rel.with_file_name(to.file_name(&stem))
}

/// The current time as the tools write it (UTC, milliseconds, `Z`).
fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
