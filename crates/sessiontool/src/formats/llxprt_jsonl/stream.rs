//! A session of another format written as llxprt-code lines one node at a time, for the
//! engine ([`crate::engine`]): byte for byte and loss for loss what the whole writer
//! ([`super::write`]) gives, through the same writer ([`Lines`]). The branch to write is
//! chosen on pass one's skeleton; what the first line takes from the nodes (the first time
//! and model, when the metadata has none) is read from the branch's first nodes, as far as
//! it takes to find them. A session of this format is written back by the same writer, as the
//! whole writer writes it back (each line as it was while its node reads the same).

use std::io;

use super::LlxprtJsonl;
use super::NAME;
use super::origin::StartAsRead;
use super::write::{First, Lines, OTHER_BRANCHES};
use crate::diag::LossReport;
use crate::engine::plan::branch_of;
use crate::engine::reading::{self, Reading};
use crate::engine::target::{Lookup, NodeSink, StreamTarget};
use crate::engine::{Job, MadeFor, PlanError, Route};
use crate::formats::WriteOptions;
use crate::model::{Meta, Node};
use crate::tree::LeftOut;

impl StreamTarget for LlxprtJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        // A session of this format is written back by the same writer, told so.
        let native = meta.source_format.as_deref() == Some(NAME);
        let Some((branch, left_out)) = branch_of(job, &*known, leaf.as_deref())? else {
            return Ok(None);
        };
        let first = first_of(job, &*known, &meta, &branch)?;
        let lines = Lines::new(&meta, &first, native, job.options, Vec::new());
        let sink = LlxprtStream {
            lines,
            first,
            // A file of this format without a `session_start` line is written back without one.
            start: !native || StartAsRead::of(&meta).is_some(),
            native,
            meta,
            options: job.options.clone(),
            left_out,
        };
        Ok(Some(Route::Nodes {
            known,
            indices: branch,
            sink: Box::new(sink),
        }))
    }
}

/// The first time and model of `branch`'s nodes, read only when `meta` lacks them and only
/// as far as the first node that has each.
fn first_of(job: &Job, known: &dyn Reading, meta: &Meta, branch: &[u32]) -> io::Result<First> {
    let (mut want_time, mut want_model) = (First::needs_time(meta), First::needs_model(meta));
    let mut first = First::default();
    // A few nodes at a time: the first node has them in almost every session.
    for chunk in branch.chunks(16) {
        if !want_time && !want_model {
            break;
        }
        reading::each_node(known, job.source, chunk, MadeFor::Counting, |_, node| {
            if want_time && let Some(t) = &node.timestamp {
                first.time = Some(t.clone());
                want_time = false;
            }
            if want_model && let Some(m) = node.message().and_then(|m| m.model.clone()) {
                first.model = Some(m);
                want_model = false;
            }
        })?;
    }
    Ok(first)
}

/// See the module.
struct LlxprtStream {
    lines: Lines,
    first: First,
    /// Whether the first line is written.
    start: bool,
    /// A session of this format (its nodes made with the lines they were read from).
    native: bool,
    meta: Meta,
    options: WriteOptions,
    left_out: LeftOut,
}

impl NodeSink for LlxprtStream {
    fn made_for(&self) -> MadeFor {
        match self.native {
            true => MadeFor::OwnWriter,
            false => MadeFor::Counting,
        }
    }

    // The writer writes into its own buffer: `out` is lent to it for each call.
    fn begin(&mut self, out: &mut Vec<u8>) {
        if !self.start {
            return;
        }
        std::mem::swap(&mut self.lines.out, out);
        self.lines.start(&self.meta, &self.first, &self.options);
        std::mem::swap(&mut self.lines.out, out);
    }

    fn node(
        &mut self,
        _index: u32,
        node: &mut Node,
        _session: &Lookup,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        std::mem::swap(&mut self.lines.out, out);
        self.lines.node(node);
        std::mem::swap(&mut self.lines.out, out);
        Ok(())
    }

    fn finish(self: Box<Self>, _out: &mut Vec<u8>) -> LossReport {
        let mut losses = LossReport::default();
        self.left_out.report(&mut losses, OTHER_BRANCHES);
        self.lines.count_losses(&mut losses);
        losses
    }
}
