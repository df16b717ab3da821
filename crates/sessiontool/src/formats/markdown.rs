//! `markdown`: a write-only export of a session as one Markdown document, for reading, sharing
//! or pasting into an issue. The head branch comes first, message by message (role and time as
//! a heading, text as it was written, thoughts folded, each tool call followed by its result),
//! then every other branch from the point where it leaves what was already shown.
//!
//! Anything that is not the messages' own Markdown (tool arguments and results, code, JSON) is
//! fenced with a fence longer than any backtick run inside it, so no content can end it early.

use std::fmt::Write as _;

use super::export::{
    self, Block, Detail, Exporter, Head, Item, Render, ResultBlock, Section, SectionKind,
};

mod as_text;

pub struct Markdown;

impl Exporter for Markdown {
    const NAME: &'static str = "markdown";
    const DESCRIPTION: &'static str = "Markdown document for reading and sharing (export only: all branches, tool calls with results)";
    const EXTENSIONS: &'static [&'static str] = &[".md", ".markdown"];
    const THIS: &'static Self = &Markdown;

    fn renderer() -> Box<dyn Render> {
        Box::new(Printer)
    }
}

/// Prints a session as Markdown, piece by piece.
struct Printer;

/// The heading level of items: under a section heading when there are other branches.
fn item_level(sections: usize) -> &'static str {
    if sections > 1 { "####" } else { "###" }
}

impl Render for Printer {
    fn head(&mut self, head: &Head, out: &mut String) {
        let _ = writeln!(out, "# {}\n", inline(&head.title));
        for (label, value) in &head.facts {
            let _ = writeln!(out, "- **{label}:** {}", code_span(value));
        }
        if !head.facts.is_empty() {
            out.push('\n');
        }
        if let Some(s) = &head.summary {
            let _ = writeln!(out, "> **Summary:** {}\n", inline(s));
        }
    }

    fn section(&mut self, section: &Section, sections: usize, out: &mut String) {
        let others = sections.saturating_sub(1);
        match &section.kind {
            SectionKind::Main { missing_parent } => {
                if others > 0 {
                    let _ = writeln!(out, "## Main branch\n");
                }
                if let Some(p) = missing_parent {
                    let _ = writeln!(
                        out,
                        "*History before this point is missing (parent {} is not in the session).*\n",
                        code_span(p)
                    );
                }
            }
            SectionKind::Branch {
                fork,
                missing_parent,
            } => {
                if section.number == 2 {
                    let _ = writeln!(out, "---\n\n## Other branches\n");
                }
                let _ = writeln!(
                    out,
                    "<a id=\"branch-{}\"></a>\n\n### Branch {} (ends at {})\n",
                    section.number,
                    section.number,
                    code_span(&section.leaf_id)
                );
                match (fork, missing_parent) {
                    (Some((anchor, what)), _) => {
                        let _ =
                            writeln!(out, "*Continues from the [{}](#{anchor}).*\n", inline(what));
                    }
                    (None, Some(p)) => {
                        let _ = writeln!(
                            out,
                            "*History before this branch is missing (parent {} is not in the session).*\n",
                            code_span(p)
                        );
                    }
                    (None, None) => {
                        let _ = writeln!(out, "*A separate conversation in the same file.*\n");
                    }
                }
            }
            SectionKind::Detached => {
                if section.number == 2 {
                    let _ = writeln!(out, "---\n\n## Other branches\n");
                }
                let _ = writeln!(
                    out,
                    "### Nodes on no branch\n\n*Their parent links form a cycle; shown in file order.*\n"
                );
            }
        }
    }

    fn item(&mut self, item: &Item, sections: usize, out: &mut String) {
        render_item(out, item_level(sections), item);
    }

    /// The document ends with one line break at most (what comes before it is held back until
    /// here: [`export::export`]).
    fn end(&mut self, out: &mut String) {
        while out.ends_with("\n\n") {
            out.pop();
        }
    }
}

fn render_item(out: &mut String, level: &str, item: &Item) {
    match item {
        Item::Message {
            role,
            model,
            timestamp,
            usage,
            blocks,
        } => {
            let _ = write!(out, "{level} {}", export::role_label(*role));
            if let Some(m) = model {
                let _ = write!(out, " ({})", inline(m));
            }
            if let Some(t) = timestamp {
                let _ = write!(out, " · {}", inline(t));
            }
            out.push_str("\n\n");
            if let Some(u) = usage {
                let _ = writeln!(out, "<sub>{}</sub>\n", inline(u));
            }
            for b in blocks {
                render_block(out, b);
            }
        }
        Item::Notice {
            role,
            timestamp,
            blocks,
        } => {
            let mut inner = String::new();
            for b in blocks {
                render_block(&mut inner, b);
            }
            let mut head = format!("**{}**", export::role_label(*role));
            if let Some(t) = timestamp {
                let _ = write!(head, " · {}", inline(t));
            }
            let _ = writeln!(out, "> {head}\n>");
            for line in inner.trim_end().lines() {
                if line.is_empty() {
                    out.push_str(">\n");
                } else {
                    let _ = writeln!(out, "> {line}");
                }
            }
            out.push('\n');
        }
        Item::Event {
            timestamp,
            text,
            detail,
        } => {
            let _ = write!(out, "*{}", inline(text));
            if let Some(t) = timestamp {
                let _ = write!(out, " · {}", inline(t));
            }
            out.push_str("*\n\n");
            match detail {
                Some(Detail::Text(summary, text)) => {
                    let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
                    markdown_text(out, text);
                    out.push_str("</details>\n\n");
                }
                Some(Detail::Json(summary, json)) => {
                    let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
                    fenced(out, "json", json);
                    out.push_str("</details>\n\n");
                }
                None => {}
            }
        }
        Item::Fork { anchor, sections } => {
            let links: Vec<String> = sections
                .iter()
                .map(|n| format!("[branch {n}](#branch-{n})"))
                .collect();
            let _ = writeln!(
                out,
                "<a id=\"{anchor}\"></a>\n\n> ⑂ **Branch point:** the conversation also continues from here in {}.\n",
                links.join(", ")
            );
        }
    }
}

fn render_block(out: &mut String, block: &Block) {
    match block {
        Block::Text(text) => markdown_text(out, text),
        Block::Thought {
            subject,
            text,
            encrypted,
        } => {
            out.push_str("<details><summary>Thinking");
            if let Some(s) = subject {
                let _ = write!(out, ": {}", html_inline(s));
            }
            out.push_str("</summary>\n\n");
            if !text.is_empty() {
                // A `</details>` in the thought is shown as text (as_text), so it cannot end
                // the fold early.
                markdown_text(out, text);
            }
            if let Some(n) = encrypted {
                let _ = writeln!(
                    out,
                    "*Encrypted reasoning ({}) not shown.*\n",
                    export::human_size(*n)
                );
            }
            out.push_str("</details>\n\n");
        }
        Block::Call {
            name,
            id,
            args,
            result,
        } => {
            let _ = write!(out, "**Tool call:** {}", code_span(name));
            if let Some(id) = id {
                let _ = write!(out, " <sub>{}</sub>", code_span(id));
            }
            out.push_str("\n\n");
            fenced(out, "json", args);
            if let Some(r) = result {
                render_result(out, r);
            }
        }
        Block::Result(r) => render_result(out, r),
        Block::Media { mime, bytes, uri } => {
            let mime = mime.as_deref().unwrap_or("unknown type");
            match (bytes, uri) {
                (Some(n), _) => {
                    let _ = writeln!(
                        out,
                        "*[Attachment: {}, {} of inline data not shown]*\n",
                        inline(mime),
                        export::human_size(*n)
                    );
                }
                (None, Some(u)) => {
                    let _ = writeln!(out, "*[Attachment: {}]* {}\n", inline(mime), code_span(u));
                }
                (None, None) => {
                    let _ = writeln!(out, "*[Attachment: {}, no data]*\n", inline(mime));
                }
            }
        }
        Block::Code { language, code } => {
            let lang = language.as_deref().map(info_string).unwrap_or_default();
            out.push_str("**Code:**\n\n");
            fenced(out, &lang, code);
        }
        Block::CodeResult { outcome, output } => {
            out.push_str("**Code result**");
            if let Some(o) = outcome {
                let _ = write!(out, " ({})", inline(o));
            }
            out.push_str(":\n\n");
            fenced(out, "", output.as_deref().unwrap_or(""));
        }
        Block::Other(json) => {
            out.push_str("**Unrecognised part:**\n\n");
            fenced(out, "json", json);
        }
    }
}

fn render_result(out: &mut String, r: &ResultBlock) {
    out.push_str(if r.is_error {
        "**Result (error)**"
    } else {
        "**Result**"
    });
    if let Some(n) = &r.name {
        let _ = write!(out, " of {}", code_span(n));
    }
    if let Some(s) = &r.status {
        let _ = write!(out, " · status {}", code_span(s));
    }
    out.push_str(":\n\n");
    fenced(out, "", &r.output);
    if let Some(d) = &r.display {
        out.push_str("<details><summary>Shown to the user</summary>\n\n");
        fenced(out, "", d);
        out.push_str("</details>\n\n");
    }
    for a in &r.attachments {
        render_block(out, a);
    }
}

/// Message text, as written (it is Markdown already) but for raw HTML and entity references,
/// which are shown as the characters they are ([`as_text`]), followed by a blank line. A code
/// fence the text leaves open is closed, so it cannot swallow the rest of the document.
fn markdown_text(out: &mut String, text: &str) {
    let text = text.trim_end_matches(['\n', '\r']);
    if text.is_empty() {
        return;
    }
    out.push_str(&as_text::shown_as_written(text));
    out.push('\n');
    if let Some(fence) = open_fence(text) {
        out.push_str(&fence);
        out.push('\n');
    }
    out.push('\n');
}

/// The fence a Markdown text leaves open at its end, if any (CommonMark: up to three spaces,
/// then three or more backticks or tildes; closed by at least as many of the same character).
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let rest = &line[indent..];
        let Some(c) = rest.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = rest.chars().take_while(|&x| x == c).count();
        if run < 3 {
            continue;
        }
        match open {
            None => {
                // A backtick fence's info string cannot hold a backtick.
                if c == '`' && rest[run..].contains('`') {
                    continue;
                }
                open = Some((c, run));
            }
            Some((oc, on)) if oc == c && run >= on && rest[run..].trim().is_empty() => {
                open = None;
            }
            Some(_) => {}
        }
    }
    open.map(|(c, n)| c.to_string().repeat(n))
}

/// `text` in a fenced code block whose fence is longer than any backtick run inside it.
fn fenced(out: &mut String, info: &str, text: &str) {
    let fence = "`".repeat((longest_run(text, '`') + 1).max(3));
    let _ = writeln!(out, "{fence}{info}");
    out.push_str(text);
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
}

fn longest_run(text: &str, c: char) -> usize {
    let mut best = 0;
    let mut cur = 0;
    for x in text.chars() {
        if x == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// An inline code span that holds any text (on one line).
fn code_span(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.starts_with(' ') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Text for a heading or an emphasised line: one line, Markdown and HTML characters escaped.
fn inline(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => s.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!' | '~' | '&' => {
                s.push('\\');
                s.push(c);
            }
            c => s.push(c),
        }
    }
    s
}

/// Text inside raw HTML (a `<summary>`), where Markdown escapes do not apply.
fn html_inline(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A fence info string: only the characters a language name uses.
fn info_string(lang: &str) -> String {
    lang.chars()
        .filter(|c| c.is_ascii_alphanumeric() || "+-_.#".contains(*c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_outgrows_backticks() {
        let mut out = String::new();
        fenced(&mut out, "", "a ```` b");
        assert!(out.starts_with("`````\n"));
        assert!(out.ends_with("\n`````\n\n"));
    }

    #[test]
    fn open_fences_are_closed() {
        assert_eq!(open_fence("x\n```rust\nfn main() {}"), Some("```".into()));
        assert_eq!(open_fence("```\na\n```"), None);
        assert_eq!(open_fence("~~~~\na\n~~~"), Some("~~~~".into()));
        assert_eq!(open_fence("``` a`b"), None);
    }

    #[test]
    fn code_spans_hold_backticks() {
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
    }
}
