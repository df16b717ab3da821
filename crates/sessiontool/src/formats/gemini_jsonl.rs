//! Gemini CLI session JSONL (`gemini-jsonl`), written by Gemini CLI v0.39+ beside (and instead
//! of) the legacy JSON. See FORMATS.md 2 and `loadConversationRecord` in Gemini CLI's
//! `packages/core/src/services/chatRecordingService.ts`.
//!
//! Every line is `JSON.stringify(record)`, appended. The CLI's reader tests each line in this
//! order: `{"$rewindTo": "<id>"}` (a string) deletes that message and every later one (an id it
//! does not hold empties the session); a record with a string `id` is a MessageRecord, kept at
//! the position of its FIRST append with the value of its LAST; `{"$set": {...}}` (an object)
//! merges into the session metadata, and a `$set.messages` array (v0.44+) replaces the whole
//! list; a record with string `sessionId` and `projectHash` is the header (merged into the
//! metadata too). Anything else is ignored, and so are lines that do not parse.
//!
//! Reading gives the resulting message list, mapped exactly as `gemini-json` maps its messages
//! (tool results folded in `toolCalls` become a tool node `<id>.results`). The file's records are
//! the session's origin (`Meta::origin`): while the session still reads as it did, the writer gives them back
//! byte for byte (superseded versions, `$set` and `$rewindTo` lines included). Otherwise, and
//! for sessions from other formats, it writes what the CLI writes when it rewrites a session: a
//! header, one line per message (in `gemini-json`'s key orders), and `{"$set":
//! {"memoryScratchpad": ...}}` when there is one. Losses are `gemini-json`'s.
//!
//! fsck keys: a message's `id` and `type`; header, `$set` and `$rewindTo` lines have no id and
//! the kinds `header`, `$set` (`$set.messages` when it replaces the list), `$rewindTo`, whose
//! target comes as its parent. No other parents (the list is linear). Calls are every
//! `toolCalls[].id`; results those whose `result` is not null (the result lives in the call).

mod engine;
mod keys;
mod read;
mod synthetic;
pub(crate) mod two_pass;
mod write;

// The JSONL recording's layout, for the engine's Gemini writer (`gemini_json::stream`).
pub(crate) use write::{header_line, push_line, scratchpad_line};

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::Value;

use super::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
    trim_start,
};
use crate::formats::OpenCall;
use crate::formats::{HeaderRule, ProjectField, Reader, Repairer, RewindRule, Rules, Writer};
use crate::model::Session;

pub struct GeminiJsonl;

pub const NAME: &str = "gemini-jsonl";

/// MessageRecord types the CLI writes.
const MESSAGE_TYPES: [&str; 5] = ["user", "gemini", "info", "error", "warning"];

impl Format for GeminiJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Gemini CLI session JSONL, append-only (v0.39+)"
    }

    fn tool(&self) -> &'static str {
        "gemini"
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
        Some(crate::engine::TwoPass(&GeminiJsonl))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&GeminiJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// Without a line holding `sessionId` and `projectHash` the CLI reads the file as one
/// legacy JSON document, which fails. That line may stand anywhere.
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "header",
        missing: "Gemini CLI then reads the file as one legacy JSON document, which fails, and sets it aside as unreadable",
        first: false,
    }),
    rewind: Some(RewindRule {
        kind: "$rewindTo",
        replaces_all: Some("$set.messages"),
        unknown_target: "Gemini CLI empties the session here",
    }),
    closes_tool_calls: true,
    project_fields: &[
        ProjectField::hash(&["projectHash"]),
        ProjectField::list(&["directories"]),
        ProjectField::list(&["$set", "directories"]),
    ],
    ..Rules::DOCUMENT
};

impl Reader for GeminiJsonl {
    fn detect(&self, _path: Option<&Path>, head: &[u8]) -> Confidence {
        // Judged from the first lines that say something (a damaged file may start torn).
        if let Some(c) = crate::formats::judge_lines(head, judge_line) {
            return c;
        }
        0
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::gemini_jsonl_keys(record)
    }
}

impl Writer for GeminiJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        write::write(session, options)
    }

    /// Gemini CLI's `session-<time>-<id>.jsonl` (llxprt's too; content tells them apart).
    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(n.starts_with("session-") && n.ends_with(".jsonl")) * 80
    }
}

impl Repairer for GeminiJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic::synthetic_result(call)
    }
}

/// What one line says: `Some(0)` another tool's record, `Some(n)` one of ours, `None` nothing
/// either way (blank, padding, torn).
fn judge_line(line: &[u8]) -> Option<Confidence> {
    let line = trim_start(line);
    let Ok((value, _)) = crate::json::value::to_value(line) else {
        return judge_torn(line);
    };
    // A stray value decides nothing: the next line does.
    let Value::Object(o) = value else {
        return None;
    };
    if ["uuid", "parentUuid", "payload", "seq"]
        .iter()
        .any(|k| o.contains_key(*k))
    {
        return Some(0);
    }
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    if o.get("$set").is_some_and(Value::is_object) || s("$rewindTo").is_some() {
        return Some(95);
    }
    if s("sessionId").is_some()
        && s("projectHash").is_some()
        && !o.contains_key("id")
        && !o.contains_key("type")
    {
        // A whole legacy session on one line is read by v0.44+ too, but it is gemini-json's.
        return Some(if o.contains_key("messages") { 30 } else { 95 });
    }
    let message = s("id").is_some()
        && s("timestamp").is_some()
        && s("type").is_some_and(|t| MESSAGE_TYPES.contains(&t))
        && o.contains_key("content")
        && !o.contains_key("uuid")
        && !o.contains_key("payload");
    message.then_some(85)
}

/// A line cut short (or longer than the head): judged by how it starts. A legacy document
/// starts with `{` alone on its line, so a compact header start is this format's.
fn judge_torn(line: &[u8]) -> Option<Confidence> {
    let starts = |p: &[u8]| line.starts_with(p);
    // A torn message line says nothing either way: the lines after it decide.
    (starts(b"{\"sessionId\":") || starts(b"{\"$set\":") || starts(b"{\"$rewindTo\":"))
        .then_some(80)
}
