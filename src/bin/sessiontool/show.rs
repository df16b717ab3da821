//! `sessiontool show`: a session, readable in a terminal.

use std::io::Write;
use std::path::PathBuf;

use anstream::println;
use clap::{Parser, ValueHint};
use serde::Serialize;
use serde_json::Value;
use sessiontool::diag::Diagnostic;
use sessiontool::model::{Body, Content, Message, Meta, Node, Session};
use sessiontool::tree::Tree;

use crate::error::CliError;
use crate::escape;
use crate::input::{self, format_arg};
use crate::report;
use crate::style;

mod stream;

const EXAMPLES: &str = "Examples:
  sessiontool show ~/.qwen/projects/-home-me-app/chats/6b0b0776-....jsonl
  sessiontool show chat.jsonl --leaf 06e2c1f0         # another branch (an id, or its start)
  sessiontool show session.json --json | jq '.session.nodes | length'";

/// How much of a long tool argument or result to show.
const PREVIEW_CHARS: usize = 400;

/// Show a conversation: roles, text, thoughts, tool calls with results, branch points.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file (`-` for standard input), or a session in a database as
    /// `PATH#SESSION_ID` (OpenCode: `~/.local/share/opencode/opencode.db#ses_...`).
    #[arg(value_hint = ValueHint::FilePath)]
    file: PathBuf,
    /// Show the branch that ends at this node: its id or the start of it, as `sessiontool
    /// tree` prints it (default: the head).
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT", value_parser = input::readable_formats())]
    from: Option<String>,
    /// Wrap text to this many columns (default: the terminal's width; 0: do not wrap).
    #[arg(long, value_name = "N")]
    width: Option<usize>,
    /// Print the whole session model (all branches) as JSON (schema sessiontool.show/1).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let from = args.from.as_deref().map(format_arg).transpose()?;
    let width = style::width(args.width);
    let streamed = if args.json {
        stream::show_json(&args.file, from)?
    } else {
        stream::show(&args.file, from, args.leaf.as_deref(), width)?
    };
    if let Some(code) = streamed {
        return Ok(code);
    }
    let loaded = input::load(&args.file)?;
    let (format, outcome) = input::read(&loaded, from)?;
    if args.json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            file: &'a str,
            format: &'a str,
            diagnostics: &'a [Diagnostic],
            session: SessionDoc<'a>,
        }
        /// [`Session`]'s fields, in its order.
        #[derive(Serialize)]
        struct SessionDoc<'a> {
            meta: &'a Meta,
            nodes: &'a [Node],
        }
        // The bytes a reader keeps for its own writer (`Meta::origin`) are not printed.
        let meta = &outcome.session.meta;
        report::print_json(&Doc {
            schema: "sessiontool.show/1",
            file: &loaded.name,
            format,
            diagnostics: &outcome.diagnostics,
            session: SessionDoc {
                meta,
                nodes: &outcome.session.nodes,
            },
        });
        return Ok(0);
    }
    report::print_diagnostics(&outcome.diagnostics);
    let session = &outcome.session;
    let tree = session.tree();
    let leaf = match &args.leaf {
        Some(id) => tree.find(id).map_err(|e| leaf_error(e, &loaded.name))?,
        None => match tree.head() {
            Some(h) => h,
            None => {
                println!("{}", empty(&loaded.name, format));
                return Ok(0);
            }
        },
    };
    let mut out = std::io::BufWriter::new(anstream::stdout().lock());
    render(&mut out, &loaded.name, format, session, &tree, leaf, width)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::output(format!("cannot write standard output: {e}")))?;
    Ok(0)
}

/// `--leaf` naming no node, or several.
fn leaf_error(e: sessiontool::id_prefix::IdError, name: &str) -> CliError {
    CliError::new(crate::error::id_code(&e), format!("--leaf: {e} in {name}")).hint(format!(
        "{}; `sessiontool tree FILE` shows the ids",
        e.hint()
    ))
}

/// What is shown of a session without nodes.
fn empty(name: &str, format: &str) -> String {
    format!("{} ({}): empty session", escape::line(name), format)
}

/// The branch from its root to `leaf`, node by node, written as it goes.
fn render(
    out: &mut impl Write,
    name: &str,
    format: &str,
    s: &Session,
    tree: &Tree,
    leaf: usize,
    width: Option<usize>,
) -> std::io::Result<()> {
    let path = tree.path_to(leaf);
    let header = Header {
        name,
        format,
        meta: &s.meta,
        nodes: s.nodes.len(),
        on_branch: path.len(),
        leaves: tree.branch_leaves().len(),
        cut_at: path.first().and_then(|&i| tree.node(i).parent.as_deref()),
    };
    header.render(out)?;
    for (pos, &i) in path.iter().enumerate() {
        let node = tree.node(i);
        render_node(out, node, width)?;
        let others: Vec<&str> = tree
            .children(i)
            .iter()
            .filter(|&&c| path.get(pos + 1) != Some(&c))
            .map(|&c| tree.node(c).id.as_str())
            .collect();
        if pos + 1 < path.len() {
            render_branch_point(out, &others)?;
        }
    }
    Ok(())
}

/// What `show` says before the branch.
struct Header<'a> {
    name: &'a str,
    format: &'a str,
    meta: &'a Meta,
    /// Nodes in the session.
    nodes: usize,
    /// Nodes on the branch shown.
    on_branch: usize,
    /// Branches ([`Tree::branch_leaves`]).
    leaves: usize,
    /// The parent the branch's first node names, when it has one (its history is cut off).
    cut_at: Option<&'a str>,
}

impl Header<'_> {
    fn render(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{} ({})",
            style::bold(&escape::line(self.name)),
            self.format
        )?;
        let m = self.meta;
        for (k, v) in [
            ("session", &m.id),
            ("title", &m.title),
            ("cwd", &m.cwd),
            ("started", &m.start_time),
            ("updated", &m.last_updated),
        ] {
            if let Some(v) = v {
                writeln!(out, "  {k:<8} {}", escape::line(v))?;
            }
        }
        let leaves = self.leaves;
        writeln!(
            out,
            "  {} nodes, {} on this branch, {} branch{}",
            self.nodes,
            self.on_branch,
            leaves,
            if leaves == 1 { "" } else { "es" }
        )?;
        if let Some(parent) = self.cut_at {
            writeln!(
                out,
                "  ! history before this point is missing (parent \"{}\" not found)",
                escape::line(parent)
            )?;
        }
        Ok(())
    }
}

/// The note after a node of the branch (not its last) with other children: `others`, their
/// ids in file order (nothing when there are none).
fn render_branch_point(out: &mut impl Write, others: &[impl AsRef<str>]) -> std::io::Result<()> {
    if others.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = others.iter().map(AsRef::as_ref).collect();
    let note = format!(
        "⑂ branch point: {} other continuation{} from here ({}); see --leaf or `sessiontool tree`",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        escape::line(&ids.join(", "))
    );
    writeln!(out, "\n  {}", style::magenta(&note))
}

fn render_node(out: &mut impl Write, node: &Node, width: Option<usize>) -> std::io::Result<()> {
    let when = style::dim(&escape::line(node.timestamp.as_deref().unwrap_or("")));
    match &node.body {
        Body::Event(e) => {
            let kind = format!("── event: {}", escape::line(e.kind()));
            writeln!(out, "\n{} {when}", style::dim(&kind))
        }
        Body::Message(m) => {
            let model = m
                .model
                .as_deref()
                .map(|x| format!(" ({})", escape::line(x)))
                .unwrap_or_default();
            let role = m.role.as_str();
            let head = match m.role {
                sessiontool::model::Role::User => style::bold(&style::cyan(&format!("── {role}"))),
                sessiontool::model::Role::Assistant => {
                    style::bold(&style::green(&format!("── {role}")))
                }
                _ => style::bold(&format!("── {role}")),
            };
            writeln!(out, "\n{head}{model} {when}")?;
            render_parts(out, m, width)
        }
    }
}

fn render_parts(out: &mut impl Write, m: &Message, width: Option<usize>) -> std::io::Result<()> {
    for p in &m.parts {
        match &p.content {
            Content::Text { text } => {
                writeln!(out, "{}", style::wrap(&escape::body(text), width, ""))?;
            }
            Content::Thought { text, subject, .. } => {
                let head = subject
                    .as_deref()
                    .map(|s| format!("{}: ", escape::line(s)))
                    .unwrap_or_default();
                let line = format!("(thought) {head}{}", preview_text(text));
                writeln!(out, "{}", style::dim(&style::wrap(&line, width, "  ")))?;
            }
            Content::ToolCall { name, args, .. } => {
                let line = format!("→ {}({})", escape::line(name), preview(args));
                writeln!(out, "{}", style::yellow(&style::wrap(&line, width, "  ")))?;
            }
            Content::ToolResult {
                name,
                output,
                is_error,
                ..
            } => {
                let mark = if *is_error { "error" } else { "ok" };
                let name = escape::line(name.as_deref().unwrap_or("tool"));
                let line = format!("← {name} [{mark}]: {}", preview(output));
                let line = style::wrap(&line, width, "  ");
                writeln!(
                    out,
                    "{}",
                    if *is_error {
                        style::red(&line)
                    } else {
                        style::dim(&line)
                    }
                )?;
            }
            Content::Media { mime_type, uri, .. } => {
                let what = escape::line(uri.as_deref().unwrap_or("inline data"));
                writeln!(
                    out,
                    "  [media {}: {what}]",
                    escape::line(mime_type.as_deref().unwrap_or("?"))
                )?;
            }
            Content::Code { code, language, .. } => {
                writeln!(
                    out,
                    "  [code {}]\n{}",
                    escape::line(language.as_deref().unwrap_or("")),
                    escape::body(code)
                )?;
            }
            Content::CodeResult {
                outcome, output, ..
            } => {
                writeln!(
                    out,
                    "  [code result {}] {}",
                    escape::line(outcome.as_deref().unwrap_or("")),
                    escape::body(output.as_deref().unwrap_or(""))
                )?;
            }
            Content::Other { value } => {
                writeln!(out, "  [unknown part] {}", preview(value))?;
            }
        }
    }
    Ok(())
}

fn preview(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 1 && o.values().next().is_some_and(Value::is_string) => o
            .values()
            .next()
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        other => other.to_string(),
    };
    preview_text(&s)
}

/// One line of at most [`PREVIEW_CHARS`] characters (line breaks shown as `⏎`), escaped.
fn preview_text(s: &str) -> String {
    let one_line = s.replace('\n', "⏎ ");
    if one_line.chars().count() > PREVIEW_CHARS {
        let cut: String = one_line.chars().take(PREVIEW_CHARS).collect();
        format!("{}…", escape::line(&cut))
    } else {
        escape::line(&one_line).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sessions::{MILLION_CHAIN, Measured, deep};

    fn rendered(session: &Session, leaf: Option<usize>) -> Measured {
        let tree = session.tree();
        let leaf = leaf.or(tree.head()).unwrap();
        let mut out = Measured::default();
        render(
            &mut out,
            "deep.jsonl",
            "qwen-jsonl",
            session,
            &tree,
            leaf,
            Some(80),
        )
        .unwrap();
        out
    }

    #[test]
    fn a_million_deep_chain_is_shown_node_by_node() {
        let out = rendered(&MILLION_CHAIN, None);
        // The header, then a blank line, a role line and the text of each node.
        assert!(out.lines > 3_000_000, "{out:?}");
        assert!(out.longest < 120, "{out:?}");
    }

    #[test]
    fn a_deep_comb_shows_every_branch_point_on_the_way() {
        let depth = 200_000;
        let comb = deep(depth, true);
        let out = rendered(&comb, None);
        // Each node of the path but the last is a branch point: a note of two lines more.
        assert!(out.lines > 5 * (depth - 1), "{out:?}");
        assert!(out.longest < 200, "{out:?}");
    }
}
