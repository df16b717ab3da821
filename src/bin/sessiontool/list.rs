//! `sessiontool list`: the sessions of a project across every tool's store, newest first.

use std::path::PathBuf;

use anstream::{eprintln, println};
use clap::{Parser, ValueHint};
use sessiontool::store::catalog::{self, Catalog, Entry, Health, Query};
use sessiontool::store::recover::needs_recovery;
use sessiontool::store::stored::StoredKind;
use sessiontool::store::tool::Tool;

use crate::error::CliError;
use crate::escape;
use crate::store_args::{self, StoreArgs, shell_word};
use crate::style::{self, ERROR, GOOD, HEADING, HINT, NOTE, WARNING};

const EXAMPLES: &str = "Examples:
  sessiontool list                         this folder's sessions in every tool
  sessiontool list --project ~/src/app --tool gemini --tool qwen
  sessiontool list --all --json            every session of every project

Health: ok; warn (the tool resumes it); REPAIR (run `sessiontool recover`, which repairs it);
BROKEN (no repair fixes it: `sessiontool fsck FILE` says why).
The ID column shows the first characters of each id: recover and --leaf take them as they are.
Sessions in sha256 folders are matched by hashing the project path; Qwen Code, Claude Code
and pi folders by the path recorded inside the files.";

/// List sessions of the current project (or --project DIR, or --all) in every tool's store.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR", conflicts_with = "all", value_hint = ValueHint::DirPath)]
    project: Option<PathBuf>,
    /// Every project.
    #[arg(long)]
    all: bool,
    /// Only this tool (repeatable).
    #[arg(long, value_name = "TOOL", value_parser = store_args::tool_names())]
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
        print_table(&catalog, project.as_deref(), &args);
    }
    Ok(0)
}

/// The table; every value from a store (titles, ids, times, paths, project names) is escaped
/// for the terminal.
fn print_table(catalog: &Catalog, project: Option<&str>, args: &Args) {
    let quiet = style::quiet();
    if !quiet {
        for p in &catalog.problems {
            eprintln!(
                "{} {}",
                style::paint(WARNING, "sessiontool: warning:"),
                escape::line(p)
            );
        }
    }
    let scope = escape::line(project.unwrap_or("every project"));
    if catalog.entries.is_empty() {
        if !quiet {
            println!(
                "no sessions found for {scope} in {}",
                escape::path(&home_dir(args))
            );
        }
        return;
    }
    println!(
        "{}",
        style::paint(
            HEADING,
            &format!(
                "{:<12} {:<16} {:>5} {:<6} {:<10} TITLE / FIRST PROMPT",
                "TOOL", "UPDATED", "MSGS", "HEALTH", "ID"
            )
        )
    );
    for e in &catalog.entries {
        println!(
            "{:<12} {} {:>5} {} {:<10} {}",
            e.tool.name(),
            style::pad(
                NOTE,
                &escape::line(&crate::report::short_time(e.updated.as_deref())),
                16
            ),
            e.messages,
            style::pad(health_style(e.health), e.health.mark(), 6),
            escape::line(&short_id(e)),
            escape::line(&label(e))
        );
        println!("{:<12} {}", "", style::paint(NOTE, &escape::line(&e.path)));
        if let Some(newer) = &e.superseded_by {
            println!("{:<12} (an older copy of {})", "", escape::line(newer));
        }
        if project.is_none()
            && let Some(p) = &e.project
        {
            println!("{:<12} project {}", "", escape::line(p));
        }
    }
    if quiet {
        return;
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
    for next in next_steps(catalog, project, args) {
        println!("{} {}", style::paint(HINT, "next:"), escape::line(&next));
    }
}

/// The commands to run next, each one that works as printed: `recover` for what it repairs
/// (damaged sessions and checkpoints, set-aside and legacy files), `fsck` to say why a
/// session is broken beyond repair.
fn next_steps(catalog: &Catalog, project: Option<&str>, args: &Args) -> Vec<String> {
    let home = args.store.flag();
    let mut steps = Vec::new();
    if catalog.entries.iter().any(needs_recovery) {
        let scope = match project {
            Some(p) => project_flag(p),
            // Every project: recover works on one project at a time.
            None => String::new(),
        };
        if project.is_some() {
            steps.push(format!("sessiontool recover{scope}{home}"));
        } else {
            let mut projects: Vec<&str> = catalog
                .entries
                .iter()
                .filter(|e| needs_recovery(e))
                .filter_map(|e| e.project.as_deref())
                .collect();
            projects.sort();
            projects.dedup();
            for p in projects {
                steps.push(format!(
                    "sessiontool recover --project {}{home}",
                    shell_word(p)
                ));
            }
        }
    }
    let broken: Vec<String> = catalog
        .entries
        .iter()
        .filter(|e| e.health == Health::Broken && !needs_recovery(e))
        .map(|e| shell_word(&e.path))
        .collect();
    if !broken.is_empty() {
        steps.push(format!(
            "sessiontool fsck {}    # why no repair fixes {}",
            broken.join(" "),
            if broken.len() == 1 { "it" } else { "them" }
        ));
    }
    steps
}

fn home_dir(args: &Args) -> PathBuf {
    args.store
        .home()
        .map(|h| h.dir().to_path_buf())
        .unwrap_or_default()
}

fn health_style(health: Health) -> anstyle::Style {
    match health {
        Health::Ok => GOOD,
        Health::Warnings => WARNING,
        Health::Repairable | Health::Broken => ERROR,
    }
}

/// ` --project P` unless P is the current folder.
fn project_flag(project: &str) -> String {
    if store_args::project(None).ok().as_deref() == Some(project) {
        String::new()
    } else {
        format!(" --project {}", shell_word(project))
    }
}

fn short_id(e: &Entry) -> String {
    match (&e.kind, &e.id) {
        (StoredKind::Checkpoint { .. }, _) => "checkpoint".into(),
        (_, Some(id)) => id.chars().take(8).collect(),
        (_, None) => "-".into(),
    }
}

fn label(e: &Entry) -> String {
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
