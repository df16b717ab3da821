//! `sessiontool relocate OLD NEW`: after a project folder moved, give its sessions to NEW in
//! every tool's store.

use std::path::PathBuf;

use clap::Parser;
use sessiontool::store::rekey::Move;
use sessiontool::store::relocate::{self, Plan};

use crate::error::{CliError, EXIT_OUTPUT};
use crate::escape;
use crate::store_args::{self, StoreArgs};

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
    old: PathBuf,
    /// Where it is now.
    new: PathBuf,
    /// Only this tool's store (repeatable).
    #[arg(long, value_name = "TOOL")]
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
    let mv = Move::new(&old, &new).map_err(|e| CliError {
        code: 2,
        message: e.to_string(),
        location: None,
        hint: None,
    })?;
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
    error: Option<&str>,
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
            "error": error,
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
        eprintln!("sessiontool: warning: {}", escape::line(l));
    }
    for p in &plan.problems {
        eprintln!("sessiontool: error: {}", escape::line(p));
    }
    if let Some(e) = error {
        eprintln!("sessiontool: error: {}", escape::line(e));
    }
    if plan.changes.is_empty() && plan.problems.is_empty() {
        println!("no sessions of {} found", escape::path(&args.old));
    } else if error.is_none() && plan.problems.is_empty() {
        println!(
            "{verb} {} file(s){}",
            plan.changes.len(),
            if planned_only && args.dry_run {
                "; run again without -n to do it"
            } else {
                "; originals kept as <file>.bak-<time>"
            }
        );
    }
}
