//! The tree of a session known only by its nodes' ids and parents (pass one), and the branch a
//! one-branch writer takes from it: the same nodes [`crate::model::Session::branch`] takes
//! from the whole session (the first node of an id answers for it; a parent naming a missing
//! node, or the node itself, makes a root; a cycle ends the walk). Nothing recurses.

use crate::check::ident::{Ident, Interner};

/// No node / no parent.
const NONE: u32 = u32::MAX;

/// Ids and parents, interned: about 60 bytes a node.
#[derive(Default)]
pub struct Skeleton {
    pub ids: Interner,
    /// Each node's id (interned).
    node_ids: Vec<u32>,
    /// Each node's parent id (interned), or [`NONE`].
    parents: Vec<u32>,
    /// For each interned id, the first node that has it ([`NONE`] for ids only named as
    /// parents).
    first: Vec<u32>,
}

impl Skeleton {
    pub fn len(&self) -> usize {
        self.node_ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.node_ids.is_empty()
    }

    pub fn intern(&mut self, id: &str) -> u32 {
        self.intern_ident(Ident::new(id))
    }

    /// [`intern`](Self::intern) of an id already made (on the thread that read it).
    pub fn intern_ident(&mut self, id: Ident) -> u32 {
        let n = self.ids.intern(id);
        if n as usize >= self.first.len() {
            self.first.resize(n as usize + 1, NONE);
        }
        n
    }

    /// Adds the next node (ids from [`intern`](Self::intern)).
    pub fn push(&mut self, id: u32, parent: Option<u32>) {
        let index = self.node_ids.len() as u32;
        if self.first[id as usize] == NONE {
            self.first[id as usize] = index;
        }
        self.node_ids.push(id);
        self.parents.push(parent.unwrap_or(NONE));
    }

    pub fn id(&self, index: u32) -> u32 {
        self.node_ids[index as usize]
    }

    pub fn parent_id(&self, index: u32) -> Option<u32> {
        Some(self.parents[index as usize]).filter(|&p| p != NONE)
    }

    /// The first node with the interned id `id`, if a node has it (else it is only named as
    /// a parent).
    pub fn node_of(&self, id: u32) -> Option<u32> {
        Some(self.first[id as usize]).filter(|&i| i != NONE)
    }

    /// The node an id names (its first one).
    pub fn index_of(&self, id: &str) -> Option<u32> {
        self.node_of(self.ids.get(&Ident::new(id))?)
    }

    /// The node `wanted` names, as [`crate::tree::Tree::find`] finds it in the whole session:
    /// its whole id (the first node of it), else the one id that starts with it.
    pub fn find(&self, wanted: &str) -> Result<u32, crate::id_prefix::IdError> {
        if let Some(i) = self.index_of(wanted) {
            return Ok(i);
        }
        let ids: Vec<(String, u32)> = (0..self.len() as u32).map(|i| (self.name(i), i)).collect();
        crate::id_prefix::find(ids.iter().map(|(id, i)| (id.as_str(), *i)), wanted, "node")
    }

    pub fn name(&self, index: u32) -> String {
        self.ids.name(self.id(index)).to_string()
    }

    /// The node's parent in the session, when it has one there (not itself): the parent
    /// [`crate::tree::Tree::parent`] gives.
    pub fn parent(&self, index: u32) -> Option<u32> {
        let p = self.parent_id(index)?;
        let pi = self.first[p as usize];
        (pi != NONE && pi != index).then_some(pi)
    }

    /// The branch a one-branch writer writes: from the root down to `leaf` (an id), or to
    /// `head` (a node) when no leaf is named, or the last node when there is no head. Returns
    /// the nodes in order, how many nodes of other branches were left out, and the records
    /// outside the conversation left out, as [`crate::model::Session::branch`] counts them
    /// (`is_event`: whether a node's body is an event); `Err` names a leaf that is not there.
    pub fn branch(
        &self,
        leaf: Option<&str>,
        head: Option<u32>,
        is_event: impl Fn(u32) -> bool,
    ) -> Result<Branch, String> {
        let tree_head = head.or_else(|| (self.len() as u32).checked_sub(1));
        let leaf_index = match leaf {
            Some(id) => self
                .index_of(id)
                .ok_or_else(|| format!("no node with id {id:?} in this session"))?,
            None => match tree_head {
                Some(h) => h,
                None => return Ok(Branch::default()),
            },
        };
        let path = self.path_to(leaf_index);
        // Outside the conversation (`Tree::is_outside`): an event with neither a parent nor
        // children, not the head; the leaf named is kept.
        let has_child = self.has_child();
        let outside: Vec<u32> = (0..self.len() as u32)
            .filter(|&i| {
                self.parent_id(i).is_none()
                    && !has_child[i as usize]
                    && Some(i) != tree_head
                    && i != leaf_index
                    && is_event(i)
            })
            .collect();
        let other_branches = self.len() - path.len() - outside.len();
        Ok(Branch {
            path,
            other_branches,
            outside,
        })
    }
}

impl Skeleton {
    /// The nodes from the root down to `leaf`, as [`crate::tree::Tree::path_to`] gives them:
    /// the walk up stops at a parent that is not there or where a cycle closes.
    pub fn path_to(&self, leaf: u32) -> Vec<u32> {
        // A node seen before closes a cycle. The walk visits each node once, so a bit per
        // node tells what was seen.
        let mut seen = vec![false; self.len()];
        let mut path = Vec::new();
        let mut next = Some(leaf);
        while let Some(cur) = next {
            seen[cur as usize] = true;
            path.push(cur);
            next = self.parent(cur).filter(|&p| !seen[p as usize]);
        }
        path.reverse();
        path
    }

    /// For each node, whether another node has it as its parent.
    pub fn has_child(&self) -> Vec<bool> {
        let mut has_child = vec![false; self.len()];
        for j in 0..self.len() as u32 {
            if let Some(p) = self.parent(j) {
                has_child[p as usize] = true;
            }
        }
        has_child
    }
}

/// What [`Skeleton::branch`] takes and leaves out.
#[derive(Debug, Default)]
pub struct Branch {
    /// The nodes written, root first.
    pub path: Vec<u32>,
    /// Nodes of other branches left out.
    pub other_branches: usize,
    /// Records outside the conversation left out, in file order.
    pub outside: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Body, Event, Extra, Message, Node, Part, Role, Session};

    /// The same nodes as a session and as a skeleton.
    fn both(nodes: &[(&str, Option<&str>)]) -> (Session, Skeleton) {
        let mut sk = Skeleton::default();
        let mut session = Session::default();
        for (id, parent) in nodes {
            let i = sk.intern(id);
            let p = parent.map(|p| sk.intern(p));
            sk.push(i, p);
            session.nodes.push(Node {
                id: id.to_string(),
                parent: parent.map(String::from),
                timestamp: None,
                // Ids starting with `e` are events (records that may stand outside).
                body: if id.starts_with('e') {
                    Body::Event(Event::Custom {
                        kind: "x".into(),
                        data: serde_json::Value::Null,
                    })
                } else {
                    Body::Message(Message::new(Role::User, vec![Part::text("x")]))
                },
                extra: Extra::new(),
                origin: None,
            });
        }
        (session, sk)
    }

    fn agree(nodes: &[(&str, Option<&str>)], leaf: Option<&str>, head: Option<&str>) {
        let (mut session, sk) = both(nodes);
        session.meta.head = head.map(String::from);
        let head_index = head.and_then(|h| sk.index_of(h));
        let is_event = |i: u32| matches!(session.nodes[i as usize].body, Body::Event(_));
        match (session.branch(leaf), sk.branch(leaf, head_index, is_event)) {
            (Ok((s, left)), Ok(b)) => {
                let ids: Vec<String> = s.nodes.iter().map(|n| n.id.clone()).collect();
                let ids2: Vec<String> = b.path.iter().map(|&i| sk.name(i)).collect();
                assert_eq!(
                    (ids, left.other_branches, left.outside),
                    (ids2, b.other_branches, b.outside.len()),
                    "{nodes:?} {leaf:?} {head:?}"
                );
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("{:?} vs {:?}", a.map(|x| x.1), b.map(|x| x.path)),
        }
    }

    #[test]
    fn branches_agree_with_the_session_model() {
        let tree = [
            ("A", None),
            ("B", Some("A")),
            ("C", Some("B")),
            ("D", Some("C")),
            ("E", Some("B")),
            ("F", Some("E")),
        ];
        for leaf in [None, Some("D"), Some("F"), Some("A"), Some("nope")] {
            for head in [None, Some("D"), Some("nope")] {
                agree(&tree, leaf, head);
            }
        }
        // Damage: a duplicate id (the first answers), a parent that is missing, a node that
        // is its own parent, a cycle.
        let damaged = [
            ("A", None),
            ("B", Some("A")),
            ("B", Some("X")),
            ("C", Some("C")),
            ("D", Some("E")),
            ("E", Some("D")),
            ("F", Some("B")),
        ];
        for leaf in [None, Some("B"), Some("C"), Some("D"), Some("E"), Some("F")] {
            agree(&damaged, leaf, None);
        }
        // Records beside the conversation: events without parent or children (one with a
        // child, one that is the head, one named as the leaf are not).
        let beside = [
            ("e1", None),
            ("A", None),
            ("e2", None),
            ("B", Some("A")),
            ("e3", None),
            ("C", Some("e3")),
            ("e4", Some("B")),
            ("e5", None),
        ];
        for leaf in [None, Some("C"), Some("e1"), Some("e4"), Some("e5")] {
            for head in [None, Some("B"), Some("e5"), Some("e2")] {
                agree(&beside, leaf, head);
            }
        }
        agree(&[], None, None);
        agree(&[], Some("x"), None);
    }
}
