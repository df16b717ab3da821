//! Human output of what a reader noticed and what a writer could not carry (on stderr, so
//! standard output stays clean for data).

use anstream::eprintln;
use sessiontool::diag::{Diagnostic, LossReport, Severity};

use crate::escape;
use crate::style::{self, ERROR, NOTE, WARNING};

/// How many diagnostics of one file to print before summarising the rest.
const MAX_SHOWN: usize = 20;

pub fn print_diagnostics(diagnostics: &[Diagnostic]) {
    let quiet = style::quiet();
    // Notes (what a reader did as the tool does, such as merging records) are counted, not
    // listed; -q leaves errors only.
    let shown: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| match d.severity {
            Severity::Error => true,
            Severity::Warning => !quiet,
            Severity::Info => false,
        })
        .collect();
    for d in shown.iter().take(MAX_SHOWN) {
        // A diagnostic names the file and quotes what it read: escaped for the terminal.
        let line = escape::line(&d.to_string()).into_owned();
        eprintln!(
            "{}",
            match d.severity {
                Severity::Error => style::paint(ERROR, &line),
                Severity::Warning => style::paint(WARNING, &line),
                Severity::Info => line,
            }
        );
    }
    if shown.len() > MAX_SHOWN && !quiet {
        eprintln!(
            "... and {} more (use --json to see all)",
            shown.len() - MAX_SHOWN
        );
    }
    let notes = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Info)
        .count();
    if notes > 0 && !quiet {
        eprintln!(
            "{}",
            style::paint(
                NOTE,
                &format!("{notes} note(s) on how the file was read (--json lists them)")
            )
        );
    }
}

/// What a target could not hold; `subject` names the file when several are converted.
pub fn print_losses(subject: Option<&str>, target: &str, losses: &LossReport) {
    if losses.is_empty() || style::quiet() {
        return;
    }
    let head = match subject {
        Some(file) => format!("{}: not carried into {target}:", escape::line(file)),
        None => format!("not carried into {target}:"),
    };
    eprintln!("{}", style::paint(WARNING, &head));
    for l in &losses.losses {
        eprintln!(
            "  {:>5} × {} [{}]",
            l.count,
            escape::line(&l.message),
            l.code
        );
    }
}

/// A `--json` document on standard output, pretty-printed, with a final newline; written as
/// it is serialized, never held whole (a session's can be gigabytes).
pub fn print_json(doc: &impl serde::Serialize) {
    write_json(std::io::stdout().lock(), doc);
}

/// The same on standard error (`convert -o -`: the session itself goes to standard output).
pub fn eprint_json(doc: &impl serde::Serialize) {
    write_json(std::io::stderr().lock(), doc);
}

/// Pretty JSON whose strings decode exactly, with what a terminal would act on escaped
/// ([`crate::escape::JsonFormatter`]).
fn write_json(to: impl std::io::Write, doc: &impl serde::Serialize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, to);
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, crate::escape::JsonFormatter::default());
    let written = doc
        .serialize(&mut serializer)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush());
    if let Err(e) = written {
        // What was written is cut off: say so, and fail (a closed pipe ends the process first).
        eprintln!("sessiontool: error: cannot write standard output: {e}");
        std::process::exit(crate::error::EXIT_OUTPUT);
    }
}

/// An RFC 3339 time as `YYYY-MM-DD HH:MM` for tables; `-` when unknown.
pub fn short_time(t: Option<&str>) -> String {
    match t {
        Some(t) => t.replace('T', " ").chars().take(16).collect(),
        None => "-".into(),
    }
}

/// What `--max-tokens` did, in one line (the loss report lists what was left out).
pub fn print_budget(b: &sessiontool::convert::budget::Budget) {
    if crate::style::quiet() {
        return;
    }
    if b.left_out == 0 && b.other_branches == 0 {
        eprintln!(
            "--max-tokens {}: the session fits (about {} tokens, estimated); nothing left out",
            b.max_tokens, b.estimated
        );
    } else {
        eprintln!(
            "--max-tokens {}: kept about {} of {} tokens (estimated): the first prompt and the newest {} of {} turns{}; {} message(s) and event(s) left out",
            b.max_tokens,
            b.kept,
            b.estimated,
            b.turns_kept,
            b.turns,
            if b.cut_within_turn {
                " (that one cut to its newest messages)"
            } else {
                ""
            },
            b.left_out + b.other_branches
        );
    }
}
