//! A JSON text as a `serde_json::Value`, read as `JSON.parse` reads it, for the readers that
//! still build value trees (the v1 model, see docs/engine-v2.md). serde_json is tried first; a
//! text it refuses but `JSON.parse` takes is read here, and what a `Value` cannot hold is said:
//! a lone surrogate escape becomes U+FFFD. Numbers are kept as written, whatever their size
//! (serde_json's `arbitrary_precision`): `1e400`, a 30-digit integer, `1.50` and `-0` are
//! written back as they were read; only an exponent's spelling is normalised (`1E5` and `1e5`
//! are written `1e+5`, the same number for every JSON parser). Records a writer does not change
//! are written from their own bytes, so there not even that changes.

use serde_json::{Map, Number, Value};

use super::raw::{Kind, Raw};
use super::scan::SyntaxError;

/// What a `Value` could not hold of the text it was read from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lossy {
    /// Strings (keys included) in which a lone surrogate escape became U+FFFD.
    pub surrogates: usize,
}

impl Lossy {
    pub fn is_lossless(&self) -> bool {
        *self == Lossy::default()
    }

    /// What was changed, in words, for a reader's diagnostic.
    pub fn describe(&self) -> String {
        let mut what = Vec::new();
        if self.surrogates > 0 {
            what.push(format!(
                "{} string(s) hold a lone UTF-16 surrogate escape, read as U+FFFD",
                self.surrogates
            ));
        }
        what.join("; ")
    }
}

/// Deeper than serde_json's own 128 (JSON.parse takes far more), yet shallow enough that a
/// `Value`'s recursive drop and serialisation stay within a 2 MiB thread stack. A deeper
/// record is refused with this error, never dropped silently; engine v2's borrowed records
/// have no depth limit at all.
const MAX_DEPTH: usize = 512;

/// Reads `bytes` (one JSON value) into a `Value`, with what could not be held.
pub fn to_value(bytes: &[u8]) -> Result<(Value, Lossy), ToValueError> {
    to_value_within(bytes, 0)
}

/// [`to_value`] of a value found `depth` levels deep in a larger text: it is refused exactly
/// when reading the whole text would be (the depth limit counts from the text's top).
pub fn to_value_within(bytes: &[u8], depth: usize) -> Result<(Value, Lossy), ToValueError> {
    // UTF-8 checked once for the whole text (serde_json reading bytes checks every string).
    let text =
        simdutf8::compat::from_utf8(bytes).map_err(|e| ToValueError::Utf8(e.valid_up_to()))?;
    match serde_json::from_str::<Value>(text) {
        Ok(v) => return Ok((v, Lossy::default())),
        Err(e) if e.classify() != serde_json::error::Category::Syntax => {
            // EOF and data errors: let the checker say what it is.
        }
        Err(_) => {}
    }
    let raw = Raw::parse(text).map_err(ToValueError::Syntax)?;
    let mut lossy = Lossy::default();
    let value = build(raw, &mut lossy, MAX_DEPTH.saturating_sub(depth))?;
    Ok((value, lossy))
}

/// An object `record` read as [`to_value`] reads it, except that the values of the keys `keep`
/// refuses are left null, never read: for a user that needs only those fields' names (a writer
/// that counts what it has no place for). `record` is trusted to be text `to_value` reads (a
/// value left out is not looked into, so one nested too deep is not found); anything but an
/// object is read whole.
pub fn to_value_keeping(
    record: Raw<'_>,
    keep: impl Fn(&str) -> bool,
) -> Result<(Value, Lossy), ToValueError> {
    let Some(entries) = record.entries() else {
        return to_value(record.text().as_bytes());
    };
    let mut map = Map::new();
    let mut lossy = Lossy::default();
    for (key, value) in entries {
        let name = key.name();
        if name.lossy {
            lossy.surrogates += 1;
        }
        let value = if keep(&name.value) {
            let (value, l) = to_value(value.text().as_bytes())?;
            lossy.surrogates += l.surrogates;
            value
        } else {
            Value::Null
        };
        // A repeated key keeps its first place and its last value, as `JSON.parse` does.
        map.insert(name.value.into_owned(), value);
    }
    Ok((Value::Object(map), lossy))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToValueError {
    #[error("{0}")]
    Syntax(SyntaxError),
    #[error("invalid UTF-8 at byte {0}")]
    Utf8(usize),
    #[error("nested more than {MAX_DEPTH} deep")]
    TooDeep,
}

/// Builds the tree without recursion: a stack of open containers.
fn build(root: Raw<'_>, lossy: &mut Lossy, max_depth: usize) -> Result<Value, ToValueError> {
    enum Open<'a> {
        Object(Map<String, Value>, Vec<(String, Raw<'a>)>),
        Array(Vec<Value>, Vec<Raw<'a>>),
    }
    let leaf = |v: Raw<'_>, lossy: &mut Lossy| -> Value {
        match v.kind() {
            Kind::Null => Value::Null,
            Kind::Bool => Value::Bool(v.as_bool() == Some(true)),
            Kind::String => {
                let t = v.as_str().expect("a string");
                if t.lossy {
                    lossy.surrogates += 1;
                }
                Value::String(t.value.into_owned())
            }
            Kind::Number => number(v.text()),
            Kind::Object | Kind::Array => unreachable!("containers are opened"),
        }
    };
    fn open<'a>(v: Raw<'a>, lossy: &mut Lossy) -> Open<'a> {
        match v.kind() {
            Kind::Object => {
                let mut entries: Vec<(String, Raw)> = v
                    .entries()
                    .expect("an object")
                    .map(|(k, v)| {
                        let name = k.name();
                        if name.lossy {
                            lossy.surrogates += 1;
                        }
                        (name.value.into_owned(), v)
                    })
                    .collect();
                entries.reverse();
                Open::Object(Map::new(), entries)
            }
            _ => {
                let mut items: Vec<Raw> = v.items().expect("an array").collect();
                items.reverse();
                Open::Array(Vec::new(), items)
            }
        }
    }
    if !matches!(root.kind(), Kind::Object | Kind::Array) {
        return Ok(leaf(root, lossy));
    }
    let mut stack = vec![open(root, lossy)];
    // Keys of the objects waiting for a child container's value.
    let mut pending_keys: Vec<String> = Vec::new();
    loop {
        let top = stack.last_mut().expect("a container is open");
        let next = match top {
            Open::Object(_, rest) => rest.pop().map(|(k, v)| (Some(k), v)),
            Open::Array(_, rest) => rest.pop().map(|v| (None, v)),
        };
        match next {
            Some((key, v)) if matches!(v.kind(), Kind::Object | Kind::Array) => {
                if stack.len() >= max_depth {
                    return Err(ToValueError::TooDeep);
                }
                pending_keys.extend(key);
                stack.push(open(v, lossy));
            }
            Some((key, v)) => {
                let value = leaf(v, lossy);
                match stack.last_mut().expect("open") {
                    Open::Object(map, _) => {
                        // The last of repeated keys counts, at the place of the first.
                        map.insert(key.expect("an object entry has a key"), value);
                    }
                    Open::Array(items, _) => items.push(value),
                }
            }
            None => {
                let done = match stack.pop().expect("open") {
                    Open::Object(map, _) => Value::Object(map),
                    Open::Array(items, _) => Value::Array(items),
                };
                match stack.last_mut() {
                    None => return Ok(done),
                    Some(Open::Object(map, _)) => {
                        let key = pending_keys.pop().expect("a key waits for its value");
                        map.insert(key, done);
                    }
                    Some(Open::Array(items, _)) => items.push(done),
                }
            }
        }
    }
}

/// A number kept as written (the grammar was checked by the scan).
fn number(text: &str) -> Value {
    match serde_json::from_str::<Number>(text) {
        Ok(n) => Value::Number(n),
        Err(_) => unreachable!("a number the scan accepted is a JSON number: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_serde_json_takes_is_read_by_it() {
        let (v, l) = to_value(br#"{"a":[1,"x",null,{"b":true}],"c":-2.5}"#).unwrap();
        assert!(l.is_lossless());
        assert_eq!(v, serde_json::json!({"a":[1,"x",null,{"b":true}],"c":-2.5}));
    }

    #[test]
    fn what_json_parse_takes_beyond_serde_json_is_read_and_said() {
        let (v, l) = to_value(br#"{"t":"a\ud83db","k\udc00":1,"n":1e400,"m":123456789012345678901234567890,"a":[{"x":"\ud800"}]}"#)
            .unwrap();
        assert_eq!(v["t"], "a\u{FFFD}b");
        assert_eq!(v["k\u{FFFD}"], 1);
        assert_eq!(v["a"][0]["x"], "\u{FFFD}");
        assert_eq!(l, Lossy { surrogates: 3 });
        // Numbers are written back as they were read.
        let text = serde_json::to_string(&v).unwrap();
        assert!(
            text.contains(r#""n":1e+400,"m":123456789012345678901234567890"#),
            "{text}"
        );
        assert!(l.describe().contains("3 string(s)"));
    }

    #[test]
    fn numbers_keep_their_text_on_both_paths() {
        let plain = br#"[1e5,-0,1.50,1e400,-123456789012345678901234567890,0.1e-999,2E+3]"#;
        let (v, _) = to_value(plain).unwrap();
        let again = serde_json::to_string(&v).unwrap();
        assert_eq!(
            again,
            "[1e+5,-0,1.50,1e+400,-123456789012345678901234567890,0.1e-999,2e+3]"
        );
        // The lenient path (serde_json refuses the lone surrogate) keeps them too.
        let lenient = br#"["\ud83d",1e5,-0,1.50,1e400]"#;
        let (v, _) = to_value(lenient).unwrap();
        let again = serde_json::to_string(&v).unwrap();
        assert_eq!(again, "[\"\u{FFFD}\",1e+5,-0,1.50,1e+400]");
    }

    #[test]
    fn repeated_keys_keep_the_last_value_at_the_first_place() {
        let (v, _) = to_value(br#"{"a":1,"b":2,"a":{"c":"\ud83d"}}"#).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(v["a"]["c"], "\u{FFFD}");
    }

    #[test]
    fn not_json_and_too_deep_are_errors() {
        assert!(matches!(to_value(b"{\"a\":"), Err(ToValueError::Syntax(_))));
        let nested = |n: usize| "[".repeat(n) + "\"\\ud83d\"" + &"]".repeat(n);
        assert!(to_value(nested(MAX_DEPTH).as_bytes()).is_ok());
        let deep = nested(MAX_DEPTH + 1);
        assert_eq!(to_value(deep.as_bytes()), Err(ToValueError::TooDeep));
    }

    #[test]
    fn a_record_read_keeping_some_values_is_the_whole_read_with_the_others_null() {
        let texts: [&[u8]; 5] = [
            br#"{"a":1,"b":{"c":[1,2,{"d":"x"}]},"a":{"c":"\ud83d"},"e":1e400,"k\udc00":"\ud800"}"#,
            br#"{"uuid":"u","message":{"content":[{"type":"text","text":"hi"}]},"toolUseResult":{"stdout":"\u00e9"}}"#,
            br#"{}"#,
            br#"[1,{"a":2}]"#,
            br#""just a string""#,
        ];
        for text in texts {
            let whole = to_value(text).unwrap();
            let raw = Raw::parse(std::str::from_utf8(text).unwrap()).unwrap();
            assert_eq!(to_value_keeping(raw, |_| true).unwrap(), whole);
            let (v, _) = to_value_keeping(raw, |k| k != "b" && k != "toolUseResult").unwrap();
            match (&v, &whole.0) {
                (Value::Object(got), Value::Object(all)) => {
                    assert!(
                        got.keys().eq(all.keys()),
                        "the same keys in the same places"
                    );
                    for (k, value) in all {
                        let left = k == "b" || k == "toolUseResult";
                        assert_eq!(got[k], if left { Value::Null } else { value.clone() });
                    }
                }
                _ => assert_eq!(v, whole.0, "anything but an object is read whole"),
            }
        }
    }
}
