//! The streaming splitter: event order, bounded buffer, and identical results to `split_slice`
//! wherever chunk boundaries fall.

use super::tests::{f, split_with, stream};
use super::*;

#[test]
fn crlf_run_is_reported_before_the_line_that_ends_it() {
    let data = b"{\"a\":1}\r\n{\"b\":2}\n";
    let mut splitter = Splitter::new(&data[..], Options::default());
    let mut kinds = Vec::new();
    while let Some(event) = splitter.next_event().unwrap() {
        kinds.push(match event {
            Event::Record(r) => format!("record {}", r.span.line),
            Event::Damage(d) => format!("{} {}", d.damage, d.span.line),
        });
    }
    assert_eq!(kinds, ["record 1", "1 line(s) end with CRLF 1", "record 2"]);
}

#[test]
fn oversized_stream_does_not_buffer_the_line() {
    let options = Options { max_line_len: 64 };
    let mut data = b"{\"a\":1}\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 10 << 20));
    data.extend(b"\n{\"b\":2}\n");
    let mut splitter = Splitter::with_chunk_size(&data[..], options, 4096);
    let mut events = 0;
    while splitter.next_event().unwrap().is_some() {
        events += 1;
    }
    assert_eq!(events, 3);
    assert!(
        splitter.buffer_len() <= 64 + 2 * 4096,
        "{}",
        splitter.buffer_len()
    );
    let (_, findings) = split_with(&data, options);
    assert_eq!(
        findings,
        vec![f(2, 8, 10 << 20, Damage::Oversized { len: 10 << 20 })]
    );
}

#[test]
fn events_come_findings_first_per_line() {
    let data = b"{\"a\":1}{\"b\":2}\n";
    let mut splitter = Splitter::new(&data[..], Options::default());
    let first = splitter.next_event().unwrap().unwrap();
    assert!(matches!(
        first,
        Event::Damage(Finding {
            damage: Damage::Glued { records: 2 },
            ..
        })
    ));
    let second = splitter.next_event().unwrap().unwrap();
    let Event::Record(record) = second else {
        panic!("{second:?}")
    };
    assert!(matches!(record.bytes, std::borrow::Cow::Borrowed(_)));
    assert_eq!(&record.bytes[..], br#"{"a":1}"#);
}

#[test]
fn read_all_owns_the_same() {
    let data = b"{\"a\":1}\r\n{\"a\":\"x{\"b\":1}\n\0";
    let (records, findings) = read_all(&data[..], Options::default()).unwrap();
    let (r2, f2) = split_slice(data, Options::default());
    assert_eq!(findings, f2);
    let r2: Vec<_> = r2.into_iter().map(Record::into_owned).collect();
    assert_eq!(records, r2);
}

#[test]
fn chunk_boundaries_anywhere() {
    // Every kind of damage in one input; `split_with` compares chunk sizes 1, 2, 3, 7, 64 and
    // 1 MiB against split_slice; here also every size up to 48 and a small line limit.
    let data: &[u8] = b"\xEF\xBB\xBF{\"a\":1}\r\n{\"b\":2}\r\n\n  \n\0\0\0\n{\"c\":\"\xFF\"}\n\
        {\"d\":1}{\"e\":2}\n{\"uuid\":\"x\",\"t\":\"he{\"f\":3}\nnot json\n\
        {\"g\":\"0123456789012345678901234567890123456789\"}\n{\"h\":\0\0{\"i\":1}\n{\"j\":";
    for max_line_len in [usize::MAX, 40, 7, 0] {
        let options = Options { max_line_len };
        let (records, findings) = split_with(data, options);
        for chunk in 1..=48 {
            let (r2, f2) = stream(data, options, chunk);
            assert_eq!(f2, findings, "chunk {chunk}, limit {max_line_len}");
            let r2: Vec<_> = r2
                .into_iter()
                .map(|r| (r.span, String::from_utf8(r.bytes).unwrap()))
                .collect();
            assert_eq!(r2, records, "chunk {chunk}, limit {max_line_len}");
        }
    }
}

#[test]
fn damage_serializes_with_kind_tag() {
    let json = serde_json::to_string(&f(2, 8, 4, Damage::NulPadding { len: 4 })).unwrap();
    assert_eq!(
        json,
        r#"{"span":{"line":2,"offset":8,"len":4},"damage":{"kind":"nul-padding","len":4}}"#
    );
    let json = serde_json::to_string(&Damage::TornRecordGlued { fragment_len: 3 }).unwrap();
    assert_eq!(json, r#"{"kind":"torn-record-glued","fragment_len":3}"#);
    let json = serde_json::to_string(&Damage::MissingFinalNewline).unwrap();
    assert_eq!(json, r#"{"kind":"missing-final-newline"}"#);
}
