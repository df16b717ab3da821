//! Property tests: no panic on any input, every span right, every byte accounted for, and the
//! streaming splitter equal to `split_slice` whatever the chunk size.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::tests::stream;
use super::*;

/// Splits `data` both ways, checks the invariants, returns records (as file bytes) and findings.
fn check(data: &[u8], options: Options, chunk: usize) -> (Vec<Vec<u8>>, Vec<Finding>) {
    let (records, findings) = split_slice(data, options);
    let (r2, f2) = stream(data, options, chunk);
    assert_eq!(f2, findings);
    assert_eq!(r2.len(), records.len());
    for (a, b) in r2.iter().zip(&records) {
        assert_eq!((a.span, &a.bytes[..]), (b.span, &b.bytes[..]));
    }

    let len = data.len() as u64;
    let line_of = |offset: u64| 1 + memchr::memchr_iter(b'\n', &data[..offset as usize]).count();
    let mut covered = vec![false; data.len()];
    let mut cover = |span: Span| {
        for c in &mut covered[span.offset as usize..span.end() as usize] {
            assert!(!*c, "overlapping spans at {span:?}");
            *c = true;
        }
    };
    let mut last_offset = 0;
    for record in &records {
        let span = record.span;
        assert!(span.len > 0 && span.end() <= len, "{span:?}");
        assert_eq!(span.line as usize, line_of(span.offset));
        assert!(span.offset >= last_offset, "records out of order");
        last_offset = span.end();
        let raw = &data[span.offset as usize..span.end() as usize];
        assert!(!raw.contains(&b'\n'));
        let lossy = String::from_utf8_lossy(raw);
        assert_eq!(&record.bytes[..], lossy.as_bytes());
        assert!(glue::is_valid(&record.bytes), "{lossy:?}");
        cover(span);
    }
    let mut last_line = 0;
    for finding in &findings {
        let span = finding.span;
        assert!(span.end() <= len, "{finding:?}");
        assert_eq!(span.line as usize, line_of(span.offset), "{finding:?}");
        if !matches!(finding.damage, Damage::Crlf { .. }) {
            assert!(span.line >= last_line, "findings out of order");
            last_line = span.line;
        }
        if finding.damage.excludes_span() {
            cover(span);
        }
        match finding.damage {
            Damage::TornTail | Damage::MissingFinalNewline => {
                assert!(!data.ends_with(b"\n"));
                let after = &data[span.end() as usize..];
                assert!(!after.contains(&b'\n'), "{finding:?} not on the last line");
            }
            Damage::Oversized { len } => assert!(len > options.max_line_len as u64),
            _ => {}
        }
    }
    for (i, c) in covered.iter().enumerate() {
        assert!(
            *c || matches!(data[i], b'\n' | b'\r' | b' ' | b'\t'),
            "byte {i} ({:#x}) accounted for nowhere",
            data[i]
        );
    }
    let records = records
        .iter()
        .map(|r| data[r.span.offset as usize..r.span.end() as usize].to_vec())
        .collect();
    (records, findings)
}

fn interesting_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"{}[]\":,\\ \n\r\t\0a1".to_vec()),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..300)
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "[a-z{}\\[\\]\"\\\\ :,\u{e9}\u{1F600}\n]{0,12}".prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z{}\"]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn records() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let record = prop::collection::vec(("[a-z]{1,6}", json_value()), 0..5).prop_map(|kv| {
        serde_json::to_vec(&Value::Object(kv.into_iter().collect::<Map<_, _>>())).unwrap()
    });
    prop::collection::vec(record, 1..8)
}

fn options() -> impl Strategy<Value = Options> {
    prop_oneof![
        3 => Just(Options::default()),
        1 => (0usize..80).prop_map(|max_line_len| Options { max_line_len }),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes(data in interesting_bytes(), options in options(), chunk in 1usize..40) {
        check(&data, options, chunk);
    }

    /// Records glued in random places all come back exactly.
    #[test]
    fn glued_records_come_back(recs in records(), glue in prop::collection::vec(any::<bool>(), 8), chunk in 1usize..64) {
        let mut data = Vec::new();
        for (i, r) in recs.iter().enumerate() {
            data.extend(r);
            if !glue[i] || i + 1 == recs.len() {
                data.push(b'\n');
            }
        }
        let (got, findings) = check(&data, Options::default(), chunk);
        prop_assert_eq!(&got, &recs);
        let glued_only = findings.iter().all(|f| matches!(f.damage, Damage::Glued { .. }));
        prop_assert!(glued_only, "{:?}", findings);
    }

    /// A file cut anywhere, then maybe NUL-padded: every complete line comes back, the cut
    /// one never makes a record unless the cut fell just after it.
    #[test]
    fn cut_and_padded(recs in records(), cut in any::<prop::sample::Index>(), nuls in 0usize..20, chunk in 1usize..64) {
        let mut data = Vec::new();
        for r in &recs {
            data.extend(r);
            data.push(b'\n');
        }
        let cut = cut.index(data.len() + 1);
        data.truncate(cut);
        data.extend(std::iter::repeat_n(0u8, nuls));
        let (got, findings) = check(&data, Options::default(), chunk);
        let complete = memchr::memchr_iter(b'\n', &data).count();
        prop_assert_eq!(&got[..complete], &recs[..complete]);
        prop_assert!(got.len() <= complete + 1);
        if got.len() == complete + 1 {
            prop_assert_eq!(&got[complete], &recs[complete]);
            prop_assert!(findings.iter().any(|f| f.damage == Damage::MissingFinalNewline));
        }
        for f in &findings {
            prop_assert!(matches!(
                f.damage,
                Damage::TornTail | Damage::NulPadding { .. } | Damage::MissingFinalNewline
                    | Damage::InvalidUtf8 { .. }
            ), "{:?}", f);
        }
    }

    /// The torn-then-glued pattern every writer produces after a crash.
    #[test]
    fn torn_then_appended(recs in records(), extra in records(), cut in any::<prop::sample::Index>(), chunk in 1usize..64) {
        let mut data = Vec::new();
        let (last, whole) = recs.split_last().unwrap();
        for r in whole {
            data.extend(r);
            data.push(b'\n');
        }
        let torn = &last[..cut.index(last.len() - 1) + 1];
        data.extend(torn);
        for r in &extra {
            data.extend(r);
            data.push(b'\n');
        }
        let (got, findings) = check(&data, Options::default(), chunk);
        prop_assert_eq!(&got[..whole.len()], whole);
        // The records appended after the crash are all salvaged.
        prop_assert!(got.ends_with(&extra), "{:?}", findings);
    }

    /// Random damage everywhere: only the invariants.
    #[test]
    fn mangled_records(
        recs in records(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..6), 0..6),
        options in options(),
        chunk in 1usize..64,
    ) {
        let mut data = Vec::new();
        for r in &recs {
            data.extend(r);
            data.push(b'\n');
        }
        for (at, kind) in edits {
            let i = at.index(data.len() + 1);
            match kind {
                0 => data.truncate(i),
                1 => data.splice(i..i, [0u8; 5]).for_each(drop),
                2 => data.splice(i..i, *b"\r").for_each(drop),
                3 => { if data.get(i) == Some(&b'\n') { data.remove(i); } }
                4 => data.splice(i..i, *b"\xEF\xBB\xBF").for_each(drop),
                _ => data.splice(i..i, *b"\xFF").for_each(drop),
            }
        }
        check(&data, options, chunk);
    }
}
