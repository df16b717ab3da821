//! The session to lines: the file's own lines while the session still reads as it did, else the
//! layout the CLI writes when it rewrites a session (header, messages, scratchpad).

use serde_json::{Map, Value};

use super::super::gemini_json::{self, GeminiJson};
use super::super::{Input, WriteError, WriteOptions, Writer, Written, ordered};
use super::{NAME, read};
use crate::diag::LossReport;
use crate::model::{Origin, Session};

/// The header's key order: `initialize()` writes sessionId, projectHash, startTime, lastUpdated,
/// kind, directories; migrating a legacy session adds summary.
const HEADER_ORDER: &[&str] = &[
    "sessionId",
    "projectHash",
    "startTime",
    "lastUpdated",
    "kind",
    "directories",
    "summary",
];

pub(super) fn write(session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
    if let Some(bytes) = as_read(session, options) {
        return Ok(Written {
            bytes,
            losses: LossReport::default(),
        });
    }
    // gemini-json's writer keeps the fields and layout hints of its own sessions; a session
    // read from this format carries the same ones (its messages were mapped by that reader).
    let mut session = session.clone();
    if session.meta.source_format.as_deref() == Some(NAME) {
        session.meta.source_format = Some(gemini_json::NAME.into());
        session.meta.origin = None;
    }
    let written = GeminiJson.write(&session, options)?;
    let Ok(Value::Object(mut root)) = serde_json::from_slice::<Value>(&written.bytes) else {
        return Err(WriteError(
            "gemini-json wrote something that is not a JSON object".into(),
        ));
    };
    let messages = match root.shift_remove("messages") {
        Some(Value::Array(m)) => m,
        _ => Vec::new(),
    };
    let scratchpad = root.shift_remove("memoryScratchpad");
    let mut out = Vec::with_capacity(written.bytes.len());
    header_line(root, &mut out);
    for m in &messages {
        push_line(&mut out, m);
    }
    scratchpad_line(scratchpad, &mut out);
    Ok(Written {
        bytes: out,
        losses: written.losses,
    })
}

/// The header line of a session whose legacy document is `root` without its messages and
/// scratchpad.
pub(crate) fn header_line(root: Map<String, Value>, out: &mut Vec<u8>) {
    push_line(out, &Value::Object(ordered(root, HEADER_ORDER)));
}

/// The line that gives the session its scratchpad, after its messages: `{"$set":
/// {"memoryScratchpad": ...}}`, when it has one the CLI writes (a truthy one).
pub(crate) fn scratchpad_line(pad: Option<Value>, out: &mut Vec<u8>) {
    if let Some(pad) = pad.filter(truthy) {
        let mut set = Map::new();
        set.insert("memoryScratchpad".into(), pad);
        let mut line = Map::new();
        line.insert("$set".into(), Value::Object(set));
        push_line(out, &Value::Object(line));
    }
}

/// The file's own records (the session's origin), when the session was read from them and
/// still reads the same.
fn as_read(session: &Session, options: &WriteOptions) -> Option<Vec<u8>> {
    let meta = &session.meta;
    if meta.source_format.as_deref() != Some(NAME) || options.leaf.is_some() {
        return None;
    }
    let bytes = Origin::of(&meta.origin, NAME)?.to_vec();
    let again = read::read(&Input {
        name: "",
        path: None,
        bytes: &bytes,
    })
    .ok()?
    .session;
    (again == *session).then_some(bytes)
}

/// JavaScript truthiness of a JSON value (the CLI writes the scratchpad only when truthy).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `JSON.stringify(record) + "\n"`: a line of the recording.
pub(crate) fn push_line(out: &mut Vec<u8>, value: &Value) {
    serde_json::to_writer(&mut *out, value).expect("a Value always serializes");
    out.push(b'\n');
}
