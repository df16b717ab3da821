//! The write-only exports `markdown` and `html`: every text, thought, tool call and result of
//! every branch shows up, hostile text stays text, fences hold backticks, output is
//! deterministic, and `--leaf` exports one branch.

use std::path::Path;

use serde_json::Value;
use sessiontool::formats::{self, Format, Input, WriteOptions, Written};
use sessiontool::model::{Body, Content, Part, Role, Session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

const QWEN: &[&str] = &[
    "branches.jsonl",
    "tools.jsonl",
    "plain.jsonl",
    "system.jsonl",
    "unicode.jsonl",
    "unknown-fields.jsonl",
    "seed000.jsonl",
];
const GEMINI: &[&str] = &[
    "thoughts.json",
    "every-part.json",
    "notices.json",
    "tools.json",
    "plain.json",
    "unicode.json",
    "v028-parts.json",
    "seed003.json",
];

fn format(name: &str) -> &'static dyn Format {
    formats::by_name(name)
        .or(match name {
            "markdown" => Some(&formats::markdown::Markdown as &dyn Format),
            "html" => Some(&formats::html::Html as &dyn Format),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no format named {name}"))
}

fn read(format_name: &str, file: &str) -> Session {
    let path = Path::new(FIXTURES).join(format_name).join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut session = format(format_name)
        .read(&Input {
            name: file,
            path: Some(&path),
            bytes: &bytes,
        })
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .session;
    session.meta.source_format = Some(format_name.to_string());
    session
}

fn export_with(to: &str, session: &Session, options: &WriteOptions) -> (String, Written) {
    let written = format(to)
        .write(session, options)
        .unwrap_or_else(|e| panic!("{to}: {e}"));
    (String::from_utf8(written.bytes.clone()).unwrap(), written)
}

fn export(to: &str, session: &Session) -> String {
    export_with(to, session, &WriteOptions::default()).0
}

fn all_fixtures() -> Vec<(&'static str, &'static str)> {
    QWEN.iter()
        .map(|f| ("qwen-jsonl", *f))
        .chain(GEMINI.iter().map(|f| ("gemini-json", *f)))
        .collect()
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A tool's output as the exports print it.
fn output_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 1 => match o.iter().next() {
            Some((k, Value::String(s))) if k == "output" || k == "error" => s.clone(),
            _ => serde_json::to_string_pretty(v).unwrap(),
        },
        other => serde_json::to_string_pretty(other).unwrap(),
    }
}

/// Markdown text as a renderer shows it, as far as these tests look: without the backslash
/// the export puts before raw HTML and entity references (`\<audio>` shows `<audio>`).
fn as_written(markdown: &str) -> String {
    markdown.replace("\\<", "<").replace("\\&", "&")
}

/// Every line of `text` (trimmed) must appear in `doc`, escaped for HTML when `html`.
fn assert_lines_in(doc: &str, text: &str, html: bool, what: &str) {
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let want = if html { esc(line) } else { line.to_string() };
        assert!(
            doc.contains(&want),
            "{what}: line {want:?} missing from the export"
        );
    }
}

fn parts(session: &Session) -> impl Iterator<Item = (Role, &Part)> {
    session
        .nodes
        .iter()
        .filter_map(|n| match &n.body {
            Body::Message(m) => Some(m.parts.iter().map(move |p| (m.role, p))),
            Body::Event(_) => None,
        })
        .flatten()
}

#[test]
fn every_text_call_and_result_appears() {
    for (fmt, file) in all_fixtures() {
        let session = read(fmt, file);
        for to in ["markdown", "html"] {
            let html = to == "html";
            let doc = match html {
                true => export(to, &session),
                false => as_written(&export(to, &session)),
            };
            let what = format!("{fmt}/{file} as {to}");
            let mut texts = 0;
            for (_, part) in parts(&session) {
                match &part.content {
                    Content::Text { text } => {
                        texts += 1;
                        assert_lines_in(&doc, text, html, &what);
                    }
                    Content::Thought { text, .. } => assert_lines_in(&doc, text, html, &what),
                    Content::ToolCall { name, args, .. } => {
                        assert_lines_in(&doc, name, html, &what);
                        assert_lines_in(
                            &doc,
                            &serde_json::to_string_pretty(args).unwrap(),
                            html,
                            &what,
                        );
                    }
                    Content::ToolResult { output, .. } => {
                        assert_lines_in(&doc, &output_text(output), html, &what)
                    }
                    _ => {}
                }
            }
            if !session.nodes.is_empty() {
                assert!(texts > 0, "{what}: fixture without text?");
            }
        }
    }
}

#[test]
fn user_and_assistant_texts_appear_whole_in_markdown() {
    for (fmt, file) in all_fixtures() {
        let session = read(fmt, file);
        let md = as_written(&export("markdown", &session));
        for (role, part) in parts(&session) {
            if let (Role::User | Role::Assistant, Content::Text { text }) = (role, &part.content) {
                assert!(
                    md.contains(text.trim_end()),
                    "{fmt}/{file}: {text:?} not whole in the markdown"
                );
            }
        }
    }
}

/// Whether `pos` lies inside a `<details>` element of `doc`.
fn inside_details(doc: &str, pos: usize) -> bool {
    let before = &doc[..pos];
    match (before.rfind("<details"), before.rfind("</details>")) {
        (Some(open), Some(close)) => open > close,
        (Some(_), None) => true,
        _ => false,
    }
}

#[test]
fn thoughts_are_folded_in_details() {
    let mut seen = 0;
    for (fmt, file) in [
        ("gemini-json", "thoughts.json"),
        ("qwen-jsonl", "tools.jsonl"),
    ] {
        let session = read(fmt, file);
        for to in ["markdown", "html"] {
            let doc = export(to, &session);
            for (_, part) in parts(&session) {
                if let Content::Thought { text, .. } = &part.content {
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap().trim();
                    let first = if to == "html" {
                        esc(first)
                    } else {
                        first.to_string()
                    };
                    let pos = doc
                        .find(&first)
                        .unwrap_or_else(|| panic!("{file}: {first:?}"));
                    assert!(inside_details(&doc, pos), "{file} {to}: thought not folded");
                    seen += 1;
                }
            }
            assert!(doc.contains("<summary>Thinking"), "{file} {to}");
        }
    }
    assert!(seen >= 4, "fixtures hold thoughts");
}

#[test]
fn tool_calls_are_followed_by_their_results() {
    let session = read("qwen-jsonl", "tools.jsonl");
    let md = export("markdown", &session);
    let mut last = 0;
    for (_, part) in parts(&session) {
        if let Content::ToolCall { name, id, .. } = &part.content {
            let call = md[last..]
                .find(&format!("**Tool call:** `{name}`"))
                .map(|p| p + last)
                .unwrap_or_else(|| panic!("call {name}"));
            // Its result is the next result printed.
            let result = md[call..].find("**Result").map(|p| p + call).unwrap();
            let next_call = md[call + 1..].find("**Tool call:**").map(|p| p + call + 1);
            assert!(
                next_call.is_none_or(|n| result < n),
                "{name}: result not after call"
            );
            let output = parts(&session)
                .find_map(|(_, p)| match &p.content {
                    Content::ToolResult {
                        call_id, output, ..
                    } if call_id == id => Some(output_text(output)),
                    _ => None,
                })
                .unwrap();
            let first_line = output.lines().next().unwrap();
            assert!(md[result..].starts_with("**Result") && md[result..].contains(first_line));
            last = call + 1;
        }
    }
    assert!(last > 0);
}

#[test]
fn other_branches_are_shown_after_the_head_branch() {
    let session = read("qwen-jsonl", "branches.jsonl");
    let head_text = "Actually, use an <audio> element with assets/bell.mp3.";
    let other_text = "Use the Web Audio API.";
    let other_answer = "Added `playChime()`";
    for to in ["markdown", "html"] {
        let doc = match to {
            "html" => export(to, &session),
            _ => as_written(&export(to, &session)),
        };
        let (head_text, other_text, other_answer) = if to == "html" {
            (esc(head_text), esc(other_text), esc(other_answer))
        } else {
            (head_text.into(), other_text.into(), other_answer.into())
        };
        let head = doc.find(&head_text).expect("head branch text");
        let heading = doc.find("Other branches").expect("other branches heading");
        let other = doc.find(&other_text).expect("other branch text");
        assert!(head < heading && heading < other, "{to}: head branch first");
        assert!(doc[heading..].contains(&other_answer), "{to}");
        assert!(
            doc.contains("Branch point"),
            "{to}: branch point marked inline"
        );
        // The shared start is shown once.
        assert_eq!(
            doc.matches("Add a sound when the work phase ends.").count(),
            if to == "html" { 3 } else { 2 },
            "{to}: title (twice in html) + message"
        );
    }
}

#[test]
fn leaf_exports_one_branch() {
    let session = read("qwen-jsonl", "branches.jsonl");
    let options = WriteOptions {
        leaf: Some("883763e6-1573-4333-bc95-e5f4a532fda3".into()),
        ..Default::default()
    };
    for to in ["markdown", "html"] {
        let (doc, written) = export_with(to, &session, &options);
        assert!(doc.contains("Use the Web Audio API."), "{to}");
        assert!(
            !doc.contains("assets/bell.mp3"),
            "{to}: other branch left out"
        );
        assert!(!doc.contains("Other branches"), "{to}");
        let codes: Vec<_> = written
            .losses
            .losses
            .iter()
            .map(|l| (l.code, l.count))
            .collect();
        assert_eq!(codes, [("other-branches", 3)], "{to}");
    }
    let bad = WriteOptions {
        leaf: Some("nope".into()),
        ..Default::default()
    };
    assert!(format("markdown").write(&session, &bad).is_err());
}

#[test]
fn losses_are_empty_or_media_only() {
    for (fmt, file) in all_fixtures() {
        let session = read(fmt, file);
        for to in ["markdown", "html"] {
            let (_, written) = export_with(to, &session, &WriteOptions::default());
            for l in &written.losses.losses {
                assert!(
                    ["media-data", "encrypted-thought"].contains(&l.code),
                    "{fmt}/{file} {to}: unexpected loss {l:?}"
                );
            }
        }
    }
    let session = read("gemini-json", "every-part.json");
    for to in ["markdown", "html"] {
        let (doc, written) = export_with(to, &session, &WriteOptions::default());
        assert_eq!(written.losses.losses[0].code, "media-data");
        assert_eq!(written.losses.losses[0].count, 2);
        assert!(
            doc.contains("image/png, 70 bytes"),
            "{to}: type and size shown"
        );
        assert!(!doc.contains("iVBORw0KGgo"), "{to}: data not shown");
        assert!(
            doc.contains("gs://design-assets/spec-v2.pdf"),
            "{to}: uri shown"
        );
    }
}

fn hostile_session() -> Session {
    let mut session = read("qwen-jsonl", "tools.jsonl");
    for node in &mut session.nodes {
        if let Some(m) = node.message_mut() {
            for p in &mut m.parts {
                match &mut p.content {
                    Content::Text { text } if m.role == Role::User => {
                        *text = "</script><script>alert(1)</script> & <b>\"q\" 'a'\n```\nunclosed"
                            .into();
                    }
                    Content::ToolResult { output, .. } => {
                        *output = serde_json::json!({
                            "output": "before\n```rust\nfn x() {}\n```\n```` four\nafter"
                        });
                    }
                    _ => {}
                }
            }
        }
    }
    session
}

#[test]
fn html_escapes_hostile_text() {
    let html = export("html", &hostile_session());
    assert!(!html.contains("<script"), "no script element");
    assert!(!html.contains("<b>"));
    assert!(html.contains(
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;&quot;q&quot; &#39;a&#39;"
    ));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy"));
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );
}

#[test]
fn markdown_fences_hold_backticks() {
    let md = export("markdown", &hostile_session());
    let inner = "before\n```rust\nfn x() {}\n```\n```` four\nafter\n";
    let fenced = format!("`````\n{inner}`````\n");
    assert!(
        md.contains(&fenced),
        "result fenced with five backticks:\n{md}"
    );
    // A fence left open by a message is closed right after it.
    assert!(md.contains("```\nunclosed\n```\n"));
    // Outside fences, every fence opened is closed: count fence lines per length.
    let mut open: Option<usize> = None;
    for line in md.lines() {
        let n = line.chars().take_while(|&c| c == '`').count();
        if n >= 3 {
            match open {
                None => open = Some(n),
                Some(o) if n >= o && line[n..].trim().is_empty() => open = None,
                _ => {}
            }
        }
    }
    assert_eq!(open, None, "a fence is left open");
}

#[test]
fn output_is_deterministic() {
    for (fmt, file) in all_fixtures() {
        let session = read(fmt, file);
        for to in ["markdown", "html"] {
            let a = format(to)
                .write(&session, &WriteOptions::default())
                .unwrap();
            let b = format(to)
                .write(&session.clone(), &WriteOptions::default())
                .unwrap();
            assert_eq!(a.bytes, b.bytes, "{fmt}/{file} {to}");
        }
    }
}

#[test]
fn exports_are_write_only() {
    for to in ["markdown", "html"] {
        let f = format(to);
        assert_eq!(f.name(), to);
        assert_eq!(f.tool(), "export");
        assert!(!f.is_jsonl());
        assert_eq!(f.detect(None, b"# hello\n<html>"), 0);
        assert!(f.keys(b"{}").is_none());
        let err = f
            .read(&Input {
                name: "x.md",
                path: None,
                bytes: b"# hi",
            })
            .unwrap_err();
        assert!(err.message.contains("write"), "{}", err.message);
    }
}

#[test]
fn empty_session_exports() {
    let session = read("qwen-jsonl", "empty.jsonl");
    for to in ["markdown", "html"] {
        let (doc, written) = export_with(to, &session, &WriteOptions::default());
        assert!(!doc.is_empty());
        assert!(written.losses.is_empty());
    }
}

#[test]
fn snapshot_markdown_branches() {
    insta::assert_snapshot!(export("markdown", &read("qwen-jsonl", "branches.jsonl")));
}

#[test]
fn snapshot_markdown_tools() {
    insta::assert_snapshot!(export("markdown", &read("qwen-jsonl", "tools.jsonl")));
}

#[test]
fn snapshot_html_thoughts() {
    insta::assert_snapshot!(export("html", &read("gemini-json", "thoughts.json")));
}

#[test]
fn snapshot_markdown_notices_and_media() {
    let notices = export("markdown", &read("gemini-json", "notices.json"));
    let media = export("markdown", &read("gemini-json", "every-part.json"));
    insta::assert_snapshot!(format!("{notices}\n\n=====\n\n{media}"));
}

fn node(id: &str, parent: Option<&str>, body: Body) -> sessiontool::model::Node {
    sessiontool::model::Node {
        id: id.into(),
        parent: parent.map(Into::into),
        timestamp: None,
        body,
        extra: Default::default(),
        origin: None,
    }
}

fn say(role: Role, text: &str) -> Body {
    Body::Message(sessiontool::model::Message::new(
        role,
        vec![Part::text(text)],
    ))
}

/// Orphans, parent cycles and events: nothing is dropped.
#[test]
fn odd_trees_and_events_lose_nothing() {
    use sessiontool::model::Event;
    let session = Session {
        nodes: vec![
            node("a", None, say(Role::User, "root text")),
            node(
                "b",
                Some("a"),
                Body::Event(Event::Compaction {
                    summary: Some("summary of <old> stuff".into()),
                    tokens_before: Some(1200),
                    first_kept: None,
                    data: Value::Null,
                }),
            ),
            node(
                "c",
                Some("b"),
                Body::Event(Event::ModelChange {
                    provider: Some("openai".into()),
                    model: Some("gpt-5".into()),
                    data: Value::Null,
                }),
            ),
            node("d", Some("e"), say(Role::Assistant, "cycle one")),
            node("e", Some("d"), say(Role::Assistant, "cycle two")),
            node("f", Some("missing"), say(Role::User, "orphan text")),
            node(
                "g",
                Some("c"),
                Body::Event(Event::Custom {
                    kind: "mode_switch".into(),
                    data: serde_json::json!({"mode": "yolo"}),
                }),
            ),
            node(
                "h",
                Some("g"),
                Body::Event(Event::Title {
                    title: Some("My title".into()),
                    data: Value::Null,
                }),
            ),
        ],
        ..Default::default()
    };
    for to in ["markdown", "html"] {
        let (doc, written) = export_with(to, &session, &WriteOptions::default());
        assert!(written.losses.is_empty(), "{to}");
        // Markdown escapes `_` and `<` in italic event lines.
        let doc = if to == "markdown" {
            doc.replace('\\', "")
        } else {
            doc
        };
        for text in [
            "root text",
            "cycle one",
            "cycle two",
            "orphan text",
            "1200 tokens before",
            "gpt-5",
            "mode_switch",
            "yolo",
            "My title",
        ] {
            assert!(doc.contains(text), "{to}: {text:?} missing");
        }
        let summary = if to == "html" {
            "summary of &lt;old&gt; stuff"
        } else {
            "summary of <old> stuff"
        };
        assert!(doc.contains(summary), "{to}");
        assert!(doc.contains("Nodes on no branch"), "{to}");
        assert!(
            doc.contains("History before this branch is missing"),
            "{to}"
        );
    }
}
