//! `sessiontool man`: the manual pages (roff), from the same definitions as `--help`.
//! clap_mangen renders the name, synopsis, description, options and commands; the examples
//! and exit codes of `--help` are rendered here, line for line (roff would fill them into one
//! paragraph), and each page ends with SEE ALSO naming only pages that are written.

use std::io::Write;
use std::path::PathBuf;

use anstream::eprintln;
use clap::{Parser, ValueHint};

use crate::error::CliError;
use crate::escape;
use crate::style;

const EXAMPLES: &str = "Examples:
  sessiontool man | man -l -                     read it now
  sessiontool man --dir ~/.local/share/man/man1  install sessiontool.1 and one page per command
  sessiontool man --dir ~/.local/share/man/man1 -n   list the pages it would write";

/// Print the manual page, or write one page per command into a folder.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Write sessiontool.1 and sessiontool-COMMAND.1 into this folder instead (made when
    /// missing; pages there are replaced).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    dir: Option<PathBuf>,
    /// With --dir: list the pages, write nothing.
    #[arg(short = 'n', long, requires = "dir")]
    dry_run: bool,
}

pub fn run(args: Args, command: clap::Command) -> Result<i32, CliError> {
    // `help` is a command of the parser, not one with a page of its own.
    let command = command.disable_help_subcommand(true);
    let pages = pages(&command);
    let Some(dir) = args.dir else {
        let (_, main) = &pages[0];
        std::io::stdout()
            .write_all(main)
            .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
        return Ok(0);
    };
    if !args.dry_run {
        std::fs::create_dir_all(&dir)
            .map_err(|e| CliError::output(format!("cannot create {}: {e}", escape::path(&dir))))?;
    }
    for (file, page) in &pages {
        let path = dir.join(file);
        if !args.dry_run {
            // Pages are generated: one already there is replaced (keeping its mode).
            sessiontool::io::write_atomic(&path, page, true).map_err(|e| {
                CliError::output(format!("cannot write {}: {e}", escape::path(&path)))
            })?;
        }
        if !style::quiet() {
            let verb = if args.dry_run { "would write" } else { "wrote" };
            eprintln!("{verb} {}", escape::path(&path));
        }
    }
    Ok(0)
}

/// `sessiontool.1`, then `sessiontool-COMMAND.1` for each command, rendered.
fn pages(command: &clap::Command) -> Vec<(String, Vec<u8>)> {
    let subs: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .collect();
    let mut see_also: Vec<String> = subs
        .iter()
        .map(|s| format!("sessiontool-{}", s.get_name()))
        .collect();
    let mut pages = vec![(
        "sessiontool.1".to_string(),
        render(command.clone(), &see_also),
    )];
    for sub in subs {
        let name = format!("sessiontool-{}", sub.get_name());
        // The title names the page; the synopsis shows the command as it is typed.
        let page = sub
            .clone()
            .name(name.clone())
            .display_name(name.clone())
            .bin_name(format!("sessiontool {}", sub.get_name()));
        see_also = vec!["sessiontool".into()];
        pages.push((format!("{name}.1"), render(page, &see_also)));
    }
    pages
}

fn render(command: clap::Command, see_also: &[String]) -> Vec<u8> {
    let after = command
        .get_after_long_help()
        .or_else(|| command.get_after_help())
        .map(|t| t.to_string());
    let has_subcommands = command.get_subcommands().next().is_some();
    let man = clap_mangen::Man::new(command);
    let mut out = Vec::new();
    let rendered = man
        .render_title(&mut out)
        .and_then(|()| man.render_name_section(&mut out))
        .and_then(|()| man.render_synopsis_section(&mut out))
        .and_then(|()| man.render_description_section(&mut out))
        .and_then(|()| man.render_options_section(&mut out))
        .and_then(|()| {
            if has_subcommands {
                man.render_subcommands_section(&mut out)
            } else {
                Ok(())
            }
        });
    rendered.expect("writing to memory does not fail");
    if let Some(text) = after {
        out.extend_from_slice(after_help(&text).as_bytes());
    }
    out.extend_from_slice(b".SH \"SEE ALSO\"\n");
    let refs: Vec<String> = see_also
        .iter()
        .map(|page| format!("\\fB{}\\fR(1)", roff_text(page)))
        .collect();
    out.extend_from_slice(refs.join(",\n").as_bytes());
    out.push(b'\n');
    out.extend_from_slice(format!(".SH VERSION\nv{}\n", env!("CARGO_PKG_VERSION")).as_bytes());
    out
}

/// The text after `--help`'s options as roff: "Examples:" and "Exit codes" start their own
/// sections; indented lines (commands and their notes) are kept line for line (`.nf`), the
/// other paragraphs are filled.
fn after_help(text: &str) -> String {
    let mut out = String::new();
    let mut section = "";
    for paragraph in text.split("\n\n") {
        let mut lines: Vec<&str> = paragraph.lines().collect();
        let Some(first) = lines.first().copied() else {
            continue;
        };
        let wanted = if first.starts_with("Example") {
            lines.remove(0);
            "EXAMPLES"
        } else if first.starts_with("Exit codes") {
            "EXIT STATUS"
        } else if section.is_empty() {
            "NOTES"
        } else {
            section
        };
        if wanted != section {
            out.push_str(&format!(".SH \"{wanted}\"\n"));
            section = wanted;
        } else {
            out.push_str(".PP\n");
        }
        let mut verbatim = false;
        for line in lines {
            let indented = line.starts_with("  ");
            if indented != verbatim {
                out.push_str(if indented { ".nf\n" } else { ".fi\n" });
                verbatim = indented;
            }
            out.push_str(&roff_text(line));
            out.push('\n');
        }
        if verbatim {
            out.push_str(".fi\n");
        }
    }
    out
}

/// A line of text for roff: backslashes and minus signs escaped, characters past ASCII as
/// `\[uXXXX]` (troff reads its input as Latin-1), a leading `.` or `'` kept from being read
/// as a request.
fn roff_text(line: &str) -> String {
    let mut escaped = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\\' => escaped.push_str("\\e"),
            '-' => escaped.push_str("\\-"),
            c if c.is_ascii() => escaped.push(c),
            c => escaped.push_str(&format!("\\[u{:04X}]", c as u32)),
        }
    }
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_stay_line_for_line_and_paragraphs_are_filled() {
        let roff = after_help(
            "Examples:\n  sessiontool a    one\n  sessiontool b\n\nWhat it does: a long\nparagraph.\n\nExit codes: 0 ok.",
        );
        assert_eq!(
            roff,
            ".SH \"EXAMPLES\"\n.nf\n  sessiontool a    one\n  sessiontool b\n.fi\n.PP\n\
             What it does: a long\nparagraph.\n.SH \"EXIT STATUS\"\nExit codes: 0 ok.\n"
        );
        assert_eq!(roff_text(".hidden -x \\y"), "\\&.hidden \\-x \\ey");
        assert_eq!(roff_text("…N… ◆"), "\\[u2026]N\\[u2026] \\[u25C6]");
    }
}
