//! `sessiontool show`: a session, readable in a terminal.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Parser;
use serde_json::Value;
use sessiontool::convert;
use sessiontool::model::{Body, Content, Message, Node, Session};
use sessiontool::tree::Tree;

use crate::error::CliError;
use crate::input::{self, format_arg};
use crate::report;
use crate::style;

const EXAMPLES: &str = "Examples:
  sessiontool show ~/.qwen/projects/-home-me-app/chats/6b0b0776-....jsonl
  sessiontool show chat.jsonl --leaf 06e2c1f0-...     # another branch
  sessiontool show session.json --json | jq '.session.nodes | length'";

/// How much of a long tool argument or result to show.
const PREVIEW_CHARS: usize = 400;

/// Show a conversation: roles, text, thoughts, tool calls with results, branch points.
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session file (`-` for standard input).
    file: PathBuf,
    /// Show the branch that ends at this node (default: the head).
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// The input format (default: detected from content).
    #[arg(long, value_name = "FORMAT")]
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
    let loaded = input::load(&args.file)?;
    let (format, outcome) = convert::read(&loaded.input(), from)?;
    if args.json {
        let doc = serde_json::json!({
            "schema": "sessiontool.show/1",
            "file": loaded.name,
            "format": format.name(),
            "diagnostics": outcome.diagnostics,
            "session": outcome.session,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializes")
        );
        return Ok(0);
    }
    report::print_diagnostics(&outcome.diagnostics);
    let session = &outcome.session;
    let tree = session.tree();
    let leaf = match &args.leaf {
        Some(id) => tree.index_of(id).ok_or_else(|| {
            CliError::input(format!("no node with id {id:?} in {}", loaded.name))
                .hint("`sessiontool show FILE --json` lists every node id")
        })?,
        None => match tree.head() {
            Some(h) => h,
            None => {
                println!("{} ({}): empty session", loaded.name, format.name());
                return Ok(0);
            }
        },
    };
    let width = style::width(args.width);
    print!(
        "{}",
        render(&loaded.name, format.name(), session, &tree, leaf, width)
    );
    Ok(0)
}

fn render(
    name: &str,
    format: &str,
    s: &Session,
    tree: &Tree,
    leaf: usize,
    width: Option<usize>,
) -> String {
    let mut out = String::new();
    let path = tree.path_to(leaf);
    let _ = writeln!(out, "{} ({format})", style::bold(name));
    let m = &s.meta;
    for (k, v) in [
        ("session", &m.id),
        ("title", &m.title),
        ("cwd", &m.cwd),
        ("started", &m.start_time),
        ("updated", &m.last_updated),
    ] {
        if let Some(v) = v {
            let _ = writeln!(out, "  {k:<8} {v}");
        }
    }
    let leaves = tree.leaves().len();
    let _ = writeln!(
        out,
        "  {} nodes, {} on this branch, {} branch{}",
        s.nodes.len(),
        path.len(),
        leaves,
        if leaves == 1 { "" } else { "es" }
    );
    if path.first().is_some_and(|&i| tree.node(i).parent.is_some()) {
        let _ = writeln!(
            out,
            "  ! history before this point is missing (parent {:?} not found)",
            tree.node(path[0]).parent.as_deref().unwrap_or("")
        );
    }
    for (pos, &i) in path.iter().enumerate() {
        let node = tree.node(i);
        render_node(&mut out, node, width);
        let others: Vec<&str> = tree
            .children(i)
            .iter()
            .filter(|&&c| path.get(pos + 1) != Some(&c))
            .map(|&c| tree.node(c).id.as_str())
            .collect();
        if !others.is_empty() && pos + 1 < path.len() {
            let note = format!(
                "⑂ branch point: {} other continuation{} from here ({}); see --leaf or `sessiontool tree`",
                others.len(),
                if others.len() == 1 { "" } else { "s" },
                others.join(", ")
            );
            let _ = writeln!(out, "\n  {}", style::magenta(&note));
        }
    }
    out
}

fn render_node(out: &mut String, node: &Node, width: Option<usize>) {
    let when = style::dim(node.timestamp.as_deref().unwrap_or(""));
    match &node.body {
        Body::Event(e) => {
            let _ = writeln!(
                out,
                "\n{} {when}",
                style::dim(&format!("── event: {}", e.kind()))
            );
        }
        Body::Message(m) => {
            let model = m
                .model
                .as_deref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default();
            let role = m.role.as_str();
            let head = match m.role {
                sessiontool::model::Role::User => style::bold(&style::cyan(&format!("── {role}"))),
                sessiontool::model::Role::Assistant => {
                    style::bold(&style::green(&format!("── {role}")))
                }
                _ => style::bold(&format!("── {role}")),
            };
            let _ = writeln!(out, "\n{head}{model} {when}");
            render_parts(out, m, width);
        }
    }
}

fn render_parts(out: &mut String, m: &Message, width: Option<usize>) {
    for p in &m.parts {
        match &p.content {
            Content::Text { text } => {
                let _ = writeln!(out, "{}", style::wrap(text, width, ""));
            }
            Content::Thought { text, subject, .. } => {
                let head = subject
                    .as_deref()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                let line = format!("(thought) {head}{}", preview_text(text));
                let _ = writeln!(out, "{}", style::dim(&style::wrap(&line, width, "  ")));
            }
            Content::ToolCall { name, args, .. } => {
                let line = format!("→ {name}({})", preview(args));
                let _ = writeln!(out, "{}", style::yellow(&style::wrap(&line, width, "  ")));
            }
            Content::ToolResult {
                name,
                output,
                is_error,
                ..
            } => {
                let mark = if *is_error { "error" } else { "ok" };
                let name = name.as_deref().unwrap_or("tool");
                let line = format!("← {name} [{mark}]: {}", preview(output));
                let line = style::wrap(&line, width, "  ");
                let _ = writeln!(
                    out,
                    "{}",
                    if *is_error {
                        style::red(&line)
                    } else {
                        style::dim(&line)
                    }
                );
            }
            Content::Media { mime_type, uri, .. } => {
                let what = uri.as_deref().unwrap_or("inline data");
                let _ = writeln!(
                    out,
                    "  [media {}: {what}]",
                    mime_type.as_deref().unwrap_or("?")
                );
            }
            Content::Code { code, language, .. } => {
                let _ = writeln!(
                    out,
                    "  [code {}]\n{code}",
                    language.as_deref().unwrap_or("")
                );
            }
            Content::CodeResult {
                outcome, output, ..
            } => {
                let _ = writeln!(
                    out,
                    "  [code result {}] {}",
                    outcome.as_deref().unwrap_or(""),
                    output.as_deref().unwrap_or("")
                );
            }
            Content::Other { value } => {
                let _ = writeln!(out, "  [unknown part] {}", preview(value));
            }
        }
    }
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

fn preview_text(s: &str) -> String {
    let one_line = s.replace('\n', "⏎ ");
    if one_line.chars().count() > PREVIEW_CHARS {
        let cut: String = one_line.chars().take(PREVIEW_CHARS).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}
