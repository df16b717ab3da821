//! What `fsck` prints for people: each damaged file with its findings and fixes, a summary
//! that ends with the command to run next, and the list of codes.

use sessiontool::check::{self, Issue};
use sessiontool::diag::Severity;

use super::{Args, Checked, EXIT_UNCORRECTED, Summary};
use crate::error::CliError;
use crate::escape;

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

pub(super) fn print_file(c: &Checked, verbose: bool) {
    let r = &c.report;
    let file = escape::line(&r.file);
    if c.skipped {
        if let Some(reason) = &c.reason {
            println!("{file}: skipped: {reason}");
        } else if verbose {
            println!("{file}: not a session file of a supported format, skipped");
        }
        return;
    }
    if r.issues.is_empty() && c.error.is_none() {
        if verbose {
            println!(
                "{file}: ok ({}, {} records)",
                r.format.unwrap_or("?"),
                r.records
            );
        }
        return;
    }
    if let (Some(e), None) = (&c.error, r.format) {
        // Not checked at all: the error says which file and why.
        println!("{}", escape::line(e));
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
            counts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
        }
    }
    println!(
        "{file} ({}, {} records, {} bytes): {}",
        r.format.unwrap_or("unknown format"),
        r.records,
        r.bytes,
        if counts.is_empty() {
            "ok".to_string()
        } else {
            counts.join(", ")
        }
    );
    let repaired = c.repair.as_ref().is_some_and(|r| r.changed);
    let shown = if verbose { r.issues.len() } else { MAX_SHOWN };
    for i in r.issues.iter().take(shown) {
        print_issue(i, repaired);
    }
    if r.issues.len() > shown {
        print_rest(&r.issues[shown..]);
    }
    if let Some(rep) = &c.repair {
        if rep.changed {
            println!(
                "  repaired: {} fix(es) applied; {} records before, {} after",
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
                    escape::line(&rep.file)
                );
            }
            if let Some(w) = &rep.still_written {
                println!("  warning: {w}");
            }
        } else if !rep.fixed.is_empty() {
            println!(
                "  dry run: {} fix(es) would be applied; nothing changed",
                Issue::total(&rep.fixed)
            );
        }
    }
    if let Some(e) = &c.error {
        println!("  not repaired: {}", escape::line(e));
    }
}

fn print_issue(i: &Issue, repaired: bool) {
    let at = match (i.line, i.offset) {
        (Some(l), Some(o)) => format!("line {l} (byte {o})"),
        (Some(l), None) => format!("line {l}"),
        _ => "file".to_string(),
    };
    println!(
        "  {at:<24} {:<7} {:<22} {}",
        i.severity.as_str(),
        i.code,
        escape::line(&i.message)
    );
    if let Some(fix) = &i.fix {
        let verb = if repaired { "fixed" } else { "fix" };
        println!("  {:<24} {verb}: {}", "", escape::line(fix));
    }
}

pub(super) fn print_summary(s: &Summary, args: &Args, code: i32) {
    let mut line = format!(
        "checked {} file(s), {} bytes, {} records: {} damaged",
        s.files, s.bytes, s.records, s.damaged
    );
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
        println!("repaired {} file(s)", s.repaired);
    }
    if s.failed > 0 {
        println!(
            "{} file(s) could not be checked or repaired (see above)",
            s.failed
        );
    }
    let paths = args
        .paths
        .iter()
        .map(|p| escape::path(p))
        .collect::<Vec<_>>()
        .join(" ");
    if code & EXIT_UNCORRECTED != 0 && s.fixable > 0 && !args.repair {
        println!(
            "{} issue(s) can be fixed; see what would change: sessiontool fsck --repair -n {paths}",
            s.fixable
        );
        println!("then fix them: sessiontool fsck --repair {paths}");
    } else if args.dry_run && s.fixable > 0 {
        println!("to apply: sessiontool fsck --repair {paths}");
    }
}

pub(super) fn print_codes(json: bool) -> Result<i32, CliError> {
    if json {
        let list: Vec<_> = check::CODES
            .iter()
            .map(|(c, s, m)| serde_json::json!({"code": c, "severity": s, "meaning": m}))
            .collect();
        let doc = serde_json::json!({"schema": "sessiontool.codes/1", "codes": list});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        for (code, severity, meaning) in check::CODES {
            println!("{code:<22} {:<7} {meaning}", severity.as_str());
        }
    }
    Ok(0)
}
