//! What the write-only exports (`markdown`, `html`) share: the session laid out as a document
//! (title, facts, then one section per branch, head branch first) that each renderer only has
//! to print, piece by piece ([`Render`]). Nothing here reads the clock, and every list is in
//! file order, so the same session always exports to the same bytes.
//!
//! The layout reads the session through [`Nodes`]: the whole session in memory
//! ([`whole::Whole`]), or the engine's two passes ([`stream`]), where the sections are planned
//! on the tree of ids and each section's nodes are read twice (once for its calls and results,
//! once to print them), the node of a result shown under its call read again where it is:
//! memory bounded by the number of records, the same bytes either way.

use std::collections::HashMap;
use std::io;

use serde_json::Value;

mod exporter;
mod stream;
pub(crate) mod whole;

pub(crate) use exporter::Exporter;

use crate::diag::LossReport;
use crate::formats::{self, WriteError, WriteOptions};
use crate::model::{Body, Content, Event, Message, Meta, Node, Part, Role, Usage};

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

/// What comes before the sections: the title, the facts, the summary.
pub(crate) struct Head {
    pub title: String,
    /// Label and value, in display order.
    pub facts: Vec<(&'static str, String)>,
    pub summary: Option<String>,
}

/// A section's heading: which branch it shows.
pub(crate) struct Section {
    /// 1 for the exported branch; 2, 3, ... for the others.
    pub number: usize,
    pub kind: SectionKind,
    /// The id of the node this branch ends at (empty for detached nodes).
    pub leaf_id: String,
}

/// How an export prints what [`export`] lays out, piece by piece and in order: the head, then
/// each section's heading and its items (`sections`: how many sections there are).
pub(crate) trait Render: Send {
    fn head(&mut self, head: &Head, out: &mut String);
    fn section(&mut self, section: &Section, sections: usize, out: &mut String);
    fn item(&mut self, item: &Item, sections: usize, out: &mut String);
    /// After a section's last item.
    fn section_end(&mut self, _out: &mut String) {}
    /// After the last section.
    fn end(&mut self, out: &mut String);
}

/// What an export reads of a session: its tree and its nodes, from the whole session
/// ([`whole::Whole`]) or from the engine's two passes. Indexes are the nodes' places in the
/// session, in file order; the tree is [`crate::tree::Tree`]'s.
pub(crate) trait Nodes: Sync {
    fn meta(&self) -> &Meta;
    fn len(&self) -> usize;
    /// The head: the node the metadata names, else the last one.
    fn head(&self) -> Option<usize>;
    /// The node an id names (the first one with it).
    fn index_of(&self, id: &str) -> Option<usize>;
    /// The parent node `index` names, in the session or not.
    fn parent_id(&self, index: usize) -> Option<String>;
    /// The nodes from the root down to `leaf`.
    fn path_to(&self, leaf: usize) -> Vec<usize>;
    /// The records outside the conversation, in file order.
    fn outside(&self) -> Vec<usize>;
    /// The leaves that end a branch of the conversation, in file order.
    fn branch_leaves(&self) -> Vec<usize>;
    /// Whether node `index` has a time.
    fn timed(&self, index: usize) -> bool;
    /// The nodes of `indices`, in that order, until `each` says to stop (`false`).
    fn each(
        &self,
        indices: &[usize],
        each: &mut (dyn FnMut(usize, &Node) -> io::Result<bool> + Send),
    ) -> io::Result<()>;
}

/// Why an export stopped.
#[derive(Debug)]
pub(crate) enum ExportError {
    /// The `--leaf` node is not there.
    Write(WriteError),
    /// The session could not be read (the engine's input), or the output not written.
    Io(io::Error),
}

impl From<io::Error> for ExportError {
    fn from(e: io::Error) -> Self {
        ExportError::Io(e)
    }
}

/// Lays out the session `nodes` reads for export (the `options.leaf` branch only when given,
/// else the head branch followed by every other branch) and prints it with `render`, handing
/// what is printed to `put` as it goes; what the export could not show.
pub(crate) fn export(
    nodes: &dyn Nodes,
    options: &WriteOptions,
    render: &mut dyn Render,
    put: &mut (dyn FnMut(&str) -> io::Result<()> + Send),
) -> Result<LossReport, ExportError> {
    let mut losses = LossReport::default();
    let plan = plan(nodes, options, &mut losses)?;
    let head = Head {
        title: title(nodes, &plan.main)?,
        facts: facts(nodes)?,
        summary: nodes.meta().summary.clone(),
    };
    let mut out = String::with_capacity(16 * 1024);
    render.head(&head, &mut out);
    let count = plan.sections.len();
    for (k, (kind, leaf, indices)) in plan.sections.into_iter().enumerate() {
        let section = Section {
            number: k + 1,
            kind,
            leaf_id: leaf
                .map(|l| node_id(nodes, l))
                .transpose()?
                .unwrap_or_default(),
        };
        render.section(&section, count, &mut out);
        section_items(nodes, &indices, &plan.forks, &mut losses, &mut |item| {
            render.item(&item, count, &mut out);
            if out.len() >= 1 << 20 {
                // What ends in line breaks is held back: the end may take some back.
                let upto = out.trim_end_matches('\n').len();
                put(&out[..upto])?;
                out.drain(..upto);
            }
            Ok(())
        })?;
        render.section_end(&mut out);
    }
    render.end(&mut out);
    put(&out)?;
    Ok(losses)
}

/// The sections to print, as node indexes, and where other branches fork from the nodes shown
/// before them.
struct Plan {
    /// (kind, leaf, nodes to print)
    sections: Vec<(SectionKind, Option<usize>, Vec<usize>)>,
    /// The exported branch's nodes.
    main: Vec<usize>,
    /// A node other branches continue from: their section numbers.
    forks: HashMap<usize, Vec<usize>>,
}

fn plan(
    nodes: &dyn Nodes,
    options: &WriteOptions,
    losses: &mut LossReport,
) -> Result<Plan, ExportError> {
    let n = nodes.len();
    let mut covered = vec![false; n];
    let mut sections: Vec<(SectionKind, Option<usize>, Vec<usize>)> = Vec::new();
    let main_leaf = match options.leaf.as_deref() {
        Some(id) => Some(nodes.index_of(id).ok_or_else(|| {
            ExportError::Write(WriteError(format!(
                "no node with id {id:?} in this session"
            )))
        })?),
        None => nodes.head(),
    };
    let mut main = Vec::new();
    if let Some(leaf) = main_leaf {
        main = nodes.path_to(leaf);
        for &i in &main {
            covered[i] = true;
        }
        sections.push((
            SectionKind::Main {
                missing_parent: nodes.parent_id(main[0]),
            },
            Some(leaf),
            main.clone(),
        ));
    }
    // Records beside the conversation (file-history snapshots...) are no branch to show.
    let outside: Vec<usize> = nodes
        .outside()
        .into_iter()
        .filter(|&i| !covered[i])
        .collect();
    losses.add(
        "outside-conversation",
        outside.len(),
        format!(
            "records outside the conversation, not exported ({})",
            outside_summary(nodes, &outside)?
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
        for leaf in nodes.branch_leaves() {
            if covered[leaf] {
                continue;
            }
            let (part, fork, missing) = new_part(nodes, leaf, &covered);
            for &i in &part {
                covered[i] = true;
            }
            let fork = match fork {
                Some(f) => Some((anchor(f), describe(nodes, f)?)),
                None => None,
            };
            sections.push((
                SectionKind::Branch {
                    fork,
                    missing_parent: missing,
                },
                Some(leaf),
                part,
            ));
        }
        let rest: Vec<usize> = (0..n).filter(|&i| !covered[i]).collect();
        if !rest.is_empty() {
            sections.push((SectionKind::Detached, None, rest));
        }
    }
    // Where each other branch leaves the nodes shown before it.
    let mut forks: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, (kind, _, part)) in sections.iter().enumerate() {
        if let SectionKind::Branch { fork: Some(_), .. } = kind
            && let Some(p) = nodes.parent_id(part[0]).and_then(|p| nodes.index_of(&p))
        {
            forks.entry(p).or_default().push(k + 1);
        }
    }
    Ok(Plan {
        sections,
        main,
        forks,
    })
}

/// Node `index` (read again where the session is not in memory).
fn node_at(nodes: &dyn Nodes, index: usize) -> io::Result<Node> {
    let mut found = None;
    nodes.each(&[index], &mut |_, node| {
        found = Some(node.clone());
        Ok(false)
    })?;
    Ok(found.expect("each gives every index it is asked for"))
}

fn node_id(nodes: &dyn Nodes, index: usize) -> io::Result<String> {
    Ok(node_at(nodes, index)?.id)
}

/// The records outside the conversation counted by what they are
/// ([`crate::tree::Tree::outside_summary`]).
fn outside_summary(nodes: &dyn Nodes, outside: &[usize]) -> io::Result<String> {
    let mut names = Vec::with_capacity(outside.len());
    nodes.each(outside, &mut |_, node| {
        names.push(crate::tree::record_name(node));
        Ok(true)
    })?;
    Ok(crate::tree::kinds_summary(names))
}

/// The part of `leaf`'s branch not shown yet: its nodes from where it leaves the shown ones
/// (walking up only that far, so a session with a branch at every step stays linear), the node
/// it forks from, and the parent it names that is not in the session (when it reaches no
/// shown node).
fn new_part(
    nodes: &dyn Nodes,
    leaf: usize,
    covered: &[bool],
) -> (Vec<usize>, Option<usize>, Option<String>) {
    let mut part = vec![leaf];
    let mut seen = std::collections::HashSet::from([leaf]);
    let mut cur = leaf;
    while let Some(parent) = nodes.parent_id(cur) {
        match nodes.index_of(&parent) {
            Some(p) if covered[p] => {
                part.reverse();
                return (part, Some(p), None);
            }
            // A cycle: stop where it closes, as `path_to` does.
            Some(p) if !seen.insert(p) => break,
            Some(p) => {
                part.push(p);
                cur = p;
            }
            None => {
                part.reverse();
                return (part, None, Some(parent));
            }
        }
    }
    part.reverse();
    let missing = nodes.parent_id(part[0]);
    (part, None, missing)
}

/// The anchor of a node in both exports (its position: ids may hold any character).
pub(crate) fn anchor(index: usize) -> String {
    format!("n{}", index + 1)
}

fn describe(nodes: &dyn Nodes, index: usize) -> io::Result<String> {
    let node = node_at(nodes, index)?;
    let what = match &node.body {
        Body::Message(m) => format!("{} message", m.role.as_str()),
        Body::Event(e) => format!("{} event", e.kind()),
    };
    Ok(match &node.timestamp {
        Some(t) => format!("{what} at {t}"),
        None => what,
    })
}

fn title(nodes: &dyn Nodes, main: &[usize]) -> io::Result<String> {
    let meta = nodes.meta();
    if let Some(t) = meta.title.as_deref().filter(|t| !t.trim().is_empty()) {
        return Ok(one_line(t, 120));
    }
    // The exported branch first, then every node in file order.
    let mut first_prompt = first_prompt_in(nodes, main)?;
    if first_prompt.is_none() {
        let all: Vec<usize> = (0..nodes.len()).collect();
        first_prompt = first_prompt_in(nodes, &all)?;
    }
    Ok(match (first_prompt, &meta.id) {
        (Some(p), _) => one_line(&p, 80),
        (None, Some(id)) => format!("Session {id}"),
        (None, None) => "Session".to_string(),
    })
}

/// The text of the first user message among `indices` that is a prompt: not empty, and not
/// the context a tool puts in user messages itself (Codex's `<environment_context>`).
fn first_prompt_in(nodes: &dyn Nodes, indices: &[usize]) -> io::Result<Option<String>> {
    let source = nodes
        .meta()
        .source_format
        .as_deref()
        .and_then(super::by_name);
    let mut first_prompt = None;
    nodes.each(indices, &mut |_, node| {
        if let Some(m) = node.message().filter(|m| m.role == Role::User) {
            let t = m.text();
            if !t.trim().is_empty() && !source.is_some_and(|f| f.is_context_message(&t)) {
                first_prompt = Some(t);
            }
        }
        Ok(first_prompt.is_none())
    })?;
    Ok(first_prompt)
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

/// The time of the first node that has one among `indices`.
fn first_time(
    nodes: &dyn Nodes,
    indices: impl Iterator<Item = usize>,
) -> io::Result<Option<String>> {
    match indices.into_iter().find(|&i| nodes.timed(i)) {
        Some(i) => Ok(node_at(nodes, i)?.timestamp),
        None => Ok(None),
    }
}

fn facts(nodes: &dyn Nodes) -> io::Result<Vec<(&'static str, String)>> {
    let m = nodes.meta();
    let mut out = Vec::new();
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
    let start = match &m.start_time {
        Some(t) => Some(t.clone()),
        None => first_time(nodes, 0..nodes.len())?,
    };
    if let Some(t) = start {
        out.push(("Started", t));
    }
    let last = match &m.last_updated {
        Some(t) => Some(t.clone()),
        None => first_time(nodes, (0..nodes.len()).rev())?,
    };
    if let Some(t) = last {
        out.push(("Last updated", t));
    }
    Ok(out)
}

/// Where a section's calls and results are: each call id's first call (its node) and first
/// result (its node and part), so that each call is followed by its result.
#[derive(Default)]
struct Pairs {
    calls: HashMap<String, usize>,
    results: HashMap<String, (usize, usize)>,
}

impl Pairs {
    fn of(nodes: &dyn Nodes, indices: &[usize]) -> io::Result<Pairs> {
        let mut pairs = Pairs::default();
        nodes.each(indices, &mut |i, node| {
            if let Some(m) = node.message() {
                for (j, p) in m.parts.iter().enumerate() {
                    match &p.content {
                        Content::ToolCall { id: Some(id), .. } => {
                            pairs.calls.entry(id.clone()).or_insert(i);
                        }
                        Content::ToolResult {
                            call_id: Some(id), ..
                        } => {
                            pairs.results.entry(id.clone()).or_insert((i, j));
                        }
                        _ => {}
                    }
                }
            }
            Ok(true)
        })?;
        Ok(pairs)
    }

    /// Whether part `j` of node `i` (`m`) is a result shown under its call: the first result
    /// of a call the section has.
    fn moved(&self, i: usize, j: usize, m: &Message) -> bool {
        match &m.parts[j].content {
            Content::ToolResult {
                call_id: Some(id), ..
            } => self.results.get(id) == Some(&(i, j)) && self.calls.contains_key(id),
            _ => false,
        }
    }

    /// Whether part `j` of node `i` (`m`) is media right after a moved result (a file the tool
    /// read): it goes with it.
    fn attached(&self, i: usize, j: usize, m: &Message) -> bool {
        let is_media = |k: usize| matches!(m.parts[k].content, Content::Media { .. });
        is_media(j)
            && (0..j)
                .rev()
                .find(|&k| !is_media(k))
                .is_some_and(|k| self.moved(i, k, m))
    }
}

/// The items of a section (`indices`), handed to `put` one at a time.
fn section_items(
    nodes: &dyn Nodes,
    indices: &[usize],
    forks: &HashMap<usize, Vec<usize>>,
    losses: &mut LossReport,
    put: &mut (dyn FnMut(Item) -> io::Result<()> + Send),
) -> io::Result<()> {
    let pairs = Pairs::of(nodes, indices)?;
    // The node of the last result shown under its call, when it is another node.
    let mut result_node: Option<(usize, Node)> = None;
    let mut failed = None;
    nodes.each(indices, &mut |i, node| {
        let ts = node.timestamp.clone();
        let item = match &node.body {
            Body::Message(m) => {
                let mut blocks = Vec::new();
                for (j, p) in m.parts.iter().enumerate() {
                    if pairs.moved(i, j, m) || pairs.attached(i, j, m) {
                        continue;
                    }
                    let result = match &p.content {
                        Content::ToolCall { id: Some(id), .. } => pairs
                            .results
                            .get(id)
                            .copied()
                            .filter(|_| pairs.calls.contains_key(id)),
                        _ => None,
                    };
                    let paired = match result {
                        Some((ri, rj)) if ri == i => Some(&m.parts[rj..]),
                        Some((ri, rj)) => {
                            if result_node.as_ref().is_none_or(|(k, _)| *k != ri) {
                                match node_at(nodes, ri) {
                                    Ok(n) => result_node = Some((ri, n)),
                                    Err(e) => {
                                        failed = Some(e);
                                        return Ok(false);
                                    }
                                }
                            }
                            let (_, n) = result_node.as_ref().expect("read just now");
                            n.message().map(|rm| &rm.parts[rj..])
                        }
                        None => None,
                    };
                    blocks.push(block(p, paired, losses));
                }
                if blocks.is_empty() && !m.parts.is_empty() {
                    // Every part was shown under its call.
                    None
                } else if m.role.is_conversation() {
                    Some(Item::Message {
                        role: m.role,
                        model: m.model.clone(),
                        timestamp: ts,
                        usage: m.usage.as_ref().and_then(usage),
                        blocks,
                    })
                } else {
                    Some(Item::Notice {
                        role: m.role,
                        timestamp: ts,
                        blocks,
                    })
                }
            }
            Body::Event(e) => {
                let (text, detail) = event(e);
                Some(Item::Event {
                    timestamp: ts,
                    text,
                    detail,
                })
            }
        };
        if let Some(item) = item {
            put(item)?;
        }
        if let Some(sections) = forks.get(&i) {
            put(Item::Fork {
                anchor: anchor(i),
                sections: sections.clone(),
            })?;
        }
        Ok(true)
    })?;
    failed.map_or(Ok(()), Err)
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
