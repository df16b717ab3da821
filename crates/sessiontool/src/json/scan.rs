//! The JSON grammar, checked without building anything and without recursion: one pass over
//! the bytes with an explicit stack of open containers, so a value nested a million deep costs
//! a million bytes of stack-free bookkeeping, never a stack overflow.
//!
//! What is accepted is what JavaScript's `JSON.parse` accepts (RFC 8259's grammar): lone
//! UTF-16 surrogate escapes (`"\ud83d"`), duplicate keys and numbers of any size are valid;
//! comments, trailing commas, single quotes, leading zeros, `NaN` and raw control characters in
//! strings are not. [`validate`] checks that the text is UTF-8 too; [`value_end`] leaves that to
//! its caller (a `&str`, or records the records layer made UTF-8).

/// Why some bytes are not one JSON value, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at}")]
pub struct SyntaxError {
    /// Offset of the first byte that does not fit, from the start of what was scanned.
    pub at: usize,
    pub what: &'static str,
    /// The input ended where more was needed (a value cut short, not a wrong byte).
    pub cut_short: bool,
}

impl SyntaxError {
    fn at(at: usize, what: &'static str, input: &[u8]) -> SyntaxError {
        SyntaxError {
            at,
            what,
            cut_short: at >= input.len(),
        }
    }
}

/// JSON white space (nothing else: no BOM, no NBSP).
#[inline]
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// [`is_ws`] for a `char` (to trim text).
pub fn is_ws_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// Checks that `b` is exactly one JSON value in UTF-8, with white space around it allowed.
pub fn validate(b: &[u8]) -> Result<(), SyntaxError> {
    if let Err(e) = simdutf8::compat::from_utf8(b) {
        return Err(SyntaxError::at(e.valid_up_to(), "not UTF-8", b));
    }
    let end = value_end(b, 0)?;
    let end = skip_ws(b, end);
    if end != b.len() {
        return Err(SyntaxError::at(end, "more after the value", b));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Open {
    Object,
    Array,
}

/// What a check notes as it goes, for [`value_end_noting`]: the facts of a text learnt in the
/// same pass that checks it ([`super::facts::Facts`]). `()` notes nothing (and costs nothing).
/// A check that gives up half way [`forget`](Note::forget)s what it noted and starts again.
pub trait Note {
    /// Everything noted so far is to be forgotten: the text is read again from its start.
    fn forget(&mut self);
    /// Objects and arrays are open `depth` deep.
    fn depth(&mut self, _depth: usize) {}
    /// White space between tokens (at least once when there is some; the chunked check says
    /// it once).
    fn space(&mut self) {}
    /// A number of `len` characters, with an exponent or not.
    fn number(&mut self, _len: usize, _exponent: bool) {}
    /// A `\u` escape of a UTF-16 surrogate (`\ud800` to `\udfff`).
    fn surrogate(&mut self) {}
    /// A key of an object open `depth` deep (1: the outermost value), up to [`NOTED_DEPTH`]:
    /// its quotes from `start` to `end` (exclusive).
    fn key(&mut self, _depth: usize, _start: usize, _end: usize) {}
    /// An item of an array open `depth` deep (up to [`NOTED_DEPTH`]) starts at `start`.
    fn item(&mut self, _depth: usize, _start: usize) {}
    /// The value of the last key or item noted at `depth` ends at `end` (exclusive).
    fn value_end(&mut self, _depth: usize, _end: usize) {}
}

/// How deep in open containers [`Note::key`], [`Note::item`] and [`Note::value_end`] are told
/// of: deep enough for what readers pick (a Qwen record's `message.parts[i].functionCall.id`
/// is in the fifth).
pub const NOTED_DEPTH: usize = 5;

impl Note for () {
    fn forget(&mut self) {}
}

/// Whether the four hex digits at `h` are a UTF-16 surrogate's (`d800` to `dfff`).
pub(crate) fn is_surrogate_hex(h: &[u8]) -> bool {
    matches!(h.first(), Some(b'd' | b'D'))
        && matches!(h.get(1), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
}

/// Where the JSON value starting at `start` (after white space) ends: one past its last byte.
pub fn value_end(b: &[u8], start: usize) -> Result<usize, SyntaxError> {
    value_end_noting(b, start, &mut ())
}

/// [`value_end`], telling `note` (fresh: nothing noted yet) what it finds on the way. Valid
/// text is checked 64 bytes at a time (`json::quick`); anything else is read again byte by
/// byte, which says what is wrong and where.
pub fn value_end_noting<N: Note>(
    b: &[u8],
    start: usize,
    note: &mut N,
) -> Result<usize, SyntaxError> {
    if let Some(end) = super::quick::value_end(b, start, note) {
        return Ok(end);
    }
    note.forget();
    value_end_bytewise(b, start, note)
}

/// [`value_end_noting`] byte by byte: the reference the chunked check is held to, and what
/// names an error.
pub(crate) fn value_end_bytewise<N: Note>(
    b: &[u8],
    start: usize,
    note: &mut N,
) -> Result<usize, SyntaxError> {
    let err = |at: usize, what| SyntaxError::at(at, what, b);
    let mut open: Vec<Open> = Vec::new();
    let mut i = start;
    // White space skipped, and noted when there was some.
    let ws = |i: usize, note: &mut N| {
        let end = skip_ws(b, i);
        if end != i {
            note.space();
        }
        end
    };
    loop {
        // A value starts at `i`, after white space.
        i = ws(i, note);
        if matches!(open.last(), Some(Open::Array)) && open.len() <= NOTED_DEPTH {
            note.item(open.len(), i);
        }
        match b.get(i) {
            Some(b'{') => {
                note.depth(open.len() + 1);
                i = ws(i + 1, note);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push(Open::Object);
                    i = key_end(b, i, noted(&open), note)?;
                    continue;
                }
            }
            Some(b'[') => {
                note.depth(open.len() + 1);
                i = ws(i + 1, note);
                if b.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(Open::Array);
                    continue;
                }
            }
            Some(b'"') => i = string_scan(b, i, SCALAR, note)?,
            Some(b'-' | b'0'..=b'9') => {
                let start = i;
                let (end, exponent) = number_end(b, i)?;
                note.number(end - start, exponent);
                i = end;
            }
            Some(b't') => i = literal_end(b, i, b"true")?,
            Some(b'f') => i = literal_end(b, i, b"false")?,
            Some(b'n') => i = literal_end(b, i, b"null")?,
            Some(_) => return Err(err(i, "not the start of a JSON value")),
            None => return Err(err(i, "a value is missing")),
        }
        // A value ended at `i`: close what it closes, then find where the next one starts.
        loop {
            if open.is_empty() {
                return Ok(i);
            }
            if let Some(depth) = noted(&open) {
                note.value_end(depth, i);
            }
            i = ws(i, note);
            match open.last() {
                None => return Ok(i),
                Some(Open::Object) => match b.get(i) {
                    Some(b',') => {
                        let at = ws(i + 1, note);
                        i = key_end(b, at, noted(&open), note)?;
                        break;
                    }
                    Some(b'}') => {
                        open.pop();
                        i += 1;
                    }
                    _ => return Err(err(i, "expected `,` or `}` in an object")),
                },
                Some(Open::Array) => match b.get(i) {
                    Some(b',') => {
                        i += 1;
                        break;
                    }
                    Some(b']') => {
                        open.pop();
                        i += 1;
                    }
                    _ => return Err(err(i, "expected `,` or `]` in an array")),
                },
            }
        }
    }
}

/// A key and its colon, starting at `i`: where its value may start.
/// The depth [`Note::key`], [`Note::item`] and [`Note::value_end`] are told of in the
/// innermost open container, when it is noted.
fn noted(open: &[Open]) -> Option<usize> {
    (1..=NOTED_DEPTH)
        .contains(&open.len())
        .then_some(open.len())
}

/// `noted`: the depth to note the key at.
fn key_end<N: Note>(
    b: &[u8],
    i: usize,
    noted: Option<usize>,
    note: &mut N,
) -> Result<usize, SyntaxError> {
    if b.get(i) != Some(&b'"') {
        return Err(SyntaxError::at(i, "expected a key (a string)", b));
    }
    let end = string_scan(b, i, SCALAR, note)?;
    if let Some(depth) = noted {
        note.key(depth, i, end);
    }
    let i = skip_ws(b, end);
    if i != end {
        note.space();
    }
    if b.get(i) != Some(&b':') {
        return Err(SyntaxError::at(i, "expected `:` after a key", b));
    }
    Ok(i + 1)
}

pub(super) fn literal_end(b: &[u8], i: usize, word: &[u8]) -> Result<usize, SyntaxError> {
    for (k, &w) in word.iter().enumerate() {
        if b.get(i + k) != Some(&w) {
            return Err(SyntaxError::at(i + k, "not a JSON literal", b));
        }
    }
    Ok(i + word.len())
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, any number of digits: where it
/// ends, and whether it has an exponent.
pub(super) fn number_end(b: &[u8], mut i: usize) -> Result<(usize, bool), SyntaxError> {
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        _ => return Err(SyntaxError::at(i, "a digit is missing in a number", b)),
    }
    if b.get(i) == Some(&b'.') {
        let after = digits(i + 1);
        if after == i + 1 {
            return Err(SyntaxError::at(after, "a digit is missing after `.`", b));
        }
        i = after;
    }
    let exponent = matches!(b.get(i), Some(b'e' | b'E'));
    if exponent {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let after = digits(i);
        if after == i {
            return Err(SyntaxError::at(
                after,
                "a digit is missing in an exponent",
                b,
            ));
        }
        i = after;
    }
    Ok((i, exponent))
}

/// A string starting at its opening quote `i`: one past its closing quote.
pub fn string_end(b: &[u8], i: usize) -> Result<usize, SyntaxError> {
    string_scan(b, i, SCALAR, &mut ())
}

/// [`string_end`], reading the first `scalar` bytes one by one.
fn string_scan<N: Note>(
    b: &[u8],
    i: usize,
    scalar: usize,
    note: &mut N,
) -> Result<usize, SyntaxError> {
    debug_assert_eq!(b.get(i), Some(&b'"'));
    let mut i = i + 1;
    let mut scalar_until = i.saturating_add(scalar);
    loop {
        // Here `i` is inside the string and not escaped. A long string is checked 64 bytes at
        // a time; should that find anything wrong, the bytes are read one by one again to say
        // what and where.
        if i >= scalar_until {
            match super::skip::checked_string_rest(b, i, note) {
                Some(end) => return Ok(end),
                None => scalar_until = usize::MAX,
            }
        }
        i = plain_run_end(b, i);
        match b.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') => {
                        for k in 2..6 {
                            if !b.get(i + k).is_some_and(u8::is_ascii_hexdigit) {
                                return Err(SyntaxError::at(
                                    i + k,
                                    "a `\\u` escape needs four hex digits",
                                    b,
                                ));
                            }
                        }
                        // A lone surrogate is a valid escape for JSON.parse.
                        if is_surrogate_hex(&b[i + 2..]) {
                            note.surrogate();
                        }
                        i += 6;
                    }
                    _ => return Err(SyntaxError::at(i + 1, "not a JSON escape", b)),
                }
            }
            Some(_) => {
                return Err(SyntaxError::at(
                    i,
                    "a control character must be escaped in a string",
                    b,
                ));
            }
            None => return Err(SyntaxError::at(i, "a string is not closed", b)),
        }
    }
}

/// The end of a run of bytes that need no attention in a string: not `"`, `\` or a control
/// character. Eight bytes at a time.
#[inline]
pub(crate) fn plain_run_end(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        // A byte below 0x20 (with the high bit clear), a quote, or a backslash.
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let quote = has_zero(w ^ (ONES * u64::from(b'"')));
        let backslash = has_zero(w ^ (ONES * u64::from(b'\\')));
        let hit = control | quote | backslash;
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !matches!(b[i], b'"' | b'\\' | 0..=0x1f) {
        i += 1;
    }
    i
}

/// Bytes a skip looks at one by one before it goes on 64 at a time ([`super::skip`]): short
/// values (keys, ids, flags) are done sooner byte by byte.
const SCALAR: usize = 64;

/// Where the value starting at `i` ends, for text already known to be valid JSON: containers
/// are skipped by counting brackets outside strings ([`super::skip`]), with no checks.
pub(crate) fn skip_valid(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' => skip_string(b, i),
        // Empty (`[]`, `{}`: flags, lists) at once; any other in chunks from its start: from a
        // few bytes on that is quicker than byte by byte.
        b'{' | b'[' if matches!(b.get(i + 1), Some(b'}' | b']')) => i + 2,
        b'{' | b'[' => super::skip::container_rest(b, i + 1, 1),
        _ => {
            let mut i = i;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !is_ws(b[i]) {
                i += 1;
            }
            i
        }
    }
}

/// One past the closing quote of a valid string starting at `i`.
#[inline]
fn skip_string(b: &[u8], i: usize) -> usize {
    let mut i = i + 1;
    let scalar_until = i + SCALAR;
    loop {
        // Here `i` is inside the string and not escaped.
        if i >= scalar_until {
            return super::skip::string_rest(b, i);
        }
        i = plain_run_end(b, i);
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            // Valid text has no raw control characters; step over one anyway.
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> bool {
        validate(s.as_bytes()).is_ok()
    }

    #[test]
    fn what_json_parse_takes_is_valid() {
        for s in [
            "0",
            "-0",
            "1e400",
            "123456789012345678901234567890",
            "1.5E-3",
            "\"\\ud83d\"",
            "\"\\udc00x\\ud800\"",
            "{\"a\":1,\"a\":2}",
            " [ 1 , { } , [ ] , \"x\" , null , true , false ] ",
            "\"\\u00e9\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
            "\"é 漢字 😀\"",
        ] {
            assert!(ok(s), "{s}");
        }
    }

    #[test]
    fn what_json_parse_refuses_is_not() {
        for s in [
            "",
            " ",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "-",
            "NaN",
            "Infinity",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "'a'",
            "\"\t\"",
            "\"\\x41\"",
            "\"\\u12\"",
            "\"abc",
            "[1 2]",
            "{\"a\" 1}",
            "// c\n1",
            "1 2",
            "tru",
            "\u{feff}1",
        ] {
            assert!(!ok(s), "{s:?}");
        }
        assert!(validate(b"\"\xff\"").is_err());
    }

    #[test]
    fn a_value_cut_short_says_so() {
        for s in ["{\"a\":", "[1,2", "\"abc", "{\"a\":{\"b\":1}", "-"] {
            let e = validate(s.as_bytes()).unwrap_err();
            assert!(e.cut_short, "{s}: {e}");
        }
        assert!(!validate(b"[1,}").unwrap_err().cut_short);
    }

    #[test]
    fn a_million_deep_nesting_is_checked_without_recursion() {
        let mut s = "[".repeat(1_000_000);
        s.push_str(&"]".repeat(1_000_000));
        assert!(ok(&s));
        s.pop();
        assert!(validate(s.as_bytes()).unwrap_err().cut_short);
        let objects = "{\"a\":".repeat(500_000) + "1" + &"}".repeat(500_000);
        assert!(ok(&objects));
    }

    #[test]
    fn long_strings_checked_in_chunks_give_the_answers_of_byte_by_byte() {
        let tails: [&[u8]; 16] = [
            b"\"",
            b"\\\"\"",
            b"\\\\\"",
            b"\x01\"",
            b"\x1f\"",
            b"\\q\"",
            b"\\u12g4\"",
            b"\\u12\"",
            b"\\ud83d\"",
            b"\\",
            b"",
            b"\\u00e9\\n\\t\\/\"",
            b"\x7f\x80\xff\"",
            b"\\\\\\\"\"",
            b"\\\n\"",
            b"\t\"",
        ];
        for pad in 0..140 {
            for tail in tails {
                for middle in [&b""[..], b"\\\\", b"\\\"", b"]}"] {
                    let mut s = b"\"".to_vec();
                    s.extend(std::iter::repeat_n(b'a', pad));
                    s.extend_from_slice(middle);
                    s.extend_from_slice(tail);
                    s.extend_from_slice(b" ,\"x\"");
                    let slow = string_scan(&s, 0, usize::MAX, &mut ());
                    for scalar in [0, 1, 7, SCALAR] {
                        assert_eq!(
                            string_scan(&s, 0, scalar, &mut ()),
                            slow,
                            "{scalar}: {:?}",
                            String::from_utf8_lossy(&s)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn valid_text_is_skipped_as_it_is_checked() {
        let s = br#"{"a":"x}\"]","b":[1,{"c":"]"}],"n":-1.5e3} rest"#;
        assert_eq!(skip_valid(s, 0), value_end(s, 0).unwrap());
        let arr = br#"[ "a", 12 ,true]x"#;
        assert_eq!(skip_valid(arr, 0), 16);
        assert_eq!(skip_valid(b"12,", 0), 2);
        assert_eq!(skip_valid(b"\"a\\\"b\",", 0), 6);
    }

    #[test]
    fn the_eight_byte_scan_stops_at_every_byte_that_matters() {
        for pos in 0..20 {
            for special in [b'"', b'\\', 0x01, 0x1f] {
                let mut s = vec![b'a'; 20];
                s[pos] = special;
                assert_eq!(plain_run_end(&s, 0), pos, "{special} at {pos}");
            }
        }
        // High bytes (UTF-8) and 0x20..0x7f pass.
        let s = "éé  ~~\u{7f}漢字 xyz".as_bytes();
        assert_eq!(plain_run_end(s, 0), s.len());
    }
}
