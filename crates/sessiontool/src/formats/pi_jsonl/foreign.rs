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

use super::super::{WriteError, WriteOptions, Written, ordered, pi_style};
use super::foreign_message::{api_of, message_entries};
use super::js;
use super::{CURRENT_VERSION, ENTRY_ORDER, HEADER_ORDER, NAME};
use crate::diag::LossReport;
use crate::model::{Body, Event, Node, Session};

const EPOCH: &str = "1970-01-01T00:00:00.000Z";

/// One entry to write: its type-specific fields, and for a compaction the node it keeps from.
struct Planned {
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
    let pi_style::Foreign {
        id: session_id,
        start,
        cwd,
    } = pi_style::foreign(session, options, NAME, EPOCH, "pi's header", &mut losses);
    let mut header = Map::new();
    header.insert("type".into(), "session".into());
    header.insert("version".into(), CURRENT_VERSION.into());
    header.insert("id".into(), session_id.clone().into());
    header.insert("timestamp".into(), start.clone().into());
    header.insert("cwd".into(), cwd.into());
    let mut out = js::to_vec(&Value::Object(ordered(header, &HEADER_ORDER)));
    out.push(b'\n');

    // Pass 1: each node's entries and ids, in file order.
    let mut used: HashSet<String> = HashSet::new();
    let mut plan: Vec<(usize, Vec<Planned>)> = Vec::with_capacity(session.nodes.len());
    let mut first_of: HashMap<&str, String> = HashMap::new();
    let mut last_of: HashMap<&str, String> = HashMap::new();
    let mut calls = Calls::default();
    for (i, node) in session.nodes.iter().enumerate() {
        let planned = node_entries(node, &session_id, &mut used, &mut calls, &mut losses);
        if let (Some(f), Some(l)) = (planned.first(), planned.last()) {
            first_of.insert(&node.id, f.id.clone());
            last_of.insert(&node.id, l.id.clone());
        }
        plan.push((i, planned));
    }
    let parents: HashMap<&str, Option<&str>> = session
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.parent.as_deref()))
        .collect();
    // Pass 2: link and write.
    let mut resolved = HashMap::new();
    for (i, planned) in plan {
        let node = &session.nodes[i];
        let timestamp = node.timestamp.clone().unwrap_or_else(|| start.clone());
        let mut parent = resolve(node.parent.as_deref(), &parents, &last_of, &mut resolved);
        for p in planned {
            let mut e = Map::new();
            e.insert("type".into(), p.kind.into());
            e.insert("id".into(), p.id.clone().into());
            e.insert(
                "parentId".into(),
                parent.clone().map_or(Value::Null, Value::from),
            );
            e.insert("timestamp".into(), timestamp.clone().into());
            e.extend(p.fields);
            if p.kind == "compaction" {
                let kept = p.first_kept.and_then(|k| first_of.get(k.as_str()).cloned());
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
    Ok(Written { bytes: out, losses })
}

/// The entry a node's children hang under: its last entry, or its parent's when it has none.
/// What a walk finds is remembered for every node it went through (`resolved`), so a long run
/// of nodes without entries is walked once, not once per node.
fn resolve<'a>(
    mut id: Option<&'a str>,
    parents: &HashMap<&'a str, Option<&'a str>>,
    last_of: &HashMap<&'a str, String>,
    resolved: &mut HashMap<&'a str, Option<String>>,
) -> Option<String> {
    let mut walked = Vec::new();
    let mut found = None;
    for _ in 0..=parents.len() {
        let Some(cur) = id else {
            break;
        };
        if let Some(known) = resolved.get(cur) {
            found = known.clone();
            break;
        }
        if let Some(l) = last_of.get(cur) {
            found = Some(l.clone());
            break;
        }
        walked.push(cur);
        id = parents.get(cur).copied().flatten();
    }
    for w in walked {
        resolved.insert(w, found.clone());
    }
    found
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

/// Tool calls seen so far (ids made up for calls without one), to name results that lack an id
/// or a tool name.
#[derive(Default)]
pub(super) struct Calls {
    pub(super) open: Vec<(String, String)>,
    pub(super) names: HashMap<String, String>,
}

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
