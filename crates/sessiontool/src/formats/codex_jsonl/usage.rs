//! Token usage and model names between rollout lines and messages.
//!
//! Codex records the model per turn (`turn_context.model`) and token counts in `event_msg`
//! `token_count` events (`TokenCountEvent { info: { total_token_usage, last_token_usage,
//! model_context_window }, rate_limits }`, `codex-rs/protocol/src/protocol.rs`). It sends a
//! `token_count` after each model response, and again, with the same totals, whenever a rate
//! limit snapshot arrives: only an event whose `total_token_usage` moved reports a response.
//!
//! Reading, the model of the latest turn context goes on every assistant message after it, and
//! a response's usage (`last_token_usage`, else the growth of the total) on one assistant
//! message of that response (one that is more than a thought when there is one: a thought
//! alone is what other tools cannot take). The rollout's own lines stay as they are, so writing
//! the session back as a rollout writes neither again.
//!
//! Model [`Usage`] counts as Gemini's API does: `input` every prompt token (cached included),
//! `cached` the cached part, `output` the generated tokens other than `thoughts`. Codex's
//! `output_tokens` include `reasoning_output_tokens`, so `output` is their difference.

use serde_json::{Map, Value};

use crate::json::out::Out;
use crate::model::{Body, Content, Event, Node, Role, Usage};

/// Sets the model and usage of assistant messages from the rollout's own lines.
pub(super) fn attach(nodes: &mut [Node]) {
    let mut attach = Attach::default();
    let mut usages: Vec<(usize, Usage)> = Vec::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        let model = attach
            .step(i, step_of(node), &mut |k, u| usages.push((k, u)))
            .map(String::from);
        if let Some(model) = model
            && let Some(m) = node.message_mut()
        {
            m.model = Some(model);
        }
    }
    attach.finish(&mut |k, u| usages.push((k, u)));
    for (k, u) in usages {
        if let Some(m) = nodes[k].message_mut() {
            m.usage = Some(u);
        }
    }
}

/// What a line is to [`Attach`].
pub(super) enum Step<'a> {
    /// A `turn_context` line: the model it names.
    Context(Option<&'a str>),
    /// A `token_count` event's `info` object.
    Count(&'a Value),
    /// An assistant message, and whether it is only thoughts.
    Assistant {
        thought_only: bool,
    },
    /// Any other message.
    Message,
    Other,
}

/// What `node` is to [`Attach`].
pub(super) fn step_of(node: &Node) -> Step<'_> {
    match &node.body {
        Body::Event(Event::Custom { kind, data }) if kind == "turn_context" => {
            Step::Context(data.get("model").and_then(Value::as_str))
        }
        Body::Event(Event::Custom { kind, data })
            if kind == "event_msg"
                && data.get("type").and_then(Value::as_str) == Some("token_count") =>
        {
            match data.get("info").filter(|v| v.is_object()) {
                Some(info) => Step::Count(info),
                None => Step::Other,
            }
        }
        Body::Message(m) if m.role == Role::Assistant => Step::Assistant {
            thought_only: thought_only(node),
        },
        Body::Message(_) => Step::Message,
        _ => Step::Other,
    }
}

/// The attachment of models and usage, line after line (see the module).
///
/// Where a response's items stand beside its `token_count` depends on the version: Codex 0.47
/// records them after it (at the end of the sampling), newer versions before it. So a count
/// goes on the assistant items not yet given one before it, or else on those that follow it,
/// up to the next line that is not part of a response (a tool output, a prompt, a turn).
#[derive(Default)]
pub(crate) struct Attach {
    model: Option<String>,
    previous_total: Option<Value>,
    /// The assistant messages gathered since the last settling, each with whether it is only
    /// thoughts.
    since: Vec<(usize, bool)>,
    pending: Option<Usage>,
}

impl Attach {
    /// Line `i`: `put(k, usage)` for each message `k` that gets a usage; the model of line
    /// `i` when it is an assistant message and a turn named one.
    pub(super) fn step(
        &mut self,
        i: usize,
        step: Step,
        put: &mut impl FnMut(usize, Usage),
    ) -> Option<&str> {
        match step {
            Step::Context(model) => {
                if let Some(m) = model
                    && !m.trim().is_empty()
                {
                    self.model = Some(m.to_string());
                }
                self.settle(put);
            }
            Step::Count(info) => {
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == self.previous_total {
                    return None; // a rate-limit update: the same response again
                }
                let usage = match info.get("last_token_usage").and_then(Value::as_object) {
                    Some(last) => usage_from(last),
                    None => {
                        let t = total.as_ref().and_then(Value::as_object);
                        let prev = self.previous_total.as_ref().and_then(Value::as_object);
                        match t {
                            Some(t) => growth(t, prev),
                            None => return None,
                        }
                    }
                };
                if total.is_some() {
                    self.previous_total = total;
                }
                self.settle(put);
                match &mut self.pending {
                    Some(p) => add(p, &usage),
                    None => self.pending = Some(usage),
                }
                if !self.since.is_empty() {
                    self.settle(put);
                }
            }
            Step::Assistant { thought_only } => {
                self.since.push((i, thought_only));
                return self.model.as_deref();
            }
            Step::Message => self.settle(put),
            Step::Other => {}
        }
        None
    }

    /// The end of the rollout.
    pub(super) fn finish(&mut self, put: &mut impl FnMut(usize, Usage)) {
        self.settle(put);
    }

    /// Puts a pending usage on the response items gathered, once there are some: on the last
    /// one that is more than a thought, else the last one.
    fn settle(&mut self, put: &mut impl FnMut(usize, Usage)) {
        if self.pending.is_none() || self.since.is_empty() {
            return;
        }
        let target = self
            .since
            .iter()
            .rev()
            .find(|(_, thought)| !thought)
            .or(self.since.last())
            .map(|&(k, _)| k);
        if let (Some(k), Some(u)) = (target, self.pending.take()) {
            put(k, u);
        }
        self.since.clear();
    }
}

fn add(a: &mut Usage, b: &Usage) {
    let sum = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0).saturating_add(y.unwrap_or(0))),
    };
    a.input = sum(a.input, b.input);
    a.cached = sum(a.cached, b.cached);
    a.output = sum(a.output, b.output);
    a.thoughts = sum(a.thoughts, b.thoughts);
    a.total = sum(a.total, b.total);
}

fn thought_only(node: &Node) -> bool {
    node.message().is_some_and(|m| {
        m.parts
            .iter()
            .all(|p| matches!(p.content, Content::Thought { .. }))
    })
}

fn count(o: &Map<String, Value>, k: &str) -> Option<u64> {
    o.get(k).and_then(Value::as_u64)
}

/// A `TokenUsage` object as model usage.
fn usage_from(o: &Map<String, Value>) -> Usage {
    let output = count(o, "output_tokens");
    let thoughts = count(o, "reasoning_output_tokens");
    Usage {
        input: count(o, "input_tokens"),
        cached: count(o, "cached_input_tokens"),
        output: output.map(|n| n.saturating_sub(thoughts.unwrap_or(0))),
        thoughts,
        tool: None,
        total: count(o, "total_tokens"),
        extra: Map::new(),
    }
}

/// What a total grew by since the one before.
fn growth(total: &Map<String, Value>, before: Option<&Map<String, Value>>) -> Usage {
    let mut delta = Map::new();
    for (k, v) in total {
        if let Some(n) = v.as_u64() {
            let b = before.and_then(|b| count(b, k)).unwrap_or(0);
            delta.insert(k.clone(), n.saturating_sub(b).into());
        }
    }
    usage_from(&delta)
}

/// A `TokenUsage` as Codex writes it in a `token_count` event (its fields in its order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TokenUsage {
    input_tokens: u64,
    cached_input_tokens: u64,
    output_tokens: u64,
    reasoning_output_tokens: u64,
    total_tokens: u64,
}

impl TokenUsage {
    /// A reply's usage; Codex counts reasoning among the output tokens.
    pub(super) fn of(u: &Usage) -> TokenUsage {
        let input = u.input.unwrap_or(0);
        let reasoning = u.thoughts.unwrap_or(0);
        let output = u.output.unwrap_or(0).saturating_add(reasoning);
        TokenUsage {
            input_tokens: input,
            cached_input_tokens: u.cached.unwrap_or(0),
            output_tokens: output,
            reasoning_output_tokens: reasoning,
            total_tokens: u.total.unwrap_or(input.saturating_add(output)),
        }
    }

    /// Adds one usage to a running total.
    pub(super) fn add(&mut self, last: &TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(last.input_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(last.cached_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(last.output_tokens);
        self.reasoning_output_tokens = self
            .reasoning_output_tokens
            .saturating_add(last.reasoning_output_tokens);
        self.total_tokens = self.total_tokens.saturating_add(last.total_tokens);
    }

    fn write(&self, o: &mut Out) {
        o.begin_object()
            .key("input_tokens")
            .u64(self.input_tokens)
            .key("cached_input_tokens")
            .u64(self.cached_input_tokens)
            .key("output_tokens")
            .u64(self.output_tokens)
            .key("reasoning_output_tokens")
            .u64(self.reasoning_output_tokens)
            .key("total_tokens")
            .u64(self.total_tokens)
            .end_object();
    }
}

/// The `token_count` event payload Codex writes after a response.
pub(super) fn token_count(o: &mut Out, total: &TokenUsage, last: &TokenUsage) {
    o.begin_object()
        .key("type")
        .str("token_count")
        .key("info")
        .begin_object();
    o.key("total_token_usage");
    total.write(o);
    o.key("last_token_usage");
    last.write(o);
    o.key("model_context_window")
        .null()
        .end_object()
        .key("rate_limits")
        .null()
        .end_object();
}
