//! Sessions from other formats: what of their messages and events a Qwen record can hold,
//! and what is reported as lost.

use serde_json::{Map, Value, json};

use super::super::gemini_content::parts_to_json;
use super::super::normalise::{
    CallIds, Cwd, LossWords, MissingId, SessionIds, Start, Target, Time, Unplaced, UsageFields,
};
use super::NAME;
use crate::diag::LossReport;
use crate::ids::is_uuid;
use crate::model::{Content, Event, Message, Node, Part, Role};

/// What a Qwen record keeps of a session from another format, and how it names what it
/// invents.
pub(crate) const TARGET: Target = Target {
    name: NAME,
    session_ids: SessionIds {
        takes: Some(is_qwen_session_id),
        namespace: "session-id/",
        why: "Qwen Code lists and resumes sessions only by UUIDs of versions 1 to 5",
        missing: MissingId::FromFirstNode,
    },
    // Per record, after its node's time and the last record's (`RecordWriter::time_of`).
    start: Start {
        from: &[Time::Now, Time::Started],
        otherwise: Err(LossWords {
            code: "timestamps",
            message: "records without any time to give them (pass --now)",
        }),
    },
    // A record without a cwd is said per record (`RecordWriter::finish`).
    cwd: Cwd {
        directories: true,
        unknown: None,
    },
    calls: CallIds::KEPT,
    unplaced: Unplaced {
        extra_fields: "fields of the source format with no place in a Qwen record",
        usage_fields: UsageFields::InExtraFields,
        // Counted by what API content keeps (`api_parts`).
        part_fields: Some(
            "fields the source format keeps on thoughts, tool calls and results (times, display names, descriptions) that are not part of the API content Qwen Code sends",
        ),
        signatures: None,
        title: None,
        summary: Some("the session summary (Qwen Code records have no field for it)"),
        session_fields: Some("session-level fields of the source format"),
        project_hash: false,
    },
};

/// Whether Qwen Code takes `id` as a session id: `qwen --resume ID` accepts only UUIDs of
/// versions 1 to 5 (`INTERNAL_SESSION_ID_REGEX` in its `session-id.ts`; anything else is
/// looked up as a title), and it lists only files named `<id>.jsonl` whose first record has
/// that `sessionId`.
fn is_qwen_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    is_uuid(id)
        && (b'1'..=b'5').contains(&b[14])
        && matches!(b[19], b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
}

/// What the Gemini CLI family puts after a compression summary (the model's acknowledgement).
const COMPRESSION_ACK: &str = "Got it. Thanks for the additional context!";

/// Fields a Gemini `functionResponse` may carry besides id, name and response.
const RESPONSE_FIELDS: [&str; 3] = ["parts", "willContinue", "scheduling"];

/// A message from another format reduced to what a Qwen record holds: its parts as API
/// Content (Qwen Code sends `message` to the model as is), with the rest reported.
pub(super) fn api_parts(node: &Node, m: &Message, losses: &mut LossReport) -> Vec<Part> {
    TARGET.unplaced.message(node, m, losses);
    let mut dropped = 0;
    let mut encrypted = 0;
    let mut parts = m.parts.clone();
    for p in &mut parts {
        match &mut p.content {
            Content::ToolCall { extra, .. } => {
                dropped += extra.len();
                extra.clear();
            }
            Content::ToolResult { extra, .. } => {
                let before = extra.len();
                extra.retain(|k, _| RESPONSE_FIELDS.contains(&k.as_str()));
                dropped += before - extra.len();
            }
            Content::Thought {
                extra,
                encrypted: e,
                ..
            } => {
                dropped += extra.len();
                encrypted += usize::from(e.is_some());
            }
            _ => {}
        }
    }
    if let Some(message) = TARGET.unplaced.part_fields {
        losses.add("part-fields", dropped, message);
    }
    losses.add(
        "encrypted-thoughts",
        encrypted,
        "encrypted reasoning (Qwen thought parts hold text only)",
    );
    parts
}

/// A tool message's parts, one group per call: each result starts a group, other parts join
/// the one before (leading ones the first).
pub(super) fn result_groups(parts: &[Part]) -> Vec<&[Part]> {
    let mut starts = vec![0];
    let mut seen = false;
    for (i, p) in parts.iter().enumerate() {
        if matches!(p.content, Content::ToolResult { .. }) {
            if seen {
                starts.push(i);
            }
            seen = true;
        }
    }
    let mut groups = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(parts.len());
        groups.push(&parts[s..end]);
    }
    groups
}

/// An event from another format as a system record's subtype and payload. `kept` gives the
/// history a compaction keeps from the node it names as the first kept one
/// ([`crate::tree::kept::kept_since`], each node as [`history_entry`]); `None` when that node
/// is not on the compaction's branch.
pub(super) fn foreign_event(
    kept: impl FnOnce(&str) -> Option<Vec<Value>>,
    event: &Event,
    losses: &mut LossReport,
) -> Option<(&'static str, Value)> {
    let data = match event {
        Event::Compaction { data, .. } | Event::Rewind { data, .. } | Event::Title { data, .. } => {
            data
        }
        _ => return None,
    };
    let has_data = match data {
        Value::Null => false,
        Value::Object(o) => !o.is_empty(),
        _ => true,
    };
    if has_data {
        losses.add(
            "event-data",
            1,
            "details the source format keeps with compactions, rewinds and titles",
        );
    }
    match event {
        Event::Compaction {
            summary,
            tokens_before,
            first_kept,
            ..
        } => Some((
            "chat_compression",
            compaction_payload(
                kept,
                summary.as_deref(),
                *tokens_before,
                first_kept.as_deref(),
                losses,
            ),
        )),
        Event::Title { title: Some(t), .. } => Some((
            "custom_title",
            json!({"customTitle": t, "titleSource": "manual"}),
        )),
        Event::Title { title: None, .. } => {
            losses.add("events", 1, "title events without a title");
            None
        }
        Event::Rewind { target, count, .. } => {
            if target.is_some() {
                losses.add(
                    "rewind-target",
                    1,
                    "rewind targets (Qwen Code records how many items were dropped, not where to)",
                );
            }
            let mut p = Map::new();
            if let Some(c) = count {
                p.insert("truncatedCount".into(), (*c).into());
            }
            Some(("rewind", Value::Object(p)))
        }
        _ => None,
    }
}

/// A `chat_compression` payload as Qwen Code writes it: the summary as a user turn, the
/// model's acknowledgement, then the kept messages (from `first_kept` to the compaction:
/// `kept`, see [`foreign_event`]).
fn compaction_payload(
    kept: impl FnOnce(&str) -> Option<Vec<Value>>,
    summary: Option<&str>,
    tokens_before: Option<u64>,
    first_kept: Option<&str>,
    losses: &mut LossReport,
) -> Value {
    let mut info = Map::new();
    if let Some(t) = tokens_before {
        info.insert("originalTokenCount".into(), t.into());
    }
    info.insert("compressionStatus".into(), 1.into());
    let mut payload = Map::new();
    payload.insert("info".into(), Value::Object(info));
    let Some(summary) = summary else {
        losses.add(
            "compaction-summary",
            1,
            "compactions without a summary (Qwen Code will send the whole history)",
        );
        return Value::Object(payload);
    };
    let mut history = vec![
        json!({"role": "user", "parts": [{"text": summary}]}),
        json!({"role": "model", "parts": [{"text": COMPRESSION_ACK}]}),
    ];
    if let Some(first_kept) = first_kept {
        match kept(first_kept) {
            Some(entries) => history.extend(entries),
            None => losses.add(
                "compaction-kept",
                1,
                "compactions whose first kept message is not on their branch (kept messages dropped from the compressed history)",
            ),
        }
    }
    payload.insert("compressedHistory".into(), Value::Array(history));
    payload.insert("summary".into(), summary.into());
    Value::Object(payload)
}

/// A kept node as an entry of a compressed history (its message's role as the API has it, and
/// its parts); `None` for what the history leaves out (events, system messages, notices).
pub(super) fn history_entry(node: &Node) -> Option<Value> {
    let m = node.message()?;
    let role = match m.role {
        Role::Assistant => "model",
        Role::User | Role::Tool => "user",
        _ => return None,
    };
    Some(json!({"role": role, "parts": parts_to_json(&m.parts)}))
}
