//! String-aware splitting of one line segment into JSON values.
//!
//! Only runs on bytes that are not one valid JSON value, so it may be simple rather than fast;
//! what it must be is linear in practice and never panic.

use std::ops::Range;

use serde::de::IgnoredAny;

/// JSON's whitespace.
pub(crate) fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The range of `s` with JSON whitespace trimmed from both ends (empty range at 0 if none left).
pub(crate) fn trim_ws(s: &[u8]) -> Range<usize> {
    let Some(start) = s.iter().position(|&b| !is_json_ws(b)) else {
        return 0..0;
    };
    let end = s
        .iter()
        .rposition(|&b| !is_json_ws(b))
        .map_or(start, |e| e + 1);
    start..end
}

/// One JSON value, nothing else but whitespace: the validity check of every line. The grammar
/// scan accepts what serde_json accepted here (strings are not checked for UTF-8: the records
/// layer replaces what is not) and is several times faster; `validity_tests` holds the two
/// together.
pub(crate) fn is_valid(s: &[u8]) -> bool {
    crate::json::scan::value_end(s, 0).is_ok_and(|end| skip_ws(s, end) == s.len())
}

/// End (exclusive) of the object or array opening at `s[start]`, found by a depth scan that
/// skips string contents (with backslash escapes). None when the bytes end first or a closer
/// has no opener. Does not check that brackets match: the caller validates the piece.
pub(crate) fn scan_value_end(s: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < s.len() {
        match s[i] {
            b'"' => {
                i = string_end(s, i + 1)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index after the `"` closing a string whose contents start at `i`.
fn string_end(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let j = i + memchr::memchr2(b'"', b'\\', s.get(i..)?)?;
        if s[j] == b'\\' {
            i = j + 2;
        } else {
            return Some(j + 1);
        }
    }
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_json_ws(s[i]) {
        i += 1;
    }
    i
}

/// The leading records of a segment.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// Each a valid JSON object, in order, separated only by whitespace.
    pub pieces: Vec<Range<usize>>,
    /// Where the bytes that did not split start (`s.len()` when everything split).
    pub rest: usize,
    /// How many bytes were looked at (for work budgets).
    pub scanned: usize,
}

/// Splits `s` at top-level `}{` (and `} {`) into objects that are each valid JSON, from the
/// start, stopping at the first piece that does not close or is not valid.
pub(crate) fn split_objects(s: &[u8]) -> Split {
    let mut pieces = Vec::new();
    let mut pos = skip_ws(s, 0);
    let mut scanned = pos;
    while pos < s.len() && s[pos] == b'{' {
        let Some(end) = scan_value_end(s, pos) else {
            scanned = s.len();
            break;
        };
        scanned = end;
        if !is_valid(&s[pos..end]) {
            break;
        }
        pieces.push(pos..end);
        pos = skip_ws(s, end);
        scanned = pos + 1;
    }
    Split {
        pieces,
        rest: pos,
        scanned: scanned.min(s.len()),
    }
}

/// Work allowed to [`torn_prefix`]: this many bytes per byte of input, plus [`BUDGET_BASE`].
const BUDGET_FACTOR: usize = 16;
const BUDGET_BASE: usize = 1 << 20;

/// Finds a torn fragment with complete records glued after it: the earliest `p > 0` where
/// `s[p] == '{'` and `s[p..]` splits entirely into valid objects. Returns `p` and the pieces
/// (ranges into `s`).
///
/// Each candidate is first parsed with serde_json, which fails within a few bytes on a `{` that
/// is inside a string or otherwise not the start of a record, so the search is linear in
/// practice; a work budget (16 bytes per input byte plus 1 MiB) bounds the worst case, and the
/// search gives up (no salvage) when it runs out.
pub(crate) fn torn_prefix(s: &[u8]) -> Option<(usize, Vec<Range<usize>>)> {
    let mut budget = s
        .len()
        .saturating_mul(BUDGET_FACTOR)
        .saturating_add(BUDGET_BASE);
    for p in memchr::memchr_iter(b'{', s).filter(|&p| p > 0) {
        let rest = &s[p..];
        let mut stream = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
        let first = stream.next();
        let cost = match &first {
            Some(Ok(_)) => stream.byte_offset(),
            Some(Err(e)) => e.column(),
            None => 0,
        };
        budget = budget.checked_sub(cost.max(1))?;
        if !matches!(first, Some(Ok(_))) {
            continue;
        }
        let split = split_objects(rest);
        budget = budget.checked_sub(split.scanned.max(1))?;
        if split.rest == rest.len() && !split.pieces.is_empty() {
            let pieces = split
                .pieces
                .into_iter()
                .map(|r| r.start + p..r.end + p)
                .collect();
            return Some((p, pieces));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_skips_strings_and_escapes() {
        let s = br#"{"a":"}{\"}\\","b":[1,{"c":"]"}]}{"d":1}"#;
        let end = scan_value_end(s, 0).unwrap();
        assert_eq!(&s[..end], br#"{"a":"}{\"}\\","b":[1,{"c":"]"}]}"#);
        assert_eq!(scan_value_end(br#"{"a":"x"#, 0), None);
        assert_eq!(scan_value_end(br#"{"a":"x\"#, 0), None);
        assert_eq!(scan_value_end(b"}", 0), None);
    }

    #[test]
    fn split_glued_objects() {
        let s = br#"{"a":"}{"} {"b":2}	{"c":{}}"#;
        let split = split_objects(s);
        assert_eq!(split.pieces, vec![0..10, 11..18, 19..27]);
        assert_eq!(split.rest, s.len());
    }

    #[test]
    fn split_stops_at_invalid_piece() {
        let s = br#"{"a":1}{"b":2,"c"#;
        let split = split_objects(s);
        assert_eq!(split.pieces, vec![0..7]);
        assert_eq!(split.rest, 7);
        let s = br#"{"a":1}{"b" 2}{"c":3}"#;
        assert_eq!(split_objects(s).pieces, vec![0..7]);
        assert!(split_objects(b"[1][2]").pieces.is_empty());
    }

    #[test]
    fn torn_prefix_finds_earliest_record_start() {
        let s = br#"{"uuid":"a","text":"hel{"uuid":"b"}{"uuid":"c"}"#;
        let (p, pieces) = torn_prefix(s).unwrap();
        assert_eq!(p, 23);
        assert_eq!(pieces, vec![23..35, 35..47]);
        // A `{` inside the fragment's strings is not taken for a record.
        let s = br#"{"t":"a {b} {\"c\": 1}","u{"ok":true}"#;
        let (p, _) = torn_prefix(s).unwrap();
        assert_eq!(&s[p..], br#"{"ok":true}"#);
        assert_eq!(torn_prefix(br#"{"a":"x"#), None);
        assert_eq!(torn_prefix(br#"{"a":1}"#), None);
    }

    #[test]
    fn torn_prefix_is_bounded_on_hostile_input() {
        let s = vec![b'{'; 200_000];
        assert_eq!(torn_prefix(&s), None);
        let mut s = b"\"".to_vec();
        s.extend(std::iter::repeat_n(b"{\"a\":".as_slice(), 50_000).flatten());
        assert_eq!(torn_prefix(&s), None);
    }

    #[test]
    fn trims_json_whitespace() {
        assert_eq!(trim_ws(b" \t{}\r "), 2..4);
        assert_eq!(trim_ws(b" \t\r"), 0..0);
        assert_eq!(trim_ws(b""), 0..0);
    }
}

#[cfg(test)]
mod validity_tests {
    use super::*;

    /// What `is_valid` was before it used the grammar scan: serde_json into `IgnoredAny`.
    fn serde_valid(s: &[u8]) -> bool {
        serde_json::from_slice::<IgnoredAny>(s).is_ok()
    }

    #[test]
    fn the_grammar_scan_takes_what_serde_took() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mut cases: Vec<Vec<u8>> = [
            "{}",
            " {} ",
            "{\"a\":1}",
            "[1,2]",
            "1",
            "-0",
            "1e400",
            "1E+2",
            "0.5",
            "123456789012345678901234567890",
            "\"\\ud83d\"",
            "\"\\udc00\\ud800\"",
            "\"\\u00e9\\n\\t\\/\\\\\\\"\"",
            "true",
            "null",
            "false",
            "{\"a\":1,\"a\":2}",
            "{\"a\":[{},[],\"x\"]}",
            "\t\r\n{}\n",
            "",
            " ",
            "{",
            "}",
            "{]",
            "[}",
            "{,}",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "-",
            "+1",
            "1e",
            "1e+",
            "--1",
            "0x1",
            "NaN",
            "Infinity",
            "tru",
            "nul",
            "'a'",
            "\"a",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "{a:1}",
            "{\"a\" 1}",
            "{\"a\":}",
            "[1 2]",
            "{}{}",
            "{} x",
            "\u{feff}{}",
            "{}\u{a0}",
            "\"\u{7f}\"",
            "[\"\u{e9}\"]",
            "1 2",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        for control in 0u8..0x20 {
            cases.push(vec![b'"', control, b'"']);
        }
        for bad in [0x80u8, 0xc3, 0xff, 0xfe] {
            cases.push(vec![b'"', bad, b'"']);
            cases.push(vec![b'[', bad, b']']);
        }
        for n in [1, 100, 127, 128, 129, 200, 10_000] {
            cases.push(deep(n).into_bytes());
        }
        // Every byte of a record changed into each byte that matters to the grammar, and every
        // prefix of it.
        let record = br#"{"a":[1,-2.5e+3,"x\"\u00e9",{"b":null,"c":true}],"d":false} "#;
        for at in 0..record.len() {
            cases.push(record[..at].to_vec());
            for b in b"{}[]\",:0-.eE+ \\u\x01tfn\x80".iter().chain(b"9") {
                let mut changed = record.to_vec();
                changed[at] = *b;
                cases.push(changed);
            }
        }
        for case in &cases {
            assert_eq!(
                is_valid(case),
                serde_valid(case),
                "{:?}",
                String::from_utf8_lossy(case)
            );
        }
    }
}
