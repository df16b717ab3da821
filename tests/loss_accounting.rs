//! Nothing leaves a conversion without a line in the loss report (issue 17, item 8): for every
//! fixture and real sample × every target format, each message of the source is either in the
//! output (read back by the target's reader: one of its texts, thoughts or tool calls is there)
//! or counted in the loss report, and each event is there (an event of its kind, a title) or
//! counted. A message with nothing in it (an aborted reply) can only be counted, under
//! `messages`: that is what pi → Claude left out silently before (15 replies of
//! `before-compaction-v1.jsonl`).

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

use sessiontool::model::{Body, Content, Event, Node, Role, Session};
use sessiontool::tree::Tree;

/// Every fixture of every format a tool resumes, then every real sample (each folder of
/// ../shared/samples).
fn inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = common::source_formats()
        .into_iter()
        .flat_map(common::fixtures_of)
        .collect();
    let samples = common::prerequisite::shared_samples();
    if common::prerequisite::present(
        samples.is_dir(),
        "the samples in ../shared/samples are absent (fixtures only)",
    ) {
        let mut names: Vec<PathBuf> = walkdir::WalkDir::new(&samples)
            .min_depth(2)
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        files.extend(names);
    }
    files
}

fn read(bytes: &[u8], format: &str) -> Session {
    let input = sessiontool::formats::Input {
        name: "file",
        path: None,
        bytes,
    };
    sessiontool::formats::by_name(format)
        .unwrap()
        .read(&input)
        .unwrap()
        .session
}

/// Everything a reader of the output can show: every string in the read-back session.
fn all_text(s: &Session) -> String {
    let mut out = serde_json::to_string(s).unwrap();
    // Go writers escape <, > and & (\u003c ...); serde gives them back unescaped in strings,
    // so the JSON of the model is comparable with the source's texts as they are.
    out.push_str(&s.meta.title.clone().unwrap_or_default());
    out
}

/// A string as it stands inside a JSON document (escaped, without the quotes).
fn in_json(text: &str) -> String {
    let j = serde_json::to_string(text).unwrap();
    j[1..j.len() - 1].to_string()
}

/// Whether something of the message is in the output.
fn carried(m: &sessiontool::model::Message, text: &str) -> bool {
    m.parts.iter().any(|p| {
        let probe = match &p.content {
            Content::Text { text } | Content::Thought { text, .. } => text.trim(),
            Content::ToolCall { name, .. } => return text.contains(&in_json(name)),
            Content::Code { code, .. } => code.trim(),
            _ => "",
        };
        // A line of the text is enough: writers may wrap, join or frame a text.
        let line = probe.lines().map(str::trim).find(|l| l.len() >= 3);
        line.is_some_and(|l| text.contains(&in_json(l)))
    })
}

fn event_there(e: &Event, out: &Session) -> bool {
    if let Event::Title { title: Some(t), .. } = e
        && out.meta.title.as_deref() == Some(t.as_str())
    {
        return true;
    }
    out.nodes
        .iter()
        .any(|n| matches!(&n.body, Body::Event(o) if o.kind() == e.kind()))
}

#[derive(Default, Debug)]
struct Missing {
    /// Messages without any part (only `messages` can account for them).
    empty: usize,
    /// Notices and system messages.
    notices: usize,
    /// Other messages whose content is not in the output.
    messages: usize,
    events: usize,
    /// Of the above, on branches other than the head's.
    off_branch: usize,
}

fn missing(source: &Session, out: &Session) -> Missing {
    let text = all_text(out);
    let tree = Tree::new(source);
    let on_head: std::collections::HashSet<usize> = tree
        .head()
        .map(|h| tree.path_to(h).into_iter().collect())
        .unwrap_or_default();
    let mut m = Missing::default();
    let mut empties: HashMap<Role, usize> = HashMap::new();
    for (i, node) in source.nodes.iter().enumerate() {
        let gone = match &node.body {
            Body::Message(msg) if msg.parts.is_empty() => {
                // Carried while the output holds as many empty messages of that role.
                let key = msg.role;
                let left = empties.entry(key).or_insert_with(|| {
                    out.nodes
                        .iter()
                        .filter_map(|n| n.message())
                        .filter(|o| o.role == key && o.parts.is_empty())
                        .count()
                });
                if *left > 0 {
                    *left -= 1;
                    false
                } else {
                    m.empty += 1;
                    true
                }
            }
            Body::Message(msg) if carried(msg, &text) => false,
            Body::Message(msg) if !msg.role.is_conversation() || msg.role == Role::System => {
                m.notices += 1;
                true
            }
            Body::Message(msg) => {
                // A message of only empty or unprobed parts (an empty text, a media part, a
                // result) is judged by its parts' own losses.
                let probed = msg.parts.iter().any(|p| match &p.content {
                    Content::Text { text } | Content::Thought { text, .. } => {
                        text.trim().lines().any(|l| l.trim().len() >= 3)
                    }
                    Content::ToolCall { .. } => true,
                    Content::Code { code, .. } => code.trim().lines().any(|l| l.trim().len() >= 3),
                    _ => false,
                });
                if probed {
                    m.messages += 1;
                }
                probed
            }
            Body::Event(e) if !event_there(e, out) => {
                m.events += 1;
                true
            }
            Body::Event(_) => false,
        };
        if gone && !on_head.contains(&i) {
            m.off_branch += 1;
        }
    }
    m
}

fn loss(c: &sessiontool::Conversion, codes: &[&str]) -> usize {
    c.losses
        .losses
        .iter()
        .filter(|l| codes.contains(&l.code))
        .map(|l| l.count)
        .sum()
}

/// Codes that stand for whole nodes left out.
const NODE_CODES: &[&str] = &[
    "other-branches",
    "outside-conversation",
    "messages",
    "notices",
    "system-messages",
    "events",
    "thoughts",
    "parts",
    "assistant-media",
    "media",
    "title",
    "session-summary",
    "context",
];

fn node_label(n: &Node) -> String {
    match &n.body {
        Body::Message(m) => format!("{} {}", n.id, m.role.as_str()),
        Body::Event(e) => format!("{} {}", n.id, e.kind()),
    }
}

#[test]
fn every_node_is_in_the_output_or_in_the_loss_report() {
    let mut failures: Vec<String> = Vec::new();
    let mut pairs = 0;
    for file in inputs() {
        let bytes = std::fs::read(&file).unwrap();
        let name = file.display().to_string();
        let Ok(first) = sessiontool::convert_bytes(&bytes, None, "markdown") else {
            continue; // not a session file (the matrix and the format tests cover those)
        };
        let source = read(&bytes, first.from);
        for to in common::session_formats() {
            let c = match sessiontool::convert_bytes(&bytes, None, to) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{name} -> {to}: {e}"));
                    continue;
                }
            };
            pairs += 1;
            let out = read(&c.bytes, to);
            let m = missing(&source, &out);
            let whole = loss(&c, NODE_CODES);
            let empty_codes = loss(&c, &["messages", "other-branches"]);
            // Off the head's branch: on another branch, or beside the conversation.
            let branch = loss(&c, &["other-branches", "outside-conversation"]);
            let mut why = Vec::new();
            if m.empty > empty_codes {
                why.push(format!(
                    "{} empty message(s), `messages`/`other-branches` say {empty_codes}",
                    m.empty
                ));
            }
            let on_head =
                (m.empty + m.notices + m.messages + m.events).saturating_sub(m.off_branch);
            if on_head + m.off_branch.saturating_sub(branch) > whole {
                why.push(format!("{m:?} left out, node-level losses say {whole}"));
            }
            if !why.is_empty() {
                let sample: Vec<String> = source
                    .nodes
                    .iter()
                    .filter(|n| match &n.body {
                        Body::Message(msg) => {
                            msg.parts.is_empty() || !carried(msg, &all_text(&out))
                        }
                        Body::Event(e) => !event_there(e, &out),
                    })
                    .take(3)
                    .map(node_label)
                    .collect();
                failures.push(format!(
                    "{name} -> {to}: {} (e.g. {sample:?}); losses {:?}",
                    why.join("; "),
                    c.losses
                        .losses
                        .iter()
                        .map(|l| (l.code, l.count))
                        .collect::<HashMap<_, _>>()
                ));
            }
        }
    }
    assert!(pairs > 100, "only {pairs} conversions");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pi_aborted_replies_are_counted_when_claude_cannot_hold_them() {
    let Some(path) = common::prerequisite::shared("pi/before-compaction-v1.jsonl") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let c = sessiontool::convert_bytes(&bytes, None, "claude-jsonl").unwrap();
    // 13 empty aborted replies, 2 holding only thinking (with usage), all gone from the output.
    assert_eq!(loss(&c, &["messages"]), 15, "{:?}", c.losses);
    assert!(loss(&c, &["usage-tokens"]) > 0, "{:?}", c.losses);
}
