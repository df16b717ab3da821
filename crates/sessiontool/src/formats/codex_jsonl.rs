//! Codex CLI rollout JSONL (`codex-jsonl`): `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! one `{timestamp, type, payload}` line per item, appended (FORMATS.md 10; Codex's
//! `RolloutLine`/`RolloutItem` in `codex-rs/protocol/src/protocol.rs`).
//!
//! Reading: the first `session_meta` line is the session's metadata (`id`, `cwd`, `cli_version`
//! -> `tool_version`, `git.branch` -> `git_branch`, everything else in `meta.extra`). Every
//! other line is one node, in file order: `response_item` `message` -> a message (role
//! `developer` is read as system), `reasoning` -> an assistant thought whose
//! `encrypted_content` is kept byte for byte, `function_call`/`custom_tool_call`/
//! `local_shell_call` -> a tool call, `*_output` -> a tool result, `compacted` -> a compaction;
//! `event_msg`, `turn_context`, other response items and unknown types -> custom events named by
//! their line type with the payload whole. Lines that are not `{timestamp, type, payload}`
//! objects are kept whole ([`RECORD`]). Rollouts are linear and carry no ids: nodes get ids
//! derived from their line (`line-12`, `line-12.2` for a glued record), each chained to the one
//! before; the writer never writes them.
//!
//! Writing a session read from this format gives back the same bytes: each node keeps the line
//! it was read from (its `Origin`; the metadata, its `session_meta` line), and the writer writes
//! that line while the node still reads as it did; a node that changed is rebuilt in the order
//! Codex's structs serialize, keeping from its line what the model has no field for (the
//! payload's key order, the item type of a custom or shell call, the role `developer`; see
//! `origin.rs`). Sessions from other formats get a `session_meta` line, the response items
//! Codex sends to the model, and the `event_msg` `user_message`/`agent_message` records Codex's
//! resume picker looks for; what has no place is in the loss report.
//!
//! fsck keys: `kind` is the line `type` (`session_meta`, `response_item`, `event_msg`, ...), not
//! the payload's: format checks ask "is the header first", and per-item kinds would multiply the
//! kinds for no check that uses them. Calls are `call_id`s of `function_call`,
//! `custom_tool_call` and `local_shell_call` items; results the `call_id`s of `*_output` items.

mod engine;
mod foreign;
mod items;
mod keys;
pub mod legacy;
mod origin;
mod parse;
mod read;
pub(crate) mod stream;
mod synthetic;
pub(crate) mod two_pass;
mod usage;
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

pub struct CodexJsonl;

pub const NAME: &str = "codex-jsonl";

/// Kind of the event that keeps a line whole (not an object, or not `{timestamp, type, payload}`).
pub const RECORD: &str = "codex-jsonl.record";

/// The Codex version whose line shapes a session from another format is written in.
const CLI_VERSION: &str = "0.47.0";

/// Line types Codex writes (`RolloutItem`); newer versions add more.
const LINE_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

impl Format for CodexJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollout JSONL ({timestamp, type, payload} lines)"
    }

    fn tool(&self) -> &'static str {
        "codex"
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
        Some(crate::engine::TwoPass(&CodexJsonl))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&CodexJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// Codex lists and resumes a rollout by its first line, `session_meta`.
/// Codex synthesizes an "aborted" output when it builds the prompt.
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "session_meta",
        missing: "Codex does not list or resume it",
        first: true,
    }),
    closes_tool_calls: true,
    answers_open_calls_itself: true,
    project_fields: &[ProjectField::path(&["payload", "cwd"]).on(&["session_meta", "turn_context"])],
    ..Rules::DOCUMENT
};

impl Reader for CodexJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        detect(path, head)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::codex_keys(record)
    }

    fn is_context_message(&self, user_text: &str) -> bool {
        is_context_message(user_text)
    }
}

impl Writer for CodexJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        write::write(session, options)
    }

    /// Codex names rollouts `rollout-<time>-<id>.jsonl`.
    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(n.starts_with("rollout-") && n.ends_with(".jsonl")) * 90
    }
}

impl Repairer for CodexJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic::synthetic_result(call)
    }
}

/// The user-role messages Codex writes itself for the model (environment and instructions,
/// notices), which its own session list passes over to show the first real prompt (as
/// codex-rs's `is_session_prefix` and its instruction checks do).
fn is_context_message(text: &str) -> bool {
    const TAGS: &[&str] = &[
        "<environment_context>",
        "<user_instructions>",
        "<turn_aborted>",
        "<context_update>",
        "<subagent_notification>",
        "<tool_context>",
        "<reasoning_context>",
        "<pinned_notes>",
    ];
    let text = text.trim_start();
    let starts = |tag: &str| {
        text.get(..tag.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(tag))
    };
    TAGS.iter().any(|t| starts(t)) || text.starts_with("# AGENTS.md instructions")
}

/// What the first lines say (`Some(0)` another tool's record, `Some(n)` a rollout line, `None`
/// nothing either way: blank, padding), else a rollout's file name with its fields.
fn detect(path: Option<&Path>, head: &[u8]) -> Confidence {
    let judge_line = |line: &[u8]| judge::json_line(line, judge_object, judge_torn);
    crate::formats::judge_lines(head, judge_line)
        .unwrap_or_else(|| judge::by_name(path, head, "rollout-", &["payload", "timestamp"]))
}

/// A line longer than the head, or torn: judged from its start.
fn judge_torn(line: &[u8]) -> Option<Confidence> {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]);
    let start = |t: &str| text.starts_with(&format!("{{\"timestamp\":\"{}", t));
    if start("") && text.contains("\"type\":\"") && !text.contains("\"uuid\":") {
        let known = LINE_TYPES
            .iter()
            .any(|t| text.contains(&format!("\"type\":\"{t}\",\"payload\":")));
        return known.then_some(80);
    }
    None
}

fn judge_object(o: &Map<String, Value>) -> Option<Confidence> {
    if o.contains_key("uuid") || o.contains_key("parentUuid") || o.contains_key("sessionId") {
        return Some(0);
    }
    let kind = o.get("type").and_then(Value::as_str);
    let shaped = o.get("timestamp").is_some_and(Value::is_string) && o.contains_key("payload");
    match kind {
        Some("session_meta") if shaped => {
            let id = o
                .get("payload")
                .and_then(|p| p.get("id"))
                .is_some_and(Value::is_string);
            Some(if id { 95 } else { 80 })
        }
        Some(t) if shaped && LINE_TYPES.contains(&t) => Some(85),
        _ => None,
    }
}
