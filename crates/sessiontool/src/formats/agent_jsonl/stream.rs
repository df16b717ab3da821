//! A session of another format written as the Go agent's entries one node at a time, for
//! the engine ([`crate::engine`]): byte for byte and loss for loss what the whole writer
//! ([`super::foreign`]) gives, through the same pieces ([`Entries`], [`Chain`]).
//!
//! A compaction names the first entry of the node it keeps from, which the whole writer
//! knows for every node before it writes any. Here that is a pass of its own before the
//! writing one: the branch's nodes made and turned into entries once to learn each node's
//! first entry (kept: one id per node; the entries dropped), and again, in the same order
//! (so with the same ids), to be written.

use std::collections::HashMap;
use std::io;

use super::foreign::{Chain, EPOCH, Entries, HEADER, OTHER_BRANCHES, header};
use super::{AgentJsonl, NAME};
use crate::diag::LossReport;
use crate::engine::plan::branch_of;
use crate::engine::reading::{self, Reading};
use crate::engine::target::{Lookup, NodeSink, StreamTarget};
use crate::engine::{Job, MadeFor, PlanError, Route};
use crate::formats::pi_style;
use crate::model::{Meta, Node};

impl StreamTarget for AgentJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        if meta.source_format.as_deref() == Some(NAME) {
            return Ok(None);
        }
        let Some((branch, left_out)) = branch_of(job, &*known, leaf.as_deref())? else {
            return Ok(None);
        };
        let head = |first_time, losses: &mut LossReport| {
            let nodes = (branch.len(), first_time);
            pi_style::foreign_of(&meta, nodes, job.options, (NAME, EPOCH), HEADER, losses)
        };
        // The entries' ids do not depend on the start time (which may be a node's), and the
        // times pass one writes are dropped with its entries.
        let mut ids = Entries::new(&head(None, &mut LossReport::default()));
        let mut first_time = None;
        let mut ignored = LossReport::default();
        reading::each_node(
            &*known,
            job.source,
            &branch,
            MadeFor::Counting,
            |_, node| {
                if first_time.is_none() {
                    first_time.clone_from(&node.timestamp);
                }
                ids.of(&node, &mut ignored);
            },
        )?;
        let mut losses = LossReport::default();
        left_out.report(&mut losses, OTHER_BRANCHES);
        let head = head(first_time, &mut losses);
        let sink = AgentStream {
            entries: Entries::new(&head),
            header: Some(header(&head)),
            first_of: std::mem::take(&mut ids.first_of),
            chain: Chain::default(),
            losses,
        };
        Ok(Some(Route::Nodes {
            known,
            indices: branch,
            sink: Box::new(sink),
        }))
    }
}

/// See the module.
struct AgentStream {
    entries: Entries,
    header: Option<Vec<u8>>,
    /// Each node's first entry, from the first pass over the branch.
    first_of: HashMap<String, String>,
    chain: Chain,
    losses: LossReport,
}

impl NodeSink for AgentStream {
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.extend(self.header.take().unwrap_or_default());
    }

    fn node(
        &mut self,
        _index: u32,
        node: &mut Node,
        _session: &Lookup,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        let entries = self.entries.of(node, &mut self.losses);
        self.chain.write(entries, &self.first_of, out);
        Ok(())
    }

    fn finish(self: Box<Self>, _out: &mut Vec<u8>) -> LossReport {
        self.losses
    }
}
