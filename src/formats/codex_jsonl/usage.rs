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

use crate::model::{Body, Content, Event, Message, Node, Role, Usage};

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

/// A model usage as Codex's `TokenUsage` (`output_tokens` with the reasoning included).
pub(super) fn token_usage(u: &Usage) -> Map<String, Value> {
    let input = u.input.unwrap_or(0);
    let reasoning = u.thoughts.unwrap_or(0);
    let output = u.output.unwrap_or(0).saturating_add(reasoning);
    let mut o = Map::new();
    o.insert("input_tokens".into(), input.into());
    o.insert("cached_input_tokens".into(), u.cached.unwrap_or(0).into());
    o.insert("output_tokens".into(), output.into());
    o.insert("reasoning_output_tokens".into(), reasoning.into());
    let total = u.total.unwrap_or(input.saturating_add(output));
    o.insert("total_tokens".into(), total.into());
    o
}

/// Adds one `TokenUsage` to a running total of the same shape.
pub(super) fn add_to(total: &mut Map<String, Value>, last: &Map<String, Value>) {
    for (k, v) in last {
        let n = v.as_u64().unwrap_or(0);
        let t = total.get(k).and_then(Value::as_u64).unwrap_or(0);
        total.insert(k.clone(), t.saturating_add(n).into());
    }
}

/// The `token_count` event payload Codex writes after a response.
pub(super) fn token_count(total: &Map<String, Value>, last: &Map<String, Value>) -> Value {
    let mut info = Map::new();
    info.insert("total_token_usage".into(), Value::Object(total.clone()));
    info.insert("last_token_usage".into(), Value::Object(last.clone()));
    info.insert("model_context_window".into(), Value::Null);
    let mut p = Map::new();
    p.insert("type".into(), "token_count".into());
    p.insert("info".into(), Value::Object(info));
    p.insert("rate_limits".into(), Value::Null);
    Value::Object(p)
}

/// What the reader derived here, taken off a message (the rollout's own lines hold it).
pub(super) fn without_derived(m: &mut Message) {
    m.model = None;
    m.usage = None;
}
