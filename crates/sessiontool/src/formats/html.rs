//! `html`: a write-only export of a session as one self-contained HTML page (inline CSS, no
//! script, no external asset; a Content-Security-Policy forbids loading anything). Same layout
//! as `markdown`: the head branch first, then every other branch from where it leaves what was
//! already shown. Roles are colour-coded, thoughts and long details fold in `<details>`.
//!
//! Every piece of session text goes through `esc`, so hostile content (`</script>`, `<img
//! onerror>`) is shown as text, never run.

use std::fmt::Write as _;

use super::export::{
    self, Block, Detail, Exporter, Head, Item, Render, ResultBlock, Section, SectionKind,
};
use crate::model::Role;

pub struct Html;

impl Exporter for Html {
    const NAME: &'static str = "html";
    const DESCRIPTION: &'static str = "Self-contained HTML page for reading and sharing (export only: all branches, tool calls with results)";
    const EXTENSIONS: &'static [&'static str] = &[".html", ".htm"];
    const THIS: &'static Self = &Html;

    fn renderer() -> Box<dyn Render> {
        Box::new(Printer)
    }
}

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328;background:#fff;line-height:1.5}
h1{font-size:1.6rem;margin-bottom:.5rem}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2.5rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.9rem}
dl.facts dt{font-weight:600;color:#57606a}
dl.facts dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.summary{background:#f6f8fa;border-left:4px solid #8c959f;padding:.5rem 1rem}
.msg{border-left:4px solid #8c959f;border-radius:6px;margin:1rem 0;padding:.6rem 1rem;background:#f6f8fa}
.msg.user{border-color:#0969da;background:#ddf4ff}
.msg.assistant{border-color:#1a7f37;background:#f0fff4}
.msg.tool{border-color:#8250df;background:#fbefff}
.msg.system{border-color:#57606a;background:#eaeef2}
.msg.info{border-color:#0969da;background:#fff}
.msg.warning{border-color:#9a6700;background:#fff8c5}
.msg.error{border-color:#cf222e;background:#ffebe9}
.head{font-size:.85rem;color:#57606a;margin-bottom:.4rem}
.head .role{font-weight:700;color:#1f2328}
.usage{font-size:.75rem;color:#57606a}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.4rem 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.5rem;font-size:.85rem;margin:.3rem 0}
details{margin:.4rem 0}
details.thought{color:#57606a;font-style:italic}
details.thought .text{font-style:normal}
summary{cursor:pointer;font-size:.85rem;color:#57606a}
.call{border:1px solid #d0d7de;border-radius:6px;margin:.5rem 0;padding:.4rem .6rem;background:#fff}
.call .name,.result .name{font-family:ui-monospace,monospace;font-weight:600}
.result{margin-top:.4rem}
.result.error pre{border-color:#cf222e;background:#ffebe9}
.label{font-size:.8rem;font-weight:600;color:#57606a}
.label.error{color:#cf222e}
.media{font-size:.85rem;color:#57606a}
.event{font-style:italic;color:#57606a;font-size:.9rem;margin:.6rem 0}
.fork{border:1px dashed #9a6700;border-radius:6px;padding:.3rem .8rem;font-size:.9rem;background:#fff8c5}
.branch-note{font-style:italic;color:#57606a}
";

/// Prints a session as one HTML page, piece by piece.
struct Printer;

impl Render for Printer {
    fn head(&mut self, head: &Head, out: &mut String) {
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
        );
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        let _ = writeln!(out, "<title>{}</title>", esc(&head.title));
        let _ = writeln!(out, "<style>\n{CSS}</style>\n</head>\n<body>");
        let _ = writeln!(out, "<header>\n<h1>{}</h1>", esc(&head.title));
        if !head.facts.is_empty() {
            out.push_str("<dl class=\"facts\">\n");
            for (label, value) in &head.facts {
                let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(label), esc(value));
            }
            out.push_str("</dl>\n");
        }
        if let Some(s) = &head.summary {
            let _ = writeln!(
                out,
                "<p class=\"summary\"><strong>Summary:</strong> {}</p>",
                esc(s)
            );
        }
        out.push_str("</header>\n<main>\n");
    }

    fn section(&mut self, section: &Section, sections: usize, out: &mut String) {
        let others = sections.saturating_sub(1);
        let _ = writeln!(out, "<section id=\"branch-{}\">", section.number);
        match &section.kind {
            SectionKind::Main { missing_parent } => {
                if others > 0 {
                    out.push_str("<h2>Main branch</h2>\n");
                }
                if let Some(p) = missing_parent {
                    let _ = writeln!(
                        out,
                        "<p class=\"branch-note\">History before this point is missing (parent <code>{}</code> is not in the session).</p>",
                        esc(p)
                    );
                }
            }
            SectionKind::Branch {
                fork,
                missing_parent,
            } => {
                if section.number == 2 {
                    out.push_str("<h2>Other branches</h2>\n");
                }
                let _ = writeln!(
                    out,
                    "<h3>Branch {} <small>(ends at <code>{}</code>)</small></h3>",
                    section.number,
                    esc(&section.leaf_id)
                );
                match (fork, missing_parent) {
                    (Some((anchor, what)), _) => {
                        let _ = writeln!(
                            out,
                            "<p class=\"branch-note\">Continues from the <a href=\"#{}\">{}</a>.</p>",
                            esc(anchor),
                            esc(what)
                        );
                    }
                    (None, Some(p)) => {
                        let _ = writeln!(
                            out,
                            "<p class=\"branch-note\">History before this branch is missing (parent <code>{}</code> is not in the session).</p>",
                            esc(p)
                        );
                    }
                    (None, None) => {
                        out.push_str(
                            "<p class=\"branch-note\">A separate conversation in the same file.</p>\n",
                        );
                    }
                }
            }
            SectionKind::Detached => {
                if section.number == 2 {
                    out.push_str("<h2>Other branches</h2>\n");
                }
                out.push_str("<h3>Nodes on no branch</h3>\n<p class=\"branch-note\">Their parent links form a cycle; shown in file order.</p>\n");
            }
        }
    }

    fn item(&mut self, item: &Item, _sections: usize, out: &mut String) {
        render_item(out, item);
    }

    fn section_end(&mut self, out: &mut String) {
        out.push_str("</section>\n");
    }

    fn end(&mut self, out: &mut String) {
        out.push_str("</main>\n</body>\n</html>\n");
    }
}

fn role_class(role: Role) -> &'static str {
    role.as_str()
}

fn render_item(out: &mut String, item: &Item) {
    match item {
        Item::Message {
            role,
            model,
            timestamp,
            usage,
            blocks,
        } => message(
            out,
            *role,
            model.as_deref(),
            timestamp.as_deref(),
            usage.as_deref(),
            blocks,
        ),
        Item::Notice {
            role,
            timestamp,
            blocks,
        } => message(out, *role, None, timestamp.as_deref(), None, blocks),
        Item::Event {
            timestamp,
            text,
            detail,
        } => {
            out.push_str("<div class=\"event\">");
            out.push_str(&esc(text));
            if let Some(t) = timestamp {
                let _ = write!(out, " · <time>{}</time>", esc(t));
            }
            match detail {
                Some(Detail::Text(summary, text)) => {
                    let _ = write!(
                        out,
                        "<details><summary>{}</summary><div class=\"text\">{}</div></details>",
                        esc(summary),
                        esc(text)
                    );
                }
                Some(Detail::Json(summary, json)) => {
                    let _ = write!(
                        out,
                        "<details><summary>{}</summary><pre>{}</pre></details>",
                        esc(summary),
                        esc(json)
                    );
                }
                None => {}
            }
            out.push_str("</div>\n");
        }
        Item::Fork { anchor, sections } => {
            let links: Vec<String> = sections
                .iter()
                .map(|n| format!("<a href=\"#branch-{n}\">branch {n}</a>"))
                .collect();
            let _ = writeln!(
                out,
                "<p class=\"fork\" id=\"{}\">⑂ <strong>Branch point:</strong> the conversation also continues from here in {}.</p>",
                esc(anchor),
                links.join(", ")
            );
        }
    }
}

fn message(
    out: &mut String,
    role: Role,
    model: Option<&str>,
    timestamp: Option<&str>,
    usage: Option<&str>,
    blocks: &[Block],
) {
    let _ = write!(
        out,
        "<article class=\"msg {}\">\n<div class=\"head\"><span class=\"role\">{}</span>",
        role_class(role),
        export::role_label(role)
    );
    if let Some(m) = model {
        let _ = write!(out, " <span class=\"model\">{}</span>", esc(m));
    }
    if let Some(t) = timestamp {
        let _ = write!(out, " · <time>{}</time>", esc(t));
    }
    if let Some(u) = usage {
        let _ = write!(out, " <span class=\"usage\">{}</span>", esc(u));
    }
    out.push_str("</div>\n");
    for b in blocks {
        render_block(out, b);
    }
    out.push_str("</article>\n");
}

fn render_block(out: &mut String, block: &Block) {
    match block {
        Block::Text(text) => {
            let _ = writeln!(out, "<div class=\"text\">{}</div>", esc(text.trim_end()));
        }
        Block::Thought {
            subject,
            text,
            encrypted,
        } => {
            out.push_str("<details class=\"thought\"><summary>Thinking");
            if let Some(s) = subject {
                let _ = write!(out, ": {}", esc(s));
            }
            out.push_str("</summary>");
            if !text.is_empty() {
                let _ = write!(out, "<div class=\"text\">{}</div>", esc(text.trim_end()));
            }
            if let Some(n) = encrypted {
                let _ = write!(
                    out,
                    "<p class=\"media\">Encrypted reasoning ({}) not shown.</p>",
                    esc(&export::human_size(*n))
                );
            }
            out.push_str("</details>\n");
        }
        Block::Call {
            name,
            id,
            args,
            result,
        } => {
            let _ = write!(
                out,
                "<div class=\"call\"><div><span class=\"label\">Tool call</span> <span class=\"name\">{}</span>",
                esc(name)
            );
            if let Some(id) = id {
                let _ = write!(out, " <small><code>{}</code></small>", esc(id));
            }
            let _ = write!(out, "</div><pre>{}</pre>", esc(args));
            if let Some(r) = result {
                render_result(out, r);
            }
            out.push_str("</div>\n");
        }
        Block::Result(r) => {
            out.push_str("<div class=\"call\">");
            render_result(out, r);
            out.push_str("</div>\n");
        }
        Block::Media { mime, bytes, uri } => {
            let mime = esc(mime.as_deref().unwrap_or("unknown type"));
            match (bytes, uri) {
                (Some(n), _) => {
                    let _ = writeln!(
                        out,
                        "<p class=\"media\">[Attachment: {mime}, {} of inline data not shown]</p>",
                        esc(&export::human_size(*n))
                    );
                }
                (None, Some(u)) => {
                    let _ = writeln!(
                        out,
                        "<p class=\"media\">[Attachment: {mime}] <code>{}</code></p>",
                        esc(u)
                    );
                }
                (None, None) => {
                    let _ = writeln!(out, "<p class=\"media\">[Attachment: {mime}, no data]</p>");
                }
            }
        }
        Block::Code { language, code } => {
            let _ = writeln!(
                out,
                "<div><span class=\"label\">Code{}</span><pre>{}</pre></div>",
                language
                    .as_deref()
                    .map(|l| format!(" ({})", esc(l)))
                    .unwrap_or_default(),
                esc(code)
            );
        }
        Block::CodeResult { outcome, output } => {
            let _ = writeln!(
                out,
                "<div><span class=\"label\">Code result{}</span><pre>{}</pre></div>",
                outcome
                    .as_deref()
                    .map(|o| format!(" ({})", esc(o)))
                    .unwrap_or_default(),
                esc(output.as_deref().unwrap_or(""))
            );
        }
        Block::Other(json) => {
            let _ = writeln!(
                out,
                "<div><span class=\"label\">Unrecognised part</span><pre>{}</pre></div>",
                esc(json)
            );
        }
    }
}

fn render_result(out: &mut String, r: &ResultBlock) {
    let _ = write!(
        out,
        "<div class=\"result{}\"><span class=\"label{}\">{}</span>",
        if r.is_error { " error" } else { "" },
        if r.is_error { " error" } else { "" },
        if r.is_error {
            "Result (error)"
        } else {
            "Result"
        }
    );
    if let Some(n) = &r.name {
        let _ = write!(out, " <span class=\"name\">{}</span>", esc(n));
    }
    if let Some(s) = &r.status {
        let _ = write!(out, " <small>status {}</small>", esc(s));
    }
    let _ = write!(out, "<pre>{}</pre>", esc(&r.output));
    if let Some(d) = &r.display {
        let _ = write!(
            out,
            "<details><summary>Shown to the user</summary><pre>{}</pre></details>",
            esc(d)
        );
    }
    for a in &r.attachments {
        render_block(out, a);
    }
    out.push_str("</div>");
}

/// HTML-escapes text for element content and quoted attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_all_five() {
        assert_eq!(
            esc("</script><script>a&b\"c'd"),
            "&lt;/script&gt;&lt;script&gt;a&amp;b&quot;c&#39;d"
        );
    }
}
