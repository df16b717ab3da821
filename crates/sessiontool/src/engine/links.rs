//! The tree a skeleton's parent links make, as [`crate::tree::Tree`] has it for the whole
//! session: each node's children in file order, the roots, the orphans (a parent named but not
//! there), the records outside the conversation. About 12 bytes a node; nothing recurses.

use super::skeleton::Skeleton;

/// See the module's documentation. Positions are node indexes.
pub struct Links {
    /// `children[starts[i]..starts[i + 1]]` are node `i`'s children.
    starts: Vec<u32>,
    children: Vec<u32>,
    roots: Vec<u32>,
    orphans: Vec<u32>,
    outside: Vec<bool>,
    head: Option<u32>,
}

impl Links {
    /// The links of `skeleton`, whose head is `head` ([`crate::tree::Tree::head`]);
    /// `is_event(i)`: whether node `i` is an event (else a message).
    pub fn new(skeleton: &Skeleton, head: Option<u32>, is_event: impl Fn(u32) -> bool) -> Links {
        let n = skeleton.len();
        let mut counts = vec![0u32; n + 1];
        let mut roots = Vec::new();
        let mut orphans = Vec::new();
        for i in 0..n as u32 {
            match (skeleton.parent_id(i), skeleton.parent(i)) {
                (None, _) => roots.push(i),
                (Some(_), Some(p)) => counts[p as usize + 1] += 1,
                (Some(_), None) => orphans.push(i),
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let starts = counts;
        let mut filled = starts.clone();
        let mut children = vec![0u32; starts[n] as usize];
        for i in 0..n as u32 {
            if let Some(p) = skeleton.parent(i) {
                children[filled[p as usize] as usize] = i;
                filled[p as usize] += 1;
            }
        }
        let mut links = Links {
            starts,
            children,
            roots,
            orphans,
            outside: vec![false; n],
            head,
        };
        // `Tree::is_outside`: an event with neither a parent nor children, not the head.
        for k in 0..links.roots.len() {
            let i = links.roots[k];
            links.outside[i as usize] =
                links.children(i).is_empty() && is_event(i) && head != Some(i);
        }
        links
    }

    pub fn len(&self) -> usize {
        self.outside.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`crate::tree::Tree::children`].
    pub fn children(&self, index: u32) -> &[u32] {
        let i = index as usize;
        &self.children[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// [`crate::tree::Tree::roots`].
    pub fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// [`crate::tree::Tree::orphans`].
    pub fn orphans(&self) -> &[u32] {
        &self.orphans
    }

    /// [`crate::tree::Tree::head`].
    pub fn head(&self) -> Option<u32> {
        self.head
    }

    /// [`crate::tree::Tree::is_outside`].
    pub fn is_outside(&self, index: u32) -> bool {
        self.outside[index as usize]
    }

    /// [`crate::tree::Tree::outside`].
    pub fn outside(&self) -> Vec<u32> {
        self.roots
            .iter()
            .copied()
            .filter(|&i| self.is_outside(i))
            .collect()
    }

    /// How many of [`crate::tree::Tree::branch_leaves`].
    pub fn branch_leaves(&self) -> usize {
        self.branch_leaf_nodes().count()
    }

    /// [`crate::tree::Tree::branch_leaves`], in file order.
    pub fn branch_leaf_nodes(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len() as u32).filter(|&i| self.children(i).is_empty() && !self.is_outside(i))
    }
}
