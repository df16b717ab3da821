//! The rows of one session, fetched in the order OpenCode reads them (`message-v2.ts`):
//! messages by `(time_created, id)`, parts by `(message_id, id)`.

use rusqlite::types::ValueRef;
use serde_json::{Map, Value};

use super::open::Db;
use crate::formats::ReadError;

/// A `message` or `part` row; `data` is the column's text (`None` when it is not text).
#[derive(Debug)]
pub(crate) struct Row {
    pub id: String,
    pub message_id: Option<String>,
    pub time_created: Option<i64>,
    pub data: Option<String>,
}

/// Every column of the `session` row named `id` (columns differ between OpenCode versions),
/// as JSON: text, numbers and nulls as they are.
pub(crate) fn session(db: &Db, id: &str) -> Result<Option<Map<String, Value>>, ReadError> {
    let mut stmt = db
        .conn
        .prepare("SELECT * FROM session WHERE id = ?1")
        .map_err(|e| db.error(e))?;
    let names: Vec<String> = stmt.column_names().map(String::from).collect();
    let mut rows = stmt.query([id]).map_err(|e| db.error(e))?;
    let Some(row) = rows.next().map_err(|e| db.error(e))? else {
        return Ok(None);
    };
    let mut out = Map::new();
    for (i, name) in names.iter().enumerate() {
        let v = row.get_ref(i).map_err(|e| db.error(e))?;
        out.insert(name.clone(), column_value(v));
    }
    Ok(Some(out))
}

pub(crate) fn column_value(v: ValueRef) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::from(n),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(format!("<{} bytes of binary data>", b.len())),
    }
}

fn text(v: ValueRef) -> Option<String> {
    match v {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    }
}

/// The session's messages, as OpenCode orders them.
pub(crate) fn messages(db: &Db, session: &str) -> Result<Vec<Row>, ReadError> {
    query(
        db,
        "SELECT id, NULL, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id",
        session,
    )
}

/// The parts of the session's messages, by `(message_id, id)`: OpenCode finds a message's
/// parts by `message_id`, whatever their own `session_id` says.
pub(crate) fn parts(db: &Db, session: &str) -> Result<Vec<Row>, ReadError> {
    query(
        db,
        "SELECT id, message_id, time_created, data FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = ?1) ORDER BY message_id, id",
        session,
    )
}

/// Parts that name this session but whose message is not there: OpenCode never shows them.
pub(crate) fn orphan_parts(db: &Db, session: &str) -> Result<Vec<Row>, ReadError> {
    query(
        db,
        "SELECT p.id, p.message_id, p.time_created, NULL FROM part p WHERE p.session_id = ?1 AND NOT EXISTS (SELECT 1 FROM message m WHERE m.id = p.message_id) ORDER BY p.message_id, p.id",
        session,
    )
}

fn query(db: &Db, sql: &str, session: &str) -> Result<Vec<Row>, ReadError> {
    let mut stmt = db.conn.prepare(sql).map_err(|e| db.error(e))?;
    let rows = stmt
        .query_map([session], |r| {
            Ok(Row {
                id: text(r.get_ref(0)?).unwrap_or_default(),
                message_id: text(r.get_ref(1)?),
                time_created: r.get_ref(2)?.as_i64().ok(),
                data: text(r.get_ref(3)?),
            })
        })
        .map_err(|e| db.error(e))?;
    rows.collect::<Result<_, _>>().map_err(|e| db.error(e))
}

/// How many rows of `session_message` (created by OpenCode 1.18, empty there) the session has;
/// 0 when the table is not there.
pub(crate) fn session_message_rows(db: &Db, session: &str) -> Result<u64, ReadError> {
    if !super::open::has_table(db, "session_message")? {
        return Ok(0);
    }
    db.conn
        .query_row(
            "SELECT count(*) FROM session_message WHERE session_id = ?1",
            [session],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n.max(0) as u64)
        .map_err(|e| db.error(e))
}
