//! Records to nodes: group by uuid, merge as the tool does, map each group to a node; each node
//! keeps the bytes it was read from (its [`crate::model::Origin`]) for the writer to give back.

use crate::formats::record_value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::super::gemini_content::{parts_from_union, take_string};
use super::super::{Input, ReadError, ReadOutcome, record_diagnostics};
use super::{Common, NAME, RECORD, TOKENS_NAMES, USAGE_NAMES};
use crate::diag::{Diagnostic, Location, Severity};
use crate::model::{
    Body, Content, Event, Extra, Message, Meta, Node, Origin, Role, Session, Usage,
};
use crate::records::{Options, Span, split_slice};

/// A record kept whole, or a group of records sharing a uuid.
enum Slot<'a> {
    Whole {
        id: String,
        value: Value,
        text: Cow<'a, [u8]>,
        span: Span,
    },
    Group(usize),
}

/// One record of a group: its fields, where it is, and its text.
pub(super) type Member<'a> = (Map<String, Value>, Span, Cow<'a, [u8]>);

struct Group<'a> {
    uuid: String,
    records: Vec<Member<'a>>,
}

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    let (records, findings) = split_slice(input.bytes, Options::default());
    let mut diagnostics = record_diagnostics(input.name, &findings);
    let at = |span: &Span| Location::at(input.name, span.line, span.offset);

    let mut slots: Vec<Slot> = Vec::with_capacity(records.len());
    let mut groups: Vec<Group> = Vec::new();
    let mut by_uuid: HashMap<String, usize> = HashMap::new();
    let mut per_line: HashMap<u64, usize> = HashMap::new();
    let mut head = None;
    let mut last_updated: Option<String> = None;
    let mut tail_without_uuid = None;
    for rec in records {
        let span = rec.span;
        tail_without_uuid = Some(span);
        let mut parsed = true;
        let value = match record_value(&rec.bytes, &at(&span), &mut diagnostics) {
            Ok(v) => v,
            Err(e) => {
                parsed = false;
                diagnostics.push(unparseable(at(&span), e));
                Value::String(String::from_utf8_lossy(&rec.bytes).into_owned())
            }
        };
        let uuid = match &value {
            Value::Object(o) => o.get("uuid").and_then(Value::as_str).map(String::from),
            _ => None,
        };
        let Some(uuid) = uuid else {
            if parsed {
                diagnostics.push(not_a_record(at(&span), value.is_object()));
            }
            let n = per_line.entry(span.line).or_insert(0);
            *n += 1;
            let id = whole_id(span.line, *n);
            slots.push(Slot::Whole {
                id,
                value,
                text: rec.bytes,
                span,
            });
            continue;
        };
        let Value::Object(map) = value else {
            unreachable!("a uuid is only found in an object")
        };
        if let Some(Value::String(ts)) = map.get("timestamp")
            && last_updated.as_deref().is_none_or(|l| l < ts.as_str())
        {
            last_updated = Some(ts.clone());
        }
        head = Some(uuid.clone());
        tail_without_uuid = None;
        match by_uuid.get(&uuid) {
            Some(&g) => groups[g].records.push((map, span, rec.bytes)),
            None => {
                by_uuid.insert(uuid.clone(), groups.len());
                slots.push(Slot::Group(groups.len()));
                groups.push(Group {
                    uuid,
                    records: vec![(map, span, rec.bytes)],
                });
            }
        }
    }

    let first = groups.first().map(|g| &g.records[0].0);
    let origin = groups.first().map(|g| Origin::new(NAME, &g.records[0].2));
    let field = |k: &str| {
        first
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let common = Common {
        session_id: field("sessionId"),
        cwd: field("cwd"),
        version: field("version"),
        git_branch: field("gitBranch"),
    };
    let start_time = field("timestamp");

    let mut nodes = Vec::with_capacity(slots.len());
    let mut locations = Vec::with_capacity(slots.len());
    let mut groups: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    let mut foreign_sessions = 0usize;
    for slot in slots {
        match slot {
            Slot::Whole {
                id,
                value,
                text,
                span,
            } => {
                nodes.push(whole_node(id, value, &text));
                locations.push(at(&span));
            }
            Slot::Group(g) => {
                let Group { uuid, records } = groups[g].take().expect("each group has one slot");
                let location = at(&records[0].1);
                let texts = records.iter().map(|r| &*r.2);
                let origin = Origin::new(NAME, &join_lines(texts));
                let map = if records.len() == 1 {
                    records.into_iter().next().expect("one record").0
                } else {
                    merge(records, &uuid, &location, &mut diagnostics)
                };
                if is_foreign(&map, &common) {
                    foreign_sessions += 1;
                }
                let (node, unknown) = group_node(map, uuid, Some(origin), &common);
                if let Some(kind) = unknown {
                    diagnostics.push(unknown_record(&kind, location.clone()));
                }
                nodes.push(node);
                locations.push(location);
            }
        }
    }
    if let (Some(span), Some(_)) = (tail_without_uuid, &head) {
        diagnostics.push(tail_without_uuid_said(at(&span)));
    }
    if foreign_sessions > 0 {
        diagnostics.push(mixed_sessions(input.name, foreign_sessions, &common));
    }
    let ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    for (node, location) in nodes.iter().zip(&locations) {
        if let Some(p) = &node.parent
            && !ids.contains(p.as_str())
        {
            diagnostics.push(missing_parent(&node.id, p, location.clone()));
        }
    }
    let title = nodes.iter().rev().find_map(|n| match &n.body {
        Body::Event(Event::Title { title, .. }) => title.clone(),
        _ => None,
    });
    crate::diag::sort_in_file_order(&mut diagnostics);
    let meta = Meta {
        id: common.session_id,
        cwd: common.cwd,
        tool_version: common.version,
        git_branch: common.git_branch,
        start_time,
        last_updated,
        title,
        head,
        source_format: Some(NAME.into()),
        origin,
        ..Meta::default()
    };
    Ok(ReadOutcome {
        session: Session { meta, nodes },
        diagnostics,
    })
}

/// The id of a record kept whole: its line, and which record of the line it is when a line
/// holds several (`k`, from 1).
pub(super) fn whole_id(line: u64, k: usize) -> String {
    match k {
        1 => format!("line-{line}"),
        k => format!("line-{line}.{k}"),
    }
}

/// A record kept whole (not an object, or no string `uuid`) as its node: written back from
/// its value, or from its text (`origin`) when the value would not give the same bytes.
pub(super) fn whole_node(id: String, value: Value, text: &[u8]) -> Node {
    Node {
        id,
        parent: None,
        timestamp: None,
        body: Body::Event(Event::Custom {
            kind: RECORD.into(),
            data: value,
        }),
        extra: Extra::new(),
        origin: Some(Origin::new(NAME, text)),
    }
}

/// The node of a uuid's records (`map`: the one record, or the group merged), with the bytes
/// it was read from when it is made for this format's writer (`origin`: see [`join_lines`]);
/// and the record's type when it is unknown.
pub(super) fn group_node(
    map: Map<String, Value>,
    uuid: String,
    origin: Option<Origin>,
    common: &Common,
) -> (Node, Option<String>) {
    let (mut node, unknown) = read_record(map, uuid, common);
    node.origin = origin;
    (node, unknown)
}

/// The bytes a node of several records was read from: their lines, in file order, joined by
/// `\n`.
pub(super) fn join_lines<'a>(texts: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, t) in texts.enumerate() {
        if k > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(t);
    }
    out
}

/// Whether a record (or merged group) names another session than the first record.
pub(super) fn is_foreign(map: &Map<String, Value>, common: &Common) -> bool {
    matches!(map.get("sessionId"), Some(Value::String(s)) if Some(s) != common.session_id.as_ref())
}

pub(super) fn unparseable(location: Location, e: impl std::fmt::Display) -> Diagnostic {
    Diagnostic {
        code: "qwen-unparseable",
        severity: Severity::Warning,
        location,
        message: format!("record cannot be parsed ({e}); kept as is"),
    }
}

pub(super) fn not_a_record(location: Location, is_object: bool) -> Diagnostic {
    let message = if is_object {
        "record has no string `uuid`; kept as is (Qwen Code cannot place it in the history)"
    } else {
        "record is not a JSON object; kept as is"
    };
    Diagnostic {
        code: "qwen-not-a-record",
        severity: Severity::Warning,
        location,
        message: message.into(),
    }
}

pub(super) fn unknown_record(kind: &str, location: Location) -> Diagnostic {
    Diagnostic {
        code: "qwen-unknown-record",
        severity: Severity::Info,
        location,
        message: format!("record of type {kind} is unknown to this version; kept as is"),
    }
}

pub(super) fn tail_without_uuid_said(location: Location) -> Diagnostic {
    Diagnostic {
        code: "qwen-tail-without-uuid",
        severity: Severity::Warning,
        location,
        message: "the last record has no uuid: Qwen Code starts its history from the last \
                  record and will find nothing to resume"
            .into(),
    }
}

pub(super) fn mixed_sessions(file: &str, count: usize, common: &Common) -> Diagnostic {
    Diagnostic {
        code: "qwen-mixed-sessions",
        severity: Severity::Warning,
        location: Location::file(file),
        message: format!(
            "{count} records name another sessionId than the first record ({})",
            common.session_id.as_deref().unwrap_or("none")
        ),
    }
}

pub(super) fn missing_parent(id: &str, parent: &str, location: Location) -> Diagnostic {
    Diagnostic {
        code: "qwen-missing-parent",
        severity: Severity::Warning,
        location,
        message: format!(
            "record {id} names parent {parent}, which is not in the file; Qwen Code's history \
             stops here and loses everything before it"
        ),
    }
}

/// Merges the records of one uuid the way Qwen Code's `aggregateRecords` does. Fields only
/// later records have are kept (the tool drops them); conflicting ones keep the first value.
pub(super) fn merge(
    records: Vec<Member>,
    uuid: &str,
    location: &Location,
    diagnostics: &mut Vec<Diagnostic>,
) -> Map<String, Value> {
    let count = records.len();
    let mut it = records.into_iter().map(|(m, _, _)| m);
    let mut base = it.next().expect("a group has a record");
    let mut dropped = 0usize;
    let mut conflicts: Vec<&str> = Vec::new();
    for rec in it {
        for (k, v) in rec {
            match k.as_str() {
                "uuid" => {}
                "parentUuid" | "type" => {
                    if base.get(&k) != Some(&v) {
                        let name = if k == "type" { "type" } else { "parentUuid" };
                        if !conflicts.contains(&name) {
                            conflicts.push(name);
                        }
                    }
                }
                "message" => match (base.get_mut("message"), v) {
                    (None, v) => {
                        base.insert(k, v);
                    }
                    (Some(Value::Object(b)), Value::Object(mut m)) => {
                        match (b.get_mut("parts"), m.shift_remove("parts")) {
                            (Some(Value::Array(bp)), Some(Value::Array(mp))) => bp.extend(mp),
                            (None, Some(p)) => {
                                b.insert("parts".into(), p);
                            }
                            (_, None) => {}
                            _ => dropped += 1,
                        }
                    }
                    _ => dropped += 1,
                },
                "usageMetadata" | "tokens" => {
                    base.insert(k, v);
                }
                "toolCallResult" => {
                    base.entry(k).or_insert(v);
                }
                "model" => {
                    let empty = match base.get("model") {
                        None | Some(Value::Null) => true,
                        Some(Value::String(s)) => s.is_empty(),
                        _ => false,
                    };
                    if empty {
                        base.insert(k, v);
                    }
                }
                "toolCallsMetadata" => match (base.get_mut("toolCallsMetadata"), v) {
                    (Some(Value::Array(b)), Value::Array(m)) => b.extend(m),
                    (None, v) => {
                        base.insert(k, v);
                    }
                    _ => dropped += 1,
                },
                "timestamp" => {
                    let later = match (base.get("timestamp"), &v) {
                        (Some(Value::String(b)), Value::String(t)) => t > b,
                        (_, Value::String(_)) => true,
                        _ => false,
                    };
                    if later {
                        base.insert(k, v);
                    }
                }
                _ => match base.get(&k) {
                    None => {
                        base.insert(k, v);
                    }
                    Some(b) if *b == v => {}
                    Some(_) => dropped += 1,
                },
            }
        }
    }
    let mut message = format!(
        "{count} records share uuid {uuid}; merged into one as Qwen Code does (parts joined, \
         last usage, latest timestamp)"
    );
    if dropped > 0 {
        message.push_str(&format!(
            "; {dropped} fields of later records that disagree with the first were dropped"
        ));
    }
    diagnostics.push(Diagnostic {
        code: "qwen-merged-records",
        severity: Severity::Info,
        location: location.clone(),
        message,
    });
    if !conflicts.is_empty() {
        diagnostics.push(Diagnostic {
            code: "qwen-merge-conflict",
            severity: Severity::Warning,
            location: location.clone(),
            message: format!(
                "records sharing uuid {uuid} disagree on {}; the first record's value is used",
                conflicts.join(" and ")
            ),
        });
    }
    base
}

/// What a record's `type` makes of it.
pub(super) enum RecordType {
    /// `user`, `assistant` or `tool_result`: a message.
    Message(Role),
    /// `system` with a string `subtype`: an event.
    System,
    /// Anything else, named as the `qwen-unknown-record` diagnostic names it: kept whole.
    Unknown(String),
}

/// What `kind` (the `type` value: `None` when absent, `Some(None)` when not a string) makes of
/// a record whose `subtype` is that string (`None` when absent or not a string).
pub(super) fn record_type(kind: Option<Option<&str>>, subtype: Option<&str>) -> RecordType {
    match kind {
        Some(Some("user")) => RecordType::Message(Role::User),
        Some(Some("assistant")) => RecordType::Message(Role::Assistant),
        Some(Some("tool_result")) => RecordType::Message(Role::Tool),
        // The event would take the name of a record kept whole, which the writer writes from
        // its value alone: the record is kept whole itself.
        Some(Some("system")) if subtype == Some(RECORD) => {
            RecordType::Unknown(format!("\"system\" with the subtype {RECORD:?}"))
        }
        Some(Some("system")) if subtype.is_some() => RecordType::System,
        Some(Some("system")) => RecordType::Unknown("\"system\" without a subtype".into()),
        Some(Some(s)) => RecordType::Unknown(format!("{s:?}")),
        Some(None) => RecordType::Unknown("(not a string)".into()),
        None => RecordType::Unknown("(none)".into()),
    }
}

/// One record (or merged group) as a node. Returns the record type when it is unknown (the
/// node then keeps the record whole).
pub(super) fn read_record(
    mut rec: Map<String, Value>,
    id: String,
    common: &Common,
) -> (Node, Option<String>) {
    let parent = rec
        .get("parentUuid")
        .and_then(Value::as_str)
        .map(String::from);
    let timestamp = rec
        .get("timestamp")
        .and_then(Value::as_str)
        .map(String::from);
    let kind = record_type(
        rec.get("type").map(Value::as_str),
        rec.get("subtype").and_then(Value::as_str),
    );
    let role = match kind {
        RecordType::Message(role) => Some(role),
        RecordType::System => None,
        RecordType::Unknown(kind) => {
            let node = Node {
                id,
                parent,
                timestamp,
                body: Body::Event(Event::Custom {
                    kind: RECORD.into(),
                    data: Value::Object(rec),
                }),
                extra: Extra::new(),
                origin: None,
            };
            return (node, Some(kind));
        }
    };
    rec.shift_remove("uuid");
    rec.shift_remove("type");
    if matches!(rec.get("parentUuid"), Some(Value::String(_) | Value::Null)) {
        rec.shift_remove("parentUuid");
    }
    if timestamp.is_some() {
        rec.shift_remove("timestamp");
    }
    for (key, value) in [
        ("sessionId", &common.session_id),
        ("cwd", &common.cwd),
        ("version", &common.version),
        ("gitBranch", &common.git_branch),
    ] {
        if let (Some(Value::String(s)), Some(v)) = (rec.get(key), value)
            && s == v
        {
            rec.shift_remove(key);
        }
    }
    let body = match role {
        Some(role) => Body::Message(read_message(&mut rec, role)),
        None => Body::Event(read_system(&mut rec)),
    };
    let node = Node {
        id,
        parent,
        timestamp,
        body,
        extra: rec,
        origin: None,
    };
    (node, None)
}

fn read_message(rec: &mut Map<String, Value>, role: Role) -> Message {
    let mut parts = Vec::new();
    let mut extra = Extra::new();
    if let Some(Value::Object(_)) = rec.get("message")
        && let Some(Value::Object(mut msg)) = rec.shift_remove("message")
    {
        let expected = if role == Role::Assistant {
            "model"
        } else {
            "user"
        };
        if msg.get("role").and_then(Value::as_str) == Some(expected) {
            msg.shift_remove("role");
        }
        if let Some(Value::Array(_)) = msg.get("parts")
            && let Some(p) = msg.shift_remove("parts")
        {
            parts = parts_from_union(&p);
        }
        extra = msg;
    }
    let model = take_string(rec, "model");
    let usage = if let Some(Value::Object(_)) = rec.get("usageMetadata") {
        take_object(rec, "usageMetadata").map(|u| usage_from(u, &USAGE_NAMES))
    } else if let Some(Value::Object(_)) = rec.get("tokens") {
        take_object(rec, "tokens").map(|u| usage_from(u, &TOKENS_NAMES))
    } else {
        None
    };
    // The run's status and display belong to the result part of the call they describe; the
    // rest of `toolCallResult` stays on the node, in place.
    if let Some(Value::Object(tcr)) = rec.get_mut("toolCallResult") {
        let call_id = tcr.get("callId").and_then(Value::as_str);
        let target = result_target(&parts, call_id);
        if let Some(i) = target
            && let Content::ToolResult {
                status,
                display,
                is_error,
                ..
            } = &mut parts[i].content
        {
            *status = take_string(tcr, "status");
            *display = tcr.shift_remove("resultDisplay");
            *is_error |= status.as_deref() == Some("error");
        }
    }
    Message {
        role,
        parts,
        model,
        usage,
        extra,
    }
}

/// The index of the result part a `toolCallResult` describes: the one answering `call_id`,
/// else the first result part.
pub(super) fn result_target(parts: &[crate::model::Part], call_id: Option<&str>) -> Option<usize> {
    let is_result = |p: &crate::model::Part| matches!(p.content, Content::ToolResult { .. });
    call_id
        .and_then(|id| {
            parts.iter().position(
                |p| matches!(&p.content, Content::ToolResult { call_id: Some(c), .. } if c == id),
            )
        })
        .or_else(|| parts.iter().position(is_result))
}

fn read_system(rec: &mut Map<String, Value>) -> Event {
    let subtype = take_string(rec, "subtype").unwrap_or_default();
    let data = rec.shift_remove("systemPayload").unwrap_or(Value::Null);
    match subtype.as_str() {
        "chat_compression" => Event::Compaction {
            summary: data
                .get("summary")
                .and_then(Value::as_str)
                .map(String::from),
            tokens_before: data
                .get("info")
                .and_then(|i| i.get("originalTokenCount"))
                .and_then(Value::as_u64),
            first_kept: None,
            data,
        },
        "custom_title" => Event::Title {
            title: data
                .get("customTitle")
                .and_then(Value::as_str)
                .map(String::from),
            data,
        },
        "rewind" => Event::Rewind {
            target: None,
            count: data.get("truncatedCount").and_then(Value::as_u64),
            data,
        },
        _ => Event::Custom {
            kind: subtype,
            data,
        },
    }
}

fn take_object(map: &mut Map<String, Value>, key: &str) -> Option<Map<String, Value>> {
    match map.shift_remove(key) {
        Some(Value::Object(o)) => Some(o),
        _ => None,
    }
}

fn usage_from(mut map: Map<String, Value>, names: &[&str; 6]) -> Usage {
    let mut v = [None; 6];
    for (slot, name) in v.iter_mut().zip(names) {
        if let Some(n) = map.get(*name).and_then(Value::as_u64) {
            *slot = Some(n);
            map.shift_remove(*name);
        }
    }
    Usage {
        input: v[0],
        output: v[1],
        cached: v[2],
        thoughts: v[3],
        tool: v[4],
        total: v[5],
        extra: map,
    }
}
