//! Gives every Gemini CLI legacy JSON session its JSONL twin, as Gemini CLI v0.39+ does when it
//! resumes one: `chats/session-….json` gets `chats/session-….jsonl` beside it (same folder, same
//! name), written atomically; a session that has its `.jsonl` already is left alone, and so is
//! every legacy file (the CLI keeps it too).
//!
//! ```sh
//! cargo run --example gemini_legacy_to_jsonl -- --dry-run
//! cargo run --example gemini_legacy_to_jsonl -- --home /tmp/fake-home
//! ```
//!
//! Built on sessiontool's public API only: `sessions` finds the files, `convert` writes the
//! twins, `open` and `check` explain what cannot be read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use sessiontool::store::stored::StoredKind;
use sessiontool::{Entry, Home, Query, Tool};

const AFTER_HELP: &str = "\
Every legacy session (`gemini-json`) of every project in Gemini CLI's store gets a `.jsonl`
twin (`gemini-jsonl`) beside it, as Gemini CLI v0.39+ writes on resume. Sessions that have one
are skipped; nothing is ever replaced or deleted. Files the CLI set aside as unreadable, Qwen
Code's legacy files and checkpoints are not touched.

Exit codes:
  0  every legacy session has its .jsonl (or, with --dry-run, would have)
  1  some sessions (or folders) could not be read or written; the others were done
  2  usage error (unknown option, no home folder)

Examples:
  gemini_legacy_to_jsonl --dry-run
  gemini_legacy_to_jsonl --home /mnt/backup/home/alice";

/// Write the `.jsonl` twin of every Gemini CLI legacy JSON session, as Gemini CLI v0.39+ does
/// on resume.
#[derive(Parser)]
#[command(name = "gemini_legacy_to_jsonl", after_help = AFTER_HELP)]
struct Args {
    /// The home folder whose `.gemini` to look in (default: $HOME, or $GEMINI_CLI_HOME when
    /// set, as Gemini CLI does).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Read every legacy session and say what would be written; write nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
}

const EXIT_PARTIAL: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(home) = Home::from_arg(args.home.as_deref()) else {
        eprintln!("error: no home folder: $HOME is not set; pass --home DIR");
        return ExitCode::from(EXIT_USAGE);
    };
    let gemini = Tool::Gemini.folder(&home);
    let catalog = sessiontool::sessions(
        &home,
        Query {
            tools: vec![Tool::Gemini],
            ..Query::default()
        },
    );
    let mut entries: Vec<&Entry> = catalog.entries.iter().collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));

    let mut legacy = 0;
    let mut written = 0;
    let mut had_twin = 0;
    let mut in_hashed_folder = 0;
    let mut failed = 0;
    let mut set_aside = 0;
    for entry in entries {
        let path = Path::new(&entry.path);
        match entry.kind {
            StoredKind::Session | StoredKind::Subagent => {}
            StoredKind::Unreadable => {
                set_aside += 1;
                continue;
            }
            _ => continue, // checkpoints
        }
        if path.extension().is_none_or(|e| e != "json") {
            continue; // a .jsonl session already
        }
        match entry.format {
            Some("gemini-json") => {}
            Some(other) => {
                println!(
                    "skipped  {} (a {other} file, not a legacy session)",
                    entry.path
                );
                continue;
            }
            None => {
                legacy += 1;
                failed += 1;
                eprintln!(
                    "not converted: {}: not a session file of any supported format",
                    entry.path
                );
                continue;
            }
        }
        legacy += 1;
        let twin = path.with_extension("jsonl");
        if twin.exists() {
            had_twin += 1;
            println!("exists   {}", twin.display());
            continue;
        }
        let done = if args.dry_run {
            sessiontool::open(path).map(|_| ())
        } else {
            sessiontool::convert(path, "gemini-jsonl", &twin, false).map(|conversion| {
                for d in &conversion.diagnostics {
                    eprintln!("note: {d}");
                }
                for loss in &conversion.losses.losses {
                    eprintln!("note: {}: not carried: {}", entry.path, loss.message);
                }
            })
        };
        match done {
            Ok(()) => {
                written += 1;
                if is_hashed_folder(path) {
                    in_hashed_folder += 1;
                }
                let verb = if args.dry_run { "would write" } else { "wrote" };
                println!("{verb:<8} {}", twin.display());
            }
            Err(sessiontool::Error::Exists { .. }) => {
                // Written by the CLI (or another run) since we looked.
                had_twin += 1;
                println!("exists   {}", twin.display());
            }
            Err(e) => {
                failed += 1;
                eprintln!("not converted: {e}");
                if let Some(hint) = e.hint() {
                    eprintln!("  hint: {hint}");
                }
                if sessiontool::check(path).is_ok_and(|r| r.fixable() > 0) {
                    eprintln!(
                        "  `sessiontool repair {}` saves what can be saved; then run this again",
                        entry.path
                    );
                }
            }
        }
    }
    for problem in &catalog.problems {
        failed += 1;
        eprintln!("error: {problem}");
    }

    let verb = if args.dry_run {
        "would be written"
    } else {
        "written"
    };
    println!(
        "{legacy} legacy session(s) in {}: {written} .jsonl {verb}, {had_twin} had one already, {failed} could not be read",
        gemini.display()
    );
    if set_aside > 0 {
        println!(
            "{set_aside} file(s) the CLI set aside as unreadable were left alone (`sessiontool recover` restores them)"
        );
    }
    if in_hashed_folder > 0 {
        println!(
            "{in_hashed_folder} of them in sha256 folders, which Gemini CLI v0.29+ no longer reads: `sessiontool migrate --tool gemini --to gemini-slug` copies them to the project's slug folder"
        );
    }
    if failed > 0 {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether a session lives in `tmp/<sha256 of the project>/` (Gemini CLI ≤ v0.28).
fn is_hashed_folder(session: &Path) -> bool {
    session
        .ancestors()
        .find(|a| a.parent().and_then(Path::file_name) == Some("tmp".as_ref()))
        .and_then(|folder| folder.file_name()?.to_str())
        .is_some_and(|folder| {
            folder.len() == 64
                && folder
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
}
