//! Human output of what a reader noticed and what a writer could not carry (on stderr, so
//! standard output stays clean for data).

use sessiontool::diag::{Diagnostic, LossReport};

/// How many diagnostics of one file to print before summarising the rest.
const MAX_SHOWN: usize = 20;

pub fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics.iter().take(MAX_SHOWN) {
        eprintln!("{d}");
    }
    if diagnostics.len() > MAX_SHOWN {
        eprintln!(
            "... and {} more (use --json to see all)",
            diagnostics.len() - MAX_SHOWN
        );
    }
}

pub fn print_losses(target: &str, losses: &LossReport) {
    if losses.is_empty() {
        return;
    }
    eprintln!("not carried into {target}:");
    for l in &losses.losses {
        eprintln!("  {:>5} × {} [{}]", l.count, l.message, l.code);
    }
}

/// A `--json` document on standard output, pretty-printed, with a final newline.
pub fn print_json(doc: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(doc)
        .expect("documents hold only strings, numbers and paths written lossily");
    println!("{text}");
}
