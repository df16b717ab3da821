//! What the write-only exports (`markdown`, `html`) share: the session laid out as a document
//! (title, facts, then one section per branch, head branch first) that each renderer only has
//! to print. Nothing here reads the clock, and every list is in file order, so the same
//! session always exports to the same bytes.

use std::collections::HashMap;

use serde_json::Value;

mod exporter;

pub(crate) use exporter::Exporter;

use crate::diag::LossReport;
use crate::formats::{self, WriteError, WriteOptions};
use crate::model::{Body, Content, Event, Message, Part, Role, Session, Usage};
use crate::tree::Tree;

/// A session ready to print.
pub(crate) struct Doc {
    pub title: String,
    /// Label and value, in display order.
    pub facts: Vec<(&'static str, String)>,
    pub summary: Option<String>,
    pub sections: Vec<Section>,
    pub losses: LossReport,
}

pub(crate) struct Section {
    /// 1 for the exported branch; 2, 3, ... for the others.
    pub number: usize,
    pub kind: SectionKind,
    /// The id of the node this branch ends at (empty for detached nodes).
    pub leaf_id: String,
    pub items: Vec<Item>,
}

pub(crate) enum SectionKind {
    /// The head branch (or the `--leaf` one). `missing_parent` when its first node's parent is
    /// not in the session.
    Main { missing_parent: Option<String> },
    /// Another branch, printed from where it leaves the nodes already shown.
    Branch {
        /// The anchor of the branch point (`n<index>`) and a short description of that node;
        /// `None` when the branch shares nothing with what was shown before.
        fork: Option<(String, String)>,
        missing_parent: Option<String>,
    },
    /// Nodes on no path from a leaf (parent cycles): shown so nothing is lost.
    Detached,
}

pub(crate) enum Item {
    Message {
        role: Role,
        model: Option<String>,
        timestamp: Option<String>,
        usage: Option<String>,
        blocks: Vec<Block>,
    },
    /// An info, warning or error the tool showed its user.
    Notice {
        role: Role,
        timestamp: Option<String>,
        blocks: Vec<Block>,
    },
    Event {
        timestamp: Option<String>,
        text: String,
        detail: Option<Detail>,
    },
    /// Other branches continue from the item before: its anchor and their section numbers.
    Fork {
        anchor: String,
        sections: Vec<usize>,
    },
}

pub(crate) enum Detail {
    /// Markdown text (a compaction summary), with the summary line to fold it under.
    Text(&'static str, String),
    /// Pretty JSON.
    Json(&'static str, String),
}

pub(crate) enum Block {
    Text(String),
    Thought {
        subject: Option<String>,
        text: String,
        /// Bytes of an opaque encrypted reasoning blob (not shown).
        encrypted: Option<usize>,
    },
    Call {
        name: String,
        id: Option<String>,
        /// Pretty JSON.
        args: String,
        result: Option<ResultBlock>,
    },
    Result(ResultBlock),
    Media {
        mime: Option<String>,
        /// Decoded size of inline data.
        bytes: Option<usize>,
        uri: Option<String>,
    },
    Code {
        language: Option<String>,
        code: String,
    },
    CodeResult {
        outcome: Option<String>,
        output: Option<String>,
    },
    /// A part no reader understood, as pretty JSON.
    Other(String),
}

pub(crate) struct ResultBlock {
    pub name: Option<String>,
    pub output: String,
    pub is_error: bool,
    pub status: Option<String>,
    /// What the agent showed its user, when it differs from the output.
    pub display: Option<String>,
    /// Media the tool returned with its result.
    pub attachments: Vec<Block>,
}

/// Lays out `session` for export: the `options.leaf` branch only when given, else the head
/// branch followed by every other branch.
pub(crate) fn build(session: &Session, options: &WriteOptions) -> Result<Doc, WriteError> {
    let tree = session.tree();
    let mut losses = LossReport::default();
    let n = session.nodes.len();
    let mut covered = vec![false; n];
    // (kind, leaf index, nodes to print)
    let mut plans: Vec<(SectionKind, Option<usize>, Vec<usize>)> = Vec::new();
    let main_leaf = match options.leaf.as_deref() {
        Some(id) => Some(
            tree.index_of(id)
                .ok_or_else(|| WriteError(format!("no node with id {id:?} in this session")))?,
        ),
        None => tree.head(),
    };
    if let Some(leaf) = main_leaf {
        let path = tree.path_to(leaf);
        for &i in &path {
            covered[i] = true;
        }
        plans.push((
            SectionKind::Main {
                missing_parent: missing_parent(&tree, &path),
            },
            Some(leaf),
            path,
        ));
    }
    // Records beside the conversation (file-history snapshots...) are no branch to show.
    let outside: Vec<usize> = tree
        .outside()
        .into_iter()
        .filter(|&i| !covered[i])
        .collect();
    losses.add(
        "outside-conversation",
        outside.len(),
        format!(
            "records outside the conversation, not exported ({})",
            tree.outside_summary(outside.iter().copied())
        ),
    );
    for &i in &outside {
        covered[i] = true;
    }
    if options.leaf.is_some() {
        losses.add(
            "other-branches",
            covered.iter().filter(|c| !**c).count(),
            "nodes on other branches (only the --leaf branch is exported)",
        );
    } else {
        for leaf in tree.branch_leaves() {
            if covered[leaf] {
                continue;
            }
            let (nodes, fork, missing) = new_part(&tree, leaf, &covered);
            for &i in &nodes {
                covered[i] = true;
            }
            let fork = fork.map(|f| (anchor(f), describe(session, f)));
            plans.push((
                SectionKind::Branch {
                    fork,
                    missing_parent: missing,
                },
                Some(leaf),
                nodes,
            ));
        }
        let rest: Vec<usize> = (0..n).filter(|&i| !covered[i]).collect();
        if !rest.is_empty() {
            plans.push((SectionKind::Detached, None, rest));
        }
    }

    // Where each other branch leaves the nodes shown before it.
    let mut forks: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, (kind, _, nodes)) in plans.iter().enumerate() {
        if let SectionKind::Branch { fork: Some(_), .. } = kind {
            let first = nodes[0];
            if let Some(p) = session.nodes[first]
                .parent
                .as_deref()
                .and_then(|p| tree.index_of(p))
            {
                forks.entry(p).or_default().push(k + 1);
            }
        }
    }

    let mut sections = Vec::with_capacity(plans.len());
    for (k, (kind, leaf, nodes)) in plans.into_iter().enumerate() {
        let items = section_items(session, &nodes, &forks, &mut losses);
        sections.push(Section {
            number: k + 1,
            kind,
            leaf_id: leaf
                .map(|l| session.nodes[l].id.clone())
                .unwrap_or_default(),
            items,
        });
    }

    let main_nodes: Vec<usize> = main_leaf.map(|l| tree.path_to(l)).unwrap_or_default();
    Ok(Doc {
        title: title(session, &main_nodes),
        facts: facts(session),
        summary: session.meta.summary.clone(),
        sections,
        losses,
    })
}

/// The part of `leaf`'s branch not shown yet: its nodes from where it leaves the shown ones
/// (walking up only that far, so a session with a branch at every step stays linear), the node
/// it forks from, and the parent it names that is not in the session (when it reaches no
/// shown node).
fn new_part(
    tree: &Tree,
    leaf: usize,
    covered: &[bool],
) -> (Vec<usize>, Option<usize>, Option<String>) {
    let mut nodes = vec![leaf];
    let mut seen = std::collections::HashSet::from([leaf]);
    let mut cur = leaf;
    while let Some(parent) = tree.node(cur).parent.as_deref() {
        match tree.index_of(parent) {
            Some(p) if covered[p] => {
                nodes.reverse();
                return (nodes, Some(p), None);
            }
            // A cycle: stop where it closes, as `path_to` does.
            Some(p) if !seen.insert(p) => break,
            Some(p) => {
                nodes.push(p);
                cur = p;
            }
            None => {
                nodes.reverse();
                return (nodes, None, Some(parent.to_string()));
            }
        }
    }
    nodes.reverse();
    let missing = missing_parent(tree, &nodes);
    (nodes, None, missing)
}

fn missing_parent(tree: &Tree, path: &[usize]) -> Option<String> {
    let first = tree.node(*path.first()?);
    first.parent.clone()
}

/// The anchor of a node in both exports (its position: ids may hold any character).
pub(crate) fn anchor(index: usize) -> String {
    format!("n{}", index + 1)
}

fn describe(session: &Session, index: usize) -> String {
    let node = &session.nodes[index];
    let what = match &node.body {
        Body::Message(m) => format!("{} message", m.role.as_str()),
        Body::Event(e) => format!("{} event", e.kind()),
    };
    match &node.timestamp {
        Some(t) => format!("{what} at {t}"),
        None => what,
    }
}

fn title(session: &Session, main: &[usize]) -> String {
    if let Some(t) = session
        .meta
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        return one_line(t, 120);
    }
    // The context a tool puts in user messages itself (Codex's `<environment_context>`) is
    // no prompt.
    let source = session
        .meta
        .source_format
        .as_deref()
        .and_then(super::by_name);
    let first_prompt = main
        .iter()
        .map(|&i| &session.nodes[i])
        .chain(session.nodes.iter())
        .filter_map(|n| n.message())
        .filter(|m| m.role == Role::User)
        .map(Message::text)
        .find(|t| !t.trim().is_empty() && !source.is_some_and(|f| f.is_context_message(t)));
    match (first_prompt, &session.meta.id) {
        (Some(p), _) => one_line(&p, 80),
        (None, Some(id)) => format!("Session {id}"),
        (None, None) => "Session".to_string(),
    }
}

/// The first non-empty line of `text`, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{}…", cut.trim_end())
    } else {
        line.to_string()
    }
}

fn facts(session: &Session) -> Vec<(&'static str, String)> {
    let m = &session.meta;
    let mut out = Vec::new();
    let first_ts = session.nodes.iter().find_map(|n| n.timestamp.clone());
    let last_ts = session.nodes.iter().rev().find_map(|n| n.timestamp.clone());
    if let Some(id) = &m.id {
        out.push(("Session", id.clone()));
    }
    if let Some(f) = &m.source_format {
        let tool = formats::all()
            .iter()
            .find(|x| x.name() == f)
            .map(|x| x.tool());
        let mut s = match tool {
            Some(t) => format!("{t} ({f})"),
            None => f.clone(),
        };
        if let Some(v) = &m.tool_version {
            s = format!("{s}, version {v}");
        }
        out.push(("Tool", s));
    } else if let Some(v) = &m.tool_version {
        out.push(("Tool version", v.clone()));
    }
    if let Some(cwd) = &m.cwd {
        out.push(("Directory", cwd.clone()));
    }
    if let Some(dirs) = m.directories.as_ref().filter(|d| !d.is_empty()) {
        out.push(("Other directories", dirs.join(", ")));
    }
    if let Some(b) = &m.git_branch {
        out.push(("Git branch", b.clone()));
    }
    if let Some(t) = m.start_time.clone().or(first_ts) {
        out.push(("Started", t));
    }
    if let Some(t) = m.last_updated.clone().or(last_ts) {
        out.push(("Last updated", t));
    }
    out
}

fn section_items(
    session: &Session,
    nodes: &[usize],
    forks: &HashMap<usize, Vec<usize>>,
    losses: &mut LossReport,
) -> Vec<Item> {
    // Results this section holds, by call id, so that each call is followed by its result.
    let mut results: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for &i in nodes {
        let Some(m) = session.nodes[i].message() else {
            continue;
        };
        for (j, p) in m.parts.iter().enumerate() {
            match &p.content {
                Content::ToolCall { id: Some(id), .. } => {
                    calls.entry(id.as_str()).or_insert(i);
                }
                Content::ToolResult {
                    call_id: Some(id), ..
                } => {
                    results.entry(id.as_str()).or_insert((i, j));
                }
                _ => {}
            }
        }
    }
    // A result is moved under its call only when the call comes first and in another part.
    let moved = |i: usize, j: usize| -> bool {
        let Some(m) = session.nodes[i].message() else {
            return false;
        };
        match &m.parts[j].content {
            Content::ToolResult {
                call_id: Some(id), ..
            } => results.get(id.as_str()) == Some(&(i, j)) && calls.contains_key(id.as_str()),
            _ => false,
        }
    };
    // Media right after a moved result (a file the tool read) goes with it.
    let attached = |i: usize, j: usize| -> bool {
        let Some(m) = session.nodes[i].message() else {
            return false;
        };
        let is_media = |k: usize| matches!(m.parts[k].content, Content::Media { .. });
        is_media(j)
            && (0..j)
                .rev()
                .find(|&k| !is_media(k))
                .is_some_and(|k| moved(i, k))
    };

    let mut items = Vec::new();
    for &i in nodes {
        let node = &session.nodes[i];
        let ts = node.timestamp.clone();
        match &node.body {
            Body::Message(m) => {
                let mut blocks = Vec::new();
                for (j, p) in m.parts.iter().enumerate() {
                    if moved(i, j) || attached(i, j) {
                        continue;
                    }
                    let paired = match &p.content {
                        Content::ToolCall { id: Some(id), .. } => results
                            .get(id.as_str())
                            .filter(|&&(ri, rj)| moved(ri, rj))
                            .map(|&(ri, rj)| &session.nodes[ri].message().unwrap().parts[rj..]),
                        _ => None,
                    };
                    blocks.push(block(p, paired, losses));
                }
                if blocks.is_empty() && !m.parts.is_empty() {
                    // Every part was shown under its call.
                } else if m.role.is_conversation() {
                    items.push(Item::Message {
                        role: m.role,
                        model: m.model.clone(),
                        timestamp: ts,
                        usage: m.usage.as_ref().and_then(usage),
                        blocks,
                    });
                } else {
                    items.push(Item::Notice {
                        role: m.role,
                        timestamp: ts,
                        blocks,
                    });
                }
            }
            Body::Event(e) => {
                let (text, detail) = event(e);
                items.push(Item::Event {
                    timestamp: ts,
                    text,
                    detail,
                });
            }
        }
        if let Some(sections) = forks.get(&i) {
            items.push(Item::Fork {
                anchor: anchor(i),
                sections: sections.clone(),
            });
        }
    }
    items
}

/// The block of one part; for a tool call, `result` is its result's part followed by the rest
/// of that message (media right after the result are shown with it).
fn block(part: &Part, result: Option<&[Part]>, losses: &mut LossReport) -> Block {
    match &part.content {
        Content::Text { text } => Block::Text(text.clone()),
        Content::Thought {
            text,
            subject,
            encrypted,
            ..
        } => {
            if encrypted.is_some() {
                losses.add(
                    "encrypted-thought",
                    1,
                    "encrypted reasoning (opaque to anyone but its provider; its size is shown)",
                );
            }
            Block::Thought {
                subject: subject.clone().filter(|s| !s.trim().is_empty()),
                text: text.clone(),
                encrypted: encrypted.as_ref().map(String::len),
            }
        }
        Content::ToolCall { id, name, args, .. } => Block::Call {
            name: name.clone(),
            id: id.clone(),
            args: pretty(args),
            result: result.and_then(|parts| {
                let (first, rest) = parts.split_first()?;
                match block(first, None, losses) {
                    Block::Result(mut r) => {
                        r.attachments = rest
                            .iter()
                            .take_while(|p| matches!(p.content, Content::Media { .. }))
                            .map(|p| block(p, None, losses))
                            .collect();
                        Some(r)
                    }
                    _ => None,
                }
            }),
        },
        Content::ToolResult {
            name,
            output,
            is_error,
            status,
            display,
            ..
        } => {
            let output = value_text(output);
            let display = display
                .as_ref()
                .map(value_text)
                .filter(|d| !d.is_empty() && *d != output);
            Block::Result(ResultBlock {
                name: name.clone(),
                output,
                is_error: *is_error || status.as_deref() == Some("error"),
                status: status.clone().filter(|s| s != "success"),
                display,
                attachments: Vec::new(),
            })
        }
        Content::Media {
            mime_type,
            data,
            uri,
            ..
        } => {
            if data.is_some() {
                losses.add(
                    "media-data",
                    1,
                    "inline media (shown as its type and size, not its data)",
                );
            }
            Block::Media {
                mime: mime_type.clone(),
                bytes: data.as_deref().map(base64_len),
                uri: uri.clone(),
            }
        }
        Content::Code { code, language, .. } => Block::Code {
            language: language.clone(),
            code: code.clone(),
        },
        Content::CodeResult {
            outcome, output, ..
        } => Block::CodeResult {
            outcome: outcome.clone(),
            output: output.clone(),
        },
        Content::Other { value } => Block::Other(pretty(value)),
    }
}

fn event(e: &Event) -> (String, Option<Detail>) {
    match e {
        Event::Compaction {
            summary,
            tokens_before,
            ..
        } => {
            let mut text = "Earlier history was compacted".to_string();
            if let Some(t) = tokens_before {
                text.push_str(&format!(" ({t} tokens before)"));
            }
            let detail = summary
                .clone()
                .filter(|s| !s.is_empty())
                .map(|s| Detail::Text("Summary", s));
            (text, detail)
        }
        Event::Rewind { target, count, .. } => {
            let text = match (target, count) {
                (Some(t), _) => format!("Rewound to {t}"),
                (None, Some(c)) => format!("Rewound by {c} item{}", if *c == 1 { "" } else { "s" }),
                (None, None) => "Rewound".to_string(),
            };
            (text, None)
        }
        Event::ModelChange {
            provider, model, ..
        } => {
            let what = match (provider, model) {
                (Some(p), Some(m)) => format!("{p}/{m}"),
                (None, Some(m)) => m.clone(),
                (Some(p), None) => p.clone(),
                (None, None) => "another model".to_string(),
            };
            (format!("Model changed to {what}"), None)
        }
        Event::Title { title, .. } => match title {
            Some(t) => (format!("Title set to “{t}”"), None),
            None => ("Title cleared".to_string(), None),
        },
        Event::Custom { kind, data } => {
            let detail = match data {
                Value::Null => None,
                Value::Object(o) if o.is_empty() => None,
                v => Some(Detail::Json("Data", pretty(v))),
            };
            (format!("Event: {kind}"), detail)
        }
    }
}

fn usage(u: &Usage) -> Option<String> {
    let parts: Vec<String> = [
        ("in", u.input),
        ("out", u.output),
        ("cached", u.cached),
        ("thoughts", u.thoughts),
        ("tool", u.tool),
        ("total", u.total),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
    .collect();
    (!parts.is_empty()).then(|| format!("tokens: {}", parts.join(", ")))
}

/// A tool's output as text: a string as it is; `{output: "..."}` (the Gemini shape) as its
/// string; anything else as pretty JSON.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 1 => match o.iter().next() {
            Some((k, Value::String(s))) if k == "output" || k == "error" => s.clone(),
            _ => pretty(v),
        },
        other => pretty(other),
    }
}

pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("a Value always serializes")
}

/// The decoded size of base64 data.
fn base64_len(data: &str) -> usize {
    let n = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let pad = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&b| b == b'=')
        .count();
    (n / 4 * 3 + (n % 4).saturating_sub(1)).saturating_sub(pad.min(2))
}

/// `1234` as `1.2 KB` and so on (sizes of media not shown).
pub(crate) fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Display names of roles.
pub(crate) fn role_label(role: Role) -> &'static str {
    match role {
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::Tool => "Tool",
        Role::System => "System",
        Role::Info => "Info",
        Role::Warning => "Warning",
        Role::Error => "Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sizes() {
        assert_eq!(base64_len(""), 0);
        assert_eq!(base64_len("QQ=="), 1);
        assert_eq!(base64_len("QUI="), 2);
        assert_eq!(base64_len("QUJD"), 3);
        assert_eq!(base64_len("QUJDRA=="), 4);
    }

    #[test]
    fn one_line_cuts() {
        assert_eq!(one_line("\n  hello\nworld", 80), "hello");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
