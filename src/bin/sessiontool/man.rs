//! `sessiontool man`: the manual pages (roff), from the same definitions as `--help`.

use std::path::PathBuf;

use clap::Parser;

use crate::error::CliError;

const EXAMPLES: &str = "Examples:
  sessiontool man | man -l -                     read it now
  sessiontool man --dir ~/.local/share/man/man1  install sessiontool.1 and one page per command";

/// Print the manual page, or write one page per command into a folder.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Write sessiontool.1 and sessiontool-COMMAND.1 into this folder instead.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn run(args: Args, command: clap::Command) -> Result<i32, CliError> {
    let Some(dir) = args.dir else {
        let mut out = Vec::new();
        render(command, &mut out)?;
        use std::io::Write;
        std::io::stdout()
            .write_all(&out)
            .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::output(format!("cannot create {}: {e}", dir.display())))?;
    let command = command.disable_help_subcommand(true);
    let mut pages = vec![("sessiontool.1".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        let name = format!("sessiontool-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(name)));
    }
    for (file, page) in pages {
        let mut out = Vec::new();
        render(page, &mut out)?;
        let path = dir.join(&file);
        sessiontool::io::write_atomic(&path, &out, true)
            .map_err(|e| CliError::output(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(0)
}

fn render(command: clap::Command, out: &mut Vec<u8>) -> Result<(), CliError> {
    clap_mangen::Man::new(command)
        .render(out)
        .map_err(|e| CliError::output(format!("cannot render the manual page: {e}")))
}
