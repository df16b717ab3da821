//! The whole session in memory, as an export reads it ([`Nodes`]).

use std::io;

use super::Nodes;
use crate::model::{Meta, Node, Session};
use crate::tree::Tree;

/// A session read whole, with its tree.
pub(crate) struct Whole<'s> {
    session: &'s Session,
    tree: Tree<'s>,
}

impl<'s> Whole<'s> {
    pub(crate) fn new(session: &'s Session) -> Self {
        Whole {
            session,
            tree: session.tree(),
        }
    }
}

impl Nodes for Whole<'_> {
    fn meta(&self) -> &Meta {
        &self.session.meta
    }

    fn len(&self) -> usize {
        self.session.nodes.len()
    }

    fn head(&self) -> Option<usize> {
        self.tree.head()
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.tree.index_of(id)
    }

    fn parent_id(&self, index: usize) -> Option<String> {
        self.session.nodes[index].parent.clone()
    }

    fn path_to(&self, leaf: usize) -> Vec<usize> {
        self.tree.path_to(leaf)
    }

    fn outside(&self) -> Vec<usize> {
        self.tree.outside()
    }

    fn branch_leaves(&self) -> Vec<usize> {
        self.tree.branch_leaves()
    }

    fn timed(&self, index: usize) -> bool {
        self.session.nodes[index].timestamp.is_some()
    }

    fn each(
        &self,
        indices: &[usize],
        each: &mut (dyn FnMut(usize, &Node) -> io::Result<bool> + Send),
    ) -> io::Result<()> {
        for &i in indices {
            if !each(i, &self.session.nodes[i])? {
                break;
            }
        }
        Ok(())
    }
}
