//! `tree` of a session read in two passes ([`View`]): the structure from pass one, and only
//! the nodes a line names made from their records (the ends of each folded run; every node
//! with `--full`), each described and dropped. Memory is bounded by the number of records,
//! never by their content. The output is the whole-session path's, byte for byte
//! (`tests/engine/view.rs` holds it to it).
//!
//! What goes through the whole session instead ([`tree`] returns `None`): standard input and
//! sessions in a database, database files named without a session, formats [`View`] does not
//! read yet (all but Claude Code JSONL), and `--from` naming a format the content plainly is
//! not. `tree --json` goes the same way, each node serialized as it is read.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use sessiontool::engine::MadeFor;
use sessiontool::engine::links::Links;
use sessiontool::engine::view::View;
use sessiontool::formats::Format;

use super::json::{Doc, Nodes};
use super::{Shape, describe, draw};
use crate::error::CliError;
use crate::input;
use crate::report;

/// Draws the tree of the session in `file` when the two-pass reading covers it: its exit
/// code, or `None` (nothing said yet) when the whole path must draw it.
pub(super) fn tree(
    file: &Path,
    from: Option<&'static dyn Format>,
    full: bool,
) -> Result<Option<i32>, CliError> {
    input::with_view(file, from, |name, view| {
        report::print_diagnostics(view.diagnostics());
        let format = view.format().name();
        let mut outline = Outline {
            view,
            links: view.links(),
            described: None,
            wanted: RefCell::new(Vec::new()),
            summary: String::new(),
        };
        // A first drawing into nothing says which nodes the lines describe; they are read,
        // then the tree is drawn.
        draw(
            &mut std::io::sink(),
            name,
            format,
            &outline,
            view.len(),
            full,
        )
        .expect("nothing to fail writing into");
        outline.read().map_err(|e| input::read_error(file, e))?;
        let mut out = std::io::BufWriter::new(anstream::stdout().lock());
        draw(&mut out, name, format, &outline, view.len(), full)
            .and_then(|()| out.flush())
            .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
        Ok(0)
    })
}

/// `tree --json` of the session in `file` when the two-pass reading covers it: the document
/// the whole path prints (schema sessiontool.tree/1), each node read, serialized and dropped.
pub(super) fn tree_json(
    file: &Path,
    from: Option<&'static dyn Format>,
) -> Result<Option<i32>, CliError> {
    input::with_view(file, from, |name, view| {
        let links = view.links();
        let head = links.head().map(|h| view.id(h));
        report::print_json(&Doc {
            schema: "sessiontool.tree/1",
            file: name,
            format: view.format().name(),
            diagnostics: view.diagnostics(),
            branches: links.branch_leaves(),
            outside_conversation: links.outside().len(),
            head: head.as_deref(),
            nodes: Nodes::of_view(view, &links),
        });
        Ok(0)
    })
}

/// The tree of a [`View`]: its links, and the descriptions of the nodes drawn.
pub(super) struct Outline<'v> {
    view: &'v View<'v>,
    links: Links,
    /// Each described node's [`describe`] (`None` before they are read: the nodes asked
    /// for are then noted in `wanted`).
    described: Option<HashMap<usize, String>>,
    wanted: RefCell<Vec<usize>>,
    /// [`sessiontool::tree::Tree::outside_summary`] of the records outside.
    summary: String,
}

impl Outline<'_> {
    /// Reads the nodes asked for and the records outside the conversation, in file order.
    fn read(&mut self) -> std::io::Result<()> {
        let mut wanted = std::mem::take(self.wanted.get_mut());
        let outside = self.links.outside();
        let is_outside = |i: u32| self.links.is_outside(i);
        wanted.extend(outside.iter().map(|&i| i as usize));
        wanted.sort_unstable();
        wanted.dedup();
        let indices: Vec<u32> = wanted.iter().map(|&i| i as u32).collect();
        let mut described = HashMap::new();
        let mut names = Vec::new();
        self.view.each_node(&indices, MadeFor::Anyone, |i, node| {
            // A record outside the conversation is on no line: it is only counted.
            if is_outside(i) {
                names.push(sessiontool::tree::record_name(node));
            } else {
                described.insert(i as usize, describe(node));
            }
            Ok(())
        })?;
        self.summary = sessiontool::tree::kinds_summary(names);
        self.described = Some(described);
        Ok(())
    }
}

impl Shape for Outline<'_> {
    fn head(&self) -> Option<usize> {
        self.links.head().map(|h| h as usize)
    }

    fn branch_leaves(&self) -> usize {
        self.links.branch_leaves()
    }

    fn starts(&self) -> Vec<usize> {
        let links = &self.links;
        links
            .roots()
            .iter()
            .chain(links.orphans())
            .map(|&i| i as usize)
            .collect()
    }

    fn is_outside(&self, index: usize) -> bool {
        self.links.is_outside(index as u32)
    }

    fn outside(&self) -> Vec<usize> {
        self.links
            .outside()
            .into_iter()
            .map(|i| i as usize)
            .collect()
    }

    fn outside_summary(&self) -> String {
        self.summary.clone()
    }

    fn children(&self, index: usize) -> Vec<usize> {
        let children = self.links.children(index as u32);
        children.iter().map(|&c| c as usize).collect()
    }

    fn only_child(&self, index: usize) -> Option<usize> {
        match self.links.children(index as u32) {
            [only] => Some(*only as usize),
            _ => None,
        }
    }

    fn is_leaf(&self, index: usize) -> bool {
        self.links.children(index as u32).is_empty()
    }

    fn id(&self, index: usize) -> String {
        self.view.id(index as u32)
    }

    fn parent_id(&self, index: usize) -> Option<String> {
        self.view.parent_id(index as u32)
    }

    fn describe(&self, index: usize) -> String {
        match &self.described {
            Some(described) => described.get(&index).cloned().unwrap_or_default(),
            None => {
                self.wanted.borrow_mut().push(index);
                String::new()
            }
        }
    }
}
