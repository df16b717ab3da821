//! JSON written as each tool's own serializer writes it, straight into a byte buffer: the
//! escaping of JavaScript's `JSON.stringify` (and Rust's serde_json, which escapes alike),
//! Python's `json.dumps` and Go's `encoding/json`, with their separators and indentation. A
//! value read as [`Raw`] is written back with its strings and numbers as they were written.

use super::raw::Raw;
use super::scan;

/// How strings are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// `JSON.stringify` and serde_json: `"` `\` and control characters only (`\b \f \n \r \t`,
    /// others `\u00xx`); everything else as it is.
    Js,
    /// Python's `json.dumps` (`ensure_ascii=True`): also every non-ASCII character as `\uxxxx`
    /// (surrogate pairs above the BMP).
    PythonAscii,
    /// Go's `encoding/json`: also `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`...
    Go,
}

/// Separators and indentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub escape: Escape,
    /// `None`: one line. `Some("  ")`: a value per line, indented by this per level.
    pub indent: Option<&'static str>,
    /// Between a key and its value (`":"`, or `": "` for Python's compact default).
    pub colon: &'static str,
    /// Between items on one line (`","`, or `", "` for Python).
    pub comma: &'static str,
}

impl Style {
    /// `JSON.stringify(v)` and serde_json's `to_vec`.
    pub const JS: Style = Style {
        escape: Escape::Js,
        indent: None,
        colon: ":",
        comma: ",",
    };
    /// `JSON.stringify(v, null, 2)`.
    pub const JS_PRETTY: Style = Style {
        escape: Escape::Js,
        indent: Some("  "),
        colon: ": ",
        comma: ",",
    };
    /// Python's `json.dumps(v)`.
    pub const PYTHON: Style = Style {
        escape: Escape::PythonAscii,
        indent: None,
        colon: ": ",
        comma: ", ",
    };
    /// Go's `json.Marshal(v)`.
    pub const GO: Style = Style {
        escape: Escape::Go,
        indent: None,
        colon: ":",
        comma: ",",
    };
    /// Go's `json.MarshalIndent(v, "", "  ")`.
    pub const GO_PRETTY: Style = Style {
        escape: Escape::Go,
        indent: Some("  "),
        colon: ": ",
        comma: ",",
    };
}

/// A JSON writer into a buffer. Containers are opened and closed in order; the writer puts
/// the separators and indentation between them.
pub struct Out<'b> {
    buf: &'b mut Vec<u8>,
    style: Style,
    /// For each open container: whether it has an item yet.
    open: Levels,
    /// A key was written; its value comes next.
    after_key: bool,
    /// Levels of indentation the value stands at (its first line's are the caller's).
    base: usize,
}

impl<'b> Out<'b> {
    pub fn new(buf: &'b mut Vec<u8>, style: Style) -> Out<'b> {
        Out {
            buf,
            style,
            open: Levels::default(),
            after_key: false,
            base: 0,
        }
    }

    /// A writer of a value that stands `depth` levels into an indented document: its lines
    /// after the first are indented that much more (the first's indentation is the caller's).
    pub fn indented(buf: &'b mut Vec<u8>, style: Style, depth: usize) -> Out<'b> {
        Out {
            base: depth,
            ..Out::new(buf, style)
        }
    }

    /// Before a value or a key: the separator and the line break its place needs.
    fn item(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        let Some(first) = self.open.mark() else {
            return;
        };
        match self.style.indent {
            Some(_) => {
                if !first {
                    self.buf.push(b',');
                }
                self.newline(self.open.len());
            }
            None if !first => self.buf.extend_from_slice(self.style.comma.as_bytes()),
            None => {}
        }
    }

    fn newline(&mut self, depth: usize) {
        if let Some(unit) = self.style.indent {
            self.buf.push(b'\n');
            for _ in 0..self.base + depth {
                self.buf.extend_from_slice(unit.as_bytes());
            }
        }
    }

    pub fn begin_object(&mut self) -> &mut Self {
        self.item();
        self.buf.push(b'{');
        self.open.push();
        self
    }

    pub fn end_object(&mut self) -> &mut Self {
        self.close(b'}')
    }

    pub fn begin_array(&mut self) -> &mut Self {
        self.item();
        self.buf.push(b'[');
        self.open.push();
        self
    }

    pub fn end_array(&mut self) -> &mut Self {
        self.close(b']')
    }

    fn close(&mut self, bracket: u8) -> &mut Self {
        let had_items = self.open.pop();
        if had_items {
            self.newline(self.open.len());
        }
        self.buf.push(bracket);
        self
    }

    /// An object key; its value is written next.
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.item();
        escape_into(self.buf, key, self.style.escape);
        self.buf.extend_from_slice(self.style.colon.as_bytes());
        self.after_key = true;
        self
    }

    /// A key as it was written in the source (quotes and escapes as they were).
    pub fn raw_key(&mut self, literal: &str) -> &mut Self {
        self.item();
        self.buf.extend_from_slice(literal.as_bytes());
        self.buf.extend_from_slice(self.style.colon.as_bytes());
        self.after_key = true;
        self
    }

    pub fn str(&mut self, s: &str) -> &mut Self {
        self.item();
        escape_into(self.buf, s, self.style.escape);
        self
    }

    pub fn u64(&mut self, n: u64) -> &mut Self {
        self.item();
        decimal_into(self.buf, n);
        self
    }

    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.item();
        self.buf
            .extend_from_slice(if b { b"true" } else { b"false" });
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.item();
        self.buf.extend_from_slice(b"null");
        self
    }

    /// A `serde_json` value, in this writer's style (in `Style::JS`, the bytes serde_json's
    /// `to_vec` gives). Without recursion: any depth.
    pub fn value(&mut self, value: &serde_json::Value) -> &mut Self {
        use serde_json::Value;
        enum Open<'v> {
            Object(serde_json::map::Iter<'v>),
            Array(std::slice::Iter<'v, Value>),
        }
        let mut open: Vec<Open> = Vec::new();
        let mut next = Some(value);
        loop {
            match next.take() {
                Some(Value::Null) => {
                    self.null();
                }
                Some(Value::Bool(b)) => {
                    self.bool(*b);
                }
                Some(Value::Number(n)) => {
                    self.item();
                    // Numbers are kept as their text (`arbitrary_precision`).
                    use std::io::Write;
                    write!(self.buf, "{n}").expect("a Vec takes every write");
                }
                Some(Value::String(s)) => {
                    self.str(s);
                }
                Some(Value::Array(items)) => {
                    self.begin_array();
                    open.push(Open::Array(items.iter()));
                }
                Some(Value::Object(entries)) => {
                    self.begin_object();
                    open.push(Open::Object(entries.iter()));
                }
                None => {}
            }
            match open.last_mut() {
                None => return self,
                Some(Open::Array(items)) => match items.next() {
                    Some(v) => next = Some(v),
                    None => {
                        open.pop();
                        self.end_array();
                    }
                },
                Some(Open::Object(entries)) => match entries.next() {
                    Some((k, v)) => {
                        self.key(k);
                        next = Some(v);
                    }
                    None => {
                        open.pop();
                        self.end_object();
                    }
                },
            }
        }
    }

    /// `str(&compact(value))`: a value's compact JSON text (serde_json's `to_string`) as a
    /// string, in one pass, without making the text first (a rollout's tool arguments). In
    /// any escaping but [`Escape::Js`], through the text.
    pub fn str_of_compact(&mut self, value: &serde_json::Value) -> &mut Self {
        if self.style.escape != Escape::Js {
            return self.str(&compact(value));
        }
        self.item();
        self.buf.push(b'"');
        compact_escaped(self.buf, value);
        self.buf.push(b'"');
        self
    }

    /// A value as it was read: strings and numbers as written, containers laid out in this
    /// writer's style. One pass over its tokens: linear, any depth.
    pub fn raw(&mut self, value: Raw<'_>) -> &mut Self {
        let text = value.text();
        let b = text.as_bytes();
        // For each open container: whether it is an object, and whether its next string is
        // a key.
        let mut open: Vec<(bool, bool)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'{' => {
                    self.begin_object();
                    open.push((true, true));
                    i += 1;
                }
                b'[' => {
                    self.begin_array();
                    open.push((false, false));
                    i += 1;
                }
                b'}' => {
                    self.end_object();
                    open.pop();
                    i += 1;
                }
                b']' => {
                    self.end_array();
                    open.pop();
                    i += 1;
                }
                b',' => {
                    if let Some((true, next_is_key)) = open.last_mut() {
                        *next_is_key = true;
                    }
                    i += 1;
                }
                b':' => i += 1,
                c if scan::is_ws(c) => i += 1,
                b'"' => {
                    let end = scan::skip_valid(b, i);
                    let literal = &text[i..end];
                    match open.last_mut() {
                        Some((true, next_is_key @ true)) => {
                            *next_is_key = false;
                            self.raw_key(literal);
                        }
                        _ => {
                            self.verbatim(literal);
                        }
                    }
                    i = end;
                }
                _ => {
                    let end = scan::skip_valid(b, i);
                    self.verbatim(&text[i..end]);
                    i = end;
                }
            }
        }
        self
    }

    /// Text already in JSON form, written as it is (a value this writer has no part in).
    pub fn verbatim(&mut self, json: &str) -> &mut Self {
        self.item();
        self.buf.extend_from_slice(json.as_bytes());
        self
    }
}

/// For each open container of an [`Out`], whether it has an item yet: a bit each for the
/// first 64 levels, a `Vec` beyond (a writer is made for each line: a `Vec` cost an allocation
/// a line).
#[derive(Default)]
struct Levels {
    depth: usize,
    bits: u64,
    deeper: Vec<bool>,
}

impl Levels {
    fn len(&self) -> usize {
        self.depth
    }

    /// A container opened, with no item yet.
    fn push(&mut self) {
        match self.depth {
            d @ 0..64 => self.bits &= !(1 << d),
            _ => self.deeper.push(false),
        }
        self.depth += 1;
    }

    /// The innermost container given an item: whether it is its first (`None`: none is open).
    fn mark(&mut self) -> Option<bool> {
        let top = self.depth.checked_sub(1)?;
        Some(match top {
            0..64 => {
                let first = self.bits & (1 << top) == 0;
                self.bits |= 1 << top;
                first
            }
            _ => {
                let has_items = self.deeper.last_mut()?;
                !std::mem::replace(has_items, true)
            }
        })
    }

    /// The innermost container closed: whether it had items.
    fn pop(&mut self) -> bool {
        let top = self.depth.checked_sub(1).expect("a container is open");
        self.depth = top;
        match top {
            0..64 => self.bits & (1 << top) != 0,
            _ => self.deeper.pop().expect("a container is open"),
        }
    }
}

/// `value` as serde_json's `to_string` writes it (compact, escaped as `JSON.stringify`).
pub fn compact(value: &serde_json::Value) -> String {
    let mut buf = Vec::new();
    Out::new(&mut buf, Style::JS).value(value);
    String::from_utf8(buf).expect("escaped text of UTF-8 strings is UTF-8")
}

/// [`compact`]'s text of `value`, escaped as [`Escape::Js`] escapes a string's content (no
/// quotes around it): each string of the value escaped twice at once. Without recursion.
fn compact_escaped(buf: &mut Vec<u8>, value: &serde_json::Value) {
    use serde_json::Value;
    enum Open<'v> {
        Object(serde_json::map::Iter<'v>),
        Array(std::slice::Iter<'v, Value>),
    }
    let mut open: Vec<Open> = Vec::new();
    let mut next = Some(value);
    // Whether the innermost open container has no item yet.
    let mut first = false;
    loop {
        match next.take() {
            Some(Value::Null) => buf.extend_from_slice(b"null"),
            Some(Value::Bool(b)) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
            Some(Value::Number(n)) => {
                // Digits, signs, a point, an exponent: nothing to escape.
                use std::io::Write;
                write!(buf, "{n}").expect("a Vec takes every write");
            }
            Some(Value::String(s)) => {
                buf.extend_from_slice(b"\\\"");
                escape_js_content::<true>(buf, s);
                buf.extend_from_slice(b"\\\"");
            }
            Some(Value::Array(items)) => {
                buf.push(b'[');
                open.push(Open::Array(items.iter()));
                first = true;
            }
            Some(Value::Object(entries)) => {
                buf.push(b'{');
                open.push(Open::Object(entries.iter()));
                first = true;
            }
            None => {}
        }
        match open.last_mut() {
            None => return,
            Some(Open::Array(items)) => match items.next() {
                Some(v) => {
                    if !std::mem::replace(&mut first, false) {
                        buf.push(b',');
                    }
                    next = Some(v);
                }
                None => {
                    open.pop();
                    buf.push(b']');
                    first = false;
                }
            },
            Some(Open::Object(entries)) => match entries.next() {
                Some((k, v)) => {
                    if !std::mem::replace(&mut first, false) {
                        buf.push(b',');
                    }
                    buf.extend_from_slice(b"\\\"");
                    escape_js_content::<true>(buf, k);
                    buf.extend_from_slice(b"\\\":");
                    next = Some(v);
                }
                None => {
                    open.pop();
                    buf.push(b'}');
                    first = false;
                }
            },
        }
    }
}

/// `n` in decimal, as `to_string` writes it, without a `String` (the rollout writer writes
/// ten counts a reply, on its one thread).
fn decimal_into(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `s` as a JSON string literal, escaped as `escape` says.
pub fn escape_into(buf: &mut Vec<u8>, s: &str, escape: Escape) {
    if escape == Escape::Js {
        return escape_js(buf, s);
    }
    buf.reserve(s.len() + 2);
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let unit = |buf: &mut Vec<u8>, u: u32| {
        buf.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            buf.push(HEX[((u >> shift) & 0xF) as usize]);
        }
    };
    for (i, c) in s.char_indices() {
        let short: Option<&[u8]> = match c {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            '\u{8}' => Some(b"\\b"),
            '\u{c}' => Some(b"\\f"),
            _ => None,
        };
        let needs = short.is_some()
            || (c as u32) < 0x20
            || match escape {
                Escape::Js => false,
                Escape::PythonAscii => !c.is_ascii(),
                Escape::Go => matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}'),
            };
        if !needs {
            continue;
        }
        buf.extend_from_slice(&bytes[start..i]);
        start = i + c.len_utf8();
        match short {
            Some(s) => buf.extend_from_slice(s),
            None if (c as u32) > 0xFFFF => {
                let v = c as u32 - 0x10000;
                unit(buf, 0xD800 + (v >> 10));
                unit(buf, 0xDC00 + (v & 0x3FF));
            }
            None => unit(buf, c as u32),
        }
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// [`escape_into`] for [`Escape::Js`]: only `"`, `\\` and control characters are escaped,
/// so the text is copied in runs found eight bytes at a time.
fn escape_js(buf: &mut Vec<u8>, s: &str) {
    buf.reserve(s.len() + 2);
    buf.push(b'"');
    escape_js_content::<false>(buf, s);
    buf.push(b'"');
}

/// The content of `s` as `JSON.stringify` escapes it (no quotes), escaped so a second time
/// when `TWICE` (a string inside a string: a tool call's `arguments`).
fn escape_js_content<const TWICE: bool>(buf: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    buf.reserve(b.len());
    let mut start = 0;
    let mut i = 0;
    loop {
        // The next byte to escape: the bytes the grammar check passes over in a string.
        i = scan::plain_run_end(b, i);
        let Some(&c) = b.get(i) else {
            break;
        };
        buf.extend_from_slice(&b[start..i]);
        let hex = [HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xF)]];
        let once: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => &[b'\\', b'u', b'0', b'0', hex[0], hex[1]],
        };
        if TWICE {
            for &e in once {
                if e == b'\\' || e == b'"' {
                    buf.push(b'\\');
                }
                buf.push(e);
            }
        } else {
            buf.extend_from_slice(once);
        }
        i += 1;
        start = i;
    }
    buf.extend_from_slice(&b[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str, e: Escape) -> String {
        let mut b = Vec::new();
        escape_into(&mut b, s, e);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn each_tool_escapes_as_its_serializer_does() {
        let s = "a\"b\\c\n\u{1}<é😀\u{2028}/";
        assert_eq!(esc(s, Escape::Js), "\"a\\\"b\\\\c\\n\\u0001<é😀\u{2028}/\"");
        assert_eq!(
            esc(s, Escape::PythonAscii),
            "\"a\\\"b\\\\c\\n\\u0001<\\u00e9\\ud83d\\ude00\\u2028/\""
        );
        assert_eq!(
            esc(s, Escape::Go),
            "\"a\\\"b\\\\c\\n\\u0001\\u003cé😀\\u2028/\""
        );
        // serde_json agrees with the JS escaping.
        assert_eq!(esc(s, Escape::Js), serde_json::to_string(s).unwrap());
    }

    #[test]
    fn numbers_are_written_as_to_string_writes_them() {
        let mut n = 1u64;
        let mut all = vec![0, u64::MAX, u64::MAX - 1];
        for _ in 0..20 {
            all.extend([n - 1, n, n + 1]);
            n = n.saturating_mul(10);
        }
        for n in all {
            let mut b = Vec::new();
            decimal_into(&mut b, n);
            assert_eq!(b, n.to_string().as_bytes());
        }
    }

    #[test]
    fn compact_and_pretty_layouts_match_the_tools() {
        let mut b = Vec::new();
        let mut o = Out::new(&mut b, Style::JS);
        o.begin_object().key("a").u64(1).key("b").begin_array();
        o.str("x").null().bool(true).end_array();
        o.key("c").begin_object().end_object().end_object();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            r#"{"a":1,"b":["x",null,true],"c":{}}"#
        );

        let value = serde_json::json!({"a": 1, "b": ["x", {"c": []}], "d": {}});
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS_PRETTY).raw(Raw::parse(&value.to_string()).unwrap());
        assert_eq!(
            String::from_utf8(b).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );

        let mut b = Vec::new();
        Out::new(&mut b, Style::PYTHON).raw(Raw::parse(r#"{"a":[1,2],"b":"c"}"#).unwrap());
        assert_eq!(String::from_utf8(b).unwrap(), r#"{"a": [1, 2], "b": "c"}"#);
    }

    #[test]
    fn raw_values_keep_their_strings_and_numbers_as_written() {
        let src = r#"{ "n" : 1e5 , "z":-0, "s":"\ud83d\u00e9", "k\u0041":[ 1e400 ] }"#;
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS).raw(Raw::parse(src).unwrap());
        assert_eq!(
            String::from_utf8(b).unwrap(),
            r#"{"n":1e5,"z":-0,"s":"\ud83d\u00e9","k\u0041":[1e400]}"#
        );
    }

    #[test]
    fn items_are_separated_at_every_depth_past_the_levels_kept_as_bits() {
        // `[1,{"a":[1,{"a":...}],"b":2},2]`: a container with items before and after one
        // that holds the rest, at each of 100 levels.
        let mut text = String::from("null");
        for k in 0..100 {
            text = match k % 2 {
                0 => format!("[1,{text},2]"),
                _ => format!("{{\"a\":{text},\"b\":[]}}"),
            };
        }
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS).raw(Raw::parse(&text).unwrap());
        assert_eq!(String::from_utf8(b).unwrap(), text);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS_PRETTY).value(&value);
        assert_eq!(String::from_utf8(b).unwrap(), pretty);
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS_PRETTY).raw(Raw::parse(&text).unwrap());
        assert_eq!(String::from_utf8(b).unwrap(), pretty);
    }

    #[test]
    fn a_million_deep_raw_value_is_written_without_recursion() {
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        let mut b = Vec::new();
        Out::new(&mut b, Style::JS).raw(Raw::parse(&deep).unwrap());
        assert_eq!(b.len(), deep.len());
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        // Strings with every byte escaping cares about, at every place around the eight-byte
        // steps, and text beyond ASCII.
        let mut values: Vec<serde_json::Value> = Vec::new();
        for c in (0u8..0x80).chain([b'"', b'\\']) {
            for at in 0..18 {
                let mut s = "a".repeat(at);
                s.push(c as char);
                s.push_str("\u{e9}\u{1F600}\u{2028}z");
                values.push(s.into());
            }
        }
        values.push(serde_json::json!({"a":[1,-0.5,"x",null,true,{"b":[]}],"c":{},"d":[[[]]]}));
        // Every line of the fixtures and samples that is JSON.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![root.join("fixtures"), root.join("../../../shared/samples")];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let bytes = std::fs::read(&path).unwrap_or_default();
                for line in bytes.split(|&b| b == b'\n').chain([&bytes[..]]) {
                    if let Ok((v, _)) = crate::json::value::to_value(line) {
                        values.push(v);
                    }
                }
            }
        }
        assert!(values.len() > 2000, "{}", values.len());
        for v in &values {
            let mut ours = Vec::new();
            Out::new(&mut ours, Style::JS).value(v);
            let theirs = serde_json::to_vec(v).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
            // As a string, in one pass: the text escaped.
            let mut once = Vec::new();
            Out::new(&mut once, Style::JS).str_of_compact(v);
            let mut twice = Vec::new();
            Out::new(&mut twice, Style::JS).str(&compact(v));
            assert_eq!(
                String::from_utf8(once).unwrap(),
                String::from_utf8(twice).unwrap()
            );
            // Pretty, as serde_json's `PrettyFormatter` with two spaces, on its own and two
            // levels into a document.
            let mut theirs = Vec::new();
            let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
            let mut ser = serde_json::Serializer::with_formatter(&mut theirs, fmt);
            serde::Serialize::serialize(v, &mut ser).unwrap();
            let pretty = |depth| {
                let mut ours = Vec::new();
                Out::indented(&mut ours, Style::JS_PRETTY, depth).value(v);
                String::from_utf8(ours).unwrap()
            };
            let theirs = String::from_utf8(theirs).unwrap();
            assert_eq!(pretty(0), theirs);
            assert_eq!(pretty(2), theirs.replace('\n', "\n    "));
        }
    }
}
