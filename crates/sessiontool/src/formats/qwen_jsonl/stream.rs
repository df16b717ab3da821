//! A session of another format written as Qwen Code records one node at a time, for the
//! engine ([`crate::engine`]): byte for byte and loss for loss what the whole writer
//! ([`super::write`]) gives, through the same code ([`RecordWriter::foreign_node`],
//! [`ApiParts`]), in the order it puts the nodes (file order, the head last:
//! [`head_last`]).
//!
//! What the whole writer learns from the whole session comes from pass one: the name of each
//! call (a result that names none gets it) and the order. What it reads of other nodes is
//! read again when it is needed, which is rare: the calls of a node's parent (only for a
//! result whose call is not in the session) and the history a compaction keeps (only when it
//! names its first kept node).

use std::cell::OnceCell;
use std::io;

use serde_json::Value;

use super::QwenJsonl;
use super::foreign::history_entry;
use super::write::{RecordWriter, head_last, writes_record};
use crate::diag::LossReport;
use crate::engine::plan::node_of;
use crate::engine::reading::{Needs, Reading};
use crate::engine::skeleton::Skeleton;
use crate::engine::target::{Lookup, NodeSink, StreamTarget};
use crate::engine::{Job, MadeFor, PlanError, Route};
use crate::formats::WriteOptions;
use crate::formats::gemini_content::{ApiParts, calls_of, is_gemini_family};
use crate::model::{Content, Meta, Node};
use crate::tree::kept::kept_since;

impl StreamTarget for QwenJsonl {
    /// The name of each call: a result that names none gets it, as the API requires.
    fn needs(&self) -> Needs {
        Needs {
            call_names: true,
            ..Needs::default()
        }
    }

    fn route(
        &self,
        job: &Job,
        mut known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        let len = known.spots().len();
        let first = match len {
            0 => String::new(),
            _ => known.skeleton().name(0),
        };
        let mut writer = RecordWriter::foreign(&meta, job.options, &first);
        let head = match &leaf {
            Some(l) => known.skeleton().index_of(l),
            None => known.head(),
        };
        let order = write_order(job, &*known, head, writer.losses())?;
        // Qwen Code sends `message` as it is: parts of other families become API parts.
        let api = match is_gemini_family(meta.source_format.as_deref()) {
            true => None,
            false => {
                let all: Vec<u32> = (0..len as u32).collect();
                Some(ApiParts::new(known.call_names(&all).names))
            }
        };
        let sink = QwenStream {
            writer,
            api,
            last_of: OnceCell::new(),
            meta,
            options: job.options.clone(),
        };
        Ok(Some(Route::Nodes {
            known,
            indices: order,
            sink: Box::new(sink),
        }))
    }
}

/// The order the whole writer puts the nodes in ([`head_last`]), from what is known of them:
/// which nodes have a record is read from the nodes themselves, for the head and from the
/// end back to the last node that has one (rarely more than a node or two).
fn write_order(
    job: &Job,
    known: &dyn Reading,
    head: Option<u32>,
    losses: &mut LossReport,
) -> io::Result<Vec<u32>> {
    let len = known.spots().len();
    let writes = |i: u32| -> io::Result<bool> {
        let node = node_of(job, known, i, MadeFor::Counting)?;
        Ok(writes_record(&node, false))
    };
    // The head, if it has a record, and the last node that has one (the head at the latest).
    let mut last = None;
    if let Some(h) = head
        && writes(h)?
    {
        last = Some(h);
        for i in (h + 1..len as u32).rev() {
            if writes(i)? {
                last = Some(i);
                break;
            }
        }
    }
    let has_child = match head {
        Some(_) => known.skeleton().has_child(),
        None => Vec::new(),
    };
    let order = head_last(
        len,
        last.and(head).map(|h| h as usize),
        |i| Some(i as u32) == last || Some(i as u32) == head,
        |h| has_child[h],
        losses,
    );
    Ok(order.into_iter().map(|i| i as u32).collect())
}

/// See [`QwenStream`]'s module.
struct QwenStream {
    writer: RecordWriter,
    /// Makes parts API parts (`None` for a session of the Gemini family: its parts are).
    api: Option<ApiParts>,
    /// The last node of each id (interned), as the whole writer finds a node's parent for the
    /// calls it made (made when first needed).
    last_of: OnceCell<Vec<u32>>,
    meta: Meta,
    options: WriteOptions,
}

impl QwenStream {
    /// `node` (node `index`) with API parts, counted in `api`; its parent's calls read only
    /// when a result needs them (it names no call of the session).
    fn api_parts(
        &self,
        api: &mut ApiParts,
        index: u32,
        node: &mut Node,
        session: &Lookup,
    ) -> io::Result<()> {
        let parent_calls = match self.needs_parent_calls(api, node) {
            true => self.parent_calls(index, session)?,
            false => Vec::new(),
        };
        api.node(node, &parent_calls);
        Ok(())
    }

    /// Whether a result of `node` may name no call the session has, and no name of its own
    /// (a part no reader understood may read as one).
    fn needs_parent_calls(&self, api: &ApiParts, node: &Node) -> bool {
        node.message().is_some_and(|m| {
            m.parts.iter().any(|p| match &p.content {
                Content::ToolResult {
                    call_id,
                    name: None,
                    ..
                } => !call_id.as_ref().is_some_and(|id| api.has_call(id)),
                Content::Other { .. } => true,
                _ => false,
            })
        })
    }

    /// The calls of node `index`'s parent: the last node with the id it names (as the whole
    /// writer maps ids to nodes).
    fn parent_calls(&self, index: u32, session: &Lookup) -> io::Result<Vec<String>> {
        let sk = session.skeleton();
        let Some(parent) = sk.parent_id(index) else {
            return Ok(Vec::new());
        };
        let last_of = self.last_of.get_or_init(|| last_of(sk));
        match last_of.get(parent as usize).copied().filter(|&p| p != NONE) {
            Some(p) => Ok(calls_of(&session.node(p, MadeFor::Counting)?)),
            None => Ok(Vec::new()),
        }
    }

    /// What a compaction (node `index`) keeps from `first`, as the whole writer finds it in
    /// the session it made API parts of.
    fn kept(&self, index: u32, first: &str, session: &Lookup) -> io::Result<Option<Vec<Value>>> {
        let Some(kept) = kept_since(session.skeleton(), index as usize, first) else {
            return Ok(None);
        };
        let mut entries = Vec::with_capacity(kept.len());
        for j in kept {
            let mut node = session.node(j as u32, MadeFor::Counting)?;
            if let Some(api) = &self.api {
                // Made as the whole writer made it; what it counts was counted with the node.
                let mut scratch = api.uncounted();
                self.api_parts(&mut scratch, j as u32, &mut node, session)?;
            }
            entries.extend(history_entry(&node));
        }
        Ok(Some(entries))
    }
}

/// No node.
const NONE: u32 = u32::MAX;

/// The last node of each interned id.
fn last_of(sk: &Skeleton) -> Vec<u32> {
    let mut last = vec![NONE; sk.ids.len()];
    for i in 0..sk.len() as u32 {
        last[sk.id(i) as usize] = i;
    }
    last
}

impl NodeSink for QwenStream {
    fn node(
        &mut self,
        index: u32,
        node: &mut Node,
        session: &Lookup,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        if let Some(mut api) = self.api.take() {
            let done = self.api_parts(&mut api, index, node, session);
            self.api = Some(api);
            done?;
        }
        let mut failed = None;
        let kept = |first: &str| match self.kept(index, first, session) {
            Ok(kept) => kept,
            Err(e) => {
                failed = Some(e);
                None
            }
        };
        // (The history is read before anything of the node is written.)
        let kept = kept_first(kept, node);
        if let Some(e) = failed {
            return Err(e);
        }
        self.writer.foreign_node(node, |_| kept, out);
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut Vec<u8>) -> LossReport {
        self.writer.foreign_end(&self.meta, &self.options, out);
        // The whole writer made every part an API part before writing: those losses first.
        let mut losses = LossReport::default();
        if let Some(api) = &self.api {
            api.report(&mut losses);
        }
        losses.merge(self.writer.finish());
        losses
    }
}

/// What `kept` gives for the first kept node `node` names, when it is a compaction that names
/// one (else nothing is asked).
fn kept_first(kept: impl FnOnce(&str) -> Option<Vec<Value>>, node: &Node) -> Option<Vec<Value>> {
    match &node.body {
        crate::model::Body::Event(crate::model::Event::Compaction {
            first_kept: Some(first),
            summary: Some(_),
            ..
        }) => kept(first),
        _ => None,
    }
}
