//! The throughput bench's formatting helpers (benches/throughput/format.rs): the bench runs only
//! under `cargo bench`, so its figures' formatting is checked here, in the default test run.

#[path = "../benches/throughput/format.rs"]
mod format;

use std::ffi::OsString;

use format::*;

#[test]
fn median_of_odd_even_and_no_values() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert!(median(&[]).is_nan());
}

#[test]
fn numbers_are_grouped_and_rounded_as_the_tables_show_them() {
    assert_eq!(count(0), "0");
    assert_eq!(count(86), "86");
    assert_eq!(count(1_234_567), "1,234,567");
    assert_eq!(thousands(16.74), "16.7");
    assert_eq!(thousands(12_345.6), "12,346");
    assert_eq!(thousands(f64::INFINITY), "—");
    assert_eq!(si(1_234_567.0), "1.23 M");
    assert_eq!(si(8.4e9), "8.40 G");
    assert_eq!(size(8_400_000_000), "8.40 GB");
    assert_eq!(size(702_000_000), "702 MB");
    assert_eq!(size(6_700_000), "6.7 MB");
    assert_eq!(times(8.4), "8.4×");
    assert_eq!(times(0.045), "0.04×");
    assert_eq!(secs(2.171), "2.17 s");
    assert_eq!(secs(26.04), "26.0 s");
}

#[test]
fn a_failure_quotes_the_last_line_of_standard_error_escaped_and_cut() {
    assert_eq!(
        last_line("WARN x\nError: Session has no messages.\n\n").as_deref(),
        Some("Error: Session has no messages.")
    );
    assert_eq!(last_line("  \n"), None);
    // A terminal escape is shown as `?`; a `|` would end a Markdown table cell.
    assert_eq!(last_line("a|b\u{1b}[2m").as_deref(), Some("a\\|b?[2m"));
    let long = "x".repeat(200);
    assert_eq!(last_line(&long).map(|l| l.chars().count()), Some(121));
}

#[test]
fn a_command_line_is_quoted_as_a_shell_would_read_it_back() {
    let argv: Vec<OsString> = ["casr", "resume", "cod", "--source", "/a b/it's.jsonl", ""]
        .into_iter()
        .map(OsString::from)
        .collect();
    let env = vec![("HOME".to_string(), "/tmp/h".to_string())];
    assert_eq!(
        shell_line(&env, &argv),
        r"HOME=/tmp/h casr resume cod --source '/a b/it'\''s.jsonl' ''"
    );
    let tricky = vec![OsString::from("$(rm -rf x)"), OsString::from("a;b")];
    assert_eq!(shell_line(&[], &tricky), "'$(rm -rf x)' 'a;b'");
}
