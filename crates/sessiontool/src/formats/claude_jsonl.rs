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
//! the session's (`sessionId`, `cwd`, `version`, `gitBranch`) come from the metadata; key orders
//! the canonical writer would not produce, a second uuid's original spelling, Python-style
//! separators (`", "`, as in hand-made test files) and as a last resort the entry's text are
//! kept as hints. Sessions from other formats are written as entries the Claude CLI resumes:
//! one chain, `tool_use` blocks answered by `tool_result` blocks in the next user entry, with a
//! loss report for what has no Claude shape.

mod blocks;
mod detect;
mod engine;
pub(crate) mod foreign;
mod keys;
mod layout;
pub mod listing;
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

/// Node hint: key orders of the entry and the objects the writer rebuilds, where they are not
/// canonical (`{"record": [...], "message": [...], "usage": [...], "blocks": [null, [...]]}`).
const HINT_KEYS: &str = "claude-jsonl.keys";
/// Node hint: `"string"` when `message.content` was a string rather than blocks.
const HINT_CONTENT: &str = "claude-jsonl.content";
/// Node hint: the entry's uuid, when the node id had to differ (a duplicate uuid).
const HINT_UUID: &str = "claude-jsonl.uuid";
/// Node hint: the entry's original text, when rebuilding it would not give the same bytes.
const HINT_RAW: &str = "claude-jsonl.raw";
/// Node hint: the `message.usage` of an entry before the last of a split reply (the model has
/// the reply's usage once, on its last entry; see `usage`).
const HINT_USAGE: &str = "claude-jsonl.usage";
/// Meta hint: `"python"` when entries were written with `", "` and `": "` separators.
const HINT_STYLE: &str = "claude-jsonl.style";

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
