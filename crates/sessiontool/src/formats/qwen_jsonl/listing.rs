//! A quick reading of a Qwen Code session for `list` ([`Format::read_listing`]): the same nodes,
//! tree, metadata, title and message texts the full reader ([`super::read`]) gives, without
//! building the whole model.
//!
//! [`Format::read_listing`]: crate::formats::Format::read_listing
//!
//! The full reader parses every record into a `serde_json::Value`, maps it to the model and
//! rebuilds it to record layout hints; on a large store that is most of `list`'s time. Here each
//! record is parsed once into the few fields `list` looks at, strings borrowed from the file.
//! The rules are the full reader's, field by field:
//! - a record is placed by its `uuid` (a string); records sharing one are merged as Qwen Code
//!   does: `parentUuid` and `type` from the first, `message.parts` concatenated, any other field
//!   from the first record that has it;
//! - anything else (not an object, no string `uuid`, unparseable) is kept whole as a node named
//!   `line-N` (`line-N.k` for the k-th record of a line) with no parent;
//! - the head is the uuid of the last record that has one; the session id, `cwd` and start time
//!   come from the first; the last update is the greatest `timestamp`;
//! - the title is the last string `systemPayload.customTitle` of a `system` record of subtype
//!   `custom_title`.
//!
//! The tests hold this reading to the full reader's output, on fixtures, their prefixes and
//! generated sessions; a rule changed there and not here fails them.
//!
//! Every value is parsed, not skipped, so a line fails here exactly when it fails to parse as a
//! `Value` (numbers out of range, nesting too deep, bad UTF-8 in a string). The one thing
//! `Value` treats specially (an object key that is serde_json's private raw-value token) makes
//! this reading give up, and the caller reads the file in full.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::formats::Listing;
use crate::model::{Body, Event, Extra, Message, Meta, Node, Role, Session};
use crate::records::{Options, lines_of, split_slice};

/// The key `serde_json::Value` reads as a raw value instead of an object.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";
/// The error that makes the quick reading give up.
const GIVE_UP: &str = "sessiontool: raw value token";

/// Reads `bytes` (a qwen-jsonl file); `None` when only the full reader can say what they hold.
pub(super) fn read(bytes: &[u8]) -> Option<Listing> {
    // Most files are clean: each line one record, which parses. Such a line is exactly the
    // record the splitter would give (it parses, so it is valid UTF-8 without NUL or BOM, and
    // the splitter's trimming only removes whitespace), so the lines are parsed as they are
    // and the splitter runs only on files where one does not parse.
    let max_line_len = Options::default().max_line_len;
    let mut lines = Vec::new();
    let mut clean = true;
    for (content, line, _, _) in lines_of(bytes, 1, 0) {
        if content.len() > max_line_len {
            clean = false;
            break;
        }
        match parse(content) {
            Some(Ok(parsed)) => lines.push((line, parsed)),
            Some(Err(())) => {
                clean = false;
                break;
            }
            None => return None,
        }
    }
    if clean {
        return Some(assemble(lines));
    }
    drop(lines);
    let (records, _) = split_slice(bytes, Options::default());
    let mut lines = Vec::with_capacity(records.len());
    for rec in &records {
        let parsed = parse(&rec.bytes)?.unwrap_or(Line(None));
        lines.push((rec.span.line, parsed));
    }
    Some(assemble(lines))
}

/// One record's fields; `Err` when it does not parse, `None` when only the full reader can
/// tell what it holds.
fn parse(bytes: &[u8]) -> Option<Result<Line<'_>, ()>> {
    match serde_json::from_slice::<Line>(bytes) {
        Ok(line) => Some(Ok(line)),
        Err(e) if e.is_data() && e.to_string().contains(GIVE_UP) => None,
        // JSON that serde_json refuses but Qwen Code's JSON.parse takes (a lone surrogate
        // escape, a number beyond a double): the full reader reads it.
        Err(_) if crate::json::scan::validate(bytes).is_ok() => None,
        Err(_) => Some(Err(())),
    }
}

/// The session of these records (each with its line number), in file order.
fn assemble(lines: Vec<(u64, Line)>) -> Listing {
    let mut slots: Vec<Slot> = Vec::with_capacity(lines.len());
    let mut groups: Vec<Group> = Vec::new();
    let mut by_uuid: HashMap<Cow<str>, usize> = HashMap::new();
    let mut per_line: HashMap<u64, usize> = HashMap::new();
    let mut head: Option<Cow<str>> = None;
    let mut first: Option<(Field, Field, Field)> = None;
    let mut last_updated: Option<Cow<str>> = None;
    for (line, parsed) in lines {
        let r = match parsed {
            Line(Some(
                r @ Record {
                    uuid: Field::Str(_),
                    ..
                },
            )) => r,
            _ => {
                // Kept whole, named by its line.
                let n = per_line.entry(line).or_insert(0);
                *n += 1;
                slots.push(Slot::Whole(match *n {
                    1 => format!("line-{line}"),
                    k => format!("line-{line}.{k}"),
                }));
                continue;
            }
        };
        let Field::Str(uuid) = r.uuid else {
            unreachable!("matched above")
        };
        if let Field::Str(ts) = &r.timestamp
            && last_updated.as_deref().is_none_or(|l| l < ts.as_ref())
        {
            last_updated = Some(ts.clone());
        }
        head = Some(uuid.clone());
        if first.is_none() {
            first = Some((r.session_id, r.cwd, r.timestamp));
        }
        match by_uuid.get(&uuid) {
            Some(&g) => {
                let g = &mut groups[g];
                if !g.subtype.is_present() {
                    g.subtype = r.subtype;
                }
                if g.payload.is_none() {
                    g.payload = r.payload;
                }
                g.message.merge(r.message);
            }
            None => {
                by_uuid.insert(uuid.clone(), groups.len());
                slots.push(Slot::Group(groups.len()));
                groups.push(Group {
                    uuid,
                    parent: r.parent,
                    kind: r.kind,
                    subtype: r.subtype,
                    payload: r.payload,
                    message: r.message,
                });
            }
        }
    }

    let mut nodes = Vec::with_capacity(slots.len());
    let mut texts = Vec::with_capacity(slots.len());
    let mut title = None;
    let mut groups: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    for slot in slots {
        let (id, parent, body, text) = match slot {
            Slot::Whole(id) => (id, None, custom(), None),
            Slot::Group(g) => {
                let g = groups[g].take().expect("each group has one slot");
                let kind = g.kind.as_str().unwrap_or("");
                let role = match kind {
                    "user" => Some(Role::User),
                    "assistant" => Some(Role::Assistant),
                    "tool_result" => Some(Role::Tool),
                    _ => None,
                };
                let body = match role {
                    Some(role) => Body::Message(Message::new(role, Vec::new())),
                    None => {
                        if kind == "system"
                            && g.subtype.as_str() == Some("custom_title")
                            && let Some(Some(t)) = &g.payload
                        {
                            title = Some(t.to_string());
                        }
                        custom()
                    }
                };
                let text = (role == Some(Role::User)).then(|| g.message.texts());
                let parent = g.parent.as_str().map(String::from);
                (g.uuid.into_owned(), parent, body, text)
            }
        };
        nodes.push(Node {
            id,
            parent,
            timestamp: None,
            body,
            extra: Extra::new(),
            hints: Extra::new(),
        });
        texts.push(text);
    }
    let (session_id, cwd, start_time) = first.unwrap_or_default();
    let meta = Meta {
        id: session_id.as_str().map(String::from),
        cwd: cwd.as_str().map(String::from),
        start_time: start_time.as_str().map(String::from),
        last_updated: last_updated.map(Cow::into_owned),
        title,
        head: head.map(Cow::into_owned),
        ..Meta::default()
    };
    Listing {
        session: Session { meta, nodes },
        texts,
    }
}

/// An event `list` does not look into.
fn custom() -> Body {
    Body::Event(Event::Custom {
        kind: String::new(),
        data: Value::Null,
    })
}

enum Slot {
    Whole(String),
    Group(usize),
}

/// The records of one uuid, merged.
struct Group<'a> {
    uuid: Cow<'a, str>,
    parent: Field<'a>,
    kind: Field<'a>,
    subtype: Field<'a>,
    payload: Option<Option<Cow<'a, str>>>,
    message: Msg<'a>,
}

/// A field read only for its string value.
#[derive(Default)]
enum Field<'a> {
    #[default]
    Absent,
    Str(Cow<'a, str>),
    Other,
}

impl Field<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }

    fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }
}

/// A record's `message`: only its text parts matter.
#[derive(Default)]
enum Msg<'a> {
    #[default]
    Absent,
    Other,
    Object(Parts<'a>),
}

/// A message's `parts`: the texts of its text parts, in order.
#[derive(Default)]
enum Parts<'a> {
    #[default]
    Absent,
    Other,
    Array(Vec<Cow<'a, str>>),
}

impl<'a> Msg<'a> {
    /// Merges a later record's message into this one, as the full reader's `merge` does.
    fn merge(&mut self, later: Msg<'a>) {
        match (self, later) {
            (_, Msg::Absent) => {}
            (this @ Msg::Absent, later) => *this = later,
            (Msg::Object(mine), Msg::Object(theirs)) => match (mine, theirs) {
                (Parts::Array(a), Parts::Array(b)) => a.extend(b),
                (this @ Parts::Absent, theirs) => *this = theirs,
                _ => {}
            },
            _ => {}
        }
    }

    fn texts(self) -> Vec<String> {
        match self {
            Msg::Object(Parts::Array(texts)) => texts.into_iter().map(Cow::into_owned).collect(),
            _ => Vec::new(),
        }
    }
}

/// One line: a record (an object), or `None` for any other value.
struct Line<'a>(Option<Record<'a>>);

#[derive(Default)]
struct Record<'a> {
    uuid: Field<'a>,
    parent: Field<'a>,
    kind: Field<'a>,
    timestamp: Field<'a>,
    session_id: Field<'a>,
    cwd: Field<'a>,
    subtype: Field<'a>,
    /// `systemPayload`: `None` when absent, else its `customTitle` when that is a string.
    payload: Option<Option<Cow<'a, str>>>,
    message: Msg<'a>,
}

/// The next key of an object; gives up on the raw-value token.
fn next_key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    match map.next_key::<Key>()? {
        Some(Key(k)) if k == RAW_VALUE_TOKEN => Err(de::Error::custom(GIVE_UP)),
        Some(Key(k)) => Ok(Some(k)),
        None => Ok(None),
    }
}

/// Declares how a type is read from any JSON value (always through `deserialize_any`, as a
/// `Value` is, so that the same inputs fail), with the visitor methods given; the
/// `not_*` macros below fill in the kinds of value the type only notes.
macro_rules! from_any {
    ($ty:ty, $visitor:ident, $($body:tt)*) => {
        struct $visitor;
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($visitor)
            }
        }
        impl<'de> Visitor<'de> for $visitor {
            type Value = $ty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            $($body)*
        }
    };
}

/// Numbers and null give `$v`.
macro_rules! not_number {
    ($v:expr) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

macro_rules! not_bool {
    ($v:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

macro_rules! not_str {
    ($v:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

/// An array is parsed to its end and gives `$v`.
macro_rules! not_seq {
    ($v:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok($v)
        }
    };
}

/// An object is parsed to its end and gives `$v`.
macro_rules! not_map {
    ($v:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while next_key(&mut map)?.is_some() {
                map.next_value::<Skip>()?;
            }
            Ok($v)
        }
    };
}

/// A string gives `$make(Cow<str>)`, borrowed when it has no escapes.
macro_rules! str_to {
    ($make:expr) => {
        fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
            Ok($make(Cow::Borrowed(s)))
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
            Ok($make(Cow::Owned(s.to_owned())))
        }
    };
}

/// Any JSON value, parsed and dropped.
struct Skip;
from_any!(Skip, SkipVisitor,
    not_bool!(Skip);
    not_number!(Skip);
    not_str!(Skip);
    not_seq!(Skip);
    not_map!(Skip);
);

/// An object key.
struct Key<'a>(Cow<'a, str>);
from_any!(Key<'de>, KeyVisitor,
    str_to!(Key);
);

from_any!(Field<'de>, FieldVisitor,
    not_bool!(Field::Other);
    not_number!(Field::Other);
    str_to!(Field::Str);
    not_seq!(Field::Other);
    not_map!(Field::Other);
);

/// Whether a value is `true`.
struct IsTrue(bool);
from_any!(IsTrue, IsTrueVisitor,
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(IsTrue(b))
    }
    not_number!(IsTrue(false));
    not_str!(IsTrue(false));
    not_seq!(IsTrue(false));
    not_map!(IsTrue(false));
);

/// A part: its text when it is a text part (a string, or an object with a string `text` that
/// is not a thought), as `gemini_content::part_from_json` decides.
struct PartText<'a>(Option<Cow<'a, str>>);
from_any!(PartText<'de>, PartTextVisitor,
    not_bool!(PartText(None));
    not_number!(PartText(None));
    str_to!(|s| PartText(Some(s)));
    not_seq!(PartText(None));
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut text = Field::Absent;
        let mut thought = false;
        // A repeated key keeps its last value, as in a `Value`.
        while let Some(k) = next_key(&mut map)? {
            match &*k {
                "text" => text = map.next_value()?,
                "thought" => thought = map.next_value::<IsTrue>()?.0,
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(PartText(match text {
            Field::Str(s) if !thought => Some(s),
            _ => None,
        }))
    }
);

from_any!(Parts<'de>, PartsVisitor,
    not_bool!(Parts::Other);
    not_number!(Parts::Other);
    not_str!(Parts::Other);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(PartText(t)) = seq.next_element()? {
            texts.extend(t);
        }
        Ok(Parts::Array(texts))
    }
    not_map!(Parts::Other);
);

from_any!(Msg<'de>, MsgVisitor,
    not_bool!(Msg::Other);
    not_number!(Msg::Other);
    not_str!(Msg::Other);
    not_seq!(Msg::Other);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut parts = Parts::Absent;
        while let Some(k) = next_key(&mut map)? {
            if k == "parts" {
                parts = map.next_value()?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(Msg::Object(parts))
    }
);

/// `systemPayload`: its `customTitle` when it is an object with a string one.
struct Payload<'a>(Option<Cow<'a, str>>);
from_any!(Payload<'de>, PayloadVisitor,
    not_bool!(Payload(None));
    not_number!(Payload(None));
    not_str!(Payload(None));
    not_seq!(Payload(None));
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut title = Field::Absent;
        while let Some(k) = next_key(&mut map)? {
            if k == "customTitle" {
                title = map.next_value()?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(Payload(match title {
            Field::Str(s) => Some(s),
            _ => None,
        }))
    }
);

from_any!(Line<'de>, LineVisitor,
    not_bool!(Line(None));
    not_number!(Line(None));
    not_str!(Line(None));
    not_seq!(Line(None));
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = Record::default();
        while let Some(k) = next_key(&mut map)? {
            match &*k {
                "uuid" => r.uuid = map.next_value()?,
                "parentUuid" => r.parent = map.next_value()?,
                "type" => r.kind = map.next_value()?,
                "timestamp" => r.timestamp = map.next_value()?,
                "sessionId" => r.session_id = map.next_value()?,
                "cwd" => r.cwd = map.next_value()?,
                "subtype" => r.subtype = map.next_value()?,
                "systemPayload" => r.payload = Some(map.next_value::<Payload>()?.0),
                "message" => r.message = map.next_value()?,
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Line(Some(r)))
    }
);

#[cfg(test)]
mod tests;
