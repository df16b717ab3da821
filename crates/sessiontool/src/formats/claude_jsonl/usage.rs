//! Claude's `message.usage` and the model's [`Usage`].
//!
//! The Anthropic API counts `input_tokens` without the prompt tokens read from or written to
//! the cache (`cache_read_input_tokens`, `cache_creation_input_tokens`), and `output_tokens`
//! with the thinking. The model counts as Gemini's API does: `input` is every prompt token,
//! `cached` the part read from the cache, `output` the generated tokens other than `thoughts`.
//! So `input` = the three input counts added up; the cache writes stay in `extra` under their
//! own name, where the writer finds them to take them off again.
//!
//! Claude Code writes one API reply as several entries (one content block each, the same
//! `message.id` and `requestId`), each with the reply's usage as it stood then. The reply is
//! one response: its usage goes on its last entry only (the final counts); the entries before
//! have theirs only in their line (their origin), where this format's writer alone finds it
//! again. Other formats then count each response once, as ccusage counts a reply once.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::{Body, Node, Role, Usage};

const CACHE_READ: &str = "cache_read_input_tokens";
const CACHE_WRITE: &str = "cache_creation_input_tokens";

/// `message.usage` as model usage.
pub(super) fn usage_from(mut u: Map<String, Value>) -> Usage {
    let mut take = |k: &str| {
        let n = u.get(k).and_then(Value::as_u64);
        if n.is_some() {
            u.shift_remove(k);
        }
        n
    };
    let input = take("input_tokens");
    let output = take("output_tokens");
    let cached = take(CACHE_READ);
    let written = u.get(CACHE_WRITE).and_then(Value::as_u64).unwrap_or(0);
    let input = match input {
        Some(n) => match n
            .checked_add(cached.unwrap_or(0))
            .and_then(|n| n.checked_add(written))
        {
            Some(all) => Some(all),
            None => {
                // Beyond any real count: kept as it was, not added up.
                u.insert("input_tokens".into(), n.into());
                None
            }
        },
        None => None,
    };
    Usage {
        input,
        output,
        cached,
        extra: u,
        ..Usage::default()
    }
}

/// The counts of `message.usage` (before the fields kept in `extra`): the inverse of
/// [`usage_from`].
pub(super) fn counts(u: &Usage) -> [(&'static str, Option<u64>); 3] {
    let written = u
        .extra
        .get(CACHE_WRITE)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let input = u.input.map(|n| {
        n.saturating_sub(u.cached.unwrap_or(0))
            .saturating_sub(written)
    });
    let output = match (u.output, u.thoughts) {
        (Some(o), t) => Some(o.saturating_add(t.unwrap_or(0))),
        (None, Some(t)) => Some(t),
        (None, None) => None,
    };
    [
        ("input_tokens", input),
        ("output_tokens", output),
        (CACHE_READ, u.cached),
    ]
}

/// Leaves a reply's usage on its last entry only (see the module doc).
pub(super) fn one_usage_per_reply(nodes: &mut [Node]) {
    let mut last_of: HashMap<(String, String), usize> = HashMap::new();
    let key = |n: &Node| -> Option<(String, String)> {
        let Body::Message(m) = &n.body else {
            return None;
        };
        if m.role != Role::Assistant || m.usage.is_none() {
            return None;
        }
        let id = m.extra.get("id")?.as_str()?;
        let request = n.extra.get("requestId")?.as_str()?;
        Some((id.to_string(), request.to_string()))
    };
    for (i, n) in nodes.iter().enumerate() {
        if let Some(k) = key(n) {
            last_of.insert(k, i);
        }
    }
    for (i, node) in nodes.iter_mut().enumerate() {
        let Some(k) = key(node) else { continue };
        if last_of.get(&k) == Some(&i) {
            continue;
        }
        if let Body::Message(m) = &mut node.body {
            m.usage = None;
        }
    }
}
