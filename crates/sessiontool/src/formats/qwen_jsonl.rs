//! Qwen Code session JSONL (`qwen-jsonl`): one self-contained `ChatRecord` per line, appended,
//! linked into a tree by `uuid`/`parentUuid`. Qwen Code v0.4+; seed 000 is its design. See
//! FORMATS.md 5.
//!
//! Reading follows the tool's own rules: records that share a `uuid` are one message, placed
//! where its first record is and merged in file order (`message.parts` concatenated, `model`
//! the first non-empty one, `usageMetadata`/`tokens` the last, `toolCallResult` the first,
//! `toolCallsMetadata` concatenated, `timestamp` the latest, everything else from the first
//! record; fields only later records have are kept too). The head is the uuid of the last
//! physical record. `user`, `assistant` and `tool_result` records are messages; `system` records
//! are events (`chat_compression`, `custom_title`, `rewind`, anything else by its subtype).
//! A record that is not an object, has no `uuid`, or has a type this version does not know is
//! kept whole and written back in its place.
//!
//! Writing puts every node of every branch in file order, as `JSON.stringify(record) + "\n"`.
//! A session read from this format is written back byte for byte: fields equal to the
//! session's own (`sessionId`, `cwd`, `version`, `gitBranch`) are written from the metadata,
//! different ones from the node; key orders the canonical writer would not produce, the seed's
//! `tokens` spelling and anything else a rebuilt record would get wrong are read again by the
//! writer from the bytes each node was read from (its `Origin`; `origin.rs`).
//! The one exception is a message split over several records (seed 000's write model): it is
//! written back as one merged record, which reads as the same session.
//!
//! Sessions from other formats get UUIDs (derived from the session id and node id when theirs
//! are not UUIDs; a session id that is not a UUID of versions 1 to 5, which is all `qwen
//! --resume` takes, is replaced by a derived one and the loss report names both), their parts
//! made Gemini API parts (`gemini_content::to_api_parts`), one `tool_result` record per tool
//! call, and `system` records for their compactions, titles and rewinds. Notices and system
//! messages have no Qwen record: they are reported as losses and their children are chained
//! to their parent.

mod engine;
mod foreign;
mod keys;
mod origin;
mod read;
mod stream;
mod synthetic;
pub(crate) mod two_pass;
mod write;

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::Value;

use super::judge::file_name;
use super::{
    Confidence, Format, Input, Keys, OpenCall, ReadError, ReadOutcome, WriteError, WriteOptions,
    Written, trim_start,
};
use crate::formats::{ProjectField, Reader, Repairer, Rules, Writer};
use crate::model::{Meta, Session, Usage};

pub struct QwenJsonl;

pub const NAME: &str = "qwen-jsonl";

/// Kind of the event that keeps a record whole (not an object, no uuid, unknown type).
pub const RECORD: &str = "qwen-jsonl.record";

const BASE_ORDER: [&str; 8] = [
    "uuid",
    "parentUuid",
    "sessionId",
    "timestamp",
    "type",
    "cwd",
    "version",
    "gitBranch",
];
/// Fields after the base, per record type, in the order `chatRecordingService` spreads them.
const USER_ORDER: [&str; 3] = ["subtype", "message", "systemPayload"];
const ASSISTANT_ORDER: [&str; 4] = ["model", "message", "usageMetadata", "contextWindowSize"];
const TOOL_ORDER: [&str; 2] = ["message", "toolCallResult"];
const SYSTEM_ORDER: [&str; 2] = ["subtype", "systemPayload"];
const RESULT_ORDER: [&str; 5] = ["callId", "status", "resultDisplay", "error", "errorType"];

/// Usage field names: model order is input, output, cached, thoughts, tool, total.
const USAGE_NAMES: [&str; 6] = [
    "promptTokenCount",
    "candidatesTokenCount",
    "cachedContentTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
    "totalTokenCount",
];
/// The order Qwen's OpenAI converter builds `usageMetadata` in.
const USAGE_ORDER: [&str; 6] = [
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "cachedContentTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
];
/// Seed 000's `tokens` names, in model order (which is also their written order).
const TOKENS_NAMES: [&str; 6] = ["input", "output", "cached", "thoughts", "tool", "total"];

/// What a session states once (from its first record) and every record repeats.
#[derive(Debug, Clone, Default, PartialEq)]
struct Common {
    session_id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
    git_branch: Option<String>,
}

impl Common {
    fn from_meta(meta: &Meta) -> Self {
        Common {
            session_id: meta.id.clone(),
            cwd: meta.cwd.clone(),
            version: meta.tool_version.clone(),
            git_branch: meta.git_branch.clone(),
        }
    }
}

/// The values written into the base fields of a record that does not carry its own.
#[derive(Debug, Clone, PartialEq)]
struct Defaults {
    session_id: String,
    cwd: String,
    version: String,
    git_branch: Option<String>,
}

impl Defaults {
    fn from_common(c: &Common) -> Self {
        Defaults {
            session_id: c.session_id.clone().unwrap_or_default(),
            cwd: c.cwd.clone().unwrap_or_default(),
            version: c.version.clone().unwrap_or_else(|| "unknown".into()),
            git_branch: c.git_branch.clone(),
        }
    }
}

fn usage_fields(u: &Usage) -> [Option<u64>; 6] {
    [u.input, u.output, u.cached, u.thoughts, u.tool, u.total]
}

impl Format for QwenJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Qwen Code session JSONL, a tree of records (v0.4+)"
    }

    fn tool(&self) -> &'static str {
        "qwen"
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
        Some(crate::engine::TwoPass(&QwenJsonl))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&QwenJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// Newer Qwen Code answers them on resume (repairOrphanedToolUseTurns); older versions drop
/// the call on OpenAI-compatible providers.
const RULES: Rules = Rules {
    jsonl: true,
    closes_tool_calls: true,
    answers_open_calls_itself: true,
    gemini_parts: true,
    project_fields: &[ProjectField::path(&["cwd"])],
    ..Rules::DOCUMENT
};

impl Reader for QwenJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        detect(path, head)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::qwen_keys(record)
    }
}

impl Writer for QwenJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        write::write(session, options)
    }

    /// Any other `.jsonl` (Qwen names files by session id).
    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(n.ends_with(".jsonl")) * 10
    }
}

impl Repairer for QwenJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic::synthetic_result(call)
    }
}

fn detect(path: Option<&Path>, head: &[u8]) -> Confidence {
    // Judged from the first lines that say something: a damaged file may start with a stub
    // record, a torn line or padding.
    if let Some(c) = crate::formats::judge_lines(head, judge_line) {
        return c;
    }
    let jsonl_name = file_name(path).is_some_and(|n| n.ends_with(".jsonl"));
    let text = String::from_utf8_lossy(head);
    if jsonl_name && text.contains("\"parentUuid\"") && !text.contains("\"userType\"") {
        40
    } else {
        0
    }
}

/// What one line says: `Some(0)` it is another tool's record, `Some(n)` a Qwen record,
/// `None` nothing either way (blank, padding, a stub without the fields).
fn judge_line(line: &[u8]) -> Option<Confidence> {
    let line = trim_start(line);
    if let Ok((Value::Object(o), _)) = crate::json::value::to_value(line) {
        let s = |k: &str| o.get(k).and_then(Value::as_str);
        let message = o.get("message").and_then(Value::as_object);
        let has_parts = message.is_some_and(|m| m.get("parts").is_some_and(Value::is_array));
        let claude = o.contains_key("userType")
            || message.is_some_and(|m| m.contains_key("content"))
            || (o.contains_key("isSidechain") && !has_parts);
        if claude {
            return Some(0);
        }
        let tree_record = s("uuid").is_some()
            && o.contains_key("parentUuid")
            && s("sessionId").is_some()
            && s("type").is_some();
        let qwen_body = has_parts
            || (s("type") == Some("system") && s("subtype").is_some())
            || s("cwd").is_some();
        return (tree_record && qwen_body).then_some(90);
    }
    // A line longer than the head, or torn: judge from its text.
    let text = String::from_utf8_lossy(line);
    let has = |k: &str| text.contains(&format!("\"{k}\":"));
    (has("uuid")
        && has("parentUuid")
        && has("sessionId")
        && has("type")
        && (has("parts") || has("subtype") || has("cwd"))
        && !has("userType")
        && !has("isSidechain"))
    .then_some(80)
}
