//! Sessions from other formats: a version 1 header, then the head's branch as `message` and
//! `compaction` entries with 8-hex ids chained by `parent_id` (`""` for the first). Every tool
//! result becomes its own `tool_result` message (before the rest of a message that mixes them,
//! as Gemini's user turns do). What has no entry (notices, system messages, other events,
//! other branches, source-only fields) is counted in the loss report.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::normalise::{
    CallIds, Cwd, Facts, Head, LossWords, MissingId, SessionIds, Start, Target, Time, Unplaced,
    UsageFields,
};
use super::super::one_branch::one_branch;
use super::super::{WriteError, WriteOptions, Written, ordered, pi_style};
use super::read::{message_value, role_str};
use super::{COMPACTION_ORDER, ENTRY_ORDER, HEADER_ORDER, NAME, go_json};
use crate::diag::LossReport;
use crate::model::{Body, Content, Event, Message, Node, Role, Session};

/// What the agent's file keeps of a session from another format (one branch), and how it
/// names what it invents.
pub(crate) const TARGET: Target = Target {
    name: NAME,
    session_ids: SessionIds::any(MissingId::FromNodeCount),
    start: Start {
        from: &[Time::Started, Time::FirstNode, Time::Now],
        otherwise: Ok("1970-01-01T00:00:00Z"),
    },
    cwd: Cwd {
        directories: false,
        unknown: Some(LossWords {
            code: "no-cwd",
            message: "the session names no working directory; the header gets \"\" (give one with --cwd)",
        }),
    },
    calls: CallIds::KEPT,
    unplaced: Unplaced {
        extra_fields: "fields of the source format with no place in an agent entry",
        usage_fields: UsageFields::InExtraFields,
        part_fields: Some("fields of parts the agent's content blocks do not have"),
        signatures: None,
        title: None,
        summary: None,
        session_fields: None,
        project_hash: false,
    },
};

pub(super) fn write_foreign(
    session: &Session,
    options: &WriteOptions,
) -> Result<Written, WriteError> {
    let mut losses = LossReport::default();
    let branch = one_branch(session, options, OTHER_BRANCHES, &mut losses)?;
    let facts = Facts::of(&branch.nodes);
    let head = Head::of(&TARGET, &branch.meta, facts, options, &mut losses)?;
    let mut out = header(&head);
    let mut entries = Entries::new(&head);
    let pending: Vec<Vec<Entry>> = branch
        .nodes
        .iter()
        .map(|node| entries.of(node, &mut losses))
        .collect();
    let mut chain = Chain::default();
    for node_entries in pending {
        chain.write(node_entries, &entries.first_of, &mut out);
    }
    Ok(Written { bytes: out, losses })
}

/// What the loss report says of the nodes on other branches.
pub(super) const OTHER_BRANCHES: &str =
    "nodes on other branches (the agent keeps one chain; choose one with --leaf)";

/// The header line of a session from another format.
pub(super) fn header(head: &Head) -> Vec<u8> {
    let mut h = Map::new();
    h.insert("type".into(), "session".into());
    h.insert("id".into(), head.id.clone().into());
    h.insert("version".into(), 1.into());
    h.insert("timestamp".into(), head.start.clone().into());
    h.insert("cwd".into(), head.cwd.clone().into());
    let mut out = go_json(&Value::Object(ordered(h, &HEADER_ORDER)));
    out.push(b'\n');
    out
}

/// One entry with its id and time, and for a compaction the node it keeps from.
pub(super) type Entry = (Map<String, Value>, Option<String>);

/// The entries of each node of the branch in turn, with ids unique in the session: the same
/// nodes in the same order give the same entries and ids.
pub(super) struct Entries {
    session_id: String,
    /// The time of a node that has none.
    start: String,
    used: HashSet<String>,
    /// Each node's first entry (the last node of an id counts).
    pub(super) first_of: HashMap<String, String>,
}

impl Entries {
    pub(super) fn new(head: &Head) -> Entries {
        Entries {
            session_id: head.id.clone(),
            start: head.start.clone(),
            used: HashSet::new(),
            first_of: HashMap::new(),
        }
    }

    /// The next node's entries.
    pub(super) fn of(&mut self, node: &Node, losses: &mut LossReport) -> Vec<Entry> {
        let timestamp = node.timestamp.clone().unwrap_or_else(|| self.start.clone());
        let mut bodies: Vec<(Map<String, Value>, Option<String>)> = Vec::new();
        match &node.body {
            Body::Message(m) => {
                // The node's fields are said for every message, the message's only for one
                // that has an entry.
                TARGET.unplaced.extra(node.extra.len(), losses);
                let dropped = m
                    .usage
                    .as_ref()
                    .map_or(0, |u| usize::from(u.tool.is_some()));
                losses.add(
                    "usage-fields",
                    dropped,
                    "tool-use prompt token counts (the agent's usage has no field for them)",
                );
                message_entries(m, &timestamp, losses, &mut bodies)
            }
            Body::Event(Event::Compaction {
                summary,
                tokens_before,
                first_kept,
                ..
            }) => {
                let mut e = Map::new();
                e.insert("type".into(), "compaction".into());
                e.insert("summary".into(), summary.clone().unwrap_or_default().into());
                e.insert("tokens_before".into(), tokens_before.unwrap_or(0).into());
                bodies.push((e, first_kept.clone()));
            }
            Body::Event(e) => losses.add(
                "events",
                1,
                format!("events the agent has no entry for (first: {})", e.kind()),
            ),
        }
        let mut out = Vec::with_capacity(bodies.len());
        for (k, (mut e, first_kept)) in bodies.into_iter().enumerate() {
            let id = pi_style::entry_id(&self.session_id, &node.id, k, &mut self.used);
            if k == 0 {
                self.first_of.insert(node.id.clone(), id.clone());
            }
            e.insert("id".into(), id.into());
            e.insert("timestamp".into(), timestamp.clone().into());
            out.push((e, first_kept));
        }
        out
    }
}

/// The entries written as one chain, each the parent of the next.
#[derive(Default)]
pub(super) struct Chain {
    parent: String,
}

impl Chain {
    /// A node's `entries` into `out`; `first_of`: each node's first entry.
    pub(super) fn write(
        &mut self,
        entries: Vec<Entry>,
        first_of: &HashMap<String, String>,
        out: &mut Vec<u8>,
    ) {
        for (mut e, first_kept) in entries {
            let id = e
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            e.insert("parent_id".into(), std::mem::take(&mut self.parent).into());
            let e = if e.get("type").and_then(Value::as_str) == Some("compaction") {
                let kept = first_kept
                    .and_then(|k| first_of.get(k.as_str()).cloned())
                    .unwrap_or_else(|| id.clone());
                e.insert("first_kept_entry_id".into(), kept.into());
                ordered(e, &COMPACTION_ORDER)
            } else {
                ordered(e, &ENTRY_ORDER)
            };
            out.extend(go_json(&Value::Object(e)));
            out.push(b'\n');
            self.parent = id;
        }
    }
}

fn millis(ts: &str) -> Value {
    ts.parse::<jiff::Timestamp>()
        .map_or(Value::from(0), |t| t.as_millisecond().into())
}

/// A message as entry bodies (without id, parent and timestamp): tool results first, one
/// `tool_result` message each, then the rest.
fn message_entries(
    m: &Message,
    timestamp: &str,
    losses: &mut LossReport,
    out: &mut Vec<(Map<String, Value>, Option<String>)>,
) {
    match m.role {
        Role::Info | Role::Warning | Role::Error => {
            losses.add(
                "notices",
                1,
                "notices the tool showed its user (no entry for them)",
            );
            return;
        }
        Role::System => {
            losses.add("system-messages", 1, "system messages (no entry for them)");
            return;
        }
        _ => {}
    }
    let extras = m.extra.len() + m.usage.as_ref().map_or(0, |u| u.extra.len());
    TARGET.unplaced.extra(extras, losses);
    let entry = |msg: Message| {
        let role = role_str(msg.role);
        let mut body = message_value(&msg, false);
        body.insert("timestamp".into(), millis(timestamp));
        let mut e = Map::new();
        e.insert("type".into(), "message".into());
        e.insert("role".into(), role.into());
        e.insert("message".into(), Value::Object(body));
        (e, None)
    };
    let before = out.len();
    let mut rest = Vec::new();
    for part in &m.parts {
        TARGET.unplaced.part(part, losses);
        let mut part = part.clone();
        part.strip_extras();
        match &part.content {
            Content::ToolResult { display, .. } => {
                if display.is_some() {
                    losses.add("tool-displays", 1, "what tools showed their user");
                }
                out.push(entry(Message::new(Role::Tool, vec![part])));
            }
            Content::Code { .. } | Content::CodeResult { .. } | Content::Other { .. } => {
                losses.add(
                    "parts",
                    1,
                    "parts with no content block (code, unknown kinds)",
                );
            }
            Content::Media { data: None, .. } => {
                losses.add("media", 1, "media given by reference (no image block)");
            }
            _ => rest.push(part),
        }
    }
    if !rest.is_empty() {
        let role = if m.role == Role::Tool {
            Role::User
        } else {
            m.role
        };
        let mut msg = Message::new(role, rest);
        msg.model = m.model.clone();
        // The agent's `output` counts every generated token: thoughts go into it.
        msg.usage = m.usage.clone().map(|mut u| {
            if let Some(t) = u.thoughts.take() {
                u.output = Some(u.output.unwrap_or(0).saturating_add(t));
            }
            u
        });
        out.push(entry(msg));
    }
    if out.len() == before {
        losses.add(
            "messages",
            1,
            "messages with nothing an agent entry can hold (empty, as an aborted reply is, or only parts listed here), left out",
        );
    }
}
