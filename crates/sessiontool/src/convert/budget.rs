//! A context budget (`--max-tokens N`, opt in): a long session may not fit the model of the
//! tool it moves to. The branch the tool resumes is cut to the first prompt plus the newest
//! turns that fit; a tool call is never parted from its result; everything left out is in
//! the loss report. A session that fits is not changed at all.
//!
//! The tokens are an estimate, the same for every model (their tokenizers differ):
//! - text, thoughts, code and its output: one token per 4 bytes of UTF-8, rounded up per part;
//! - a tool call: its name and its arguments as compact JSON, the same way; a tool result: its
//!   output (a string as it is, anything else as compact JSON);
//! - an image or other media: 1,600 tokens, whatever the size of its inline data;
//! - opaque encrypted reasoning: nothing (only its own provider reads it, and writers into
//!   another tool's format leave it out);
//! - every message: 4 more tokens of framing; a compaction: its summary;
//! - notices the model never sees (Gemini CLI's info, warning and error messages) and other
//!   events: nothing.
//!
//! English prose and code come out within about a quarter of what the tokenizers count;
//! leave a margin below the model's window for the tool's own system prompt and the reply.
//!
//! What is kept: every node before the first assistant message (the first prompt, and the
//! system or context messages some tools put before it), then whole turns from the newest
//! back while they fit (a turn starts at a user prompt; the reply to the first prompt is the
//! first turn). When not even the newest turn fits whole, its prompt and its newest messages
//! that fit are kept, cut before an assistant message. Nodes on other branches are left out
//! too: only the branch the tool resumes reaches the model.

use std::collections::HashMap;

use serde::Serialize;

use crate::diag::LossReport;
use crate::model::{Body, Content, Event, Message, Node, Part, Role, Session};

/// Bytes of UTF-8 text per estimated token.
pub const BYTES_PER_TOKEN: u64 = 4;
/// What an image (or other media part) counts, whatever its size.
pub const MEDIA_TOKENS: u64 = 1_600;
/// What every message adds for its framing (role, separators).
pub const MESSAGE_TOKENS: u64 = 4;

/// What fitting a session into a budget did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub max_tokens: u64,
    /// Estimated tokens of the branch the tool resumes, as read.
    pub estimated: u64,
    /// Estimated tokens of what was kept (`estimated` when nothing was cut).
    pub kept: u64,
    /// Turns on that branch: the reply to the first prompt, then one per later user prompt.
    pub turns: usize,
    /// Turns kept whole or in part.
    pub turns_kept: usize,
    /// Messages and events of that branch left out.
    pub left_out: usize,
    /// Nodes on other branches left out (only when something was cut).
    pub other_branches: usize,
    /// Records outside the conversation left out (only when something was cut).
    pub outside_conversation: usize,
    /// Not even the newest turn fitted whole: its prompt and newest messages were kept.
    pub cut_within_turn: bool,
}

/// The estimated tokens of one node (see the module documentation).
pub fn node_tokens(node: &Node) -> u64 {
    match &node.body {
        Body::Message(m) => message_tokens(m),
        Body::Event(Event::Compaction {
            summary: Some(s), ..
        }) => text_tokens(s),
        Body::Event(_) => 0,
    }
}

fn message_tokens(m: &Message) -> u64 {
    if !m.role.is_conversation() {
        return 0;
    }
    MESSAGE_TOKENS + m.parts.iter().map(part_tokens).sum::<u64>()
}

fn part_tokens(part: &Part) -> u64 {
    match &part.content {
        Content::Text { text } => text_tokens(text),
        Content::Thought { text, .. } => text_tokens(text),
        Content::ToolCall { name, args, .. } => text_tokens(name) + json_tokens(args),
        Content::ToolResult { output, .. } => json_tokens(output),
        Content::Media { .. } => MEDIA_TOKENS,
        Content::Code { code, .. } => text_tokens(code),
        Content::CodeResult { output, .. } => output.as_deref().map_or(0, text_tokens),
        Content::Other { value } => json_tokens(value),
    }
}

fn text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

fn json_tokens(value: &serde_json::Value) -> u64 {
    match value {
        serde_json::Value::String(s) => text_tokens(s),
        serde_json::Value::Null => 0,
        other => {
            (serde_json::to_vec(other).map_or(0, |v| v.len()) as u64).div_ceil(BYTES_PER_TOKEN)
        }
    }
}

/// Whether a node is a prompt the user typed (a user message that is not only tool results).
fn is_prompt(node: &Node) -> bool {
    matches!(&node.body, Body::Message(m) if m.role == Role::User
        && m.parts.iter().any(|p| !matches!(p.content, Content::ToolResult { .. })))
}

fn is_assistant(node: &Node) -> bool {
    matches!(&node.body, Body::Message(m) if m.role == Role::Assistant)
}

/// Cuts `session` to about `max_tokens` (see the module documentation) along the branch
/// ending at `leaf` (default: the head); what is left out is added to `losses`. An error
/// (nothing changed) when not even the first prompt and the newest message fit.
pub fn fit(
    session: &mut Session,
    max_tokens: u64,
    leaf: Option<&str>,
    losses: &mut LossReport,
) -> Result<Budget, String> {
    let tree = session.tree();
    let end = match leaf {
        Some(id) => tree
            .index_of(id)
            .ok_or_else(|| format!("no node with id {id:?} in this session"))?,
        None => match tree.head() {
            Some(h) => h,
            None => return Ok(unchanged(max_tokens, 0, 0)),
        },
    };
    let path = tree.path_to(end);
    // Never on the path, unless --leaf names one of them.
    let outside: Vec<usize> = tree.outside().into_iter().filter(|&i| i != end).collect();
    let outside_kinds = tree.outside_summary(outside.iter().copied());
    drop(tree);
    let nodes: Vec<&Node> = path.iter().map(|&i| &session.nodes[i]).collect();
    let costs: Vec<u64> = nodes.iter().map(|n| node_tokens(n)).collect();
    let estimated: u64 = costs.iter().sum();
    // Everything before the first assistant message: the first prompt and what comes with it.
    let prefix_end = nodes
        .iter()
        .position(|n| is_assistant(n))
        .unwrap_or(nodes.len());
    let mut turn_starts = Vec::new();
    if prefix_end < nodes.len() {
        turn_starts.push(prefix_end);
        turn_starts.extend((prefix_end + 1..nodes.len()).filter(|&i| is_prompt(nodes[i])));
    }
    let turns = turn_starts.len();
    if estimated <= max_tokens {
        return Ok(unchanged(max_tokens, estimated, turns));
    }
    let prefix: u64 = costs[..prefix_end].iter().sum();
    let room = max_tokens.checked_sub(prefix).ok_or_else(|| {
        format!(
            "--max-tokens {max_tokens} is too small: the first prompt alone is about {prefix} tokens (the session about {estimated})"
        )
    })?;
    // suffix[i]: the cost of nodes[i..].
    let mut suffix = vec![0u64; nodes.len() + 1];
    for i in (0..nodes.len()).rev() {
        suffix[i] = suffix[i + 1] + costs[i];
    }
    let pairs = Pairs::of(&nodes);
    // Whole turns: a gap from the first reply to the start of the oldest turn from which
    // everything to the end fits, where no call is parted from its result.
    let safe = pairs.safe_ends(prefix_end, nodes.len(), |_| true);
    let whole = turn_starts
        .iter()
        .enumerate()
        .skip(1)
        .find(|&(_, &start)| suffix[start] <= room && safe[start - prefix_end]);
    let (gaps, turns_kept, cut_within_turn) = match whole {
        // One gap (the second is empty).
        Some((j, &start)) => ([prefix_end..start, start..start], turns - j, false),
        None => {
            // The newest turn alone does not fit: its prompt, then its newest messages from
            // an assistant message on.
            let last = *turn_starts.last().ok_or_else(|| {
                format!(
                    "--max-tokens {max_tokens} is too small: the session has no reply to keep (about {estimated} tokens before the first one)"
                )
            })?;
            let prompt = (last > prefix_end).then_some(last);
            let from = prompt.map_or(prefix_end, |p| p + 1);
            let kept_prompt = prompt.map_or(0, |p| costs[p]);
            let safe = pairs.safe_ends(from, nodes.len(), |i| i < prefix_end || Some(i) == prompt);
            let fits = |i: usize| is_assistant(nodes[i]) && safe[i - from];
            let cut = (from..nodes.len())
                .find(|&i| fits(i) && kept_prompt + suffix[i] <= room)
                .ok_or_else(|| {
                    let newest = (from..nodes.len())
                        .rev()
                        .find(|&i| fits(i))
                        .map_or(suffix[from], |i| suffix[i]);
                    format!(
                        "--max-tokens {max_tokens} is too small: the first prompt (about {prefix} tokens) and the newest reply that stands on its own (about {} tokens) do not fit",
                        kept_prompt + newest
                    )
                })?;
            // The older turns, and the start of this one after its prompt.
            (
                [prefix_end..prompt.unwrap_or(prefix_end), from..cut],
                1,
                true,
            )
        }
    };
    let dropped = |i: usize| gaps.iter().any(|g| g.contains(&i));
    let kept_positions: Vec<usize> = (0..nodes.len()).filter(|&i| !dropped(i)).collect();
    let kept_cost: u64 = kept_positions.iter().map(|&i| costs[i]).sum();
    let left_out = nodes.len() - kept_positions.len();
    let other_branches = session.nodes.len() - path.len() - outside.len();
    let position: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut kept: Vec<Node> = Vec::with_capacity(kept_positions.len());
    let mut previous: Option<usize> = None;
    for &i in &kept_positions {
        let mut node = nodes[i].clone();
        // Joined over a gap to the node kept before it.
        if i > 0 && previous != Some(i - 1) {
            node.parent = previous.map(|p| nodes[p].id.clone());
        }
        // A compaction whose first kept entry is now left out keeps from the next one here.
        if let Body::Event(Event::Compaction {
            first_kept: Some(first),
            ..
        }) = &mut node.body
            && let Some(&at) = position.get(first.as_str())
            && dropped(at)
            && let Some(&next) = kept_positions.iter().find(|&&k| k > at)
        {
            *first = nodes[next].id.clone();
        }
        kept.push(node);
        previous = Some(i);
    }
    let head = nodes[nodes.len() - 1].id.clone();
    session.nodes = kept;
    session.meta.head = Some(head);
    losses.add(
        "max-tokens",
        left_out,
        format!(
            "messages and events left out to fit --max-tokens {max_tokens} (estimated: {kept_cost} of {estimated} tokens kept; the first prompt and the newest {turns_kept} of {turns} turns{})",
            match (cut_within_turn, gaps[0].is_empty()) {
                (false, _) => "",
                // No older turn was left out: the one turn is the reply to the first prompt.
                (true, true) => ", cut to its newest messages",
                (true, false) => ", that one cut to its prompt and newest messages",
            }
        ),
    );
    losses.add(
        "other-branches",
        other_branches,
        "nodes on other branches (with --max-tokens only the branch the tool resumes is kept)",
    );
    losses.add(
        "outside-conversation",
        outside.len(),
        format!(
            "records outside the conversation (with --max-tokens only the branch the tool resumes is kept: {outside_kinds})"
        ),
    );
    Ok(Budget {
        max_tokens,
        estimated,
        kept: kept_cost,
        turns,
        turns_kept,
        left_out,
        other_branches,
        outside_conversation: outside.len(),
        cut_within_turn,
    })
}

fn unchanged(max_tokens: u64, estimated: u64, turns: usize) -> Budget {
    Budget {
        max_tokens,
        estimated,
        kept: estimated,
        turns,
        turns_kept: turns,
        left_out: 0,
        other_branches: 0,
        outside_conversation: 0,
        cut_within_turn: false,
    }
}

/// Where the tool calls of a branch and their results are (positions on the branch), to never
/// part a call from its result.
struct Pairs {
    /// `(first, second)` positions of each call and a result that answers it.
    pairs: Vec<(usize, usize)>,
}

impl Pairs {
    fn of(nodes: &[&Node]) -> Pairs {
        let mut call_at: HashMap<&str, usize> = HashMap::new();
        let mut results: Vec<(usize, &str)> = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            for part in node.message().map(|m| m.parts.as_slice()).unwrap_or(&[]) {
                match &part.content {
                    Content::ToolCall { id: Some(id), .. } => {
                        call_at.entry(id).or_insert(i);
                    }
                    Content::ToolResult {
                        call_id: Some(id), ..
                    } => results.push((i, id)),
                    _ => {}
                }
            }
        }
        let pairs = results
            .into_iter()
            .filter_map(|(r, id)| call_at.get(id).map(|&c| (c.min(r), c.max(r))))
            .collect();
        Pairs { pairs }
    }

    /// For a gap that starts at `start` (before it, `kept_before` says which positions stay):
    /// whether leaving out `start..end` keeps every call with its result (no pair has one
    /// end kept and the other left out), for each `end` in `start..=len` (index
    /// `end - start`). Linear in the branch and its pairs.
    fn safe_ends(
        &self,
        start: usize,
        len: usize,
        kept_before: impl Fn(usize) -> bool,
    ) -> Vec<bool> {
        // The gap ends after `low` and at `high` at the latest.
        let (mut low, mut high) = (start, len);
        // A pair inside or after the gap's start: the gap must not end between its two ends.
        let mut forbidden = vec![0i64; len + 2];
        for &(first, second) in &self.pairs {
            if second < start {
                // Both ends before the gap's start: whether they stay together does not
                // depend on where it ends.
                if kept_before(first) != kept_before(second) {
                    return vec![false; len + 1 - start];
                }
            } else if first < start {
                if kept_before(first) {
                    // Its answer must stay: the gap ends at it at the latest.
                    high = high.min(second);
                } else {
                    // Its call is gone: the answer must go too.
                    low = low.max(second + 1);
                }
            } else if second > first {
                forbidden[first + 1] += 1;
                forbidden[second + 1] -= 1;
            }
        }
        let mut open = 0;
        let mut ok = Vec::with_capacity(len + 1 - start);
        for (end, step) in forbidden.iter().enumerate().take(len + 1) {
            open += step;
            if end >= start {
                ok.push(low <= end && end <= high && open == 0);
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests;
