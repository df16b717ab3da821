//! Sessions from other formats as rollout lines: a `session_meta` first, then per message the
//! response items Codex sends to the model (messages, reasoning, function calls and outputs)
//! and the `event_msg` `user_message`/`agent_message` lines its resume picker reads.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::super::one_branch::one_branch;
use super::super::tool_output::output_str;
use super::super::{WriteError, WriteOptions};
use super::CLI_VERSION;
use super::items::{content_item, line, summary_of};
use super::usage::TokenUsage;
use super::write::OTHER_BRANCHES;
use crate::diag::LossReport;
use crate::formats::normalise::{
    self, CallIds, Cwd, Facts, LossWords, MissingId, Pairing, SessionIds, Start, Target, Time,
    Unplaced, UsageFields, head, of_parts,
};
use crate::json::out::{Out, Style};
use crate::model::{Body, Content, Event, Message, Node, Role, Session};

/// What a rollout keeps of a session from another format, and how it names what it invents.
pub(crate) const TARGET: Target = Target {
    name: super::NAME,
    // Codex reads `session_meta.id` as a UUID, and `codex resume ID` looks it up as one.
    session_ids: SessionIds::uuids(
        "codex-jsonl/",
        "Codex reads session ids as UUIDs",
        MissingId::AsEmpty,
    ),
    start: Start {
        from: &[Time::Started, Time::FirstNode, Time::Now],
        otherwise: Err(LossWords {
            code: "timestamps",
            message: "lines without any time to give them (pass --now)",
        }),
    },
    cwd: Cwd {
        directories: true,
        unknown: Some(LossWords {
            code: "cwd-unknown",
            message: "Codex shows sessions by the cwd in session_meta; pass --cwd",
        }),
    },
    // Calls keep their ids; a result is written with the id it names.
    calls: CallIds {
        prefix: "call_",
        seed: "{session}/{node}#{index}",
        digits: 24,
        allowed: None,
        pairing: Pairing::Strict,
        open: None,
    },
    unplaced: Unplaced {
        extra_fields: "fields of the source format with no place in a rollout line",
        usage_fields: UsageFields::InExtraFields,
        part_fields: None,
        signatures: Some(
            "part signatures of another provider (a rollout keeps only OpenAI's encrypted reasoning)",
        ),
        title: Some("the session title (a rollout has no field for it)"),
        summary: Some("the session summary (a rollout has no field for it)"),
        session_fields: Some("session-level fields of the source format"),
        project_hash: false,
    },
};

pub(super) struct Foreign<'a> {
    session: &'a Session,
    options: &'a WriteOptions,
    losses: &'a mut LossReport,
    session_id: String,
    last_ts: Option<String>,
    cwd: String,
    /// The model of the last `turn_context` written.
    model: Option<String>,
    /// The running `total_token_usage` of the `token_count` events written.
    total: TokenUsage,
}

impl<'a> Foreign<'a> {
    pub(super) fn new(
        session: &'a Session,
        options: &'a WriteOptions,
        losses: &'a mut LossReport,
    ) -> Result<Self, WriteError> {
        let session_id = head::session_id(&TARGET, &session.meta, Facts::default(), losses)?;
        Ok(Foreign {
            session,
            options,
            losses,
            session_id,
            last_ts: None,
            cwd: String::new(),
            model: None,
            total: TokenUsage::default(),
        })
    }

    /// The whole session.
    pub(super) fn write(mut self) -> Result<Vec<u8>, WriteError> {
        let branch = one_branch(self.session, self.options, OTHER_BRANCHES, self.losses)?;
        let mut out = Vec::new();
        self.meta_line(&branch, &mut out);
        for node in &branch.nodes {
            self.node_lines(node, &mut out);
        }
        self.finish();
        Ok(out)
    }

    /// What the session holds that no line carries, said once every node is written.
    pub(super) fn finish(&mut self) {
        TARGET.unplaced.session(&self.session.meta, self.losses);
    }

    /// What the branch leaves out, as `write` reports it (the two-pass engine chooses the
    /// branch itself).
    pub(super) fn left_out(&mut self, left_out: &crate::tree::LeftOut) {
        left_out.report(self.losses, OTHER_BRANCHES);
    }

    pub(super) fn meta_line(&mut self, branch: &Session, out: &mut Vec<u8>) {
        let meta = &self.session.meta;
        let first_time = branch.nodes.iter().find_map(|n| n.timestamp.as_deref());
        let ts = head::start(&TARGET, meta, first_time, self.options, self.losses);
        self.cwd = head::cwd(&TARGET, meta, self.options, self.losses);
        let mut p = Map::new();
        p.insert("id".into(), self.session_id.clone().into());
        p.insert("timestamp".into(), ts.clone().into());
        p.insert("cwd".into(), self.cwd.clone().into());
        p.insert("originator".into(), "sessiontool".into());
        p.insert("cli_version".into(), CLI_VERSION.into());
        p.insert("instructions".into(), Value::Null);
        p.insert("source".into(), "cli".into());
        if let Some(b) = &meta.git_branch {
            let mut git = Map::new();
            git.insert("branch".into(), b.clone().into());
            p.insert("git".into(), Value::Object(git));
        }
        push(out, line(&ts, "session_meta", Value::Object(p)));
        self.last_ts = Some(ts);
    }

    fn timestamp(&mut self, node: &Node) -> String {
        let ts = node
            .timestamp
            .clone()
            .or_else(|| self.last_ts.clone())
            .or_else(|| self.options.now.clone())
            .unwrap_or_default();
        self.last_ts = Some(ts.clone());
        ts
    }

    /// One node as the lines Codex would have written for it: its own lines made apart from
    /// the writer's state ([`Render::node`]), then written with the lines that depend on the
    /// ones before ([`Foreign::put`]).
    pub(super) fn node_lines(&mut self, node: &Node, out: &mut Vec<u8>) {
        let ts = self.timestamp(node);
        let mut lines = Vec::new();
        let mut lost = Vec::new();
        let said = self.render().node(node, &ts, &mut lines, &mut lost);
        self.put(&ts, &said, &lines, &lost, out);
    }

    /// Writes a node's lines made by [`Render::node`] (`lines`, with the `lost` they counted),
    /// with the `turn_context` line a reply's new model needs before them and the
    /// `token_count` line its usage adds to the running total after them.
    pub(super) fn put(
        &mut self,
        ts: &str,
        said: &Said,
        lines: &[u8],
        lost: &[Lost],
        out: &mut Vec<u8>,
    ) {
        for &(code, count, message) in lost {
            self.losses.add(code, count, message);
        }
        if let Some(model) = &said.model {
            self.turn_context(ts, model, out);
        }
        out.extend_from_slice(lines);
        if let Some(last) = &said.usage {
            self.token_count(ts, last, out);
        }
    }

    /// What makes a node's own lines.
    pub(super) fn render(&self) -> Render<'_> {
        Render::new(&self.session_id, self.native())
    }

    /// The session id as the lines give it.
    pub(super) fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The time the last node's lines were given.
    pub(super) fn set_last_ts(&mut self, ts: String) {
        self.last_ts = Some(ts);
    }

    /// A `turn_context` line before a reply whose model differs from the last one written
    /// (Codex records the model per turn there; usage readers such as ccusage take it from
    /// there). A session read from a rollout has its own lines.
    fn turn_context(&mut self, ts: &str, model: &str, out: &mut Vec<u8>) {
        if self.model.as_deref() == Some(model) {
            return;
        }
        self.model = Some(model.to_string());
        // `TurnContextItem` as Codex 0.47 writes it; the policies are the most careful ones
        // (the session does not say which were used, and resuming applies the user's own).
        let mut sandbox = Map::new();
        sandbox.insert("mode".into(), "read-only".into());
        let mut p = Map::new();
        p.insert("cwd".into(), self.cwd.clone().into());
        p.insert("approval_policy".into(), "on-request".into());
        p.insert("sandbox_policy".into(), Value::Object(sandbox));
        p.insert("model".into(), model.into());
        p.insert("summary".into(), "auto".into());
        push(out, line(ts, "turn_context", Value::Object(p)));
    }

    /// The `token_count` event Codex writes after a response, for a reply with usage.
    fn token_count(&mut self, ts: &str, last: &TokenUsage, out: &mut Vec<u8>) {
        self.total.add(last);
        let total = self.total;
        emit(out, ts, "event_msg", |o| {
            super::usage::token_count(o, &total, last)
        });
    }

    /// Whether the session was read from a rollout, of either layout (its reasoning items
    /// are Codex's own).
    pub(super) fn native(&self) -> bool {
        matches!(
            self.session.meta.source_format.as_deref(),
            Some(super::NAME | super::legacy::NAME)
        )
    }
}

/// A loss counted while a node's lines are made, added to the report when they are written
/// (in the order the whole writer adds them).
pub(super) type Lost = (&'static str, usize, &'static str);

/// What a node's own lines leave to the writer: the lines that depend on the ones before.
#[derive(Debug, Default)]
pub(super) struct Said {
    /// A reply's model (a `turn_context` line goes first when it is not the last one written).
    pub(super) model: Option<String>,
    /// A reply's usage (a `token_count` line with the running total goes after).
    pub(super) usage: Option<TokenUsage>,
}

/// Makes a node's own lines: nothing of the writer's state but what never changes, so nodes
/// can be made into lines on any thread, in any order.
pub(super) struct Render<'a> {
    session_id: &'a str,
    /// The session was read from a rollout (see [`Foreign::native`]).
    native: bool,
}

impl<'a> Render<'a> {
    /// For the session `session_id` (as the writer writes it), `native` when it was read from
    /// a rollout.
    pub(super) fn new(session_id: &'a str, native: bool) -> Render<'a> {
        Render { session_id, native }
    }

    /// The lines of `node`, at time `ts`, into `out`; the losses they count into `lost`.
    pub(super) fn node(
        &self,
        node: &Node,
        ts: &str,
        out: &mut Vec<u8>,
        lost: &mut Vec<Lost>,
    ) -> Said {
        let mut said = Said::default();
        let m = match &node.body {
            Body::Message(m) => m,
            Body::Event(Event::Compaction { summary, .. }) => {
                let summary = summary.as_deref().unwrap_or_default();
                emit(out, ts, "compacted", |o| {
                    o.begin_object().key("message").str(summary).end_object();
                });
                return said;
            }
            Body::Event(_) => {
                lost.push(("events", 1, "session events of kinds a rollout does not record (rewinds, titles, model changes, other tools' events)"));
                return said;
            }
        };
        let role = match m.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
            Role::System => "developer",
            _ => {
                lost.push((
                    "notices",
                    1,
                    "notices (info, warning and error messages): a rollout has no place for them",
                ));
                return said;
            }
        };
        count_extras(node, m, lost);
        if role == "assistant" && !self.native {
            said.model = m.model.clone();
            said.usage = m.usage.as_ref().map(TokenUsage::of);
        }
        let before = out.len();
        let mut pending = Pending {
            items: Vec::new(),
            texts: Vec::new(),
            output: role == "assistant",
        };
        for (k, part) in m.parts.iter().enumerate() {
            match &part.content {
                Content::Text { text } => {
                    pending.items.push(match part.extra.is_empty() {
                        true => Item::Text(text),
                        false => Item::Value(content_item(part, pending.output).expect("text")),
                    });
                    pending.texts.push(text);
                }
                Content::Media { .. } if role != "assistant" => match content_item(part, false) {
                    Some(item) => pending.items.push(Item::Value(item)),
                    None => lost.push(("media", 1, "media without data or address")),
                },
                Content::Thought { .. } if !self.native => lost.push((
                    "thoughts",
                    1,
                    "reasoning from another model (the Responses API accepts only its own reasoning items, with their id and encrypted content)")),
                Content::Thought { text, encrypted, .. } => {
                    pending.flush(ts, role, out);
                    emit(out, ts, "response_item", |o| {
                        o.begin_object()
                            .key("type")
                            .str("reasoning")
                            .key("summary")
                            .value(&summary_of(text))
                            .key("content")
                            .null()
                            .key("encrypted_content");
                        match encrypted {
                            Some(e) => o.str(e),
                            None => o.null(),
                        };
                        o.end_object();
                    });
                }
                Content::ToolCall { id, name, args, .. } => {
                    pending.flush(ts, role, out);
                    let call_id = self.call_id(id.as_deref(), node, k);
                    emit(out, ts, "response_item", |o| {
                        o.begin_object()
                            .key("type")
                            .str("function_call")
                            .key("name")
                            .str(name)
                            .key("arguments")
                            .str_of_compact(args)
                            .key("call_id")
                            .str(&call_id)
                            .end_object();
                    });
                }
                Content::ToolResult { call_id, output, is_error, status, display, .. } => {
                    pending.flush(ts, role, out);
                    if *is_error || status.as_deref().is_some_and(|s| s != "success") {
                        lost.push(("tool-status", 1, "tool result status and error flags (a function_call_output is text only)"));
                    }
                    if display.is_some() {
                        lost.push(("tool-display", 1, "what the source tool showed its user for a tool result"));
                    }
                    if call_id.is_none() {
                        lost.push(("result-without-call-id", 1, "tool results without a call id (given a made-up one that answers no call)"));
                    }
                    let call_id = self.call_id(call_id.as_deref(), node, k);
                    emit(out, ts, "response_item", |o| {
                        o.begin_object()
                            .key("type")
                            .str("function_call_output")
                            .key("call_id")
                            .str(&call_id)
                            .key("output")
                            .str(&output_str(output).0)
                            .end_object();
                    });
                }
                Content::Media { .. } => lost.push(("assistant-media", 1, "media in replies (a rollout message of the assistant holds text only)")),
                Content::Code { .. } | Content::CodeResult { .. } | Content::Other { .. } => {
                    lost.push(("parts", 1, "parts of kinds a rollout has no item for (code, code results, unknown parts)"))
                }
            }
        }
        pending.flush(ts, role, out);
        if out.len() == before {
            lost.push((
                "messages",
                1,
                "messages with nothing a rollout line can hold (empty, as an aborted reply is, or only parts listed here), left out"));
        }
        said
    }

    fn call_id<'i>(&self, id: Option<&'i str>, node: &Node, k: usize) -> Cow<'i, str> {
        match id {
            Some(id) => normalise::acceptable(&TARGET.calls, id),
            None => Cow::Owned(normalise::derived(
                &TARGET.calls,
                self.session_id,
                &node.id,
                k,
            )),
        }
    }
}

/// The fields a message's node holds that no rollout line has a place for, counted.
fn count_extras(node: &Node, m: &Message, lost: &mut Vec<Lost>) {
    let unplaced = &TARGET.unplaced;
    let (part_fields, signed) = of_parts(&m.parts);
    let fields = unplaced.message_fields(node, m) + part_fields;
    lost.push(("extra-fields", fields, unplaced.extra_fields));
    if let Some(message) = unplaced.signatures {
        lost.push(("signatures", signed, message));
    }
    // Usage and models of replies are written as token_count and turn_context lines; on
    // other messages Codex has no place for them.
    let assistant = m.role == Role::Assistant;
    if m.usage.is_some() && !assistant {
        lost.push((
            "usage",
            1,
            "token usage on messages other than replies (Codex counts tokens per response)",
        ));
    }
    if m.model.is_some() && !assistant {
        lost.push((
            "model",
            1,
            "the model of messages other than replies (Codex records it per turn)",
        ));
    }
}

fn push(out: &mut Vec<u8>, m: Map<String, Value>) {
    Out::new(out, Style::JS).value(&Value::Object(m));
    out.push(b'\n');
}

/// A line, `{"timestamp":…,"type":…,"payload":…}` and its line break, its payload written by
/// `payload`: the bytes `push` gives for the same map.
fn emit(out: &mut Vec<u8>, ts: &str, kind: &str, payload: impl FnOnce(&mut Out)) {
    let mut o = Out::new(out, Style::JS);
    o.begin_object()
        .key("timestamp")
        .str(ts)
        .key("type")
        .str(kind)
        .key("payload");
    payload(&mut o);
    o.end_object();
    out.push(b'\n');
}

/// A message item's content, waiting for the part that ends the message (a thought, a call, a
/// result, the node's end).
struct Pending<'n> {
    items: Vec<Item<'n>>,
    /// The texts among them, for the event beside the message.
    texts: Vec<&'n str>,
    /// Whether the content is the model's (`output_text`), else the user's (`input_text`).
    output: bool,
}

/// One content item: a text part with no fields of its own, written as it goes, or any other
/// item as `content_item` makes it.
enum Item<'n> {
    Text(&'n str),
    Value(Value),
}

impl Pending<'_> {
    /// Writes the pending content as a message item, with the event Codex records beside it
    /// (`agent_message` before a reply, `user_message` after a prompt).
    fn flush(&mut self, ts: &str, role: &str, out: &mut Vec<u8>) {
        if self.items.is_empty() {
            return;
        }
        let text = self.texts.join("\n\n");
        let event = |out: &mut Vec<u8>, kind: &str| {
            emit(out, ts, "event_msg", |o| {
                o.begin_object()
                    .key("type")
                    .str(kind)
                    .key("message")
                    .str(&text);
                if kind == "user_message" {
                    o.key("kind").str("plain");
                }
                o.end_object();
            })
        };
        if role == "assistant" && !self.texts.is_empty() {
            event(out, "agent_message");
        }
        let kind = if self.output {
            "output_text"
        } else {
            "input_text"
        };
        emit(out, ts, "response_item", |o| {
            o.begin_object()
                .key("type")
                .str("message")
                .key("role")
                .str(role)
                .key("content")
                .begin_array();
            for item in &self.items {
                match item {
                    Item::Text(t) => o
                        .begin_object()
                        .key("type")
                        .str(kind)
                        .key("text")
                        .str(t)
                        .end_object(),
                    Item::Value(v) => o.value(v),
                };
            }
            o.end_array().end_object();
        });
        if role == "user" {
            event(out, "user_message");
        }
        self.items.clear();
        self.texts.clear();
    }
}
