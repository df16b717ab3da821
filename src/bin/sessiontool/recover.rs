//! `sessiontool recover`: make a project's sessions resumable again; optionally save one as
//! a Gemini checkpoint or put it into another tool's store.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anstream::{eprint, eprintln, println};
use clap::{Parser, ValueHint};
use sessiontool::formats::WriteOptions;
use sessiontool::id_prefix::{self, IdError};
use sessiontool::store::catalog::{self, Entry, Query};
use sessiontool::store::recover::{self, Options, Outcome, Step};
use sessiontool::store::stored::StoredKind;

use crate::error::{CliError, EXIT_OUTPUT};
use crate::escape;
use crate::input::{self, format_arg};
use crate::store_args::{self, StoreArgs};
use crate::style::{self, ERROR, GOOD, HINT, NOTE, WARNING};

const EXAMPLES: &str = "Examples:
  sessiontool recover                            pick from this folder's sessions (on a terminal),
                                                 or repair every one that needs it
  sessiontool recover --latest --checkpoint before-crash
                                                 then in Gemini CLI: /chat resume before-crash
  sessiontool recover 0b23 --to qwen-jsonl       also give it to Qwen Code
  sessiontool recover -n                         show what would be done

What it does to a session that needs it: repairs it in place (the original is kept as
<file>.bak-<time>, dropped bytes go to <file>.torn-<time>); copies a file Gemini CLI set aside
as .unreadable-<time> back under its old name first; gives a legacy Qwen Code file
(~/.qwen/tmp/<hash>/chats/*.json) to Qwen Code's current store. Damaged Gemini checkpoints
(`/chat save`) are repaired the same way. A checkpoint tag is written percent-encoded
(`my/tag` -> checkpoint-my%2Ftag.json): it never becomes a path.";

/// Make sessions resumable again: repair, restore, and place them where a tool finds them.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// A session id (or its first characters, as `list` prints them) or file path.
    #[arg(value_hint = ValueHint::AnyPath)]
    session: Option<String>,
    /// The newest session of the project (checkpoints aside).
    #[arg(long, conflicts_with = "session")]
    latest: bool,
    /// The project folder (default: the current folder).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    project: Option<PathBuf>,
    /// Only sessions of this tool (repeatable).
    #[arg(long, value_name = "TOOL", value_parser = store_args::tool_names())]
    tool: Vec<String>,
    /// Also save the session as a Gemini CLI checkpoint (`/chat resume TAG`).
    #[arg(long, value_name = "TAG")]
    checkpoint: Option<String>,
    /// Also write the session into the store of this format's tool (e.g. gemini-jsonl,
    /// qwen-jsonl, claude-jsonl).
    #[arg(long, value_name = "FORMAT", value_parser = input::readable_formats())]
    to: Option<String>,
    /// Show what would be done, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Replace a file of the same name when placing a session.
    #[arg(long)]
    force: bool,
    /// Put repair backups in this folder instead of beside each file.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    backup_dir: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
    /// Machine-readable output (schema sessiontool.recover/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let home = args.store.home()?;
    let project = store_args::project(args.project.as_deref())?;
    let to = args.to.as_deref().map(format_arg).transpose()?;
    let (bar, tick) = crate::progress::catalog_tick(args.json);
    // A path names the session itself: it is looked for in every project, and recovered for
    // its own (the help says paths are accepted; `--project` need not match its cwd).
    let by_path = args
        .session
        .as_deref()
        .is_some_and(|s| std::fs::metadata(s).is_ok_and(|m| m.is_file()));
    let query = Query {
        tools: store_args::tools(&args.tool)?,
        project: (!by_path).then(|| project.clone()),
        progress: Some(tick),
        candidates: vec![store_args::project(None)?],
    };
    // Checkpoints too: a damaged one is repaired as a session is.
    let sessions: Vec<Entry> = catalog::list(&home, &query).entries;
    bar.finish_and_clear();
    if !args.dry_run {
        // Temp files a crashed or killed earlier run left beside the project's sessions.
        let dirs: std::collections::BTreeSet<&Path> = sessions
            .iter()
            .filter_map(|e| Path::new(&e.path).parent())
            .collect();
        for dir in dirs {
            sessiontool::io::clear_stale_temps(dir);
        }
    }
    let mut options = Options {
        checkpoint: args.checkpoint.clone(),
        to,
        dry_run: args.dry_run,
        force: args.force,
        write: WriteOptions {
            now: Some(sessiontool::convert::now()),
            ..WriteOptions::default()
        },
        ..Options::default()
    };
    options.repair.backup_dir = args.backup_dir.clone();
    let chosen = choose(&args, &sessions, &project, &mut options)?;
    if chosen.is_empty() {
        if args.json {
            print_json(&project, &[], args.dry_run);
        } else if !style::quiet() {
            println!(
                "nothing to recover: {} session(s) of {}, none damaged, set aside or in a layout their tool no longer lists",
                sessions.len(),
                escape::line(&project)
            );
        }
        return Ok(0);
    }
    // A session named by its path is recovered for the project it records (unless
    // `--project` says where it goes).
    let project = match (by_path, chosen.first()) {
        (true, Some(e)) if args.project.is_none() => e.project.clone().unwrap_or(project),
        _ => project,
    };
    let outcomes: Vec<Outcome> = chosen
        .iter()
        .map(|e| recover::recover(&home, e, &project, &options))
        .collect();
    if args.json {
        print_json(&project, &outcomes, args.dry_run);
    } else {
        print_human(&outcomes, args.dry_run);
    }
    Ok(if outcomes.iter().any(|o| o.error.is_some()) {
        EXIT_OUTPUT
    } else {
        0
    })
}

/// The sessions to work on: the named one, the newest, one picked from a numbered list on a
/// terminal, or (with nothing asked) every one that needs recovery.
fn choose<'a>(
    args: &Args,
    sessions: &'a [Entry],
    project: &str,
    options: &mut Options,
) -> Result<Vec<&'a Entry>, CliError> {
    if let Some(wanted) = &args.session {
        return find(sessions, wanted).map(|e| vec![e]);
    }
    if args.latest {
        return sessions
            .iter()
            .find(|e| !matches!(e.kind, StoredKind::Checkpoint { .. }))
            .map(|e| vec![e])
            .ok_or_else(|| no_sessions(project));
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if interactive && !args.json {
        return pick(sessions, project, options);
    }
    if options.checkpoint.is_some() || options.to.is_some() {
        return Err(
            CliError::usage("which session? --checkpoint and --to work on one session").hint(
                "name it (an id prefix or a path), or pass --latest; `sessiontool list` shows them",
            ),
        );
    }
    Ok(sessions
        .iter()
        .filter(|e| recover::needs_recovery(e))
        .collect())
}

/// The session `wanted` names: its file (any path to it), else its id or the start of one.
fn find<'a>(sessions: &'a [Entry], wanted: &str) -> Result<&'a Entry, CliError> {
    if let Ok(as_path) = std::fs::canonicalize(wanted) {
        let same = |e: &&Entry| std::fs::canonicalize(&e.path).ok().as_ref() == Some(&as_path);
        if let Some(e) = sessions.iter().find(same) {
            return Ok(e);
        }
        return Err(CliError::input(format!(
            "{} is not a session in any store sessiontool knows",
            escape::line(wanted)
        ))
        .hint("`sessiontool list --all` shows every stored session; `sessiontool fsck --repair FILE` repairs a file anywhere"));
    }
    let ids = sessions
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.id.as_deref().map(|id| (id, i)));
    match id_prefix::find(ids, wanted, "session") {
        Ok(i) => Ok(&sessions[i]),
        Err(e @ IdError::NotFound { .. }) => Err(CliError::new(
            crate::error::id_code(&e),
            format!("{e} in this project"),
        )
        .hint("`sessiontool list` shows the ids; --project names another project")),
        Err(e) => Err(CliError::new(crate::error::id_code(&e), e.to_string()).hint(e.hint())),
    }
}

fn no_sessions(project: &str) -> CliError {
    CliError::input(format!("no sessions found for {project}"))
        .hint("--project names another project; `sessiontool list --all` shows every project")
}

/// The numbered list (as seed 003's script shows it), read from the terminal.
fn pick<'a>(
    sessions: &'a [Entry],
    project: &str,
    options: &mut Options,
) -> Result<Vec<&'a Entry>, CliError> {
    if sessions.is_empty() {
        return Err(no_sessions(project));
    }
    eprintln!("sessions of {}, newest first:", escape::line(project));
    for (i, e) in sessions.iter().enumerate() {
        // Titles and prompts are session text: escaped for the terminal.
        let label = e
            .title
            .as_deref()
            .or(e.first_prompt.as_deref())
            .map(|t| escape::line(&catalog::one_line(t, 50)).into_owned())
            .unwrap_or_default();
        let label = match &e.kind {
            StoredKind::Checkpoint { tag } => format!(
                "[{}] {label}",
                escape::line(&sessiontool::store::tool::Tool::checkpoint_command(tag))
            ),
            _ => label,
        };
        let (mark, mark_style) = if recover::needs_recovery(e) {
            ("needs recovery", ERROR)
        } else {
            (e.health.mark(), NOTE)
        };
        // The id and the path tell apart two sessions with the same title.
        let id: String = e.id.as_deref().unwrap_or("-").chars().take(8).collect();
        eprintln!(
            "{:>3}. {:<12} {} {:<8} {:>4} msgs  {} {label}",
            i + 1,
            e.tool.name(),
            style::pad(
                NOTE,
                &escape::line(&crate::report::short_time(e.updated.as_deref())),
                16
            ),
            escape::line(&id),
            e.messages,
            style::pad(mark_style, mark, 14),
        );
        eprintln!("     {}", style::paint(NOTE, &escape::line(&e.path)));
    }
    let any_damaged = sessions.iter().any(recover::needs_recovery);
    let all = if any_damaged && options.checkpoint.is_none() && options.to.is_none() {
        ", a for every one that needs recovery"
    } else {
        ""
    };
    let answer = ask(&format!(
        "number (1-{}{all}, empty to quit): ",
        sessions.len()
    ))?;
    if answer.is_empty() {
        return Ok(Vec::new());
    }
    if answer == "a" && !all.is_empty() {
        return Ok(sessions
            .iter()
            .filter(|e| recover::needs_recovery(e))
            .collect());
    }
    let n: usize = answer
        .parse()
        .ok()
        .filter(|n| (1..=sessions.len()).contains(n))
        .ok_or_else(|| {
            CliError::usage(format!(
                "{} is not a number from the list",
                escape::line(&format!("{answer:?}"))
            ))
        })?;
    if options.checkpoint.is_none() && options.to.is_none() {
        let tag = ask("save it as a Gemini checkpoint too? tag (empty: no): ")?;
        if !tag.is_empty() {
            options.checkpoint = Some(tag);
        }
    }
    Ok(vec![&sessions[n - 1]])
}

fn ask(prompt: &str) -> Result<String, CliError> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::input(format!("cannot read the answer: {e}")))?;
    Ok(line.trim().to_string())
}

fn print_json(project: &str, outcomes: &[Outcome], dry_run: bool) {
    let doc = serde_json::json!({
        "schema": "sessiontool.recover/1",
        "project": project,
        "dry_run": dry_run,
        "sessions": outcomes,
    });
    crate::report::print_json(&doc);
}

fn print_human(outcomes: &[Outcome], dry_run: bool) {
    if style::quiet() {
        // Errors only: the sessions that could not be recovered.
        for o in outcomes {
            if let Some(e) = &o.error {
                eprintln!(
                    "{} {} {}: {}",
                    style::paint(ERROR, "sessiontool: error:"),
                    o.tool,
                    show(&o.session),
                    escape::line(e)
                );
            }
        }
        return;
    }
    let would = if dry_run { "would be " } else { "" };
    for o in outcomes {
        let id: String = o.id.as_deref().unwrap_or("-").chars().take(8).collect();
        println!(
            "{} {}  {}",
            style::bold(o.tool.name()),
            escape::line(&id),
            show(&o.session)
        );
        for step in &o.steps {
            print_step(step, would);
        }
        if let Some(e) = &o.error {
            println!("  {} {}", style::paint(ERROR, "FAILED:"), escape::line(e));
        }
        for r in &o.resume {
            println!("  {} {}", style::paint(HINT, "resume:"), escape::line(r));
        }
    }
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    let summary = format!(
        "{} session(s) {}recovered{}",
        outcomes.len() - failed,
        would,
        if failed > 0 {
            format!(", {failed} failed (see above)")
        } else {
            String::new()
        }
    );
    println!(
        "{}",
        style::paint(if failed > 0 { ERROR } else { GOOD }, &summary)
    );
}

fn print_step(step: &Step, would: &str) {
    match step {
        Step::Healthy => println!("  {}", style::paint(GOOD, "healthy: nothing to repair")),
        Step::Registered {
            database, backup, ..
        } => {
            println!("  {would}registered in {}", show(database));
            if let Some(b) = backup {
                println!("  the database as it was is kept as {}", show(b));
            }
        }
        Step::Restored { to, .. } => {
            println!(
                "  {would}restored as {} (the set-aside file stays)",
                show(to)
            )
        }
        Step::Repaired {
            fixed,
            left,
            backup,
            sidecar,
            carried_over,
            still_written,
            ..
        } => {
            if *carried_over > 0 {
                println!(
                    "  {carried_over} byte(s) a tool appended meanwhile were carried into the repaired file"
                );
            }
            if let Some(w) = still_written {
                println!(
                    "  {} {}",
                    style::paint(WARNING, "warning:"),
                    escape::line(w)
                );
            }
            let line = format!("{would}repaired: {fixed} fixed, {left} left");
            println!(
                "  {}",
                style::paint(if *left > 0 { WARNING } else { GOOD }, &line)
            );
            if let Some(b) = backup {
                println!("  original kept as {}", show(b));
            }
            if let Some(s) = sidecar {
                println!("  dropped bytes kept in {}", show(s));
            }
        }
        Step::Placed {
            path,
            tool,
            format,
            registered,
            lost,
            replaced,
            ..
        } => {
            println!("  {would}written for {tool} ({format}): {}", show(path));
            if let Some(r) = replaced {
                println!("  the file it replaced is kept as {}", show(r));
            }
            for r in registered {
                println!("  {would}registered: {}", escape::line(r));
            }
            if !lost.is_empty() {
                println!(
                    "  {}",
                    style::paint(WARNING, &format!("not carried into {format}:"))
                );
                for l in lost {
                    println!("    {}", escape::line(l));
                }
            }
        }
    }
}

fn show(p: &Path) -> String {
    escape::path(p)
}
