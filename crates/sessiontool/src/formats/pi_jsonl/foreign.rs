//! Sessions from other formats as version 3 pi files: a header, then every node of every
//! branch in file order as entries with 8-hex ids and a `parentId` tree.
//!
//! Messages: user text and images become a `user` message; assistant text, thoughts and tool
//! calls an `assistant` message that always has `api`, `provider`, `model`, `usage` (zeros where
//! unknown: pi's CLI crashes without it) and `stopReason`; every tool result its own
//! `toolResult` message (results come first when a message mixes them with text, as Gemini's
//! user turns do). Compactions, model switches and titles become `compaction`, `model_change`
//! and `session_info` entries. Notices, system messages, rewinds and other events have no pi
//! entry: they are reported, and their children hang under their parent.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::normalise::{
    CallIds, Calls, Cwd, Facts, Head, LossWords, MissingId, Pairing, SessionIds, Start, Target,
    Time, Unplaced, UsageFields,
};
use super::super::{WriteError, WriteOptions, Written, ordered, pi_style};
use super::foreign_message::{api_of, message_entries};
use super::js;
use super::{CURRENT_VERSION, ENTRY_ORDER, HEADER_ORDER, NAME};
use crate::diag::LossReport;
use crate::model::{Body, Event, Node, Session};

/// What a pi file keeps of a session from another format (every branch), and how it names
/// what it invents.
pub(crate) const TARGET: Target = Target {
    name: NAME,
    session_ids: SessionIds::any(MissingId::FromNodeCount),
    start: Start {
        from: &[Time::Started, Time::FirstNode, Time::Now],
        otherwise: Ok("1970-01-01T00:00:00.000Z"),
    },
    cwd: Cwd {
        directories: false,
        unknown: Some(LossWords {
            code: "no-cwd",
            message: "the session names no working directory; pi's header gets \"\" (give one with --cwd)",
        }),
    },
    calls: CallIds {
        prefix: "call_",
        seed: "{node}/{index}",
        digits: 16,
        allowed: None,
        pairing: Pairing::Strict,
        open: None,
    },
    unplaced: Unplaced {
        extra_fields: "fields of the source format with no place in a pi entry",
        usage_fields: UsageFields::InExtraFields,
        part_fields: Some("fields of parts pi's content blocks do not have"),
        signatures: None,
        title: None,
        summary: None,
        session_fields: None,
        project_hash: false,
    },
};

/// One entry to write: its type-specific fields, and for a compaction the node it keeps from.
pub(super) struct Planned {
    id: String,
    fields: Map<String, Value>,
    kind: &'static str,
    first_kept: Option<String>,
}

pub(super) fn write_foreign(
    session: &Session,
    options: &WriteOptions,
) -> Result<Written, WriteError> {
    let mut losses = LossReport::default();
    let facts = Facts::of(&session.nodes);
    let head = Head::of(&TARGET, &session.meta, facts, options, &mut losses)?;
    let mut out = header(&head);
    // Pass 1: each node's entries and ids, in file order.
    let mut entries = Entries::new(&head.id);
    let mut links = Links::default();
    let mut plan: Vec<Vec<Planned>> = Vec::with_capacity(session.nodes.len());
    for node in &session.nodes {
        let planned = entries.of(node, &mut losses);
        links.add(node, &planned);
        plan.push(planned);
    }
    // Pass 2: link and write.
    for (node, planned) in session.nodes.iter().zip(plan) {
        links.write(node, planned, &head.start, &mut out);
    }
    Ok(Written { bytes: out, losses })
}

/// The header line of a session from another format.
pub(super) fn header(head: &Head) -> Vec<u8> {
    let mut header = Map::new();
    header.insert("type".into(), "session".into());
    header.insert("version".into(), CURRENT_VERSION.into());
    header.insert("id".into(), head.id.clone().into());
    header.insert("timestamp".into(), head.start.clone().into());
    header.insert("cwd".into(), head.cwd.clone().into());
    let mut out = js::to_vec(&Value::Object(ordered(header, &HEADER_ORDER)));
    out.push(b'\n');
    out
}

/// The entries of each node in turn, with ids unique in the session: the same nodes in the
/// same order give the same entries and ids.
pub(super) struct Entries {
    session_id: String,
    used: HashSet<String>,
    calls: Calls,
}

impl Entries {
    pub(super) fn new(session_id: &str) -> Entries {
        Entries {
            session_id: session_id.to_string(),
            used: HashSet::new(),
            calls: Calls::new(&TARGET.calls),
        }
    }

    /// The next node's entries.
    pub(super) fn of(&mut self, node: &Node, losses: &mut LossReport) -> Vec<Planned> {
        node_entries(
            node,
            &self.session_id,
            &mut self.used,
            &mut self.calls,
            losses,
        )
    }
}

/// What links the entries: each node's first and last entry and its parent, by node id (the
/// last node of an id counts, as the whole session's maps keep it).
#[derive(Default)]
pub(super) struct Links {
    first_of: HashMap<String, String>,
    last_of: HashMap<String, String>,
    parents: HashMap<String, Option<String>>,
    resolved: HashMap<String, Option<String>>,
}

impl Links {
    /// `node`, whose entries are `planned`.
    pub(super) fn add(&mut self, node: &Node, planned: &[Planned]) {
        if let (Some(f), Some(l)) = (planned.first(), planned.last()) {
            self.first_of.insert(node.id.clone(), f.id.clone());
            self.last_of.insert(node.id.clone(), l.id.clone());
        }
        self.parents.insert(node.id.clone(), node.parent.clone());
    }

    /// `node`'s entries, linked, into `out` (`start`: the time of a node that has none).
    pub(super) fn write(
        &mut self,
        node: &Node,
        planned: Vec<Planned>,
        start: &str,
        out: &mut Vec<u8>,
    ) {
        let timestamp = node.timestamp.as_deref().unwrap_or(start);
        let mut parent = self.resolve(node.parent.as_deref());
        for p in planned {
            let mut e = Map::new();
            e.insert("type".into(), p.kind.into());
            e.insert("id".into(), p.id.clone().into());
            e.insert(
                "parentId".into(),
                parent.clone().map_or(Value::Null, Value::from),
            );
            e.insert("timestamp".into(), timestamp.into());
            e.extend(p.fields);
            if p.kind == "compaction" {
                let kept = p.first_kept.and_then(|k| self.first_of.get(&k).cloned());
                e.insert(
                    "firstKeptEntryId".into(),
                    kept.unwrap_or_else(|| p.id.clone()).into(),
                );
                e = ordered(e, &COMPACTION_ORDER);
            }
            let e = ordered(e, &ENTRY_ORDER);
            out.extend(js::to_vec(&Value::Object(e)));
            out.push(b'\n');
            parent = Some(p.id);
        }
    }

    /// The entry a node's children hang under: its last entry, or its parent's when it has
    /// none. What a walk finds is remembered for every node it went through, so a long run of
    /// nodes without entries is walked once, not once per node.
    fn resolve(&mut self, start: Option<&str>) -> Option<String> {
        let mut id = start;
        let mut walked = Vec::new();
        let mut found = None;
        for _ in 0..=self.parents.len() {
            let Some(cur) = id else {
                break;
            };
            if let Some(known) = self.resolved.get(cur) {
                found = known.clone();
                break;
            }
            if let Some(l) = self.last_of.get(cur) {
                found = Some(l.clone());
                break;
            }
            walked.push(cur.to_string());
            id = self.parents.get(cur).and_then(|p| p.as_deref());
        }
        for w in walked {
            self.resolved.insert(w, found.clone());
        }
        found
    }
}

const COMPACTION_ORDER: [&str; 7] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "summary",
    "firstKeptEntryId",
    "tokensBefore",
];

fn node_entries(
    node: &Node,
    session_id: &str,
    used: &mut HashSet<String>,
    calls: &mut Calls,
    losses: &mut LossReport,
) -> Vec<Planned> {
    let mut out: Vec<(&'static str, Map<String, Value>, Option<String>)> = Vec::new();
    match &node.body {
        Body::Message(m) => message_entries(node, m, calls, losses, &mut out),
        Body::Event(e) => event_entry(e, losses, &mut out),
    }
    out.into_iter()
        .enumerate()
        .map(|(k, (kind, fields, first_kept))| Planned {
            id: pi_style::entry_id(session_id, &node.id, k, used),
            fields,
            kind,
            first_kept,
        })
        .collect()
}

pub(super) type Out = Vec<(&'static str, Map<String, Value>, Option<String>)>;

fn event_entry(e: &Event, losses: &mut LossReport, out: &mut Out) {
    let mut f = Map::new();
    match e {
        Event::Compaction {
            summary,
            tokens_before,
            first_kept,
            ..
        } => {
            f.insert("summary".into(), summary.clone().unwrap_or_default().into());
            f.insert("tokensBefore".into(), tokens_before.unwrap_or(0).into());
            out.push(("compaction", f, first_kept.clone()));
        }
        Event::ModelChange {
            provider, model, ..
        } => {
            let model = model.clone().unwrap_or_default();
            let provider = provider.clone().unwrap_or_else(|| api_of(&model).0.into());
            f.insert("provider".into(), provider.into());
            f.insert("modelId".into(), model.into());
            out.push(("model_change", f, None));
        }
        Event::Title { title: Some(t), .. } => {
            f.insert("name".into(), t.clone().into());
            out.push(("session_info", f, None));
        }
        other => losses.add(
            "events",
            1,
            format!("events pi has no entry for (first: {})", other.kind()),
        ),
    }
}
