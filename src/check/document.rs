//! Whole-file JSON sessions (Gemini legacy JSON, checkpoints): read with the format's own
//! reader, which names what it finds; a truncated legacy document is salvaged from its
//! complete messages; unanswered tool calls are found in the model.

use std::collections::HashSet;

use super::issue::Issue;
use crate::diag::Severity;
use crate::formats::gemini_json::salvage::{Salvage, salvage};
use crate::formats::{Format, Input};
use crate::model::{Content, Session};

pub fn check(
    name: &str,
    bytes: &[u8],
    format: &dyn Format,
    issues: &mut Vec<Issue>,
) -> (u64, Option<Salvage>) {
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
            open_calls(&outcome.session, issues);
            (outcome.session.nodes.len() as u64, None)
        }
        Err(err) => {
            let salvaged = (format.name() == crate::formats::gemini_json::NAME)
                .then(|| salvage(bytes))
                .flatten();
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
                    "rebuild the file from the {} complete message(s); bytes from offset {} go to the sidecar file",
                    s.messages_kept, s.cut_at
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
            (0, salvaged)
        }
    }
}

/// Tool calls in the session that no result answers.
fn open_calls(session: &Session, issues: &mut Vec<Issue>) {
    let mut answered = HashSet::new();
    for node in &session.nodes {
        for part in node
            .message()
            .map(|m| m.parts.as_slice())
            .unwrap_or_default()
        {
            if let Content::ToolResult {
                call_id: Some(id), ..
            } = &part.content
            {
                answered.insert(id.as_str());
            }
        }
    }
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
                issues.push(Issue::new(
                    "tool-call-unanswered",
                    Severity::Error,
                    format!(
                        "tool call {id} ({name}) in message {} has no result; model APIs reject a history with an unanswered call",
                        node.id
                    ),
                ));
            }
        }
    }
}
