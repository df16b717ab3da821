//! `sessiontool tree FILE`: the branch structure of a session, compactly: runs of nodes
//! without branches are folded into one line; branch points, leaves and the head are marked.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, ValueHint};
use sessiontool::model::{Body, Content, Node};
use sessiontool::tree::Tree;

use crate::error::CliError;
use crate::escape;
use crate::input::{self, format_arg};
use crate::style;
use json::{Doc, Nodes};

mod json;
mod stream;

const EXAMPLES: &str = "Examples:
  sessiontool tree ~/.qwen/projects/-home-me-app/chats/6b0b0776-....jsonl
  sessiontool tree chat.jsonl --full            every node on its own line
  sessiontool tree chat.jsonl --json | jq -r '.nodes[] | select(.leaf) | .id'   every leaf

Each line: the first characters of a node id, its role, and the start of its text. `…N…`
stands for N nodes in a row without branches; `(+N)` before a line deeper than 24 branches
stands for N more levels of indentation. `◆ head` is the branch the tool resumes; pass a
leaf id as printed (its first characters) to `sessiontool show --leaf ID` (or `convert --leaf
ID`) to read another branch.";

/// Print the branch structure of a session.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file (`-` for standard input), or a session in a database as
    /// `PATH#SESSION_ID` (OpenCode: `~/.local/share/opencode/opencode.db#ses_...`).
    #[arg(value_hint = ValueHint::FilePath)]
    file: PathBuf,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT", value_parser = input::readable_formats())]
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
    let streamed = if args.json {
        stream::tree_json(&args.file, from)?
    } else {
        stream::tree(&args.file, from, args.full)?
    };
    if let Some(code) = streamed {
        return Ok(code);
    }
    let loaded = input::load(&args.file)?;
    let (format, outcome) = input::read(&loaded, from)?;
    let session = &outcome.session;
    let tree = session.tree();
    if args.json {
        let doc = Doc {
            schema: "sessiontool.tree/1",
            file: &loaded.name,
            format,
            diagnostics: &outcome.diagnostics,
            branches: tree.branch_leaves().len(),
            outside_conversation: tree.outside().len(),
            head: tree.head().map(|h| tree.node(h).id.as_str()),
            nodes: Nodes::new(&tree, session.nodes.len()),
        };
        crate::report::print_json(&doc);
        return Ok(0);
    }
    crate::report::print_diagnostics(&outcome.diagnostics);
    let mut out = std::io::BufWriter::new(anstream::stdout().lock());
    draw(
        &mut out,
        &loaded.name,
        format,
        &tree,
        session.nodes.len(),
        args.full,
    )
    .and_then(|()| out.flush())
    .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
    Ok(0)
}

/// What [`draw`] needs of a session's tree: [`Tree`] for a session read whole,
/// [`stream::Outline`] for one read in two passes. Positions are node indexes.
trait Shape {
    /// [`Tree::head`].
    fn head(&self) -> Option<usize>;
    /// How many [`Tree::branch_leaves`].
    fn branch_leaves(&self) -> usize;
    /// [`Tree::roots`], then [`Tree::orphans`].
    fn starts(&self) -> Vec<usize>;
    fn is_outside(&self, index: usize) -> bool;
    fn outside(&self) -> Vec<usize>;
    /// [`Tree::outside_summary`] of [`Shape::outside`].
    fn outside_summary(&self) -> String;
    fn children(&self, index: usize) -> Vec<usize>;
    /// The node's only child, when it has exactly one.
    fn only_child(&self, index: usize) -> Option<usize>;
    fn is_leaf(&self, index: usize) -> bool;
    /// The node's id and the parent it names.
    fn id(&self, index: usize) -> String;
    fn parent_id(&self, index: usize) -> Option<String>;
    /// [`describe`] of the node.
    fn describe(&self, index: usize) -> String;
}

impl Shape for Tree<'_> {
    fn head(&self) -> Option<usize> {
        Tree::head(self)
    }

    fn branch_leaves(&self) -> usize {
        Tree::branch_leaves(self).len()
    }

    fn starts(&self) -> Vec<usize> {
        self.roots().iter().chain(self.orphans()).copied().collect()
    }

    fn is_outside(&self, index: usize) -> bool {
        Tree::is_outside(self, index)
    }

    fn outside(&self) -> Vec<usize> {
        Tree::outside(self)
    }

    fn outside_summary(&self) -> String {
        Tree::outside_summary(self, Tree::outside(self))
    }

    fn children(&self, index: usize) -> Vec<usize> {
        Tree::children(self, index).to_vec()
    }

    fn only_child(&self, index: usize) -> Option<usize> {
        match Tree::children(self, index) {
            [only] => Some(*only),
            _ => None,
        }
    }

    fn is_leaf(&self, index: usize) -> bool {
        Tree::children(self, index).is_empty()
    }

    fn id(&self, index: usize) -> String {
        self.node(index).id.clone()
    }

    fn parent_id(&self, index: usize) -> Option<String> {
        self.node(index).parent.clone()
    }

    fn describe(&self, index: usize) -> String {
        describe(self.node(index))
    }
}

/// Indentation levels drawn as they are; a deeper line shows `(+N)` for the N outermost,
/// so a line stays short (and the output linear) on a session that branches at every step.
const LEVELS_SHOWN: usize = 24;

/// A subtree still to draw: where it starts, how deep it is, whether it is its parent's last.
struct Pending {
    start: usize,
    level: usize,
    last: bool,
}

/// The whole tree, depth first with an explicit stack (a session can be a million nodes
/// deep): each run of single children folded into one line (`--full`: one line per node, at
/// the same indentation), then its branches one level deeper.
fn draw(
    out: &mut impl Write,
    name: &str,
    format: &str,
    tree: &impl Shape,
    count: usize,
    full: bool,
) -> std::io::Result<()> {
    let leaves = tree.branch_leaves();
    writeln!(
        out,
        "{} ({format}): {count} nodes, {leaves} branch{}",
        style::bold(&escape::line(name)),
        if leaves == 1 { "" } else { "es" }
    )?;
    let head = tree.head();
    let outside = tree.outside();
    let starts: Vec<usize> = tree
        .starts()
        .into_iter()
        .filter(|&i| !tree.is_outside(i))
        .collect();
    let mut stack: Vec<Pending> = starts
        .iter()
        .enumerate()
        .rev()
        .map(|(k, &start)| Pending {
            start,
            level: 0,
            last: k + 1 == starts.len(),
        })
        .collect();
    // Whether each enclosing branch was its parent's last (its column then stays blank).
    let mut lasts: Vec<bool> = Vec::new();
    let mut drawn = 0;
    while let Some(Pending { start, level, last }) = stack.pop() {
        lasts.truncate(level);
        let prefix = indent(&lasts);
        if level == 0
            && let Some(parent) = tree.parent_id(start)
        {
            let note = format!(
                "(parent {} is missing: the history before this is lost)",
                escape::line(&parent)
            );
            writeln!(out, "{}", style::red(&note))?;
        }
        let connector = if last { "└─" } else { "├─" };
        let first = label(tree, start, head);
        let (mut end, mut run) = (start, 1);
        if full {
            writeln!(out, "{prefix}{connector} {first}")?;
            let below = if last { "   " } else { "│  " };
            while let Some(only) = tree.only_child(end) {
                (end, run) = (only, run + 1);
                writeln!(out, "{prefix}{below}{}", label(tree, end, head))?;
            }
        } else {
            while let Some(only) = tree.only_child(end) {
                (end, run) = (only, run + 1);
            }
            let line = match run {
                1 => first,
                2 => format!("{first}  →  {}", label(tree, end, head)),
                n => format!(
                    "{first}  {}  {}",
                    style::dim(&format!("…{}…", n - 2)),
                    label(tree, end, head)
                ),
            };
            writeln!(out, "{prefix}{connector} {line}")?;
        }
        drawn += run;
        lasts.push(last);
        let children = tree.children(end);
        for (k, &child) in children.iter().enumerate().rev() {
            stack.push(Pending {
                start: child,
                level: level + 1,
                last: k + 1 == children.len(),
            });
        }
    }
    if !outside.is_empty() {
        drawn += outside.len();
        let note = format!(
            "{} record(s) outside the conversation, no branch: {}",
            outside.len(),
            escape::line(&tree.outside_summary())
        );
        writeln!(out, "{}", style::dim(&note))?;
    }
    if drawn < count {
        let note = format!(
            "({} node(s) hang on a cycle of parent links and are not drawn; `sessiontool fsck` says where)",
            count - drawn
        );
        writeln!(out, "{}", style::red(&note))?;
    }
    Ok(())
}

/// The columns before a line's connector: `│ ` under a branch with more after it, blanks
/// under a last one; past [`LEVELS_SHOWN`] the outer ones are counted instead.
fn indent(lasts: &[bool]) -> String {
    let hidden = lasts.len().saturating_sub(LEVELS_SHOWN);
    let mut s = if hidden > 0 {
        format!("(+{hidden}) ")
    } else {
        String::new()
    };
    for &last in &lasts[hidden..] {
        s.push_str(if last { "  " } else { "│ " });
    }
    s
}

/// `1a2b3c4d user "first words"`, with the head marked.
fn label(tree: &impl Shape, index: usize, head: Option<usize>) -> String {
    let id: String = tree.id(index).chars().take(8).collect();
    let what = tree.describe(index);
    let mut s = format!("{} {what}", style::dim(&escape::line(&id)));
    if head == Some(index) {
        s.push_str(&format!(" {}", style::bold(&style::green("◆ head"))));
    } else if tree.is_leaf(index) {
        s.push_str(&format!(" {}", style::magenta("◇ leaf")));
    }
    s
}

fn describe(node: &Node) -> String {
    match &node.body {
        Body::Event(e) => format!("[{}]", escape::line(e.name())),
        Body::Message(m) => {
            let text = m.text();
            let gist = if text.trim().is_empty() {
                m.parts
                    .iter()
                    .find_map(|p| match &p.content {
                        Content::ToolCall { name, .. } => Some(format!("→ {}", escape::line(name))),
                        Content::ToolResult { name, .. } => Some(format!(
                            "← {}",
                            escape::line(name.as_deref().unwrap_or("result"))
                        )),
                        Content::Thought { .. } => Some("(thought)".into()),
                        _ => None,
                    })
                    .unwrap_or_default()
            } else {
                let line = text.trim().lines().next().unwrap_or("").to_string();
                let short: String = line.chars().take(40).collect();
                let more = if line.chars().count() > 40 { "…" } else { "" };
                format!("\"{}{more}\"", escape::line(&short))
            };
            format!("{} {gist}", m.role.as_str())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sessions::{MILLION_CHAIN, Measured, deep};

    fn drawn(session: &sessiontool::Session, full: bool) -> Measured {
        let mut out = Measured::default();
        let tree = session.tree();
        draw(
            &mut out,
            "deep.jsonl",
            "qwen-jsonl",
            &tree,
            session.nodes.len(),
            full,
        )
        .unwrap();
        out
    }

    #[test]
    fn a_million_deep_chain_folds_to_one_line_and_full_keeps_lines_short() {
        let folded = drawn(&MILLION_CHAIN, false);
        assert_eq!(folded.lines, 2, "the header and one folded run");
        let full = drawn(&MILLION_CHAIN, true);
        assert_eq!(full.lines, 1 + 1_000_000);
        // A run of single children stays at one indentation (it grew by two columns a
        // node: 2 MB lines, a terabyte in all).
        assert!(full.longest < 120, "{full:?}");
    }

    /// A comb branches at every step: the old recursive drawing overflowed the stack at
    /// 25,000 steps and its output grew with the square of the depth.
    #[test]
    fn a_deep_comb_is_drawn_without_recursion_in_lines_of_bounded_length() {
        let depth = 200_000;
        let comb = deep(depth, true);
        for full in [false, true] {
            let out = drawn(&comb, full);
            assert_eq!(
                out.lines,
                1 + comb.nodes.len(),
                "one line a node (full: {full})"
            );
            // `(+199975) ` and 24 levels of two columns, then a label.
            assert!(out.longest < 160, "{out:?}");
            assert!(out.bytes < 160 * out.lines, "{out:?}");
        }
    }

    #[test]
    fn indentation_past_the_levels_shown_is_counted() {
        assert_eq!(indent(&[true, false]), "  │ ");
        let deep = vec![false; LEVELS_SHOWN + 5];
        let shown = indent(&deep);
        assert!(shown.starts_with("(+5) │ "), "{shown}");
        assert_eq!(shown.chars().filter(|&c| c == '│').count(), LEVELS_SHOWN);
    }
}
