//! Output settings every command shares: colour (`--color`, `NO_COLOR`, only on a terminal by
//! default), quiet (`-q`: errors only), and the terminal width.

use std::io::IsTerminal;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub color: bool,
    pub quiet: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Decides once, at start-up.
pub fn init(choice: ColorChoice, quiet: bool) {
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let _ = SETTINGS.set(Settings { color, quiet });
}

pub fn settings() -> Settings {
    *SETTINGS.get().unwrap_or(&Settings {
        color: false,
        quiet: false,
    })
}

/// Text in an ANSI style when colour is on.
fn paint(code: &str, text: &str) -> String {
    if settings().color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub fn bold(text: &str) -> String {
    paint("1", text)
}

pub fn dim(text: &str) -> String {
    paint("2", text)
}

pub fn red(text: &str) -> String {
    paint("1;31", text)
}

pub fn yellow(text: &str) -> String {
    paint("33", text)
}

pub fn green(text: &str) -> String {
    paint("32", text)
}

pub fn cyan(text: &str) -> String {
    paint("36", text)
}

pub fn magenta(text: &str) -> String {
    paint("35", text)
}

/// The width to wrap text to: `--width`, else the terminal's (standard output, or standard
/// error when the output goes to a pager), else `$COLUMNS`; `None`: do not wrap.
pub fn width(asked: Option<usize>) -> Option<usize> {
    if asked.is_some() {
        return asked.filter(|w| *w > 0);
    }
    #[cfg(unix)]
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: TIOCGWINSZ fills a winsize for a terminal and fails otherwise.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) } == 0 && size.ws_col > 0 {
            return Some(size.ws_col as usize);
        }
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
}
