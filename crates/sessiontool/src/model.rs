//! The one session model every format reads into and writes from.
//!
//! A session is metadata plus nodes in file order. Nodes form a tree through `parent` (see
//! [`crate::tree`]): a linear chat is a tree with one branch. A node is a message or an event.
//! Every level has an `extra` map that keeps, in order, the fields a reader did not understand,
//! so that reading and writing the same format loses nothing.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Fields a reader did not understand, kept in their original order.
pub type Extra = serde_json::Map<String, Value>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub meta: Meta,
    /// In file order. Ids are unique within a session (readers merge or rename duplicates and say so).
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub id: Option<String>,
    /// sha256 of the project root, as Gemini and llxprt record it.
    pub project_hash: Option<String>,
    /// The working directory the session ran in.
    pub cwd: Option<String>,
    /// Workspace directories beyond `cwd`, when the format records them.
    pub directories: Option<Vec<String>>,
    pub start_time: Option<String>,
    pub last_updated: Option<String>,
    /// A short name given by the user or the tool.
    pub title: Option<String>,
    /// A generated summary of the whole session (Gemini `summary`).
    pub summary: Option<String>,
    /// Version of the tool that wrote the session.
    pub tool_version: Option<String>,
    pub git_branch: Option<String>,
    /// The current leaf, when the format names one; otherwise the last node in file order.
    pub head: Option<String>,
    /// The format this session was read from (a [`crate::formats::Format`] name).
    pub source_format: Option<String>,
    pub extra: Extra,
    /// The ids of tool calls this session holds only as a copy of its parent's history,
    /// answered in the parent's own session (the `spawn_agent` call that started a Codex
    /// sub-agent). They are not unanswered: fsck does not report them and a conversion does
    /// not call them interrupted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherited_calls: Vec<String>,
    /// The record the session's fields were read from (see [`Origin`]).
    #[serde(skip)]
    pub origin: Option<Origin>,
    /// What the file held after its last record where its format's writer would end it
    /// otherwise, for that writer (see [`Origin`]): nothing, when a JSONL file's last line has
    /// no line end; the whitespace after a JSON document (the JavaScript tools write none).
    #[serde(skip)]
    pub tail: Option<Origin>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    pub parent: Option<String>,
    pub timestamp: Option<String>,
    pub body: Body,
    /// Record-level fields the reader did not understand.
    pub extra: Extra,
    /// The text this node was read from, for its format's writer (see [`Origin`]).
    #[serde(skip)]
    pub origin: Option<Origin>,
}

/// Where a node, or a session's fields, came from: the format's name and the bytes of the
/// record or records read (a JSONL node of several records: their lines, joined by `\n`; a
/// record of a whole JSON document, which its writer rebuilds whole anyway: the record as
/// parsed, encoded again).
///
/// It is the one way a format gives back what it read: its writer reads the text again and
/// writes it as it was when the node still reads the same, and otherwise takes from it what a
/// rebuilt record should keep (key order, spellings). Other formats never look at it, and it
/// is not part of the session's content (`show --json` does not print it).
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub format: &'static str,
    pub bytes: Arc<[u8]>,
}

impl Origin {
    /// `bytes` read by `format`.
    pub fn new(format: &'static str, bytes: &[u8]) -> Self {
        Origin {
            format,
            bytes: bytes.into(),
        }
    }

    /// The bytes, when they were read by `format`.
    pub fn of<'a>(origin: &'a Option<Origin>, format: &str) -> Option<&'a [u8]> {
        origin
            .as_ref()
            .filter(|o| o.format == format)
            .map(|o| &*o.bytes)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "snake_case")]
pub enum Body {
    Message(Message),
    Event(Event),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    /// Message-level fields the reader did not understand.
    pub extra: Extra,
}

/// Who speaks. `Info`, `Warning` and `Error` are notices a tool shows its user but never sends
/// to the model (Gemini CLI records them in the session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// Tool results sent back to the model.
    Tool,
    System,
    Info,
    Warning,
    Error,
}

impl Meta {
    /// [`Meta::inherited_calls`], to look ids up in.
    pub fn inherited_call_ids(&self) -> std::collections::HashSet<&str> {
        self.inherited_calls.iter().map(String::as_str).collect()
    }
}

impl Role {
    /// Whether the model sees messages of this role (notices are UI only).
    pub fn is_conversation(self) -> bool {
        matches!(
            self,
            Role::User | Role::Assistant | Role::Tool | Role::System
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
            Role::Info => "info",
            Role::Warning => "warning",
            Role::Error => "error",
        }
    }
}

/// Token counts. Each format names these differently; the reader maps what it knows and keeps
/// the rest in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cached: Option<u64>,
    pub thoughts: Option<u64>,
    pub tool: Option<u64>,
    pub total: Option<u64>,
    pub extra: Extra,
}

/// One piece of a message. `signature` is an opaque token some APIs attach to a part (Gemini
/// `thoughtSignature`, Anthropic thinking `signature`): kept byte for byte, because the API
/// rejects a history whose signatures were altered. `extra` holds the part's unknown fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub content: Content,
    pub signature: Option<String>,
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// Model reasoning. `subject` is Gemini's short heading; `encrypted` an opaque blob some
    /// providers return instead of (or beside) readable text.
    Thought {
        text: String,
        subject: Option<String>,
        encrypted: Option<String>,
        extra: Extra,
    },
    ToolCall {
        id: Option<String>,
        name: String,
        args: Value,
        extra: Extra,
    },
    /// `output` is the result as the tool returned it (for Gemini-family formats the
    /// `response` object: `{output}` or `{error}`).
    ToolResult {
        call_id: Option<String>,
        name: Option<String>,
        output: Value,
        is_error: bool,
        /// The tool's run status as its agent recorded it (`success`, `error`, `cancelled`).
        status: Option<String>,
        /// What the agent showed its user for this result (Gemini/Qwen `resultDisplay`).
        display: Option<Value>,
        extra: Extra,
    },
    /// Inline data (base64 `data`) or a reference (`uri`).
    Media {
        mime_type: Option<String>,
        data: Option<String>,
        uri: Option<String>,
        extra: Extra,
    },
    Code {
        code: String,
        language: Option<String>,
        extra: Extra,
    },
    CodeResult {
        outcome: Option<String>,
        output: Option<String>,
        extra: Extra,
    },
    /// A part of a kind no reader understands, kept whole.
    Other {
        value: Value,
    },
}

impl Part {
    pub fn new(content: Content) -> Self {
        Part {
            content,
            signature: None,
            extra: Extra::new(),
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        Part::new(Content::Text { text: text.into() })
    }

    /// Removes the fields only the format this part was read from understands (the `extra`
    /// maps), for writing into another format. Returns how many fields were removed.
    pub fn strip_extras(&mut self) -> usize {
        let n = self.extras();
        self.extra.clear();
        match &mut self.content {
            Content::Thought { extra, .. }
            | Content::ToolCall { extra, .. }
            | Content::ToolResult { extra, .. }
            | Content::Media { extra, .. }
            | Content::Code { extra, .. }
            | Content::CodeResult { extra, .. } => extra.clear(),
            Content::Text { .. } | Content::Other { .. } => {}
        }
        n
    }

    /// How many fields the part and its content hold that the model does not interpret.
    pub fn extras(&self) -> usize {
        let content = match &self.content {
            Content::Thought { extra, .. }
            | Content::ToolCall { extra, .. }
            | Content::ToolResult { extra, .. }
            | Content::Media { extra, .. }
            | Content::Code { extra, .. }
            | Content::CodeResult { extra, .. } => extra.len(),
            Content::Text { .. } | Content::Other { .. } => 0,
        };
        self.extra.len() + content
    }

    pub fn kind(&self) -> &'static str {
        match &self.content {
            Content::Text { .. } => "text",
            Content::Thought { .. } => "thought",
            Content::ToolCall { .. } => "tool_call",
            Content::ToolResult { .. } => "tool_result",
            Content::Media { .. } => "media",
            Content::Code { .. } => "code",
            Content::CodeResult { .. } => "code_result",
            Content::Other { .. } => "other",
        }
    }
}

/// Something recorded in a session that is not a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Earlier history was summarised; what the model sees starts from `summary`.
    Compaction {
        summary: Option<String>,
        tokens_before: Option<u64>,
        first_kept: Option<String>,
        data: Value,
    },
    /// History was rewound to `target` (an id) or by `count` items.
    Rewind {
        target: Option<String>,
        count: Option<u64>,
        data: Value,
    },
    ModelChange {
        provider: Option<String>,
        model: Option<String>,
        data: Value,
    },
    Title {
        title: Option<String>,
        data: Value,
    },
    /// Any other event, named by its format (`kind`) and kept whole (`data`).
    Custom {
        kind: String,
        data: Value,
    },
}

impl Event {
    pub fn kind(&self) -> &str {
        match self {
            Event::Compaction { .. } => "compaction",
            Event::Rewind { .. } => "rewind",
            Event::ModelChange { .. } => "model_change",
            Event::Title { .. } => "title",
            Event::Custom { kind, .. } => kind,
        }
    }

    /// What the event is, for people: its kind, or for a record a format keeps whole, the
    /// `type` it names (`file-history-snapshot` rather than `claude-jsonl.entry`).
    pub fn name(&self) -> &str {
        match self {
            Event::Custom { kind, data } => {
                data.get("type").and_then(Value::as_str).unwrap_or(kind)
            }
            other => other.kind(),
        }
    }
}

impl Node {
    pub fn message(&self) -> Option<&Message> {
        match &self.body {
            Body::Message(m) => Some(m),
            Body::Event(_) => None,
        }
    }

    pub fn message_mut(&mut self) -> Option<&mut Message> {
        match &mut self.body {
            Body::Message(m) => Some(m),
            Body::Event(_) => None,
        }
    }
}

impl Message {
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            role,
            parts,
            model: None,
            usage: None,
            extra: Extra::new(),
        }
    }

    /// All text parts joined by blank lines (thoughts excluded).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match &p.content {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }
}
