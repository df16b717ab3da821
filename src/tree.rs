//! The tree that `parent` links make of a session's nodes: roots, children, the head, the path
//! from a leaf to its root, and every leaf. Built once, by index, for cheap repeated queries.

use std::collections::HashMap;

use crate::model::{Node, Session};

/// An index over `session.nodes`; positions are indexes into that vector.
pub struct Tree<'a> {
    nodes: &'a [Node],
    by_id: HashMap<&'a str, usize>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    /// Nodes whose parent id names no node in the session.
    orphans: Vec<usize>,
    head: Option<usize>,
}

impl<'a> Tree<'a> {
    pub fn new(session: &'a Session) -> Self {
        let nodes = session.nodes.as_slice();
        let mut by_id = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            // First occurrence wins; readers keep ids unique, so this only matters for damage.
            by_id.entry(n.id.as_str()).or_insert(i);
        }
        let mut children = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        let mut orphans = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            match n.parent.as_deref() {
                None => roots.push(i),
                Some(p) => match by_id.get(p) {
                    Some(&pi) if pi != i => children[pi].push(i),
                    _ => orphans.push(i),
                },
            }
        }
        let head = session
            .meta
            .head
            .as_deref()
            .and_then(|h| by_id.get(h).copied())
            .or_else(|| nodes.len().checked_sub(1));
        Tree {
            nodes,
            by_id,
            children,
            roots,
            orphans,
            head,
        }
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    pub fn node(&self, index: usize) -> &'a Node {
        &self.nodes[index]
    }

    /// Nodes without a parent, in file order.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// Nodes whose parent is missing from the session.
    pub fn orphans(&self) -> &[usize] {
        &self.orphans
    }

    /// Children of a node, in file order.
    pub fn children(&self, index: usize) -> &[usize] {
        &self.children[index]
    }

    /// The current leaf: the one the metadata names, else the last node in file order.
    pub fn head(&self) -> Option<usize> {
        self.head
    }

    /// Nodes with no children, in file order.
    pub fn leaves(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.children[i].is_empty())
            .collect()
    }

    /// The nodes from the root down to `leaf`, inclusive. Stops (without looping) at a missing
    /// parent or a cycle; the first element is then the node whose parent could not be followed.
    pub fn path_to(&self, leaf: usize) -> Vec<usize> {
        let mut path = vec![leaf];
        let mut seen = vec![false; self.nodes.len()];
        seen[leaf] = true;
        let mut cur = leaf;
        while let Some(p) = self.nodes[cur].parent.as_deref() {
            match self.by_id.get(p) {
                Some(&pi) if !seen[pi] => {
                    seen[pi] = true;
                    path.push(pi);
                    cur = pi;
                }
                _ => break,
            }
        }
        path.reverse();
        path
    }

    /// Nodes with more than one child: where the conversation branches.
    pub fn branch_points(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.children[i].len() > 1)
            .collect()
    }
}

impl Session {
    pub fn tree(&self) -> Tree<'_> {
        Tree::new(self)
    }

    /// The session reduced to one branch: the path from the root to `leaf` (or to the head).
    /// Returns the new session and how many nodes were left out because they are on other
    /// branches. Unknown leaf ids are an error for the caller to report.
    pub fn branch(&self, leaf: Option<&str>) -> Result<(Session, usize), String> {
        let tree = self.tree();
        let leaf_index = match leaf {
            Some(id) => tree
                .index_of(id)
                .ok_or_else(|| format!("no node with id {id:?} in this session"))?,
            None => match tree.head() {
                Some(h) => h,
                None => return Ok((self.clone(), 0)),
            },
        };
        let path = tree.path_to(leaf_index);
        let left_out = self.nodes.len() - path.len();
        let mut out = Session {
            meta: self.meta.clone(),
            nodes: path.iter().map(|&i| self.nodes[i].clone()).collect(),
        };
        if leaf.is_some() {
            out.meta.head = Some(self.nodes[leaf_index].id.clone());
        }
        Ok((out, left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Body, Extra, Message, Part, Role};

    fn node(id: &str, parent: Option<&str>) -> Node {
        Node {
            id: id.into(),
            parent: parent.map(Into::into),
            timestamp: None,
            body: Body::Message(Message::new(Role::User, vec![Part::text(id)])),
            extra: Extra::new(),
            hints: Extra::new(),
        }
    }

    fn branched() -> Session {
        // A - B - C - D
        //      \
        //       E - F   (F last in file: the head)
        Session {
            nodes: vec![
                node("A", None),
                node("B", Some("A")),
                node("C", Some("B")),
                node("D", Some("C")),
                node("E", Some("B")),
                node("F", Some("E")),
            ],
            ..Default::default()
        }
    }

    fn ids(s: &Session, idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&i| s.nodes[i].id.clone()).collect()
    }

    #[test]
    fn roots_children_leaves_head() {
        let s = branched();
        let t = s.tree();
        assert_eq!(ids(&s, t.roots()), ["A"]);
        assert_eq!(ids(&s, t.children(1)), ["C", "E"]);
        assert_eq!(ids(&s, &t.leaves()), ["D", "F"]);
        assert_eq!(t.head(), Some(5));
        assert_eq!(ids(&s, &t.branch_points()), ["B"]);
        assert_eq!(ids(&s, &t.path_to(3)), ["A", "B", "C", "D"]);
        assert_eq!(ids(&s, &t.path_to(5)), ["A", "B", "E", "F"]);
    }

    #[test]
    fn branch_follows_head_or_leaf() {
        let s = branched();
        let (head, left_out) = s.branch(None).unwrap();
        assert_eq!(left_out, 2);
        assert_eq!(
            head.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
            ["A", "B", "E", "F"]
        );
        let (d, _) = s.branch(Some("D")).unwrap();
        assert_eq!(d.nodes.last().unwrap().id, "D");
        assert!(s.branch(Some("nope")).is_err());
    }

    #[test]
    fn orphans_and_cycles_do_not_loop() {
        let s = Session {
            nodes: vec![
                node("A", Some("missing")),
                node("B", Some("C")),
                node("C", Some("B")),
            ],
            ..Default::default()
        };
        let t = s.tree();
        assert_eq!(ids(&s, t.orphans()), ["A"]);
        assert!(t.roots().is_empty());
        assert_eq!(ids(&s, &t.path_to(2)), ["B", "C"]);
    }
}
