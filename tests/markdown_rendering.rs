//! Markdown exports rendered by a real CommonMark implementation (pulldown-cmark, as GitHub's
//! and most renderers read CommonMark): message text shows as the text it is (issue 16, item
//! 3). Raw HTML in a prompt (`<audio>`) stays visible text instead of becoming an element, a
//! `</details>` in a thought does not close its fold, entity references read as written,
//! while the Markdown the messages were written in (emphasis, lists, code) still renders.

use pulldown_cmark::{Options, Parser, html};
use serde_json::json;

/// A Qwen Code session: a user prompt and a reply with a thought, each part `texts[i]`.
fn session(prompt: &str, thought: &str, reply: &str) -> Vec<u8> {
    let record = |uuid: &str, parent: Option<&str>, kind: &str, role: &str, parts| {
        json!({
            "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
            "timestamp": "2025-12-06T10:30:00.000Z", "type": kind, "cwd": "/w/app",
            "message": {"role": role, "parts": parts},
        })
        .to_string()
    };
    let lines = [
        record("u1", None, "user", "user", json!([{"text": prompt}])),
        record(
            "u2",
            Some("u1"),
            "assistant",
            "model",
            json!([{"text": thought, "thought": true}, {"text": reply}]),
        ),
    ];
    lines.join("\n").into_bytes()
}

fn exported(prompt: &str, thought: &str, reply: &str) -> String {
    let c = sessiontool::convert_bytes(&session(prompt, thought, reply), None, "markdown")
        .expect("converts");
    String::from_utf8(c.bytes).unwrap()
}

/// The HTML a CommonMark renderer (with GitHub's table, strikethrough and task-list
/// extensions) makes of it.
fn rendered(markdown: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = String::new();
    html::push_html(&mut out, Parser::new_ext(markdown, options));
    out
}

#[test]
fn raw_html_in_a_message_is_shown_as_text() {
    let md = exported(
        "How do I use the <audio> element? And <b>this</b>, <!-- a comment -->, &amp; &#60;x&#62;.",
        "thinking",
        "<div align=\"center\">\n<img src=x onerror=alert(1)>\n</div>\n\nDone.",
    );
    let html = rendered(&md);
    for raw in ["<audio", "<b>this", "<!--", "<img", "<div align"] {
        assert!(
            !html.contains(raw),
            "{raw} became HTML:\n{html}\n--- from:\n{md}"
        );
    }
    for shown in [
        "the &lt;audio&gt; element",
        "&lt;b&gt;this&lt;/b&gt;",
        "&lt;!-- a comment --&gt;",
        // The references as they were typed, not the characters they name.
        "&amp;amp; &amp;#60;x&amp;#62;",
        "&lt;img src=x onerror=alert(1)&gt;",
    ] {
        assert!(
            html.contains(shown),
            "{shown} is not shown:\n{html}\n--- from:\n{md}"
        );
    }
    assert!(!html.contains("\\&lt;"), "no backslash is seen:\n{html}");
}

#[test]
fn a_thought_cannot_close_its_fold_and_markdown_still_renders() {
    let md = exported(
        "Make `<audio>` **loud**:\n\n- one\n- two\n\n```html\n<audio src=\"a.mp3\"></audio>\n```",
        "Let me think. </details>\n\nStill thinking about <summary>.",
        "| tag | use |\n|---|---|\n| <audio> | sound |\n\n~~old~~ new",
    );
    let html = rendered(&md);
    let opened = html.matches("<details>").count();
    assert_eq!(opened, 1, "{html}");
    assert_eq!(html.matches("</details>").count(), opened, "{html}");
    assert!(html.contains("Let me think. &lt;/details&gt;"), "{html}");
    // The Markdown the message was written in renders as Markdown.
    assert!(html.contains("<strong>loud</strong>"), "{html}");
    assert!(html.contains("<li>one</li>"), "{html}");
    assert!(html.contains("<del>old</del>"), "{html}");
    assert!(html.contains("<td>&lt;audio&gt;</td>"), "{html}");
    // Code keeps its text exactly: no backslash.
    assert!(html.contains("<code>&lt;audio&gt;</code>"), "{html}");
    assert!(
        html.contains("&lt;audio src=\"a.mp3\"&gt;&lt;/audio&gt;\n</code></pre>"),
        "{html}"
    );
}
