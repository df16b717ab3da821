//! `sessiontool tree --json`: every node with its parent, children and marks (schema
//! sessiontool.tree/1), serialized as it is written.

use serde::Serialize;
use sessiontool::diag::Diagnostic;
use sessiontool::engine::MadeFor;
use sessiontool::engine::links::Links;
use sessiontool::engine::view::View;
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
    from: From<'a>,
    count: usize,
    orphan: Vec<bool>,
}

/// Where the nodes come from: a session read whole, or a two-pass reading (each node read,
/// serialized and dropped).
enum From<'a> {
    Tree(&'a Tree<'a>),
    View(&'a View<'a>, &'a Links),
}

impl<'a> Nodes<'a> {
    pub fn new(tree: &'a Tree<'a>, count: usize) -> Self {
        let mut orphan = vec![false; count];
        for &i in tree.orphans() {
            orphan[i] = true;
        }
        Nodes {
            from: From::Tree(tree),
            count,
            orphan,
        }
    }

    pub fn of_view(view: &'a View<'a>, links: &'a Links) -> Self {
        let mut orphan = vec![false; view.len()];
        for &i in links.orphans() {
            orphan[i as usize] = true;
        }
        Nodes {
            from: From::View(view, links),
            count: view.len(),
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

/// What a node's entry says of where it stands.
struct Place<'a> {
    children: Vec<&'a str>,
    head: bool,
    outside: bool,
    parent_missing: bool,
}

fn entry<'a>(node: &'a Node, place: Place<'a>) -> NodeEntry<'a> {
    let (role, event) = match &node.body {
        Body::Event(e) => (None, Some(e.kind().to_string())),
        Body::Message(m) => (Some(m.role.as_str()), None),
    };
    NodeEntry {
        id: &node.id,
        parent: node.parent.as_deref(),
        role,
        event,
        gist: plain_gist(node),
        leaf: place.children.is_empty() && !place.outside,
        children: place.children,
        head: place.head,
        outside_conversation: place.outside,
        parent_missing: place.parent_missing,
    }
}

impl Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.count))?;
        match self.from {
            From::Tree(tree) => {
                let head = tree.head();
                for i in 0..self.count {
                    let place = Place {
                        children: tree
                            .children(i)
                            .iter()
                            .map(|&c| tree.node(c).id.as_str())
                            .collect(),
                        head: head == Some(i),
                        outside: tree.is_outside(i),
                        parent_missing: self.orphan[i],
                    };
                    seq.serialize_element(&entry(tree.node(i), place))?;
                }
            }
            From::View(view, links) => {
                crate::input::serialize_each_node(
                    view,
                    MadeFor::Anyone,
                    &mut seq,
                    |seq, i, node| {
                        let ids: Vec<String> =
                            links.children(i).iter().map(|&c| view.id(c)).collect();
                        let place = Place {
                            children: ids.iter().map(String::as_str).collect(),
                            head: links.head() == Some(i),
                            outside: links.is_outside(i),
                            parent_missing: self.orphan[i as usize],
                        };
                        seq.serialize_element(&entry(node, place))
                    },
                )?;
            }
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
