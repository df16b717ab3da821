//! What `list` shows of a Claude Code session's head branch, from its two-pass reading
//! ([`crate::engine::view::View`]): how many user and assistant messages it has, and the text
//! of its first prompt, without making a node of every entry.
//!
//! A message's role is what `claude_jsonl::read` gives it (`chain_node`): an `assistant` entry's is
//! the assistant's; a `user` entry's is the tool's when a block of its content becomes a tool
//! result (`part_from_block`'s shape), else the user's. That is read from the entry's text
//! through `json::Raw`, which reads the same JSON as the whole reader's values; an entry
//! `Raw` does not read (bytes that are not UTF-8) is made into its node instead. Nodes are
//! made only for the user messages looked at for the first prompt.

use std::io;

use super::two_pass::Known;
use crate::engine::view::HeadBranch;
use crate::engine::{Source, pass2};
use crate::json::{Kind, Raw};
use crate::model::{Body, Role};

/// [`HeadBranch`] of the nodes of `path`; `prompt` says whether a user message's text is the
/// first prompt.
pub(crate) fn head_branch(
    known: &Known,
    source: &dyn Source,
    path: &[u32],
    prompt: impl Fn(&str) -> bool,
) -> io::Result<HeadBranch> {
    let messages: Vec<u32> = path
        .iter()
        .copied()
        .filter(|&i| known.is_message(i))
        .collect();
    let mut out = HeadBranch::default();
    pass2::each_record(source, &known.spots, &messages, |i, bytes| {
        let looking = out.first_prompt.is_none();
        let role = match role_of(bytes) {
            Some(Role::User) if looking => None,
            Some(role) => Some(role),
            None => None,
        };
        let role = role.unwrap_or_else(|| {
            // The node, to know its role or its text.
            let node = known.node(i, bytes, crate::engine::MadeFor::Anyone);
            let Body::Message(m) = &node.body else {
                unreachable!("pass one found a message")
            };
            if looking && m.role == Role::User {
                let text = m.text();
                if prompt(&text) {
                    out.first_prompt = Some(text);
                }
            }
            m.role
        });
        if matches!(role, Role::User | Role::Assistant) {
            out.messages += 1;
        }
    })?;
    Ok(out)
}

/// The role of a message entry, from its text; `None` when `Raw` does not read it.
fn role_of(bytes: &[u8]) -> Option<Role> {
    let raw = Raw::parse(std::str::from_utf8(bytes).ok()?).ok()?;
    let [kind, message] = raw.pick(["type", "message"]);
    if kind?.as_str()?.value == "assistant" {
        return Some(Role::Assistant);
    }
    let content = message?.get("content")?;
    let tool = content.items().into_iter().flatten().any(is_tool_result);
    Some(if tool { Role::Tool } else { Role::User })
}

/// Whether `part_from_block` makes a tool result of a content block.
fn is_tool_result(block: Raw) -> bool {
    if block.kind() != Kind::Object {
        return false;
    }
    let [kind, call, content, is_error] =
        block.pick(["type", "tool_use_id", "content", "is_error"]);
    kind.and_then(Raw::as_str)
        .is_some_and(|k| k.value == "tool_result")
        && call.is_some_and(|c| c.kind() == Kind::String)
        && content.is_some()
        && is_error.is_none_or(|e| e.kind() == Kind::Bool)
}
