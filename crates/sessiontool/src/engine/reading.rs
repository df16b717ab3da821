//! A format's reader in two passes, as its module declares it ([`TwoPassReader`], given by
//! [`crate::formats::Format::two_pass`]), and what its pass one knows of a session
//! ([`Reading`]): the one interface through which the engine's conversions and views read
//! every format that has one.

use std::collections::HashMap;
use std::io;

use super::pass1::{Pass1Options, Spot};
use super::skeleton::Skeleton;
use super::{Job, MadeFor, Plan, PlanError, Source, pass2};
use crate::diag::Diagnostic;
use crate::engine::view::HeadBranch;
use crate::model::{Body, Meta, Node};

/// What pass one learns for the user of a reading, beyond what every reading knows (the
/// metadata, the diagnostics, the places, ids and parents of the nodes).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Needs {
    /// Nodes are made in pass two (else the records are only copied as they are).
    pub nodes: bool,
    /// The calls no result answers are counted ([`Reading::open_calls`]): for a target
    /// whose tool does not answer them itself.
    pub open_calls: bool,
    /// The name of each call id is kept ([`Reading::call_names`]): for a writer whose
    /// results name their call.
    pub call_names: bool,
}

impl Needs {
    /// What `show`, `tree` and `list` read: the nodes.
    pub(crate) const VIEW: Needs = Needs {
        nodes: true,
        open_calls: false,
        call_names: false,
    };
}

/// A format's reader in two passes. Its module implements it and the format gives it
/// ([`crate::formats::Format::two_pass`]); the engine then converts a session of the format
/// into every target that streams ([`super::target::StreamTarget`]) and views it, with no
/// other line to add anywhere.
pub(crate) trait TwoPassReader: Sync {
    /// Pass one over `source` (called `name` in messages), learning what `needs` asks;
    /// `None` when the two passes do not read this input (the whole reader says what it is).
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>>;

    /// A conversion into this very format, when the format writes its records back as they
    /// are (copied, or remade where the conversion changes them): pass one and the plan.
    /// `Ok(None)`: the whole-session path converts it.
    fn write_back<'a>(
        &self,
        _job: Job<'a>,
        _needs: Needs,
        _adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        Ok(None)
    }
}

/// What a writer whose results name their call learns of a branch's calls before writing.
#[derive(Debug, Default)]
pub(crate) struct BranchCalls {
    /// The name of each call id on the branch, from its first call.
    pub names: HashMap<String, String>,
    /// The id and call names of the node the branch's root hangs under, when the parents make
    /// a loop and that node is on the branch.
    pub root_parent: Option<(String, Vec<String>)>,
}

/// A tool call as pass one keeps it: its node, its id (when it has one) and its name.
pub(crate) type CallOf = (u32, Option<Box<str>>, Box<str>);

impl BranchCalls {
    /// From `calls`, `(node, call id, name)` of every tool call of the session in file order,
    /// as the whole writer finds them on the branch (`gemini_content::call_names` over its
    /// nodes, `calls_of` the node its root hangs under).
    pub(crate) fn of(calls: &[CallOf], skeleton: &Skeleton, branch: &[u32]) -> BranchCalls {
        let mut position = vec![u32::MAX; skeleton.len()];
        for (k, &i) in branch.iter().enumerate() {
            position[i as usize] = position[i as usize].min(k as u32);
        }
        let mut first: HashMap<&str, (u32, &str)> = HashMap::new();
        for (node, id, name) in calls {
            let (Some(id), at) = (id, position[*node as usize]) else {
                continue;
            };
            if at == u32::MAX {
                continue;
            }
            let e = first.entry(id).or_insert((at, name));
            if at < e.0 {
                *e = (at, name);
            }
        }
        let names = first
            .into_iter()
            .map(|(id, (_, name))| (id.to_string(), name.to_string()))
            .collect();
        // The root's parent is on the branch only when the parents make a loop.
        let root_parent = branch
            .first()
            .and_then(|&i| skeleton.parent(i))
            .filter(|p| branch.contains(p))
            .map(|p| {
                let from = calls.partition_point(|c| c.0 < p);
                let names = calls[from..].iter().take_while(|c| c.0 == p);
                (skeleton.name(p), names.map(|c| c.2.to_string()).collect())
            });
        BranchCalls { names, root_parent }
    }
}

pub(crate) trait Reading: Send + Sync {
    /// The session's metadata, as the whole reader gives it.
    fn meta(&self) -> &Meta;
    /// The whole reader's diagnostics, in its order.
    fn diagnostics(&self) -> &[Diagnostic];
    /// Where each node's record is.
    fn spots(&self) -> &[Spot];
    /// The nodes' ids and parents.
    fn skeleton(&self) -> &Skeleton;
    /// Node `index`'s id.
    fn id_of(&self, index: u32) -> String {
        self.skeleton().name(index)
    }
    /// The id of the parent node `index` names (`Node::parent`), found in the session or not.
    fn parent_of(&self, index: u32) -> Option<String> {
        let sk = self.skeleton();
        sk.parent_id(index).map(|p| sk.ids.name(p).to_string())
    }
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
    /// The calls no result answers, as [`crate::check::document::unanswered_calls`] counts
    /// them, when pass one was asked to count them ([`Needs::open_calls`]); else 0.
    fn open_calls(&self) -> usize;
    /// The calls of `branch`, when pass one was asked for their names
    /// ([`Needs::call_names`]). None by default: the session's results name their calls
    /// themselves (the Gemini family's).
    fn call_names(&mut self, _branch: &[u32]) -> BranchCalls {
        BranchCalls::default()
    }
    /// The nodes are one line, each the child of the one before (a Codex rollout): every
    /// node is on the branch, and a `--leaf` cuts the session, which the whole path does.
    fn linear(&self) -> bool {
        false
    }
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
