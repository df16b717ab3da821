//! Recognising Claude Code entries from the first lines of a file.

use std::path::Path;

use serde_json::Value;

use crate::formats::{Confidence, trim_start};

/// How many leading lines detection looks at (a damaged file may start with a stub).
const DETECT_LINES: usize = 8;

/// Entry types without a uuid that only Claude Code writes.
const UUIDLESS: [&str; 6] = [
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "ai-title",
    "custom-title",
    "tag",
];

pub(super) fn detect(path: Option<&Path>, head: &[u8]) -> Confidence {
    let mut weak = false;
    for line in trim_start(head).split(|&b| b == b'\n').take(DETECT_LINES) {
        match judge_line(line) {
            Some(Judgement::Chain) => return 95,
            Some(Judgement::Other) => return 0,
            Some(Judgement::Uuidless) => weak = true,
            None => {}
        }
    }
    let jsonl_name = path
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".jsonl"));
    match (weak, jsonl_name) {
        (true, true) => 70,
        (true, false) => 60,
        _ => 0,
    }
}

enum Judgement {
    /// A chain entry: certainly Claude.
    Chain,
    /// A uuid-less entry only Claude writes (a file may hold nothing else for a while).
    Uuidless,
    /// Another tool's record.
    Other,
}

fn judge_line(line: &[u8]) -> Option<Judgement> {
    let line = trim_start(line);
    if line.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
        return None;
    }
    let Ok((Value::Object(o), _)) = crate::json::value::to_value(line) else {
        // Torn or longer than the head: judge from the text.
        let text = String::from_utf8_lossy(line);
        let has = |k: &str| text.contains(&format!("\"{k}\":"));
        return (has("uuid") && has("parentUuid") && (has("userType") || has("isSidechain")))
            .then_some(Judgement::Chain);
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    let message = o.get("message").and_then(Value::as_object);
    let tree = s("uuid").is_some() && o.contains_key("parentUuid");
    if tree {
        let claude = o.contains_key("userType")
            || o.contains_key("isSidechain")
            || message.is_some_and(|m| m.contains_key("content") && !m.contains_key("parts"));
        return Some(if claude {
            Judgement::Chain
        } else {
            Judgement::Other
        });
    }
    match s("type") {
        Some("summary") if o.contains_key("leafUuid") => Some(Judgement::Uuidless),
        Some(t) if UUIDLESS.contains(&t) && t != "summary" => Some(Judgement::Uuidless),
        _ => None,
    }
}
