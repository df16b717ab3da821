//! Sessions from other formats as rollout lines: a `session_meta` first, then per message the
//! response items Codex sends to the model (messages, reasoning, function calls and outputs)
//! and the `event_msg` `user_message`/`agent_message` lines its resume picker reads.

use serde_json::{Map, Value};

use super::super::one_branch::one_branch;
use super::super::tool_output::output_text;
use super::super::{WriteError, WriteOptions};
use super::CLI_VERSION;
use super::items::{content_item, line, summary_of};
use super::write::OTHER_BRANCHES;
use crate::diag::LossReport;
use crate::ids::{derived_uuid, is_uuid, sha256_hex};
use crate::json::out::{Out, Style, compact};
use crate::model::{Body, Content, Event, Message, Node, Role, Session};

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
    total: Map<String, Value>,
}

impl<'a> Foreign<'a> {
    pub(super) fn new(
        session: &'a Session,
        options: &'a WriteOptions,
        losses: &'a mut LossReport,
    ) -> Result<Self, WriteError> {
        let id = session.meta.id.clone().unwrap_or_default();
        // Codex reads `session_meta.id` as a UUID, and `codex resume ID` looks it up as one.
        let session_id = if is_uuid(&id) {
            id
        } else {
            let new = derived_uuid(&format!("codex-jsonl/{id}"));
            if !id.is_empty() && session.meta.source_format.as_deref() != Some(super::NAME) {
                losses.add(
                    "session-id",
                    1,
                    format!(
                        "the session id {id} is written as {new} (Codex reads session ids as UUIDs)"
                    ),
                );
            }
            new
        };
        Ok(Foreign {
            session,
            options,
            losses,
            session_id,
            last_ts: None,
            cwd: String::new(),
            model: None,
            total: Map::new(),
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
        let meta = &self.session.meta;
        if meta.title.is_some() {
            self.losses.add(
                "title",
                1,
                "the session title (a rollout has no field for it)",
            );
        }
        if meta.summary.is_some() {
            self.losses.add(
                "session-summary",
                1,
                "the session summary (a rollout has no field for it)",
            );
        }
        self.losses.add(
            "session-fields",
            meta.extra.len(),
            "session-level fields of the source format",
        );
    }

    /// What the branch leaves out, as `write` reports it (the two-pass engine chooses the
    /// branch itself).
    pub(super) fn left_out(&mut self, left_out: &crate::tree::LeftOut) {
        left_out.report(self.losses, OTHER_BRANCHES);
    }

    pub(super) fn meta_line(&mut self, branch: &Session, out: &mut Vec<u8>) {
        let meta = &self.session.meta;
        let ts = meta
            .start_time
            .clone()
            .or_else(|| branch.nodes.iter().find_map(|n| n.timestamp.clone()))
            .or_else(|| self.options.now.clone());
        if ts.is_none() {
            self.losses.add(
                "timestamps",
                1,
                "lines without any time to give them (pass --now)",
            );
        }
        let ts = ts.unwrap_or_default();
        let cwd = meta
            .cwd
            .clone()
            .or_else(|| self.options.cwd.clone())
            .or_else(|| meta.directories.as_ref().and_then(|d| d.first().cloned()));
        if cwd.is_none() {
            self.losses.add(
                "cwd-unknown",
                1,
                "Codex shows sessions by the cwd in session_meta; pass --cwd",
            );
        }
        let mut p = Map::new();
        p.insert("id".into(), self.session_id.clone().into());
        p.insert("timestamp".into(), ts.clone().into());
        self.cwd = cwd.unwrap_or_default();
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

    /// One node as the lines Codex would have written for it.
    pub(super) fn node_lines(&mut self, node: &Node, out: &mut Vec<u8>) {
        let ts = self.timestamp(node);
        let m = match &node.body {
            Body::Message(m) => m,
            Body::Event(Event::Compaction { summary, .. }) => {
                let mut p = Map::new();
                p.insert("message".into(), summary.clone().unwrap_or_default().into());
                push(out, line(&ts, "compacted", Value::Object(p)));
                return;
            }
            Body::Event(_) => {
                self.losses.add("events", 1, "session events of kinds a rollout does not record (rewinds, titles, model changes, other tools' events)");
                return;
            }
        };
        let role = match m.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
            Role::System => "developer",
            _ => {
                self.losses.add(
                    "notices",
                    1,
                    "notices (info, warning and error messages): a rollout has no place for them",
                );
                return;
            }
        };
        self.count_extras(node, m);
        if role == "assistant" {
            self.turn_context(&ts, m, out);
        }
        let before = out.len();
        let mut content: Vec<Value> = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        for (k, part) in m.parts.iter().enumerate() {
            match &part.content {
                Content::Text { text } => {
                    content.push(content_item(part, role == "assistant").expect("text"));
                    texts.push(text);
                }
                Content::Media { .. } if role != "assistant" => match content_item(part, false) {
                    Some(item) => content.push(item),
                    None => self.losses.add("media", 1, "media without data or address"),
                },
                Content::Thought { .. } if !self.native() => self.losses.add(
                    "thoughts",
                    1,
                    "reasoning from another model (the Responses API accepts only its own reasoning items, with their id and encrypted content)",
                ),
                Content::Thought { text, encrypted, .. } => {
                    self.flush(&ts, role, &mut content, &mut texts, out);
                    let mut p = Map::new();
                    p.insert("type".into(), "reasoning".into());
                    p.insert("summary".into(), summary_of(text));
                    p.insert("content".into(), Value::Null);
                    p.insert("encrypted_content".into(), encrypted.clone().map_or(Value::Null, Value::String));
                    push(out, line(&ts, "response_item", Value::Object(p)));
                }
                Content::ToolCall { id, name, args, .. } => {
                    self.flush(&ts, role, &mut content, &mut texts, out);
                    let mut p = Map::new();
                    p.insert("type".into(), "function_call".into());
                    p.insert("name".into(), name.clone().into());
                    p.insert("arguments".into(), compact(args).into());
                    p.insert("call_id".into(), self.call_id(id.as_deref(), node, k).into());
                    push(out, line(&ts, "response_item", Value::Object(p)));
                }
                Content::ToolResult { call_id, output, is_error, status, display, .. } => {
                    self.flush(&ts, role, &mut content, &mut texts, out);
                    if *is_error || status.as_deref().is_some_and(|s| s != "success") {
                        self.losses.add("tool-status", 1, "tool result status and error flags (a function_call_output is text only)");
                    }
                    if display.is_some() {
                        self.losses.add("tool-display", 1, "what the source tool showed its user for a tool result");
                    }
                    if call_id.is_none() {
                        self.losses.add("result-without-call-id", 1, "tool results without a call id (given a made-up one that answers no call)");
                    }
                    let mut p = Map::new();
                    p.insert("type".into(), "function_call_output".into());
                    p.insert("call_id".into(), self.call_id(call_id.as_deref(), node, k).into());
                    p.insert("output".into(), output_text(output).0.into());
                    push(out, line(&ts, "response_item", Value::Object(p)));
                }
                Content::Media { .. } => self.losses.add("assistant-media", 1, "media in replies (a rollout message of the assistant holds text only)"),
                Content::Code { .. } | Content::CodeResult { .. } | Content::Other { .. } => {
                    self.losses.add("parts", 1, "parts of kinds a rollout has no item for (code, code results, unknown parts)")
                }
            }
        }
        self.flush(&ts, role, &mut content, &mut texts, out);
        if out.len() == before {
            self.losses.add(
                "messages",
                1,
                "messages with nothing a rollout line can hold (empty, as an aborted reply is, or only parts listed here), left out",
            );
        }
        if role == "assistant" {
            self.token_count(&ts, m, out);
        }
    }

    /// A `turn_context` line before a reply whose model differs from the last one written
    /// (Codex records the model per turn there; usage readers such as ccusage take it from
    /// there). A session read from a rollout has its own lines.
    fn turn_context(&mut self, ts: &str, m: &Message, out: &mut Vec<u8>) {
        let Some(model) = m.model.as_ref().filter(|_| !self.native()) else {
            return;
        };
        if self.model.as_ref() == Some(model) {
            return;
        }
        self.model = Some(model.clone());
        // `TurnContextItem` as Codex 0.47 writes it; the policies are the most careful ones
        // (the session does not say which were used, and resuming applies the user's own).
        let mut sandbox = Map::new();
        sandbox.insert("mode".into(), "read-only".into());
        let mut p = Map::new();
        p.insert("cwd".into(), self.cwd.clone().into());
        p.insert("approval_policy".into(), "on-request".into());
        p.insert("sandbox_policy".into(), Value::Object(sandbox));
        p.insert("model".into(), model.clone().into());
        p.insert("summary".into(), "auto".into());
        push(out, line(ts, "turn_context", Value::Object(p)));
    }

    /// The `token_count` event Codex writes after a response, for a reply with usage.
    fn token_count(&mut self, ts: &str, m: &Message, out: &mut Vec<u8>) {
        let Some(u) = m.usage.as_ref().filter(|_| !self.native()) else {
            return;
        };
        let last = super::usage::token_usage(u);
        super::usage::add_to(&mut self.total, &last);
        let payload = super::usage::token_count(&self.total, &last);
        push(out, line(ts, "event_msg", payload));
    }

    /// Writes the pending message content as a message item, with the event Codex records
    /// beside it (`agent_message` before a reply, `user_message` after a prompt).
    fn flush(
        &mut self,
        ts: &str,
        role: &str,
        content: &mut Vec<Value>,
        texts: &mut Vec<&str>,
        out: &mut Vec<u8>,
    ) {
        if content.is_empty() {
            return;
        }
        let text = texts.join("\n\n");
        let event = |kind: &str| {
            let mut e = Map::new();
            e.insert("type".into(), kind.into());
            e.insert("message".into(), text.clone().into());
            if kind == "user_message" {
                e.insert("kind".into(), "plain".into());
            }
            line(ts, "event_msg", Value::Object(e))
        };
        if role == "assistant" && !texts.is_empty() {
            push(out, event("agent_message"));
        }
        let mut p = Map::new();
        p.insert("type".into(), "message".into());
        p.insert("role".into(), role.into());
        p.insert("content".into(), Value::Array(std::mem::take(content)));
        push(out, line(ts, "response_item", Value::Object(p)));
        if role == "user" {
            push(out, event("user_message"));
        }
        texts.clear();
    }

    /// Whether the session was read from a rollout, of either layout (its reasoning items
    /// are Codex's own).
    fn native(&self) -> bool {
        matches!(
            self.session.meta.source_format.as_deref(),
            Some(super::NAME | super::legacy::NAME)
        )
    }

    fn call_id(&self, id: Option<&str>, node: &Node, k: usize) -> String {
        match id {
            Some(id) => id.to_string(),
            None => format!(
                "call_{}",
                &sha256_hex(&format!("{}/{}#{k}", self.session_id, node.id))[..24]
            ),
        }
    }

    fn count_extras(&mut self, node: &Node, m: &Message) {
        let mut n =
            node.extra.len() + m.extra.len() + m.usage.as_ref().map_or(0, |u| u.extra.len());
        let mut encrypted = 0;
        for p in &m.parts {
            n += p.extras();
            if p.signature.is_some() {
                encrypted += 1;
            }
        }
        self.losses.add(
            "extra-fields",
            n,
            "fields of the source format with no place in a rollout line",
        );
        self.losses.add("signatures", encrypted, "part signatures of another provider (a rollout keeps only OpenAI's encrypted reasoning)");
        // Usage and models of replies are written as token_count and turn_context lines; on
        // other messages Codex has no place for them.
        let assistant = m.role == Role::Assistant;
        if m.usage.is_some() && !assistant {
            self.losses.add(
                "usage",
                1,
                "token usage on messages other than replies (Codex counts tokens per response)",
            );
        }
        if m.model.is_some() && !assistant {
            self.losses.add(
                "model",
                1,
                "the model of messages other than replies (Codex records it per turn)",
            );
        }
    }
}

fn push(out: &mut Vec<u8>, m: Map<String, Value>) {
    Out::new(out, Style::JS).value(&Value::Object(m));
    out.push(b'\n');
}
