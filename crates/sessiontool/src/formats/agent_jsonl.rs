//! Go agent session JSONL (`agent-jsonl`). See FORMATS.md 7 and seed 002.
//!
//! A file is a `session` header line (`{"type":"session","id","version":1,"timestamp","cwd"}`)
//! and then one entry per line, each Go's `json.Marshal(entry)` plus `\n`: `message` (with a
//! snake_case message body), `compaction` and `branch`. Entries carry an 8-hex `id` and a
//! `parent_id` (`""` for the first); `branch` has no `parent_id`.
//!
//! Reading: the header becomes [`Meta`](crate::model::Meta) (`version` and unknown fields kept in
//! `extra`); `message` entries become messages (`tool_result` ones a `Tool` message with one
//! tool result part); `compaction` becomes [`Event::Compaction`](crate::model::Event::Compaction); `branch` and every other entry
//! an [`Event::Custom`](crate::model::Event::Custom) named by its type holding the entry whole. Writing a session read from
//! this format gives back its bytes (a line the writer would not rebuild byte for byte is kept
//! as a hint). Sessions from other formats become one branch of `message` and `compaction`
//! entries (see `foreign`).

mod blocks;
mod foreign;
mod keys;
mod read;
mod stream;
mod two_pass;

use std::path::Path;

use serde_json::{Map, Value, json};

use super::judge;
use super::pi_style;
use super::{
    Confidence, Format, Input, Keys, OpenCall, ReadError, ReadOutcome, WriteError, WriteOptions,
    Written,
};
use crate::formats::{HeaderRule, ProjectField, Reader, Repairer, Rules, Writer};
use crate::model::Session;

pub struct AgentJsonl;

pub const NAME: &str = "agent-jsonl";

/// Kind of the event that keeps a line that is not an entry object whole.
pub const RECORD: &str = "agent-jsonl.record";

const HEADER_ORDER: [&str; 5] = ["type", "id", "version", "timestamp", "cwd"];
const ENTRY_ORDER: [&str; 6] = ["type", "id", "parent_id", "timestamp", "role", "message"];
const USER_ORDER: [&str; 3] = ["role", "content", "timestamp"];
const ASSISTANT_ORDER: [&str; 8] = [
    "role",
    "content",
    "model",
    "provider",
    "usage",
    "stop_reason",
    "timestamp",
    "error_message",
];
const TOOL_RESULT_ORDER: [&str; 7] = [
    "role",
    "tool_call_id",
    "tool_name",
    "content",
    "details",
    "is_error",
    "timestamp",
];
const USAGE_ORDER: [&str; 5] = [
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
];
const COMPACTION_ORDER: [&str; 7] = [
    "type",
    "id",
    "parent_id",
    "timestamp",
    "summary",
    "first_kept_entry_id",
    "tokens_before",
];

impl Format for AgentJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Go agent session JSONL, a version 1 header and message/compaction/branch entries"
    }

    fn tool(&self) -> &'static str {
        "agent"
    }

    fn rules(&self) -> &'static Rules {
        &RULES
    }

    fn reader(&self) -> Option<&dyn Reader> {
        Some(self)
    }

    fn writer(&self) -> Option<&dyn Writer> {
        Some(self)
    }

    fn repairer(&self) -> Option<&dyn Repairer> {
        Some(self)
    }

    fn two_pass(&self) -> Option<crate::engine::TwoPass> {
        Some(crate::engine::TwoPass(&crate::engine::lines::TwoPassLines(
            &AgentJsonl,
        )))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&AgentJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "session",
        missing: "the agent reads the entries but the session has no id, directory or start time",
        first: true,
    }),
    closes_tool_calls: true,
    project_fields: &[ProjectField::path(&["cwd"]).on(&["session"])],
    ..Rules::DOCUMENT
};

impl Reader for AgentJsonl {
    fn detect(&self, _path: Option<&Path>, head: &[u8]) -> Confidence {
        let judge_line = |line: &[u8]| judge::json_line(line, judge_object, judge_torn);
        super::judge_lines(head, judge_line).unwrap_or(0)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::agent_keys(record)
    }
}

impl Writer for AgentJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        if session.meta.source_format.as_deref() == Some(NAME) {
            Ok(read::write_native(session))
        } else {
            foreign::write_foreign(session, options)
        }
    }
}

impl Repairer for AgentJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic_result(call)
    }
}

/// A line that is not JSON (torn, or longer than the head): judged from its text.
fn judge_torn(line: &[u8]) -> Option<Confidence> {
    let text = String::from_utf8_lossy(line);
    let header = text.starts_with("{\"type\":\"session\",")
        && text.contains("\"version\":1,")
        && text.contains("\"cwd\":");
    header.then_some(97)
}

/// What one object says: `Some(0)` another tool's record, `Some(n)` this format's, `None`
/// nothing either way. The header's integer `version: 1` and snake_case `parent_id` are what
/// tell this format from pi (whose header has `version` 2 or 3, or none, and `parentId`).
fn judge_object(o: &Map<String, Value>) -> Option<Confidence> {
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    if o.contains_key("uuid")
        || o.contains_key("parentUuid")
        || o.contains_key("payload")
        || o.contains_key("parentId")
    {
        return Some(0);
    }
    match s("type") {
        Some("session") => {
            if o.get("version").and_then(Value::as_u64) == Some(1)
                && s("id").is_some()
                && s("cwd").is_some()
            {
                Some(97)
            } else {
                Some(0)
            }
        }
        Some("message" | "compaction") if o.get("parent_id").is_some_and(Value::is_string) => {
            Some(90)
        }
        Some("branch") if o.contains_key("parent_session_path") => Some(90),
        _ => None,
    }
}

/// `json.Marshal` output for a `Value`: compact, with `<`, `>`, `&`, U+2028 and U+2029
/// escaped as Go escapes them (they only ever occur inside strings, so a plain replace is
/// exact).
pub(crate) fn go_json<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let text = serde_json::to_string(value).expect("a Value always serializes");
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text.into_bytes();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.into_bytes()
}

/// A `message` entry answering `call.call_id` with an error `tool_result` message, marked
/// `"sessiontool":"recovered"` at entry level (Go's decoder ignores fields it does not know).
fn synthetic_result(call: &OpenCall) -> Option<Vec<u8>> {
    let Value::Object(source) = serde_json::from_slice::<Value>(call.call_record).ok()? else {
        return None;
    };
    let message = source.get("message").and_then(Value::as_object);
    let name = pi_style::call_name(message, "tool_call", call.call_id);
    let entry_time = source.get("timestamp").cloned();
    let message_time = message
        .and_then(|m| m.get("timestamp"))
        .filter(|t| t.is_number())
        .cloned()
        .unwrap_or(Value::from(0));
    let mut e = Map::new();
    e.insert("type".into(), "message".into());
    e.insert("id".into(), call.new_id.into());
    e.insert("parent_id".into(), call.parent_id.into());
    if let Some(ts) = entry_time {
        e.insert("timestamp".into(), ts);
    }
    e.insert("role".into(), "tool_result".into());
    e.insert(
        "message".into(),
        json!({
            "role": "tool_result",
            "tool_call_id": call.call_id,
            "tool_name": name,
            "content": [{"type": "text", "text": call.message}],
            "is_error": true,
            "timestamp": message_time,
        }),
    );
    e.insert("sessiontool".into(), "recovered".into());
    Some(go_json(&Value::Object(e)))
}
