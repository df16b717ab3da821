//! Message text for a Markdown export: its Markdown kept (emphasis, lists, code, links), but
//! what a renderer would take as raw HTML or an entity reference shown as the characters
//! written. A prompt about "the `<audio>` element" must not become an `<audio>` element, a
//! `</details>` must not close the fold a thought is in, and `&amp;` must read `&amp;`.
//!
//! A CommonMark parser (pulldown-cmark) finds the HTML and the entity references; each `<`
//! that starts HTML and each `&` that starts a reference gets a backslash, CommonMark's escape
//! for ASCII punctuation, which renders as the character itself. Code spans and code blocks
//! are left alone: nothing in them is HTML, and a backslash there would show.

use std::borrow::Cow;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The extensions renderers such as GitHub's turn on (tables, strikethrough, task lists):
/// HTML in a table cell is found too.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// `text` with every raw HTML `<` and every entity reference's `&` escaped.
pub(crate) fn shown_as_written(text: &str) -> Cow<'_, str> {
    if !text.contains(['<', '&']) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut escape_at: Vec<usize> = Vec::new();
    let mut in_code_block = 0usize;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code_block += 1,
            Event::End(TagEnd::CodeBlock) => in_code_block = in_code_block.saturating_sub(1),
            Event::Html(_) | Event::InlineHtml(_) => {
                escape_at.extend(range.filter(|&i| bytes[i] == b'<'));
            }
            // An entity reference is read as the character it names: the source says more
            // than the text it gives.
            Event::Text(shown)
                if in_code_block == 0
                    && bytes.get(range.start) == Some(&b'&')
                    && *shown != text[range.clone()] =>
            {
                escape_at.push(range.start);
            }
            _ => {}
        }
    }
    if escape_at.is_empty() {
        return Cow::Borrowed(text);
    }
    escape_at.sort_unstable();
    escape_at.dedup();
    let mut out = String::with_capacity(text.len() + escape_at.len());
    let mut from = 0;
    for at in escape_at {
        out.push_str(&text[from..at]);
        out.push('\\');
        from = at;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_and_entities_get_a_backslash_and_code_does_not() {
        assert_eq!(
            shown_as_written("Use the <audio> element & `<audio>` &amp; a < b"),
            "Use the \\<audio> element & `<audio>` \\&amp; a < b"
        );
        assert_eq!(
            shown_as_written("<div>\nx\n</div>\n\n```html\n<div>\n```\n"),
            "\\<div>\nx\n\\</div>\n\n```html\n<div>\n```\n"
        );
        assert!(matches!(
            shown_as_written("plain **bold**"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            shown_as_written("a < b and c & d"),
            Cow::Borrowed(_)
        ));
    }
}
