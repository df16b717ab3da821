//! llxprt-code session JSONL (`llxprt-jsonl`): `<tmp>/<projectHash>/chats/session-*.jsonl`,
//! one `{v: 1, seq, ts, type, payload}` line per event, appended by llxprt's
//! `SessionRecordingService` (FORMATS.md 6; `packages/core/src/recording/types.ts`).
//!
//! Reading: the first line, `session_start`, is the metadata (`sessionId`, `projectHash`,
//! `workspaceDirs` -> `directories`, `cwd`, `startTime`; `provider`, `model` and unknown fields
//! in `meta.extra`). Every other line is one node in file order, chained to the one before:
//! `content` -> a message (IContent: speaker `human`/`ai`/`tool`, blocks, metadata),
//! `compressed` -> a compaction (llxprt's history becomes `[summary]`), `rewind` -> a rewind by
//! `itemsRemoved`, `provider_switch` -> a model change, `session_event` -> an info, warning or
//! error message, `session_metadata`/`session_named` -> a title event; every other type
//! (`directories_changed`, `checkpoint_*`, `session_forked`, unknown) is a custom event named by
//! its type with the payload whole. Lines that are not envelopes are kept whole ([`RECORD`]).
//! Node ids are derived from line numbers (`line-3`), as for Codex; each node keeps its line as
//! its origin (the `session_start` line: the session's), for the writer.
//!
//! llxprt's own rules (its `ReplayEngine`): a missing or invalid `session_start` on line 1 is
//! fatal; a `seq` that does not increase marks the file corrupt (not listed for `--continue`,
//! no checkpoints); a line without a valid `seq` is skipped.
//!
//! Writing a session read from this format gives back the same bytes: each line as it was while
//! its node still reads as it did, else rebuilt in the key order `JSON.stringify` gives llxprt's
//! objects, with the `seq` and `v` its line had. Sessions from other
//! formats get a `session_start` line (seq 1) and `content` lines with increasing `seq`.
//!
//! Repairs: llxprt answers an unanswered tool call itself when it restores history
//! (`HistoryService.validateAndFix`, a synthetic `tool` message), and a line inserted into the
//! middle of a file cannot get a `seq` between its neighbours' without renumbering every later
//! line, so [`Repairer::synthetic_result`] gives `None`; [`synthetic::synthetic_line`] builds the
//! line for a given `seq`. Repair does renumber a file whose `seq` does not increase
//! ([`Repairer::renumbered`]), changing only the bytes of each `seq` value.

mod blocks;
mod keys;
mod origin;
mod read;
mod stream;
pub mod synthetic;
mod target;
mod two_pass;
mod write;

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::{Map, Value};

use super::judge;
use super::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
};
use crate::formats::{HeaderRule, ProjectField, Reader, Repairer, Rules, Writer};
use crate::model::Session;

pub struct LlxprtJsonl;

pub const NAME: &str = "llxprt-jsonl";

/// Kind of the event that keeps a line whole (not a `{v, seq, ts, type, payload}` object).
pub const RECORD: &str = "llxprt-jsonl.record";
/// Line types llxprt writes (`SessionEventType`).
pub const LINE_TYPES: [&str; 13] = [
    "session_start",
    "content",
    "compressed",
    "rewind",
    "provider_switch",
    "session_event",
    "session_metadata",
    "directories_changed",
    "checkpoint_created",
    "checkpoint_renamed",
    "checkpoint_deleted",
    "session_forked",
    "session_named",
];

impl Format for LlxprtJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "llxprt-code session JSONL ({v, seq, ts, type, payload} lines)"
    }

    fn tool(&self) -> &'static str {
        "llxprt"
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
            &LlxprtJsonl,
        )))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&LlxprtJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
///
/// llxprt refuses a file whose first line is not a valid `session_start`.
/// llxprt marks a file whose `seq` does not increase as corrupt; replay goes by file order,
/// and checkpoints name the `seq` of their own line, which moves with it. Only a fork in
/// another file keeps the old number.
/// llxprt closes an unanswered call itself when it restores the history.
const RULES: Rules = Rules {
    jsonl: true,
    header: Some(HeaderRule {
        kind: "session_start",
        missing: "llxprt cannot resume it",
        first: true,
    }),
    renumbers: Some(
        "a session forked from a checkpoint after this line names the old number in its `parentSequence`",
    ),
    answers_open_calls_itself: true,
    project_fields: &[
        ProjectField::hash(&["payload", "projectHash"]).on(&["session_start"]),
        ProjectField::path(&["payload", "cwd"]).on(&["session_start"]),
        ProjectField::list(&["payload", "workspaceDirs"]).on(&["session_start"]),
        ProjectField::list(&["payload", "directories"]).on(&["directories_changed"]),
    ],
    ..Rules::DOCUMENT
};

impl Reader for LlxprtJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        detect(path, head)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::llxprt_keys(record)
    }
}

impl Writer for LlxprtJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        write::write(session, options)
    }
}

impl Repairer for LlxprtJsonl {
    fn renumbered(&self, record: &[u8], seq: u64) -> Option<Vec<u8>> {
        keys::renumbered(record, seq)
    }

    /// llxprt-code's SessionLockManager: `<chats>/<sessionId>.lock`, taken before the file
    /// exists, and `getLockPathFromFilePath`, which names it from the file:
    /// `session-<x>.jsonl` -> `<x>.lock`.
    fn lock_files(&self, path: &Path, first_line: &[u8]) -> Vec<std::path::PathBuf> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut locks = Vec::new();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(x) = name
            .strip_prefix("session-")
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            locks.push(dir.join(format!("{x}.lock")));
        }
        // `session_start`'s sessionId; one that is not a plain file name names no lock.
        let session_id = serde_json::from_slice::<Value>(first_line)
            .ok()
            .and_then(|v| v["payload"]["sessionId"].as_str().map(String::from));
        if let Some(id) = session_id
            .as_deref()
            .and_then(crate::store::names::safe_component)
            && Some(id.as_str()) == session_id.as_deref()
        {
            locks.push(dir.join(format!("{id}.lock")));
        }
        locks
    }
}

/// What the first lines say (`Some(0)` another tool's record, `Some(n)` an llxprt line, `None`
/// undecided: blank, padding), else llxprt's file name with its fields.
fn detect(path: Option<&Path>, head: &[u8]) -> Confidence {
    let judge_line = |line: &[u8]| judge::json_line(line, judge_object, judge_torn);
    crate::formats::judge_lines(head, judge_line)
        .unwrap_or_else(|| judge::by_name(path, head, "session-", &["seq", "payload"]))
}

/// A line longer than the head, or torn: judged from its start.
fn judge_torn(line: &[u8]) -> Option<Confidence> {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]);
    (text.starts_with("{\"v\":1,\"seq\":") && text.contains("\"ts\":\"")).then_some(80)
}

/// `Some(0)` another tool's record, `Some(n)` ours, `None` a damaged or odd record that says
/// nothing (the next line decides).
fn judge_object(o: &Map<String, Value>) -> Option<Confidence> {
    if ["uuid", "parentUuid", "sessionId", "timestamp"]
        .iter()
        .any(|k| o.contains_key(*k))
    {
        return Some(0);
    }
    let shaped = o.get("v").is_some_and(Value::is_number)
        && o.get("seq").is_some_and(Value::is_u64)
        && o.get("ts").is_some_and(Value::is_string)
        && o.contains_key("payload");
    let kind = o.get("type").and_then(Value::as_str);
    match kind {
        Some("session_start") if shaped => {
            let id = o
                .get("payload")
                .and_then(|p| p.get("sessionId"))
                .is_some_and(Value::is_string);
            Some(if id { 95 } else { 85 })
        }
        Some(t) if shaped && LINE_TYPES.contains(&t) => Some(75),
        _ => None,
    }
}
