//! A session of another format written as the Go agent's entries one node at a time, for
//! the engine ([`crate::engine`]): byte for byte and loss for loss what the whole writer
//! ([`super::foreign`]) gives, through the same pieces ([`Entries`], [`Chain`]).
//!
//! A compaction names the first entry of the node it keeps from, which the whole writer
//! knows for every node before it writes any. Here that is a pass of its own before the
//! writing one: the branch's nodes made and turned into entries once to learn each node's
//! first entry (kept: one id per node; the entries dropped), and again, in the same order
//! (so with the same ids), to be written.
//!
//! A session of the agent's own is written back as the whole writer writes it
//! ([`super::read::write_native`]): each line as it was while its node reads the same.

use super::foreign::{Chain, Entries, OTHER_BRANCHES, TARGET, header};
use super::{AgentJsonl, NAME};
use crate::diag::LossReport;
use crate::engine::plan::branch_of;
use crate::engine::reading::{self, Reading};
use crate::engine::target::{self, EachNode, StreamTarget};
use crate::engine::{Job, MadeFor, PlanError, Route};
use crate::model::{Meta, Node};

impl StreamTarget for AgentJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        // The agent's own sessions: every line as the whole writer writes it back.
        if meta.source_format.as_deref() == Some(NAME) {
            return Ok(Some(super::read::lines_back(known, &meta)));
        }
        let Some((branch, left_out)) = branch_of(job, &*known, leaf.as_deref())? else {
            return Ok(None);
        };
        let head = |first_time: Option<&str>, losses: &mut LossReport| {
            target::head(job, &TARGET, &meta, (branch.len(), first_time), losses)
        };
        // The entries' ids do not depend on the start time (which may be a node's), and the
        // times pass one writes are dropped with its entries.
        let mut ids = Entries::new(&head(None, &mut LossReport::default())?);
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
        let head = head(first_time.as_deref(), &mut losses)?;
        let (mut entries, first_of) = (Entries::new(&head), std::mem::take(&mut ids.first_of));
        let mut chain = Chain::default();
        let sink = EachNode {
            header: header(&head),
            losses,
            write: move |node: &Node, losses: &mut LossReport, out: &mut Vec<u8>| {
                let node_entries = entries.of(node, losses);
                chain.write(node_entries, &first_of, out);
            },
        };
        Ok(Some(Route::Nodes {
            known,
            indices: branch,
            sink: Box::new(sink),
        }))
    }
}
