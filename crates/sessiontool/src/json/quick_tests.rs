//! The chunked grammar check held to the byte-by-byte scan: whenever it answers, the same end
//! and the same notes; never an answer where the scan finds an error. Over every way to
//! classify chunks this processor has (byte by byte included).

use super::classes::Way;
use super::quick::value_end_by;
use super::scan::{Note, value_end_bytewise, value_end_noting};

/// Every call a check makes, in order (surrogates counted apart: the chunked check notes a
/// chunk's after its tokens; white space as whether there was any).
#[derive(Debug, Default, PartialEq, Eq)]
struct Log {
    calls: Vec<(&'static str, usize, usize, usize)>,
    surrogates: usize,
    spaced: bool,
}

impl Note for Log {
    fn forget(&mut self) {
        *self = Log::default();
    }
    fn depth(&mut self, depth: usize) {
        self.calls.push(("depth", depth, 0, 0));
    }
    fn space(&mut self) {
        self.spaced = true;
    }
    fn number(&mut self, len: usize, exponent: bool) {
        self.calls.push(("number", len, usize::from(exponent), 0));
    }
    fn surrogate(&mut self) {
        self.surrogates += 1;
    }
    fn key(&mut self, depth: usize, start: usize, end: usize) {
        self.calls.push(("key", depth, start, end));
    }
    fn item(&mut self, depth: usize, start: usize) {
        self.calls.push(("item", depth, start, 0));
    }
    fn value_end(&mut self, depth: usize, end: usize) {
        self.calls.push(("value_end", depth, end, 0));
    }
}

fn ways() -> Vec<(&'static str, Way)> {
    Way::supported()
        .into_iter()
        .map(|way| (format!("{way:?}").leak() as &str, way))
        .collect()
}

/// Holds the chunked check to the byte-by-byte scan on `b` from `start`; whether it answered
/// (with every way to classify).
fn same(b: &[u8], start: usize) -> bool {
    let mut want = Log::default();
    let reference = value_end_bytewise(b, start, &mut want);
    let mut answered = None;
    for (name, way) in ways() {
        let mut got = Log::default();
        let end = value_end_by(way, b, start, &mut got);
        let text = String::from_utf8_lossy(b);
        if let Some(end) = end {
            assert_eq!(Ok(end), reference, "{name} answered on {text:?}");
            assert_eq!(got, want, "{name}: the notes of {text:?}");
        }
        // Every way answers alike (they classify alike).
        assert_eq!(
            *answered.get_or_insert(end.is_some()),
            end.is_some(),
            "{text:?}"
        );
        // And what callers get is the reference's, notes included.
        let mut through = Log::default();
        assert_eq!(value_end_noting(b, start, &mut through), reference);
        if reference.is_ok() {
            assert_eq!(through, want, "{text:?}");
        }
    }
    answered.unwrap_or(false)
}

/// A number below `n` from `seed`.
fn next(seed: &mut u64, n: u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) % n
}

/// A JSON value made from `seed`, with what the grammar check looks at: escapes of every
/// kind (surrogates too), backslash runs, brackets and quotes in strings, numbers of every
/// form, literals, white space, nesting up to `max_depth`.
fn generated(seed: &mut u64, depth: u32, max_depth: u32, out: &mut Vec<u8>) {
    let ws = |out: &mut Vec<u8>, k: u64| {
        if k < 3 {
            out.extend_from_slice([&b" "[..], b"\n\t", b"\r "][k as usize]);
        }
    };
    let kind = if depth >= max_depth {
        next(seed, 3)
    } else {
        next(seed, 6)
    };
    match kind {
        0 => {
            out.push(b'"');
            for _ in 0..next(seed, 40) {
                let piece: &[u8] = match next(seed, 14) {
                    0 => b"\\\\",
                    1 => b"\\\"",
                    2 => b"\\n",
                    3 => b"]}[{,:",
                    4 => b"\\u00e9",
                    5 => b"\\ud83d\\ude00",
                    6 => b"\\uDC00",
                    7 => b"\\/\\b\\f\\r\\t",
                    8 => "é漢😀".as_bytes(),
                    9 => b" \x7f ",
                    _ => b"text text ",
                };
                out.extend_from_slice(piece);
            }
            out.push(b'"');
        }
        1 => {
            let numbers: [&[u8]; 10] = [
                b"0",
                b"-0",
                b"12",
                b"-2.5",
                b"1e5",
                b"2E-3",
                b"-0.5e+2",
                b"123456789",
                b"0.25",
                b"7",
            ];
            out.extend_from_slice(numbers[next(seed, 10) as usize]);
        }
        2 => out.extend_from_slice([&b"true"[..], b"false", b"null"][next(seed, 3) as usize]),
        3 | 4 => {
            out.push(b'[');
            ws(out, next(seed, 8));
            for k in 0..next(seed, 5) {
                if k > 0 {
                    out.push(b',');
                    ws(out, next(seed, 8));
                }
                generated(seed, depth + 1, max_depth, out);
                ws(out, next(seed, 8));
            }
            out.push(b']');
        }
        _ => {
            out.push(b'{');
            ws(out, next(seed, 8));
            for k in 0..next(seed, 6) {
                if k > 0 {
                    out.push(b',');
                    ws(out, next(seed, 8));
                }
                let key = ["\"uuid\"", "\"k\\u0041\"", "\"message\"", "\"\"", "\"a b\""];
                out.extend_from_slice(key[(k as usize + next(seed, 5) as usize) % 5].as_bytes());
                ws(out, next(seed, 8));
                out.push(b':');
                ws(out, next(seed, 8));
                generated(seed, depth + 1, max_depth, out);
            }
            out.push(b'}');
        }
    }
}

#[test]
fn generated_values_give_the_answers_of_byte_by_byte() {
    let mut seed = 11;
    let mut answered = 0;
    for round in 0..4000 {
        let mut text = Vec::new();
        if round % 3 == 0 {
            text.extend_from_slice(b"  ");
        }
        generated(&mut seed, 0, 6, &mut text);
        // With text after it: white space, another value, garbage.
        for tail in [&b""[..], b" ", b"{}", b",1", b" \"\x01\""] {
            let mut t = text.clone();
            t.extend_from_slice(tail);
            answered += usize::from(same(&t, 0));
        }
    }
    assert!(answered > 15_000, "only {answered} answered");
}

#[test]
fn every_byte_changed_into_one_the_grammar_cares_about() {
    let mut seed = 5;
    let specials = b"\"\\{}[]:, \n\t\x01\x00\x1fu0e-+.tfnx\x80";
    for _ in 0..60 {
        let mut text = Vec::new();
        generated(&mut seed, 0, 4, &mut text);
        if text.len() > 400 {
            continue;
        }
        for at in 0..text.len() {
            for &special in specials {
                let mut t = text.clone();
                t[at] = special;
                same(&t, 0);
            }
            // And the bytes cut out and doubled.
            let mut t = text.clone();
            t.remove(at);
            same(&t, 0);
            let mut t = text.clone();
            t.insert(at, text[at]);
            same(&t, 0);
        }
    }
}

#[test]
fn every_prefix_is_cut_short_or_whole() {
    let mut seed = 3;
    for _ in 0..40 {
        let mut text = Vec::new();
        generated(&mut seed, 0, 5, &mut text);
        for end in 0..=text.len() {
            same(&text[..end], 0);
        }
    }
}

#[test]
fn escapes_and_backslash_runs_across_every_chunk_boundary() {
    let tails: [&[u8]; 14] = [
        b"\"",
        b"\\\"\"",
        b"\\\\\"",
        b"\x01\"",
        b"\\q\"",
        b"\\u12g4\"",
        b"\\u12\"",
        b"\\ud83d\"",
        b"\\",
        b"\\u00e9\\n\\t\\/\"",
        b"\\\\\\\"\"",
        b"\\\n\"",
        b"\t\"",
        b"\\\"}]\"",
    ];
    for pad in 0..140 {
        for tail in tails {
            for run in 0..5 {
                for around in [&b"{\"k\":"[..], b"[", b"", b"{\"a\":{\"b\":"] {
                    let mut s = around.to_vec();
                    s.push(b'"');
                    s.extend(std::iter::repeat_n(b'a', pad));
                    s.extend(std::iter::repeat_n(b'\\', run * 2));
                    s.extend_from_slice(tail);
                    s.extend_from_slice(b" ,\"x\" ]}}");
                    same(&s, 0);
                }
            }
        }
    }
}

#[test]
fn tokens_at_every_place_around_chunk_boundaries() {
    for pad in 0..140 {
        let fill = "x".repeat(pad);
        for text in [
            format!("{{\"{fill}\":1,\"b\":[true,false,null,-1.5e3,{{}},[]],\"c\":{{\"d\":\"\"}}}}"),
            format!("[\"{fill}\",123456789,1e400,\"\\ud800\"]"),
            format!("{{\"a\":\"{fill}\"  ,  \"b\" : 12345 }}"),
            format!("{fill:?}"),
            format!("  {}", "9".repeat(pad + 1)),
            format!("{{\"n\":{}}}", "9".repeat(pad + 1)),
            format!("[{}true]", " ".repeat(pad)),
            format!("[{}tru]", " ".repeat(pad)),
            format!("[{}1x]", " ".repeat(pad)),
        ] {
            same(text.as_bytes(), 0);
            // From a start inside the text too.
            let padded = format!("xyz{text}");
            same(padded.as_bytes(), 3);
        }
    }
}

#[test]
fn nesting_beyond_what_the_bits_hold_is_read_byte_by_byte() {
    for depth in [62, 63, 64, 65, 100, 300] {
        let arrays = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        same(arrays.as_bytes(), 0);
        let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        same(objects.as_bytes(), 0);
    }
    // Within the bits, the chunked check answers.
    let objects = format!("{}1{}", "{\"a\":".repeat(64), "}".repeat(64));
    assert!(same(objects.as_bytes(), 0));
}

/// Every line of the files under `dir`, and each file whole.
fn lines_under(dir: &std::path::Path, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            lines_under(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
            out.push(bytes);
        }
    }
}

#[test]
fn fixture_and_sample_lines_and_their_prefixes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = Vec::new();
    lines_under(&root.join("fixtures"), &mut texts);
    lines_under(&root.join("../../../shared/samples"), &mut texts);
    let mut answered = 0;
    for (k, text) in texts.iter().enumerate() {
        answered += usize::from(same(text, 0));
        // Every prefix of some lines (all of them would take minutes on the samples).
        if k % 7 == 0 && text.len() < 20_000 {
            for end in (0..text.len()).step_by(1 + text.len() / 500) {
                same(&text[..end], 0);
            }
        }
    }
    assert!(answered > 1000, "only {answered} answered");
}
