//! Pieces the formats' `keys` functions share: lenient field types that never fail a record
//! for a field of an unexpected type, records and nested objects read only when they are
//! objects, tool call ids by block type, and the parent link with its place in the record.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Parent;

/// A field kept as its raw JSON text, borrowed from the record (absent: `None`).
#[derive(Default)]
pub(crate) struct RawField<'a>(pub Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawField<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(d).map(|v| RawField(Some(v)))
    }
}

/// A record's fields, when it is a JSON object (a derived struct would also take an array,
/// field by field); `None` when it is not an object, or not JSON.
pub(crate) fn record<'a, T: Deserialize<'a>>(record: &'a [u8]) -> Option<T> {
    if super::trim_start(record).first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(record).ok()
}

/// A field's fields, when its value is an object.
pub(crate) fn object<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    let text = raw.get();
    if !text.starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// The elements of a JSON array (its raw text) that are objects, read as `T`; none when it is
/// not an array. Other elements (strings in a content list, say) are skipped.
pub(crate) fn objects<'a, T: Deserialize<'a>>(array: &'a str) -> Vec<T> {
    if !array.starts_with('[') {
        return Vec::new();
    }
    let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(array) else {
        return Vec::new();
    };
    elements.into_iter().filter_map(object).collect()
}

/// A content block that says its kind by `type` and names its tool call by `id`.
#[derive(Deserialize)]
struct TypedBlock<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Lenient<'a>,
    #[serde(borrow, default)]
    id: Lenient<'a>,
}

/// The `id`s of the blocks of type `kind` in a content array (its raw text): the tool calls of
/// a message whose blocks say what they are by `type` (the agent's `tool_call`, pi's `toolCall`).
pub(crate) fn ids_of_type<'a>(content: &'a str, kind: &str) -> Vec<Cow<'a, str>> {
    objects::<TypedBlock>(content)
        .into_iter()
        .filter(|b| b.kind.0.as_deref() == Some(kind))
        .filter_map(|b| b.id.0)
        .collect()
}

/// A parent link from its raw value: a string is an id, `null` a root; with `empty_is_root`,
/// `""` is a root too (formats that write `""` for the first record). Also returns where the
/// value is in `record` when it is a string, for a repair to splice.
pub(crate) fn parent_of<'a>(
    record: &'a [u8],
    raw: &RawField<'a>,
    empty_is_root: bool,
) -> (Parent<'a>, Option<Range<usize>>) {
    let Some(raw) = raw.0 else {
        return (Parent::None, None);
    };
    let text = raw.get();
    if text == "null" {
        return (Parent::Root, None);
    }
    if !text.starts_with('"') {
        return (Parent::None, None);
    }
    let Ok(Lenient(Some(id))) = serde_json::from_str::<Lenient<'a>>(text) else {
        return (Parent::None, None);
    };
    let span = span_in(record, text.as_bytes());
    if id.is_empty() && empty_is_root {
        return (Parent::Root, span);
    }
    (Parent::Id(id), span)
}

/// Where `part` (a subslice of `whole`) is within it.
pub(crate) fn span_in(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then(|| start..start + part.len())
}

/// A string field read without failing on other types (`None` for null, numbers, objects).
#[derive(Default)]
pub(crate) struct Lenient<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Lenient<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Lenient(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Lenient(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Lenient(Some(Cow::Owned(v))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V)
    }
}
