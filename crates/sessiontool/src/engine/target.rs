//! What the engine writes into, as each format's module declares it: a target a session of
//! another format streams into ([`StreamTarget`], given by
//! [`crate::formats::Format::stream_target`]), the writer that takes its nodes one at a time
//! ([`NodeSink`]), and pass two as a format's module writes it itself ([`PassTwo`]: a session
//! written back into its own format, a writer that makes its lines apart from their order).

use std::io;

use super::reading::{Needs, Reading};
use super::skeleton::Skeleton;
use super::{Job, MadeFor, Output, PlanError, Route};
use crate::convert::ConvertError;
use crate::diag::LossReport;
use crate::formats::normalise::{Facts, Head, Target};
use crate::model::{Meta, Node};

/// The head of `meta`'s session as `target` writes it ([`Head::of`]), for a writer that knows
/// of the nodes only how many it writes and the first time one has.
pub(crate) fn head(
    job: &Job,
    target: &Target,
    meta: &Meta,
    (nodes, first_time): (usize, Option<&str>),
    losses: &mut LossReport,
) -> Result<Head, ConvertError> {
    let facts = Facts {
        nodes,
        first_id: None,
        first_time,
    };
    Head::of(target, meta, facts, job.options, losses).map_err(|source| ConvertError::Write {
        to: job.to.name(),
        source,
    })
}

/// A format the engine writes sessions of other formats into, one node at a time, as the
/// whole writer writes them (byte for byte, loss for loss).
pub(crate) trait StreamTarget: Sync {
    /// What its writer needs pass one to learn, besides the calls no result answers (which
    /// the engine asks for every target whose tool does not answer them itself).
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// How `known` is written for `meta` (the metadata to write) and `leaf` (the `--leaf`
    /// node's whole id); `Ok(None)` when the whole-session path writes it.
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError>;
}

/// A writer that takes nodes in the order they are written.
pub(crate) trait NodeSink: Send {
    /// What the writer reads of a node (see [`MadeFor`]).
    fn made_for(&self) -> MadeFor {
        MadeFor::Counting
    }
    /// What comes before the first node.
    fn begin(&mut self, _out: &mut Vec<u8>) {}
    /// The next node, node `index` of the reading (changed as the writer changes it; what is
    /// left of it is the caller's to free, on the thread that made it). `session` reads any
    /// other node again, for a writer that needs one (rarely).
    fn node(
        &mut self,
        index: u32,
        node: &mut Node,
        session: &Lookup,
        out: &mut Vec<u8>,
    ) -> io::Result<()>;
    /// What comes after the last node; what could not be written.
    fn finish(self: Box<Self>, out: &mut Vec<u8>) -> LossReport;
}

/// The session a sink writes, for the nodes it needs besides the one it is given: its tree
/// (ids and parents) and any node, read again from its records.
pub(crate) struct Lookup<'a> {
    pub(crate) job: &'a Job<'a>,
    pub(crate) known: &'a dyn Reading,
}

impl Lookup<'_> {
    /// The session's ids and parents.
    pub(crate) fn skeleton(&self) -> &Skeleton {
        self.known.skeleton()
    }

    /// Node `index`, read again, made for `made_for`.
    pub(crate) fn node(&self, index: u32, made_for: MadeFor) -> io::Result<Node> {
        super::plan::node_of(self.job, self.known, index, made_for)
    }
}

/// Pass two as a format's module writes it: a session written back into its own format (its
/// records copied, or remade where the conversion changes them), or a writer with work of its
/// own to spread over the threads.
pub(crate) trait PassTwo: Send {
    /// Pass two: the output into `out`; what could not be written.
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport>;
}

/// The sink of a writer that puts a header before the first node and makes each node's
/// lines from that node alone (with what it keeps between nodes in `write`): `write` is given
/// the node, the loss report and the output.
pub(crate) struct EachNode<W> {
    pub(crate) header: Vec<u8>,
    pub(crate) losses: LossReport,
    pub(crate) write: W,
}

impl<W: FnMut(&Node, &mut LossReport, &mut Vec<u8>) + Send> NodeSink for EachNode<W> {
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.header);
    }

    fn node(
        &mut self,
        _index: u32,
        node: &mut Node,
        _session: &Lookup,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        (self.write)(node, &mut self.losses, out);
        Ok(())
    }

    fn finish(self: Box<Self>, _out: &mut Vec<u8>) -> LossReport {
        self.losses
    }
}
