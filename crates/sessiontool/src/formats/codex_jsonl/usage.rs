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
use crate::json::{Kind, Picker, Raw};
use crate::model::{Body, Content, Event, Node, Role, Usage};

/// Sets the model and usage of assistant messages from the rollout's own lines.
pub(super) fn attach(nodes: &mut [Node]) {
    let mut attach = Attach::default();
    let mut usages: Vec<(usize, Usage)> = Vec::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        let model = attach
            .step(i, &step_of(node), &mut |k, u| usages.push((k, u)))
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
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// A `turn_context` line: the model it names.
    Context(Option<String>),
    /// A `token_count` event's `info` object.
    Count(Box<Counted>),
    /// An assistant message, and whether it is only thoughts.
    Assistant {
        thought_only: bool,
    },
    /// Any other message.
    Message,
    Other,
}

/// What `node` is to [`Attach`].
pub(super) fn step_of(node: &Node) -> Step {
    match &node.body {
        Body::Event(Event::Custom { kind, data }) if kind == "turn_context" => {
            Step::Context(data.get("model").and_then(Value::as_str).map(String::from))
        }
        Body::Event(Event::Custom { kind, data })
            if kind == "event_msg"
                && data.get("type").and_then(Value::as_str) == Some("token_count") =>
        {
            match data.get("info").filter(|v| v.is_object()) {
                Some(info) => Step::Count(Box::new(Counted::of_value(info))),
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
    previous_total: Option<Total>,
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
        step: &Step,
        put: &mut impl FnMut(usize, Usage),
    ) -> Option<&str> {
        match *step {
            Step::Context(ref model) => {
                if let Some(m) = model
                    && !m.trim().is_empty()
                {
                    self.model = Some(m.clone());
                }
                self.settle(put);
            }
            Step::Count(ref info) => {
                let total = info.total.as_ref();
                if total.is_some() && total == self.previous_total.as_ref() {
                    return None; // a rate-limit update: the same response again
                }
                let usage = match &info.last {
                    Some(last) => last.clone(),
                    None => match total {
                        Some(t) => t.growth(self.previous_total.as_ref())?,
                        None => return None,
                    },
                };
                if let Some(total) = total {
                    self.previous_total = Some(total.clone());
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

/// What a `token_count` event's `info` object says of usage: its `total_token_usage` and,
/// when it is an object, its `last_token_usage` as a reply's usage. Read from the rollout's
/// text ([`Counted::of_raw`]) or from the whole reader's value ([`Counted::of_value`]), it is
/// the same.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Counted {
    total: Option<Total>,
    last: Option<Usage>,
}

impl Counted {
    pub(super) fn of_value(info: &Value) -> Counted {
        Counted {
            total: info.get("total_token_usage").map(Total::of_value),
            last: info
                .get("last_token_usage")
                .and_then(Value::as_object)
                .map(usage_from),
        }
    }

    /// From the text of an `info` object, its fields picked by `p`; `None` if some of it is
    /// not what serde_json reads.
    pub(super) fn of_raw<'a>(info: Raw<'a>, p: &impl Picker<'a>) -> Option<Counted> {
        let [total, last] = p.pick_in(info, ["total_token_usage", "last_token_usage"]);
        let total = match total {
            Some(t) => Some(Total::of_raw(t, p)?),
            None => None,
        };
        let last = last.filter(|l| l.kind() == Kind::Object).map(|l| {
            let [input, cached, output, thoughts, total] =
                p.pick_in(l, USAGE_KEYS).map(|n| n.and_then(Raw::as_u64));
            usage_of_counts(input, cached, output, thoughts, total)
        });
        Some(Counted { total, last })
    }
}

/// A `total_token_usage` value, compared as serde_json compares values. What Codex writes (an
/// object of whole numbers, each key once) is held as its numbers, read without building a
/// value; anything else as the value it is.
#[derive(Debug, Clone)]
enum Total {
    Counts(Counts),
    Value(Value),
}

/// The whole numbers of an object, each key once: those of [`USAGE_KEYS`] by place, others
/// (none in what Codex writes) by name.
#[derive(Debug, Clone, Default)]
struct Counts {
    known: [Option<u64>; 5],
    others: Vec<(Box<str>, u64)>,
}

impl Counts {
    /// `n` under `key`; `false` when the key is there already.
    fn put(&mut self, key: &str, n: u64) -> bool {
        let slot = match USAGE_KEYS.iter().position(|k| *k == key) {
            Some(i) => &mut self.known[i],
            None => {
                if self.others.iter().any(|(k, _)| **k == *key) {
                    return false;
                }
                self.others.push((key.into(), n));
                return true;
            }
        };
        slot.replace(n).is_none()
    }

    fn get(&self, key: &str) -> Option<u64> {
        match USAGE_KEYS.iter().position(|k| *k == key) {
            Some(i) => self.known[i],
            None => self
                .others
                .iter()
                .find(|(k, _)| **k == *key)
                .map(|(_, n)| *n),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        let known = USAGE_KEYS
            .iter()
            .zip(self.known)
            .filter_map(|(k, n)| Some((*k, n?)));
        known.chain(self.others.iter().map(|(k, n)| (&**k, *n)))
    }
}

impl PartialEq for Counts {
    /// The same keys with the same numbers, in any order (as serde_json's maps compare).
    fn eq(&self, other: &Counts) -> bool {
        self.known == other.known
            && self.others.len() == other.others.len()
            && self.others.iter().all(|entry| other.others.contains(entry))
    }
}

impl Total {
    fn of_value(v: &Value) -> Total {
        let counts = v.as_object().and_then(|o| {
            let mut counts = Counts::default();
            for (k, v) in o {
                // Each key once in a map.
                counts.put(k, v.as_u64()?);
            }
            Some(counts)
        });
        match counts {
            Some(counts) => Total::Counts(counts),
            None => Total::Value(v.clone()),
        }
    }

    fn of_raw<'a>(t: Raw<'a>, p: &impl Picker<'a>) -> Option<Total> {
        let mut counts = Some(Counts::default());
        if t.kind() == Kind::Object {
            p.each_entry(t, &mut |k, v| {
                // A key twice (serde_json keeps the last, where the first stood), or not a
                // whole number: read as a value.
                let fits = |c: &mut Counts| Some(c.put(&k.to_cow(), v.as_u64()?));
                if counts.as_mut().and_then(fits) != Some(true) {
                    counts = None;
                }
            });
        } else {
            counts = None;
        }
        Some(match counts {
            Some(counts) => Total::Counts(counts),
            None => Total::Value(serde_json::from_str(t.text()).ok()?),
        })
    }

    /// The whole-number fields of an object (`None`: not an object).
    fn counts(&self) -> Option<Vec<(&str, u64)>> {
        match self {
            Total::Counts(c) => Some(c.iter().collect()),
            Total::Value(v) => Some(
                v.as_object()?
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_u64()?)))
                    .collect(),
            ),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Total::Counts(c) => Value::Object(
                c.iter()
                    .map(|(k, n)| (k.to_string(), Value::from(n)))
                    .collect(),
            ),
            Total::Value(v) => v.clone(),
        }
    }

    /// What this total grew by since the one `before` (`None`: not an object).
    fn growth(&self, before: Option<&Total>) -> Option<Usage> {
        let was = |k: &str| match before {
            Some(Total::Counts(c)) => c.get(k),
            Some(Total::Value(v)) => v.get(k).and_then(Value::as_u64),
            None => None,
        };
        let grown: Vec<(&str, u64)> = self
            .counts()?
            .into_iter()
            .map(|(k, n)| (k, n.saturating_sub(was(k).unwrap_or(0))))
            .collect();
        let count = |key: &str| grown.iter().find(|(k, _)| *k == key).map(|(_, n)| *n);
        let [input, cached, output, thoughts, total] = USAGE_KEYS.map(count);
        Some(usage_of_counts(input, cached, output, thoughts, total))
    }
}

impl PartialEq for Total {
    fn eq(&self, other: &Total) -> bool {
        match (self, other) {
            (Total::Counts(a), Total::Counts(b)) => a == b,
            (Total::Value(a), Total::Value(b)) => a == b,
            (a, b) => a.to_value() == b.to_value(),
        }
    }
}

/// The keys of a `TokenUsage` a reply's usage is made of, in [`usage_of_counts`]'s order.
const USAGE_KEYS: [&str; 5] = [
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
];

fn count(o: &Map<String, Value>, k: &str) -> Option<u64> {
    o.get(k).and_then(Value::as_u64)
}

/// A `TokenUsage` object as model usage.
fn usage_from(o: &Map<String, Value>) -> Usage {
    let [input, cached, output, thoughts, total] = USAGE_KEYS.map(|k| count(o, k));
    usage_of_counts(input, cached, output, thoughts, total)
}

/// A reply's usage from a `TokenUsage`'s counts ([`USAGE_KEYS`]).
fn usage_of_counts(
    input: Option<u64>,
    cached: Option<u64>,
    output: Option<u64>,
    thoughts: Option<u64>,
    total: Option<u64>,
) -> Usage {
    Usage {
        input,
        cached,
        output: output.map(|n| n.saturating_sub(thoughts.unwrap_or(0))),
        thoughts,
        tool: None,
        total,
        extra: Map::new(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::FromText;

    /// `info` objects of every shape the attachment tells apart: Codex's own, keys in another
    /// order or twice, totals that are not whole numbers or not objects, no `last`.
    const INFOS: &[&str] = &[
        r#"{"total_token_usage":{"input_tokens":10,"cached_input_tokens":2,"output_tokens":7,"reasoning_output_tokens":3,"total_tokens":17},"last_token_usage":{"input_tokens":10,"cached_input_tokens":2,"output_tokens":7,"reasoning_output_tokens":3,"total_tokens":17},"model_context_window":null}"#,
        r#"{"total_token_usage":{"total_tokens":17,"output_tokens":7,"reasoning_output_tokens":3,"cached_input_tokens":2,"input_tokens":10}}"#,
        r#"{"total_token_usage":{"input_tokens":30,"output_tokens":9,"input_tokens":31,"total_tokens":40}}"#,
        r#"{"total_token_usage":{"input_tokens":30.0,"output_tokens":9,"total_tokens":39}}"#,
        r#"{"total_token_usage":{"input_tokens":-1,"x":"y","total_tokens":99999999999999999999999}}"#,
        r#"{"total_token_usage":{"input_tokens":50,"output_tokens":20,"extra_tokens":5}}"#,
        r#"{"total_token_usage":null,"last_token_usage":{"input_tokens":4,"output_tokens":1}}"#,
        r#"{"total_token_usage":[1,2],"last_token_usage":7}"#,
        r#"{"last_token_usage":{"in\u0070ut_tokens":4,"output_tokens":1,"output_tokens":2}}"#,
        r#"{"total_token_usage":{"\u0069nput_tokens":60,"output_tokens":25},"last_token_usage":{}}"#,
        r#"{}"#,
    ];

    fn from_text(info: &str) -> Step {
        Step::Count(Box::new(
            Counted::of_raw(Raw::parse(info).unwrap(), &FromText).unwrap(),
        ))
    }

    fn from_value(info: &str) -> Step {
        Step::Count(Box::new(Counted::of_value(
            &serde_json::from_str(info).unwrap(),
        )))
    }

    fn usages(steps: impl Iterator<Item = Step>) -> Vec<(usize, Usage)> {
        let mut attach = Attach::default();
        let mut put = Vec::new();
        for (i, step) in steps.enumerate() {
            attach.step(2 * i, &step, &mut |k, u| put.push((k, u)));
            // An assistant reply after each count, to take what it says.
            attach.step(
                2 * i + 1,
                &Step::Assistant {
                    thought_only: false,
                },
                &mut |k, u| put.push((k, u)),
            );
        }
        attach.finish(&mut |k, u| put.push((k, u)));
        put
    }

    #[test]
    fn counts_read_from_text_are_those_read_from_values() {
        for info in INFOS {
            let value: Value = serde_json::from_str(info).unwrap();
            let raw = Counted::of_raw(Raw::parse(info).unwrap(), &FromText).unwrap();
            assert_eq!(raw, Counted::of_value(&value), "{info}");
        }
        // Every order of counts gives the same usages either way.
        for rotation in 0..INFOS.len() {
            let order = || {
                INFOS
                    .iter()
                    .copied()
                    .cycle()
                    .skip(rotation)
                    .take(2 * INFOS.len())
            };
            let texts = usages(order().map(from_text));
            assert_eq!(texts, usages(order().map(from_value)));
        }
    }

    #[test]
    fn a_total_seen_again_in_another_order_is_the_same_response() {
        let steps = [INFOS[0], INFOS[1]].map(from_text);
        // The second count (the same totals, keys reordered) gives no usage of its own.
        assert_eq!(usages(steps.into_iter()).len(), 1);
    }

    #[test]
    fn without_last_usage_a_count_is_what_the_total_grew_by() {
        let steps = [INFOS[1], INFOS[5]].map(from_text);
        let got = usages(steps.into_iter());
        assert_eq!(got.len(), 2);
        let grown = &got[1].1;
        assert_eq!(
            (grown.input, grown.output, grown.total),
            (Some(40), Some(13), None)
        );
    }
}
