//! A Gemini legacy session (one JSON document) read in two passes by the engine: pass one
//! checks the document once, reads its fields, and reads each message into its nodes with the
//! whole reader's own code ([`message_nodes`]), keeping of them only their ids, parents, kinds
//! and tool calls, and where the message is; pass two reads a message again when one of its
//! nodes is wanted. What comes out is what [`read`](super::GeminiJson) gives, node for node,
//! in memory bounded by the number of nodes and the document's bytes (the document is read
//! whole, as its tool reads it; its nodes are never all held).
//!
//! A document this does not read (not JSON, not an object, no `messages` array, a value too
//! deep for a tree of values) is the whole reader's to say what it is: [`known`] answers
//! `None`.

use std::collections::HashSet;
use std::io;

use serde_json::{Map, Value};

use super::origin::{self, with_origin};
use super::{NAME, message_nodes, meta_of};
use crate::check::document::OpenCalls;
use crate::diag::Diagnostic;
use crate::engine::MadeFor;
use crate::engine::pass1::Spot;
use crate::engine::reading::Reading;
use crate::engine::skeleton::Skeleton;
use crate::engine::source::Source;
use crate::formats::trim_start;
use crate::json::value::{Lossy, to_value_within};
use crate::json::{Kind, Raw};
use crate::model::{Body, Meta, Node, Origin};

/// What pass one keeps of a node: the message it is made from and which of its nodes it is.
struct Made {
    message: u32,
    /// 0 for the message, 1 for the tool results that follow it.
    which: u8,
    /// How deep the message lies in the text it was read from (for the depth limit).
    depth: u8,
    is_message: bool,
    timed: bool,
}

/// A Gemini session (a legacy document, or the JSONL recording's messages as replayed) as
/// pass one knows it.
pub(crate) struct Known {
    name: String,
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    skeleton: Skeleton,
    /// Each node's message's place in the input.
    spots: Vec<Spot>,
    made: Vec<Made>,
    /// Tool calls with an id no result in the session answers (as
    /// [`crate::check::document::unanswered_calls`] counts them).
    pub open_calls: usize,
    /// A message's place holds its record as written (a legacy document's), so its bytes are
    /// its origin; else (the JSONL recording's, replayed) the record as parsed is.
    spans_are_records: bool,
}

/// A session's messages read into nodes one at a time, in order, with the whole reader's own
/// code ([`message_nodes`]), keeping of each node only what [`Known`] keeps.
pub(crate) struct Messages<'n> {
    name: &'n str,
    said: Vec<Diagnostic>,
    skeleton: Skeleton,
    spots: Vec<Spot>,
    made: Vec<Made>,
    seen: HashSet<String>,
    open_calls: OpenCalls,
    last: Option<String>,
}

impl<'n> Messages<'n> {
    /// Messages of the session called `name` in diagnostics.
    pub(crate) fn new(name: &'n str) -> Self {
        Messages {
            name,
            said: Vec::new(),
            skeleton: Skeleton::default(),
            spots: Vec::new(),
            made: Vec::new(),
            seen: HashSet::new(),
            open_calls: OpenCalls::default(),
            last: None,
        }
    }

    /// Message number `index`: `value`, read from `spot`, `depth` levels deep in its text.
    pub(crate) fn push(&mut self, index: usize, value: Value, spot: Spot, depth: u8) {
        let parent = self.last.take();
        let nodes = message_nodes(
            value,
            index,
            parent,
            &mut self.seen,
            &mut self.said,
            self.name,
        );
        for (which, node) in nodes.into_iter().enumerate() {
            let id = self.skeleton.intern(&node.id);
            let parent = node.parent.as_deref().map(|p| self.skeleton.intern(p));
            self.skeleton.push(id, parent);
            self.spots.push(spot);
            self.made.push(Made {
                message: index as u32,
                which: which as u8,
                depth,
                is_message: matches!(node.body, Body::Message(_)),
                timed: node.timestamp.is_some(),
            });
            self.open_calls.note(&node);
            self.last = Some(node.id);
        }
    }

    /// The session with `meta`, saying `diagnostics` and then what reading the messages said.
    pub(crate) fn known(self, meta: Meta, mut diagnostics: Vec<Diagnostic>) -> Known {
        diagnostics.extend(self.said);
        Known {
            name: self.name.to_string(),
            meta,
            diagnostics,
            skeleton: self.skeleton,
            spots: self.spots,
            made: self.made,
            open_calls: self.open_calls.count(),
            spans_are_records: false,
        }
    }
}

/// Pass one over the document in `source` (named `name` in diagnostics); `None` when the whole
/// reader is to say what the document is.
pub(crate) fn known(source: &dyn Source, name: &str) -> io::Result<Option<Known>> {
    let owned;
    let bytes = match source.as_slice() {
        Some(b) => b,
        None => {
            let mut buf = vec![0; usize::try_from(source.len()).map_err(io::Error::other)?];
            source.read_exact_at(&mut buf, 0)?;
            owned = buf;
            &owned
        }
    };
    Ok(read(bytes, name))
}

fn read(bytes: &[u8], name: &str) -> Option<Known> {
    let body = trim_start(bytes);
    let text = simdutf8::basic::from_utf8(body).ok()?;
    let entries = Raw::parse(text).ok()?.entries()?;
    // The document's fields as the whole reader reads them: a repeated key keeps its first
    // place and its last value (`messages` too).
    let mut lossy = Lossy::default();
    let mut root = Map::new();
    let mut messages = None;
    for (key, value) in entries {
        let key = key.name();
        lossy.surrogates += usize::from(key.lossy);
        let key = key.value.into_owned();
        if key == "messages" {
            root.insert(key, Value::Null);
            messages = Some(value);
            continue;
        }
        // (Values one level down, messages two: as deep as the whole document's.)
        let (value, l) = to_value_within(value.text().as_bytes(), 1).ok()?;
        lossy.surrogates += l.surrogates;
        root.insert(key, value);
    }
    let keys: Vec<String> = root.keys().cloned().collect();
    root.shift_remove("messages");
    let messages = messages.filter(|m| m.kind() == Kind::Array)?;
    let meta = meta_of(root, &keys, bytes);

    let mut nodes = Messages::new(name);
    let (mut line, mut counted) = (1u64, 0usize);
    for (i, message) in messages.items()?.enumerate() {
        let at = message.text().as_ptr() as usize - bytes.as_ptr() as usize;
        line += memchr::memchr_iter(b'\n', &bytes[counted..at]).count() as u64;
        counted = at;
        let spot = Spot {
            offset: at as u64,
            line,
            len: u32::try_from(message.text().len()).ok()?,
            lossy: false,
        };
        let (value, l) = to_value_within(message.text().as_bytes(), 2).ok()?;
        lossy.surrogates += l.surrogates;
        nodes.push(i, value, spot, 2);
    }
    let diagnostics = (!lossy.is_lossless())
        .then(|| crate::formats::json_document::lossy_said(&lossy, name))
        .into_iter()
        .collect();
    let mut known = nodes.known(meta, diagnostics);
    known.spans_are_records = true;
    Some(known)
}

impl Reading for Known {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    fn spots(&self) -> &[Spot] {
        &self.spots
    }

    fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn head(&self) -> Option<u32> {
        None
    }

    fn is_message(&self, index: u32) -> bool {
        self.made[index as usize].is_message
    }

    fn timed(&self, index: u32) -> bool {
        self.made[index as usize].timed
    }

    fn open_calls(&self) -> usize {
        self.open_calls
    }

    /// The message's nodes made again, this one taken, with the id and parent pass one gave
    /// it (a repeated id renamed, a result chained to its call).
    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node {
        let made = &self.made[index as usize];
        let sk = &self.skeleton;
        let parent = sk.parent_id(index).map(|p| sk.ids.name(p).to_string());
        let value = match to_value_within(bytes, usize::from(made.depth)) {
            Ok((v, _)) => v,
            Err(_) => Value::Null,
        };
        // Only this format's writer reads a record's origin.
        let origin = match made_for {
            MadeFor::OwnWriter if self.spans_are_records => Some(Origin::new(NAME, bytes)),
            MadeFor::OwnWriter => Some(origin::message_origin(&value)),
            _ => None,
        };
        let nodes = message_nodes(
            value,
            made.message as usize,
            parent.clone(),
            &mut HashSet::new(),
            &mut Vec::new(),
            &self.name,
        );
        let mut nodes = with_origin(nodes, origin);
        let mut node = nodes.swap_remove(usize::from(made.which).min(nodes.len() - 1));
        node.id = sk.name(index);
        node.parent = parent;
        node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Bytes;
    use crate::formats::Input;

    const GEMINI_JSON: &dyn crate::formats::Format = &super::super::GeminiJson;

    /// Pass one and pass two give what the whole reader gives: the metadata, the diagnostics
    /// in order, every node (id, parent, body, hints), the kinds, the unanswered calls; or
    /// nothing, and the whole reader says what the document is.
    fn agrees(name: &str, bytes: &[u8]) -> bool {
        let input = Input {
            name,
            path: None,
            bytes,
        };
        let whole = GEMINI_JSON.read(&input);
        let Some(known) = known(&Bytes(bytes), name).unwrap() else {
            return false;
        };
        let whole =
            whole.unwrap_or_else(|e| panic!("{name}: pass one read what read refuses: {e}"));
        let session = &whole.session;
        assert_eq!(known.meta, session.meta, "{name}");
        assert_eq!(known.diagnostics, whole.diagnostics, "{name}");
        assert_eq!(known.spots.len(), session.nodes.len(), "{name}");
        for (i, want) in session.nodes.iter().enumerate() {
            let s = known.spots[i];
            let at = s.offset as usize;
            let got = known.node(
                i as u32,
                &bytes[at..at + s.len as usize],
                MadeFor::OwnWriter,
            );
            assert_eq!(&got, want, "{name}: node {i}");
            assert_eq!(
                known.is_message(i as u32),
                want.message().is_some(),
                "{name}"
            );
            assert_eq!(known.timed(i as u32), want.timestamp.is_some(), "{name}");
        }
        let open = crate::check::document::unanswered_calls(session).len();
        assert_eq!(known.open_calls, open, "{name}");
        true
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let mut n = 0;
        for entry in std::fs::read_dir("fixtures/gemini-json").unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            n += usize::from(agrees(&path.display().to_string(), &bytes));
        }
        assert!(n >= 9, "{n}");
    }

    #[test]
    fn odd_documents_read_as_the_whole_reader_reads_them() {
        let deep = format!("{}1{}", "[".repeat(600), "]".repeat(600));
        let call = r#"{"id":"g","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls","args":{},"result":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"x"}}}],"status":"success"}]}"#;
        let open = r#"{"id":"g2","type":"gemini","content":"","toolCalls":[{"id":"c2","name":"ls","args":{}}]}"#;
        let taken = [
            // Repeated ids (a pair's too), a repeated key, ids missing, an unknown type, a
            // message that is no object, numbers beyond a double, a BOM and a final newline.
            format!(
                "\u{feff}{{\"sessionId\":\"s\",\"messages\":[],\"messages\":[{call},{call},{open},{{\"type\":\"user\",\"content\":\"hi\",\"n\":1e400}},{{\"id\":\"x\",\"type\":\"odd\"}},7,{{\"id\":\"x\",\"type\":\"user\",\"content\":[{{\"text\":\"a\"}}]}}],\"z\":[1,2]}}\n"
            ),
            // Lone surrogates in a message, in a field and in a key.
            r#"{"sessionId":"s","messages":[{"id":"a","type":"user","content":"cut \ud83d"}],"k\udc00":"\ud800"}"#.to_string(),
            // Deeper than a tree of values takes in a message the CLI reads.
            format!(r#"{{"sessionId":"s","messages":[{{"id":"a","type":"user","content":"x","deep":{}}}]}}"#, "[1]"),
            // As deep as the whole document is read: the message and its field, 510 levels.
            format!(
                r#"{{"messages":[{{"id":"a","type":"user","deep":{}1{}}}]}}"#,
                "[".repeat(509),
                "]".repeat(509)
            ),
            r#"  {"messages":[]}  "#.to_string(),
        ];
        for text in &taken {
            assert!(agrees("odd.json", text.as_bytes()), "{text}");
        }
        // What only the whole reader reads or refuses, with its words.
        for text in [
            r#"{"messages":{}}"#.to_string(),
            r#"{"messages":null}"#.to_string(),
            r#"[]"#.to_string(),
            r#"{"messages":[{"id":"a"}"#.to_string(),
            r#"{"messages":[]} x"#.to_string(),
            format!(r#"{{"messages":[{{"deep":{deep}}}]}}"#),
            format!(r#"{{"messages":[],"deep":{deep}}}"#),
            // One level more than the whole document is read to.
            format!(
                r#"{{"messages":[{{"id":"a","type":"user","deep":{}1{}}}]}}"#,
                "[".repeat(510),
                "]".repeat(510)
            ),
        ] {
            assert!(!agrees("bad.json", text.as_bytes()), "{text}");
        }
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

    /// A Gemini document of `seed`'s messages: every type, ids repeated or missing or named as
    /// another message's results, tool calls with and without results, thoughts, tokens,
    /// messages that are no object, lone surrogates, numbers beyond a double, repeated keys.
    fn generated(seed: u64) -> String {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let ids = ["a", "b", "a.results", "c", "b.results", "a#2", "d"];
        let mut messages = Vec::new();
        for k in 0..r.below(14) {
            let id = match r.below(5) {
                0 => String::new(),
                1 => ",\"id\":7".to_string(),
                _ => format!(",\"id\":\"{}\"", r.pick(&ids)),
            };
            let kind = r.pick(&[
                "user", "gemini", "gemini", "info", "error", "warning", "odd",
            ]);
            let text = r.pick(&["hi", "cut \\ud83d", "caf\\u00e9", ""]);
            let mut m =
                format!("{{\"type\":\"{kind}\"{id},\"timestamp\":\"t{k}\",\"content\":\"{text}\"");
            if r.below(3) == 0 {
                m.push_str(",\"thoughts\":[{\"subject\":\"s\",\"description\":\"d\"}]");
            }
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
                    ",\"toolCalls\":[{{\"id\":\"{call}\",\"name\":\"ls\",\"args\":{{\"p\":1}}{result}}}]"
                ));
            }
            if r.below(5) == 0 {
                m.push_str(",\"type\":\"user\"");
            }
            m.push('}');
            messages.push(match r.below(12) {
                0 => "7".to_string(),
                1 => "\"text\"".to_string(),
                _ => m,
            });
        }
        let mut root = vec![
            "\"sessionId\":\"s\"".to_string(),
            format!("\"messages\":[{}]", messages.join(",")),
        ];
        if r.below(3) == 0 {
            root.push("\"summary\":\"x\",\"summary\":\"y\"".to_string());
        }
        if r.below(4) == 0 {
            root.insert(0, "\"messages\":[]".to_string());
        }
        if r.below(4) == 0 {
            root.push("\"directories\":[\"/p\",\"\\udc00\"]".to_string());
        }
        format!("{{{}}}", root.join(","))
    }

    #[test]
    fn generated_documents_read_as_the_whole_reader_reads_them() {
        let mut with_results = 0;
        for seed in 0..400 {
            let text = generated(seed);
            assert!(
                agrees(&format!("seed {seed}"), text.as_bytes()),
                "seed {seed}: {text}"
            );
            with_results += usize::from(text.contains("functionResponse"));
        }
        assert!(with_results > 50, "{with_results} documents with results");
    }

    #[test]
    fn the_real_sample_reads_as_the_whole_reader_reads_it() {
        let path = std::path::Path::new("../../../shared/samples/gemini/pomodoro-timer.json");
        let bytes = std::fs::read(path).expect("the real Gemini sample (../shared/samples)");
        assert!(agrees("pomodoro-timer.json", &bytes));
    }
}
