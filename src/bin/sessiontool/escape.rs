//! Session text and file names made safe to print on a terminal. A session (or a file name on
//! disk) can hold escape sequences: OSC 52 sets the clipboard, `ESC[2J` clears the screen,
//! OSC 0 sets the window title, a C1 `CSI` (U+009B) starts a sequence without an ESC, and
//! bidirectional overrides make a name read differently from what it is (Trojan Source,
//! CVE-2021-42574). Every piece of such text in human output goes through [`line`] or
//! [`body`], which print these characters visibly instead (`\x1b`, `\u{9b}`, `\u{202e}`), the
//! way ripgrep and git show what they will not send raw.
//!
//! `--json` output keeps every string exact. JSON escapes C0 controls itself; the C1
//! controls, DEL and bidirectional overrides it allows raw are written as `\u` escapes by
//! [`JsonFormatter`], which a JSON reader decodes to the same string.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

/// Text for one line (a title, an id, a path, a message): every control character escaped,
/// line breaks and tabs included.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// A message body that the caller wraps itself: line breaks and tabs stay (a `\r` before a
/// line break goes, as `str::lines` drops it); every other control character is escaped.
pub fn body(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// A path, as [`line`] shows text.
pub fn path(path: &Path) -> String {
    line(&path.display().to_string()).into_owned()
}

fn escape(text: &str, keep_breaks: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_breaks && (c == '\n' || c == '\t');
    if !text.chars().any(|c| unsafe_char(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' if keep_breaks => out.push(c),
            '\r' if keep_breaks && chars.peek() == Some(&'\n') => {}
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Pretty JSON (as `serde_json::to_writer_pretty` writes it) with every character a terminal
/// would act on written as a `\u` escape, not only those JSON requires (C0).
#[derive(Default)]
pub struct JsonFormatter(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for JsonFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if unsafe_char(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// C0 controls, DEL, C1 controls (U+0080 to U+009F, CSI among them) and the bidirectional
/// embeddings, overrides and isolates (what rustc's `text_direction_codepoint` lints warn of;
/// the marks U+200E/U+200F only steer neutral characters, and right-to-left text itself shows
/// as it is).
fn unsafe_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        let text = "Arabic: مرحبا — 🍅 é \"quotes\" back\\slash";
        assert!(matches!(line(text), Cow::Borrowed(t) if t == text));
        assert!(matches!(body("two\nlines\tand a tab"), Cow::Borrowed(_)));
    }

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        let hostile = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2Jc\x1b]0;title\x1b\\d\u{9b}31me\u{7f}f\u{202e}g\u{2066}h\0";
        let shown = line(hostile);
        assert_eq!(
            shown,
            "a\\x1b]52;c;ZXZpbA==\\x07b\\x1b[2Jc\\x1b]0;title\\x1b\\d\\u{9b}31me\\x7ff\\u{202e}g\\u{2066}h\\x00"
        );
        assert!(!shown.chars().any(unsafe_char));
    }

    #[test]
    fn a_line_escapes_breaks_and_a_body_keeps_them() {
        assert_eq!(line("one\r\ntwo\tthree"), "one\\r\\ntwo\\tthree");
        assert_eq!(body("one\r\ntwo\tthree\rfour"), "one\ntwo\tthree\\rfour");
        assert_eq!(body("x\x1b[2Jy\n"), "x\\x1b[2Jy\n");
    }

    #[test]
    fn json_keeps_the_string_and_escapes_what_json_allows_raw() {
        use serde::Serialize;
        let write = |value: &serde_json::Value| {
            let mut out = Vec::new();
            let mut ser =
                serde_json::Serializer::with_formatter(&mut out, JsonFormatter::default());
            value.serialize(&mut ser).unwrap();
            String::from_utf8(out).unwrap()
        };
        let value = serde_json::json!({"t\u{9b}": ["a\x1b[2J\u{9b}1m\u{7f}\u{202e}é🍅"]});
        let text = write(&value);
        assert_eq!(
            text,
            "{\n  \"t\\u009b\": [\n    \"a\\u001b[2J\\u009b1m\\u007f\\u202eé🍅\"\n  ]\n}"
        );
        assert!(!text.chars().any(|c| unsafe_char(c) && c != '\n'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        let plain = serde_json::json!({"a": [1, {"b": null, "c": []}], "d": {}});
        assert_eq!(
            write(&plain),
            serde_json::to_string_pretty(&plain).unwrap(),
            "laid out as to_string_pretty does"
        );
    }

    #[test]
    fn paths_are_escaped_too() {
        assert_eq!(
            path(Path::new("/tmp/a\x1b[31mb.jsonl")),
            "/tmp/a\\x1b[31mb.jsonl"
        );
    }
}
