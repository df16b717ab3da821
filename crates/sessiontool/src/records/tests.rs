//! Unit tests: each kind of damage with its exact line and offset. Every case also runs through
//! the streaming splitter at several chunk sizes (see `split_with`).

use super::*;

pub(super) fn span(line: u64, offset: u64, len: u64) -> Span {
    Span { line, offset, len }
}

pub(super) fn f(line: u64, offset: u64, len: u64, damage: Damage) -> Finding {
    Finding {
        span: span(line, offset, len),
        damage,
    }
}

/// Records as (span, bytes) and findings, checked to be the same from the streaming splitter at
/// a few chunk sizes.
fn split(data: &[u8]) -> (Vec<(Span, String)>, Vec<Finding>) {
    split_with(data, Options::default())
}

pub(super) fn split_with(data: &[u8], options: Options) -> (Vec<(Span, String)>, Vec<Finding>) {
    let (records, findings) = split_slice(data, options);
    let records: Vec<_> = records
        .into_iter()
        .map(|r| (r.span, String::from_utf8(r.bytes.into_owned()).unwrap()))
        .collect();
    for chunk in [1, 2, 3, 7, 64, DEFAULT_CHUNK_SIZE] {
        let (r2, f2) = stream(data, options, chunk);
        let r2: Vec<_> = r2
            .into_iter()
            .map(|r| (r.span, String::from_utf8(r.bytes).unwrap()))
            .collect();
        assert_eq!(r2, records, "records, chunk size {chunk}");
        assert_eq!(f2, findings, "findings, chunk size {chunk}");
    }
    (records, findings)
}

pub(super) fn stream(
    data: &[u8],
    options: Options,
    chunk: usize,
) -> (Vec<OwnedRecord>, Vec<Finding>) {
    let mut splitter = Splitter::with_chunk_size(data, options, chunk);
    let mut records = Vec::new();
    let mut findings = Vec::new();
    while let Some(event) = splitter.next_event().unwrap() {
        match event {
            Event::Record(r) => records.push(r.into_owned()),
            Event::Damage(d) => findings.push(d),
        }
    }
    (records, findings)
}

pub(super) fn rec(line: u64, offset: u64, text: &str) -> (Span, String) {
    (span(line, offset, text.len() as u64), text.to_string())
}

#[test]
fn clean_file() {
    let (records, findings) = split(b"{\"a\":1}\n  {\"b\":2} \n");
    assert_eq!(
        records,
        vec![rec(1, 0, r#"{"a":1}"#), rec(2, 10, r#"{"b":2}"#)]
    );
    assert_eq!(findings, vec![]);
    assert_eq!(split(b""), (vec![], vec![]));
}

#[test]
fn bom_at_start_only() {
    let (records, findings) = split(b"\xEF\xBB\xBF{\"a\":1}\n");
    assert_eq!(records, vec![rec(1, 3, r#"{"a":1}"#)]);
    assert_eq!(findings, vec![f(1, 0, 3, Damage::Bom)]);
    // Elsewhere a BOM is stray bytes before a record.
    let (records, findings) = split(b"{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n");
    assert_eq!(records[1], rec(2, 11, r#"{"b":2}"#));
    let torn = Damage::TornRecordGlued { fragment_len: 3 };
    assert_eq!(findings, vec![f(2, 8, 3, torn)]);
}

#[test]
fn crlf_runs() {
    let data = b"{\"a\":1}\r\n{\"b\":2}\r\n\r\n{\"c\":3}\n{\"d\":4}\r\n";
    let (records, findings) = split(data);
    assert_eq!(records.len(), 4);
    assert_eq!(records[1], rec(2, 9, r#"{"b":2}"#));
    assert_eq!(
        findings,
        vec![
            f(3, 18, 0, Damage::BlankLine),
            f(1, 7, 1, Damage::Crlf { lines: 3 }),
            f(5, 35, 1, Damage::Crlf { lines: 1 }),
        ]
    );
    // CRLF everywhere: one finding.
    let data = "{\"x\":1}\r\n".repeat(1000);
    let (records, findings) = split(data.as_bytes());
    assert_eq!(records.len(), 1000);
    assert_eq!(findings, vec![f(1, 7, 1, Damage::Crlf { lines: 1000 })]);
}

#[test]
fn blank_lines() {
    let (records, findings) = split(b"\n  \t\n{\"a\":1}\n\r\n");
    assert_eq!(records, vec![rec(3, 5, r#"{"a":1}"#)]);
    assert_eq!(
        findings,
        vec![
            f(1, 0, 0, Damage::BlankLine),
            f(2, 1, 3, Damage::BlankLine),
            f(4, 13, 0, Damage::BlankLine),
            f(4, 13, 1, Damage::Crlf { lines: 1 }),
        ]
    );
    // Whitespace after the last newline is blank, not torn.
    let (_, findings) = split(b"{\"a\":1}\n  ");
    assert_eq!(findings, vec![f(2, 8, 2, Damage::BlankLine)]);
}

#[test]
fn nul_padding_at_end_is_not_a_torn_tail() {
    let (records, findings) = split(b"{\"a\":1}\n\0\0\0\0");
    assert_eq!(records, vec![rec(1, 0, r#"{"a":1}"#)]);
    assert_eq!(findings, vec![f(2, 8, 4, Damage::NulPadding { len: 4 })]);
}

#[test]
fn nul_padding_inside_lines() {
    let data = b"{\"a\":1}\n\0\0\n\0{\"b\":2}\0\0\0{\"c\":3}\n";
    let (records, findings) = split(data);
    assert_eq!(
        records,
        vec![
            rec(1, 0, r#"{"a":1}"#),
            rec(3, 12, r#"{"b":2}"#),
            rec(3, 22, r#"{"c":3}"#)
        ]
    );
    assert_eq!(
        findings,
        vec![
            f(2, 8, 2, Damage::NulPadding { len: 2 }),
            f(3, 11, 1, Damage::NulPadding { len: 1 }),
            f(3, 12, 17, Damage::Glued { records: 2 }),
            f(3, 19, 3, Damage::NulPadding { len: 3 }),
        ]
    );
    // A record cut by padding, then the writer went on: the cut part is invalid JSON.
    let (records, findings) = split(b"{\"a\":1,\"b\0\0{\"c\":3}\n");
    assert_eq!(records, vec![rec(1, 11, r#"{"c":3}"#)]);
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[0].span, span(1, 0, 9));
    assert!(matches!(findings[0].damage, Damage::InvalidJson { .. }));
    assert_eq!(findings[1], f(1, 9, 2, Damage::NulPadding { len: 2 }));
}

#[test]
fn missing_final_newline() {
    let (records, findings) = split(b"{\"a\":1}\n{\"b\":2} ");
    assert_eq!(records[1], rec(2, 8, r#"{"b":2}"#));
    assert_eq!(findings, vec![f(2, 16, 0, Damage::MissingFinalNewline)]);
    // Then NUL padding without a newline: the record is yielded, both reported.
    let (records, findings) = split(b"{\"a\":1}\0\0");
    assert_eq!(records, vec![rec(1, 0, r#"{"a":1}"#)]);
    assert_eq!(
        findings,
        vec![
            f(1, 7, 2, Damage::NulPadding { len: 2 }),
            f(1, 9, 0, Damage::MissingFinalNewline),
        ]
    );
}

#[test]
fn invalid_utf8() {
    let (records, findings) = split(b"{\"a\":1}\n{\"b\":\"x\xFFy\"}\n");
    assert_eq!(
        records[1],
        (span(2, 8, 11), "{\"b\":\"x\u{FFFD}y\"}".to_string())
    );
    assert_eq!(findings, vec![f(2, 15, 1, Damage::InvalidUtf8 { at: 15 })]);
    // Not JSON either: both reported, nothing yielded.
    let (records, findings) = split(b"\xC3(\n");
    assert_eq!(records, vec![]);
    assert_eq!(findings[0], f(1, 0, 1, Damage::InvalidUtf8 { at: 0 }));
    assert_eq!(findings[1].span, span(1, 0, 2));
    assert!(matches!(findings[1].damage, Damage::InvalidJson { .. }));
    // A sequence cut at the end of the line.
    let (_, findings) = split(b"{\"a\":\"\xE2\x82\"}\n\"\xE2\x82");
    assert_eq!(findings[0], f(1, 6, 2, Damage::InvalidUtf8 { at: 6 }));
    assert_eq!(findings[1], f(2, 11, 3, Damage::TornTail));
    assert_eq!(findings[2], f(2, 12, 2, Damage::InvalidUtf8 { at: 12 }));
}

#[test]
fn glued_records() {
    let data = b"{\"a\":1}\n{\"a\":\"}{\"}{\"b\":[\"\\\"}\"]} {\"c\":3}\n";
    let (records, findings) = split(data);
    assert_eq!(
        records,
        vec![
            rec(1, 0, r#"{"a":1}"#),
            rec(2, 8, r#"{"a":"}{"}"#),
            rec(2, 18, r#"{"b":["\"}"]}"#),
            rec(2, 32, r#"{"c":3}"#),
        ]
    );
    assert_eq!(findings, vec![f(2, 8, 31, Damage::Glued { records: 3 })]);
    // A value that is not an object glued after one.
    let (records, findings) = split(b"{\"a\":1}[1]\n");
    assert_eq!(records, vec![rec(1, 0, r#"{"a":1}"#), rec(1, 7, "[1]")]);
    assert_eq!(findings, vec![f(1, 0, 10, Damage::Glued { records: 2 })]);
}

#[test]
fn torn_record_glued() {
    let frag = r#"{"uuid":"x","text":"hel"#;
    let data = format!("{{\"a\":1}}\n{frag}{{\"uuid\":\"y\"}}\n");
    let (records, findings) = split(data.as_bytes());
    assert_eq!(records[1], rec(2, 8 + 23, r#"{"uuid":"y"}"#));
    let torn = Damage::TornRecordGlued { fragment_len: 23 };
    assert_eq!(findings, vec![f(2, 8, 23, torn.clone())]);
    // Two records after the fragment: Glued too.
    let data = format!("{frag}{{\"b\":1}}{{\"c\":2}}\n");
    let (records, findings) = split(data.as_bytes());
    assert_eq!(
        records,
        vec![rec(1, 23, r#"{"b":1}"#), rec(1, 30, r#"{"c":2}"#)]
    );
    assert_eq!(
        findings,
        vec![
            f(1, 0, 23, torn.clone()),
            f(1, 23, 14, Damage::Glued { records: 2 }),
        ]
    );
    // A record, the fragment, a record.
    let data = format!("{{\"a\":1}}{frag}{{\"b\":1}}\n");
    let (records, findings) = split(data.as_bytes());
    assert_eq!(
        records,
        vec![rec(1, 0, r#"{"a":1}"#), rec(1, 30, r#"{"b":1}"#)]
    );
    assert_eq!(
        findings,
        vec![
            f(1, 0, 37, Damage::Glued { records: 2 }),
            f(1, 7, 23, torn.clone()),
        ]
    );
    // On the unterminated last line too.
    let data = format!("{frag}{{\"b\":1}}");
    let (records, findings) = split(data.as_bytes());
    assert_eq!(records, vec![rec(1, 23, r#"{"b":1}"#)]);
    assert_eq!(
        findings,
        vec![f(1, 0, 23, torn), f(1, 30, 0, Damage::MissingFinalNewline)]
    );
}

#[test]
fn torn_tail() {
    let (records, findings) = split(b"{\"a\":1}\n{\"b\":");
    assert_eq!(records, vec![rec(1, 0, r#"{"a":1}"#)]);
    assert_eq!(findings, vec![f(2, 8, 5, Damage::TornTail)]);
    // Cut right after a nested object: still torn, no record made of the nested object.
    let (records, findings) = split(b"{\"a\":1}\n{\"b\":{\"c\":1}");
    assert_eq!(records.len(), 1);
    assert_eq!(findings, vec![f(2, 8, 12, Damage::TornTail)]);
    // A record glued before the torn tail is yielded.
    let (records, findings) = split(b"{\"a\":1}{\"b\":2,\"c\0\0");
    assert_eq!(records, vec![rec(1, 0, r#"{"a":1}"#)]);
    assert_eq!(
        findings,
        vec![
            f(1, 7, 9, Damage::TornTail),
            f(1, 16, 2, Damage::NulPadding { len: 2 }),
        ]
    );
}

#[test]
fn invalid_json() {
    let (records, findings) = split(b"{\"a\":1}\nnot json\n{\"b\":\n{\"c\":3}\n");
    assert_eq!(
        records,
        vec![rec(1, 0, r#"{"a":1}"#), rec(4, 23, r#"{"c":3}"#)]
    );
    let Damage::InvalidJson { message } = &findings[0].damage else {
        panic!("{findings:?}");
    };
    assert_eq!(findings[0].span, span(2, 8, 8));
    assert_eq!(message, "expected ident at byte 9");
    assert_eq!(findings[1].span, span(3, 17, 5));
    assert!(matches!(findings[1].damage, Damage::InvalidJson { .. }));
    assert_eq!(findings.len(), 2);
}

#[test]
fn oversized() {
    let options = Options { max_line_len: 10 };
    let data = b"{\"a\":1}\n{\"long\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"b\":2}\n";
    let (records, findings) = split_with(data, options);
    assert_eq!(
        records,
        vec![rec(1, 0, r#"{"a":1}"#), rec(3, 50, r#"{"b":2}"#)]
    );
    assert_eq!(findings, vec![f(2, 8, 41, Damage::Oversized { len: 41 })]);
    // The last line, unterminated: oversized, not torn.
    let (_, findings) = split_with(b"{\"a\":1}\n{\"b\":\"xxxxxxxxxxxxxxx", options);
    assert_eq!(findings, vec![f(2, 8, 21, Damage::Oversized { len: 21 })]);
    // Exactly at the limit is fine.
    let (records, findings) = split_with(b"{\"a\":1234}\n", options);
    assert_eq!((records.len(), findings.len()), (1, 0));
}

#[test]
fn a_plain_line_with_a_nul_is_never_one_json_value() {
    // `plain_line` leaves NUL to the grammar check its caller makes: taken together they
    // refuse every line `is_plain_line` refuses for a NUL.
    let line = br#"{"a":"x y","b":[1,true,{}],"c":null}"#;
    for at in 1..line.len() - 1 {
        for nul in [&b"\0"[..], b"\0\0"] {
            let mut with = line[..at].to_vec();
            with.extend_from_slice(nul);
            with.extend_from_slice(&line[at..]);
            assert!(!is_plain_line(&with, 1 << 20));
            assert!(
                plain_line(&with, 1 << 20).is_none() || !is_valid_json(&with),
                "{}",
                String::from_utf8_lossy(&with)
            );
        }
    }
    assert!(plain_line(line, 1 << 20).is_some() && is_valid_json(line));
}
