//! One module per on-disk format. Each implements [`Format`]: its name and tool, its rules as
//! data ([`Rules`]: a header, rewinds, renumbering, what its tool does with unanswered calls,
//! where it records the project), and the capabilities it has: a [`Reader`] (`detect` from
//! content and name, `read` into the [`Session`] model with diagnostics, `keys`, the cheap
//! per-record facts the checks need), a [`Writer`] (back in that tool's exact layout, with a
//! loss report), a [`Repairer`] (records a repair writes into its files), and the engine's
//! reader in two passes and streaming target. A write-only export implements a writer and
//! nothing else.
//!
//! Adding a format means adding one module and one line in [`all`].

pub mod agent_jsonl;
pub mod checkpoint;
pub mod claude_jsonl;
pub mod codex_jsonl;
pub mod database;
pub(crate) mod export;
pub(crate) mod fields;
pub mod gemini_content;
pub mod gemini_json;
pub mod gemini_jsonl;
pub mod html;
pub(crate) mod json_document;
pub(crate) mod judge;
pub(crate) mod keys;
pub mod llxprt_jsonl;
pub mod markdown;
pub(crate) mod normalise;
pub(crate) mod one_branch;
pub mod opencode;
pub mod pi_jsonl;
pub(crate) mod pi_style;
pub mod project_fields;
pub mod qwen_jsonl;
pub mod simple_agent_json;
pub(crate) mod tool_output;

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

use crate::diag::{Diagnostic, Location, LossReport, Severity};
use crate::model::{Meta, Origin, Session};
use crate::records::{Damage, Finding};

pub use project_fields::{FieldKind, ProjectField};

/// A file (or stdin) to read: its display name and its bytes.
pub struct Input<'a> {
    pub name: &'a str,
    pub path: Option<&'a Path>,
    pub bytes: &'a [u8],
}

/// What a reader made of a file.
#[derive(Debug)]
pub struct ReadOutcome {
    pub session: Session,
    /// Everything noticed on the way, in file order. Never empty when something was skipped.
    pub diagnostics: Vec<Diagnostic>,
}

/// A file this format cannot read at all.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {message}")]
pub struct ReadError {
    pub location: Location,
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
}

impl ReadError {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        ReadError {
            location,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// For formats that hold one branch: the leaf to follow (default: the head).
    pub leaf: Option<String>,
    /// Checkpoint: write the bare `Content[]` array older Gemini CLIs read (before v0.16).
    pub checkpoint_array: bool,
    /// The time to write where the target needs one and the session has none (ISO 8601).
    pub now: Option<String>,
    /// The project folder to record where the target keys sessions by it and the session does
    /// not say (`--cwd`).
    pub cwd: Option<String>,
    /// Checkpoint: do not put the CLI's context turn first (see `checkpoint`).
    pub checkpoint_no_context: bool,
    /// Conversion: keep the branch the tool resumes within about this many tokens (the
    /// first prompt and the newest turns that fit; see [`crate::convert::budget`]).
    pub max_tokens: Option<u64>,
    /// Conversion: give tool calls without a result an error result when the target's tool
    /// does not answer them itself on resume (see [`crate::convert::close_calls`]).
    pub close_open_calls: bool,
}

#[derive(Debug)]
pub struct Written {
    pub bytes: Vec<u8>,
    pub losses: LossReport,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(pub String);

/// The cheap facts about one record that tree, format and conversation checks need, borrowed
/// from the record where its text allows (escaped strings are unescaped into owned ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys<'a> {
    pub id: Option<Cow<'a, str>>,
    pub parent: Parent<'a>,
    /// Bytes of the parent value (a JSON string, quotes included) within the record: where a
    /// repair splices another parent without touching any other byte.
    pub parent_span: Option<Range<usize>>,
    pub session_id: Option<Cow<'a, str>>,
    /// The record's type (`user`, `assistant`, `tool_result`, `session_start`, ...).
    pub kind: Option<Cow<'a, str>>,
    /// A sequence number, for formats that number their records.
    pub seq: Option<u64>,
    /// Ids of the tool calls this record makes.
    pub calls: Vec<Cow<'a, str>>,
    /// Ids of the tool calls this record answers.
    pub results: Vec<Cow<'a, str>>,
    /// Required fields (by the format's own reader) that are absent or of the wrong type.
    pub missing: Vec<&'static str>,
    /// A header saying the session is a sub-agent whose history opens with what its parent
    /// made (Codex's `source.subagent.thread_spawn`): the call that spawned it is answered in
    /// the parent's file, never in this one.
    pub subagent: bool,
    /// Of [`calls`](Self::calls), those that spawn a sub-agent (Codex's `spawn_agent`).
    pub spawns: Vec<Cow<'a, str>>,
    /// Set when the tool's own parser refuses the record though it is JSON (Codex reads its
    /// lines with serde_json, which takes no lone surrogate escape): why, in words that name
    /// the tool. The tool skips such a record, so it is no record of the session; its other
    /// keys are left empty.
    pub refused: Option<String>,
}

/// The parent link of a record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Parent<'a> {
    /// The format has no parent links, or the field is absent.
    #[default]
    None,
    /// Explicitly no parent (`null`, or `""` where the format uses that): a root.
    Root,
    Id(Cow<'a, str>),
    /// No parent for the tool's history walk, but a link to the record the session goes on
    /// from (Claude Code's `logicalParentUuid` on a `/compact` boundary, whose `parentUuid` is
    /// null): not a root of its own, and never relinked by a repair.
    Logical(Cow<'a, str>),
}

/// What a format needs to write a result for a tool call that never got one.
#[derive(Debug, Clone)]
pub struct OpenCall<'a> {
    /// The whole record that made the call.
    pub call_record: &'a [u8],
    pub call_id: &'a str,
    /// Id for the new record, and the record it hangs under (the call's record, or the
    /// result written just before this one).
    pub new_id: &'a str,
    pub parent_id: &'a str,
    /// What to say in the result.
    pub message: &'a str,
}

/// Lines that cut a session back: a line of kind `kind` removes the record its `parent` key
/// names and every later one.
#[derive(Debug, Clone, Copy)]
pub struct RewindRule {
    pub kind: &'static str,
    /// A kind of line that replaces the whole list with records fsck does not see one by one
    /// (after it, a rewind's target cannot be judged).
    pub replaces_all: Option<&'static str>,
    /// What the tool does when the named record is not in the session.
    pub unknown_target: &'static str,
}

/// How sure a format is that some content is its own (0 = not at all, 100 = certain).
pub type Confidence = u8;

/// A format: its name, the tool that writes it, its rules (as data, [`Rules`]) and what
/// sessiontool can do with it, each a capability of its own that the format has or has not:
/// read it ([`Reader`]), write sessions into it ([`Writer`]), repair its files in place
/// ([`Repairer`]), read it in two passes and stream sessions into it (the engine's). A
/// write-only export has a writer and nothing else; Codex's older layout is read and repaired,
/// never written.
///
/// Callers go through the methods of `dyn Format` (`format.read(input)`, `format.keys(record)`,
/// `format.resumable()`, ...), which ask the capability or the rules.
pub trait Format: Sync {
    /// Stable name used on the command line (`gemini-json`).
    fn name(&self) -> &'static str;
    /// One line for `sessiontool formats`.
    fn description(&self) -> &'static str;
    /// The tool that writes it.
    fn tool(&self) -> &'static str;
    /// How it lays out a session and what its tool does with one.
    fn rules(&self) -> &'static Rules;
    /// Its reader, when sessiontool reads it.
    fn reader(&self) -> Option<&dyn Reader> {
        None
    }
    /// Its writer, when sessiontool writes sessions into it.
    fn writer(&self) -> Option<&dyn Writer> {
        None
    }
    /// What repairs its files in place, when sessiontool does.
    fn repairer(&self) -> Option<&dyn Repairer> {
        None
    }
    /// The engine's reader of this format in two passes, when it has one: the engine then
    /// converts and views its sessions in memory bounded by their number of records
    /// ([`crate::engine`]). Its module implements it; nothing else names the format.
    fn two_pass(&self) -> Option<crate::engine::TwoPass> {
        None
    }
    /// The engine's writer into this format of sessions of other formats, node by node, when
    /// it has one (its module implements it).
    fn stream_target(&self) -> Option<crate::engine::Target> {
        None
    }
}

/// How a format lays out a session and what its tool does with one: what the checks, repair,
/// conversion and the stores act on, declared by the format's module as data.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Files hold one JSON record per line (and go through the records layer).
    pub jsonl: bool,
    /// For JSONL formats with a header record: its kind, and what the tool does with a file
    /// without one.
    pub header: Option<HeaderRule>,
    /// For JSONL formats with lines that cut the session back to an earlier record.
    pub rewind: Option<RewindRule>,
    /// For JSONL formats that number their records ([`Keys::seq`]) and whose repair renumbers
    /// them ([`Repairer::renumbered`]): what else a renumber changes for the tool, said in
    /// the fix.
    pub renumbers: Option<&'static str>,
    /// A repair closes an unanswered call with a record of this format
    /// ([`Repairer::synthetic_result`]).
    pub closes_tool_calls: bool,
    /// The tool itself answers an unanswered call with a placeholder when it resumes (pi,
    /// Codex, newer Qwen Code), so such a call is not fatal to that tool.
    pub answers_open_calls_itself: bool,
    /// Message parts are exactly the Gemini API's `Content.parts` (checkpoints, Qwen records):
    /// their extra fields are then API fields a checkpoint keeps. Legacy Gemini JSON's are not
    /// (its part extras are the CLI's own: times, display names).
    pub gemini_parts: bool,
    /// A tool resumes what this format holds (false for exports people read).
    pub resumable: bool,
    /// The fields that record the project folder (or its hash): what moving the folder must
    /// rewrite ([`crate::store::rekey`]).
    pub project_fields: &'static [ProjectField],
}

impl Rules {
    /// A whole-file format a tool resumes, with none of the rules above: what a format's rules
    /// start from (`Rules { jsonl: true, ..Rules::DOCUMENT }`).
    pub const DOCUMENT: Rules = Rules {
        jsonl: false,
        header: None,
        rewind: None,
        renumbers: None,
        closes_tool_calls: false,
        answers_open_calls_itself: false,
        gemini_parts: false,
        resumable: true,
        project_fields: &[],
    };
}

/// The header record of a JSONL format.
#[derive(Debug, Clone, Copy)]
pub struct HeaderRule {
    /// Its kind ([`Keys::kind`]).
    pub kind: &'static str,
    /// What the tool does with a file without one.
    pub missing: &'static str,
    /// It must be the first record (`false`: any line may hold it, as Gemini CLI takes the
    /// first line with `sessionId` and `projectHash`).
    pub first: bool,
}

/// What reads a format: detection, the whole reader, and the cheap per-record facts the checks
/// need.
pub trait Reader: Sync {
    /// Judged from the first bytes of the content and, as a tie-breaker, the file name.
    fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence;
    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError>;
    /// The keys of one record (a JSONL line, or one message of a whole-file format); `None`
    /// when the record is not a JSON object (so `Some` only for UTF-8 that is one JSON value:
    /// fsck's scan counts on it, see [`crate::records::plain_shape`]).
    fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>>;
    /// What can be saved of a whole-file session that does not parse (a document cut off by
    /// a crash); `None` when the format cannot tell.
    fn salvage(&self, _bytes: &[u8]) -> Option<gemini_json::salvage::Salvage> {
        None
    }
    /// Whether the text of a user message is context the tool itself put there for the model
    /// (Codex's `<environment_context>`), not a prompt: `list` titles a session by its first
    /// real prompt.
    fn is_context_message(&self, _user_text: &str) -> bool {
        false
    }
}

/// What writes sessions into a format.
pub trait Writer: Sync {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError>;
    /// The name a file converted into this format gets from its source's `stem` (a folder
    /// convert), when the tool has a naming of its own (`None`: the layout's extension).
    fn file_name(&self, _stem: &str) -> Option<String> {
        None
    }
    /// How strongly an output file name asks for this format (its tool's own naming scheme
    /// high, a bare extension low); 0 when it does not.
    fn claims_name(&self, _file_name: &str) -> Confidence {
        0
    }
}

/// What repairs a format's files in place: the records a repair writes into them, and what
/// tells it the tool is writing one.
pub trait Repairer: Sync {
    /// For JSONL formats: one record (bytes without `\n`) that answers a tool call with an
    /// error result in this format's own shape, marked as written by sessiontool. `None`
    /// when the format cannot express one ([`Rules::closes_tool_calls`]).
    fn synthetic_result(&self, _call: &OpenCall) -> Option<Vec<u8>> {
        None
    }
    /// For JSONL formats that number their records ([`Rules::renumbers`]): the record with
    /// its number replaced by `seq` and every other byte as it was; `None` when it has no
    /// number to replace.
    fn renumbered(&self, _record: &[u8], _seq: u64) -> Option<Vec<u8>> {
        None
    }
    /// For whole-file formats: the document with every unanswered tool call closed by an
    /// error result saying `message`, and how many were closed; `None` when the format
    /// cannot do that without changing other bytes.
    fn close_calls_in_document(&self, _bytes: &[u8], _message: &str) -> Option<(Vec<u8>, usize)> {
        None
    }
    /// The lock files by which this format's tool says it is writing the session at `path`
    /// (`first_line`: the file's first line, which names the session in some formats): a
    /// repair refuses while one is live.
    fn lock_files(&self, _path: &Path, _first_line: &[u8]) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

/// What every caller asks of a format, from its capabilities and its rules.
impl<'f> dyn Format + 'f {
    /// Whether files hold one JSON record per line (and so go through the records layer).
    pub fn is_jsonl(&self) -> bool {
        self.rules().jsonl
    }

    /// Judged from the first bytes of the content and, as a tie-breaker, the file name (0 for
    /// a format sessiontool does not read).
    pub fn detect(&self, path: Option<&Path>, head: &[u8]) -> Confidence {
        self.reader().map_or(0, |r| r.detect(path, head))
    }

    /// The session in `input`; an error for a format sessiontool does not read.
    pub fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        match self.reader() {
            Some(r) => r.read(input),
            None => Err(ReadError::new(
                Location::file(input.name),
                format!(
                    "{} is write-only: sessions can be exported to it, not read from it",
                    self.name()
                ),
            )
            .with_hint("read the session in its original format (see `sessiontool formats`)")),
        }
    }

    /// [`Reader::keys`]; `None` for a format sessiontool does not read.
    pub fn keys<'a>(&self, record: &'a [u8]) -> Option<Keys<'a>> {
        self.reader()?.keys(record)
    }

    /// [`Reader::salvage`].
    pub fn salvage(&self, bytes: &[u8]) -> Option<gemini_json::salvage::Salvage> {
        self.reader()?.salvage(bytes)
    }

    /// [`Reader::is_context_message`].
    pub fn is_context_message(&self, user_text: &str) -> bool {
        self.reader()
            .is_some_and(|r| r.is_context_message(user_text))
    }

    /// `session` in this format; an error for a format sessiontool does not write.
    pub fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        match self.writer() {
            Some(w) => w.write(session, options),
            None => Err(WriteError(format!(
                "{} is read only (its tool no longer reads it): write another format",
                self.name()
            ))),
        }
    }

    /// Whether sessiontool writes this format (false for a layout it only reads: its tool no
    /// longer reads it either).
    pub fn writable(&self) -> bool {
        self.writer().is_some()
    }

    /// The name a file converted into this format gets from its source's `stem` (a folder
    /// convert): the tool's own naming where it has one, else the layout's extension.
    pub fn file_name(&self, stem: &str) -> String {
        if let Some(name) = self.writer().and_then(|w| w.file_name(stem)) {
            return name;
        }
        match self.is_jsonl() {
            true => format!("{stem}.jsonl"),
            false => format!("{stem}.json"),
        }
    }

    /// [`Writer::claims_name`]; 0 for a format sessiontool does not write.
    pub fn claims_name(&self, file_name: &str) -> Confidence {
        self.writer().map_or(0, |w| w.claims_name(file_name))
    }

    /// [`Repairer::synthetic_result`].
    pub fn synthetic_result(&self, call: &OpenCall) -> Option<Vec<u8>> {
        self.repairer()?.synthetic_result(call)
    }

    /// Whether a repair can close an unanswered call with [`Repairer::synthetic_result`].
    pub fn closes_tool_calls(&self) -> bool {
        self.rules().closes_tool_calls
    }

    /// [`Rules::header`]: the header's kind and what the tool does with a file without one.
    pub fn header_kind(&self) -> Option<(&'static str, &'static str)> {
        self.rules().header.map(|h| (h.kind, h.missing))
    }

    /// Whether the header must be the first record ([`HeaderRule::first`]).
    pub fn header_first(&self) -> bool {
        self.rules().header.is_none_or(|h| h.first)
    }

    /// [`Rules::rewind`].
    pub fn rewind_rule(&self) -> Option<RewindRule> {
        self.rules().rewind
    }

    /// [`Repairer::renumbered`].
    pub fn renumbered(&self, record: &[u8], seq: u64) -> Option<Vec<u8>> {
        self.repairer()?.renumbered(record, seq)
    }

    /// [`Rules::renumbers`].
    pub fn renumbers(&self) -> Option<&'static str> {
        self.rules().renumbers
    }

    /// [`Repairer::lock_files`].
    pub fn lock_files(&self, path: &Path, first_line: &[u8]) -> Vec<std::path::PathBuf> {
        self.repairer()
            .map(|r| r.lock_files(path, first_line))
            .unwrap_or_default()
    }

    /// [`Rules::gemini_parts`].
    pub fn gemini_parts(&self) -> bool {
        self.rules().gemini_parts
    }

    /// [`Rules::resumable`].
    pub fn resumable(&self) -> bool {
        self.rules().resumable
    }

    /// [`Rules::answers_open_calls_itself`].
    pub fn answers_open_calls_itself(&self) -> bool {
        self.rules().answers_open_calls_itself
    }

    /// [`Repairer::close_calls_in_document`].
    pub fn close_calls_in_document(&self, bytes: &[u8], message: &str) -> Option<(Vec<u8>, usize)> {
        self.repairer()?.close_calls_in_document(bytes, message)
    }

    /// [`Rules::project_fields`].
    pub fn project_fields(&self) -> &'static [ProjectField] {
        self.rules().project_fields
    }
}

/// Every format, in the order detection breaks ties.
pub fn all() -> &'static [&'static dyn Format] {
    &[
        &qwen_jsonl::QwenJsonl,
        &claude_jsonl::ClaudeJsonl,
        &pi_jsonl::PiJsonl,
        &codex_jsonl::CodexJsonl,
        &codex_jsonl::legacy::CodexLegacyJsonl,
        &gemini_jsonl::GeminiJsonl,
        &llxprt_jsonl::LlxprtJsonl,
        &agent_jsonl::AgentJsonl,
        &gemini_json::GeminiJson,
        &simple_agent_json::SimpleAgentJson,
        &checkpoint::Checkpoint,
        &markdown::Markdown,
        &html::Html,
    ]
}

pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    all().iter().copied().find(|f| f.name() == name)
}

/// How many leading bytes detection looks at.
pub const DETECT_HEAD: usize = 64 * 1024;

/// The most likely format of some content, or `None` when no format recognises it.
pub fn detect(path: Option<&Path>, bytes: &[u8]) -> Option<&'static dyn Format> {
    let cleaned = detect_head(bytes);
    let mut best: Option<(&'static dyn Format, Confidence)> = None;
    for &f in all() {
        let c = f.detect(path, &cleaned);
        if c > 0 && best.is_none_or(|(_, b)| c > b) {
            best = Some((f, c));
        }
    }
    best.map(|(f, _)| f)
}

/// What detection judges: the first [`DETECT_HEAD`] bytes, without NUL bytes (padding after
/// a crash is never part of JSON: a padded file is still recognised, and so is its repaired
/// copy).
fn detect_head(bytes: &[u8]) -> Cow<'_, [u8]> {
    let head = &bytes[..bytes.len().min(DETECT_HEAD)];
    if memchr::memchr(0, head).is_some() {
        Cow::Owned(head.iter().copied().filter(|&b| b != 0).collect())
    } else {
        Cow::Borrowed(head)
    }
}

/// When content that is to be read as `asked` (`--from`) is plainly another format's: that
/// format. `asked` must not recognise the content at all, and another format must: a damaged
/// file that no format recognises is read as asked.
pub fn contradicts(
    asked: &dyn Format,
    path: Option<&Path>,
    bytes: &[u8],
) -> Option<&'static dyn Format> {
    let found = detect(path, bytes)?;
    let plain = found.name() != asked.name() && asked.detect(path, &detect_head(bytes)) == 0;
    plain.then_some(found)
}

/// The format a file name suggests for an output, when nothing else says.
pub fn guess_from_name(path: &Path) -> Option<&'static dyn Format> {
    let name = path.file_name()?.to_str()?;
    let mut best: Option<(&'static dyn Format, Confidence)> = None;
    for &f in all() {
        let c = f.claims_name(name);
        if c > 0 && best.is_none_or(|(_, b)| c > b) {
            best = Some((f, c));
        }
    }
    best.map(|(f, _)| f)
}

/// How many leading lines JSONL detection looks at: a damaged file may start with a stub
/// record, a torn line or padding.
pub(crate) const DETECT_LINES: usize = 8;

/// The first verdict `judge` gives on the leading lines of `head` (blank lines and padding
/// skipped): `Some(0)` another tool's, `Some(n)` the format's; `None` when no line decides.
pub(crate) fn judge_lines(
    head: &[u8],
    judge: impl Fn(&[u8]) -> Option<Confidence>,
) -> Option<Confidence> {
    trim_start(head)
        .split(|&b| b == b'\n')
        .take(DETECT_LINES)
        .find_map(|line| {
            let line = trim_start(line);
            if line.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
                None
            } else {
                judge(line)
            }
        })
}

/// Skips a UTF-8 byte order mark and leading white space.
pub(crate) fn trim_start(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[start..]
}

/// Reorders an object's keys: those named in `order` first, in that order, then the rest in
/// their existing order. Writers use it to put fields where the tool itself puts them.
pub(crate) fn ordered(
    map: serde_json::Map<String, serde_json::Value>,
    order: &[&str],
) -> serde_json::Map<String, serde_json::Value> {
    // Each entry ranked by its key's place in `order` (the rest after, as they were) and
    // sorted stably: the keys and values move, nothing is copied or removed one by one.
    let rank = |key: &str| order.iter().position(|o| *o == key).unwrap_or(order.len());
    if map.keys().map(|k| rank(k)).is_sorted() {
        return map;
    }
    let mut entries: Vec<(usize, (String, serde_json::Value))> =
        map.into_iter().map(|(k, v)| (rank(&k), (k, v))).collect();
    entries.sort_by_key(|(r, _)| *r);
    entries.into_iter().map(|(_, e)| e).collect()
}

/// JSON as the JavaScript tools write it with `JSON.stringify(value, null, 2)`: no final
/// newline, unless the file this session was read from had one (`final_newline`).
pub(crate) fn to_pretty_js(value: &serde_json::Value, final_newline: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    // serde_json's pretty layout with two spaces (`json::out` is held to it).
    crate::json::out::Out::new(&mut out, crate::json::out::Style::JS_PRETTY).value(value);
    if final_newline {
        out.push(b'\n');
    }
    out
}

/// The file's tail as a JSON document reader keeps it ([`Meta::tail`]): the whitespace after
/// the document (the tools write none, but files edited or copied by hand often end in a
/// newline), none when there is none.
pub(crate) fn document_tail(format: &'static str, bytes: &[u8]) -> Option<Origin> {
    let body = bytes.trim_ascii_end().len();
    (body < bytes.len()).then(|| Origin::new(format, &bytes[body..]))
}

/// The file's tail as a JSONL reader keeps it ([`Meta::tail`]): nothing when the last line has
/// no line end (`damage` says so), else none (a line end is what every JSONL writer ends with).
pub(crate) fn lines_tail(format: &'static str, damage: &[Finding]) -> Option<Origin> {
    damage
        .iter()
        .any(|f| matches!(f.damage, Damage::MissingFinalNewline))
        .then(|| Origin::new(format, b""))
}

/// What `format`'s writer ends a file with for a session read from it: the tail the file had,
/// `None` for any other session (the writer's own ending).
pub(crate) fn tail_as_read<'a>(meta: &'a Meta, format: &str) -> Option<&'a [u8]> {
    Origin::of(&meta.tail, format)
}

/// Ends a JSONL writer's `out` as the file `meta` was read from ended: its last line end taken
/// off when the file had none.
pub(crate) fn end_lines_as_read(out: &mut Vec<u8>, meta: &Meta, format: &str) {
    if ended_without_line_end(meta, format) && out.ends_with(b"\n") {
        out.pop();
    }
}

/// Whether the file of `format` that `meta` was read from ended without a line end (its
/// writer takes the last one back).
pub(crate) fn ended_without_line_end(meta: &Meta, format: &str) -> bool {
    tail_as_read(meta, format) == Some(b"")
}

/// A record's JSON as a JavaScript or Go tool's parser reads it (a lone surrogate escape, a
/// repeated key, a number beyond a double: see [`crate::json::value`]); what the value cannot
/// hold of it is said in a warning at `at`. `Err` with the reason when it is not JSON.
/// The buffer a writer fills: room for a typical record (512 bytes) per node, but never more
/// than 64 MiB up front: a file of ten million `{}` lines must not reserve gigabytes.
pub(crate) fn output_buffer(nodes: usize) -> Vec<u8> {
    Vec::with_capacity(nodes.saturating_mul(512).min(64 << 20))
}

#[test]
fn a_flood_of_records_reserves_at_most_64_mib() {
    // Ten million `{}` lines reserved 5 GB at once before.
    assert!(output_buffer(10_000_000).capacity() <= 64 << 20);
    assert!(output_buffer(100).capacity() >= 51_200);
}

pub(crate) fn record_value(
    bytes: &[u8],
    at: &Location,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<serde_json::Value, String> {
    let (value, lossy) = crate::json::value::to_value(bytes).map_err(|e| e.to_string())?;
    if !lossy.is_lossless() {
        diagnostics.push(lossy_diagnostic(&lossy, at.clone()));
    }
    Ok(value)
}

/// The code of what a reader says of a record or document whose value cannot hold all of it.
pub const LOSSY: &str = "json-lossy";

/// What [`record_value`] says of a record whose value cannot hold all of it.
pub(crate) fn lossy_diagnostic(lossy: &crate::json::value::Lossy, at: Location) -> Diagnostic {
    lossy_said(lossy, at, "the record is read as its tool reads it")
}

/// What a reader says of what its values cannot hold all of (`read_as`: what is read, and as
/// whom: "the session is read as its tool reads it").
pub(crate) fn lossy_said(
    lossy: &crate::json::value::Lossy,
    at: Location,
    read_as: &str,
) -> Diagnostic {
    Diagnostic {
        code: LOSSY,
        severity: Severity::Warning,
        location: at,
        message: format!(
            "{}: {read_as}, but rebuilding it (in another format, or rewritten) changes those values",
            lossy.describe()
        ),
    }
}

/// What the records layer found, as diagnostics with their locations. Damage a reader can
/// live with (a BOM, CRLF) is a warning; lost or unreadable bytes are errors.
pub fn record_diagnostics(file: &str, findings: &[Finding]) -> Vec<Diagnostic> {
    findings
        .iter()
        .map(|f| {
            let (code, severity, message) = describe_damage(&f.damage, f.span.len);
            Diagnostic {
                code,
                severity,
                location: Location::at(file, f.span.line, f.span.offset),
                message,
            }
        })
        .collect()
}

fn describe_damage(damage: &Damage, len: u64) -> (&'static str, Severity, String) {
    use Severity::*;
    match damage {
        Damage::Bom => ("bom", Warning, "file starts with a byte order mark".into()),
        Damage::Crlf { lines } => (
            "crlf",
            Warning,
            format!("{lines} line(s) from here end with CRLF"),
        ),
        Damage::BlankLine => ("blank-line", Info, "blank line".into()),
        Damage::NulPadding { len } => (
            "nul-padding",
            Error,
            format!("{len} NUL bytes (left by a crash or power loss)"),
        ),
        Damage::InvalidUtf8 { at } => {
            ("invalid-utf8", Error, format!("invalid UTF-8 at byte {at}"))
        }
        Damage::Glued { records } => (
            "glued-records",
            Error,
            format!("{records} records glued on one line (a write after a torn line)"),
        ),
        Damage::TornRecordGlued { fragment_len } => (
            "torn-record-glued",
            Error,
            format!(
                "a torn record ({fragment_len} bytes) with a complete record glued after it; the fragment is skipped"
            ),
        ),
        Damage::TornTail => (
            "torn-tail",
            Error,
            format!("the last line ({len} bytes) is cut off (the writer crashed); it is skipped"),
        ),
        Damage::InvalidJson { message } => (
            "invalid-json",
            Error,
            format!("line is not valid JSON ({message}); it is skipped"),
        ),
        Damage::Oversized { len } => (
            "oversized-line",
            Error,
            format!("line of {len} bytes is over the size limit; it is skipped"),
        ),
        Damage::MissingFinalNewline => (
            "missing-final-newline",
            Warning,
            "the last line has no newline (the next append would glue onto it)".into(),
        ),
    }
}

/// Said when a whole-file JSON session cannot be parsed.
pub(crate) const DAMAGED_HINT: &str = "the file is cut off or damaged (a tool crashed while rewriting it?); keep a copy of it as it is, and check that no tool is still writing it";
