//! Whole-file JSON sessions (Gemini legacy JSON, checkpoints): read with the format's own
//! reader, which names what it finds; a truncated legacy document is salvaged from its
//! complete messages; unanswered tool calls are found in the model.

use std::collections::HashSet;

use super::conversation::RECOVERED;
use super::issue::Issue;
use crate::diag::Severity;
use crate::formats::gemini_json::salvage::Salvage;
use crate::formats::{Format, Input};
use crate::model::{Content, Node, Session};

/// What a repair of a whole-file session writes instead of the file.
pub enum Rewrite {
    Salvage(Salvage),
    /// The document with its unanswered tool calls closed.
    Closed(Vec<u8>),
}

pub fn check(
    name: &str,
    bytes: &[u8],
    format: &dyn Format,
    keep_open: bool,
    issues: &mut Vec<Issue>,
) -> (u64, Option<Rewrite>) {
    let input = Input {
        name,
        path: None,
        bytes,
    };
    match format.read(&input) {
        Ok(outcome) => {
            for d in &outcome.diagnostics {
                let mut issue = Issue::new(d.code, d.severity, d.message.clone());
                issue.line = d.location.line;
                issue.offset = d.location.offset;
                issues.push(issue);
            }
            let first = issues.len();
            open_calls(&outcome.session, issues);
            let closed = (issues.len() > first && !keep_open)
                .then(|| format.close_calls_in_document(bytes, RECOVERED))
                .flatten();
            if closed.is_some() {
                for issue in &mut issues[first..] {
                    issue.fix = Some(
                        "answer the call with an error result marked as recovered, where this format keeps results"
                            .into(),
                    );
                }
            }
            let rewrite = closed.map(|(b, _)| Rewrite::Closed(b));
            (outcome.session.nodes.len() as u64, rewrite)
        }
        Err(err) => {
            let mut salvaged = format.salvage(bytes);
            // What is saved must be resumable too: close the calls it leaves open.
            let mut closed = 0;
            if let Some(s) = salvaged.as_mut()
                && !keep_open
                && let Some((doc, n)) = format.close_calls_in_document(&s.document, RECOVERED)
            {
                s.document = doc;
                closed = n;
            }
            let mut issue = match &salvaged {
                Some(s) => Issue::new(
                    "truncated-document",
                    Severity::Error,
                    format!(
                        "the document is cut off ({}); {} complete message(s) before the cut can be saved",
                        err.message, s.messages_kept
                    ),
                )
                .fix(format!(
                    "rebuild the file from the {} complete message(s){}; bytes from offset {} go to the sidecar file",
                    s.messages_kept,
                    if closed > 0 {
                        format!(" and give its {closed} unanswered tool call(s) an error result")
                    } else {
                        String::new()
                    },
                    s.cut_at
                )),
                None => Issue::new(
                    "unreadable",
                    Severity::Error,
                    format!("{}{}", err.message, err.hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()),
                ),
            };
            issue.line = err.location.line;
            issue.offset = err.location.offset;
            issues.push(issue);
            (0, salvaged.map(Rewrite::Salvage))
        }
    }
}

/// Tool calls of the session that no result answers: `(node id, call id, tool name)`. Calls
/// the session inherited from its parent ([`crate::model::Meta::inherited_calls`]) are not among
/// them: see [`inherited_calls`].
pub fn unanswered_calls(session: &Session) -> Vec<(&str, &str, &str)> {
    let inherited = session.meta.inherited_call_ids();
    open_calls_all(session)
        .into_iter()
        .filter(|(_, id, _)| !inherited.contains(id))
        .collect()
}

/// Tool calls without a result that the session inherited from its parent (a sub-agent's
/// copy of the call that spawned it): `(node id, call id, tool name)`.
pub fn inherited_calls(session: &Session) -> Vec<(&str, &str, &str)> {
    let inherited = session.meta.inherited_call_ids();
    if inherited.is_empty() {
        return Vec::new();
    }
    open_calls_all(session)
        .into_iter()
        .filter(|(_, id, _)| inherited.contains(id))
        .collect()
}

fn open_calls_all(session: &Session) -> Vec<(&str, &str, &str)> {
    let mut answered = HashSet::new();
    for node in &session.nodes {
        answered.extend(answered_by(node));
    }
    let mut open = Vec::new();
    for node in &session.nodes {
        for part in node
            .message()
            .map(|m| m.parts.as_slice())
            .unwrap_or_default()
        {
            if let Content::ToolCall {
                id: Some(id), name, ..
            } = &part.content
                && !answered.contains(id.as_str())
            {
                open.push((node.id.as_str(), id.as_str(), name.as_str()));
            }
        }
    }
    open
}

/// Tool calls in the session that no result answers.
fn open_calls(session: &Session, issues: &mut Vec<Issue>) {
    for (node, id, name) in unanswered_calls(session) {
        issues.push(Issue::new(
            "tool-call-unanswered",
            Severity::Error,
            format!(
                "tool call {id} ({name}) in message {node} has no result; model APIs reject a history with an unanswered call"
            ),
        ));
    }
}

/// The call ids a node's results answer.
fn answered_by(node: &Node) -> impl Iterator<Item = &str> {
    node.message()
        .map_or(&[][..], |m| m.parts.as_slice())
        .iter()
        .filter_map(|part| match &part.content {
            Content::ToolResult {
                call_id: Some(id), ..
            } => Some(id.as_str()),
            _ => None,
        })
}

/// The calls no result answers, counted from nodes seen one at a time (a reader's pass one)
/// as [`unanswered_calls`] counts them in a session that names no inherited calls.
#[derive(Default)]
pub(crate) struct OpenCalls {
    calls: Vec<Box<str>>,
    answered: HashSet<Box<str>>,
}

impl OpenCalls {
    pub(crate) fn note(&mut self, node: &Node) {
        self.answered.extend(answered_by(node).map(Into::into));
        for part in node.message().map_or(&[][..], |m| m.parts.as_slice()) {
            if let Content::ToolCall { id: Some(id), .. } = &part.content {
                self.calls.push(id.as_str().into());
            }
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.calls
            .iter()
            .filter(|id| !self.answered.contains(*id))
            .count()
    }
}
