//! Progress bars on standard error, only on a terminal and never with --json.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

pub fn bar(len: u64, unit: &str, json: bool) -> ProgressBar {
    if json || len < 2 || crate::style::quiet() || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {unit} {{elapsed}}"))
    {
        bar.set_style(style);
    }
    bar
}

/// A bar counting bytes, for jobs whose files differ wildly in size.
pub fn bytes_bar(total: u64, json: bool) -> ProgressBar {
    if json || total < (64 << 20) || crate::style::quiet() || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {elapsed}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// A bar for the catalog's reading of sessions (list, recover), sized when it starts.
pub fn catalog_tick(json: bool) -> (ProgressBar, sessiontool::store::catalog::Tick) {
    let bar = if json || crate::style::quiet() || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} sessions {elapsed}") {
            bar.set_style(style);
        }
        bar
    };
    let shown = bar.clone();
    // A handful of sessions reads in a blink: a bar would only flicker.
    let tick = sessiontool::store::catalog::Tick(std::sync::Arc::new(move |done, total| {
        if total >= 50 {
            shown.set_length(total as u64);
            shown.set_position(done as u64);
        }
    }));
    (bar, tick)
}
