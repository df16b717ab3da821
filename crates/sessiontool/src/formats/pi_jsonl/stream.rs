//! A session of another format written as a pi file one node at a time, for the engine
//! ([`crate::engine`]): byte for byte and loss for loss what the whole writer
//! ([`super::foreign`]) gives, through the same pieces ([`Entries`], [`Links`]).
//!
//! An entry's parent may be the last entry of a node written later, and a compaction names
//! the first entry of the node it keeps from: the whole writer makes every node's entries
//! before it links any. Here that is a pass of its own before the writing one: every node is
//! made and turned into entries once to learn their ids (kept: a few per node; the entries
//! dropped), and again, in the same order (so with the same ids), to be written.
//!
//! A session of pi's own is written back as the whole writer writes it
//! ([`write::write_native`]): each line as it was while its node reads the same.

use super::foreign::{Entries, Links, TARGET, header};
use super::{NAME, PiJsonl, write};
use crate::diag::LossReport;
use crate::engine::reading::{self, Reading};
use crate::engine::target::{self, EachNode, StreamTarget};
use crate::engine::{Job, MadeFor, PlanError, Route};
use crate::model::{Meta, Node};

impl StreamTarget for PiJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        // pi keeps every branch: the leaf (checked to name a node) chooses none, as for the
        // whole writer.
        _leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        // pi's own sessions: every line as the whole writer writes it back.
        if meta.source_format.as_deref() == Some(NAME) {
            return Ok(Some(write::lines_back(known, &meta)));
        }
        let all: Vec<u32> = (0..known.spots().len() as u32).collect();
        let head = |first_time: Option<&str>, losses: &mut LossReport| {
            target::head(job, &TARGET, &meta, (all.len(), first_time), losses)
        };
        // The entries' ids do not depend on the start time, which may be a node's.
        let id = head(None, &mut LossReport::default())?.id;
        let (mut entries, mut links) = (Entries::new(&id), Links::default());
        let mut first_time = None;
        let mut ignored = LossReport::default();
        reading::each_node(&*known, job.source, &all, MadeFor::Counting, |_, node| {
            if first_time.is_none() {
                first_time.clone_from(&node.timestamp);
            }
            let planned = entries.of(&node, &mut ignored);
            links.add(&node, &planned);
        })?;
        let mut losses = LossReport::default();
        let head = head(first_time.as_deref(), &mut losses)?;
        let (mut entries, start) = (Entries::new(&head.id), head.start.clone());
        let sink = EachNode {
            header: header(&head),
            losses,
            write: move |node: &Node, losses: &mut LossReport, out: &mut Vec<u8>| {
                let planned = entries.of(node, losses);
                links.write(node, planned, &start, out);
            },
        };
        Ok(Some(Route::Nodes {
            known,
            indices: all,
            sink: Box::new(sink),
        }))
    }
}
