//! `sessiontool repair FILE...`: the same as `sessiontool fsck --repair FILE...`.

use std::path::PathBuf;

use clap::{Parser, ValueHint};

use crate::error::CliError;
use crate::fsck;

const EXAMPLES: &str = "Examples:
  sessiontool repair chat.jsonl                 fix it; the original is kept as chat.jsonl.bak-<time>
  sessiontool repair -n chat.jsonl              show what would change
  sessiontool repair --backup-dir ~/bak ~/.qwen/projects/-home-me-app/chats

Exit codes as for fsck: 0 nothing to fix; 1 fixed; 4 errors left; 8 operational error.";

/// Repair session files (same as `fsck --repair`).
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session files and folders.
    #[arg(required = true, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    paths: Vec<PathBuf>,
    /// Show what would be changed, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Report tool calls without a result, but do not close them.
    #[arg(long)]
    keep_open_tool_calls: bool,
    /// Put backups in this folder instead of beside each file.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    backup_dir: Option<PathBuf>,
    /// Replace files without keeping a backup of the original.
    #[arg(long, conflicts_with = "backup_dir")]
    no_backup: bool,
    /// Repair even a file another process holds open for writing (what it writes afterwards
    /// goes to the backup, and the repair says so).
    #[arg(long)]
    force: bool,
    /// Read every file as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT", value_parser = crate::input::readable_formats())]
    from: Option<String>,
    /// Also list clean files.
    #[arg(short, long)]
    verbose: bool,
    /// One machine-readable JSON document on standard output.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<i32, CliError> {
    let mut argv: Vec<std::ffi::OsString> = vec!["fsck".into(), "--repair".into()];
    let flags = [
        (a.dry_run, "--dry-run"),
        (a.keep_open_tool_calls, "--keep-open-tool-calls"),
        (a.no_backup, "--no-backup"),
        (a.force, "--force"),
        (a.verbose, "--verbose"),
        (a.json, "--json"),
    ];
    argv.extend(flags.iter().filter(|(on, _)| *on).map(|(_, f)| f.into()));
    if let Some(d) = a.backup_dir {
        argv.push("--backup-dir".into());
        argv.push(d.into());
    }
    if let Some(f) = a.from {
        argv.push("--from".into());
        argv.push(f.into());
    }
    argv.push("--".into());
    argv.extend(a.paths.into_iter().map(Into::into));
    fsck::run(fsck::Args::parse_from(argv))
}
