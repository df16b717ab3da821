//! Exports every session of one project, from every tool's store (Gemini CLI, Qwen Code,
//! Claude Code, llxprt, pi, Codex, ...), as Markdown: one file per session, named
//! `<tool>-<session id>.md`, into an output folder, with a summary.
//!
//! ```sh
//! cargo run --example export_project_markdown -- --out /tmp/app-sessions
//! cargo run --example export_project_markdown -- --project ~/src/app --out notes/ --force
//! ```
//!
//! Built on sessiontool's public API only: `sessions` finds the project's sessions (as
//! `sessiontool list` does), `convert` writes each as Markdown.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use sessiontool::store::stored::StoredKind;
use sessiontool::{Entry, Home, Query};

const AFTER_HELP: &str = "\
Every session of the project in every tool's store is written as Markdown (the branch the tool
resumes, then every other branch; thoughts folded; tool calls with their results) to
OUT/<tool>-<id>.md; a Gemini checkpoint to OUT/gemini-checkpoint-<tag>.md. An older copy of a
session (a legacy .json beside the .jsonl the tool reads now, a copy left in a sha256 folder)
is skipped. Existing files are replaced only with --force.

Exit codes:
  0  every session of the project was exported (also when it has none)
  1  some sessions could not be read or written; the others were exported
  2  usage error (unknown option, no home folder)
  3  the output folder cannot be created

Examples:
  export_project_markdown --out /tmp/app-sessions
  export_project_markdown --project ~/src/app --out notes/ --force";

/// Export every session of a project, from every tool's store, as Markdown.
#[derive(Parser)]
#[command(name = "export_project_markdown", after_help = AFTER_HELP)]
struct Args {
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// The folder to write the Markdown files into (created when missing).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Look for the stores under DIR instead of $HOME (the tools' variables, such as
    /// GEMINI_CLI_HOME or CODEX_HOME, are then ignored).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Replace Markdown files that exist.
    #[arg(long)]
    force: bool,
}

const EXIT_PARTIAL: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_OUTPUT: u8 = 3;

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(home) = Home::from_arg(args.home.as_deref()) else {
        eprintln!("error: no home folder: $HOME is not set; pass --home DIR");
        return ExitCode::from(EXIT_USAGE);
    };
    let project = match sessiontool::project_path(&args.project) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: cannot create {}: {e}", args.out.display());
        return ExitCode::from(EXIT_OUTPUT);
    }
    let catalog = sessiontool::sessions(
        &home,
        Query {
            project: Some(project.clone()),
            // Lets a sha256-named folder be matched to the current folder too.
            candidates: sessiontool::project_path(".").into_iter().collect(),
            ..Query::default()
        },
    );

    let mut exported: BTreeMap<String, usize> = BTreeMap::new();
    let mut older_copies = 0;
    let mut failed = 0;
    let mut used = HashSet::new();
    for entry in &catalog.entries {
        if let Some(current) = &entry.superseded_by {
            older_copies += 1;
            println!("skipped  {} (an older copy of {current})", entry.path);
            continue;
        }
        let out = args.out.join(unique(file_name(entry), &mut used));
        match sessiontool::convert(&entry.path, "markdown", &out, args.force) {
            Ok(conversion) => {
                *exported.entry(entry.tool.to_string()).or_default() += 1;
                println!("exported {} -> {}", entry.path, out.display());
                for d in &conversion.diagnostics {
                    eprintln!("note: {d}");
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("not exported: {e}");
                let hint = match e {
                    sessiontool::Error::Exists { .. } => Some("pass --force to replace it".into()),
                    _ => e.hint(),
                };
                if let Some(hint) = hint {
                    eprintln!("  hint: {hint}");
                }
            }
        }
    }
    for problem in &catalog.problems {
        failed += 1;
        eprintln!("error: {problem}");
    }

    let total: usize = exported.values().sum();
    let by_tool: Vec<String> = exported.iter().map(|(t, n)| format!("{t} {n}")).collect();
    println!(
        "exported {total} session(s) of {project} into {}{}; {older_copies} older cop{} skipped; {failed} failed",
        args.out.display(),
        if by_tool.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_tool.join(", "))
        },
        if older_copies == 1 { "y" } else { "ies" },
    );
    if catalog.entries.is_empty() {
        println!(
            "no sessions of {project} in any tool's store under {}",
            home.dir().display()
        );
    }
    if failed > 0 {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    }
}

/// `<tool>-<id>.md`; a checkpoint by its tag, a session without an id by its file name.
fn file_name(entry: &Entry) -> String {
    let name = match (&entry.kind, &entry.id) {
        (StoredKind::Checkpoint { tag }, _) => format!("checkpoint-{tag}"),
        (_, Some(id)) => id.clone(),
        (_, None) => Path::new(&entry.path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    format!("{}-{}", entry.tool, safe.trim_start_matches('.'))
}

/// The name with `.md`, and `-2`, `-3`, ... when an earlier session of this run took it.
fn unique(stem: String, used: &mut HashSet<String>) -> String {
    let mut name = format!("{stem}.md");
    let mut n = 1;
    while !used.insert(name.clone()) {
        n += 1;
        name = format!("{stem}-{n}.md");
    }
    name
}
