//! File names the tools give sessions: checkpoint tags as `encodeURIComponent` writes them,
//! and the times in session file names.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// What `encodeURIComponent` leaves alone besides letters and digits.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// JavaScript's `encodeURIComponent`: a tag becomes one file-name component, never a path
/// (`/`, `\`, NUL and `..` cannot survive it as separators: `.` is kept, but `/` is not).
pub fn encode_uri_component(tag: &str) -> String {
    utf8_percent_encode(tag, URI_COMPONENT).to_string()
}

/// The checkpoint file name of a tag: `checkpoint-<encodeURIComponent(tag)>.json`.
pub fn checkpoint_file(tag: &str) -> String {
    format!("checkpoint-{}.json", encode_uri_component(tag))
}

/// The tag of a checkpoint file name, decoded as Gemini CLI decodes it (bytes that are not
/// UTF-8 are replaced); `None` for other names.
pub fn checkpoint_tag(file_name: &str) -> Option<String> {
    let encoded = file_name
        .strip_prefix("checkpoint-")?
        .strip_suffix(".json")?;
    Some(percent_decode_str(encoded).decode_utf8_lossy().into_owned())
}

/// A session's start time for its file name: the recorded one when it parses, else now.
pub fn start_of(recorded: Option<&str>) -> Timestamp {
    recorded
        .and_then(|t| t.parse::<Timestamp>().ok())
        .unwrap_or_else(Timestamp::now)
}

/// `time` as `strftime` `pattern` in UTC.
pub fn utc(time: Timestamp, pattern: &str) -> String {
    time.to_zoned(TimeZone::UTC).strftime(pattern).to_string()
}

/// `time` as `strftime` `pattern` in the machine's time zone (Codex names and dates its
/// rollouts in local time).
pub fn local(time: Timestamp, pattern: &str) -> String {
    time.to_zoned(TimeZone::system())
        .strftime(pattern)
        .to_string()
}

/// The first `n` characters of an id, for names that carry a prefix of it.
pub fn prefix(id: &str, n: usize) -> &str {
    match id.char_indices().nth(n) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// A session id fit to be one file-name component: every character outside
/// `[A-Za-z0-9_.-]` becomes `_`, and `.`/`..` are refused by the caller's `safe_component`.
pub fn safe_component(id: &str) -> Option<String> {
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    (!cleaned.is_empty() && cleaned != "." && cleaned != "..").then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_encoded_as_encode_uri_component_does() {
        assert_eq!(checkpoint_file("my/tag"), "checkpoint-my%2Ftag.json");
        assert_eq!(checkpoint_file("../x"), "checkpoint-..%2Fx.json");
        assert_eq!(
            encode_uri_component("a b-_.!~*'()é\0\\"),
            "a%20b-_.!~*'()%C3%A9%00%5C"
        );
        assert_eq!(
            checkpoint_tag("checkpoint-my%2Ftag.json").as_deref(),
            Some("my/tag")
        );
        assert_eq!(
            checkpoint_tag("checkpoint-%FF.json").as_deref(),
            Some("\u{fffd}")
        );
        assert_eq!(checkpoint_tag("logs.json"), None);
    }

    #[test]
    fn ids_become_safe_components() {
        assert_eq!(safe_component("a/b").as_deref(), Some("a_b"));
        assert_eq!(safe_component(".."), None);
        assert_eq!(safe_component(""), None);
        assert_eq!(prefix("0b23371a-aaaa", 8), "0b23371a");
        assert_eq!(prefix("ab", 8), "ab");
    }

    #[test]
    fn times_format_in_utc() {
        let t = start_of(Some("2025-10-21T20:04:05.123Z"));
        assert_eq!(utc(t, "%Y-%m-%dT%H-%M"), "2025-10-21T20-04");
    }
}
