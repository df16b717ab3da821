//! `sessiontool switch SESSION --to TOOL`: continue a stored session in another tool.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use serde::Serialize;
use sessiontool::store::find::{self, FindError, Lookup};
use sessiontool::store::place::PlaceFailure;
use sessiontool::store::resume::Resume;
use sessiontool::store::switch::{self, Request, SwitchError, Switched};

use crate::error::{CliError, EXIT_INPUT, EXIT_OUTPUT};
use crate::escape;
use crate::report;
use crate::store_args::{self, StoreArgs};

const EXAMPLES: &str = "Examples:
  sessiontool switch 0b23 --to codex            continue Claude Code session 0b23... in Codex
  sessiontool switch 0b23 --to codex --exec     ... and start Codex on it
  sessiontool switch ~/.gemini/tmp/app/chats/session-2026-01-02T10-00-7c1e0a52.jsonl --to claude
  sessiontool switch 0b23 --to gemini --max-tokens 200000 -n

SESSION is found in every tool's store, as `sessiontool list --all` shows them. The session is
converted into TOOL's format, written where TOOL finds the sessions of the project it records
(or --project), and registered as TOOL registers its own (Gemini CLI's projects.json, Codex's
state database); the last line is the command that resumes it (on standard output). A damaged
session is repaired on a private copy first; the original is never written. Tool calls left
without a result are closed with an error result when TOOL does not do that itself. What TOOL's
format cannot hold is listed.

--max-tokens N keeps the first prompt and the newest turns that fit in about N tokens, never
a tool call without its result, and lists what it left out. The count is an estimate: 4 bytes
of text (tool arguments and results as JSON) a token, 1,600 an image, 4 a message; leave a
margin below the model's window.

Exit codes: 0 switched; 2 usage error (unknown tool, several sessions match, already that
tool's session, no project known); 3 the session cannot be found or read; 4 nothing was
written (a file of that name exists without --force, a registry refused it, the budget is too
small). With --exec: the tool's own exit code, 127 when it cannot be started.";

/// Continue a stored session in another tool: converted, placed for its project, registered,
/// and the command that resumes it printed.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session: its id, the first characters of its id, or its file's path.
    session: String,
    /// The tool to continue in: gemini, qwen, claude, llxprt, pi, codex, agent, simple-agent
    /// (or a format one of their stores holds, such as gemini-json for Gemini CLI before
    /// v0.39).
    #[arg(long, value_name = "TOOL")]
    to: String,
    /// Look for SESSION only in this tool's store (repeatable).
    #[arg(long, value_name = "TOOL")]
    from: Vec<String>,
    /// The project to continue it in (default: the folder the session records).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Keep it within about N tokens (estimated): the first prompt and the newest turns that
    /// fit; what is left out is listed. Off by default.
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Show what would be done; write nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Replace the session in TOOL's store when it was switched there before (the file it
    /// replaces is kept as <file>.bak-<time>).
    #[arg(long)]
    force: bool,
    /// Then run the command that resumes it (in the project folder), in place of sessiontool.
    #[arg(long, conflicts_with_all = ["dry_run", "json"])]
    exec: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Machine-readable output (schema sessiontool.switch/1).
    #[arg(long)]
    json: bool,
}

const SCHEMA: &str = "sessiontool.switch/1";

pub fn run(args: Args) -> Result<i32, CliError> {
    let home = args.store.home()?;
    let to = switch::target_format(&args.to).map_err(switch_error)?;
    let target_tool = sessiontool::store::tool::Tool::of_format(to.name());
    if args.exec
        && let Some(tool) = target_tool
        && !sessiontool::store::resume::has_command(tool)
    {
        return Err(usage(format!(
            "--exec: there is no command sessiontool knows to resume a session in {tool}"
        )));
    }
    let project = args
        .project
        .as_deref()
        .map(|p| store_args::project(Some(p)))
        .transpose()?;
    let (bar, tick) = crate::progress::catalog_tick(args.json);
    let lookup = Lookup {
        wanted: args.session.clone(),
        tools: store_args::tools(&args.from)?,
        besides: target_tool,
        current_dir: store_args::current_dir()?,
        progress: Some(tick),
    };
    let found = find::find(&home, &lookup);
    bar.finish_and_clear();
    let found = found.map_err(find_error)?;
    let entry = found.entry;
    let request = Request {
        to: Some(to),
        project: project.as_deref(),
        max_tokens: args.max_tokens,
        force: args.force,
        dry_run: args.dry_run,
        now: Some(sessiontool::convert::now()),
    };
    let mut switched = switch::switch(&home, &entry, &request).map_err(switch_error)?;
    for other in &found.other_copies {
        switched.notes.push(format!(
            "the same session is also in {}'s store: {} (of its copies, the one updated last is taken, else the one written first; --from TOOL picks another)",
            other.tool, other.path
        ));
    }
    if args.json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            #[serde(flatten)]
            switched: &'a Switched,
        }
        report::print_json(&Doc {
            schema: SCHEMA,
            switched: &switched,
        });
    } else {
        print_human(&switched);
    }
    match (&switched.resume, args.exec) {
        (Some(resume), true) => Ok(exec(resume)),
        _ => Ok(0),
    }
}

fn print_human(s: &Switched) {
    if crate::style::quiet() {
        // Errors only: the command alone.
        if let Some(resume) = &s.resume {
            println!("{}", escape::line(&resume.shell));
        }
        return;
    }
    let would = if s.dry_run { "would be " } else { "" };
    let src = &s.source;
    eprintln!(
        "{} {} {} ({})",
        src.tool,
        escape::line(src.id.as_deref().unwrap_or("-")),
        escape::line(&src.path),
        src.format.unwrap_or("?")
    );
    if let Some(r) = &s.repaired {
        eprintln!(
            "  damaged: a copy was repaired ({} fixed: {}; {} left); the original is not changed",
            r.fixed,
            r.codes.join(", "),
            r.left
        );
    }
    report::print_diagnostics(&s.diagnostics);
    report::print_losses(None, s.output.format, &s.losses);
    if let Some(b) = &s.budget {
        report::print_budget(b);
    }
    for note in &s.notes {
        eprintln!("note: {}", escape::line(note));
    }
    let out = &s.output;
    eprintln!(
        "{would}written for {} ({}): {}",
        out.tool,
        out.format,
        escape::path(&out.path)
    );
    if let Some(r) = &out.replaced {
        eprintln!("the session it replaced is kept as {}", escape::path(r));
    }
    for r in &out.registered {
        eprintln!("{would}registered: {}", escape::line(r));
    }
    if let Some(resume) = &s.resume {
        eprintln!(
            "{}",
            if s.dry_run {
                "resume it (after a run without -n) with:"
            } else {
                "resume it with:"
            }
        );
        // The command alone on standard output, for scripts.
        println!("{}", escape::line(&resume.shell));
    }
}

/// Runs the resume command in the project folder: in place of this process where the system
/// allows, else as a child whose exit code is passed on.
fn exec(resume: &Resume) -> i32 {
    let _ = std::io::stdout().flush();
    let mut command = std::process::Command::new(&resume.argv[0]);
    command
        .args(&resume.argv[1..])
        .current_dir(&resume.cwd)
        .envs(&resume.env);
    #[cfg(unix)]
    let error = {
        use std::os::unix::process::CommandExt;
        command.exec()
    };
    #[cfg(not(unix))]
    let error = match command.status() {
        Ok(status) => return status.code().unwrap_or(1),
        Err(e) => e,
    };
    let code = match error.kind() {
        std::io::ErrorKind::NotFound if !std::path::Path::new(&resume.cwd).is_dir() => {
            eprintln!(
                "sessiontool: error: cannot run {}: the project folder {} does not exist",
                resume.argv[0],
                escape::line(&resume.cwd)
            );
            127
        }
        std::io::ErrorKind::NotFound => {
            eprintln!(
                "sessiontool: error: cannot run {}: not found on PATH",
                resume.argv[0]
            );
            127
        }
        _ => {
            eprintln!("sessiontool: error: cannot run {}: {error}", resume.argv[0]);
            126
        }
    };
    eprintln!(
        "  the session is in place: resume it with {}",
        escape::line(&resume.shell)
    );
    code
}

fn usage(message: String) -> CliError {
    CliError {
        code: 2,
        message,
        location: None,
        hint: None,
    }
}

fn find_error(e: FindError) -> CliError {
    let hint = e.hint();
    match &e {
        FindError::Ambiguous { matches, .. } => {
            for m in matches {
                eprintln!(
                    "  {:<12} {:<38} {:<16} {}",
                    m.tool.name(),
                    escape::line(m.id.as_deref().unwrap_or("-")),
                    escape::line(&report::short_time(m.updated.as_deref())),
                    escape::line(&m.path)
                );
            }
            usage(e.to_string()).hint(hint)
        }
        _ => CliError::input(e.to_string()).hint(hint),
    }
}

fn switch_error(e: SwitchError) -> CliError {
    let hint = e.hint();
    let error = match e {
        SwitchError::Place(PlaceFailure::Convert(c)) => CliError::from(c),
        SwitchError::UnknownTarget { .. }
        | SwitchError::SameTool { .. }
        | SwitchError::NoProject { .. } => usage(e.to_string()),
        SwitchError::Read { .. } | SwitchError::Repair(_) => CliError {
            code: EXIT_INPUT,
            message: e.to_string(),
            location: None,
            hint: None,
        },
        SwitchError::Place(_) => CliError {
            code: EXIT_OUTPUT,
            message: e.to_string(),
            location: None,
            hint: None,
        },
    };
    match hint {
        Some(h) if error.hint.is_none() => error.hint(h),
        _ => error,
    }
}
