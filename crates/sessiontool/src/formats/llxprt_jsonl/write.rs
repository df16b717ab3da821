//! Sessions to lines. A session read from this format is written line by line: each node's
//! line as it was while the node still reads as it did, else rebuilt with what its line kept
//! (`origin`: its `seq`, `v`, type, metadata keys); sessions from other formats get a
//! `session_start` (seq 1) and lines numbered on from there.

use serde_json::{Map, Value, json};

use super::super::normalise::{Facts, head};
use super::super::one_branch::one_branch;
use super::super::{WriteError, WriteOptions, Written, ordered};
use super::blocks::{build_icontent, speaker_of};
use super::origin::{AsRead, Kept, StartAsRead};
use super::read::event_payload;
use super::target::TARGET;
use super::{NAME, RECORD};
use crate::diag::LossReport;
use crate::ids::sha256_hex;
use crate::model::{Body, Content, Event, Message, Meta, Node, Role, Session};

const START: &[&str] = &[
    "sessionId",
    "projectHash",
    "workspaceDirs",
    "cwd",
    "provider",
    "model",
    "startTime",
];

pub(super) fn write(session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
    let native = session.meta.source_format.as_deref() == Some(NAME);
    let mut losses = LossReport::default();
    let session = one_branch(session, options, OTHER_BRANCHES, &mut losses)?;
    let meta = &session.meta;
    let first = First {
        time: session.nodes.iter().find_map(|n| n.timestamp.clone()),
        model: session
            .nodes
            .iter()
            .find_map(|n| n.message().and_then(|m| m.model.clone())),
    };
    let mut w = Lines::new(
        meta,
        &first,
        native,
        options,
        crate::formats::output_buffer(session.nodes.len()),
    );
    // A file of this format without a `session_start` line is written back without one.
    if !native || StartAsRead::of(meta).is_some() {
        w.start(meta, &first, options);
    }
    for node in &session.nodes {
        w.node(node);
    }
    w.count_losses(&mut losses);
    Ok(Written {
        bytes: w.out,
        losses,
    })
}

/// What the loss report says of the nodes on other branches.
pub(super) const OTHER_BRANCHES: &str =
    "nodes on other branches (an llxprt session holds one conversation)";

/// What a session from another format takes from its first nodes when its metadata lacks it:
/// the first time given (the start time) and the first model named (`session_start`'s).
#[derive(Debug, Default)]
pub(super) struct First {
    pub(super) time: Option<String>,
    pub(super) model: Option<String>,
}

impl First {
    /// Whether `meta` leaves the time to the nodes (else [`First::time`] is not read).
    pub(super) fn needs_time(meta: &Meta) -> bool {
        meta.start_time.is_none()
    }

    /// Whether `meta` leaves the model to the nodes.
    pub(super) fn needs_model(meta: &Meta) -> bool {
        model_of(meta).is_none()
    }
}

fn model_of(meta: &Meta) -> Option<&str> {
    meta.extra
        .get("model")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

const LOSSES: &[(&str, &str)] = &[
    ("extra-fields", "fields only the source format understands"),
    (
        "system-messages",
        "system messages (written as human turns: llxprt has no system speaker)",
    ),
    (
        "thought-subject",
        "thought subjects (llxprt thinking blocks have none)",
    ),
    ("code-result", "code execution results (written as text)"),
    ("other-parts", "parts of kinds llxprt has no block for"),
    (
        "signatures",
        "signatures on parts other than thinking blocks",
    ),
    ("events", "events llxprt has no line for"),
];

/// The writer of the lines, node by node (the whole writer's and the engine's).
pub(super) struct Lines {
    pub(super) out: Vec<u8>,
    /// The last seq written.
    seq: u64,
    /// The last timestamp written.
    ts: String,
    native: bool,
    lost: Vec<&'static str>,
    since_compaction: u64,
}

impl Lines {
    pub(super) fn new(
        meta: &Meta,
        first: &First,
        native: bool,
        options: &WriteOptions,
        out: Vec<u8>,
    ) -> Lines {
        Lines {
            out,
            seq: 0,
            ts: start_time(meta, first, options),
            native,
            lost: Vec::new(),
            since_compaction: 0,
        }
    }

    /// What could not be written, counted into `losses`.
    pub(super) fn count_losses(&self, losses: &mut LossReport) {
        for (code, message) in LOSSES {
            let n = self.lost.iter().filter(|c| *c == code).count();
            losses.add(code, n, *message);
        }
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.out.push(b'\n');
    }

    fn push(&mut self, ts: Option<&str>, kind: &str, payload: Value) {
        self.seq += 1;
        if let Some(ts) = ts {
            self.ts = ts.to_string();
        }
        let line =
            json!({"v": 1, "seq": self.seq, "ts": self.ts, "type": kind, "payload": payload});
        let bytes = serde_json::to_vec(&line).expect("a JSON value always serializes");
        self.push_bytes(&bytes);
    }

    pub(super) fn start(&mut self, meta: &Meta, first: &First, options: &WriteOptions) {
        if self.native
            && let Some(line) = StartAsRead::of(meta)
        {
            let bytes = match line.same {
                // As the reader took it: invalid UTF-8 replaced.
                true => Some(String::from_utf8_lossy(line.text).into_owned().into_bytes()),
                false => meta_line(meta, &line),
            };
            if let Some(bytes) = bytes {
                let seq = line.seq.as_ref().and_then(Value::as_u64).unwrap_or(1);
                self.seq = self.seq.max(seq);
                self.push_bytes(&bytes);
                return;
            }
        }
        let payload = foreign_start(meta, first, options);
        let ts = meta.start_time.clone();
        self.push(ts.as_deref(), "session_start", payload);
        if !self.native
            && let Some(title) = &meta.title
        {
            self.push(None, "session_metadata", json!({ "title": title }));
        }
    }

    pub(super) fn node(&mut self, node: &Node) {
        let line = if self.native { AsRead::of(node) } else { None };
        if let Some(line) = &line {
            let bytes = match line.same {
                // As the reader took it: invalid UTF-8 replaced.
                true => Some(String::from_utf8_lossy(line.text).into_owned().into_bytes()),
                false => line_text(node, &line.kept),
            };
            if let Some(bytes) = bytes {
                self.bump(node, &line.kept);
                self.push_bytes(&bytes);
                return;
            }
        }
        let kind = line.as_ref().and_then(|l| l.kept.kind.as_deref());
        let ts = node.timestamp.as_deref();
        match &node.body {
            Body::Message(m) => self.message(ts, m),
            Body::Event(e) => self.event(ts, e, kind),
        }
    }

    fn bump(&mut self, node: &Node, kept: &Kept) {
        if let Some(s) = kept.seq.as_ref().and_then(Value::as_u64) {
            self.seq = self.seq.max(s);
        }
        if let Some(ts) = &node.timestamp {
            self.ts = ts.clone();
        }
    }

    fn message(&mut self, ts: Option<&str>, m: &Message) {
        let mut m = m.clone();
        if !self.native {
            for p in &mut m.parts {
                if p.strip_extras() > 0 {
                    self.lost.push("extra-fields");
                }
            }
            if !m.extra.is_empty() {
                self.lost.push("extra-fields");
                m.extra.clear();
            }
        }
        if let Some(severity) = severity(m.role) {
            let payload = json!({"severity": severity, "message": m.text()});
            self.push(ts, "session_event", payload);
            return;
        }
        if m.role == Role::System {
            self.lost.push("system-messages");
        }
        let speaker = speaker_of(m.role);
        // Tool results go in `tool` turns, as llxprt records them.
        let mut groups: Vec<(&str, Message)> = Vec::new();
        for p in m.parts.drain(..) {
            let s = if matches!(p.content, Content::ToolResult { .. }) {
                "tool"
            } else {
                speaker
            };
            match groups.last_mut() {
                Some((last, g)) if *last == s => g.parts.push(p),
                _ => groups.push((s, Message::new(m.role, vec![p]))),
            }
        }
        if groups.is_empty() {
            groups.push((speaker, Message::new(m.role, Vec::new())));
        }
        let first = groups.iter().position(|(s, _)| *s == speaker).unwrap_or(0);
        let g = &mut groups[first].1;
        g.model = m.model.take();
        g.usage = m.usage.take();
        g.extra = std::mem::take(&mut m.extra);
        for (s, g) in &groups {
            let content = build_icontent(g, s, None, &mut self.lost);
            self.since_compaction += 1;
            self.push(ts, "content", json!({ "content": content }));
        }
    }

    /// An event (`kind`: the line type it was read from, when its kind does not say it).
    fn event(&mut self, ts: Option<&str>, e: &Event, kind: Option<&str>) {
        if self.native
            && let Some((kind, payload)) = event_payload(e, kind)
        {
            return self.push(ts, &kind, payload);
        }
        match e {
            Event::Compaction { summary, .. } => {
                let summary = json!({"speaker": "ai",
                    "blocks": [{"type": "text", "text": summary.clone().unwrap_or_default()}],
                    "metadata": {"isSummary": true}});
                let items = std::mem::replace(&mut self.since_compaction, 1);
                let payload = json!({"summary": summary, "itemsCompressed": items});
                self.push(ts, "compressed", payload);
            }
            Event::Rewind { count: Some(n), .. } => {
                self.since_compaction = self.since_compaction.saturating_sub(*n);
                self.push(ts, "rewind", json!({ "itemsRemoved": n }));
            }
            Event::ModelChange {
                provider, model, ..
            } => {
                let payload = json!({"provider": provider.clone().unwrap_or_else(|| "unknown".into()),
                    "model": model.clone().unwrap_or_default()});
                self.push(ts, "provider_switch", payload);
            }
            Event::Title { title, .. } => {
                self.push(ts, "session_metadata", json!({ "title": title }));
            }
            Event::Custom { kind, data } if self.native && kind == RECORD => {
                let bytes = serde_json::to_vec(data).expect("a JSON value always serializes");
                self.push_bytes(&bytes);
            }
            _ => self.lost.push("events"),
        }
    }
}

fn severity(role: Role) -> Option<&'static str> {
    match role {
        Role::Info => Some("info"),
        Role::Warning => Some("warning"),
        Role::Error => Some("error"),
        _ => None,
    }
}

fn foreign_start(meta: &Meta, first: &First, options: &WriteOptions) -> Value {
    let s = |k: &str| {
        meta.extra
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let cwd = head::cwd_of(&TARGET, meta, options);
    let model = model_of(meta)
        .map(String::from)
        .or_else(|| first.model.clone());
    let mut p = Map::new();
    // Any id is taken as it is: nothing is said (nor refused).
    let id = head::session_id(&TARGET, meta, Facts::default(), &mut LossReport::default());
    p.insert("sessionId".into(), id.unwrap_or_default().into());
    let hash = meta
        .project_hash
        .clone()
        .unwrap_or_else(|| sha256_hex(cwd.as_deref().unwrap_or("")));
    p.insert("projectHash".into(), hash.into());
    let dirs = meta
        .directories
        .clone()
        .or_else(|| cwd.clone().map(|c| vec![c]))
        .unwrap_or_default();
    p.insert("workspaceDirs".into(), dirs.into());
    if let Some(c) = cwd {
        p.insert("cwd".into(), c.into());
    }
    p.insert("provider".into(), s("provider").unwrap_or("unknown").into());
    p.insert(
        "model".into(),
        model.unwrap_or_else(|| "unknown".into()).into(),
    );
    p.insert("startTime".into(), start_time(meta, first, options).into());
    Value::Object(p)
}

/// The session's start: its own, else its first node's time, else now (see [`TARGET`]).
fn start_time(meta: &Meta, first: &First, options: &WriteOptions) -> String {
    // `TARGET.start` always gives a time: nothing is said.
    let unsaid = &mut LossReport::default();
    head::start(&TARGET, meta, first.time.as_deref(), options, unsaid)
}

/// The `session_start` line of a session read from this format (`line`), rebuilt.
pub(super) fn meta_line(meta: &Meta, line: &StartAsRead) -> Option<Vec<u8>> {
    let mut p = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            p.insert(k.into(), v);
        }
    };
    put("sessionId", meta.id.clone().map(Value::from));
    put("projectHash", meta.project_hash.clone().map(Value::from));
    put("workspaceDirs", meta.directories.clone().map(Value::from));
    put("cwd", meta.cwd.clone().map(Value::from));
    put("startTime", meta.start_time.clone().map(Value::from));
    p.extend(meta.extra.clone());
    let line = envelope(
        line.v.clone().unwrap_or(1.into()),
        line.seq.clone().unwrap_or(1.into()),
        line.ts
            .clone()
            .or_else(|| meta.start_time.clone().map(Value::from))?,
        "session_start",
        Value::Object(ordered(p, START)),
        &Map::new(),
    );
    serde_json::to_vec(&line).ok()
}

fn envelope(
    v: Value,
    seq: Value,
    ts: Value,
    kind: &str,
    payload: Value,
    extra: &Map<String, Value>,
) -> Value {
    let mut o = Map::new();
    o.insert("v".into(), v);
    o.insert("seq".into(), seq);
    o.insert("ts".into(), ts);
    o.insert("type".into(), kind.into());
    o.insert("payload".into(), payload);
    o.extend(extra.clone());
    Value::Object(o)
}

/// The line of a node read from this format, rebuilt with what its line kept; `None` when the
/// line had no `seq` or the node has no llxprt line.
pub(super) fn line_text(node: &Node, kept: &Kept) -> Option<Vec<u8>> {
    if let Body::Event(Event::Custom { kind, data }) = &node.body
        && kind == RECORD
    {
        return serde_json::to_vec(data).ok();
    }
    let seq = kept.seq.clone()?;
    let v = kept.v.clone().unwrap_or(1.into());
    let ts = Value::from(node.timestamp.clone()?);
    let (kind, payload) = match &node.body {
        Body::Message(m) => match severity(m.role) {
            Some(sev) => {
                let [p] = m.parts.as_slice() else { return None };
                let Content::Text { text } = &p.content else {
                    return None;
                };
                if !m.extra.is_empty() || !p.extra.is_empty() {
                    return None;
                }
                (
                    "session_event".to_string(),
                    json!({"severity": sev, "message": text}),
                )
            }
            None => {
                let keys = kept.metadata.as_deref();
                let mut lost = Vec::new();
                let c = build_icontent(m, speaker_of(m.role), keys, &mut lost);
                ("content".to_string(), json!({ "content": c }))
            }
        },
        Body::Event(e) => event_payload(e, kept.kind.as_deref())?,
    };
    serde_json::to_vec(&envelope(v, seq, ts, &kind, payload, &node.extra)).ok()
}
