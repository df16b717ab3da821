//! Output settings every command shares: colour (`--color`, `NO_COLOR`, only on a terminal by
//! default), quiet (`-q`: errors only), and the terminal width.
//!
//! Human output is written with `anstream`'s `println!`/`eprintln!`, whose streams pass the
//! styles below to a terminal and strip them everywhere else (a pipe, a file, `--color
//! never`, `NO_COLOR`), each stream decided on its own. Session text reaches these streams
//! only escaped ([`crate::escape`]), so every escape sequence on the screen is one of ours.
//! `--json` documents and session bytes (`convert -o -`) are written to the raw streams.

use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::{AnsiColor, Effects, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// Decides once, at start-up.
pub fn init(choice: ColorChoice, quiet: bool) {
    anstream::ColorChoice::write_global(match choice {
        ColorChoice::Auto => anstream::ColorChoice::Auto,
        ColorChoice::Always => anstream::ColorChoice::Always,
        ColorChoice::Never => anstream::ColorChoice::Never,
    });
    QUIET.store(quiet, Ordering::Relaxed);
}

/// `-q`: print errors only (and what a command is asked to print: see `--help`).
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `error:`, an error finding, a failed step, a file that needs repair.
pub const ERROR: Style = AnsiColor::Red.on_default().effects(Effects::BOLD);
/// `warning:`, a warning finding.
pub const WARNING: Style = AnsiColor::Yellow.on_default().effects(Effects::BOLD);
/// A note, a time, an id: what the eye may skip.
pub const NOTE: Style = Style::new().effects(Effects::DIMMED);
/// What went well: a healthy session, a repair done.
pub const GOOD: Style = AnsiColor::Green.on_default();
/// `hint:` and the command to run next.
pub const HINT: Style = AnsiColor::Cyan.on_default().effects(Effects::BOLD);
/// Headings: a file name above its findings, table headers.
pub const HEADING: Style = Style::new().effects(Effects::BOLD);

/// `text` in `style` (the stream drops the style where colour is off).
pub fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// `text` padded to `width` columns, then styled: the padding counts what is seen.
pub fn pad(style: Style, text: &str, width: usize) -> String {
    format!("{style}{text:<width$}{style:#}")
}

pub fn bold(text: &str) -> String {
    paint(HEADING, text)
}

pub fn dim(text: &str) -> String {
    paint(NOTE, text)
}

pub fn red(text: &str) -> String {
    paint(ERROR, text)
}

pub fn yellow(text: &str) -> String {
    paint(AnsiColor::Yellow.on_default(), text)
}

pub fn green(text: &str) -> String {
    paint(GOOD, text)
}

pub fn cyan(text: &str) -> String {
    paint(AnsiColor::Cyan.on_default(), text)
}

pub fn magenta(text: &str) -> String {
    paint(AnsiColor::Magenta.on_default(), text)
}

/// The width to wrap text to: `--width`, else the terminal's (standard output, or standard
/// error when the output goes to a pager), else `$COLUMNS`; `None`: do not wrap.
pub fn width(asked: Option<usize>) -> Option<usize> {
    if asked.is_some() {
        return asked.filter(|w| *w > 0);
    }
    let terminal = terminal_size::terminal_size_of(std::io::stdout())
        .or_else(|| terminal_size::terminal_size_of(std::io::stderr()));
    if let Some((terminal_size::Width(w), _)) = terminal
        && w > 0
    {
        return Some(usize::from(w));
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok())
}

/// `text` wrapped at word boundaries to `width` columns, each line after the first (and the
/// first) starting with `indent`. Long words are left whole.
pub fn wrap(text: &str, width: Option<usize>, indent: &str) -> String {
    let Some(width) = width else {
        return text
            .lines()
            .map(|l| format!("{indent}{l}"))
            .collect::<Vec<_>>()
            .join("\n");
    };
    let room = width.saturating_sub(indent.chars().count()).max(20);
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        for word in line.split(' ') {
            let needed =
                current.chars().count() + usize::from(!current.is_empty()) + word.chars().count();
            // A short lead (`→`, a bullet) stays with the word after it.
            if current.chars().count() > 3 && needed > room {
                out.push(format!("{indent}{current}"));
                current.clear();
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push(format!("{indent}{current}"));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_words_and_keeps_long_words_whole() {
        assert_eq!(
            wrap("one two three four five six", Some(29), "  "),
            "  one two three four five six"
        );
        let w = wrap("aaaa bbbb cccc dddd eeee ffff gggg hhhh", Some(22), "> ");
        assert_eq!(w, "> aaaa bbbb cccc dddd\n> eeee ffff gggg hhhh");
        assert_eq!(wrap("x", None, "  "), "  x");
        let long = "w".repeat(50);
        assert_eq!(wrap(&long, Some(22), ""), long);
    }

    #[test]
    fn styles_are_sgr_sequences_around_the_text_and_padding_counts_the_text() {
        assert_eq!(paint(ERROR, "x"), "\x1b[1m\x1b[31mx\x1b[0m");
        assert_eq!(pad(GOOD, "ok", 4), "\x1b[32mok  \x1b[0m");
    }
}
