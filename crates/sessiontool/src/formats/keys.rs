//! Pieces the formats' `keys` functions share, on [`crate::json::Raw`]: a record read as its
//! tool's `JSON.parse` reads it (a repeated key counts as its last value, a lone surrogate
//! escape is a string, any number is a number), fields picked in one pass without building
//! values, lenient field types that never fail a record for a field of an unexpected type,
//! tool call ids by block type, and the parent link with its place in the record.

use std::borrow::Cow;
use std::ops::Range;

use super::Parent;
use crate::json::{Kind, Outlined, Raw};

/// A record's value, when it is a JSON object; `None` when it is not an object, or not JSON.
pub(crate) fn record(record: &[u8]) -> Option<Outlined<'_>> {
    if super::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    let text = simdutf8::basic::from_utf8(record).ok()?;
    Outlined::parse(text)
}

/// A string field's text; `None` for an absent field and for any other type (`null`, a
/// number, an object).
pub(crate) fn string(field: Option<Raw<'_>>) -> Option<Cow<'_, str>> {
    Some(field?.as_str()?.value)
}

/// A field's value when it is an object.
pub(crate) fn object(field: Option<Raw<'_>>) -> Option<Raw<'_>> {
    field.filter(|v| v.kind() == Kind::Object)
}

/// The elements of an array that are objects; none when it is not an array. Other elements
/// (strings in a content list, say) are skipped.
pub(crate) fn objects(array: Option<Raw<'_>>) -> impl Iterator<Item = Raw<'_>> {
    array
        .and_then(Raw::items)
        .into_iter()
        .flatten()
        .filter(|v| v.kind() == Kind::Object)
}

/// The `id`s of the blocks of type `kind` in a content array: the tool calls of a message
/// whose blocks say what they are by `type` (the agent's `tool_call`, pi's `toolCall`).
pub(crate) fn ids_of_type<'a>(content: Option<Raw<'a>>, kind: &str) -> Vec<Cow<'a, str>> {
    objects(content)
        .filter_map(|b| {
            let [t, id] = b.pick(["type", "id"]);
            (string(t).as_deref() == Some(kind)).then(|| string(id))?
        })
        .collect()
}

/// A parent link from its raw value: a string is an id, `null` a root; with `empty_is_root`,
/// `""` is a root too (formats that write `""` for the first record). Also returns where the
/// value is in `record` when it is a string, for a repair to splice.
pub(crate) fn parent_of<'a>(
    record: &'a [u8],
    raw: Option<Raw<'a>>,
    empty_is_root: bool,
) -> (Parent<'a>, Option<Range<usize>>) {
    let Some(raw) = raw else {
        return (Parent::None, None);
    };
    if raw.is_null() {
        return (Parent::Root, None);
    }
    let Some(id) = raw.as_str() else {
        return (Parent::None, None);
    };
    let span = span_in(record, raw.text().as_bytes());
    if id.value.is_empty() && empty_is_root {
        return (Parent::Root, span);
    }
    (Parent::Id(id.value), span)
}

/// Where `part` (a subslice of `whole`) is within it.
pub(crate) fn span_in(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then(|| start..start + part.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_as_json_parse_reads_it() {
        // A repeated key counts as its last value; a lone surrogate and a huge number are fine.
        let r = record(br#"{"uuid":"a","x":1e400,"uuid":"b","t":"\ud83d"}"#).unwrap();
        let [uuid, t, x] = r.pick(["uuid", "t", "x"]);
        assert_eq!(string(uuid).as_deref(), Some("b"));
        assert_eq!(string(t).as_deref(), Some("\u{FFFD}"));
        assert_eq!(x.unwrap().as_number(), Some("1e400"));
        assert!(record(b"[1]").is_none());
        assert!(record(b"{\"a\":").is_none());
        assert!(record(b"\xEF\xBB\xBF{}").is_none());
    }

    #[test]
    fn parents_and_their_place() {
        let rec = br#"{"p":"abc","q":null,"e":"","n":3}"#;
        let r = record(rec).unwrap();
        let [p, q, e, n] = r.pick(["p", "q", "e", "n"]);
        let (parent, span) = parent_of(rec, p, false);
        assert_eq!(parent, Parent::Id("abc".into()));
        assert_eq!(&rec[span.unwrap()], b"\"abc\"");
        assert_eq!(parent_of(rec, q, false).0, Parent::Root);
        assert_eq!(parent_of(rec, e, true).0, Parent::Root);
        assert_eq!(parent_of(rec, e, false).0, Parent::Id("".into()));
        assert_eq!(parent_of(rec, n, false).0, Parent::None);
        assert_eq!(parent_of(rec, None, false).0, Parent::None);
    }

    #[test]
    fn blocks_of_a_type() {
        let c = Raw::parse(
            r#"["s",{"type":"toolCall","id":"1"},{"type":"text"},{"type":"toolCall","id":2}]"#,
        )
        .unwrap();
        assert_eq!(ids_of_type(Some(c), "toolCall"), ["1"]);
        assert!(ids_of_type(Raw::parse("{}").ok(), "toolCall").is_empty());
    }
}
