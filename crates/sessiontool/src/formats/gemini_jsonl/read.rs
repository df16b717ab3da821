//! Lines to the session: replay the records as the CLI's reader does, then map the resulting
//! messages as `gemini-json` does.

use crate::formats::record_value;
use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::super::gemini_json::origin::{message_origin, with_origin};
use super::super::gemini_json::{message_nodes, record_meta};
use super::super::{Input, ReadError, ReadOutcome, record_diagnostics};
use super::NAME;
use crate::diag::{Diagnostic, Location, Severity};
use crate::model::{Node, Origin, Session};
use crate::records::{Options, split_slice};

/// What the replay leaves: the metadata as merged, and the messages by id in their order.
#[derive(Default)]
struct Replay {
    metadata: Map<String, Value>,
    messages: IndexMap<String, Value>,
    has_header: bool,
}

impl Replay {
    /// Appends a message, or replaces an earlier one with the same id in its place.
    fn put(&mut self, id: String, record: Value) {
        self.messages.insert(id, record);
    }

    /// Adds the MessageRecords of a list (those with a string `id`, as the CLI does).
    fn put_all(&mut self, list: &[Value]) {
        for m in list {
            if let Some(id) = m.get("id").and_then(Value::as_str) {
                self.put(id.to_string(), m.clone());
            }
        }
    }

    fn merge(&mut self, fields: &Map<String, Value>) {
        for (k, v) in fields {
            self.metadata.insert(k.clone(), v.clone());
        }
    }
}

pub(super) fn read(input: &Input) -> Result<ReadOutcome, ReadError> {
    let (records, findings) = split_slice(input.bytes, Options::default());
    let mut diagnostics = record_diagnostics(input.name, &findings);
    let mut replay = Replay::default();
    // The records as read (each line's text, its end and any damage left out), for this
    // format's writer to give back: the session's origin.
    let mut lines = Vec::with_capacity(input.bytes.len());
    for rec in &records {
        let at = Location::at(input.name, rec.span.line, rec.span.offset);
        let text = String::from_utf8_lossy(&rec.bytes);
        let value = record_value(text.as_bytes(), &at, &mut diagnostics).ok();
        lines.extend_from_slice(text.as_bytes());
        lines.push(b'\n');
        let Some(Value::Object(o)) = value else {
            diagnostics.push(not_a_record(at));
            continue;
        };
        if let Some(Value::String(target)) = o.get("$rewindTo") {
            match replay.messages.get_index_of(target.as_str()) {
                Some(i) => replay.messages.truncate(i),
                None => {
                    diagnostics.push(rewind_unknown(at, target));
                    replay.messages.clear();
                }
            }
        } else if let Some(Value::String(id)) = o.get("id") {
            replay.put(id.clone(), Value::Object(o));
        } else if let Some(Value::Object(set)) = o.get("$set") {
            if let Some(Value::Array(list)) = set.get("messages") {
                replay.messages.clear();
                replay.put_all(list);
            }
            replay.merge(set);
        } else if o.get("sessionId").is_some_and(Value::is_string)
            && o.get("projectHash").is_some_and(Value::is_string)
        {
            replay.has_header = true;
            if let Some(Value::Array(list)) = o.get("messages") {
                replay.put_all(list);
            }
            replay.merge(&o);
        } else {
            diagnostics.push(unknown_record(at));
        }
    }
    if !replay.has_header && !replay.messages.is_empty() {
        diagnostics.push(no_header(Location::file(input.name)));
    }

    if !input.bytes.ends_with(b"\n") {
        lines.pop();
    }
    let mut fields = replay.metadata;
    // Messages live in the list; the metadata only has them when `$set` replaced it.
    fields.shift_remove("messages");
    let mut meta = record_meta(fields, NAME);
    meta.origin = Some(Origin::new(NAME, &lines));
    let mut nodes: Vec<Node> = Vec::with_capacity(replay.messages.len() * 2);
    let mut seen = std::collections::HashSet::new();
    for (i, (_, m)) in replay.messages.into_iter().enumerate() {
        // Messages are unique by id here: only `<id>.results` can collide with one.
        let parent = nodes.last().map(|n| n.id.clone());
        let origin = message_origin(&m);
        let new = message_nodes(m, i, parent, &mut seen, &mut diagnostics, input.name);
        let new = with_origin(new, Some(origin));
        nodes.extend(new);
    }
    Ok(ReadOutcome {
        session: Session { meta, nodes },
        diagnostics,
    })
}

/// What is said of a line that is no JSON object.
pub(super) fn not_a_record(at: Location) -> Diagnostic {
    warning(
        "gemini-jsonl-not-a-record",
        at,
        "line is not a JSON object; Gemini CLI ignores it (kept as is)".into(),
    )
}

/// What is said of a `$rewindTo` naming no message the session holds.
pub(super) fn rewind_unknown(at: Location, target: &str) -> Diagnostic {
    warning(
        "gemini-jsonl-rewind-unknown",
        at,
        format!(
            "`$rewindTo` names message {target:?}, which the session does not hold: Gemini CLI empties the whole session here"
        ),
    )
}

/// What is said of an object the CLI's reader does not know.
pub(super) fn unknown_record(at: Location) -> Diagnostic {
    warning(
        "gemini-jsonl-unknown-record",
        at,
        "line is neither a message, a header, `$set` nor `$rewindTo`; Gemini CLI ignores it (kept as is)".into(),
    )
}

/// What is said of a session with messages and no header.
pub(super) fn no_header(at: Location) -> Diagnostic {
    warning(
        "gemini-jsonl-no-header",
        at,
        "no header line gives `sessionId` and `projectHash`: Gemini CLI would not load this session as JSONL".into(),
    )
}

fn warning(code: &'static str, location: Location, message: String) -> Diagnostic {
    Diagnostic {
        code,
        severity: Severity::Warning,
        location,
        message,
    }
}
