//! What `fsck` prints for people: each damaged file with its findings and fixes (findings
//! alike on one line grouped), a summary that ends with the commands to run next, and the
//! list of codes. `-q` leaves the files with errors and their errors.

use anstream::println;
use anstyle::Style;
use sessiontool::check::{self, Issue};
use sessiontool::diag::Severity;

use super::{Args, Checked, EXIT_UNCORRECTED, Summary};
use crate::error::CliError;
use crate::escape;
use crate::store_args::shell_word;
use crate::style::{self, ERROR, GOOD, HEADING, HINT, NOTE, WARNING};

/// Findings printed per file (all with -v; --json always has all).
const MAX_SHOWN: usize = 20;

/// The findings not printed one by one, counted by code.
fn print_rest(rest: &[Issue]) {
    let mut counts: Vec<(&str, u64)> = Vec::new();
    for i in rest {
        match counts.iter_mut().find(|(c, _)| *c == i.code) {
            Some((_, n)) => *n += i.weight(),
            None => counts.push((i.code, i.weight())),
        }
    }
    let list: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    let how = if rest.iter().any(|i| i.unlisted.is_some()) {
        format!(
            "-v or --json lists the first {} of each kind",
            check::capped::LISTED_PER_KIND
        )
    } else {
        "-v or --json lists them all".to_string()
    };
    println!(
        "  ... and {} more: {} ({how})",
        Issue::total(rest),
        list.join(", ")
    );
}

fn severity_style(severity: Severity) -> Style {
    match severity {
        Severity::Error => ERROR,
        Severity::Warning => WARNING,
        Severity::Info => NOTE,
    }
}

pub(super) fn print_file(c: &Checked, verbose: bool) {
    let quiet = style::quiet();
    let r = &c.report;
    let file = escape::line(&r.file);
    if c.skipped {
        if quiet {
            return;
        }
        if let Some(reason) = &c.reason {
            println!("{file}: skipped: {reason}");
        } else if verbose {
            println!("{file}: not a session file of a supported format, skipped");
        }
        return;
    }
    if r.issues.is_empty() && c.error.is_none() {
        if verbose && !quiet {
            println!(
                "{file}: {} ({}, {} records)",
                style::paint(GOOD, "ok"),
                r.format.unwrap_or("?"),
                r.records
            );
        }
        return;
    }
    if let (Some(e), None) = (&c.error, r.format) {
        // Not checked at all: the error says which file and why.
        println!("{} {}", style::paint(ERROR, "error:"), escape::line(e));
        return;
    }
    let errors = r.count(Severity::Error);
    if quiet && errors == 0 && c.error.is_none() {
        return;
    }
    let mut counts = Vec::new();
    for (sev, name) in [
        (Severity::Error, "error"),
        (Severity::Warning, "warning"),
        (Severity::Info, "note"),
    ] {
        let n = r.count(sev);
        if n > 0 {
            let text = format!("{n} {name}{}", if n == 1 { "" } else { "s" });
            counts.push(style::paint(severity_style(sev), &text));
        }
    }
    println!(
        "{} ({}, {} records, {} bytes): {}",
        style::paint(HEADING, &file),
        r.format.unwrap_or("unknown format"),
        r.records,
        r.bytes,
        if counts.is_empty() {
            style::paint(GOOD, "ok")
        } else {
            counts.join(", ")
        }
    );
    let repaired = c.repair.as_ref().is_some_and(|r| r.changed);
    let issues: Vec<&Issue> = r
        .issues
        .iter()
        .filter(|i| !quiet || i.severity == Severity::Error)
        .collect();
    let groups = if verbose {
        issues.iter().map(|i| (*i, 1)).collect()
    } else {
        alike(&issues)
    };
    let shown = if verbose { groups.len() } else { MAX_SHOWN };
    for (i, n) in groups.iter().take(shown) {
        print_issue(i, *n, repaired);
    }
    if groups.len() > shown {
        let first_hidden: usize = groups[..shown].iter().map(|(_, n)| n).sum();
        let rest: Vec<Issue> = issues[first_hidden..]
            .iter()
            .map(|i| (*i).clone())
            .collect();
        print_rest(&rest);
    }
    if let Some(rep) = &c.repair
        && !quiet
    {
        print_repair(rep);
    }
    if let Some(e) = &c.error {
        println!(
            "  {} {}",
            style::paint(ERROR, "not repaired:"),
            escape::line(e)
        );
    }
}

/// Consecutive findings alike (one code, severity and fix on one line, such as every
/// unanswered call of one message) as one entry with their count.
fn alike<'a>(issues: &[&'a Issue]) -> Vec<(&'a Issue, usize)> {
    let mut groups: Vec<(&Issue, usize)> = Vec::new();
    for &i in issues {
        match groups.last_mut() {
            Some((first, n))
                if first.line.is_some()
                    && (first.line, first.code, first.severity, &first.fix)
                        == (i.line, i.code, i.severity, &i.fix)
                    && first.unlisted.is_none()
                    && i.unlisted.is_none() =>
            {
                *n += 1;
            }
            _ => groups.push((i, 1)),
        }
    }
    groups
}

fn print_repair(rep: &sessiontool::repair::Repaired) {
    if rep.changed {
        println!(
            "  {}: {} fix(es) applied; {} records before, {} after",
            style::paint(GOOD, "repaired"),
            Issue::total(&rep.fixed),
            rep.records_before,
            rep.records_after
        );
        if let Some(b) = &rep.backup {
            println!("  original kept as {}", escape::path(b));
        }
        if let Some(s) = &rep.sidecar {
            println!("  dropped bytes saved in {}", escape::path(s));
        }
        if rep.carried_over > 0 {
            println!(
                "  {} byte(s) a tool appended while the repair ran were carried into the repaired file: check it again (sessiontool fsck {})",
                rep.carried_over,
                escape::line(&shell_word(&rep.file))
            );
        }
        if let Some(w) = &rep.still_written {
            println!(
                "  {} {}",
                style::paint(WARNING, "warning:"),
                escape::line(w)
            );
        }
    } else if !rep.fixed.is_empty() {
        println!(
            "  dry run: {} fix(es) would be applied; nothing changed",
            Issue::total(&rep.fixed)
        );
    }
}

/// One finding (`more` alike ones after it on the same line are counted, not repeated).
fn print_issue(i: &Issue, alike: usize, repaired: bool) {
    let at = match (i.line, i.offset) {
        (Some(l), Some(o)) => format!("line {l} (byte {o})"),
        (Some(l), None) => format!("line {l}"),
        _ => "file".to_string(),
    };
    let more = match alike {
        1 => String::new(),
        n => format!(" (and {} more alike on this line; -v lists them)", n - 1),
    };
    println!(
        "  {at:<24} {} {:<22} {}{more}",
        style::pad(severity_style(i.severity), i.severity.as_str(), 7),
        i.code,
        escape::line(&i.message)
    );
    if let Some(fix) = &i.fix {
        let verb = match (repaired, alike) {
            (true, 1) => "fixed",
            (true, _) => "fixed (each)",
            (false, 1) => "fix",
            (false, _) => "fix (each)",
        };
        println!(
            "  {:<24} {} {}",
            "",
            style::paint(GOOD, &format!("{verb}:")),
            escape::line(fix)
        );
    }
}

pub(super) fn print_summary(s: &Summary, args: &Args, code: i32) {
    if style::quiet() {
        return;
    }
    let mut line = format!(
        "checked {} file(s), {} bytes, {} records: {} damaged",
        s.files - s.unreadable,
        s.bytes,
        s.records,
        s.damaged
    );
    if s.unreadable > 0 {
        line.push_str(&format!(
            "; {} could not be checked (see above)",
            s.unreadable
        ));
    }
    let other_skipped = s.skipped - s.not_regular;
    if other_skipped > 0 {
        line.push_str(&format!(
            "; {other_skipped} not session files of a supported format (skipped; -v lists them)"
        ));
    }
    if s.not_regular > 0 {
        line.push_str(&format!(
            "; {} not regular files (skipped, listed above)",
            s.not_regular
        ));
    }
    println!("{line}");
    if s.repaired > 0 {
        println!(
            "{}",
            style::paint(GOOD, &format!("repaired {} file(s)", s.repaired))
        );
    }
    let not_repaired = s.failed - s.unreadable;
    if not_repaired > 0 {
        println!(
            "{}",
            style::paint(
                ERROR,
                &format!("{not_repaired} file(s) could not be repaired (see above)")
            )
        );
    }
    for (command, why) in next_steps(s, args, code) {
        println!(
            "{} {command}    {}",
            style::paint(HINT, "next:"),
            style::paint(NOTE, &format!("# {why}"))
        );
    }
}

/// The commands to run next, as they can be typed: see what a repair would change, then
/// repair.
fn next_steps(s: &Summary, args: &Args, code: i32) -> Vec<(String, String)> {
    let mut paths: Vec<String> = args
        .paths
        .iter()
        .map(|p| escape::line(&shell_word(&p.display().to_string())).into_owned())
        .collect();
    if paths.first().is_some_and(|p| p.starts_with('-')) {
        paths.insert(0, "--".into());
    }
    let paths = paths.join(" ");
    let from = match &args.from {
        Some(f) => format!(" --from {f}"),
        None => String::new(),
    };
    let mut steps = Vec::new();
    if code & EXIT_UNCORRECTED != 0 && s.fixable > 0 && !args.repair {
        steps.push((
            format!("sessiontool fsck --repair -n{from} {paths}"),
            format!("see what a repair would change ({} fixable)", s.fixable),
        ));
        steps.push((
            format!("sessiontool fsck --repair{from} {paths}"),
            "fix them; each original is kept as <file>.bak-<time>".into(),
        ));
    } else if args.dry_run && s.fixable > 0 {
        steps.push((
            format!("sessiontool fsck --repair{from} {paths}"),
            "apply these fixes".into(),
        ));
    }
    steps
}

pub(super) fn print_codes(json: bool) -> Result<i32, CliError> {
    if json {
        let list: Vec<_> = check::CODES
            .iter()
            .map(|(c, s, m)| serde_json::json!({"code": c, "severity": s, "meaning": m}))
            .collect();
        let doc = serde_json::json!({"schema": "sessiontool.codes/1", "codes": list});
        crate::report::print_json(&doc);
    } else {
        for (code, severity, meaning) in check::CODES {
            println!(
                "{code:<22} {} {meaning}",
                style::pad(severity_style(*severity), severity.as_str(), 7)
            );
        }
    }
    Ok(0)
}
