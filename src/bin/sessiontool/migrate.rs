//! `sessiontool migrate --tool T --to SCHEME`: move a tool's store to the folder layout its
//! newer (or older) version reads.

use std::path::PathBuf;

use anstream::{eprintln, println};
use clap::{Parser, ValueHint};
use sessiontool::store::migrate::{self, Plan};
use sessiontool::store::scheme::Scheme;
use sessiontool::store::tool::Tool;

use crate::error::{CliError, EXIT_OUTPUT};
use crate::escape;
use crate::store_args::{self, StoreArgs, shell_word};
use crate::style::{self, ERROR, GOOD, HINT, NOTE, WARNING};

const EXAMPLES: &str = "Examples:
  sessiontool migrate --tool gemini --to gemini-slug -n   Gemini CLI <= v0.28 folders -> v0.29+
  sessiontool migrate --tool qwen --to dashed             Qwen Code <= v0.3 JSON -> v0.4+ JSONL
  sessiontool migrate --tool gemini --to sha256           back, for an older Gemini CLI

Copies first, checks each copy against what was written and with fsck, and keeps the old
files unless --move is given (then they are deleted only after all of that succeeded, and
only when the copy holds the same bytes: a converted session's original is kept as
<name>.bak-<time>).
A sha256 folder is matched to its project by the paths recorded in the sessions of every
tool, the current folder and --project; a folder no path hashes to is reported, not guessed.";

/// Move a tool's store from one folder naming scheme to another.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The tool whose store to migrate: gemini or qwen.
    #[arg(long, value_name = "TOOL", value_parser = ["gemini", "qwen"])]
    tool: String,
    /// The scheme to migrate to: gemini-slug or sha256 (gemini), dashed (qwen).
    #[arg(long, value_name = "SCHEME", value_parser = ["gemini-slug", "sha256", "dashed"])]
    to: String,
    /// A project path that sha256 folders may belong to (repeatable; the current folder is
    /// always tried).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    project: Vec<PathBuf>,
    /// Delete the old files once every copy is written and verified.
    #[arg(long = "move")]
    remove_old: bool,
    /// Show what would be done, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Machine-readable output (schema sessiontool.migrate/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let home = args.store.home()?;
    let tool = store_args::tools(std::slice::from_ref(&args.tool))?[0];
    let to = Scheme::by_name(&args.to).ok_or_else(|| {
        CliError::usage(format!("unknown scheme {:?}", args.to))
            .hint("one of: sha256, gemini-slug, dashed")
    })?;
    let mut candidates = vec![store_args::project(None)?];
    for p in &args.project {
        candidates.push(store_args::project(Some(p))?);
    }
    let plan = migrate::plan(&home, tool, to, &candidates);
    let work = plan
        .copies
        .iter()
        .any(|c| !c.already || (args.remove_old && c.from.is_some()));
    if args.dry_run || !plan.problems.is_empty() || !work {
        report(&args, tool, &plan, None, None);
        return Ok(if plan.problems.is_empty() {
            0
        } else {
            EXIT_OUTPUT
        });
    }
    match migrate::execute(
        &home,
        &plan,
        &sessiontool::repair::now_stamp(),
        args.remove_old,
    ) {
        Ok(outcome) => {
            report(&args, tool, &plan, Some(&outcome), None);
            Ok(if outcome.check.is_empty() { 0 } else { 1 })
        }
        Err(e) => {
            report(&args, tool, &plan, None, Some(&e));
            Ok(EXIT_OUTPUT)
        }
    }
}

fn report(
    args: &Args,
    tool: Tool,
    plan: &Plan,
    outcome: Option<&migrate::Outcome>,
    error_message: Option<&str>,
) {
    if args.json {
        let doc = serde_json::json!({
            "schema": "sessiontool.migrate/1",
            "tool": tool,
            "to": args.to,
            "dry_run": args.dry_run,
            "move": args.remove_old,
            "copies": plan.copies,
            "already": plan.already,
            "left": plan.left,
            "problems": plan.problems,
            "done": outcome.map(|o| &o.done),
            "check": outcome.map(|o| &o.check),
            "error": error_message,
        });
        crate::report::print_json(&doc);
        return;
    }
    // Paths and messages name files found on disk: escaped for the terminal.
    let path = escape::path;
    let error = |e: &str| {
        eprintln!(
            "{} {}",
            style::paint(ERROR, "sessiontool: error:"),
            escape::line(e)
        )
    };
    for p in &plan.problems {
        error(p);
    }
    if let Some(e) = error_message {
        error(e);
    }
    if style::quiet() {
        return;
    }
    for c in &plan.copies {
        match &c.from {
            Some(_) if c.already => println!("already there: {}", path(&c.to)),
            Some(from) => println!("{} {}\n  -> {}", c.how, path(from), path(&c.to)),
            None => println!("{} {} ({})", c.how, path(&c.to), escape::line(&c.project)),
        }
    }
    for a in &plan.already {
        println!("already there: {}", path(a));
    }
    for l in &plan.left {
        eprintln!(
            "{} {}",
            style::paint(NOTE, "sessiontool: note:"),
            escape::line(l)
        );
    }
    if let Some(o) = outcome {
        for c in &o.check {
            eprintln!(
                "{} {}",
                style::paint(WARNING, "sessiontool: warning:"),
                escape::line(c)
            );
        }
        let deleted = o.done.iter().filter(|d| d.deleted).count();
        let kept: Vec<_> = o
            .done
            .iter()
            .filter(|d| d.old.as_ref() != Some(&d.written))
            .filter_map(|d| d.old.as_ref().zip(d.backup.as_ref()))
            .collect();
        for (old, backup) in &kept {
            println!(
                "kept {} as {} (its copy was converted, so it is not deleted)",
                path(old),
                path(backup)
            );
        }
        let done = format!(
            "migrated {tool} to {}: {} file(s) written{}",
            args.to,
            o.done.len(),
            match (deleted, kept.len(), args.remove_old) {
                (0, 0, false) => "; the old files are kept (--move deletes them)".to_string(),
                (d, 0, _) => format!(", {d} old file(s) deleted"),
                (d, k, _) => format!(", {d} old file(s) deleted, {k} kept as backups"),
            }
        );
        println!("{}", style::paint(GOOD, &done));
    } else if plan.problems.is_empty() {
        let to_write = plan.copies.iter().filter(|c| !c.already).count();
        if to_write == 0 {
            println!("nothing to migrate: {tool}'s store has no folders of the other scheme");
        } else {
            println!("would write {to_write} file(s)");
            println!(
                "{} {}",
                style::paint(HINT, "next:"),
                escape::line(&again(args))
            );
        }
    } else {
        println!("nothing was changed");
    }
}

/// This command without `-n`, as it can be typed.
fn again(args: &Args) -> String {
    let mut command = format!("sessiontool migrate --tool {} --to {}", args.tool, args.to);
    for p in &args.project {
        command.push_str(&format!(
            " --project {}",
            shell_word(&p.display().to_string())
        ));
    }
    if args.remove_old {
        command.push_str(" --move");
    }
    command.push_str(&args.store.flag());
    command
}
