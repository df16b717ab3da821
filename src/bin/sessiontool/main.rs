//! The `sessiontool` command line: argument parsing and output only; all knowledge of formats
//! lives in the library.

mod completions;
mod convert;
mod detect;
mod dirname;
mod error;
mod escape;
mod formats;
mod fsck;
mod input;
mod list;
mod man;
mod migrate;
mod progress;
mod recover;
mod relocate;
mod repair;
mod report;
mod show;
mod store_args;
mod style;
mod switch;
#[cfg(test)]
mod test_sessions;
mod tree;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Read, check, repair and convert the session files AI coding agents write.
#[derive(Parser)]
#[command(name = "sessiontool", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success; 2 usage error; 3 an input could not be read (missing, \
not a regular file, not a session); \
4 an output was not written; 5 some files of a directory failed (the rest were written).\n\
Run `sessiontool <command> --help` for examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    color: style::ColorChoice,
    /// Print errors only: no progress, warnings, notes, plans or summaries. What a command
    /// is asked for (a table, a session, a JSON document) is still printed.
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    Convert(convert::Args),
    Fsck(fsck::Args),
    Repair(repair::Args),
    Show(show::Args),
    Tree(tree::Args),
    List(list::Args),
    Recover(recover::Args),
    Switch(switch::Args),
    Relocate(relocate::Args),
    Migrate(migrate::Args),
    Detect(detect::Args),
    Dirname(dirname::Args),
    Formats(formats::Args),
    Completions(completions::Args),
    Man(man::Args),
}

/// fsck(8) gives usage errors their own exit code; the other commands use 2.
pub const FSCK_USAGE: i32 = 16;

// Conversions make and drop many small values; mimalloc does that with fewer instructions than
// the system's allocator, but keeps more memory per record (docs/engine-v2.md has the figures):
// a choice at build time (`--features mimalloc`). The library leaves the choice to its users.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    restore_sigpipe();
    let raw = RawArgs::scan(std::env::args_os().skip(1));
    let command = Cli::command().color(raw.color.into());
    let fsck_like = matches!(raw.command.as_deref(), Some("fsck" | "repair"));
    let cli = match command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                // --help, --version
                let _ = e.print();
                std::process::exit(0);
            }
            let code = if fsck_like {
                FSCK_USAGE
            } else {
                error::EXIT_USAGE
            };
            if raw.json {
                style::init(raw.color, false);
                fail(&raw, &usage_error(&e, code));
            }
            let _ = e.print();
            std::process::exit(code);
        }
    };
    style::init(cli.color, cli.quiet);
    let result = match cli.command {
        Command::Convert(a) => convert::run(a),
        Command::Fsck(a) => fsck::run(a),
        Command::Repair(a) => repair::run(a),
        Command::Show(a) => show::run(a),
        Command::Tree(a) => tree::run(a),
        Command::List(a) => list::run(a),
        Command::Recover(a) => recover::run(a),
        Command::Switch(a) => switch::run(a),
        Command::Relocate(a) => relocate::run(a),
        Command::Migrate(a) => migrate::run(a),
        Command::Detect(a) => detect::run(a),
        Command::Dirname(a) => dirname::run(a),
        Command::Formats(a) => formats::run(a),
        Command::Completions(a) => completions::run(a, Cli::command()),
        Command::Man(a) => man::run(a, Cli::command()),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => fail(&raw, &e),
    }
}

/// Says why the command failed (with `--json`, also as a `sessiontool.error/1` document) and
/// exits with its code.
fn fail(raw: &RawArgs, e: &error::CliError) -> ! {
    e.print();
    if raw.json {
        let doc = e.document(raw.command.as_deref());
        if raw.session_to_stdout {
            report::eprint_json(&doc);
        } else {
            report::print_json(&doc);
        }
    }
    std::process::exit(e.exit_code());
}

/// A command-line parsing error as a [`error::CliError`]: clap's first line as the message,
/// the rest (usage, tips) as the hint.
fn usage_error(e: &clap::Error, code: i32) -> error::CliError {
    let text = e.render().to_string();
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or("");
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = lines.map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut error = error::CliError::new(code, message);
    if !rest.is_empty() {
        error = error.hint(rest.join("; "));
    }
    error
}

/// What the raw arguments say before clap has parsed them (an argument clap refuses still
/// tells whether the error is wanted as JSON, and in which colour).
struct RawArgs {
    command: Option<String>,
    json: bool,
    color: style::ColorChoice,
    /// `convert -o -`: standard output is the session, so a JSON document goes to standard
    /// error.
    session_to_stdout: bool,
}

impl RawArgs {
    fn scan(args: impl Iterator<Item = std::ffi::OsString>) -> Self {
        let args: Vec<String> = args
            .map(|a| a.to_string_lossy().into_owned())
            .take_while(|a| a != "--")
            .collect();
        let mut raw = RawArgs {
            command: None,
            json: false,
            color: style::ColorChoice::Auto,
            session_to_stdout: false,
        };
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            let value = |i: usize| args.get(i + 1).map(String::as_str);
            match a {
                "--json" => raw.json = true,
                "--color" => {
                    raw.color = parse_color(value(i)).unwrap_or(raw.color);
                    i += 1;
                }
                "-o" | "--output" => {
                    raw.session_to_stdout |= value(i) == Some("-");
                    i += 1;
                }
                "-o-" | "--output=-" => raw.session_to_stdout = true,
                _ if a.starts_with("--color=") => {
                    raw.color = parse_color(a.strip_prefix("--color=")).unwrap_or(raw.color);
                }
                _ if !a.starts_with('-') && raw.command.is_none() => {
                    raw.command = Some(a.to_string());
                }
                _ => {}
            }
            i += 1;
        }
        raw.session_to_stdout &= raw.command.as_deref() == Some("convert");
        raw
    }
}

fn parse_color(value: Option<&str>) -> Option<style::ColorChoice> {
    <style::ColorChoice as clap::ValueEnum>::from_str(value?, false).ok()
}

impl From<style::ColorChoice> for clap::ColorChoice {
    fn from(c: style::ColorChoice) -> Self {
        match c {
            style::ColorChoice::Auto => clap::ColorChoice::Auto,
            style::ColorChoice::Always => clap::ColorChoice::Always,
            style::ColorChoice::Never => clap::ColorChoice::Never,
        }
    }
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`sessiontool show x | head`) would
/// panic; like other command-line tools, end quietly instead.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
