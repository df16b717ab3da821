//! Facts about a JSON text learnt in one quick pass over its bytes, without building anything:
//! enough to know that a reader which builds a `serde_json::Value` needs no help (no lone
//! surrogate escape, no number a double cannot hold, no depth serde_json refuses) and whether
//! the text has white space between its tokens. The two-pass engine asks this of every record
//! in its first pass, where building values would cost most of the time; only records these
//! facts do not clear are read in full.

/// What [`facts`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// Deepest nesting of objects and arrays (0 for a scalar).
    pub depth: usize,
    /// A `\u` escape of a UTF-16 surrogate (`\ud800` to `\udfff`), paired or not.
    pub surrogate_escape: bool,
    /// A number with an exponent or longer than 300 characters: one a double might not hold.
    pub big_number: bool,
    /// White space outside strings (between tokens).
    pub spaced: bool,
}

/// Nesting serde_json reads without reaching its recursion limit (128), with room to spare.
const SERDE_SAFE_DEPTH: usize = 100;

/// Longest number (in characters, without exponent) that is surely within a double's range.
const SAFE_NUMBER_LEN: usize = 300;

impl Facts {
    /// Whether `serde_json` reads the text into a `Value` exactly as `JSON.parse` reads it:
    /// then [`crate::json::value::to_value`] succeeds and has nothing lossy to say. `false`
    /// means "not sure", never "it fails".
    pub fn serde_reads_it(&self) -> bool {
        self.depth <= SERDE_SAFE_DEPTH && !self.surrogate_escape && !self.big_number
    }
}

/// The facts, noted by the grammar check as it reads the text ([`checked`]).
impl super::scan::Note for Facts {
    fn forget(&mut self) {
        *self = Facts::default();
    }
    fn depth(&mut self, depth: usize) {
        self.depth = self.depth.max(depth);
    }
    fn space(&mut self) {
        self.spaced = true;
    }
    fn number(&mut self, len: usize, exponent: bool) {
        self.big_number |= exponent || len > SAFE_NUMBER_LEN;
    }
    fn surrogate(&mut self) {
        self.surrogate_escape = true;
    }
}

/// [`checked`], noting in `outline` where each entry of the outermost object is (nothing when
/// the value is not an object).
pub fn checked_outlined(b: &[u8], outline: &mut super::Outline) -> Option<Facts> {
    struct Both<'o> {
        facts: Facts,
        outline: &'o mut super::Outline,
    }
    impl super::scan::Note for Both<'_> {
        fn forget(&mut self) {
            self.facts.forget();
            self.outline.clear();
        }
        fn depth(&mut self, depth: usize) {
            self.facts.depth(depth);
        }
        fn space(&mut self) {
            self.facts.space();
        }
        fn number(&mut self, len: usize, exponent: bool) {
            self.facts.number(len, exponent);
        }
        fn surrogate(&mut self) {
            self.facts.surrogate();
        }
        fn key(&mut self, depth: usize, start: usize, end: usize) {
            self.outline.key(depth, start, end);
        }
        fn item(&mut self, depth: usize, start: usize) {
            self.outline.item(depth, start);
        }
        fn value_end(&mut self, depth: usize, end: usize) {
            self.outline.value_end(depth, end);
        }
    }
    outline.clear();
    let mut both = Both {
        facts: Facts::default(),
        outline,
    };
    let end = super::scan::value_end_noting(b, 0, &mut both).ok()?;
    finish(b, end, both.facts)
}

/// The facts of `b` when it is one JSON value (white space around it allowed), learnt in the
/// pass that checks it; `None` when it is not: [`facts`] and the grammar check at once.
pub fn checked(b: &[u8]) -> Option<Facts> {
    let mut f = Facts::default();
    let end = super::scan::value_end_noting(b, 0, &mut f).ok()?;
    finish(b, end, f)
}

/// The facts noted of a value that ends at `end`, when nothing but white space follows it.
fn finish(b: &[u8], end: usize, mut f: Facts) -> Option<Facts> {
    let rest = super::scan::skip_ws(b, end);
    // White space around the value is not between its tokens.
    let lead = super::scan::skip_ws(b, 0);
    if rest != b.len() {
        return None;
    }
    if lead > 0 {
        // Rare: records are trimmed.
        f.spaced = facts(&b[lead..end]).spaced;
    }
    Some(f)
}

/// The facts of `b`, a valid JSON text (on anything else the answer means nothing, but it is
/// an answer: this never panics).
pub fn facts(b: &[u8]) -> Facts {
    let mut f = Facts::default();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    let Some(k) = memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]) else {
                        return f;
                    };
                    i += k;
                    if b[i] == b'"' {
                        i += 1;
                        break;
                    }
                    if b.get(i + 1) == Some(&b'u') {
                        if let Some(h) = b.get(i + 2..i + 4)
                            && matches!(h[0], b'd' | b'D')
                            && matches!(h[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                        {
                            f.surrogate_escape = true;
                        }
                        i += 6;
                    } else {
                        i += 2;
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                f.depth = f.depth.max(depth);
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                f.spaced = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    if matches!(b[i], b'e' | b'E') {
                        f.big_number = true;
                    }
                    i += 1;
                }
                if i - start > SAFE_NUMBER_LEN {
                    f.big_number = true;
                }
            }
            _ => i += 1,
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::value::to_value;

    #[test]
    fn plain_records_are_cleared() {
        let f = facts(br#"{"a":[1,-2.5,"x\"y\\z\u00e9",{"b":null}],"c":true}"#);
        assert_eq!(f.depth, 3);
        assert!(f.serde_reads_it());
        assert!(!f.spaced);
    }

    #[test]
    fn what_serde_json_cannot_hold_is_not_cleared() {
        for text in [
            r#"{"a":"\ud83d"}"#,
            r#"{"a":"\uDC00x"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":1E5}"#,
        ] {
            assert!(!facts(text.as_bytes()).serde_reads_it(), "{text}");
        }
        let long = format!("[{}]", "9".repeat(400));
        assert!(!facts(long.as_bytes()).serde_reads_it());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!facts(deep.as_bytes()).serde_reads_it());
    }

    #[test]
    fn white_space_between_tokens_is_seen_and_not_inside_strings() {
        assert!(facts(br#"{"a": 1}"#).spaced);
        assert!(!facts(br#"{"a b":"c d"}"#).spaced);
    }

    #[test]
    fn cleared_texts_read_losslessly_through_to_value() {
        // Whatever `facts` clears, `to_value` reads with nothing lossy (here over texts near
        // the edges: escapes, long numbers, nesting just under the limit).
        let nested = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let long = format!("[{}]", "9".repeat(300));
        for text in [
            r#"{"a":"\u00e9\n\"","b":[0.1,-0,12345678901234567890123]}"#,
            nested.as_str(),
            long.as_str(),
            r#""\ue000""#,
        ] {
            assert!(facts(text.as_bytes()).serde_reads_it(), "{text}");
            let (_, lossy) = to_value(text.as_bytes()).unwrap();
            assert!(lossy.is_lossless(), "{text}");
            assert!(serde_json::from_slice::<serde_json::Value>(text.as_bytes()).is_ok());
        }
    }

    /// Every line of `dir`'s files, recursively.
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
    fn the_check_learns_the_facts_the_quick_pass_finds() {
        let mut texts: Vec<Vec<u8>> = [
            r#"{"a": [1 , {"b" :null}],"c":[]}"#,
            r#"{ "a" : { "b" : [ 1 ] } , "a" : 2 , "c\u0064" : "x" , "e":{} }"#,
            r#"{"m":{"id":1,"x":[{"id":2}],"id":3},"n":[{"id":4}],"m":{ "content" : "c" , "usage":{"id":5}}}"#,
            r#"{"a":{},"b":[[[]]],"c":[{}]}"#,
            r#"[1e5,2E-3,-0.5e+2]"#,
            r#"{"k\udfff":1,"v":"\uD83D\uDE00","w":"\uE000\uc7ff"}"#,
            " {\"a\":1} ",
            "\t[1,2]\n",
            "7",
            "\"s\"",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        // Numbers near the length limit, and long strings with an escape at every place
        // around a chunk boundary (the check reads long strings 64 bytes at a time).
        for n in [299, 300, 301] {
            texts.push(format!("[{}]", "7".repeat(n)).into_bytes());
        }
        for at in 55..140 {
            for escape in ["\\ud83d", "\\u00e9", "\\n", "\\\\"] {
                let mut s = "x".repeat(at);
                s.push_str(escape);
                s.push_str(&"y".repeat(70));
                texts.push(format!("{{\"t\":\"{s}\",\"n\":1}}").into_bytes());
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        lines_under(&root.join("fixtures"), &mut texts);
        lines_under(&root.join("../../../shared/samples"), &mut texts);
        let mut valid = 0;
        for text in &texts {
            let got = checked(text);
            assert_eq!(
                got.is_some(),
                crate::records::is_valid_json(text),
                "{}",
                String::from_utf8_lossy(text)
            );
            let mut outline = super::super::Outline::default();
            assert_eq!(checked_outlined(text, &mut outline), got);
            if let Some(got) = got {
                valid += 1;
                // The outline picks what the record's own reading picks.
                if text.first() == Some(&b'{')
                    && text.last() == Some(&b'}')
                    && let Ok(utf8) = std::str::from_utf8(text)
                {
                    let raw = super::super::Raw::valid(utf8);
                    let mut keys: Vec<String> = raw
                        .entries()
                        .unwrap()
                        .map(|(k, _)| k.name().value.into_owned())
                        .collect();
                    keys.extend([
                        "missing".to_string(),
                        "k\u{fffd}".into(),
                        "cd".into(),
                        String::new(),
                    ]);
                    // And within each entry's value.
                    for (_, value) in raw.entries().unwrap() {
                        let Some(entries) = value.entries() else {
                            continue;
                        };
                        for (k, _) in entries {
                            let name = k.name().value;
                            for names in [
                                [name.as_ref(), "id", "missing"],
                                ["content", "usage", "role"],
                            ] {
                                assert_eq!(
                                    value.pick(names).map(|r| r.map(super::super::Raw::text)),
                                    outline
                                        .pick_within(raw, value, names)
                                        .map(|r| r.map(super::super::Raw::text)),
                                    "{names:?} within {}",
                                    value.text()
                                );
                            }
                        }
                    }
                    for key in &keys {
                        let want = raw.pick([key.as_str(), "a", "uuid"]);
                        let have = outline.pick(raw, [key.as_str(), "a", "uuid"]);
                        assert_eq!(
                            want.map(|r| r.map(super::super::Raw::text)),
                            have.map(|r| r.map(super::super::Raw::text)),
                            "{key} in {}",
                            String::from_utf8_lossy(text)
                        );
                    }
                }
                let start = super::super::scan::skip_ws(text, 0);
                let end = text.len()
                    - text
                        .iter()
                        .rev()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                assert_eq!(
                    got,
                    facts(&text[start..end.max(start)]),
                    "{}",
                    String::from_utf8_lossy(text)
                );
            }
        }
        assert!(valid > 1000, "only {valid} valid texts");
    }
}
