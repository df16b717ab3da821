//! Gemini CLI's JSONL recording read in two passes by the engine: pass one replays the lines as
//! [`read`](super::read::read) replays them (a message's first place and last value, `$set`,
//! `$set.messages`, `$rewindTo`, the header) keeping of each message only where its last
//! value is, and the metadata as merged; then the messages the replay leaves are read once
//! more, in order, into their nodes with the legacy reader's code
//! ([`gemini_json::two_pass::Messages`]), keeping their ids, parents and kinds. Pass two reads
//! a message again when one of its nodes is wanted. What comes out is what `read` gives, node
//! for node, in memory bounded by the number of lines and messages, never by their content;
//! but for the file's lines, which `read` keeps for its own writer (the view writes nothing,
//! and the engine writes this format through the whole path).
//!
//! A list of messages (in `$set` or the header) on a line that held invalid UTF-8 has no
//! places in the file to read its messages from again: [`Known`] is then `None`, and the
//! whole reader reads the session.

use std::io;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::super::gemini_json::record_meta;
use super::super::gemini_json::two_pass::{Known, Messages};
use super::NAME;
use super::read::{no_header, not_a_record, rewind_unknown, unknown_record};
use crate::diag::{Diagnostic, Location};
use crate::engine::pass1::{Noted, Pass1, Scan, Spot};
use crate::engine::{Source, pass2};
use crate::formats::lossy_diagnostic;
use crate::json::value::{to_value, to_value_within};
use crate::json::{Kind, Raw};
use crate::records::Span;

/// Pass one over the recording named `name` (in diagnostics), read from `source` (the
/// messages the replay leaves are read again from it at the end).
pub(crate) struct Scanner<'n> {
    pub name: &'n str,
    pub source: &'n dyn Source,
    /// Keep where every line is ([`Recording::lines`]), to write them back as they are.
    pub lines: bool,
}

/// What pass one knows of a recording.
pub(crate) struct Recording {
    pub known: Known,
    /// Its lines, when asked for.
    pub lines: Option<Lines>,
}

/// A recording's lines (its records), for writing them back as the whole writer gives them
/// back when nothing changed: one after another, each ended by a line break, but the last when
/// the file had none.
pub(crate) struct Lines {
    pub spots: Vec<Spot>,
    /// The records layer found nothing to say (no line glued, padded, cut, blank or CRLF).
    pub clean: bool,
    pub final_newline: bool,
}

/// Where a message's last value is: its line (a record number), and where in the line.
#[derive(Clone, Copy)]
struct Place {
    record: u32,
    /// Offset and length in the file of a message in a list (a message line is all message).
    within: Option<(u64, u32)>,
    /// How deep the message lies in its line: 0 for a message line, 2 in the header's list,
    /// 3 in `$set.messages`.
    depth: u8,
}

/// A message in a list (the header's or `$set.messages`): its id and where it is in the line.
struct Listed {
    id: Box<str>,
    offset: u64,
    len: u32,
}

/// What a line does to the session, as the CLI's reader tests it.
enum Line {
    /// Nothing (what it is has been said).
    Nothing,
    /// `$rewindTo` a message.
    Rewind(Box<str>),
    /// A message (its line is its place).
    Message(Box<str>),
    /// `$set`: fields merged into the metadata, and the list that replaces every message.
    Set(Map<String, Value>, Option<Vec<Listed>>),
    /// The header: its fields merged, and the messages it lists added.
    Header(Map<String, Value>, Option<Vec<Listed>>),
}

/// What pass one keeps of a line within its block.
struct Rec {
    line: Line,
    /// Where the line is (for a rewind's words).
    at: (u64, u64),
    /// What reading it said, before what the replay says of it.
    said: Vec<Diagnostic>,
}

#[derive(Default)]
pub(crate) struct Block {
    recs: Vec<Rec>,
    /// A list of messages on a line whose text is not the file's bytes.
    unplaceable: bool,
}

/// The replay so far.
#[derive(Default)]
pub(crate) struct Acc {
    said: Vec<Diagnostic>,
    metadata: Map<String, Value>,
    messages: IndexMap<Box<str>, Place>,
    has_header: bool,
    unplaceable: bool,
}

impl Acc {
    /// Adds (or replaces in its place) each message of a list, at `depth` in line `record`.
    fn put_all(&mut self, list: Vec<Listed>, record: u32, depth: u8) {
        for m in list {
            let within = Some((m.offset, m.len));
            let place = Place {
                record,
                within,
                depth,
            };
            self.messages.insert(m.id, place);
        }
    }

    fn merge(&mut self, fields: Map<String, Value>) {
        for (k, v) in fields {
            self.metadata.insert(k, v);
        }
    }
}

impl Scan for Scanner<'_> {
    type Block = Block;
    type Acc = Acc;
    type Known = io::Result<Option<Recording>>;

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        let raw = record.raw;
        let at = || Location::at(self.name, span.line, span.offset);
        let mut rec = Rec {
            line: Line::Nothing,
            at: (span.line, span.offset),
            said: Vec::new(),
        };
        // Read as `record_value` reads it: a value built only when serde_json might read the
        // text otherwise than `JSON.parse`, to say so; the fields are read from `raw`.
        let mut parsed = true;
        if !record.facts.serde_reads_it() {
            match to_value(raw.text().as_bytes()) {
                Ok((_, lossy)) if !lossy.is_lossless() => {
                    rec.said.push(lossy_diagnostic(&lossy, at()));
                }
                Ok(_) => {}
                Err(_) => parsed = false,
            }
        }
        if !parsed || raw.kind() != Kind::Object {
            rec.said.push(not_a_record(at()));
            block.recs.push(rec);
            return;
        }
        let string = |r: Option<Raw>| r.and_then(|r| r.as_str()).map(|t| t.value.into_owned());
        let [rewind, id, set, session, project, messages] = record.pick([
            "$rewindTo",
            "id",
            "$set",
            "sessionId",
            "projectHash",
            "messages",
        ]);
        // Where a value of the line is in the file (the line's text is its bytes unless
        // `lossy`).
        let place = |v: Raw| {
            span.offset + (v.text().as_ptr() as usize - raw.text().as_ptr() as usize) as u64
        };
        let listed = |list: Option<Raw>, block: &mut Block| {
            let items = list.and_then(Raw::items)?;
            let mut out = Vec::new();
            for item in items {
                let Some(id) = string(item.get("id")) else {
                    continue;
                };
                block.unplaceable |= record.lossy;
                out.push(Listed {
                    id: id.into(),
                    offset: place(item),
                    len: item.text().len() as u32,
                });
            }
            Some(out)
        };
        rec.line = if let Some(target) = string(rewind) {
            Line::Rewind(target.into())
        } else if let Some(id) = string(id) {
            Line::Message(id.into())
        } else if let Some(set) = set.filter(|s| s.kind() == Kind::Object) {
            let [list] = record.pick_within(set, ["messages"]);
            match fields(set, 2) {
                Some(fields) => Line::Set(fields, listed(list, block)),
                None => {
                    block.unplaceable = true;
                    Line::Nothing
                }
            }
        } else if string(session).is_some() && string(project).is_some() {
            match fields(raw, 1) {
                Some(fields) => Line::Header(fields, listed(messages, block)),
                None => {
                    block.unplaceable = true;
                    Line::Nothing
                }
            }
        } else {
            rec.said.push(unknown_record(at()));
            Line::Nothing
        };
        block.recs.push(rec);
    }

    fn merge(&self, acc: &mut Acc, block: &mut Block, first: usize) {
        let block = std::mem::take(block);
        acc.unplaceable |= block.unplaceable;
        for (k, rec) in block.recs.into_iter().enumerate() {
            acc.said.extend(rec.said);
            let record = (first + k) as u32;
            match rec.line {
                Line::Nothing => {}
                Line::Rewind(target) => match acc.messages.get_index_of(&target) {
                    Some(i) => acc.messages.truncate(i),
                    None => {
                        let (line, offset) = rec.at;
                        let at = Location::at(self.name, line, offset);
                        acc.said.push(rewind_unknown(at, &target));
                        acc.messages.clear();
                    }
                },
                Line::Message(id) => {
                    let place = Place {
                        record,
                        within: None,
                        depth: 0,
                    };
                    acc.messages.insert(id, place);
                }
                Line::Set(fields, list) => {
                    if let Some(list) = list {
                        acc.messages.clear();
                        acc.put_all(list, record, 3);
                    }
                    acc.merge(fields);
                }
                Line::Header(fields, list) => {
                    acc.has_header = true;
                    if let Some(list) = list {
                        acc.put_all(list, record, 2);
                    }
                    acc.merge(fields);
                }
            }
        }
    }

    fn known(&self, pass: Pass1<Acc>, findings: Vec<Diagnostic>) -> io::Result<Option<Recording>> {
        let Pass1 {
            spots,
            acc,
            ends_with_newline,
            ..
        } = pass;
        if acc.unplaceable {
            return Ok(None);
        }
        let clean = findings.is_empty();
        let mut diagnostics = findings;
        diagnostics.extend(acc.said);
        if !acc.has_header && !acc.messages.is_empty() {
            diagnostics.push(no_header(Location::file(self.name)));
        }
        // Without the file's records as its origin (the whole reader's): they would hold the
        // whole file; the same-format route copies them from the file instead.
        let meta = record_meta(acc.metadata, NAME);

        // Each message where it is: a message line is its record, a listed message a piece
        // of its line (whose text is the file's bytes).
        let places: Vec<(Spot, u8)> = acc
            .messages
            .into_values()
            .map(|p| {
                let line = spots[p.record as usize];
                let spot = match p.within {
                    None => line,
                    Some((offset, len)) => Spot {
                        offset,
                        len,
                        ..line
                    },
                };
                (spot, p.depth)
            })
            .collect();
        let message_spots: Vec<Spot> = places.iter().map(|p| p.0).collect();
        let all: Vec<u32> = (0..places.len() as u32).collect();
        let mut messages = Messages::new(self.name);
        pass2::each_record(self.source, &message_spots, &all, |i, bytes| {
            let (spot, depth) = places[i as usize];
            // Read as the whole reader read it (pass one found that it reads).
            let value = to_value_within(bytes, usize::from(depth))
                .map(|(v, _)| v)
                .unwrap_or(Value::Null);
            messages.push(i as usize, value, spot, depth);
        })?;
        let lines = self.lines.then_some(Lines {
            spots,
            clean,
            final_newline: ends_with_newline,
        });
        Ok(Some(Recording {
            known: messages.known(meta, diagnostics),
            lines,
        }))
    }
}

/// The fields of `object` but `messages` (the list is the replay's), `depth` levels deep in
/// its line, as the whole reader reads them: a repeated key keeps its first place and its
/// last value. `None` when a value does not read (never, in a line that reads).
fn fields(object: Raw, depth: usize) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in object.entries()? {
        let key = key.name().value.into_owned();
        if key == "messages" {
            continue;
        }
        let (value, _) = to_value_within(value.text().as_bytes(), depth).ok()?;
        out.insert(key, value);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::reading::Reading;
    use crate::engine::{Bytes, MadeFor, pass1};
    use crate::formats::Input;

    const GEMINI_JSONL: &dyn crate::formats::Format = &super::super::GeminiJsonl;

    /// Pass one and pass two give what the whole reader gives (blocks of `block_size`): the
    /// metadata but the file's lines, the diagnostics in order, every node, the kinds, the
    /// unanswered calls; or nothing, and the whole reader reads the session.
    fn agrees_in(name: &str, bytes: &[u8], block_size: usize) -> bool {
        let input = Input {
            name,
            path: None,
            bytes,
        };
        let whole = GEMINI_JSONL
            .read(&input)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let source = Bytes(bytes);
        let scanner = Scanner {
            name,
            source: &source,
            lines: false,
        };
        let options = pass1::Pass1Options { block_size };
        let Some(Recording { known, .. }) = pass1::known(&source, name, &scanner, options)
            .unwrap()
            .unwrap()
        else {
            return false;
        };
        let session = &whole.session;
        let mut meta = session.meta.clone();
        assert!(meta.origin.take().is_some());
        assert_eq!(known.meta(), &meta, "{name}");
        assert_eq!(known.diagnostics(), whole.diagnostics, "{name}");
        assert_eq!(known.spots().len(), session.nodes.len(), "{name}");
        for (i, want) in session.nodes.iter().enumerate() {
            let s = known.spots()[i];
            let at = s.offset as usize;
            // As pass two gives them (invalid UTF-8 replaced).
            let record = crate::records::record_bytes(&bytes[at..at + s.len as usize], s.lossy);
            let got = known.node(i as u32, &record, MadeFor::OwnWriter);
            assert_eq!(&got, want, "{name}: node {i}");
            assert_eq!(known.is_message(i as u32), want.message().is_some());
            assert_eq!(known.timed(i as u32), want.timestamp.is_some());
        }
        let open = crate::check::document::unanswered_calls(session).len();
        assert_eq!(known.open_calls, open, "{name}");
        true
    }

    fn agrees(name: &str, bytes: &[u8]) -> bool {
        let default = pass1::Pass1Options::default().block_size;
        let small = agrees_in(name, bytes, 64);
        assert_eq!(small, agrees_in(name, bytes, default), "{name}");
        small
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let mut n = 0;
        for entry in std::fs::read_dir("fixtures/gemini-jsonl").unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert!(agrees(&path.display().to_string(), &bytes), "{path:?}");
            n += 1;
        }
        assert!(n >= 7, "{n}");
    }

    #[test]
    fn odd_recordings_read_as_the_whole_reader_reads_them() {
        let header = r#"{"sessionId":"s","projectHash":"p","startTime":"t0","lastUpdated":"t0"}"#;
        let m = |id: &str, text: &str| {
            format!(r#"{{"id":"{id}","timestamp":"t","type":"user","content":"{text}"}}"#)
        };
        let call = r#"{"id":"g","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls","args":{},"result":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"x"}}}],"status":"success"}]}"#;
        let recordings = [
            // Superseded versions, a rewind, an unknown rewind, `$set` with and without a list,
            // repeated keys, a lone surrogate, numbers beyond a double.
            [
                header.to_string(),
                m("a", "one"),
                m("b", "two"),
                m("a", "one again"),
                r#"{"$rewindTo":"b"}"#.to_string(),
                call.to_string(),
                r#"{"$set":{"lastUpdated":"t9","summary":"s","summary":"s2"}}"#.to_string(),
                m("c", "cut \\ud83d"),
                r#"{"id":"d","timestamp":"t","type":"gemini","content":"","tokens":{"input":1e400}}"#.to_string(),
            ]
            .join("\n"),
            [
                header.to_string(),
                m("a", "one"),
                format!(r#"{{"$set":{{"messages":[{},7,{{"id":5}},{call},{}],"directories":["/p"]}}}}"#, m("x", "listed"), m("x", "again")),
                m("y", "after"),
                r#"{"$rewindTo":"nothing"}"#.to_string(),
                m("z", "last"),
            ]
            .join("\n"),
            // A header listing messages, lines that are no object or unknown, blank and CRLF
            // lines, a torn last line, no final newline.
            format!(
                "{{\"sessionId\":\"s\",\"projectHash\":\"p\",\"messages\":[{},{}]}}\r\n\n[1]\n{{\"what\":1}}\n{}\n{call}\n{{\"id\":\"q\",\"ty",
                m("h1", "x"),
                m("h2", "y"),
                m("h1", "z")
            ),
            // No header.
            [m("a", "one"), m("b", "two")].join("\n"),
            // A message deeper than a tree of values takes, in a list and on its own.
            format!(
                "{header}\n{{\"$set\":{{\"messages\":[{{\"id\":\"a\",\"deep\":{}1{}}}]}}}}\n{{\"id\":\"b\",\"deep\":{}1{}}}\n",
                "[".repeat(507),
                "]".repeat(507),
                "[".repeat(510),
                "]".repeat(510)
            ),
            String::new(),
        ];
        for (k, text) in recordings.iter().enumerate() {
            assert!(agrees(&format!("odd {k}"), text.as_bytes()), "{text}");
        }
        // A list on a line holding invalid UTF-8 is the whole reader's.
        let mut bytes = format!(r#"{{"$set":{{"messages":[{}],"x":""#, m("a", "b")).into_bytes();
        bytes.extend_from_slice(b"\xff\"}}\n");
        assert!(!agrees("invalid utf-8", &bytes));
        // A message alone on such a line is not.
        let mut bytes = format!("{header}\n").into_bytes();
        bytes.extend_from_slice(b"{\"id\":\"a\",\"type\":\"user\",\"content\":\"\xff\"}\n");
        assert!(agrees("invalid utf-8 message", &bytes));
    }

    /// A small deterministic generator (xorshift), so a failure names its seed.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
            of[self.below(of.len() as u64) as usize]
        }
    }

    /// A message of the generator's: every type, ids repeated or named as another message's
    /// results, tool calls with and without results, lone surrogates, numbers beyond a double.
    fn message(r: &mut Rng, k: u64) -> String {
        let id = r.pick(&["a", "b", "a.results", "c", "b.results", "a#2", "d"]);
        let kind = r.pick(&["user", "gemini", "gemini", "info", "error", "odd"]);
        let text = r.pick(&["hi", "cut \\ud83d", "caf\\u00e9", ""]);
        let mut m = format!(
            "{{\"id\":\"{id}\",\"type\":\"{kind}\",\"timestamp\":\"t{k}\",\"content\":\"{text}\""
        );
        if r.below(3) == 0 {
            m.push_str(",\"tokens\":{\"input\":1e400,\"output\":2,\"total\":3}");
        }
        if kind == "gemini" && r.below(2) == 0 {
            let call = r.pick(&["c1", "c2", "c3"]);
            let result = match r.below(3) {
                0 => String::new(),
                _ => format!(
                    ",\"result\":[{{\"functionResponse\":{{\"id\":\"{call}\",\"name\":\"ls\",\"response\":{{\"output\":\"x\"}}}}}}],\"status\":\"success\""
                ),
            };
            m.push_str(&format!(
                ",\"toolCalls\":[{{\"id\":\"{call}\",\"name\":\"ls\",\"args\":{{}}{result}}}]"
            ));
        }
        if r.below(6) == 0 {
            m.push_str(",\"type\":\"user\"");
        }
        m.push('}');
        m
    }

    /// A recording of `seed`'s lines: headers (with lists or not), messages appended again,
    /// `$set` (fields, lists), rewinds to known and unknown ids, lines that are no record.
    fn generated(seed: u64) -> String {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut lines = Vec::new();
        if r.below(5) != 0 {
            lines.push(
                r#"{"sessionId":"s","projectHash":"p","startTime":"t0","kind":"main"}"#.to_string(),
            );
        }
        for k in 0..r.below(20) {
            let line = match r.below(16) {
                0 => format!("{{\"$rewindTo\":\"{}\"}}", r.pick(&["a", "b", "c", "zz"])),
                1 => {
                    let n = r.below(4);
                    let list: Vec<String> = (0..n).map(|j| message(&mut r, k * 10 + j)).collect();
                    format!(
                        "{{\"$set\":{{\"lastUpdated\":\"t{k}\",\"messages\":[{}]}}}}",
                        list.join(",")
                    )
                }
                2 => format!(
                    "{{\"$set\":{{\"summary\":\"s{k}\",\"memoryScratchpad\":{{\"n\":{k}}}}}}}"
                ),
                3 => "7".to_string(),
                4 => "{\"other\":true}".to_string(),
                5 => format!(
                    "{{\"sessionId\":\"s{k}\",\"projectHash\":\"p\",\"messages\":[{}]}}",
                    message(&mut r, k)
                ),
                6 => String::new(),
                _ => message(&mut r, k),
            };
            lines.push(line);
        }
        let mut text = lines.join("\n");
        if r.below(2) == 0 {
            text.push('\n');
        }
        text
    }

    #[test]
    fn generated_recordings_read_as_the_whole_reader_reads_them() {
        let (mut lists, mut rewinds) = (0, 0);
        for seed in 0..400 {
            let text = generated(seed);
            assert!(
                agrees(&format!("seed {seed}"), text.as_bytes()),
                "seed {seed}: {text}"
            );
            lists += usize::from(text.contains("\"messages\":[{"));
            rewinds += usize::from(text.contains("$rewindTo"));
        }
        assert!(
            lists > 50 && rewinds > 50,
            "{lists} lists, {rewinds} rewinds"
        );
    }
}
