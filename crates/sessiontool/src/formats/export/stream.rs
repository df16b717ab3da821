//! The exports as targets of the engine ([`crate::engine`]): a session of any format with a
//! two-pass reader exported in memory bounded by its number of records. The sections are
//! planned on the tree of ids ([`Links`]); each section's nodes are read twice, once for where
//! its calls and results are and once to print them, and a result shown under its call is
//! read again where it is. The same code as the whole path ([`super::export`]), over the
//! engine's reading instead of the session in memory: the same bytes.

use std::io;

use super::{ExportError, Exporter, Nodes, Render, export};
use crate::diag::LossReport;
use crate::engine::links::Links;
use crate::engine::reading::{self, Reading};
use crate::engine::runs::each_branch_node;
use crate::engine::target::{PassTwo, StreamTarget};
use crate::engine::{Job, MadeFor, Output, PlanError, Route};
use crate::formats::WriteOptions;
use crate::model::{Meta, Node};

impl<E: Exporter> StreamTarget for E {
    fn route(
        &self,
        _job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        Ok(Some(Route::Own(Box::new(Streamed {
            known,
            meta,
            leaf,
            render: E::renderer(),
        }))))
    }
}

/// An export written by the engine.
struct Streamed {
    known: Box<dyn Reading>,
    /// The metadata as the export shows it.
    meta: Meta,
    /// The `--leaf` node's whole id.
    leaf: Option<String>,
    render: Box<dyn Render>,
}

impl PassTwo for Streamed {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let Streamed {
            known,
            meta,
            leaf,
            mut render,
        } = *self;
        let known = &*known;
        let len = known.spots().len();
        // As `Tree::head`: the node the metadata names, else the last one.
        let head = known.head().or_else(|| (len as u32).checked_sub(1));
        let nodes = Engine {
            job,
            known,
            meta: &meta,
            links: Links::new(known.skeleton(), head, |i| !known.is_message(i)),
            head,
        };
        let options = WriteOptions {
            leaf,
            ..job.options.clone()
        };
        match export(&nodes, &options, &mut *render, &mut |s| {
            out.put(s.as_bytes())
        }) {
            Ok(losses) => Ok(losses),
            Err(ExportError::Io(e)) => Err(e),
            // The leaf was found before (the plan's `prepared`).
            Err(ExportError::Write(e)) => Err(io::Error::other(e.0)),
        }
    }
}

/// A session as the engine's pass one knows it, its nodes read again when asked for.
struct Engine<'a> {
    job: &'a Job<'a>,
    known: &'a dyn Reading,
    meta: &'a Meta,
    links: Links,
    head: Option<u32>,
}

/// Asked for this many nodes or fewer, they are read on the calling thread, one at a time (a
/// node looked up again); more, in runs on the thread pool (a window of runs ahead of what is
/// handed over: a caller that stops early, at the first prompt, leaves that much unread).
const FEW: usize = 16;

/// Exports show every field of a node's record they show at all.
const MADE_FOR: MadeFor = MadeFor::Anyone;

impl Nodes for Engine<'_> {
    fn meta(&self) -> &Meta {
        self.meta
    }

    fn len(&self) -> usize {
        self.known.spots().len()
    }

    fn head(&self) -> Option<usize> {
        self.head.map(|h| h as usize)
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.known.skeleton().index_of(id).map(|i| i as usize)
    }

    fn parent_id(&self, index: usize) -> Option<String> {
        let sk = self.known.skeleton();
        sk.parent_id(index as u32)
            .map(|p| sk.ids.name(p).to_string())
    }

    fn path_to(&self, leaf: usize) -> Vec<usize> {
        let path = self.known.path_to(leaf as u32);
        path.into_iter().map(|i| i as usize).collect()
    }

    fn outside(&self) -> Vec<usize> {
        self.links
            .outside()
            .into_iter()
            .map(|i| i as usize)
            .collect()
    }

    fn branch_leaves(&self) -> Vec<usize> {
        self.links.branch_leaf_nodes().map(|i| i as usize).collect()
    }

    fn timed(&self, index: usize) -> bool {
        self.known.timed(index as u32)
    }

    fn each(
        &self,
        indices: &[usize],
        each: &mut (dyn FnMut(usize, &Node) -> io::Result<bool> + Send),
    ) -> io::Result<()> {
        if indices.len() > FEW {
            return self.each_in_runs(indices, each);
        }
        let wanted: Vec<u32> = indices.iter().map(|&i| i as u32).collect();
        let (mut going, mut failed) = (true, None);
        reading::each_node(self.known, self.job.source, &wanted, MADE_FOR, |i, node| {
            if going && failed.is_none() {
                match each(i as usize, &node) {
                    Ok(go) => going = go,
                    Err(e) => failed = Some(e),
                }
            }
        })?;
        failed.map_or(Ok(()), Err)
    }
}

impl Engine<'_> {
    /// [`Nodes::each`] over many nodes: made in runs on the thread pool, handed over in order.
    fn each_in_runs(
        &self,
        indices: &[usize],
        each: &mut (dyn FnMut(usize, &Node) -> io::Result<bool> + Send),
    ) -> io::Result<()> {
        let wanted: Vec<u32> = indices.iter().map(|&i| i as u32).collect();
        let mut stopped = false;
        let done = each_branch_node(self.job, self.known, &wanted, MADE_FOR, |run, nodes| {
            for (&i, node) in run.iter().zip(nodes.iter()) {
                if !each(i as usize, node)? {
                    stopped = true;
                    return Err(io::Error::other(Stopped));
                }
            }
            Ok(())
        });
        match done {
            Err(_) if stopped => Ok(()),
            other => other,
        }
    }
}

/// Said to stop making nodes once the caller has what it wanted.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}
