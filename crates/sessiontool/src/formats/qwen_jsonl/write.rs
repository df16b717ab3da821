//! Nodes to records. A session read from this format is written back exactly (each node's
//! record again, or rebuilt as `origin` says it was); a session from another format is mapped
//! onto the tool's own record shapes.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::super::gemini_content::{is_gemini_family, parts_to_json, to_api_parts};
use super::super::normalise::{Facts, head, node_uuid};
use super::super::{WriteError, WriteOptions, Written, ordered};
use super::foreign::{TARGET, api_parts, foreign_event, history_entry, result_groups};
use super::origin::{AsRead, Kept, Layout};
use super::read::{read_record, result_target};
use super::{
    ASSISTANT_ORDER, BASE_ORDER, Common, Defaults, NAME, RECORD, RESULT_ORDER, SYSTEM_ORDER,
    TOKENS_NAMES, TOOL_ORDER, USAGE_NAMES, USAGE_ORDER, USER_ORDER, usage_fields,
};
use crate::diag::LossReport;
use crate::ids::derived_uuid;
use crate::model::{Body, Content, Event, Message, Meta, Node, Part, Role, Session, Usage};
use crate::tree::Tree;
use crate::tree::kept::kept_since;

/// The fields every record starts with.
struct Base<'a> {
    uuid: &'a str,
    parent: Option<&'a str>,
    timestamp: &'a str,
    defaults: &'a Defaults,
}

fn base_map(kind: &str, b: &Base) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("uuid".into(), b.uuid.into());
    r.insert(
        "parentUuid".into(),
        b.parent.map_or(Value::Null, |p| p.into()),
    );
    r.insert("sessionId".into(), b.defaults.session_id.clone().into());
    r.insert("timestamp".into(), b.timestamp.into());
    r.insert("type".into(), kind.into());
    r.insert("cwd".into(), b.defaults.cwd.clone().into());
    r.insert("version".into(), b.defaults.version.clone().into());
    if let Some(branch) = &b.defaults.git_branch {
        r.insert("gitBranch".into(), branch.clone().into());
    }
    r
}

fn record_order(kind: &str) -> Vec<&'static str> {
    let rest: &[&'static str] = match kind {
        "user" => &USER_ORDER,
        "assistant" => &ASSISTANT_ORDER,
        "tool_result" => &TOOL_ORDER,
        _ => &SYSTEM_ORDER,
    };
    BASE_ORDER.iter().chain(rest).copied().collect()
}

/// The record a node read from this format becomes, before its keys are put in the order read
/// (`tokens`: its usage spelt so); `None` for a record kept whole.
pub(super) fn native_record(
    node: &Node,
    defaults: &Defaults,
    tokens: bool,
) -> Option<Map<String, Value>> {
    let base = Base {
        uuid: &node.id,
        parent: node.parent.as_deref(),
        timestamp: node.timestamp.as_deref().unwrap_or(""),
        defaults,
    };
    match &node.body {
        Body::Message(m) => Some(message_record(
            node,
            m,
            m.role,
            &m.parts,
            &base,
            Some(tokens),
        )),
        Body::Event(e) => {
            let (subtype, payload) = native_event(e)?;
            Some(system_record(node, subtype, payload, &base, true))
        }
    }
}

/// The subtype and payload of an event read from this format.
fn native_event(e: &Event) -> Option<(&str, Value)> {
    Some(match e {
        Event::Custom { kind, .. } if kind == RECORD => return None,
        Event::Custom { kind, data } => (kind.as_str(), data.clone()),
        Event::Compaction { data, .. } => ("chat_compression", data.clone()),
        Event::Rewind { data, .. } => ("rewind", data.clone()),
        Event::Title { title, data } => {
            let mut data = data.clone();
            if let (Some(t), Value::Object(d)) = (title, &mut data) {
                d.insert("customTitle".into(), t.clone().into());
            }
            ("custom_title", data)
        }
        Event::ModelChange { .. } => return None,
    })
}

/// A message as one record. `native` (with whether its usage was spelt `tokens`): the node
/// was read from this format, so its unknown fields are written back; otherwise they have no
/// place here (the caller reports them).
fn message_record(
    node: &Node,
    m: &Message,
    role: Role,
    parts: &[Part],
    base: &Base,
    native: Option<bool>,
) -> Map<String, Value> {
    let tokens = native == Some(true);
    let native = native.is_some();
    let kind = match role {
        Role::Assistant => "assistant",
        Role::Tool => "tool_result",
        _ => "user",
    };
    let mut r = base_map(kind, base);
    if let Some(model) = &m.model {
        r.insert("model".into(), model.clone().into());
    }
    let mut msg = Map::new();
    let api_role = if role == Role::Assistant {
        "model"
    } else {
        "user"
    };
    msg.insert("role".into(), api_role.into());
    msg.insert("parts".into(), parts_to_json(parts));
    if native {
        for (k, v) in &m.extra {
            msg.insert(k.clone(), v.clone());
        }
    }
    r.insert("message".into(), Value::Object(msg));
    if let Some(u) = &m.usage {
        let key = if tokens { "tokens" } else { "usageMetadata" };
        r.insert(key.into(), usage_value(u, tokens, native));
    }
    let remainder = if native {
        node.extra.get("toolCallResult").and_then(Value::as_object)
    } else {
        None
    };
    let result = if native || role == Role::Tool {
        tool_call_result(parts, remainder, native)
    } else {
        None
    };
    if let Some(t) = result {
        r.insert("toolCallResult".into(), Value::Object(t));
    }
    if native {
        for (k, v) in &node.extra {
            if k == "toolCallResult" && remainder.is_some() {
                continue;
            }
            r.insert(k.clone(), v.clone());
        }
    }
    ordered(r, &record_order(kind))
}

fn usage_value(u: &Usage, tokens: bool, with_extra: bool) -> Value {
    let (names, order) = if tokens {
        (&TOKENS_NAMES, &TOKENS_NAMES)
    } else {
        (&USAGE_NAMES, &USAGE_ORDER)
    };
    let mut m = Map::new();
    for (v, name) in usage_fields(u).iter().zip(names) {
        if let Some(v) = v {
            m.insert((*name).into(), (*v).into());
        }
    }
    if with_extra {
        for (k, v) in &u.extra {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(ordered(m, order))
}

/// `toolCallResult`: what the reader left of it (`remainder`) with the status and display put
/// back from the result part it describes; for other formats, built from that part.
fn tool_call_result(
    parts: &[Part],
    remainder: Option<&Map<String, Value>>,
    native: bool,
) -> Option<Map<String, Value>> {
    let call_id = remainder
        .and_then(|r| r.get("callId"))
        .and_then(Value::as_str);
    let target = result_target(parts, call_id).and_then(|i| match &parts[i].content {
        Content::ToolResult {
            call_id,
            status,
            display,
            is_error,
            ..
        } => Some((call_id, status, display, *is_error)),
        _ => None,
    });
    let mut out = match (remainder, target) {
        (Some(r), _) => r.clone(),
        (None, None) => return None,
        (None, Some((_, None, None, _))) if native => return None,
        (None, Some((id, ..))) => {
            let mut m = Map::new();
            if let Some(id) = id {
                m.insert("callId".into(), id.clone().into());
            }
            m
        }
    };
    if let Some((_, status, display, is_error)) = target {
        let status = status
            .clone()
            .or_else(|| (!native).then(|| if is_error { "error" } else { "success" }.to_string()));
        if let Some(s) = status {
            out.insert("status".into(), s.into());
        }
        if let Some(d) = display {
            out.insert("resultDisplay".into(), d.clone());
        }
    }
    Some(ordered(out, &RESULT_ORDER))
}

fn system_record(
    node: &Node,
    subtype: &str,
    payload: Value,
    base: &Base,
    native: bool,
) -> Map<String, Value> {
    let mut r = base_map("system", base);
    r.insert("subtype".into(), subtype.into());
    r.insert("systemPayload".into(), payload);
    if native {
        for (k, v) in &node.extra {
            r.insert(k.clone(), v.clone());
        }
    }
    ordered(r, &record_order("system"))
}

/// Puts keys in the order the record had where it differs (`keys`: see [`Kept::keys`]). Keys
/// the writer made up that the record did not have (a default `cwd`, an empty `message`) are
/// left out.
pub(super) fn apply_keys(mut map: Map<String, Value>, keys: &Layout) -> Map<String, Value> {
    if *keys == Layout::default() {
        return map;
    }
    let list = |name: &str| -> Option<Vec<&str>> {
        let keys = match name {
            "record" if keys.record.is_empty() => return None,
            "record" => &keys.record,
            "message" => keys.message.as_ref()?,
            "usage" => keys.usage.as_ref()?,
            _ => keys.result.as_ref()?,
        };
        Some(keys.iter().map(String::as_str).collect())
    };
    if let (Some(keys), Some(Value::Object(m))) = (list("message"), map.get_mut("message")) {
        let empty_parts = m
            .get("parts")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty);
        *m = reorder(std::mem::take(m), &keys, |k| {
            k == "role" || (k == "parts" && empty_parts)
        });
    }
    let usage_key = match map.get("usageMetadata") {
        Some(Value::Object(_)) => "usageMetadata",
        _ => "tokens",
    };
    for (name, key) in [("usage", usage_key), ("toolCallResult", "toolCallResult")] {
        if let (Some(keys), Some(Value::Object(m))) = (list(name), map.get_mut(key)) {
            *m = reorder(std::mem::take(m), &keys, |_| false);
        }
    }
    if let Some(keys) = list("record") {
        let empty_message = map.get("message").is_some_and(|m| {
            m.as_object().is_some_and(|o| {
                o.len() <= 2
                    && o.get("parts")
                        .and_then(Value::as_array)
                        .is_none_or(Vec::is_empty)
                    && o.keys().all(|k| k == "role" || k == "parts")
            })
        });
        let null_payload = map.get("systemPayload") == Some(&Value::Null);
        map = reorder(map, &keys, |k| {
            matches!(
                k,
                "parentUuid" | "sessionId" | "timestamp" | "cwd" | "version" | "gitBranch"
            ) || (k == "message" && empty_message)
                || (k == "systemPayload" && null_payload)
        });
    }
    map
}

/// `keys` first, in that order; then the other keys, except those `made_up`.
fn reorder(
    mut map: Map<String, Value>,
    keys: &[&str],
    made_up: impl Fn(&str) -> bool,
) -> Map<String, Value> {
    let mut out = Map::with_capacity(map.len());
    for k in keys {
        if let Some(v) = map.shift_remove(*k) {
            out.insert((*k).to_string(), v);
        }
    }
    for (k, v) in map {
        if !made_up(&k) {
            out.insert(k, v);
        }
    }
    out
}

/// The original text of a record read from this format (`raw`: see [`Kept::raw`]), when the
/// node still reads as it did.
fn raw_record<'a>(
    node: &Node,
    raw: Option<&'a str>,
    common: &Common,
    parent: Option<&str>,
) -> Option<&'a str> {
    let raw = raw?;
    // Read as the reader read it (as `JSON.parse` does): serde_json refuses a lone surrogate.
    let read_again = || {
        crate::json::value::to_value(raw.as_bytes())
            .ok()
            .map(|(v, _)| v)
    };
    if let Body::Event(Event::Custom { kind, data }) = &node.body
        && kind == RECORD
    {
        let same = data.as_str() == Some(raw) || read_again().is_some_and(|v| v == *data);
        return same.then_some(raw);
    }
    if parent != node.parent.as_deref() {
        return None;
    }
    // One record, or the records merged into the node (a line each).
    let map = super::origin::record_of(raw.as_bytes(), &node.id)?;
    if map.get("uuid").and_then(Value::as_str) != Some(node.id.as_str()) {
        return None;
    }
    let (again, _) = read_record(map, node.id.clone(), common);
    let same = again.parent == node.parent
        && again.timestamp == node.timestamp
        && again.body == node.body
        && again.extra == node.extra;
    same.then_some(raw)
}

/// Node ids as record uuids, and where the children of nodes without a record attach.
struct Ids {
    native: bool,
    session_id: String,
    /// Node id -> the uuid its children name as parent (skipped nodes: their own parent;
    /// split tool nodes: their last record).
    alias: HashMap<String, Option<String>>,
}

impl Ids {
    fn uuid(&self, id: &str) -> String {
        if self.native {
            id.to_string()
        } else {
            node_uuid(&self.session_id, id).into_owned()
        }
    }

    fn parent(&self, parent: Option<&str>) -> Option<String> {
        let p = parent?;
        match self.alias.get(p) {
            Some(a) => a.clone(),
            None => Some(self.uuid(p)),
        }
    }
}

/// Whether a node becomes at least one record.
pub(super) fn writes_record(node: &Node, native: bool) -> bool {
    match &node.body {
        Body::Message(m) => matches!(m.role, Role::User | Role::Assistant | Role::Tool),
        Body::Event(Event::Custom { kind, .. }) => native && kind != RECORD,
        Body::Event(Event::ModelChange { .. }) => false,
        Body::Event(_) => true,
    }
}

/// File order, with the head moved last when it is a leaf (Qwen Code resumes from the last
/// record in the file).
fn write_order(
    session: &Session,
    tree: &Tree,
    options: &WriteOptions,
    native: bool,
    losses: &mut LossReport,
) -> Result<Vec<usize>, WriteError> {
    let nodes = &session.nodes;
    let head = match options.leaf.as_deref() {
        Some(l) => Some(
            tree.index_of(l)
                .ok_or_else(|| WriteError(format!("no node with id {l:?} in this session")))?,
        ),
        None => session.meta.head.as_deref().and_then(|h| tree.index_of(h)),
    };
    let writes = |i: usize| writes_record(&nodes[i], native);
    let has_children = |i: usize| !tree.children(i).is_empty();
    Ok(head_last(nodes.len(), head, writes, has_children, losses))
}

/// The order of `len` nodes in file order, with `head` moved last when it has a record and no
/// children and is not the last node with a record (`writes`): the rule the whole writer and
/// the engine share.
pub(crate) fn head_last(
    len: usize,
    head: Option<usize>,
    writes: impl Fn(usize) -> bool,
    has_children: impl Fn(usize) -> bool,
    losses: &mut LossReport,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let Some(h) = head.filter(|&h| writes(h)) else {
        return order;
    };
    let last = (0..len).rev().find(|&i| writes(i));
    if last != Some(h) {
        if !has_children(h) {
            order.retain(|&i| i != h);
            order.push(h);
        } else {
            losses.add(
                "head",
                1,
                "the head has children, so it cannot be the last record (Qwen Code resumes from the last record in the file)",
            );
        }
    }
    order
}

fn push_line(out: &mut Vec<u8>, map: &Map<String, Value>) {
    serde_json::to_writer(&mut *out, map).expect("a JSON map always serializes");
    out.push(b'\n');
}

/// Where a node's records start: the uuid its parent has here, its time, its own uuid.
struct Start {
    parent: Option<String>,
    ts: String,
    uuid: String,
}

/// What writing a session's records carries from one node to the next: the session's fields,
/// the ids given, the last time and uuid written, what was lost. The whole writer and the
/// engine's same-format route (one node at a time) both write through it.
pub(crate) struct RecordWriter {
    native: bool,
    /// The session's fields as the reader of its records takes them.
    common: Common,
    /// The session's fields as its records were read (a session read from this format).
    as_read: Option<AsRead>,
    defaults: Defaults,
    cwd_known: bool,
    /// Times for records that have none (after the last one written).
    now: Option<String>,
    start_time: Option<String>,
    ids: Ids,
    last_ts: Option<String>,
    last_uuid: Option<String>,
    blank_cwd: usize,
    /// A record gave a session from another format its title.
    wrote_title: bool,
    losses: LossReport,
}

impl RecordWriter {
    /// The writer of `meta`'s session, whose first node is `first_id` (a session without an
    /// id gets one derived from it). `native`: the session was read from this format.
    fn new(meta: &Meta, options: &WriteOptions, first_id: &str, mut losses: LossReport) -> Self {
        let native = meta.source_format.as_deref() == Some(NAME);
        let cwd = head::cwd_of(&TARGET, meta, options);
        let session_id = match &meta.id {
            Some(id) if native => id.clone(),
            _ => {
                let facts = Facts {
                    first_id: Some(first_id),
                    ..Facts::default()
                };
                // Qwen's rules give every session an id: none is refused.
                head::session_id(&TARGET, meta, facts, &mut losses).unwrap_or_default()
            }
        };
        RecordWriter {
            native,
            common: Common::from_meta(meta),
            as_read: native.then(|| AsRead::of(meta)).flatten(),
            cwd_known: cwd.is_some(),
            defaults: Defaults {
                session_id: session_id.clone(),
                cwd: cwd.unwrap_or_default(),
                version: meta
                    .tool_version
                    .clone()
                    .unwrap_or_else(|| "unknown".into()),
                git_branch: meta.git_branch.clone(),
            },
            now: options.now.clone(),
            start_time: meta.start_time.clone(),
            ids: Ids {
                native,
                session_id,
                alias: HashMap::new(),
            },
            last_ts: None,
            last_uuid: None,
            blank_cwd: 0,
            wrote_title: false,
            losses,
        }
    }

    /// The writer of a session read from this format, for the engine (`None` for any other
    /// session): its nodes are then given to [`Self::native_node`] in the order
    /// [`head_last`] puts them.
    pub(crate) fn native(meta: &Meta, options: &WriteOptions, first_id: &str) -> Option<Self> {
        let w = Self::new(meta, options, first_id, LossReport::default());
        w.native.then_some(w)
    }

    /// Whether a record of a session read from this format, given back by the reader's
    /// `group_node` with the defaults `read` took from its first record (`common`), is written
    /// back as its very bytes: the session's fields are the ones read, and every record has a
    /// `cwd` to write. (The record's text is written when rebuilding it would differ, else it
    /// is rebuilt to those bytes; that holds for a record of its own, not for one merged from
    /// several.)
    pub(super) fn gives_back_records_read_with(&self, common: &Common) -> bool {
        self.native
            && self.cwd_known
            && self.common == *common
            && self.defaults == Defaults::from_common(common)
    }

    /// A record kept whole: its text, or its value when it no longer reads as its text.
    fn whole(&self, node: &Node, data: &Value, out: &mut Vec<u8>) {
        let kept = Kept::of(node, self.as_read.as_ref());
        match raw_record(node, kept.raw.as_deref(), &self.common, None) {
            Some(raw) => out.extend_from_slice(raw.as_bytes()),
            None => serde_json::to_writer(&mut *out, data).expect("a JSON value always serializes"),
        }
        out.push(b'\n');
    }

    /// A node without a record here: what is lost, and its children attached to its parent.
    /// `false` when the node has a record.
    fn skipped(&mut self, node: &Node, parent: Option<String>) -> bool {
        if writes_record(node, self.native) {
            return false;
        }
        let (code, message) = match &node.body {
            Body::Message(m) if m.role == Role::System => (
                "system-messages",
                "system messages (Qwen Code records have no system role)",
            ),
            Body::Message(_) => (
                "notices",
                "notices (info, warning and error messages): Qwen Code records have no place for them",
            ),
            Body::Event(_) => (
                "events",
                "session events of kinds Qwen Code does not record (model changes, other tools' events)",
            ),
        };
        self.losses.add(code, 1, message);
        self.ids.alias.insert(node.id.clone(), parent);
        true
    }

    /// The time a node's records get: its own, else the last record's.
    fn time_of(&mut self, node: &Node) -> String {
        let ts = node
            .timestamp
            .clone()
            .or_else(|| self.last_ts.clone())
            .or_else(|| self.now.clone())
            .or_else(|| self.start_time.clone());
        if ts.is_none() && !self.native {
            self.losses.add(
                "timestamps",
                1,
                "records without any time to give them (pass --now)",
            );
        }
        ts.unwrap_or_default()
    }

    /// What a node's records start from (its parent, time and uuid); `None` when it has none
    /// to build: a record kept whole (written here), or a node without a record (its loss
    /// said).
    fn begin(&mut self, node: &Node, out: &mut Vec<u8>) -> Option<Start> {
        if let Body::Event(Event::Custom { kind, data }) = &node.body
            && kind == RECORD
        {
            self.whole(node, data, out);
            return None;
        }
        let parent = self.ids.parent(node.parent.as_deref());
        if self.skipped(node, parent.clone()) {
            return None;
        }
        Some(Start {
            ts: self.time_of(node),
            uuid: self.ids.uuid(&node.id),
            parent,
        })
    }

    /// A node of a session read from this format, as its records.
    pub(crate) fn native_node(&mut self, node: &Node, out: &mut Vec<u8>) {
        let Some(Start { parent, ts, uuid }) = self.begin(node, out) else {
            return;
        };
        let kept = Kept::of(node, self.as_read.as_ref());
        if let Some(raw) = raw_record(node, kept.raw.as_deref(), &self.common, parent.as_deref()) {
            out.extend_from_slice(raw.as_bytes());
            out.push(b'\n');
            self.last_uuid = Some(uuid);
        } else {
            let base = Base {
                uuid: &uuid,
                parent: parent.as_deref(),
                timestamp: &ts,
                defaults: &self.defaults,
            };
            let record = match &node.body {
                Body::Message(m) => {
                    let native = Some(kept.tokens);
                    Some(message_record(node, m, m.role, &m.parts, &base, native))
                }
                Body::Event(e) => native_event(e)
                    .map(|(subtype, payload)| system_record(node, subtype, payload, &base, true)),
            };
            if let Some(record) = record {
                self.push(apply_keys(record, &kept.keys), node, out);
            }
        }
        self.last_ts = Some(ts);
    }

    /// One record on its line.
    fn push(&mut self, record: Map<String, Value>, node: &Node, out: &mut Vec<u8>) {
        if !self.cwd_known
            && record.get("cwd").and_then(Value::as_str) == Some("")
            && !node.extra.contains_key("cwd")
        {
            self.blank_cwd += 1;
        }
        self.last_uuid = record.get("uuid").and_then(Value::as_str).map(String::from);
        push_line(out, &record);
    }

    /// What was lost so far (the caller adds what it leaves out).
    pub(crate) fn losses(&mut self) -> &mut LossReport {
        &mut self.losses
    }

    /// What was lost.
    pub(crate) fn finish(mut self) -> LossReport {
        if self.blank_cwd > 0 {
            self.losses.add(
                "cwd-unknown",
                self.blank_cwd,
                "Qwen finds sessions by the cwd in the first record; pass --cwd",
            );
        }
        self.losses
    }
}

pub(super) fn write(session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
    let native = session.meta.source_format.as_deref() == Some(NAME);
    let mut losses = LossReport::default();
    // Qwen Code sends `message` as it is: parts of other formats become API parts first.
    let prepared;
    let session = if is_gemini_family(session.meta.source_format.as_deref()) {
        session
    } else {
        let mut s = session.clone();
        to_api_parts(&mut s, &mut losses);
        prepared = s;
        &prepared
    };
    let meta = &session.meta;
    let first = session.nodes.first().map_or("", |n| n.id.as_str());
    let mut w = RecordWriter::new(meta, options, first, losses);
    let tree = session.tree();
    let order = write_order(session, &tree, options, native, &mut w.losses)?;
    let mut out = Vec::new();
    for &i in &order {
        let node = &session.nodes[i];
        if native {
            w.native_node(node, &mut out);
            continue;
        }
        let kept = |first: &str| {
            let kept = kept_since(&tree, i, first)?;
            Some(
                kept.into_iter()
                    .filter_map(|j| history_entry(&session.nodes[j]))
                    .collect(),
            )
        };
        w.foreign_node(node, kept, &mut out);
    }
    if !native {
        w.foreign_end(meta, options, &mut out);
    }
    Ok(Written {
        bytes: out,
        losses: w.finish(),
    })
}

impl RecordWriter {
    /// The writer of a session from another format, for the engine: its nodes, their parts
    /// API parts already when the session is not of the Gemini family, are then given to
    /// [`Self::foreign_node`] in the order [`head_last`] puts them, and
    /// [`Self::foreign_end`] ends it.
    pub(crate) fn foreign(meta: &Meta, options: &WriteOptions, first_id: &str) -> Self {
        Self::new(meta, options, first_id, LossReport::default())
    }

    /// A node of a session from another format as its records (a tool message as one record
    /// per call; an event as a system record, where Qwen Code has one). `kept`: the history
    /// a compaction keeps, as [`foreign_event`] takes it.
    pub(crate) fn foreign_node(
        &mut self,
        node: &Node,
        kept: impl FnOnce(&str) -> Option<Vec<Value>>,
        out: &mut Vec<u8>,
    ) {
        let Some(Start { parent, ts, uuid }) = self.begin(node, out) else {
            return;
        };
        let base = Base {
            uuid: &uuid,
            parent: parent.as_deref(),
            timestamp: &ts,
            defaults: &self.defaults,
        };
        let mut records: Vec<Map<String, Value>> = Vec::with_capacity(1);
        match &node.body {
            Body::Message(m) => {
                let parts = api_parts(node, m, &mut self.losses);
                let all_results = !parts.is_empty()
                    && parts
                        .iter()
                        .all(|p| matches!(p.content, Content::ToolResult { .. }));
                let role = if m.role == Role::User && all_results {
                    Role::Tool
                } else {
                    m.role
                };
                if role != Role::Tool {
                    records.push(message_record(node, m, role, &parts, &base, None));
                } else {
                    // One record per call, chained, as the tool writes them.
                    let mut prev = parent.clone();
                    for (k, group) in result_groups(&parts).into_iter().enumerate() {
                        let id = if k == 0 {
                            uuid.clone()
                        } else {
                            derived_uuid(&format!("{}/{}#{k}", self.defaults.session_id, node.id))
                        };
                        let b = Base {
                            uuid: &id,
                            parent: prev.as_deref(),
                            ..base
                        };
                        records.push(message_record(node, m, role, group, &b, None));
                        prev = Some(id);
                    }
                    if records.len() > 1 {
                        self.ids.alias.insert(node.id.clone(), prev);
                    }
                }
            }
            Body::Event(e) => {
                if let Some((subtype, payload)) = foreign_event(kept, e, &mut self.losses) {
                    self.wrote_title |= subtype == "custom_title";
                    records.push(system_record(node, subtype, payload, &base, false));
                }
            }
        }
        for record in records {
            self.push(record, node, out);
        }
        self.last_ts = Some(ts);
    }

    /// What ends a session from another format (`meta`): a trailing title record when it has
    /// a title no record gave, and what is lost of its fields.
    pub(crate) fn foreign_end(&mut self, meta: &Meta, options: &WriteOptions, out: &mut Vec<u8>) {
        if let Some(title) = meta
            .title
            .as_ref()
            .filter(|_| !self.wrote_title && self.last_uuid.is_some())
        {
            // Qwen Code finds the name in a trailing custom_title record, chained to the tail.
            let uuid = derived_uuid(&format!("{}/title", self.defaults.session_id));
            let ts = self
                .last_ts
                .clone()
                .or_else(|| options.now.clone())
                .or_else(|| meta.last_updated.clone())
                .unwrap_or_default();
            let base = Base {
                uuid: &uuid,
                parent: self.last_uuid.as_deref(),
                timestamp: &ts,
                defaults: &self.defaults,
            };
            let mut r = base_map("system", &base);
            r.insert("subtype".into(), "custom_title".into());
            r.insert(
                "systemPayload".into(),
                json!({"customTitle": title, "titleSource": "manual"}),
            );
            if !self.cwd_known {
                self.blank_cwd += 1;
            }
            push_line(out, &r);
        }
        TARGET.unplaced.session(meta, &mut self.losses);
    }
}
