//! The checks on small inputs, through a test format whose records are
//! `{"id", "parent", "seq", "calls", "results"}`, so each rule is seen on its own.

use std::borrow::Cow;
use std::path::Path;

use super::scan::{ScanOptions, scan};
use super::*;
use crate::formats::{
    Confidence, HeaderRule, Input, Keys, Parent, ReadError, ReadOutcome, Reader, Rules,
};

struct Test;

impl Format for Test {
    fn name(&self) -> &'static str {
        "test"
    }
    fn description(&self) -> &'static str {
        "test"
    }
    fn tool(&self) -> &'static str {
        "test"
    }
    fn rules(&self) -> &'static Rules {
        const RULES: Rules = Rules {
            jsonl: true,
            ..Rules::DOCUMENT
        };
        &RULES
    }
    fn reader(&self) -> Option<&dyn Reader> {
        Some(self)
    }
}

impl Reader for Test {
    fn detect(&self, _: Option<&Path>, _: &[u8]) -> Confidence {
        0
    }
    fn read(&self, _: &Input) -> Result<ReadOutcome, ReadError> {
        unreachable!()
    }
    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        let v: serde_json::Value = serde_json::from_slice(record).ok()?;
        let s = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(|x| Cow::Owned(x.to_string()))
        };
        let list = |k: &str| -> Vec<Cow<'a, str>> {
            v.get(k)
                .and_then(|x| x.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(|x| Cow::Owned(x.to_string()))
                        .collect()
                })
                .unwrap_or_default()
        };
        Some(Keys {
            id: s("id"),
            parent: match v.get("parent") {
                Some(serde_json::Value::Null) => Parent::Root,
                Some(serde_json::Value::String(p)) => Parent::Id(Cow::Owned(p.clone())),
                _ => Parent::None,
            },
            session_id: s("session"),
            kind: s("kind"),
            seq: v.get("seq").and_then(|x| x.as_u64()),
            calls: list("calls"),
            results: list("results"),
            ..Keys::default()
        })
    }
}

/// Every finding code for `lines`, read in blocks of `block` bytes.
fn codes(lines: &[&str], block: usize) -> Vec<(&'static str, Option<u64>)> {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let options = ScanOptions {
        block_size: block,
        ..ScanOptions::default()
    };
    let mut s = scan(text.as_bytes(), &Test, options, &|_| {}).unwrap();
    let mut issues = Capped::default();
    let check = CheckOptions::default();
    check_jsonl(&mut s, &Test, &check, &mut issues);
    issues
        .into_issues()
        .iter()
        .map(|i| (i.code, i.line))
        .collect()
}

#[test]
fn a_clean_chain_has_no_findings() {
    let lines = [
        r#"{"id":"a","parent":null,"seq":1}"#,
        r#"{"id":"b","parent":"a","seq":2,"calls":["c1"]}"#,
        r#"{"id":"c","parent":"b","seq":3,"results":["c1"]}"#,
    ];
    for block in [1, 10, 1 << 20] {
        assert_eq!(codes(&lines, block), [], "block {block}");
    }
}

/// A CRLF run is one finding in any blocks, also when a blank line in it is found between the
/// run's two halves (found by the libFuzzer target `fsck`: in blocks of 1 byte, `\r\n\r\n`
/// gave two runs of one line).
#[test]
fn a_crlf_run_with_blank_lines_is_one_finding_in_any_blocks() {
    let text = "\r\n\r\n{\"id\":\"a\",\"parent\":null}\r\n\r\n{\"id\":\"b\",\"parent\":\"a\"}\r\n";
    let issues = |block_size| {
        let options = ScanOptions {
            block_size,
            ..ScanOptions::default()
        };
        let mut s = scan(text.as_bytes(), &Test, options, &|_| {}).unwrap();
        let mut issues = Capped::default();
        check_jsonl(&mut s, &Test, &CheckOptions::default(), &mut issues);
        let mut issues = issues.into_issues();
        sort(&mut issues);
        issues
    };
    let whole = issues(1 << 20);
    let crlf: Vec<_> = whole.iter().filter(|i| i.code == "crlf").collect();
    assert_eq!(crlf.len(), 1, "{whole:?}");
    assert!(crlf[0].message.starts_with("5 line(s)"), "{whole:?}");
    for block in [1, 2, 3, 5, 8] {
        assert_eq!(issues(block), whole, "blocks of {block}");
    }
}

#[test]
fn sequence_numbers_must_increase_also_across_blocks() {
    let lines = [
        r#"{"id":"a","parent":null,"seq":1}"#,
        r#"{"id":"b","parent":"a","seq":2}"#,
        r#"{"id":"c","parent":"b","seq":2}"#,
        r#"{"id":"d","parent":"c","seq":1}"#,
    ];
    for block in [1, 40, 1 << 20] {
        let found = codes(&lines, block);
        let seq: Vec<_> = found
            .iter()
            .filter(|c| c.0 == "seq-not-increasing")
            .collect();
        assert_eq!(
            seq,
            [
                &("seq-not-increasing", Some(3)),
                &("seq-not-increasing", Some(4))
            ],
            "block {block}"
        );
    }
}

#[test]
fn orphan_cycle_and_roots() {
    let orphan = [r#"{"id":"a","parent":null}"#, r#"{"id":"c","parent":"b"}"#];
    assert_eq!(codes(&orphan, 1 << 20), [("orphan-parent", Some(2))]);
    let cycle = [
        r#"{"id":"a","parent":"c"}"#,
        r#"{"id":"b","parent":"a"}"#,
        r#"{"id":"c","parent":"b"}"#,
    ];
    assert_eq!(codes(&cycle, 1 << 20), [("cycle", Some(1))]);
    let roots = [r#"{"id":"a","parent":null}"#, r#"{"id":"b","parent":null}"#];
    let found = codes(&roots, 1 << 20);
    assert!(found.contains(&("several-roots", Some(2))), "{found:?}");
    assert!(found.contains(&("dead-branches", Some(1))), "{found:?}");
}

#[test]
fn the_same_id_may_repeat_when_the_records_agree() {
    let agree = [
        r#"{"id":"a","parent":null}"#,
        r#"{"id":"b","parent":"a"}"#,
        r#"{"id":"b","parent":"a"}"#,
    ];
    assert_eq!(codes(&agree, 1 << 20), []);
    let disagree = [
        r#"{"id":"a","parent":null}"#,
        r#"{"id":"b","parent":"a"}"#,
        r#"{"id":"b","parent":null}"#,
    ];
    assert!(codes(&disagree, 1 << 20).contains(&("duplicate-id-conflict", Some(3))));
}

#[test]
fn tool_calls_and_results_must_pair() {
    let lines = [
        r#"{"id":"a","parent":null,"calls":["c1","c2"]}"#,
        r#"{"id":"b","parent":"a","results":["c2","c3"]}"#,
    ];
    let found = codes(&lines, 1 << 20);
    assert!(
        found.contains(&("tool-call-unanswered", Some(1))),
        "{found:?}"
    );
    assert!(
        found.contains(&("tool-result-orphan", Some(2))),
        "{found:?}"
    );
}

#[test]
fn sessions_are_compared_with_the_first_record() {
    let lines = [
        r#"{"id":"a","parent":null,"session":"s"}"#,
        r#"{"id":"b","parent":"a","session":"s"}"#,
        r#"{"id":"c","parent":"b","session":"t"}"#,
    ];
    assert_eq!(codes(&lines, 1 << 20), [("session-id-mismatch", Some(3))]);
}

#[test]
fn orphans_of_one_lost_record_stay_siblings() {
    let text = [
        r#"{"id":"a","parent":null}"#,
        r#"{"id":"b","parent":"lost"}"#,
        r#"{"id":"c","parent":"lost"}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let mut s = scan(text.as_bytes(), &Test, ScanOptions::default(), &|_| {}).unwrap();
    let mut issues = Capped::default();
    let plan = check_jsonl(&mut s, &Test, &CheckOptions::default(), &mut issues);
    let a = s.ids.get(&ident::Ident::new("a")).unwrap();
    for id in ["b", "c"] {
        let n = s.ids.get(&ident::Ident::new(id)).unwrap();
        assert_eq!(plan.relink.get(&n), Some(&scan::Link::Id(a)), "{id}");
    }
}

#[test]
fn a_missing_header_is_reported_for_formats_that_need_one() {
    struct Headed;
    impl Format for Headed {
        fn name(&self) -> &'static str {
            "headed"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn tool(&self) -> &'static str {
            "test"
        }
        fn rules(&self) -> &'static Rules {
            const RULES: Rules = Rules {
                jsonl: true,
                header: Some(HeaderRule {
                    kind: "head",
                    missing: "the tool refuses it",
                    first: true,
                }),
                ..Rules::DOCUMENT
            };
            &RULES
        }
        fn reader(&self) -> Option<&dyn Reader> {
            Some(self)
        }
    }
    impl Reader for Headed {
        fn detect(&self, _: Option<&Path>, _: &[u8]) -> Confidence {
            0
        }
        fn read(&self, _: &Input) -> Result<ReadOutcome, ReadError> {
            unreachable!()
        }
        fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
            Test.keys(record)
        }
    }
    let found = |text: &str| {
        let mut s = scan(text.as_bytes(), &Headed, ScanOptions::default(), &|_| {}).unwrap();
        let mut issues = Capped::default();
        check_jsonl(&mut s, &Headed, &CheckOptions::default(), &mut issues);
        issues
            .into_issues()
            .iter()
            .any(|i| i.code == "header-missing")
    };
    assert!(!found("{\"kind\":\"head\"}\n{\"id\":\"a\"}\n"));
    assert!(found("{\"id\":\"a\"}\n{\"kind\":\"head\"}\n"));
    assert!(found(""), "an empty file has no header either");
}

/// `fsck --codes` and README document [`CODES`]: every code the checks can report must be
/// there (two were missing once).
#[test]
fn every_code_the_checks_report_is_documented() {
    let sources = [
        include_str!("conversation.rs"),
        include_str!("document.rs"),
        include_str!("mod.rs"),
        include_str!("scan.rs"),
        include_str!("tree.rs"),
        include_str!("issue.rs"),
        include_str!("../store/tools/codex/state/index.rs"),
    ];
    let mut found = Vec::new();
    for src in sources {
        for (i, _) in src.match_indices("Issue::new(") {
            let rest = src[i + "Issue::new(".len()..].trim_start();
            if let Some(code) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                found.push(code.to_string());
            }
        }
    }
    found.extend(
        [
            crate::records::Damage::Bom,
            crate::records::Damage::BlankLine,
            crate::records::Damage::TornTail,
            crate::records::Damage::MissingFinalNewline,
        ]
        .iter()
        .map(|d| issue::code_of(d).to_string()),
    );
    assert!(found.len() > 15, "the scan found too few codes: {found:?}");
    for code in found {
        assert!(
            CODES.iter().any(|(c, _, _)| *c == code),
            "`{code}` is reported but not in CODES"
        );
    }
}

#[test]
fn a_million_blank_lines_are_counted_not_listed() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"id\":\"a\",\"parent\":null}\n");
    bytes.extend(std::iter::repeat_n(b'\n', 1_000_000));
    bytes.extend_from_slice(b"{\"id\":\"b\",\"parent\":\"a\"}\n");
    let options = ScanOptions {
        block_size: 64 << 10,
        ..ScanOptions::default()
    };
    let mut s = scan(&bytes[..], &Test, options, &|_| {}).unwrap();
    assert!(s.findings.listed.len() <= capped::LISTED_PER_KIND);
    let mut issues = Capped::default();
    check_jsonl(&mut s, &Test, &CheckOptions::default(), &mut issues);
    let issues = issues.into_issues();
    let blank: Vec<_> = issues.iter().filter(|i| i.code == "blank-line").collect();
    assert_eq!(blank.len(), capped::LISTED_PER_KIND + 1);
    assert_eq!(Issue::total(&issues), 1_000_000);
    let summary = blank.last().unwrap();
    assert_eq!(
        summary.unlisted,
        Some(1_000_000 - capped::LISTED_PER_KIND as u64)
    );
    assert_eq!(
        summary.line, None,
        "a summary has no single place: {summary:?}"
    );
    assert!(summary.fixable());
}
