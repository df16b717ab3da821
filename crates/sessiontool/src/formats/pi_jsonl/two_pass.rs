//! pi sessions read in two passes by the engine ([`crate::engine`]): pass one reads every line
//! through the whole reader's own steps ([`Fold::record`]: the header, the ids it gives, pi's
//! entry list, what it says) in file order, and keeps of each node only its place, id, parent
//! and a few flags; pass two makes a node again from its line alone, with the id and parent
//! pass one gave it ([`entry_node`], [`whole_node`]). Memory is the lines' places and ids,
//! never their content; what comes out is what `read` gives, node for node.
//!
//! Pass one makes each node whole to learn those facts (pi's lines are read on one thread, in
//! order, as the reader's ids depend on the lines before): it costs the whole reader's time,
//! not its memory.

use std::collections::HashMap;
use std::io;

use serde_json::Value;

use super::read::{Fold, entry_node, kept_index, set_first_kept, title_of, whole_node};
use super::{HINT_NO_FINAL_NEWLINE, NAME, PiJsonl};
use crate::check::document::OpenCalls;
use crate::diag::Diagnostic;
use crate::engine::MadeFor;
use crate::engine::Source;
use crate::engine::pass1::{self, Noted, Pass1, Pass1Options, Scan, Spot};
use crate::engine::reading::{BranchCalls, CallOf, Needs, Reading, TwoPassReader};
use crate::engine::skeleton::Skeleton;
use crate::model::{Body, Content, Meta, Node};
use crate::records::{Damage, Span};

impl TwoPassReader for PiJsonl {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let scanner = Scanner { name, needs };
        Ok(Some(Box::new(pass1::known(
            source, name, &scanner, options,
        )?)))
    }
}

/// Pass one over a pi session named `name` (in diagnostics).
struct Scanner<'n> {
    name: &'n str,
    needs: Needs,
}

/// A block's lines, kept for the reader's steps, which go through them in file order.
#[derive(Default)]
struct Block {
    lines: Vec<(Span, Box<str>)>,
}

/// The reader's state and what is kept of each node.
#[derive(Default)]
struct Acc<'n> {
    fold: Option<Fold<'n>>,
    /// Each node's record (its place in pass one's records).
    records: Vec<u32>,
    skeleton: Skeleton,
    flags: Vec<u8>,
    /// Version 1 compactions: the node and the entry it keeps from, resolved at the end.
    kept: Vec<(u32, usize)>,
    last_time: Option<String>,
    title: Option<String>,
    open: OpenCalls,
    /// `(node, call id, name)` of every tool call, when asked for.
    calls: Vec<CallOf>,
}

/// The node is a message (else an event).
const MESSAGE: u8 = 1;
/// The node has a time.
const TIMED: u8 = 2;

impl<'n> Scan for Scanner<'n> {
    type Block = Block;
    type Acc = Acc<'n>;
    type Known = Known;

    fn record(&self, block: &mut Block, record: Noted<'_>, span: Span) {
        block.lines.push((span, record.raw.text().into()));
    }

    fn merge(&self, acc: &mut Acc<'n>, block: &mut Block, first: usize) {
        let name = self.name;
        let fold = acc
            .fold
            .get_or_insert_with(|| Fold::new(name, fresh_meta(), Vec::new(), 0));
        for (k, (span, text)) in block.lines.drain(..).enumerate() {
            let Some(node) = fold.record(text.as_bytes(), span.line, span.offset) else {
                continue;
            };
            let index = acc.records.len() as u32;
            acc.records.push((first + k) as u32);
            let id = acc.skeleton.intern(&node.id);
            let parent = node.parent.as_deref().map(|p| acc.skeleton.intern(p));
            acc.skeleton.push(id, parent);
            let mut flags = 0;
            if matches!(node.body, Body::Message(_)) {
                flags |= MESSAGE;
            }
            if let Some(t) = &node.timestamp {
                flags |= TIMED;
                acc.last_time = Some(t.clone());
            }
            acc.flags.push(flags);
            if let Some(k) = kept_index(&node) {
                acc.kept.push((index, k));
            }
            if let Some(title) = title_of(&node) {
                acc.title = Some(title);
            }
            if self.needs.open_calls {
                acc.open.note(&node);
            }
            if self.needs.call_names {
                for p in node.message().map_or(&[][..], |m| m.parts.as_slice()) {
                    if let Content::ToolCall { id, name, .. } = &p.content {
                        acc.calls.push((
                            index,
                            id.as_deref().map(Into::into),
                            name.as_str().into(),
                        ));
                    }
                }
            }
        }
    }

    fn known(&self, pass: Pass1<Acc<'n>>, findings: Vec<Diagnostic>) -> Known {
        let Pass1 {
            spots,
            findings: damage,
            acc,
            ..
        } = pass;
        let fold = acc
            .fold
            .unwrap_or_else(|| Fold::new(self.name, fresh_meta(), Vec::new(), 0));
        let first_kept: HashMap<u32, Option<String>> = acc
            .kept
            .iter()
            .map(|&(node, k)| (node, fold.entry_id(k)))
            .collect();
        let (mut meta, mut diagnostics) = (fold.meta, findings);
        diagnostics.extend(fold.diagnostics);
        // The reader starts from this hint (its first), when the last line has no line break.
        if damage
            .iter()
            .any(|f| matches!(f.damage, Damage::MissingFinalNewline))
        {
            meta.hints
                .shift_insert(0, HINT_NO_FINAL_NEWLINE.into(), true.into());
        }
        let len = acc.records.len() as u32;
        meta.head = len.checked_sub(1).map(|h| acc.skeleton.name(h));
        meta.last_updated = acc.last_time;
        meta.title = acc.title;
        crate::diag::sort_in_file_order(&mut diagnostics);
        Known {
            meta,
            diagnostics,
            spots: acc.records.iter().map(|&r| spots[r as usize]).collect(),
            skeleton: acc.skeleton,
            flags: acc.flags,
            first_kept,
            open_calls: acc.open.count(),
            calls: acc.calls,
        }
    }
}

/// The metadata the reader starts from.
fn fresh_meta() -> Meta {
    Meta {
        source_format: Some(NAME.into()),
        ..Meta::default()
    }
}

/// A pi session as pass one knows it.
pub(crate) struct Known {
    meta: Meta,
    diagnostics: Vec<Diagnostic>,
    /// Where each node's line is (the header is no node).
    spots: Vec<Spot>,
    skeleton: Skeleton,
    flags: Vec<u8>,
    /// Version 1 compactions' first kept entries.
    first_kept: HashMap<u32, Option<String>>,
    open_calls: usize,
    calls: Vec<CallOf>,
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

    /// The last node (pi resumes the last entry in the file).
    fn head(&self) -> Option<u32> {
        (self.spots.len() as u32).checked_sub(1)
    }

    fn is_message(&self, index: u32) -> bool {
        self.flags[index as usize] & MESSAGE != 0
    }

    fn timed(&self, index: u32) -> bool {
        self.flags[index as usize] & TIMED != 0
    }

    fn open_calls(&self) -> usize {
        self.open_calls
    }

    fn call_names(&mut self, branch: &[u32]) -> BranchCalls {
        BranchCalls::of(&self.calls, &self.skeleton, branch)
    }

    /// Its line read as `read` reads it, with the id and parent pass one gave it.
    fn node(&self, index: u32, bytes: &[u8], _made_for: MadeFor) -> Node {
        let sk = &self.skeleton;
        let id = sk.name(index);
        let parent = sk.parent_id(index).map(|p| sk.ids.name(p).to_string());
        let mut node = match crate::json::value::to_value(bytes) {
            Ok((Value::Object(map), _)) => entry_node(map, bytes, id, parent),
            Ok((value, _)) => whole_node(value, bytes, id, parent),
            Err(_) => {
                let text = Value::String(String::from_utf8_lossy(bytes).into_owned());
                whole_node(text, bytes, id, parent)
            }
        };
        if let Some(first) = self.first_kept.get(&index) {
            set_first_kept(&mut node, first.clone());
        }
        node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Bytes;
    use crate::formats::{Format, Input};

    const PI: &dyn Format = &PiJsonl;

    /// Pass one (with blocks of `block_size`) and pass two give what the whole reader gives:
    /// the metadata, the diagnostics in order, every node, the kinds, the unanswered calls.
    fn agrees(name: &str, bytes: &[u8], block_size: usize) {
        let input = Input {
            name,
            path: None,
            bytes,
        };
        let whole = PI.read(&input).unwrap();
        let needs = Needs {
            nodes: true,
            open_calls: true,
            call_names: true,
        };
        let scanner = Scanner { name, needs };
        let options = Pass1Options { block_size };
        let mut known = pass1::known(&Bytes(bytes), name, &scanner, options).unwrap();
        let session = &whole.session;
        assert_eq!(known.meta, session.meta, "{name}");
        assert_eq!(
            format!("{:?}", known.meta.hints),
            format!("{:?}", session.meta.hints),
            "{name}: hints in order"
        );
        assert_eq!(known.diagnostics, whole.diagnostics, "{name}");
        assert_eq!(known.spots.len(), session.nodes.len(), "{name}");
        let all: Vec<u32> = (0..session.nodes.len() as u32).collect();
        crate::engine::reading::each_node(
            &known,
            &Bytes(bytes),
            &all,
            MadeFor::OwnWriter,
            |i, got| {
                let want = &session.nodes[i as usize];
                assert_eq!(&got, want, "{name}: node {i}");
                assert_eq!(known.is_message(i), want.message().is_some(), "{name}");
                assert_eq!(known.timed(i), want.timestamp.is_some(), "{name}");
            },
        )
        .unwrap();
        let open = crate::check::document::unanswered_calls(session).len();
        assert_eq!(known.open_calls, open, "{name}");
        let names = crate::formats::gemini_content::call_names(session.nodes.iter());
        assert_eq!(known.call_names(&all).names, names, "{name}");
    }

    fn agrees_in_blocks(name: &str, bytes: &[u8]) {
        for block_size in [1, 97, 4 << 20] {
            agrees(name, bytes, block_size);
        }
    }

    #[test]
    fn every_fixture_reads_as_the_whole_reader_reads_it() {
        let mut n = 0;
        for entry in std::fs::read_dir("fixtures/pi-jsonl").unwrap() {
            let path = entry.unwrap().path();
            agrees_in_blocks(&path.display().to_string(), &std::fs::read(&path).unwrap());
            n += 1;
        }
        assert!(n >= 3, "{n}");
    }

    #[test]
    fn odd_files_read_as_the_whole_reader_reads_them() {
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p"}"#;
        let user = |id: &str, parent: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-11-20T23:33:51.000Z","message":{{"role":"user","content":"hi {id}","timestamp":1}}}}"#
            )
        };
        let v1 = concat!(
            r#"{"type":"session","id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-11-20T23:33:51.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-11-20T23:33:52.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2025-11-20T23:34:00.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2025-11-20T23:34:01.000Z","summary":"t","firstKeptEntryIndex":9}"#,
            "\n",
        );
        let files = [
            String::new(),
            header.to_string(),
            format!("{header}\n"),
            v1.to_string(),
            // Ids used twice, a line that is no object, one that has no type, a title.
            [
                header.to_string(),
                user("a1", "null"),
                user("a1", r#""a1""#),
                user("a1", r#""a1""#),
                "[1,2]".into(),
                r#""a string""#.into(),
                r#"{"id":"x","parentId":"a1"}"#.into(),
                r#"{"type":"session_info","id":"t1","parentId":"a1","timestamp":"2025-11-20T23:35:00.000Z","name":"A title"}"#.into(),
                user("b1", r#""gone""#),
            ]
            .join("\n"),
            // No header; damage the records layer finds; a lone surrogate and a repeated key.
            [
                user("a1", "null"),
                r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"user","content":"\ud83d","content":"kept","timestamp":1}}"#.into(),
                r#"{"type":"mess"#.into(),
            ]
            .join("\n"),
            format!("{header}\r\n{}\r\n", user("a1", "null")),
            format!("\u{feff}{header}\n{}\n\n\0\0\0", user("a1", "null")),
            format!("{header}\n{}{}\n", user("a1", "null"), user("a2", r#""a1""#)),
        ];
        for (k, text) in files.iter().enumerate() {
            agrees_in_blocks(&format!("odd-{k}.jsonl"), text.as_bytes());
        }
    }

    #[test]
    fn the_real_samples_read_as_the_whole_reader_reads_them() {
        let dir = std::path::Path::new("../../../shared/samples/pi");
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("the real pi samples ({}): {e}", dir.display()));
        let mut n = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                agrees_in_blocks(&path.display().to_string(), &std::fs::read(&path).unwrap());
                n += 1;
            }
        }
        assert!(n >= 1, "{n}");
    }
}
