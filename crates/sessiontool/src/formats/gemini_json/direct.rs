//! A message of another format's session written straight from its node into the output, as
//! [`write_message`](super::write_message) makes it and the writer writes it, without the
//! `Value` in between (the stream writer's messages, on its one thread). The node's texts are
//! written where they are; what a later node may still change, the message's tool calls (the
//! results of the next node fold into them, [`fold`]), is moved out of the node and written
//! when the message is closed ([`Calls::write`]).
//!
//! Only for a session not of this format (whose messages start from no kept fields and whose
//! keys take the canonical order) and a node not read from a Gemini record (no key order or
//! content shape to follow): anything else goes through the `Value`.

use std::borrow::Cow;

use serde_json::Value;

use super::part_out::{part, parts};
use super::{lose_call_fields, lose_signature, lose_usage_fields, new_group, result_layout};
use crate::diag::LossReport;
use crate::formats::json_document::kept_fields;
use crate::json::out::Out;
use crate::model::{Content, Message, Node, Part, Usage};

/// A call of a message written but for its `toolCalls`: its fields as the whole writer makes
/// them for a session of another format (no fields of its own), and its result once folded.
pub(super) struct Call {
    id: Option<String>,
    name: String,
    args: Value,
    result: Option<(&'static str, Vec<Part>)>,
    status: Cow<'static, str>,
    timestamp: Option<String>,
    display: Option<Value>,
}

/// The calls of a message written up to its `toolCalls`, which come last in its key order.
pub(super) struct Calls(Vec<Call>);

/// Whether [`head`] can write the message of `node` (a session of another format's).
pub(super) fn writes(node: &Node) -> bool {
    node.message().is_some() && super::origin::MessageAsRead::of(node).is_none()
}

/// The message of `node` (see [`writes`]) of type `kind` at time `ts` as an open object into
/// `o`, up to its `toolCalls`: the calls, moved out of the node, when it has some (the object is
/// then left open for [`Calls::write`]), else the object closed. Losses as the whole writer's.
pub(super) fn head(
    o: &mut Out,
    node: &mut Node,
    kind: &'static str,
    ts: &str,
    losses: &mut LossReport,
) -> Option<Calls> {
    let gemini = kind == "gemini";
    let m = node.message().expect("a message (`writes`)");
    // The losses first, in the order the whole writer counts them.
    kept_fields(node, m, false, "Gemini", losses);
    for p in &m.parts {
        match &p.content {
            Content::Thought { .. } if gemini => {}
            Content::ToolCall { extra, .. } if gemini => lose_call_fields(extra.len(), losses),
            _ => continue,
        }
        if p.signature.is_some() {
            lose_signature(losses);
        }
    }
    if let Some(u) = &m.usage {
        lose_usage_fields(u.extra.len(), losses);
    }
    o.begin_object()
        .key("id")
        .str(&node.id)
        .key("timestamp")
        .str(ts)
        .key("type")
        .str(kind);
    content(o.key("content"), m, gemini);
    let mut thoughts = m
        .parts
        .iter()
        .filter(|p| gemini && is_thought(p))
        .peekable();
    if thoughts.peek().is_some() {
        o.key("thoughts").begin_array();
        for p in thoughts {
            thought(o, p);
        }
        o.end_array();
    }
    if let Some(u) = &m.usage {
        tokens(o.key("tokens"), u);
    }
    if let Some(model) = &m.model {
        o.key("model").str(model);
    }
    let calls = match gemini {
        true => calls(node),
        false => Vec::new(),
    };
    if calls.is_empty() {
        o.end_object();
        return None;
    }
    Some(Calls(calls))
}

fn is_thought(p: &Part) -> bool {
    matches!(p.content, Content::Thought { .. })
}

/// `content`: the parts that are neither thoughts nor calls of a `gemini` message, a lone text
/// (or none) as a string.
fn content(o: &mut Out, m: &Message, gemini: bool) {
    let kept = |p: &&Part| {
        !(gemini
            && matches!(
                p.content,
                Content::Thought { .. } | Content::ToolCall { .. }
            ))
    };
    let mut kept_parts = m.parts.iter().filter(kept);
    match (kept_parts.next(), kept_parts.next()) {
        (None, _) => {
            o.str("");
        }
        (
            Some(Part {
                content: Content::Text { text },
                signature: None,
                extra,
            }),
            None,
        ) if extra.is_empty() => {
            o.str(text);
        }
        _ => {
            o.begin_array();
            for p in m.parts.iter().filter(kept) {
                part(o, p);
            }
            o.end_array();
        }
    }
}

/// A thought summary: `{subject, description}` (with the thought's own fields, which may name
/// those keys again, through a `Value`).
fn thought(o: &mut Out, p: &Part) {
    let Content::Thought {
        text,
        subject,
        extra,
        ..
    } = &p.content
    else {
        return;
    };
    let subject = subject.as_deref().unwrap_or_default();
    if extra.is_empty() {
        o.begin_object()
            .key("subject")
            .str(subject)
            .key("description")
            .str(text)
            .end_object();
        return;
    }
    let mut t = serde_json::Map::new();
    t.insert("subject".into(), subject.into());
    t.insert("description".into(), text.clone().into());
    t.extend(extra.clone());
    o.value(&Value::Object(t));
}

/// `tokens`, as the CLI writes it (input, output, cached and total always); the source's own
/// counts were said lost.
fn tokens(o: &mut Out, u: &Usage) {
    o.begin_object()
        .key("input")
        .u64(u.input.unwrap_or(0))
        .key("output")
        .u64(u.output.unwrap_or(0))
        .key("cached")
        .u64(u.cached.unwrap_or(0));
    if let Some(n) = u.thoughts {
        o.key("thoughts").u64(n);
    }
    if let Some(n) = u.tool {
        o.key("tool").u64(n);
    }
    o.key("total").u64(u.total.unwrap_or(0)).end_object();
}

/// The calls of a `gemini` message, moved out of its node: recorded as cancelled, at the
/// node's time, until a result is folded in.
fn calls(node: &mut Node) -> Vec<Call> {
    let timestamp = node.timestamp.clone();
    let Some(m) = node.message_mut() else {
        return Vec::new();
    };
    m.parts
        .iter_mut()
        .filter_map(|p| match &mut p.content {
            Content::ToolCall { id, name, args, .. } => Some(Call {
                id: id.take(),
                name: std::mem::take(name),
                args: args.take(),
                result: None,
                status: Cow::Borrowed("cancelled"),
                timestamp: timestamp.clone(),
                display: None,
            }),
            _ => None,
        })
        .collect()
}

/// Puts a tool message's results into the calls they answer, as `fold_results` puts them into
/// a message's `toolCalls` (its parts moved, not cloned); false, and the node left as it was,
/// when a group of results finds no call.
pub(super) fn fold(calls: &mut Calls, tool: &mut Node) -> bool {
    let calls = &mut calls.0;
    let layout = result_layout(tool);
    let Some(m) = tool.message_mut() else {
        return true;
    };
    let mut targets = Vec::with_capacity(layout.len());
    for (i, (range, _)) in layout.iter().enumerate() {
        let (call_id, name) = match m.parts[range.clone()]
            .iter()
            .find_map(|p| match &p.content {
                Content::ToolResult { call_id, name, .. } => Some((call_id, name)),
                _ => None,
            }) {
            Some((id, name)) => (id.as_deref(), name.as_deref()),
            None => (None, None),
        };
        let by_id = call_id.and_then(|id| calls.iter().position(|c| c.id.as_deref() == Some(id)));
        // Calls from the Gemini API often carry no id: match those by name, in order.
        let pos = by_id.or_else(|| {
            calls.iter().enumerate().position(|(j, c)| {
                !targets.contains(&j) && c.id.is_none() && name.is_none_or(|n| c.name == n)
            })
        });
        let pos = pos.or_else(|| (call_id.is_none() && i < calls.len()).then_some(i));
        match pos {
            Some(p) if !targets.contains(&p) => targets.push(p),
            _ => return false,
        }
    }
    let mut parts = std::mem::take(&mut m.parts).into_iter();
    for ((range, shape), pos) in layout.into_iter().zip(targets) {
        let g = new_group(parts.by_ref().take(range.len()).collect(), shape);
        let call = &mut calls[pos];
        if call.id.is_none() {
            call.id = g.call_id;
        }
        call.status = match g.status {
            Some(s) => Cow::Owned(s),
            None if g.is_error => Cow::Borrowed("error"),
            // The call was written as `cancelled` until a result was found for it.
            None => Cow::Borrowed("success"),
        };
        if g.display.is_some() {
            call.display = g.display;
        }
        call.result = Some((g.shape, g.parts));
    }
    true
}

impl Calls {
    /// The calls as `toolCalls`' value into `o` (which stands where it goes).
    pub(super) fn write(&self, o: &mut Out) {
        o.begin_array();
        for c in &self.0 {
            o.begin_object();
            if let Some(id) = &c.id {
                o.key("id").str(id);
            }
            o.key("name").str(&c.name).key("args").value(&c.args);
            o.key("result");
            match &c.result {
                None => {
                    o.null();
                }
                Some((shape, ps)) => result(o, shape, ps),
            }
            o.key("status").str(&c.status);
            if let Some(ts) = &c.timestamp {
                o.key("timestamp").str(ts);
            }
            if let Some(d) = &c.display {
                o.key("resultDisplay").value(d);
            }
            o.end_object();
        }
        o.end_array();
    }
}

/// A call's `result` in the shape it was read in: a lone text as a string, a lone part as
/// itself, else a list.
fn result(o: &mut Out, shape: &str, ps: &[Part]) {
    match (shape, ps) {
        ("string", [p]) => match &p.content {
            Content::Text { text } => {
                o.str(text);
            }
            _ => parts(o, ps),
        },
        ("part", [p]) => part(o, p),
        _ => parts(o, ps),
    }
}
