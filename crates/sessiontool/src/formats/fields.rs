//! Taking a typed field out of a JSON object, so that what is left over is kept as it was: a
//! field of another type stays where it is.

use serde_json::{Map, Value};

/// The string `key` holds, taken out of `map`; `None`, and `map` as it was, when it holds
/// none.
pub(crate) fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.shift_remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// The count (a non-negative integer) `key` holds, taken out of `map`; `None`, and `map` as it
/// was, when it holds none.
pub(crate) fn take_u64(map: &mut Map<String, Value>, key: &str) -> Option<u64> {
    let n = map.get(key)?.as_u64()?;
    map.shift_remove(key);
    Some(n)
}
