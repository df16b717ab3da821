//! Closing tool calls that never got a result, in the model, before a conversion writes the
//! session: the model APIs reject a history with an unanswered call, and not every tool answers
//! one itself when it resumes (pi, Codex, Qwen Code and llxprt-code do; Claude Code and Gemini
//! CLI do not). The result is an error saying what happened, in a message of its own right
//! after the call, so each writer gives it its own format's shape.

use std::collections::HashMap;

use serde_json::Value;

use crate::check::document::{inherited_calls, unanswered_calls};
use crate::ids::derived_uuid;
use crate::model::{Body, Content, Extra, Message, Node, Part, Role, Session};

/// What the added result says (the model reads it; people see it in the session).
pub const CLOSED: &str = "[sessiontool] this tool call never got a result (the session was interrupted); result added when the session was converted, so the history is valid again";

/// Gives every unanswered tool call an error result, in a tool message right after the
/// message that made the call (one per such message, holding a result for each of its open
/// calls, as the APIs want them: all in the next turn). The children of that message hang
/// under the new one, so no branch changes; the head moves with it. Returns how many calls
/// were closed.
pub fn close_open_calls(session: &mut Session) -> usize {
    close_calls(session, true).0
}

/// What the result of a call a sub-agent inherited from its parent says, in a target that
/// needs every call answered.
pub const INHERITED: &str = "[sessiontool] this call was made by the parent session and started this sub-agent; its result is in the parent session";

/// The calls the session inherited from its parent ([`crate::model::Meta::inherited_calls`])
/// closed, saying so (not as interrupted), and with `unanswered` what [`close_open_calls`]
/// closes too. Returns how many of each were closed.
pub fn close_calls(session: &mut Session, unanswered: bool) -> (usize, usize) {
    // Owned: the session is changed below.
    let own = |v: Vec<(&str, &str, &str)>, says: &'static str| {
        v.into_iter()
            .map(|(node, call, name)| (node.to_string(), call.to_string(), name.to_string(), says))
            .collect::<Vec<_>>()
    };
    let unanswered = match unanswered {
        true => own(unanswered_calls(session), CLOSED),
        false => Vec::new(),
    };
    let inherited = own(inherited_calls(session), INHERITED);
    let counts = (unanswered.len(), inherited.len());
    let mut open = unanswered;
    open.extend(inherited);
    if open.is_empty() {
        return counts;
    }
    let mut by_node: HashMap<&str, Vec<Part>> = HashMap::new();
    for (node, call, name, says) in &open {
        by_node
            .entry(node)
            .or_default()
            .push(Part::new(Content::ToolResult {
                call_id: Some(call.clone()),
                name: Some(name.clone()),
                output: Value::String(says.to_string()),
                is_error: *says == CLOSED,
                status: Some(if *says == CLOSED { "error" } else { "success" }.into()),
                display: None,
                extra: Extra::new(),
            }));
    }
    let session_id = session.meta.id.clone().unwrap_or_default();
    let mut nodes = Vec::with_capacity(session.nodes.len() + by_node.len());
    // Children to move under the new message: old parent id -> new id.
    let mut moved: HashMap<String, String> = HashMap::new();
    for node in std::mem::take(&mut session.nodes) {
        let results = by_node.remove(node.id.as_str());
        let closing = results.map(|parts| Node {
            id: derived_uuid(&format!("{session_id}\0{}\0closed-calls", node.id)),
            parent: Some(node.id.clone()),
            timestamp: node.timestamp.clone(),
            body: Body::Message(Message::new(Role::Tool, parts)),
            extra: Extra::new(),
            origin: None,
        });
        if let Some(c) = &closing {
            moved.insert(node.id.clone(), c.id.clone());
        }
        nodes.push(node);
        nodes.extend(closing);
    }
    for node in &mut nodes {
        let Some(parent) = &node.parent else { continue };
        // The closing message itself keeps the call's message as its parent.
        if let Some(new) = moved.get(parent)
            && *new != node.id
        {
            node.parent = Some(new.clone());
        }
    }
    if let Some(head) = &session.meta.head
        && let Some(new) = moved.get(head)
    {
        session.meta.head = Some(new.clone());
    }
    session.nodes = nodes;
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(id: &str, parent: Option<&str>, role: Role, parts: Vec<Part>) -> Node {
        Node {
            id: id.into(),
            parent: parent.map(Into::into),
            timestamp: Some(format!("2026-01-01T00:00:0{}Z", id.len())),
            body: Body::Message(Message::new(role, parts)),
            extra: Extra::new(),
            origin: None,
        }
    }

    fn call(id: &str, name: &str) -> Part {
        Part::new(Content::ToolCall {
            id: Some(id.into()),
            name: name.into(),
            args: json!({}),
            extra: Extra::new(),
        })
    }

    fn result(id: &str) -> Part {
        Part::new(Content::ToolResult {
            call_id: Some(id.into()),
            name: None,
            output: json!("ok"),
            is_error: false,
            status: None,
            display: None,
            extra: Extra::new(),
        })
    }

    #[test]
    fn open_calls_get_one_error_message_after_their_call_and_the_rest_hangs_below_it() {
        let mut s = Session {
            nodes: vec![
                message("u", None, Role::User, vec![Part::text("go")]),
                message(
                    "a",
                    Some("u"),
                    Role::Assistant,
                    vec![call("c1", "Bash"), call("c2", "Read")],
                ),
                message("t", Some("a"), Role::Tool, vec![result("c1")]),
                message("b", Some("t"), Role::Assistant, vec![call("c3", "Grep")]),
            ],
            ..Session::default()
        };
        s.meta.id = Some("s".into());
        s.meta.head = Some("b".into());
        assert_eq!(close_open_calls(&mut s), 2);
        let ids: Vec<&str> = s.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids.len(), 6);
        assert_eq!(&ids[..2], ["u", "a"]);
        // c2 is closed right after `a`; `t` now hangs under the closing message.
        let after_a = &s.nodes[2];
        assert_eq!(after_a.parent.as_deref(), Some("a"));
        assert_eq!(s.nodes[3].id, "t");
        assert_eq!(s.nodes[3].parent.as_deref(), Some(after_a.id.as_str()));
        let Body::Message(m) = &after_a.body else {
            panic!()
        };
        assert_eq!(m.role, Role::Tool);
        assert!(
            matches!(&m.parts[..], [Part { content: Content::ToolResult { call_id: Some(c), name: Some(n), is_error: true, output, .. }, .. }]
            if c == "c2" && n == "Read" && output == &json!(CLOSED))
        );
        // c3 (the head) is closed after `b`, and the head moves to the closing message.
        assert_eq!(s.nodes[5].parent.as_deref(), Some("b"));
        assert_eq!(s.meta.head.as_deref(), Some(s.nodes[5].id.as_str()));
        assert!(unanswered_calls(&s).is_empty());
        assert_eq!(close_open_calls(&mut s), 0, "idempotent");
        assert_eq!(s.nodes.len(), 6);
    }
}
