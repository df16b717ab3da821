//! Sessions from other formats, written as entries the Claude CLI resumes: one entry per
//! message, chained by `parentUuid`, `tool_use` blocks answered by `tool_result` blocks in the
//! user entry after them, and a loss report for what has no Claude shape.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::blocks::block_from_part;
use super::write::{to_bytes, usage_object};
use super::{NAME, WRITER_VERSION};
use crate::diag::LossReport;
use crate::formats::normalise::{
    CallIds, Calls, Cwd, Facts, Head, LossWords, MissingId, Pairing, SessionIds, Start, Target,
    Time, Unplaced, UsageFields, node_uuid,
};
use crate::formats::tool_output::output_text;
use crate::formats::{WriteError, WriteOptions, Written};
use crate::ids::sha256_hex;
use crate::json::out::{Out, Style};
use crate::model::{Body, Content, Event, Message, Meta, Node, Part, Role, Session};

/// What a Claude entry keeps of a session from another format, and how it names what it
/// invents.
pub(crate) const TARGET: Target = Target {
    name: NAME,
    // `claude --resume ID` takes only a UUID, and the file is named by the id.
    session_ids: SessionIds::uuids(
        "session-id/",
        "Claude Code resumes sessions only by UUID",
        MissingId::Refused,
    ),
    // The time of an entry whose node has none.
    start: Start {
        from: &[Time::Now, Time::LastUpdated, Time::Started],
        otherwise: Ok("1970-01-01T00:00:00.000Z"),
    },
    cwd: Cwd {
        directories: false,
        unknown: None,
    },
    calls: CallIds {
        prefix: "toolu_",
        seed: "{session}/{node}/{index}",
        digits: 24,
        // Tool ids the API accepts: `[a-zA-Z0-9_-]+`.
        allowed: Some(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        pairing: Pairing::Loose,
        open: Some(LossWords {
            code: "open-tool-calls",
            message: "tool calls without a result (the Claude API rejects such a session until fsck --repair closes them)",
        }),
    },
    unplaced: Unplaced {
        extra_fields: "fields of the source format with no place in a Claude entry",
        usage_fields: UsageFields::Apart(
            "token counts the source format names that Claude's usage has no field for",
        ),
        part_fields: Some(
            "fields the source format keeps on parts (times, display names, descriptions)",
        ),
        signatures: Some("thought signatures of another vendor's API"),
        title: None,
        summary: None,
        session_fields: Some("session fields of the source format with no place in a Claude entry"),
        project_hash: true,
    },
};

struct Writer {
    /// The session's id and cwd, and the time of an entry whose node has none.
    head: Head,
    git_branch: String,
    /// Node id to the uuid its children hang under (a skipped node passes on its parent's,
    /// shared: a long session holds one of these a node).
    uuids: HashMap<Box<str>, Option<Arc<str>>>,
    calls: Calls,
    last: Option<String>,
    losses: LossReport,
    out: Vec<u8>,
}

pub(super) fn write_foreign(
    session: &Session,
    options: &WriteOptions,
) -> Result<Written, WriteError> {
    let mut w = Writer::new(&session.meta, options)?;
    for node in &session.nodes {
        w.node(node);
    }
    let bytes = std::mem::take(&mut w.out);
    Ok(Written {
        bytes,
        losses: w.finish(),
    })
}

/// A session from another format written as entries one node at a time, for the two-pass
/// engine ([`crate::engine`]): byte for byte and loss for loss what [`write_foreign`] gives
/// for the same nodes in the same order, through the same code. What it keeps from node to
/// node is a few dozen bytes a node (the uuid each node's children hang under, the calls not
/// yet answered).
pub(crate) struct ForeignStream(Writer);

impl ForeignStream {
    pub(crate) fn new(meta: &Meta, options: &WriteOptions) -> Result<Self, WriteError> {
        Writer::new(meta, options).map(ForeignStream)
    }

    /// The next node's entries into `out`.
    pub(crate) fn node(&mut self, node: &Node, out: &mut Vec<u8>) {
        self.0.node(node);
        out.append(&mut self.0.out);
    }

    /// What could not be written.
    pub(crate) fn finish(self) -> LossReport {
        self.0.finish()
    }
}

impl Writer {
    fn new(meta: &Meta, options: &WriteOptions) -> Result<Writer, WriteError> {
        let mut losses = LossReport::default();
        let head = Head::of(&TARGET, meta, Facts::default(), options, &mut losses)?;
        TARGET.unplaced.session(meta, &mut losses);
        Ok(Writer {
            head,
            git_branch: meta.git_branch.clone().unwrap_or_default(),
            uuids: HashMap::new(),
            calls: Calls::new(&TARGET.calls),
            last: None,
            losses,
            out: Vec::new(),
        })
    }

    fn finish(mut self) -> LossReport {
        self.calls.finish(&mut self.losses);
        self.losses
    }
}

impl Writer {
    fn parent_of(&self, node: &Node) -> Option<Arc<str>> {
        node.parent
            .as_deref()
            .and_then(|p| self.uuids.get(p).cloned().flatten())
    }

    fn skip(&mut self, node: &Node) {
        let parent = self.parent_of(node);
        self.uuids.insert(node.id.as_str().into(), parent);
    }

    fn node(&mut self, node: &Node) {
        match &node.body {
            Body::Event(Event::Title { title: Some(t), .. }) => {
                let leaf = self.last.clone().unwrap_or_default();
                let e = json!({"type": "summary", "summary": t, "leafUuid": leaf});
                self.emit(&e);
                self.skip(node);
            }
            Body::Event(e) => {
                self.losses.add(
                    "events",
                    1,
                    format!("events with no Claude entry (first: {})", e.kind()),
                );
                self.skip(node);
            }
            Body::Message(m) => {
                let content = match m.role {
                    Role::Assistant => self.assistant_content(node, m),
                    Role::User | Role::Tool => self.user_content(m),
                    Role::System | Role::Info | Role::Warning | Role::Error => {
                        self.losses.add(
                            "notices",
                            1,
                            "system messages and notices (Claude entries hold the conversation only)",
                        );
                        None
                    }
                };
                match content {
                    Some(content) => self.message(node, m, content),
                    None => {
                        self.left_out(m);
                        self.skip(node)
                    }
                }
            }
        }
    }

    fn assistant_content(&mut self, node: &Node, m: &Message) -> Option<Value> {
        let mut blocks = Vec::new();
        for (i, p) in m.parts.iter().enumerate() {
            match &p.content {
                Content::Text { text } => blocks.push(json!({"type": "text", "text": text})),
                Content::ToolCall { id, name, args, .. } => {
                    let place = (self.head.id.as_str(), node.id.as_str(), i);
                    let written = self.calls.call(id.as_deref(), name, place);
                    blocks.push(json!({"type": "tool_use", "id": written, "name": name, "input": args}));
                }
                Content::Thought { .. } => self.losses.add(
                    "thoughts",
                    1,
                    "reasoning from another model (the Claude API accepts only its own signed thinking blocks)",
                ),
                _ => self.losses.add(
                    "parts",
                    1,
                    format!("parts with no Claude block in an assistant reply (first: {})", p.kind()),
                ),
            }
            self.part_fields(p);
        }
        (!blocks.is_empty()).then_some(Value::Array(blocks))
    }

    fn user_content(&mut self, m: &Message) -> Option<Value> {
        if let [p] = m.parts.as_slice()
            && let Content::Text { text } = &p.content
        {
            self.part_fields(p);
            return Some(Value::String(text.clone()));
        }
        let mut blocks = Vec::new();
        for p in &m.parts {
            match &p.content {
                Content::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                    display,
                    ..
                } => {
                    let id = self.calls.answer(call_id.as_deref(), name.as_deref()).id;
                    let (text, error) = output_text(output);
                    let mut b = json!({"tool_use_id": id, "type": "tool_result", "content": text});
                    if *is_error || error {
                        b["is_error"] = true.into();
                    }
                    blocks.push(b);
                    self.losses.add(
                        "tool-display",
                        usize::from(display.is_some()),
                        "what the source tool showed its user for a result",
                    );
                }
                Content::Text { .. } | Content::Media { .. } => {
                    blocks.extend(block_from_part(&Part::new(p.content.clone())));
                }
                _ => self.losses.add(
                    "parts",
                    1,
                    format!(
                        "parts with no Claude block in a user entry (first: {})",
                        p.kind()
                    ),
                ),
            }
            self.part_fields(p);
        }
        (!blocks.is_empty()).then_some(Value::Array(blocks))
    }

    /// A message with nothing a Claude entry can hold (no parts, as an aborted reply has, or
    /// only parts said above): said as a message left out, with the tokens its usage counted.
    fn left_out(&mut self, m: &Message) {
        if !m.role.is_conversation() || m.role == Role::System {
            return; // said as a notice
        }
        self.losses.add(
            "messages",
            1,
            "messages with nothing a Claude entry can hold (empty, as an aborted reply is, or only parts listed here), left out",
        );
        if let Some(u) = &m.usage {
            let tokens = u
                .input
                .unwrap_or(0)
                .saturating_add(u.output.unwrap_or(0))
                .saturating_add(u.thoughts.unwrap_or(0));
            self.losses.add(
                "usage-tokens",
                usize::try_from(tokens).unwrap_or(usize::MAX),
                "tokens (input and output) counted on the messages left out",
            );
        }
    }

    fn part_fields(&mut self, p: &Part) {
        TARGET.unplaced.part(p, &mut self.losses);
    }

    fn message(&mut self, node: &Node, m: &Message, content: Value) {
        let uuid = node_uuid(&self.head.id, &node.id).into_owned();
        let parent = self.parent_of(node);
        let assistant = m.role == Role::Assistant;
        TARGET.unplaced.message(node, m, &mut self.losses);
        // The entry is written as it is made (the bytes `serde_json::to_vec` gives for the
        // same map of fields).
        let mut o = Out::new(&mut self.out, Style::JS);
        o.begin_object().key("parentUuid");
        match &parent {
            Some(p) => o.str(p),
            None => o.null(),
        };
        o.key("isSidechain")
            .bool(false)
            .key("userType")
            .str("external")
            .key("cwd")
            .str(&self.head.cwd)
            .key("sessionId")
            .str(&self.head.id)
            .key("version")
            .str(WRITER_VERSION)
            .key("gitBranch")
            .str(&self.git_branch);
        if assistant {
            let calls = content
                .as_array()
                .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_use"));
            let hash = sha256_hex(&format!("{}/{}", self.head.id, node.id));
            let mut usage = m.usage.clone().unwrap_or_default();
            TARGET.unplaced.usage(&usage, &mut self.losses);
            usage.extra.clear();
            let mut u = usage_object(&usage);
            u.entry("input_tokens").or_insert(0.into());
            u.entry("output_tokens").or_insert(0.into());
            o.key("message")
                .begin_object()
                .key("model")
                .str(m.model.as_deref().unwrap_or("unknown"))
                .key("id")
                .str(&format!("msg_{}", &hash[..24]))
                .key("type")
                .str("message")
                .key("role")
                .str("assistant")
                .key("content")
                .value(&content)
                .key("stop_reason")
                .str(if calls { "tool_use" } else { "end_turn" })
                .key("stop_sequence")
                .null()
                .key("usage")
                .value(&Value::Object(u))
                .end_object()
                .key("requestId")
                .str(&format!("req_{}", &hash[24..48]))
                .key("type")
                .str("assistant");
        } else {
            o.key("type")
                .str("user")
                .key("message")
                .begin_object()
                .key("role")
                .str("user")
                .key("content")
                .value(&content)
                .end_object();
        }
        let ts = node.timestamp.as_deref().unwrap_or(&self.head.start);
        o.key("uuid")
            .str(&uuid)
            .key("timestamp")
            .str(ts)
            .end_object();
        self.out.push(b'\n');
        self.uuids
            .insert(node.id.as_str().into(), Some(uuid.as_str().into()));
        self.last = Some(uuid);
    }

    fn emit(&mut self, e: &Value) {
        self.out.extend_from_slice(&to_bytes(e, false));
        self.out.push(b'\n');
    }
}
