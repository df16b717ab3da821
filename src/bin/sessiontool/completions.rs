//! `sessiontool completions SHELL`: the shell completion script, on standard output.

use clap::Parser;
use clap_complete::Shell;

use crate::error::CliError;

const EXAMPLES: &str = "Examples:
  mkdir -p ~/.local/share/bash-completion/completions
  sessiontool completions bash > ~/.local/share/bash-completion/completions/sessiontool
  mkdir -p ~/.zfunc && sessiontool completions zsh > ~/.zfunc/_sessiontool
                                              (with fpath+=~/.zfunc in ~/.zshrc)
  mkdir -p ~/.config/fish/completions
  sessiontool completions fish > ~/.config/fish/completions/sessiontool.fish
  sessiontool completions powershell >> $PROFILE

Formats, tools and schemes complete to their names; files and folders where a path is taken.";

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
