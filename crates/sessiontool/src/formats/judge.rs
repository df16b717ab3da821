//! What format detection looks at, the same way for every format: one JSONL line as an object
//! or as the text of a torn one, and the file name (alone, or as the last word on a file whose
//! lines decide nothing).

use std::path::Path;

use serde_json::{Map, Value};

use super::{Confidence, trim_start};

/// One line's verdict for [`judge_lines`](super::judge_lines): a JSON object by `object`, a
/// line that is not JSON (torn, or longer than the head) by `torn` from its bytes. Any other
/// JSON value (a stray value) decides nothing: the next line does.
pub(crate) fn json_line(
    line: &[u8],
    object: impl FnOnce(&Map<String, Value>) -> Option<Confidence>,
    torn: impl FnOnce(&[u8]) -> Option<Confidence>,
) -> Option<Confidence> {
    let line = trim_start(line);
    match crate::json::value::to_value(line) {
        Ok((Value::Object(o), _)) => object(&o),
        Ok(_) => None,
        Err(_) => torn(line),
    }
}

/// For a file whose lines decided nothing (all torn, say): 40 when it has its tool's name
/// (`<prefix>...jsonl`) and its head names every one of `keys`, else 0.
pub(crate) fn by_name(path: Option<&Path>, head: &[u8], prefix: &str, keys: &[&str]) -> Confidence {
    let named = file_name(path).is_some_and(|n| n.starts_with(prefix) && n.ends_with(".jsonl"));
    let text = String::from_utf8_lossy(head);
    if named && keys.iter().all(|k| text.contains(&format!("\"{k}\":"))) {
        40
    } else {
        0
    }
}

/// The file name of `path`, when there is one and it is UTF-8.
pub(crate) fn file_name(path: Option<&Path>) -> Option<&str> {
    path.and_then(|p| p.file_name()).and_then(|n| n.to_str())
}
