//! JSON string literals decoded. `JSON.parse` keeps a lone UTF-16 surrogate escape (what
//! `JSON.stringify` writes for a string cut inside an emoji); Rust strings cannot hold one, so
//! it becomes U+FFFD and the text says it is lossy: a caller that writes the value back as JSON
//! writes the literal as it was ([`super::Raw::text`]) instead of the decoded text.

use std::borrow::Cow;

/// A decoded string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a> {
    pub value: Cow<'a, str>,
    /// A lone surrogate escape was replaced by U+FFFD.
    pub lossy: bool,
}

/// Decodes a valid string literal (quotes included).
pub fn decode(literal: &str) -> Text<'_> {
    let inner = &literal[1..literal.len() - 1];
    // Backslashes found by `memchr` (a vector at a time): strings are mostly plain runs.
    let next_backslash = |from: usize| memchr::memchr(b'\\', &inner.as_bytes()[from..]);
    let Some(first) = next_backslash(0) else {
        return Text {
            value: Cow::Borrowed(inner),
            lossy: false,
        };
    };
    let mut out = String::with_capacity(inner.len());
    out.push_str(&inner[..first]);
    let b = inner.as_bytes();
    let mut lossy = false;
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            let next = next_backslash(i).map_or(b.len(), |n| i + n);
            out.push_str(&inner[i..next]);
            i = next;
            continue;
        }
        match b[i + 1] {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            _ => {
                let unit = hex4(&b[i + 2..i + 6]);
                i += 6;
                match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate: a pair when a low one follows.
                        if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
                            let low = hex4(&b[i + 2..i + 6]);
                            if (0xDC00..=0xDFFF).contains(&low) {
                                let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                out.push(char::from_u32(c).expect("a surrogate pair is a char"));
                                i += 6;
                                continue;
                            }
                        }
                        out.push('\u{FFFD}');
                        lossy = true;
                    }
                    0xDC00..=0xDFFF => {
                        out.push('\u{FFFD}');
                        lossy = true;
                    }
                    _ => out.push(char::from_u32(unit).expect("a BMP scalar value")),
                }
                continue;
            }
        }
        i += 2;
    }
    Text {
        value: Cow::Owned(out),
        lossy,
    }
}

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |n, &d| {
        n * 16
            + (d as char)
                .to_digit(16)
                .expect("a valid escape has hex digits")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let t = decode("\"plain é 漢\"");
        assert!(matches!(t.value, Cow::Borrowed("plain é 漢")));
        assert!(!t.lossy);
    }

    #[test]
    fn escapes_are_decoded() {
        let t = decode(r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#);
        assert_eq!(t.value, "a\"b\\c/d\u{8}\u{c}\n\r\té😀");
        assert!(!t.lossy);
    }

    #[test]
    fn a_lone_surrogate_becomes_fffd_and_says_so() {
        for (lit, want) in [
            (r#""x\ud83d""#, "x\u{FFFD}"),
            (r#""\ude00y""#, "\u{FFFD}y"),
            (r#""\ud83d\u0041""#, "\u{FFFD}A"),
            (r#""\ud83d\ud83d\ude00""#, "\u{FFFD}😀"),
        ] {
            let t = decode(lit);
            assert_eq!(t.value, want, "{lit}");
            assert!(t.lossy, "{lit}");
        }
    }
}
