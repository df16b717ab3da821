//! What a compaction keeps of the conversation before it, when it names the first node it
//! keeps (pi's `firstKeptEntryId`, the Go agent's `first_kept_entry_id`): found the same way on
//! the whole session's [`Tree`] and on the engine's skeleton ([`Ancestry`]).

use std::collections::HashSet;

use super::Tree;

/// The parent links a kept history is found by.
pub(crate) trait Ancestry {
    /// The node's parent, when it is in the session (and not the node itself).
    fn parent_of(&self, index: usize) -> Option<usize>;
    /// The node an id names (the first one with it).
    fn index_of_id(&self, id: &str) -> Option<usize>;
    /// Whether node `index` has the id `id`.
    fn has_id(&self, index: usize, id: &str) -> bool;
    /// As [`Tree::is_ancestor`]: `None` when either node hangs below a cycle of parent links
    /// (no root reaches it).
    fn is_ancestor_of(&self, ancestor: usize, node: usize) -> Option<bool>;
}

/// The nodes a compaction (node `index`) keeps when it names `first_kept` as the first one:
/// from that node down to the compaction's parent, in that order; `None` when that node is
/// not on the compaction's branch. Walked up only as far as the first kept node, and not at
/// all when it is not on the branch (a session of many compactions stays linear).
pub(crate) fn kept_since(
    links: &impl Ancestry,
    index: usize,
    first_kept: &str,
) -> Option<Vec<usize>> {
    let on_branch = links
        .index_of_id(first_kept)
        .is_some_and(|k| links.is_ancestor_of(k, index) != Some(false));
    if !on_branch {
        return None;
    }
    // Up from the compaction, as `Tree::ancestors` walks: stops at a missing parent or where
    // a cycle closes.
    let mut walked = Vec::new();
    let mut seen = HashSet::new();
    let mut next = Some(index);
    while let Some(cur) = next {
        seen.insert(cur);
        walked.push(cur);
        if links.has_id(cur, first_kept) {
            walked.remove(0);
            walked.reverse();
            return Some(walked);
        }
        next = links.parent_of(cur).filter(|p| !seen.contains(p));
    }
    None
}

impl Ancestry for Tree<'_> {
    fn parent_of(&self, index: usize) -> Option<usize> {
        self.parent(index)
    }

    fn index_of_id(&self, id: &str) -> Option<usize> {
        self.index_of(id)
    }

    fn has_id(&self, index: usize, id: &str) -> bool {
        self.node(index).id == id
    }

    fn is_ancestor_of(&self, ancestor: usize, node: usize) -> Option<bool> {
        self.is_ancestor(ancestor, node)
    }
}

impl Ancestry for crate::engine::skeleton::Skeleton {
    fn parent_of(&self, index: usize) -> Option<usize> {
        self.parent(index as u32).map(|p| p as usize)
    }

    fn index_of_id(&self, id: &str) -> Option<usize> {
        self.index_of(id).map(|i| i as usize)
    }

    fn has_id(&self, index: usize, id: &str) -> bool {
        self.name(index as u32) == id
    }

    /// By walking up from both nodes: a node no root reaches is one whose walk ends where a
    /// cycle closes, not at a node without a parent in the session.
    fn is_ancestor_of(&self, ancestor: usize, node: usize) -> Option<bool> {
        let walk = |from: usize| {
            let mut seen = HashSet::new();
            let mut next = Some(from);
            let mut reached = false;
            while let Some(cur) = next {
                seen.insert(cur);
                match self.parent_of(cur) {
                    None => reached = true,
                    Some(p) if seen.contains(&p) => {}
                    Some(p) => {
                        next = Some(p);
                        continue;
                    }
                }
                next = None;
            }
            (seen, reached)
        };
        let (up, reached) = walk(node);
        if !reached || !walk(ancestor).1 {
            return None;
        }
        Some(up.contains(&ancestor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Body, Event, Node, Session};

    /// A session of `parents` (each node's parent index, or none), ids `n<i>` but where
    /// `same` gives two nodes one id.
    fn session(parents: &[Option<usize>], same: Option<(usize, usize)>) -> Session {
        let id = |i: usize| match same {
            Some((a, b)) if i == b => format!("n{a}"),
            _ => format!("n{i}"),
        };
        let nodes = parents
            .iter()
            .enumerate()
            .map(|(i, p)| Node {
                id: id(i),
                parent: p.map(|p| {
                    if p >= parents.len() {
                        "missing".to_string()
                    } else {
                        id(p)
                    }
                }),
                timestamp: None,
                body: Body::Event(Event::Custom {
                    kind: "x".into(),
                    data: serde_json::Value::Null,
                }),
                extra: Default::default(),
                origin: None,
            })
            .collect();
        Session {
            meta: Default::default(),
            nodes,
        }
    }

    fn skeleton(session: &Session) -> crate::engine::skeleton::Skeleton {
        let mut sk = crate::engine::skeleton::Skeleton::default();
        for n in &session.nodes {
            let id = sk.intern(&n.id);
            let parent = n.parent.as_deref().map(|p| sk.intern(p));
            sk.push(id, parent);
        }
        sk
    }

    #[test]
    fn the_skeleton_finds_what_the_whole_tree_finds() {
        // Trees, forests, orphans, self-parents, cycles with nodes below them, repeated ids.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..400 {
            let len = 1 + next(12) as usize;
            let parents: Vec<Option<usize>> = (0..len)
                .map(|i| match next(6) {
                    0 => None,
                    1 => Some(len + 1),                   // missing
                    2 => Some(next(len as u64) as usize), // anywhere: cycles, self
                    _ if i > 0 => Some(next(i as u64) as usize),
                    _ => None,
                })
                .collect();
            let same = (round % 3 == 0 && len > 2).then(|| (0, len - 1));
            let s = session(&parents, same);
            let tree = s.tree();
            let sk = skeleton(&s);
            for a in 0..len {
                for b in 0..len {
                    assert_eq!(
                        sk.is_ancestor_of(a, b),
                        tree.is_ancestor(a, b),
                        "{parents:?} {same:?}: {a} of {b}"
                    );
                }
                for k in 0..len + 1 {
                    let first = format!("n{k}");
                    assert_eq!(
                        kept_since(&sk, a, &first),
                        kept_since(&tree, a, &first),
                        "{parents:?} {same:?}: {a} keeps from {first}"
                    );
                }
            }
        }
    }
}
