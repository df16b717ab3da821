//! `sessiontool tree --json`: every node with its parent, children and marks (schema
//! sessiontool.tree/1), serialized as it is written.

use serde::Serialize;
use sessiontool::diag::Diagnostic;
use sessiontool::model::{Body, Node};
use sessiontool::tree::Tree;

/// The tree as data (schema sessiontool.tree/1), serialized as it is written: a session of a
/// million nodes is never held twice.
#[derive(Serialize)]
pub(super) struct Doc<'a> {
    pub schema: &'static str,
    pub file: &'a str,
    pub format: &'a str,
    /// What the reader noticed (the human output counts the notes; this lists them).
    pub diagnostics: &'a [Diagnostic],
    /// Leaves that end a branch of the conversation.
    pub branches: usize,
    /// Records outside the conversation (no parent, no children, no message: Claude Code's
    /// file-history snapshots...): no branch.
    pub outside_conversation: usize,
    pub head: Option<&'a str>,
    pub nodes: Nodes<'a>,
}

/// One entry per node, in file order.
pub(super) struct Nodes<'a> {
    tree: &'a Tree<'a>,
    count: usize,
    orphan: Vec<bool>,
}

impl<'a> Nodes<'a> {
    pub fn new(tree: &'a Tree<'a>, count: usize) -> Self {
        let mut orphan = vec![false; count];
        for &i in tree.orphans() {
            orphan[i] = true;
        }
        Nodes {
            tree,
            count,
            orphan,
        }
    }
}

#[derive(Serialize)]
struct NodeEntry<'a> {
    id: &'a str,
    parent: Option<&'a str>,
    role: Option<&'a str>,
    event: Option<String>,
    gist: String,
    children: Vec<&'a str>,
    head: bool,
    leaf: bool,
    outside_conversation: bool,
    parent_missing: bool,
}

impl Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let tree = self.tree;
        let head = tree.head();
        let mut seq = serializer.serialize_seq(Some(self.count))?;
        for i in 0..self.count {
            let node = tree.node(i);
            let (role, event) = match &node.body {
                Body::Event(e) => (None, Some(e.kind().to_string())),
                Body::Message(m) => (Some(m.role.as_str()), None),
            };
            seq.serialize_element(&NodeEntry {
                id: &node.id,
                parent: node.parent.as_deref(),
                role,
                event,
                gist: plain_gist(node),
                children: tree
                    .children(i)
                    .iter()
                    .map(|&c| tree.node(c).id.as_str())
                    .collect(),
                head: head == Some(i),
                leaf: tree.children(i).is_empty() && !tree.is_outside(i),
                outside_conversation: tree.is_outside(i),
                parent_missing: self.orphan[i],
            })?;
        }
        seq.end()
    }
}

/// The start of a node's text (or what it does), without colour.
fn plain_gist(node: &Node) -> String {
    match &node.body {
        Body::Event(e) => format!("[{}]", e.name()),
        Body::Message(m) => {
            let text = m.text();
            let line = text.trim().lines().next().unwrap_or("");
            line.chars().take(80).collect()
        }
    }
}
