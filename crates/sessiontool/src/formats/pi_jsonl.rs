//! pi coding agent session JSONL (`pi-jsonl`), versions 1 to 3. See FORMATS.md 8; the facts are
//! from `packages/coding-agent/src/core/session-manager.ts` and `packages/ai/src/types.ts` of
//! badlogic/pi-mono (v0.58.3, commit 83378aad).
//!
//! A file is a `session` header line and then one entry per line, each `JSON.stringify(entry) +
//! "\n"`. Version 2 and 3 entries carry `id` (8 hex) and `parentId` (a tree; the leaf is the last
//! entry in the file); version 1 entries carry neither and form one chain in file order (pi
//! migrates such a file to version 3 when it opens it, rewriting it whole).
//!
//! Reading: the header becomes [`Meta`](crate::model::Meta) (its line kept as the session's
//! origin, its other fields as extra); `message` entries with a `user`, `assistant` or `toolResult`
//! message become messages, other roles (`bashExecution`, `custom`, ...) events of kind
//! `message` holding the message whole; `compaction`, `model_change` and `session_info` become
//! their model events, every other entry type an [`Event::Custom`](crate::model::Event) named by
//! its type with its fields kept in order. Version 1 entries get ids `v1-<line>` (their lines,
//! kept as their origins, say they had none). A line that is not an entry object is kept whole.
//!
//! Writing a session read from this format gives back its bytes (each node's line while it reads
//! the same; a changed node rebuilt in its line's key orders); the file's own version is kept. Sessions from other formats become version 3 files (see `foreign`).

mod blocks;
mod entry;
mod foreign;
mod foreign_message;
mod js;
mod keys;
mod native;
mod origin;
mod read;
mod stream;
mod synthetic;
mod two_pass;
mod write;

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::{Map, Value};

use super::judge;
use super::{
    Confidence, Format, Input, Keys, OpenCall, ReadError, ReadOutcome, WriteError, WriteOptions,
    Written,
};
use crate::formats::{HeaderRule, ProjectField, Reader, Repairer, Rules, Writer};
use crate::model::Session;

pub struct PiJsonl;

pub const NAME: &str = "pi-jsonl";

/// The version pi writes today (`CURRENT_SESSION_VERSION`).
pub const CURRENT_VERSION: u64 = 3;

/// Kind of the event that keeps a line whole (not an object, or no string `type`).
pub const RECORD: &str = "pi-jsonl.record";
/// Kind of the event that keeps a `message` entry whose message is not user, assistant or
/// toolResult (pi's `bashExecution`, `custom`, `branchSummary`, ...): `data` is the message.
pub const MESSAGE_EVENT: &str = "message";

/// Header fields in pi's order (`newSession`); other fields follow in their own order.
const HEADER_ORDER: [&str; 6] = ["type", "version", "id", "timestamp", "cwd", "parentSession"];
/// Entry base fields in pi's order; type-specific fields follow.
const ENTRY_ORDER: [&str; 5] = ["type", "id", "parentId", "timestamp", "message"];
const USER_ORDER: [&str; 3] = ["role", "content", "timestamp"];
const ASSISTANT_ORDER: [&str; 9] = [
    "role",
    "content",
    "api",
    "provider",
    "model",
    "usage",
    "stopReason",
    "timestamp",
    "errorMessage",
];
const TOOL_RESULT_ORDER: [&str; 7] = [
    "role",
    "toolCallId",
    "toolName",
    "content",
    "details",
    "isError",
    "timestamp",
];
const USAGE_ORDER: [&str; 6] = [
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
    "cost",
];

/// Entry types pi writes (v3), for detection.
const ENTRY_TYPES: [&str; 9] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

impl Format for PiJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "pi coding agent session JSONL, a header and a tree of entries (versions 1-3)"
    }

    fn tool(&self) -> &'static str {
        "pi"
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
            &PiJsonl,
        )))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&PiJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// pi overwrites a file whose first entry is not its session header.
/// pi's transformMessages synthesizes "No result provided".
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "session",
        missing: "pi treats the file as empty and overwrites it",
        first: true,
    }),
    closes_tool_calls: true,
    answers_open_calls_itself: true,
    project_fields: &[ProjectField::path(&["cwd"]).on(&["session"])],
    ..Rules::DOCUMENT
};

impl Reader for PiJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        detect(path, head)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::pi_keys(record)
    }
}

impl Writer for PiJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        if session.meta.source_format.as_deref() == Some(NAME) {
            Ok(write::write_native(session))
        } else {
            foreign::write_foreign(session, options)
        }
    }
}

impl Repairer for PiJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic::synthetic_result(call)
    }
}

/// What the first lines say: `Some(0)` another tool's record, `Some(n)` pi's, `None` nothing
/// either way (blank, padding, a torn or damaged line, a stray value): the next line decides.
fn detect(_path: Option<&Path>, head: &[u8]) -> Confidence {
    let judge_line = |line: &[u8]| judge::json_line(line, judge_object, judge_torn);
    crate::formats::judge_lines(head, judge_line).unwrap_or(0)
}

/// Longer than the head, or torn: judged from its text.
fn judge_torn(line: &[u8]) -> Option<Confidence> {
    let text = String::from_utf8_lossy(line);
    let header = text.starts_with("{\"type\":\"session\",")
        && text.contains("\"id\":")
        && text.contains("\"cwd\":");
    header.then_some(70)
}

fn judge_object(o: &Map<String, Value>) -> Option<Confidence> {
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    // Another tool's tree record.
    if o.contains_key("uuid") || o.contains_key("parentUuid") || o.contains_key("payload") {
        return Some(0);
    }
    let confidence =
        match s("type") {
            Some("session") if s("id").is_some() && s("timestamp").is_some() => {
                if s("cwd").is_some() { 95 } else { 60 }
            }
            // A file whose header was lost: pi entries still say what they are.
            Some("message")
                if o.contains_key("timestamp")
                    && o.get("message")
                        .and_then(|m| m.get("role"))
                        .is_some_and(Value::is_string)
                    && !o.contains_key("uuid") =>
            {
                40
            }
            Some(t) if ENTRY_TYPES.contains(&t) && o.contains_key("parentId") => 40,
            _ => return None,
        };
    Some(confidence)
}
