//! `sessiontool convert`: one session, or every session below a folder, into another format.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anstream::eprintln;
use clap::{Parser, ValueHint};
use rayon::prelude::*;
use serde::Serialize;
use sessiontool::convert::budget::Budget;
use sessiontool::convert::{self as conv, Conversion};
use sessiontool::diag::{Diagnostic, LossReport};
use sessiontool::formats::{self, Format, WriteOptions};
use sessiontool::io::walk::{self, Walked};

use crate::error::{CliError, EXIT_PARTIAL};
use crate::escape;
use crate::input::{self, format_arg};
use crate::report;
use crate::store_args::{self, StoreArgs};
use crate::style::{self, ERROR, NOTE};

const EXAMPLES: &str = "Examples:
  sessiontool convert session-2025-10-21T20-04-0b23371a.json -o 0b23371a.jsonl
  sessiontool convert chat.jsonl --to gemini-json --leaf 6f1c0a2b -o chat.json
  sessiontool convert session.json --to checkpoint -o checkpoint-mytag.json
  cat session.json | sessiontool convert - --to qwen-jsonl -o -
  sessiontool convert ~/.gemini/tmp/<project>/chats -o converted/ --to qwen-jsonl
  sessiontool convert old.json --to qwen-jsonl --store --project ~/src/app -n
  sessiontool convert old.json --to checkpoint --store --tag before-refactor";

/// Convert a session to another format (formats from content, names, or --from/--to).
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file, a folder of sessions, `-` for standard input, or a session in a
    /// database as `PATH#SESSION_ID` (OpenCode: `~/.local/share/opencode/opencode.db#ses_...`).
    #[arg(value_hint = ValueHint::AnyPath)]
    input: PathBuf,
    /// Where to write: a file, `-` for standard output, or a folder when INPUT is a folder.
    #[arg(
        short,
        long,
        required_unless_present = "store",
        conflicts_with = "store",
        value_hint = ValueHint::AnyPath
    )]
    output: Option<PathBuf>,
    /// Write into the store of the --to format's tool, for --project (default: the current
    /// folder): the right folder and file name, the tool's registries updated, and the
    /// session recorded under the project (its cwd and projectHash).
    #[arg(long, requires = "to")]
    store: bool,
    /// With --store: the project the session is placed under.
    #[arg(long, value_name = "DIR", requires = "store", value_hint = ValueHint::DirPath)]
    project: Option<PathBuf>,
    /// With --store --to checkpoint: the tag (`/chat resume TAG`).
    #[arg(long, value_name = "TAG", requires = "store")]
    tag: Option<String>,
    #[command(flatten)]
    store_args: StoreArgs,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT", value_parser = input::readable_formats())]
    from: Option<String>,
    /// The output format (default: from the output name: .jsonl -> qwen-jsonl,
    /// checkpoint-*.json -> checkpoint, other .json -> gemini-json, .md -> markdown).
    #[arg(long, value_name = "FORMAT", value_parser = input::all_formats())]
    to: Option<String>,
    /// Replace an output that exists (it is kept as <output>.bak-<time>).
    #[arg(long)]
    force: bool,
    /// Convert and report, but write nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// For one-branch targets: follow the branch ending at this node, given by its id or the
    /// start of it, as `sessiontool tree` prints it (default: the head).
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// The project folder to record when the input does not say (Qwen keys sessions by it);
    /// a relative path is made absolute.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    cwd: Option<PathBuf>,
    /// With --to checkpoint: write the bare array older Gemini CLIs (before v0.16) read.
    #[arg(long)]
    checkpoint_array: bool,
    /// With --to checkpoint: do not add the context turn the CLI hides on resume.
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
    /// A dry run that would replace an existing output (--force).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    would_replace: bool,
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

impl FileReport {
    fn new(input: String, output: String, to: &'static str) -> Self {
        FileReport {
            input,
            output,
            from: None,
            to,
            diagnostics: Vec::new(),
            losses: LossReport::default(),
            replaced: None,
            would_replace: false,
            error: None,
            skipped: false,
            reason: None,
            budget: None,
        }
    }
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let from = args.from.as_deref().map(format_arg).transpose()?;
    let to = args.to.as_deref().map(format_arg).transpose()?;
    let cwd = match &args.cwd {
        Some(dir) => Some(store_args::project(Some(dir))?),
        None => None,
    };
    let options = WriteOptions {
        leaf: args.leaf.clone(),
        checkpoint_array: args.checkpoint_array,
        checkpoint_no_context: args.no_context,
        now: Some(sessiontool::convert::now()),
        cwd,
        max_tokens: args.max_tokens,
        close_open_calls: false,
    };
    if args.store {
        let to = to.expect("clap requires --to with --store");
        if !to.resumable() {
            return Err(CliError::usage(format!(
                "--store: {} is an export, which no tool keeps in a store",
                to.name()
            ))
            .hint("write it to a file with -o"));
        }
        checkpoint_flags(&args, to)?;
        return run_store(&args, from, to, &options);
    }
    let output = args
        .output
        .clone()
        .expect("clap requires -o without --store");
    if args.input.is_dir() {
        return run_dir(&args, &output, from, to, &options);
    }
    let to_stdout = output == Path::new("-");
    // An output that cannot be written (a folder, in a folder that is not there, a file
    // without --force) is said before anything else about it and before converting.
    let replaces = if to_stdout {
        false
    } else {
        sessiontool::io::check_output(&output, args.force).map_err(|e| output_error(&output, e))?
    };
    let to = match to {
        Some(t) => t,
        None => formats::guess_from_name(&output).ok_or_else(|| {
            CliError::usage(format!(
                "cannot tell the output format from {:?}",
                output.display().to_string()
            ))
            .hint("name it with --to (see `sessiontool formats`)")
        })?,
    };
    checkpoint_flags(&args, to)?;
    // A session in a database is read by its database format, not streamed from a file.
    let database = sessiontool::formats::database::Address::parse(&args.input).is_some();
    let streamed = if to_stdout || args.input == Path::new("-") || database {
        None
    } else {
        convert_streamed(&args, &output, from, to, &options)?
    };
    let (name, conversion, replaced) = match streamed {
        Some(done) => done,
        None => {
            let loaded = input::load(&args.input)?;
            let conversion = input::convert(&loaded, from, to, &options)?;
            let replaced = if to_stdout || args.dry_run {
                None
            } else {
                write_output(&output, &conversion.bytes, args.force)?
            };
            (loaded.name, conversion, replaced)
        }
    };
    let mut file_report = FileReport::new(name, output.display().to_string(), conversion.to);
    file_report.from = Some(conversion.from);
    file_report.diagnostics = conversion.diagnostics.clone();
    file_report.losses = conversion.losses.clone();
    file_report.replaced = replaced.map(|p| p.display().to_string());
    file_report.would_replace = args.dry_run && replaces;
    file_report.budget = conversion.budget.clone();
    if args.json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            mode: &'static str,
            dry_run: bool,
            #[serde(flatten)]
            report: &'a FileReport,
        }
        let doc = Doc {
            schema: SCHEMA,
            mode: "file",
            dry_run: args.dry_run,
            report: &file_report,
        };
        if to_stdout {
            report::eprint_json(&doc);
        } else {
            report::print_json(&doc);
        }
    } else {
        print_human(&file_report, &conversion, args.dry_run);
    }
    if to_stdout && !args.dry_run {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(&conversion.bytes)
            .and_then(|_| out.flush())
            .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
    }
    Ok(0)
}

/// A file converted into a file by the two-pass engine, when it covers the conversion
/// (`sessiontool::engine::covers`): the input read in place with positioned reads and the
/// output written as it is made, so memory stays bounded by the number of records. `None`:
/// the engine does not take it (the whole-session path converts it, with the same result).
/// Standard input and output go through the whole-session path (the report comes before
/// the bytes on standard output).
fn convert_streamed(
    args: &Args,
    output: &Path,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
) -> Result<Option<(String, Conversion, Option<PathBuf>)>, CliError> {
    use sessiontool::engine::{self, FileOutput, FileSource, Job, PlanError};
    let name = args.input.display().to_string();
    let read_error = |e: std::io::Error| {
        CliError::input(format!("cannot read {}: {e}", escape::path(&args.input)))
    };
    let source = FileSource::new(input::open(&args.input)?).map_err(read_error)?;
    let job = Job {
        name: &name,
        path: Some(&args.input),
        source: &source,
        from,
        to,
        options,
        tuning: Default::default(),
    };
    let plan = match engine::plan(job, &mut |_| {}) {
        Ok(Some(plan)) => plan,
        Ok(None) => return Ok(None),
        Err(PlanError::Convert(e)) => return Err(e.into()),
        Err(PlanError::Input(e)) => return Err(read_error(e)),
    };
    if args.dry_run {
        let conversion = plan.write(&mut engine::Discard).map_err(read_error)?;
        return Ok(Some((name, conversion, None)));
    }
    // An input error and an output error both come back as I/O errors from `write`: which
    // one it was is told apart by where it came from (the output's own errors are kept).
    let mut input_failed = None;
    let written = sessiontool::io::write_output_with(output, args.force, |file| {
        let mut out = FileOutput::new(file);
        let conversion = plan.write(&mut out).inspect_err(|e| {
            if !out.failed() {
                input_failed = Some(e.to_string());
            }
        })?;
        out.finish()?;
        Ok(conversion)
    });
    match written {
        Ok((conversion, replaced)) => Ok(Some((name, conversion, replaced))),
        Err(e) => match input_failed {
            Some(message) => Err(CliError::input(format!(
                "cannot read {}: {message}",
                escape::path(&args.input)
            ))),
            None => Err(output_error(output, e)),
        },
    }
}

/// `--checkpoint-array`, `--no-context` and `--tag` are for a checkpoint only: with another
/// target they would be silently ignored. (Checked here, not by clap: the target may be
/// guessed from the output's name.)
fn checkpoint_flags(args: &Args, to: &dyn Format) -> Result<(), CliError> {
    let given: Vec<&str> = [
        (args.checkpoint_array, "--checkpoint-array"),
        (args.no_context, "--no-context"),
        (args.tag.is_some(), "--tag"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    if given.is_empty() || to.name() == "checkpoint" {
        return Ok(());
    }
    let (flags, verb, them) = match given.as_slice() {
        [one] => (one.to_string(), "is", "it"),
        many => (many.join(" and "), "are", "them"),
    };
    Err(CliError::usage(format!(
        "{flags} {verb} for a checkpoint only, and the output is {}",
        to.name()
    ))
    .hint(format!("leave {them} out, or pass --to checkpoint")))
}

fn print_human(r: &FileReport, c: &Conversion, dry_run: bool) {
    report::print_diagnostics(&c.diagnostics);
    report::print_losses(None, r.to, &c.losses);
    if let Some(b) = &c.budget {
        report::print_budget(b);
    }
    if style::quiet() {
        return;
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    if r.output != "-" || dry_run {
        eprintln!(
            "{verb} {} ({}) from {} ({})",
            escape::line(&r.output),
            r.to,
            escape::line(&r.input),
            r.from.unwrap_or("?")
        );
    }
    if let Some(kept) = &r.replaced {
        eprintln!("the file it replaced is kept as {}", escape::line(kept));
    }
    if r.would_replace {
        eprintln!(
            "it would replace {}, keeping that file as {}.bak-<time>",
            escape::line(&r.output),
            escape::line(&r.output)
        );
    }
    if dry_run {
        eprintln!("{}", style::paint(NOTE, "dry run: nothing was written"));
    }
}

/// Why an output cannot be written, in the words of the option that changes it.
fn output_error(path: &Path, e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        CliError::output(format!(
            "{} exists; nothing was written",
            escape::path(path)
        ))
        .hint("pass --force to replace it (it is kept as <name>.bak-<time>)")
    } else if e.kind() == std::io::ErrorKind::IsADirectory {
        // The message names the output and says what to do (printing escapes it).
        CliError::output(e.to_string())
    } else {
        CliError::output(format!("cannot write {}: {e}", escape::path(path)))
    }
}

/// Writes an output; returns where a file it replaced (--force) was kept.
fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<Option<PathBuf>, CliError> {
    sessiontool::io::write_output(path, bytes, force).map_err(|e| output_error(path, e))
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
        CliError::usage("converting a folder needs --to")
            .hint("for example: --to qwen-jsonl (see `sessiontool formats`)")
    })?;
    checkpoint_flags(args, to)?;
    if output == Path::new("-") {
        return Err(
            CliError::output("a folder cannot be written to standard output")
                .hint("name an output folder with -o"),
        );
    }
    let entries = entries_below(&args.input, to);
    if !args.dry_run {
        std::fs::create_dir_all(output).map_err(|e| {
            CliError::output(format!("cannot create {}: {e}", escape::path(output)))
        })?;
    }
    let bar = crate::progress::bar(entries.len() as u64, "files", false);
    let reports = Mutex::new(Vec::new());
    entries.into_par_iter().for_each(|entry| {
        let r = match entry {
            Entry::Done(r) => *r,
            Entry::File(file) => convert_one(&file, args, output, from, to, options),
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
            "dry_run": args.dry_run,
            "files": reports,
            "converted": reports.len() - failed - skipped,
            "failed": failed,
            "skipped": skipped,
        });
        report::print_json(&doc);
    } else {
        print_folder(&reports, output, to, args.dry_run);
    }
    Ok(if failed > 0 { EXIT_PARTIAL } else { 0 })
}

/// What a folder's walk found: a file to convert, or an entry already decided (skipped, or
/// failed because it could not be read).
enum Entry {
    File(PathBuf),
    Done(Box<FileReport>),
}

/// Every entry below `dir` but folders ([`walk::walk`]): what it leaves out is listed as
/// skipped with the reason, never opened; what cannot be read is a failure, not silence.
fn entries_below(dir: &Path, to: &'static dyn Format) -> Vec<Entry> {
    let report =
        |path: &Path| FileReport::new(path.display().to_string(), String::new(), to.name());
    walk::walk(dir)
        .map(|walked| match walked {
            Walked::File(path) => Entry::File(path),
            Walked::Skipped { path, why } => {
                let mut r = report(&path);
                r.skipped = true;
                r.reason = Some(why.reason());
                Entry::Done(Box::new(r))
            }
            Walked::Unreadable { path, error } => {
                let mut r = report(&path);
                r.error = Some(error);
                Entry::Done(Box::new(r))
            }
        })
        .collect()
}

fn print_folder(reports: &[FileReport], output: &Path, to: &dyn Format, dry_run: bool) {
    let quiet = style::quiet();
    for r in reports {
        let input = escape::line(&r.input);
        match &r.error {
            Some(e) => eprintln!(
                "{input}: {} {}",
                style::paint(ERROR, "not converted:"),
                escape::line(e)
            ),
            None if r.skipped => {
                if !quiet {
                    eprintln!(
                        "{input}: skipped: {}",
                        r.reason.as_deref().unwrap_or("not a session file")
                    );
                }
            }
            None => {
                report::print_diagnostics(&r.diagnostics);
                report::print_losses(Some(&r.input), r.to, &r.losses);
            }
        }
    }
    if quiet {
        return;
    }
    let failed = reports.iter().filter(|r| r.error.is_some()).count();
    let skipped = reports.iter().filter(|r| r.skipped).count();
    eprintln!(
        "{} {} of {} files into {} ({}); {} failed, {} skipped",
        if dry_run {
            "would convert"
        } else {
            "converted"
        },
        reports.len() - failed - skipped,
        reports.len(),
        escape::path(output),
        to.name(),
        failed,
        skipped
    );
    if dry_run {
        eprintln!("{}", style::paint(NOTE, "dry run: nothing was written"));
    }
}

fn convert_one(
    file: &Path,
    args: &Args,
    output: &Path,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
) -> FileReport {
    let rel = file.strip_prefix(&args.input).unwrap_or(file);
    let out = output.join(output_name(rel, to));
    let mut report = FileReport::new(
        file.display().to_string(),
        out.display().to_string(),
        to.name(),
    );
    let result = input::load(file).and_then(|loaded| {
        if from.is_none() && formats::detect(loaded.path.as_deref(), &loaded.bytes).is_none() {
            return Err(CliError::input(SKIPPED));
        }
        let mut c = conv::convert(&loaded.input(), from, to, options)?;
        if args.dry_run {
            // The output folders are not made on a dry run: a file can exist only in one that is.
            if out.parent().is_some_and(Path::is_dir) {
                report.would_replace = sessiontool::io::check_output(&out, args.force)
                    .map_err(|e| output_error(&out, e))?;
            }
            return Ok(c);
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CliError::output(format!("cannot create {}: {e}", escape::path(parent)))
            })?;
        }
        c.replaced = write_output(&out, &c.bytes, args.force)?;
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
    let home = args.store_args.home_to_fill()?;
    let project = store_args::project(args.project.as_deref())?;
    let loaded = input::load(&args.input)?;
    let request = Request {
        from,
        to,
        project: &project,
        tag: args.tag.as_deref(),
        options,
        force: args.force,
        dry_run: args.dry_run,
    };
    let exists = |p: &Path| {
        CliError::output(format!("{} exists; nothing was written", escape::path(p)))
            .hint("pass --force to replace it (it is kept as <name>.bak-<time>)")
    };
    if loaded.database.is_some() && from.is_some() {
        return Err(CliError::usage(format!(
            "{} is a session of a database, whose format is known: --from does not apply",
            escape::line(&loaded.name)
        ))
        .hint("leave out --from"));
    }
    let placed = match &loaded.database {
        Some((address, format)) => place::place_database(&home, address, *format, &request),
        None => place::place(&home, &loaded.input(), &request),
    };
    let placed = placed.map_err(|e| match e {
        PlaceFailure::Convert(c) => CliError::from(c),
        PlaceFailure::Exists(p) => exists(&p),
        other => CliError::output(other.to_string()),
    })?;
    // A dry run writes nothing, so it says here what the write would refuse.
    let would_replace = args.dry_run && std::fs::symlink_metadata(&placed.path).is_ok();
    if would_replace && !args.force {
        return Err(exists(&placed.path));
    }
    let c = &placed.conversion;
    if args.json {
        let mut doc = serde_json::json!({
            "schema": SCHEMA,
            "mode": "store",
            "dry_run": args.dry_run,
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
        if let Some(kept) = &c.replaced {
            doc["replaced"] = kept.to_string_lossy().into();
        }
        if let Some(b) = &c.budget {
            doc["budget"] = serde_json::to_value(b).expect("a budget serializes");
        }
        if would_replace {
            doc["would_replace"] = true.into();
        }
        report::print_json(&doc);
    } else {
        report::print_diagnostics(&c.diagnostics);
        report::print_losses(None, c.to, &c.losses);
        if let Some(b) = &c.budget {
            report::print_budget(b);
        }
        if style::quiet() {
            return Ok(0);
        }
        let would = if args.dry_run { "would be " } else { "" };
        for r in &placed.registered {
            eprintln!("{would}registered: {}", escape::line(r));
        }
        eprintln!(
            "{} {} ({}) into {}'s store for {}",
            if args.dry_run { "would write" } else { "wrote" },
            escape::path(&placed.path),
            c.to,
            placed.tool,
            escape::line(&project)
        );
        if let Some(kept) = &c.replaced {
            eprintln!("the session it replaced is kept as {}", escape::path(kept));
        }
        if would_replace {
            eprintln!("it would replace that file, keeping it as <name>.bak-<time>");
        }
        if args.dry_run {
            eprintln!("{}", style::paint(NOTE, "dry run: nothing was written"));
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
