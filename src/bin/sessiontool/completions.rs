//! `sessiontool completions SHELL`: the shell completion script, on standard output.

use clap::Parser;
use clap_complete::Shell;

use crate::error::CliError;

const EXAMPLES: &str = "Examples:
  sessiontool completions bash > ~/.local/share/bash-completion/completions/sessiontool
  sessiontool completions zsh > ~/.zfunc/_sessiontool      (with fpath+=~/.zfunc in ~/.zshrc)
  sessiontool completions fish > ~/.config/fish/completions/sessiontool.fish
  sessiontool completions powershell >> $PROFILE";

/// Print a completion script for a shell.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish.
    shell: Shell,
}

pub fn run(args: Args, mut command: clap::Command) -> Result<i32, CliError> {
    let name = command.get_name().to_string();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    Ok(0)
}
