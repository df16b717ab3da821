//! Claude Code session JSONL (`claude-jsonl`): one entry per line, appended, under
//! `~/.claude/projects/<dashed cwd>/<sessionId>.jsonl`. See FORMATS.md 9.
//!
//! Chain entries carry `uuid`/`parentUuid` and form a tree. A `user` or `assistant` entry whose
//! `message` has `content` is a message node (id = uuid): a user entry with `tool_result` blocks
//! is a Tool-role message. Each entry stays its own node: an assistant reply the CLI split over
//! several entries (one content block each, the same `message.id`) reads as several assistant
//! messages in a row. Other chain entries (`system`, `attachment`, `progress`, a user entry with
//! an unexpected `message`) are kept whole as [`Event::Custom`](crate::model::Event) nodes of
//! kind [`ENTRY`] in their place in the tree. Entries without a uuid (`summary`,
//! `file-history-snapshot`, `queue-operation`, ..., and lines that are not objects) are kept
//! whole in file order as nodes without a parent (`summary`, `custom-title` and `ai-title` as
//! title events).
//!
//! Writing gives a session read from this format back byte for byte: record fields equal to
//! the session's (`sessionId`, `cwd`, `version`, `gitBranch`) come from the metadata; each
//! node keeps its entry's line (its origin), which the writer writes while the node reads as it
//! did, and otherwise reads again for what a rebuilt entry keeps (key orders the canonical
//! writer would not produce, a repeated uuid's own spelling, a string `content`, Python-style
//! separators as in hand-made test files: see `origin`). Sessions from other formats are written as entries the Claude CLI resumes:
//! one chain, `tool_use` blocks answered by `tool_result` blocks in the next user entry, with a
//! loss report for what has no Claude shape.

mod blocks;
mod detect;
mod engine;
pub(crate) mod foreign;
mod keys;
mod layout;
pub mod listing;
mod origin;
mod raw_node;
mod read;
mod synthetic;
pub(crate) mod two_pass;
mod usage;
mod write;

#[cfg(test)]
mod raw_node_tests;
#[cfg(test)]
mod tests;

use std::path::Path;

use super::{
    Confidence, Format, Input, Keys, OpenCall, ReadError, ReadOutcome, WriteError, WriteOptions,
    Written,
};
use crate::formats::{ProjectField, Reader, Repairer, Rules, Writer};
use crate::model::Session;

pub struct ClaudeJsonl;

pub const NAME: &str = "claude-jsonl";

/// Kind of the event that keeps an entry whole (no message shape, no uuid, not an object).
pub const ENTRY: &str = "claude-jsonl.entry";

/// The Claude CLI version whose entry layout the writer follows (the newest in the samples).
const WRITER_VERSION: &str = "2.0.24";

impl Format for ClaudeJsonl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Claude Code session JSONL, a tree of entries"
    }

    fn tool(&self) -> &'static str {
        "claude"
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
        Some(crate::engine::TwoPass(&ClaudeJsonl))
    }

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(&ClaudeJsonl))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    jsonl: true,
    closes_tool_calls: true,
    project_fields: &[ProjectField::path(&["cwd"])],
    ..Rules::DOCUMENT
};

impl Reader for ClaudeJsonl {
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        detect::detect(path, head)
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        read::read(input)
    }

    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        keys::claude_keys(record)
    }
}

impl Writer for ClaudeJsonl {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        if session.meta.source_format.as_deref() == Some(NAME) {
            write::write_native(session)
        } else {
            foreign::write_foreign(session, options)
        }
    }
}

impl Repairer for ClaudeJsonl {
    fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        synthetic::synthetic_result(call)
    }
}
