//! `sessiontool tree FILE`: the branch structure of a session, compactly: runs of nodes
//! without branches are folded into one line; branch points, leaves and the head are marked.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Parser;
use sessiontool::convert;
use sessiontool::model::{Body, Content, Node};
use sessiontool::tree::Tree;

use crate::error::CliError;
use crate::input::{self, format_arg};
use crate::style;

const EXAMPLES: &str = "Examples:
  sessiontool tree ~/.qwen/projects/-home-me-app/chats/6b0b0776-....jsonl
  sessiontool tree chat.jsonl --full            every node on its own line
  sessiontool tree chat.jsonl --json | jq -r '.nodes[] | select(.leaf) | .id'   every leaf

Each line: the first characters of a node id, its role, and the start of its text. `…N…`
stands for N nodes in a row without branches. `◆ head` is the branch the tool resumes; pass a
leaf id to `sessiontool show --leaf ID` (or `convert --leaf ID`) to read another branch.";

/// Print the branch structure of a session.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file (`-` for standard input).
    file: PathBuf,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT")]
    from: Option<String>,
    /// One line per node instead of folding runs without branches.
    #[arg(long)]
    full: bool,
    /// Every node with its parent, children and marks as JSON (schema sessiontool.tree/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let from = args.from.as_deref().map(format_arg).transpose()?;
    let loaded = input::load(&args.file)?;
    let (format, outcome) = convert::read(&loaded.input(), from)?;
    let session = &outcome.session;
    let tree = session.tree();
    if args.json {
        crate::report::print_json(&json(
            &loaded.name,
            format.name(),
            &tree,
            session.nodes.len(),
        ));
        return Ok(0);
    }
    crate::report::print_diagnostics(&outcome.diagnostics);
    let leaves = tree.leaves().len();
    println!(
        "{} ({}): {} nodes, {} branch{}",
        style::bold(&loaded.name),
        format.name(),
        session.nodes.len(),
        leaves,
        if leaves == 1 { "" } else { "es" }
    );
    let mut out = String::new();
    let starts: Vec<usize> = tree.roots().iter().chain(tree.orphans()).copied().collect();
    for (k, &root) in starts.iter().enumerate() {
        let last = k + 1 == starts.len();
        if tree.node(root).parent.is_some() {
            let _ = writeln!(
                out,
                "{}",
                style::red(&format!(
                    "(parent {} is missing: the history before this is lost)",
                    tree.node(root).parent.as_deref().unwrap_or("")
                ))
            );
        }
        draw(&mut out, &tree, root, "", last, args.full);
    }
    print!("{out}");
    Ok(0)
}

/// The tree as data: one entry per node, in file order.
fn json(file: &str, format: &str, tree: &Tree, count: usize) -> serde_json::Value {
    let head = tree.head();
    let nodes: Vec<serde_json::Value> = (0..count)
        .map(|i| {
            let node = tree.node(i);
            let (role, event) = match &node.body {
                Body::Event(e) => (None, Some(e.kind().to_string())),
                Body::Message(m) => (Some(m.role.as_str()), None),
            };
            serde_json::json!({
                "id": node.id,
                "parent": node.parent,
                "role": role,
                "event": event,
                "gist": plain_gist(node),
                "children": tree.children(i).iter().map(|&c| &tree.node(c).id).collect::<Vec<_>>(),
                "head": head == Some(i),
                "leaf": tree.children(i).is_empty(),
                "parent_missing": tree.orphans().contains(&i),
            })
        })
        .collect();
    serde_json::json!({
        "schema": "sessiontool.tree/1",
        "file": file,
        "format": format,
        "branches": tree.leaves().len(),
        "head": head.map(|h| &tree.node(h).id),
        "nodes": nodes,
    })
}

/// The start of a node's text (or what it does), without colour.
fn plain_gist(node: &Node) -> String {
    match &node.body {
        Body::Event(e) => format!("[{}]", e.kind()),
        Body::Message(m) => {
            let text = m.text();
            let line = text.trim().lines().next().unwrap_or("");
            line.chars().take(80).collect()
        }
    }
}

/// Draws the subtree from `start`: a folded run, then its branches.
fn draw(out: &mut String, tree: &Tree, start: usize, prefix: &str, last: bool, full: bool) {
    // Follow the run of single children from `start`.
    let mut run = vec![start];
    let mut cur = start;
    while tree.children(cur).len() == 1 && !full {
        cur = tree.children(cur)[0];
        run.push(cur);
    }
    let connector = if last { "└─" } else { "├─" };
    let child_prefix = format!("{prefix}{}", if last { "  " } else { "│ " });
    let head = tree.head();
    let line = match run.len() {
        1 => label(tree, run[0], head),
        2 => format!(
            "{}  →  {}",
            label(tree, run[0], head),
            label(tree, run[1], head)
        ),
        n => format!(
            "{}  {}  {}",
            label(tree, run[0], head),
            style::dim(&format!("…{}…", n - 2)),
            label(tree, run[n - 1], head)
        ),
    };
    let _ = writeln!(out, "{prefix}{connector} {line}");
    let end = *run.last().expect("a run has a node");
    let children = tree.children(end);
    for (k, &c) in children.iter().enumerate() {
        draw(out, tree, c, &child_prefix, k + 1 == children.len(), full);
    }
}

/// `1a2b3c4d user "first words"`, with the head marked.
fn label(tree: &Tree, index: usize, head: Option<usize>) -> String {
    let node = tree.node(index);
    let id: String = node.id.chars().take(8).collect();
    let what = describe(node);
    let mut s = format!("{} {what}", style::dim(&id));
    if head == Some(index) {
        s.push_str(&format!(" {}", style::bold(&style::green("◆ head"))));
    } else if tree.children(index).is_empty() {
        s.push_str(&format!(" {}", style::magenta("◇ leaf")));
    }
    s
}

fn describe(node: &Node) -> String {
    match &node.body {
        Body::Event(e) => format!("[{}]", e.kind()),
        Body::Message(m) => {
            let text = m.text();
            let gist = if text.trim().is_empty() {
                m.parts
                    .iter()
                    .find_map(|p| match &p.content {
                        Content::ToolCall { name, .. } => Some(format!("→ {name}")),
                        Content::ToolResult { name, .. } => {
                            Some(format!("← {}", name.as_deref().unwrap_or("result")))
                        }
                        Content::Thought { .. } => Some("(thought)".into()),
                        _ => None,
                    })
                    .unwrap_or_default()
            } else {
                let line = text.trim().lines().next().unwrap_or("").to_string();
                let short: String = line.chars().take(40).collect();
                let more = if line.chars().count() > 40 { "…" } else { "" };
                format!("\"{short}{more}\"")
            };
            format!("{} {gist}", m.role.as_str())
        }
    }
}
