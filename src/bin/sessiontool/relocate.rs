//! `sessiontool relocate OLD NEW`: after a project folder moved, give its sessions to NEW in
//! every tool's store.

use std::path::PathBuf;

use anstream::{eprintln, println};
use clap::{Parser, ValueHint};
use sessiontool::store::rekey::Move;
use sessiontool::store::relocate::{self, Plan};

use crate::error::{CliError, EXIT_OUTPUT};
use crate::escape;
use crate::store_args::{self, StoreArgs, shell_word};
use crate::style::{self, ERROR, GOOD, HINT, WARNING};

const EXAMPLES: &str = "Examples:
  sessiontool relocate ~/src/old-name ~/src/new-name -n     show what would change
  sessiontool relocate /work/app /home/me/app
  sessiontool relocate /work/app /home/me/app --tool claude --tool qwen

Folders named after the project (Gemini and llxprt sha256 folders, Qwen Code, Claude Code and
pi folders) move to the new name; the cwd and projectHash values recorded inside the files
are rewritten (only those bytes); Gemini's projects.json and .project_root markers and
simple-agent's meta.json follow. Sessions of folders below OLD move with it. Every file
replaced or moved is kept as <file>.bak-<time>. Paths mentioned inside the conversation are
history and stay as they were.";

/// Move every session of project folder OLD to NEW, in every tool's store.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Where the project was.
    #[arg(value_hint = ValueHint::DirPath)]
    old: PathBuf,
    /// Where it is now.
    #[arg(value_hint = ValueHint::DirPath)]
    new: PathBuf,
    /// Only this tool's store (repeatable).
    #[arg(long, value_name = "TOOL", value_parser = store_args::tool_names())]
    tool: Vec<String>,
    /// Show what would change, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Machine-readable output (schema sessiontool.relocate/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let home = args.store.home()?;
    let old = store_args::project(Some(&args.old))?;
    let new = store_args::project(Some(&args.new))?;
    let mv = Move::new(&old, &new).map_err(|e| CliError::usage(e.to_string()))?;
    let plan = relocate::plan(&home, &store_args::tools(&args.tool)?, &mv);
    if args.dry_run || plan.changes.is_empty() {
        report(&args, &plan, &[], None, true);
        return Ok(if plan.problems.is_empty() {
            0
        } else {
            EXIT_OUTPUT
        });
    }
    let stamp = sessiontool::repair::now_stamp();
    match relocate::execute(&home, plan, &stamp) {
        Ok(outcome) => {
            report(&args, &outcome.plan, &outcome.done, None, false);
            Ok(0)
        }
        Err((plan, message)) => {
            report(&args, &plan, &[], Some(&message), false);
            Ok(EXIT_OUTPUT)
        }
    }
}

fn report(
    args: &Args,
    plan: &Plan,
    done: &[sessiontool::store::txn::Done],
    error_message: Option<&str>,
    planned_only: bool,
) {
    if args.json {
        let doc = serde_json::json!({
            "schema": "sessiontool.relocate/1",
            "old": store_args::project(Some(&args.old)).ok(),
            "new": store_args::project(Some(&args.new)).ok(),
            "tools": args.tool,
            "dry_run": args.dry_run,
            "changes": plan.changes,
            "problems": plan.problems,
            "left": plan.left,
            "done": done,
            "error": error_message,
        });
        crate::report::print_json(&doc);
        return;
    }
    let verb = if planned_only {
        "would change"
    } else {
        "changed"
    };
    // Paths and messages name files found on disk: escaped for the terminal.
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
    for c in &plan.changes {
        let tool = c.tool.map(|t| t.name()).unwrap_or("");
        let inside = escape::line(&c.inside);
        if c.from == c.to {
            println!("{tool:<12} {} ({inside})", escape::path(&c.to));
        } else {
            println!(
                "{tool:<12} {}\n{:<12} -> {} ({inside})",
                escape::path(&c.from),
                "",
                escape::path(&c.to),
            );
        }
    }
    for l in &plan.left {
        eprintln!(
            "{} {}",
            style::paint(WARNING, "sessiontool: warning:"),
            escape::line(l)
        );
    }
    if plan.changes.is_empty() && plan.problems.is_empty() && !plan.left.is_empty() {
        println!(
            "nothing relocated for {} (what was found is left where it is: see above)",
            escape::path(&args.old)
        );
    } else if plan.changes.is_empty() && plan.problems.is_empty() {
        println!("no sessions of {} found", escape::path(&args.old));
    } else if error_message.is_none() && plan.problems.is_empty() {
        let done = format!(
            "{verb} {} file(s){}",
            plan.changes.len(),
            if planned_only {
                ""
            } else {
                "; originals kept as <file>.bak-<time>"
            }
        );
        println!(
            "{}",
            if planned_only {
                done
            } else {
                style::paint(GOOD, &done)
            }
        );
        if planned_only && args.dry_run {
            println!(
                "{} {}",
                style::paint(HINT, "next:"),
                escape::line(&again(args))
            );
        }
    }
}

/// This command without `-n`, as it can be typed.
fn again(args: &Args) -> String {
    let mut command = format!(
        "sessiontool relocate {} {}",
        shell_word(&args.old.display().to_string()),
        shell_word(&args.new.display().to_string())
    );
    for t in &args.tool {
        command.push_str(&format!(" --tool {t}"));
    }
    command.push_str(&args.store.flag());
    command
}
