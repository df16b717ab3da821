//! Go's JSON layout (`json.MarshalIndent` with its HTML escaping) and the `meta.json` index
//! simple-agent keeps beside the sessions.

use serde_json::{Map, Value};

use crate::formats::{ordered, to_pretty_js, trim_start};

/// JSON as Go's `json.MarshalIndent(v, "", "  ")` writes it: two spaces, `<`, `>`, `&`,
/// U+2028 and U+2029 escaped (when `escape_html`), no final newline.
pub fn to_pretty_go(value: &Value, escape_html: bool) -> Vec<u8> {
    let out = to_pretty_js(value, false);
    if !escape_html {
        return out;
    }
    // These bytes only occur inside strings (keys included), where Go escapes them.
    let mut escaped = Vec::with_capacity(out.len() + 64);
    let mut i = 0;
    while i < out.len() {
        match out[i] {
            b'<' => escaped.extend_from_slice(b"\\u003c"),
            b'>' => escaped.extend_from_slice(b"\\u003e"),
            b'&' => escaped.extend_from_slice(b"\\u0026"),
            0xE2 if out.get(i + 1) == Some(&0x80)
                && matches!(out.get(i + 2), Some(0xA8 | 0xA9)) =>
            {
                let last = if out[i + 2] == 0xA8 { b'8' } else { b'9' };
                escaped.extend_from_slice(b"\\u202");
                escaped.push(last);
                i += 3;
                continue;
            }
            b => escaped.push(b),
        }
        i += 1;
    }
    escaped
}

/// Adds session `id` for `cwd` to a `meta.json` index (`None`: a new index) and returns the
/// index as simple-agent writes it: `{version, last_session_id, path_index}` with the paths
/// sorted (Go sorts map keys) and each list oldest first. An id already listed is not added
/// twice. Unknown fields are kept.
pub fn index_entry(index: Option<&[u8]>, cwd: &str, id: &str) -> Result<Vec<u8>, String> {
    let mut root = match index {
        None => Map::new(),
        Some(bytes) => match serde_json::from_slice::<Value>(trim_start(bytes)) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err("meta.json is not a JSON object".into()),
            Err(e) => return Err(format!("meta.json is not valid JSON: {e}")),
        },
    };
    root.entry("version").or_insert_with(|| "1.0".into());
    root.insert("last_session_id".into(), id.into());
    let mut paths = match root.shift_remove("path_index") {
        Some(Value::Object(p)) => p,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err("meta.json: `path_index` is not an object".into()),
    };
    let list = paths.entry(cwd).or_insert_with(|| Value::Array(Vec::new()));
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    let Value::Array(ids) = list else {
        return Err(format!("meta.json: the entry for {cwd:?} is not a list"));
    };
    if !ids.iter().any(|v| v.as_str() == Some(id)) {
        ids.push(id.into());
    }
    paths.sort_keys();
    root.insert("path_index".into(), Value::Object(paths));
    let root = ordered(root, &["version", "last_session_id", "path_index"]);
    Ok(to_pretty_go(&Value::Object(root), true))
}

/// A `meta.json` index with every `path_index` key that `map` moves renamed (lists of the
/// same folder merged, oldest first), written as simple-agent writes it; `None` when no key
/// moves.
pub fn rekey_index(
    bytes: &[u8],
    map: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(Vec<u8>, usize)>, String> {
    let mut root = match serde_json::from_slice::<Value>(trim_start(bytes)) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err("meta.json is not a JSON object".into()),
        Err(e) => return Err(format!("meta.json is not valid JSON: {e}")),
    };
    let Some(Value::Object(paths)) = root.shift_remove("path_index") else {
        return Ok(None);
    };
    let mut moved = 0;
    let mut out = Map::new();
    for (key, ids) in paths {
        let key = match map(&key) {
            Some(new) => {
                moved += 1;
                new
            }
            None => key,
        };
        match (out.get_mut(&key), ids) {
            (Some(Value::Array(have)), Value::Array(more)) => have.extend(
                more.into_iter()
                    .filter(|v| !have.contains(v))
                    .collect::<Vec<_>>(),
            ),
            (_, ids) => {
                out.insert(key, ids);
            }
        }
    }
    if moved == 0 {
        return Ok(None);
    }
    out.sort_keys();
    root.insert("path_index".into(), Value::Object(out));
    let root = ordered(root, &["version", "last_session_id", "path_index"]);
    Ok(Some((to_pretty_go(&Value::Object(root), true), moved)))
}
