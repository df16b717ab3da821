//! Salvage of a truncated legacy session document (FORMATS.md 1 and 12).
//!
//! Gemini CLI rewrites the whole session file in place, so a crash leaves the first part of a
//! valid document followed by nothing (or by NUL padding). This module walks the top-level object
//! member by member and keeps what was complete before the cut: the original bytes of every whole
//! top-level member and of every whole element of `messages`, closed as the CLI would close them.
//! It never re-serializes anything, so the kept part stays byte for byte as the CLI wrote it.

use crate::formats::trim_start;

/// What could be saved from a legacy session document that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvage {
    /// A complete, valid legacy session document in the CLI's own layout: the input from its
    /// `{` up to `cut_at`, then the brackets that close it (`\n  ]\n}`, `]\n}`, `\n}` or nothing).
    pub document: Vec<u8>,
    /// How many messages were kept.
    pub messages_kept: usize,
    /// Byte offset in the input of the first byte that is not represented in `document` (the
    /// torn message, or whatever follows the last complete value, NUL padding included).
    /// Everything from here to the end of the input is what a repair moves to a sidecar file.
    pub cut_at: u64,
}

/// Closes a messages array cut after at least one whole message, and then the session object.
const CLOSE_MESSAGES: &[u8] = b"\n  ]\n}";
/// Closes a messages array cut before its first message (`JSON.stringify` writes `[]`).
const CLOSE_EMPTY_MESSAGES: &[u8] = b"]\n}";
/// Closes the session object after its last whole member.
const CLOSE_SESSION: &[u8] = b"\n}";

/// `None` when the bytes are not a truncated legacy session (no `{` start, no complete
/// `sessionId` or no `messages` array seen, or the document parses whole: then there is nothing
/// to salvage).
pub fn salvage(bytes: &[u8]) -> Option<Salvage> {
    let body = trim_start(bytes);
    let start = bytes.len() - body.len();
    if !body.starts_with(b"{") || parses(body) {
        return None;
    }
    let mut scan = Scan {
        b: bytes,
        pos: start + 1,
    };
    let mut session_id = false;
    let mut messages: Option<Messages> = None;
    // End of the last whole top-level member (or just after `{`).
    let mut kept_end = start + 1;
    // Where the top-level object closed, when it did (the trouble is then after it).
    let mut closed_at = None;
    loop {
        scan.skip_ws();
        if kept_end == start + 1 && scan.eat(b'}') {
            closed_at = Some(scan.pos);
            break;
        }
        let Some(key) = scan.key() else { break };
        scan.skip_ws();
        if !scan.eat(b':') {
            break;
        }
        scan.skip_ws();
        if key == "messages" && messages.is_none() {
            // Anything but an array (or a cut before its `[`) is nothing this format can read.
            if !scan.eat(b'[') {
                return None;
            }
            let m = scan.elements();
            messages = Some(m);
            if !m.complete {
                break;
            }
        } else {
            if scan.value().is_none() {
                break;
            }
            session_id |= key == "sessionId";
        }
        kept_end = scan.pos;
        scan.skip_ws();
        match scan.next() {
            Some(b',') => {}
            Some(b'}') => {
                closed_at = Some(scan.pos);
                break;
            }
            _ => break,
        }
    }
    let messages = messages?;
    if !session_id {
        return None;
    }
    let (keep_to, close): (usize, &[u8]) = match (messages.complete, closed_at) {
        (false, _) if messages.kept == 0 => (messages.open_end, CLOSE_EMPTY_MESSAGES),
        (false, _) => (messages.last_end, CLOSE_MESSAGES),
        // A whole document with something after it (NUL padding, a second write's tail): keep
        // the newline the file had right after the `}`, if any.
        (true, Some(end)) if bytes.get(end) == Some(&b'\n') => (end + 1, b""),
        (true, Some(end)) => (end, b""),
        (true, None) => (kept_end, CLOSE_SESSION),
    };
    let mut document = bytes.get(start..keep_to)?.to_vec();
    document.extend_from_slice(close);
    // Each kept piece was checked on its own; this guards the whole against a scanner mistake.
    if !parses(&document) {
        return None;
    }
    Some(Salvage {
        document,
        messages_kept: messages.kept,
        cut_at: keep_to as u64,
    })
}

/// Whether the reader reads the bytes as Gemini CLI's `JSON.parse` does (a lone surrogate
/// escape is a string there, and so here; invalid UTF-8 is not).
fn parses(bytes: &[u8]) -> bool {
    crate::json::value::to_value(bytes).is_ok()
}

/// What the scan of the `messages` array found.
#[derive(Clone, Copy)]
struct Messages {
    /// Offset just after the `[`.
    open_end: usize,
    /// Offset just after the last whole message (`open_end` when there is none).
    last_end: usize,
    kept: usize,
    /// Whether the closing `]` was reached.
    complete: bool,
}

/// A cursor over the input. Every method leaves `pos` past what it accepted and returns `None`
/// (or `false`) at the end of the input or on anything unexpected; none of them can panic.
struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// Skips JSON white space (not NUL: NUL padding is part of the cut).
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// An object key, decoded (so that escapes in it compare as what they stand for).
    fn key(&mut self) -> Option<String> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return None;
        }
        let end = string_end(self.b, start)?;
        let key = serde_json::from_slice(self.b.get(start..end)?).ok()?;
        self.pos = end;
        Some(key)
    }

    /// One whole value that serde_json accepts on its own; returns its end.
    fn value(&mut self) -> Option<usize> {
        let start = self.pos;
        let end = match self.peek()? {
            b'"' => string_end(self.b, start)?,
            b'{' | b'[' => container_end(self.b, start)?,
            // A number or literal ends at a delimiter; at the end of the input it may be cut
            // (`12` of `123`, `tru`), so it is not whole.
            _ => {
                let len =
                    self.b.get(start..)?.iter().position(|c| {
                        matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                    })?;
                start + len
            }
        };
        if !parses(self.b.get(start..end)?) {
            return None;
        }
        self.pos = end;
        Some(end)
    }

    /// The elements of an array whose `[` was just eaten, up to the first one that is not whole.
    fn elements(&mut self) -> Messages {
        let mut m = Messages {
            open_end: self.pos,
            last_end: self.pos,
            kept: 0,
            complete: false,
        };
        self.skip_ws();
        if self.eat(b']') {
            m.complete = true;
            return m;
        }
        while let Some(end) = self.value() {
            m.kept += 1;
            m.last_end = end;
            self.skip_ws();
            match self.next() {
                Some(b',') => self.skip_ws(),
                Some(b']') => {
                    m.complete = true;
                    break;
                }
                _ => break,
            }
        }
        m
    }
}

/// The end (just after the closing quote) of the string starting at `start`, if it is whole.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            // Whatever follows a backslash (`\"`, `\\`, `\u`...) cannot end the string.
            b'\\' => i += 1,
            b'"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// The end (just after the bracket that closes it) of the object or array starting at `start`,
/// if it is whole. Brackets inside strings do not count; mismatched brackets are left for
/// serde_json to reject.
fn container_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i = string_end(b, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
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

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use std::path::Path;

    const GEMINI_JSON: &dyn crate::formats::Format = &GeminiJson;

    use proptest::prelude::*;

    use super::*;
    use crate::formats::gemini_json::GeminiJson;
    use crate::formats::{Input, to_pretty_js};

    fn fixtures() -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/gemini-json");
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .expect("fixture folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).expect("fixture"))
            })
            .collect();
        out.sort();
        assert!(out.len() >= 5, "fixtures found: {}", out.len());
        out
    }

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    /// Where each message of an intact fixture ends, found independently of the scanner: its
    /// text as `JSON.stringify(x, null, 2)` writes it at the depth of a message, searched for.
    fn message_ends(name: &str, bytes: &[u8]) -> Vec<usize> {
        let v: Value = serde_json::from_slice(bytes).unwrap();
        let mut from = 0;
        let mut ends = Vec::new();
        for m in v["messages"].as_array().unwrap() {
            let text = String::from_utf8(to_pretty_js(m, false))
                .unwrap()
                .replace('\n', "\n    ");
            let at = find(&bytes[from..], text.as_bytes())
                .unwrap_or_else(|| panic!("{name}: a message not in the CLI's layout"));
            from += at + text.len();
            ends.push(from);
        }
        ends
    }

    fn read_ok(name: &str, document: &[u8]) -> crate::formats::ReadOutcome {
        GEMINI_JSON
            .read(&Input {
                name,
                path: None,
                bytes: document,
            })
            .unwrap_or_else(|e| panic!("{name}: salvaged document does not read: {e}"))
    }

    /// Everything a salvage of `input` must satisfy, given the intact original.
    fn check(name: &str, original: &Value, input: &[u8], cut: usize, s: &Salvage) {
        let cut_at = s.cut_at as usize;
        assert!(cut_at <= cut, "{name} cut {cut}: cut_at {cut_at}");
        // The document is the input's own bytes up to cut_at, then a closing.
        let start = input.len() - trim_start(input).len();
        let tail = s
            .document
            .strip_prefix(&input[start..cut_at])
            .unwrap_or_else(|| panic!("{name} cut {cut}: document is not the input's prefix"));
        assert!(
            [
                &b""[..],
                CLOSE_MESSAGES,
                CLOSE_EMPTY_MESSAGES,
                CLOSE_SESSION
            ]
            .contains(&tail),
            "{name} cut {cut}: closing {:?}",
            String::from_utf8_lossy(tail)
        );
        // It holds the first members of the original and its first messages, unchanged.
        let doc: Value = serde_json::from_slice(&s.document).expect("document parses");
        let (doc, orig) = (doc.as_object().unwrap(), original.as_object().unwrap());
        let orig_keys: Vec<&String> = orig.keys().take(doc.len()).collect();
        assert_eq!(
            doc.keys().collect::<Vec<_>>(),
            orig_keys,
            "{name} cut {cut}"
        );
        for (k, v) in doc {
            if k == "messages" {
                let kept = &orig[k].as_array().unwrap()[..s.messages_kept];
                assert_eq!(v.as_array().unwrap().as_slice(), kept, "{name} cut {cut}");
            } else {
                assert_eq!(v, &orig[k], "{name} cut {cut}: {k}");
            }
        }
        let read = read_ok(name, &s.document);
        assert_eq!(read.session.meta.id.as_deref(), orig["sessionId"].as_str());
    }

    #[test]
    fn salvage_every_cut_of_every_fixture() {
        let mut salvaged = 0;
        for (name, bytes) in fixtures() {
            let original: Value = serde_json::from_slice(&bytes).unwrap();
            let ends = message_ends(&name, &bytes);
            let open = find(&bytes, b"\"messages\": [").unwrap() + b"\"messages\": [".len();
            let id_first = find(&bytes, b"\"sessionId\"").unwrap() < open;
            for cut in 0..bytes.len() {
                let input = &bytes[..cut];
                let got = salvage(input);
                if cut >= open && id_first {
                    assert!(got.is_some(), "{name}: nothing salvaged at cut {cut}");
                }
                let Some(s) = got else { continue };
                let whole = ends.iter().filter(|&&e| e <= cut).count();
                assert_eq!(s.messages_kept, whole, "{name} cut {cut}");
                check(&name, &original, input, cut, &s);
                salvaged += 1;
            }
        }
        assert!(salvaged > 10_000, "only {salvaged} cuts salvaged");
    }

    #[test]
    fn nul_padding_is_part_of_the_cut() {
        for (name, bytes) in fixtures() {
            let original: Value = serde_json::from_slice(&bytes).unwrap();
            let ends = message_ends(&name, &bytes);
            // Torn in the middle of the last message, then padded.
            if let Some(&last) = ends.last() {
                let cut = last - 5;
                let mut input = bytes[..cut].to_vec();
                input.extend(std::iter::repeat_n(0u8, 4096));
                let s = salvage(&input).expect("salvaged");
                assert_eq!(s.messages_kept, ends.len() - 1, "{name}");
                check(&name, &original, &input, cut, &s);
                assert!(input[s.cut_at as usize..cut].iter().all(|c| *c != 0));
            }
            // Whole, then padded: the document is the file itself.
            let mut input = bytes.clone();
            input.extend(std::iter::repeat_n(0u8, 100));
            let s = salvage(&input).expect("salvaged");
            assert_eq!(s.document, bytes, "{name}");
            assert_eq!(s.cut_at as usize, bytes.len());
            assert_eq!(s.messages_kept, ends.len());
            // Whole with a final newline, then padded: the newline stays.
            let mut input = bytes.clone();
            input.push(b'\n');
            input.extend(std::iter::repeat_n(0u8, 100));
            let s = salvage(&input).expect("salvaged");
            assert_eq!(&s.document[..bytes.len()], &bytes[..]);
            assert_eq!(s.document.len(), bytes.len() + 1);
            assert_eq!(s.cut_at as usize, bytes.len() + 1);
        }
    }

    #[test]
    fn intact_files_have_nothing_to_salvage() {
        for (name, bytes) in fixtures() {
            assert_eq!(salvage(&bytes), None, "{name}");
            let mut nl = bytes.clone();
            nl.extend_from_slice(b"\n");
            assert_eq!(salvage(&nl), None, "{name}");
        }
    }

    #[test]
    fn bom_and_leading_space_stay_out_of_the_document() {
        let (_, bytes) = fixtures()
            .into_iter()
            .find(|(n, _)| n == "plain.json")
            .unwrap();
        let ends = message_ends("plain.json", &bytes);
        let mut input = b"\xEF\xBB\xBF\n".to_vec();
        input.extend_from_slice(&bytes[..ends[0] + 3]);
        let s = salvage(&input).expect("salvaged");
        assert_eq!(s.messages_kept, 1);
        assert_eq!(s.cut_at as usize, ends[0] + 4);
        assert!(s.document.starts_with(b"{\n  \"sessionId\""));
        read_ok("plain.json", &s.document);
    }

    #[test]
    fn not_a_torn_session() {
        for bad in [
            &b""[..],
            b"\0\0\0\0",
            b"[{\"sessionId\": \"x\", \"messages\": [",
            b"{\"projectHash\": \"p\", \"messages\": [{\"id\": \"a\"},",
            b"{\"sessionId\": \"x\", \"projectHash\": \"p\"",
            b"{\"sessionId\": \"x\", \"messages\": null, \"kind\"",
            b"{\"sessionId\": \"x\", \"messages\": ",
            b"{\"sessionId\": \"x",
            b"{\"messages\": [], \"sessionId\": \"x",
        ] {
            assert_eq!(salvage(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn strings_with_escapes_and_brackets() {
        let input = br#"{
  "sessionId": "s\"}]",
  "messages": [
    {
      "id": "a",
      "type": "user",
      "content": "\\\"}]{[ \u00e9 \ud83d\ude00 ] }"
    },
    {
      "id": "b",
      "content": "\\"#;
        let s = salvage(input).expect("salvaged");
        assert_eq!(s.messages_kept, 1);
        let doc: Value = serde_json::from_slice(&s.document).unwrap();
        assert_eq!(doc["messages"][0]["content"], "\\\"}]{[ é 😀 ] }");
        assert_eq!(doc["sessionId"], "s\"}]");
        read_ok("escapes", &s.document);
    }

    #[test]
    fn a_bad_message_stops_the_salvage() {
        // Balanced but not JSON (a corrupted block): kept messages end before it.
        let input = b"{\n  \"sessionId\": \"x\",\n  \"messages\": [\n    {\"id\": \"a\"},\n    {\"id\": \x01},\n    {\"id\": \"c\"}\n  ]\n}";
        let s = salvage(input).expect("salvaged");
        assert_eq!(s.messages_kept, 1);
        assert_eq!(
            s.document,
            b"{\n  \"sessionId\": \"x\",\n  \"messages\": [\n    {\"id\": \"a\"}\n  ]\n}"
        );
        // Bytes a scan would skip but the reader cannot read: invalid UTF-8.
        let mut input = b"{\"sessionId\": \"x\", \"messages\": [{\"id\": \"a\"}, ".to_vec();
        input.extend_from_slice(b"\"\x80\"");
        input.extend_from_slice(b"]}");
        let s = salvage(&input).expect("salvaged");
        assert_eq!(s.messages_kept, 1);
        read_ok("bad", &s.document);
        // A lone surrogate escape is what JSON.stringify writes for a string cut inside an
        // emoji, and JSON.parse reads it: the document is whole, nothing to salvage.
        let whole =
            b"{\"sessionId\": \"x\", \"messages\": [{\"id\": \"a\", \"content\": \"\\ud800\"}]}";
        assert!(salvage(whole).is_none());
        // A cut number may be longer than it looks: not kept.
        let s = salvage(b"{\"sessionId\": \"x\", \"messages\": [], \"n\": 12").unwrap();
        assert_eq!(s.document, b"{\"sessionId\": \"x\", \"messages\": []\n}");
    }

    proptest! {
        #[test]
        fn never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Some(s) = salvage(&bytes) {
                prop_assert!(serde_json::from_slice::<Value>(&s.document).is_ok());
                prop_assert!(s.cut_at as usize <= bytes.len());
            }
        }

        #[test]
        fn never_panics_after_a_session_head(
            tail in proptest::collection::vec(
                prop_oneof![
                    Just(b'"'), Just(b'\\'), Just(b'{'), Just(b'}'), Just(b'['), Just(b']'),
                    Just(b','), Just(b':'), Just(b' '), Just(b'\n'), Just(0u8), Just(b'1'),
                    Just(b'a'), any::<u8>(),
                ],
                0..200,
            )
        ) {
            let mut bytes = b"{\n  \"sessionId\": \"x\",\n  \"messages\": [\n    ".to_vec();
            bytes.extend_from_slice(&tail);
            if let Some(s) = salvage(&bytes) {
                prop_assert!(serde_json::from_slice::<Value>(&s.document).is_ok());
                prop_assert!(s.cut_at as usize <= bytes.len());
                let input = Input { name: "p", path: None, bytes: &s.document };
                prop_assert!(GEMINI_JSON.read(&input).is_ok());
            }
        }
    }
}
