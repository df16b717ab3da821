//! The tree that `parent` links make of a session's nodes: roots, children, the head, the path
//! from a leaf to its root, and every leaf. Built once, by index, for cheap repeated queries.
//! Nothing here recurses: a session can be a million nodes deep.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::model::{Node, Session};

pub(crate) mod kept;

/// An index over `session.nodes`; positions are indexes into that vector.
pub struct Tree<'a> {
    nodes: &'a [Node],
    by_id: HashMap<&'a str, usize>,
    /// Each node's parent, resolved (`None`: a root, or a parent not in the session).
    parents: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    /// Nodes whose parent id names no node in the session.
    orphans: Vec<usize>,
    head: Option<usize>,
    /// Preorder entry and exit times of each node reachable from a root or an orphan (made on
    /// first use): `a` is an ancestor of `b` when `b`'s span lies inside `a`'s.
    spans: OnceLock<Vec<(u32, u32)>>,
}

/// The span of a node no root reaches (it hangs below a cycle of parent links).
const UNREACHED: (u32, u32) = (u32::MAX, 0);

impl<'a> Tree<'a> {
    pub fn new(session: &'a Session) -> Self {
        let nodes = session.nodes.as_slice();
        let mut by_id = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            // First occurrence wins; readers keep ids unique, so this only matters for damage.
            by_id.entry(n.id.as_str()).or_insert(i);
        }
        let mut parents = vec![None; nodes.len()];
        let mut children = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        let mut orphans = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            match n.parent.as_deref() {
                None => roots.push(i),
                Some(p) => match by_id.get(p) {
                    Some(&pi) if pi != i => {
                        parents[i] = Some(pi);
                        children[pi].push(i);
                    }
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
            parents,
            children,
            roots,
            orphans,
            head,
            spans: OnceLock::new(),
        }
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The node `wanted` names: its whole id, or the start of one id (as `tree` prints ids);
    /// an error names every node that matches when several do.
    pub fn find(&self, wanted: &str) -> Result<usize, crate::id_prefix::IdError> {
        if let Some(i) = self.index_of(wanted) {
            return Ok(i);
        }
        let ids = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i));
        crate::id_prefix::find(ids, wanted, "node")
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

    /// Nodes with no children, in file order (records outside the conversation included).
    pub fn leaves(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.children[i].is_empty())
            .collect()
    }

    /// The leaves that end a branch of the conversation: every leaf but the records outside
    /// it ([`Tree::is_outside`]).
    pub fn branch_leaves(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.children[i].is_empty() && !self.is_outside(i))
            .collect()
    }

    /// Whether a node stands outside the conversation: an event with neither a parent nor
    /// children (Claude Code's file-history snapshots, queue operations and summaries are
    /// written beside the chain, not in it). It is on no path a tool resumes, so it is no
    /// branch; the head never counts as one (it is what a tool resumes).
    pub fn is_outside(&self, index: usize) -> bool {
        let node = &self.nodes[index];
        node.parent.is_none()
            && self.children[index].is_empty()
            && matches!(node.body, crate::model::Body::Event(_))
            && self.head != Some(index)
    }

    /// The records outside the conversation ([`Tree::is_outside`]), in file order.
    pub fn outside(&self) -> Vec<usize> {
        self.roots
            .iter()
            .copied()
            .filter(|&i| self.is_outside(i))
            .collect()
    }

    /// The records outside the conversation counted by what they are, as `snapshot ×6,
    /// queue-operation ×2` (in order of first appearance), for reports.
    pub fn outside_summary(&self, indexes: impl IntoIterator<Item = usize>) -> String {
        kinds_summary(indexes.into_iter().map(|i| record_name(&self.nodes[i])))
    }

    /// The node's parent, when it is in the session (and not the node itself).
    pub fn parent(&self, index: usize) -> Option<usize> {
        self.parents[index]
    }

    /// `index`, its parent, that one's parent, and so on up to the root. Stops (without
    /// looping) at a missing parent or where a cycle closes. Costs what it walks, however
    /// large the session: callers that need only the nearest ancestors stop early.
    pub fn ancestors(&self, index: usize) -> Ancestors<'_, 'a> {
        Ancestors {
            tree: self,
            next: Some(index),
            seen: HashSet::new(),
        }
    }

    /// Whether `ancestor` is `node` or on the path from `node` up to its root, in constant time
    /// (after one walk of the whole tree on first use). `None` for nodes below a cycle of
    /// parent links, which no root reaches: walk [`Tree::ancestors`] for those.
    pub fn is_ancestor(&self, ancestor: usize, node: usize) -> Option<bool> {
        let spans = self.spans.get_or_init(|| self.walk_spans());
        let (a, b) = (spans[ancestor], spans[node]);
        if a == UNREACHED || b == UNREACHED {
            return None;
        }
        Some(a.0 <= b.0 && b.1 <= a.1)
    }

    /// Depth first from every root and orphan, with an explicit stack (no recursion).
    fn walk_spans(&self) -> Vec<(u32, u32)> {
        let mut spans = vec![UNREACHED; self.nodes.len()];
        let mut clock = 0u32;
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for &start in self.roots.iter().chain(&self.orphans) {
            spans[start].0 = clock;
            clock += 1;
            stack.push((start, 0));
            while let Some((node, next_child)) = stack.last_mut() {
                match self.children[*node].get(*next_child) {
                    Some(&child) => {
                        *next_child += 1;
                        if spans[child] == UNREACHED {
                            spans[child].0 = clock;
                            clock += 1;
                            stack.push((child, 0));
                        }
                    }
                    None => {
                        spans[*node].1 = clock;
                        stack.pop();
                    }
                }
            }
        }
        spans
    }

    /// The nodes from the root down to `leaf`, inclusive. Stops (without looping) at a missing
    /// parent or a cycle; the first element is then the node whose parent could not be followed.
    pub fn path_to(&self, leaf: usize) -> Vec<usize> {
        let mut path: Vec<usize> = self.ancestors(leaf).collect();
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

/// See [`Tree::ancestors`].
pub struct Ancestors<'t, 'a> {
    tree: &'t Tree<'a>,
    next: Option<usize>,
    /// The nodes walked so far, to stop where a cycle closes.
    seen: HashSet<usize>,
}

impl Iterator for Ancestors<'_, '_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let cur = self.next.take()?;
        self.seen.insert(cur);
        self.next = self.tree.parents[cur].filter(|p| !self.seen.contains(p));
        Some(cur)
    }
}

impl Session {
    pub fn tree(&self) -> Tree<'_> {
        Tree::new(self)
    }

    /// The session reduced to one branch: the path from the root to `leaf` (or to the head).
    /// Returns the new session and what was left out: nodes on other branches, and records
    /// outside the conversation (no branch at all). Unknown leaf ids are an error for the
    /// caller to report.
    pub fn branch(&self, leaf: Option<&str>) -> Result<(Session, LeftOut), String> {
        let tree = self.tree();
        let leaf_index = match leaf {
            Some(id) => tree
                .index_of(id)
                .ok_or_else(|| format!("no node with id {id:?} in this session"))?,
            None => match tree.head() {
                Some(h) => h,
                None => return Ok((self.clone(), LeftOut::default())),
            },
        };
        let path = tree.path_to(leaf_index);
        // A record outside the conversation is on no path but its own (--leaf naming it).
        let outside: Vec<usize> = tree
            .outside()
            .into_iter()
            .filter(|&i| i != leaf_index)
            .collect();
        let left_out = LeftOut {
            other_branches: self.nodes.len() - path.len() - outside.len(),
            outside: outside.len(),
            outside_kinds: tree.outside_summary(outside),
        };
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

/// What a node is, for people: its event's name, or `message`.
pub fn record_name(node: &Node) -> String {
    match &node.body {
        crate::model::Body::Event(e) => e.name().to_string(),
        crate::model::Body::Message(_) => "message".to_string(),
    }
}

/// Names counted, as `snapshot ×6, queue-operation ×2` (in order of first appearance).
pub fn kinds_summary(names: impl IntoIterator<Item = String>) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for name in names {
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`Session::branch`] left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Nodes on other branches of the conversation.
    pub other_branches: usize,
    /// Records outside the conversation ([`Tree::is_outside`]).
    pub outside: usize,
    /// Those records counted by what they are (`file-history-snapshot ×6`).
    pub outside_kinds: String,
}

impl LeftOut {
    pub fn total(&self) -> usize {
        self.other_branches + self.outside
    }

    /// Both kinds in a loss report, each under its own code: `other-branches`, described by
    /// `branches_message`, and `outside-conversation`, named by what the records are.
    pub fn report(&self, losses: &mut crate::diag::LossReport, branches_message: &str) {
        losses.add("other-branches", self.other_branches, branches_message);
        losses.add(
            "outside-conversation",
            self.outside,
            format!(
                "records outside the conversation, which this format has no place for ({})",
                self.outside_kinds
            ),
        );
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
            origin: None,
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
        assert_eq!(left_out.total(), 2);
        assert_eq!(
            head.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
            ["A", "B", "E", "F"]
        );
        let (d, _) = s.branch(Some("D")).unwrap();
        assert_eq!(d.nodes.last().unwrap().id, "D");
        assert!(s.branch(Some("nope")).is_err());
    }

    /// A chain `depth` nodes deep; with `comb`, every node of it but the last also has a leaf
    /// of its own (so every one is a branch point), written after the chain continues.
    fn deep(depth: usize, comb: bool) -> Session {
        let mut nodes = Vec::with_capacity(depth * 2);
        for i in 0..depth {
            let parent = (i > 0).then(|| format!("n{}", i - 1));
            nodes.push(node(&format!("n{i}"), parent.as_deref()));
            if comb && i > 0 {
                nodes.push(node(&format!("s{i}"), parent.as_deref()));
            }
        }
        Session {
            nodes,
            ..Default::default()
        }
    }

    #[test]
    fn a_million_deep_chain_is_walked_without_recursion_in_linear_time() {
        let s = deep(1_000_000, false);
        let t = s.tree();
        let started = std::time::Instant::now();
        let path = t.path_to(999_999);
        assert_eq!(path.len(), 1_000_000);
        assert_eq!((path[0], path[999_999]), (0, 999_999));
        assert_eq!(t.ancestors(999_999).nth(10), Some(999_989));
        assert_eq!(t.is_ancestor(0, 999_999), Some(true));
        assert_eq!(t.is_ancestor(999_999, 0), Some(false));
        assert_eq!(t.leaves(), [999_999]);
        assert!(t.branch_points().is_empty());
        // Linear: a quadratic walk would take hours here; this is well under a second in a
        // debug build.
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn a_comb_branching_at_every_step_is_walked_in_linear_time() {
        let depth = 300_000;
        let s = deep(depth, true);
        let t = s.tree();
        let started = std::time::Instant::now();
        assert_eq!(t.leaves().len(), depth);
        assert_eq!(t.branch_points().len(), depth - 1);
        // The head is the last side leaf; its path is the chain above it.
        let head = t.head().unwrap();
        assert_eq!(s.nodes[head].id, format!("s{}", depth - 1));
        assert_eq!(t.path_to(head).len(), depth);
        // Every leaf asked about every other one in constant time.
        let leaves = t.leaves();
        for w in leaves.windows(2) {
            assert_eq!(t.is_ancestor(w[0], w[1]), Some(false));
            assert_eq!(t.is_ancestor(t.parent(w[1]).unwrap(), w[1]), Some(true));
        }
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn is_ancestor_knows_nothing_below_a_cycle() {
        let s = Session {
            nodes: vec![
                node("A", None),
                node("B", Some("C")),
                node("C", Some("B")),
                node("D", Some("C")),
            ],
            ..Default::default()
        };
        let t = s.tree();
        assert_eq!(t.is_ancestor(0, 0), Some(true));
        assert_eq!(t.is_ancestor(1, 3), None);
        assert_eq!(
            ids(&s, &t.ancestors(3).collect::<Vec<_>>()),
            ["D", "C", "B"]
        );
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
