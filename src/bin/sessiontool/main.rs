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

use clap::{CommandFactory, Parser, Subcommand};

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
    /// Print errors only (no warnings, notes or progress).
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
const FSCK_USAGE: i32 = 16;

fn main() {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let fsck_like = std::env::args()
                .nth(1)
                .is_some_and(|c| c == "fsck" || c == "repair");
            let usage = e.use_stderr();
            let _ = e.print();
            std::process::exit(match (usage, fsck_like) {
                (false, _) => 0,
                (true, true) => FSCK_USAGE,
                (true, false) => 2,
            });
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
        Err(e) => {
            e.print();
            std::process::exit(e.exit_code());
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
