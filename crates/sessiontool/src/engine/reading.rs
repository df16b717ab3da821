//! What a format's pass one knows of a session, for reading its nodes again: the one
//! interface through which the engine's views ([`super::view::View`]) read any format that
//! has a two-pass reader (Claude Code JSONL, Codex rollouts).

use std::io;

use super::pass1::Spot;
use super::skeleton::Skeleton;
use super::{MadeFor, Source, pass2};
use crate::diag::Diagnostic;
use crate::engine::view::HeadBranch;
use crate::model::{Body, Meta, Node};

pub(crate) trait Reading: Send + Sync {
    /// The session's metadata, as the whole reader gives it.
    fn meta(&self) -> &Meta;
    /// The whole reader's diagnostics, in its order.
    fn diagnostics(&self) -> &[Diagnostic];
    /// Where each node's record is.
    fn spots(&self) -> &[Spot];
    /// The nodes' ids and parents.
    fn skeleton(&self) -> &Skeleton;
    /// The nodes from the root down to `leaf` ([`Skeleton::path_to`]).
    fn path_to(&self, leaf: u32) -> Vec<u32> {
        self.skeleton().path_to(leaf)
    }
    /// The head the whole reader names, as a node.
    fn head(&self) -> Option<u32>;
    /// Whether node `index` is a message (else an event).
    fn is_message(&self, index: u32) -> bool;
    /// Whether node `index` has a time (`node.timestamp` is set).
    fn timed(&self, index: u32) -> bool;
    /// Node `index`, made from its record's `bytes` as the whole reader makes it.
    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node;
    /// The records after the first that node `index` is made of: Qwen Code merges the
    /// records sharing a uuid into one node. None for most formats. Nodes are made through
    /// [`each_node`], which reads them.
    fn more_records(&self, _index: u32) -> &[Spot] {
        &[]
    }
    /// Node `index` made from the bytes of all its records: the first, then
    /// [`Self::more_records`].
    fn node_of_records(&self, index: u32, records: &[&[u8]], made_for: MadeFor) -> Node {
        self.node(index, records[0], made_for)
    }

    /// What `list` shows of the nodes of `path`: their user and assistant messages, and the
    /// text of the first user message `prompt` takes. Here, from each message's node.
    fn head_branch(
        &self,
        source: &dyn Source,
        path: &[u32],
        prompt: &dyn Fn(&str) -> bool,
    ) -> io::Result<HeadBranch> {
        let messages: Vec<u32> = path
            .iter()
            .copied()
            .filter(|&i| self.is_message(i))
            .collect();
        let mut out = HeadBranch::default();
        each_node(self, source, &messages, MadeFor::Counting, |_, node| {
            if let Body::Message(m) = &node.body {
                out.note(m, prompt);
            }
        })?;
        Ok(out)
    }
}

/// Calls `each` with the node of each of `indices` (in that order), made from its records as
/// the whole reader makes it for `made_for`: one record read for most nodes, all of them for
/// a node made of several ([`Reading::more_records`]).
pub(crate) fn each_node<R: Reading + ?Sized>(
    reading: &R,
    source: &dyn Source,
    indices: &[u32],
    made_for: MadeFor,
    mut each: impl FnMut(u32, Node),
) -> io::Result<()> {
    let mut failed = None;
    pass2::each_record(source, reading.spots(), indices, |i, bytes| {
        let more = reading.more_records(i);
        if more.is_empty() {
            each(i, reading.node(i, bytes, made_for));
            return;
        }
        if failed.is_some() {
            return;
        }
        match pass2::records_at(source, more) {
            Ok(rest) => {
                let mut all: Vec<&[u8]> = vec![bytes];
                all.extend(rest.iter().map(Vec::as_slice));
                each(i, reading.node_of_records(i, &all, made_for));
            }
            Err(e) => failed = Some(e),
        }
    })?;
    failed.map_or(Ok(()), Err)
}
