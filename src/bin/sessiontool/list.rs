//! `sessiontool list`: the sessions of a project across every tool's store, newest first.

use std::path::PathBuf;

use clap::Parser;
use sessiontool::store::catalog::{self, Catalog, Entry, Health, Query};
use sessiontool::store::recover::needs_recovery;
use sessiontool::store::tool::Tool;

use crate::error::CliError;
use crate::escape;
use crate::store_args::{self, StoreArgs};

const EXAMPLES: &str = "Examples:
  sessiontool list                         this folder's sessions in every tool
  sessiontool list --project ~/src/app --tool gemini --tool qwen
  sessiontool list --all --json            every session of every project

Health: ok; warn (the tool resumes it); REPAIR (run `sessiontool recover` or `repair`);
BROKEN (no repair fixes it: `sessiontool fsck FILE` says why).
Sessions in sha256 folders are matched by hashing the project path; Qwen Code, Claude Code
and pi folders by the path recorded inside the files.";

/// List sessions of the current project (or --project DIR, or --all) in every tool's store.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    project: Option<PathBuf>,
    /// Every project.
    #[arg(long)]
    all: bool,
    /// Only this tool (repeatable): gemini, qwen, claude, llxprt, pi, codex, agent,
    /// simple-agent.
    #[arg(long, value_name = "TOOL")]
    tool: Vec<String>,
    #[command(flatten)]
    store: StoreArgs,
    /// Machine-readable output (schema sessiontool.list/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let home = args.store.home()?;
    let here = store_args::project(None)?;
    let project = if args.all {
        None
    } else {
        Some(store_args::project(args.project.as_deref())?)
    };
    let (bar, tick) = crate::progress::catalog_tick(args.json);
    let query = Query {
        tools: store_args::tools(&args.tool)?,
        project: project.clone(),
        progress: Some(tick),
        candidates: vec![here],
    };
    let catalog = catalog::list(&home, &query);
    bar.finish_and_clear();
    if args.json {
        let doc = serde_json::json!({
            "schema": "sessiontool.list/1",
            "home": home.dir().to_string_lossy(),
            "project": project,
            "sessions": catalog.entries,
            "problems": catalog.problems,
        });
        crate::report::print_json(&doc);
    } else {
        print_table(&catalog, project.as_deref());
    }
    Ok(0)
}

/// The table; every value from a store (titles, ids, times, paths, project names) is escaped
/// for the terminal.
fn print_table(catalog: &Catalog, project: Option<&str>) {
    for p in &catalog.problems {
        eprintln!("sessiontool: warning: {}", escape::line(p));
    }
    let scope = escape::line(project.unwrap_or("every project"));
    if catalog.entries.is_empty() {
        println!("no sessions found for {scope}");
        return;
    }
    println!(
        "{:<12} {:<16} {:>5} {:<6} {:<10} TITLE / FIRST PROMPT",
        "TOOL", "UPDATED", "MSGS", "HEALTH", "ID"
    );
    for e in &catalog.entries {
        println!(
            "{:<12} {:<16} {:>5} {:<6} {:<10} {}",
            e.tool.name(),
            escape::line(&crate::report::short_time(e.updated.as_deref())),
            e.messages,
            e.health.mark(),
            escape::line(&short_id(e)),
            escape::line(&label(e))
        );
        println!("{:<12} {}", "", escape::line(&e.path));
        if let Some(newer) = &e.superseded_by {
            println!("{:<12} (an older copy of {})", "", escape::line(newer));
        }
        if project.is_none()
            && let Some(p) = &e.project
        {
            println!("{:<12} project {}", "", escape::line(p));
        }
    }
    let needing: Vec<&Entry> = catalog
        .entries
        .iter()
        .filter(|e| e.health >= Health::Repairable || needs_recovery(e))
        .collect();
    println!(
        "{} session(s) for {scope}; {} need attention",
        catalog.entries.len(),
        needing.len()
    );
    if needing.iter().any(|e| needs_recovery(e)) {
        println!(
            "next: sessiontool recover{}",
            escape::line(&project_flag(project))
        );
    }
}

fn project_flag(project: Option<&str>) -> String {
    match project {
        Some(p) if store_args::project(None).ok().as_deref() != Some(p) => {
            format!(" --project {p}")
        }
        _ => String::new(),
    }
}

fn short_id(e: &Entry) -> String {
    match (&e.kind, &e.id) {
        (sessiontool::store::stored::StoredKind::Checkpoint { .. }, _) => "checkpoint".into(),
        (_, Some(id)) => id.chars().take(8).collect(),
        (_, None) => "-".into(),
    }
}

fn label(e: &Entry) -> String {
    use sessiontool::store::stored::StoredKind;
    let text = e
        .title
        .as_deref()
        .or(e.first_prompt.as_deref())
        .map(|t| catalog::one_line(t, 60))
        .unwrap_or_default();
    let tag = match &e.kind {
        StoredKind::Checkpoint { tag } => format!("[{}] ", Tool::checkpoint_command(tag)),
        StoredKind::Unreadable => "[set aside as unreadable] ".into(),
        StoredKind::Legacy => "[legacy: not listed by the tool] ".into(),
        StoredKind::Subagent => "[subagent] ".into(),
        StoredKind::Session => String::new(),
    };
    format!("{tag}{text}")
}
