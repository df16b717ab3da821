//! A session read in two passes for the commands that look at it rather than convert it
//! (`show`, `list`): pass one ([`super::pass1`]) gives its metadata, every diagnostic the whole
//! reader gives and the tree of its ids; a node is made from its record only when it is
//! wanted (pass two), and dropped after. Memory is bounded by the number of records, never by
//! their content.
//!
//! Every answer is the whole session's: what [`crate::convert::read`] and
//! [`crate::tree::Tree`] give for the same input (`tests/view.rs` holds them to it).
//!
//! Covered: every format with a reader in two passes ([`Format::two_pass`]: Claude Code JSONL,
//! Codex rollouts, Qwen Code JSONL, Gemini legacy documents and Gemini CLI's JSONL recordings,
//! their messages' places for records; the metadata without the copy of the input Gemini CLI's
//! recording reader keeps as its origin for its own writer). [`View::open`] answers `None`
//! for any other format (or a document the two passes do not read); the caller reads the whole
//! session then.

use std::io;
use std::path::Path;

use rayon::prelude::*;

use super::links::Links;
use super::pass1::Pass1Options;
use super::reading::{Needs, Reading};
use super::{MadeFor, Source};
use crate::diag::Diagnostic;
use crate::formats::Format;
use crate::id_prefix::IdError;
use crate::model::{Meta, Node};

/// Bytes of records whose nodes are made at a time on one thread in pass two.
const RUN_BYTES: u64 = 256 << 10;

/// A session known by pass one; its nodes read on demand.
pub struct View<'s> {
    source: &'s dyn Source,
    format: &'static dyn Format,
    known: Box<dyn Reading>,
}

impl<'s> View<'s> {
    /// Pass one over `source` (called `name` in diagnostics), when its format (`from` unless
    /// the content contradicts it, else the one detected from its first bytes, as
    /// [`crate::convert::read`] finds it) is one this reading covers; `Ok(None)` otherwise.
    pub fn open(
        name: &str,
        path: Option<&Path>,
        source: &'s dyn Source,
        from: Option<&'static dyn Format>,
    ) -> io::Result<Option<View<'s>>> {
        let Some(format) = super::format_of(source, path, from)? else {
            return Ok(None);
        };
        let Some(super::TwoPass(reader)) = format.two_pass() else {
            return Ok(None);
        };
        let options = Pass1Options::default();
        let Some(known) = reader.read(name, source, Needs::VIEW, options)? else {
            return Ok(None);
        };
        Ok(Some(View {
            source,
            format,
            known,
        }))
    }

    pub fn format(&self) -> &'static dyn Format {
        self.format
    }

    /// The session's metadata, as the whole reader gives it.
    pub fn meta(&self) -> &Meta {
        self.known.meta()
    }

    /// The whole reader's diagnostics, in its order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.known.diagnostics()
    }

    /// How many nodes the session has (one a record).
    pub fn len(&self) -> usize {
        self.known.spots().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The head, as [`crate::tree::Tree::head`] finds it: the node the metadata names, else
    /// the last one.
    pub fn head(&self) -> Option<u32> {
        self.known
            .head()
            .or_else(|| (self.len() as u32).checked_sub(1))
    }

    /// The node `wanted` names (its whole id or the start of one), as
    /// [`crate::tree::Tree::find`] finds it.
    pub fn find(&self, wanted: &str) -> Result<u32, IdError> {
        self.known.skeleton().find(wanted)
    }

    /// A node's id.
    pub fn id(&self, index: u32) -> String {
        self.known.id_of(index)
    }

    /// The parent a node names (`Node::parent`), found in the session or not.
    pub fn parent_id(&self, index: u32) -> Option<String> {
        self.known.parent_of(index)
    }

    /// The nodes from the root down to `leaf` ([`crate::tree::Tree::path_to`]).
    pub fn path_to(&self, leaf: u32) -> Vec<u32> {
        self.known.path_to(leaf)
    }

    /// How many leaves end a branch of the conversation
    /// ([`crate::tree::Tree::branch_leaves`]): nodes without children, but for the records
    /// outside the conversation (events with neither parent nor children, not the head).
    pub fn branch_leaves(&self) -> usize {
        // One line of nodes ends one branch, known without interning every id.
        if self.known.linear() {
            let leaves = usize::from(!self.is_empty());
            debug_assert_eq!(leaves, self.links().branch_leaves());
            return leaves;
        }
        self.links().branch_leaves()
    }

    /// The tree the parent links make: children, roots, orphans, records outside the
    /// conversation, as [`crate::tree::Tree`] has them.
    pub fn links(&self) -> Links {
        Links::new(self.known.skeleton(), self.head(), |i| {
            !self.known.is_message(i)
        })
    }

    /// The children of each node of `path` but the last that are not the next node of
    /// `path`, as `(position in path, child)` in order of position, then of the file (the
    /// order of [`crate::tree::Tree::children`]).
    pub fn side_children(&self, path: &[u32]) -> Vec<(usize, u32)> {
        // On one line of nodes, each node's one child is the next on the path.
        if self.known.linear() && path.iter().copied().eq(0..path.len() as u32) {
            debug_assert!(self.side_children_linked(path).is_empty());
            return Vec::new();
        }
        self.side_children_linked(path)
    }

    /// [`Self::side_children`] from the parent links.
    fn side_children_linked(&self, path: &[u32]) -> Vec<(usize, u32)> {
        let sk = self.known.skeleton();
        let mut position = vec![u32::MAX; self.len()];
        for (pos, &i) in path.iter().enumerate().take(path.len().saturating_sub(1)) {
            position[i as usize] = pos as u32;
        }
        let mut out: Vec<(usize, u32)> = (0..self.len() as u32)
            .filter_map(|j| {
                let pos = position[sk.parent(j)? as usize];
                (pos != u32::MAX && path[pos as usize + 1] != j).then_some((pos as usize, j))
            })
            .collect();
        out.sort_by_key(|&(pos, _)| pos);
        out
    }

    /// The nodes of `indices`, in that order, as the whole reader makes them for `made_for`
    /// (`OwnWriter`: with their origins, as the whole reader makes them; `Counting`: the fields
    /// the reader does not interpret left null); `each`'s first error stops the reading.
    ///
    /// Nodes are made in runs of records, several runs at once on the thread pool (on a
    /// thread of their own, a window of runs ahead), and handed to `each` in order on the
    /// caller's thread (which may hold what cannot leave it, such as a lock on standard
    /// output); each is freed by the thread that made it (`engine::bins`). In memory: the
    /// nodes of about three windows of runs.
    pub fn each_node(
        &self,
        indices: &[u32],
        made_for: MadeFor,
        mut each: impl FnMut(u32, &Node) -> io::Result<()>,
    ) -> io::Result<()> {
        let runs = super::runs::runs(self.known.spots(), indices, RUN_BYTES);
        let bins = super::bins::Bins::new();
        type Run = (Option<usize>, Vec<(u32, Node)>);
        let make = |run: &std::ops::Range<usize>| -> io::Result<Run> {
            let thread = bins.empty_own();
            let mut nodes = Vec::with_capacity(run.len());
            super::reading::each_node(
                &*self.known,
                self.source,
                &indices[run.clone()],
                made_for,
                |i, node| nodes.push((i, node)),
            )?;
            Ok((thread, nodes))
        };
        std::thread::scope(|scope| {
            let (made, ready) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                for window in runs.chunks(super::runs::window()) {
                    let nodes: Vec<io::Result<Run>> = window.par_iter().map(make).collect();
                    // The caller stopped: nothing more to make.
                    if made.send(nodes).is_err() {
                        break;
                    }
                }
            });
            for window in ready {
                for run in window {
                    let (thread, nodes) = run?;
                    for (i, node) in &nodes {
                        each(*i, node)?;
                    }
                    bins.give_back(thread, nodes);
                }
            }
            Ok(())
        })
    }

    /// What `list` shows of the head branch: its user and assistant messages, and the text of
    /// the first user message `prompt` takes.
    pub fn head_branch(&self, prompt: impl Fn(&str) -> bool) -> io::Result<HeadBranch> {
        let path = self.head().map(|h| self.path_to(h)).unwrap_or_default();
        self.known.head_branch(self.source, &path, &prompt)
    }
}

/// What `list` shows of the head branch (of a session in any format).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HeadBranch {
    /// User and assistant messages on it.
    pub messages: usize,
    /// The text ([`crate::model::Message::text`]) of its first user message that the caller
    /// took as the prompt.
    pub first_prompt: Option<String>,
}

impl HeadBranch {
    /// The next message of the branch: counted when it is the user's or the assistant's;
    /// its text the first prompt when it is the first user message whose text `prompt` takes.
    pub fn note(&mut self, m: &crate::model::Message, prompt: impl Fn(&str) -> bool) {
        use crate::model::Role;
        self.messages += usize::from(matches!(m.role, Role::User | Role::Assistant));
        if self.first_prompt.is_none() && m.role == Role::User {
            let text = m.text();
            if prompt(&text) {
                self.first_prompt = Some(text);
            }
        }
    }
}
