use serde_json::json;

use super::*;
use crate::model::{Extra, Meta};

fn node(id: &str, parent: Option<&str>, role: Role, parts: Vec<Part>) -> Node {
    Node {
        id: id.into(),
        parent: parent.map(Into::into),
        timestamp: None,
        body: Body::Message(Message::new(role, parts)),
        extra: Extra::new(),
        origin: None,
    }
}

/// Text of `tokens` estimated tokens (4 bytes each).
fn text(tokens: usize) -> Part {
    Part::text("abcd".repeat(tokens))
}

fn call(id: &str) -> Part {
    Part::new(Content::ToolCall {
        id: Some(id.into()),
        name: "Bash".into(),
        args: json!({"command": "ls"}),
        extra: Extra::new(),
    })
}

fn result(id: &str) -> Part {
    Part::new(Content::ToolResult {
        call_id: Some(id.into()),
        name: None,
        output: json!("abcd".repeat(10)),
        is_error: false,
        status: None,
        display: None,
        extra: Extra::new(),
    })
}

/// A linear session: each `(id, role, parts)` chained after the one before.
fn chain(items: Vec<(&str, Role, Vec<Part>)>) -> Session {
    let mut nodes = Vec::new();
    let mut parent: Option<String> = None;
    for (id, role, parts) in items {
        nodes.push(node(id, parent.as_deref(), role, parts));
        parent = Some(id.to_string());
    }
    Session {
        meta: Meta::default(),
        nodes,
    }
}

fn ids(s: &Session) -> Vec<&str> {
    s.nodes.iter().map(|n| n.id.as_str()).collect()
}

/// Three turns of 100 tokens of prompt and reply each, after a first prompt of 50.
fn three_turns() -> Session {
    chain(vec![
        ("p0", Role::User, vec![text(50)]),
        ("a0", Role::Assistant, vec![text(96)]),
        ("p1", Role::User, vec![text(46)]),
        ("a1", Role::Assistant, vec![text(46)]),
        ("p2", Role::User, vec![text(46)]),
        ("a2", Role::Assistant, vec![text(46)]),
    ])
}

#[test]
fn the_estimate_counts_bytes_media_calls_and_framing() {
    let n = node(
        "x",
        None,
        Role::Assistant,
        vec![
            Part::text("abcde"), // 2
            Part::new(Content::Media {
                mime_type: Some("image/png".into()),
                data: Some("A".repeat(1_000_000)),
                uri: None,
                extra: Extra::new(),
            }), // 1,600 whatever its size
            call("c"),           // "Bash" 1 + {"command":"ls"} 16 bytes = 4
        ],
    );
    assert_eq!(node_tokens(&n), MESSAGE_TOKENS + 2 + MEDIA_TOKENS + 1 + 4);
    let notice = node("n", None, Role::Info, vec![text(500)]);
    assert_eq!(node_tokens(&notice), 0, "the model never sees a notice");
}

#[test]
fn a_session_that_fits_is_not_changed() {
    let mut s = three_turns();
    let before = s.clone();
    let mut losses = LossReport::default();
    let b = fit(&mut s, 10_000, None, &mut losses).unwrap();
    assert_eq!(s, before);
    assert!(losses.is_empty());
    assert_eq!((b.estimated, b.kept, b.turns, b.left_out), (354, 354, 3, 0));
}

#[test]
fn the_first_prompt_and_the_newest_turns_that_fit_are_kept_and_joined() {
    let mut s = three_turns();
    let mut losses = LossReport::default();
    // 54 (first prompt) + 100 + 100 = 254 fits; adding the first reply (100) would not.
    let b = fit(&mut s, 260, None, &mut losses).unwrap();
    assert_eq!(ids(&s), ["p0", "p1", "a1", "p2", "a2"]);
    assert_eq!(
        s.nodes[1].parent.as_deref(),
        Some("p0"),
        "joined over the gap"
    );
    assert_eq!(s.nodes[2].parent.as_deref(), Some("p1"));
    assert_eq!(s.meta.head.as_deref(), Some("a2"));
    assert_eq!(
        b,
        Budget {
            max_tokens: 260,
            estimated: 354,
            kept: 254,
            turns: 3,
            turns_kept: 2,
            left_out: 1,
            other_branches: 0,
            outside_conversation: 0,
            cut_within_turn: false,
        }
    );
    let l = &losses.losses[0];
    assert_eq!((l.code, l.count), ("max-tokens", 1));
    assert!(l.message.contains("254 of 354"), "{}", l.message);
    // One token fewer than the two newest turns need: only the newest is kept.
    let mut s = three_turns();
    let b = fit(&mut s, 253, None, &mut LossReport::default()).unwrap();
    assert_eq!(ids(&s), ["p0", "p2", "a2"]);
    assert_eq!((b.turns_kept, b.left_out, b.kept), (1, 3, 154));
}

#[test]
fn a_call_is_never_parted_from_its_result() {
    // The result of c1 comes with the prompt of the last turn (one user message holding the
    // result and the new prompt, as Claude Code writes it): cutting at that prompt would keep
    // a result whose call is gone, so the cut falls after it.
    let mut s = chain(vec![
        ("p0", Role::User, vec![text(10)]),
        ("a0", Role::Assistant, vec![text(200), call("c1")]),
        ("p1", Role::User, vec![result("c1"), text(20)]),
        ("a1", Role::Assistant, vec![text(20)]),
        ("p2", Role::User, vec![text(20)]),
        ("a2", Role::Assistant, vec![text(20)]),
    ]);
    let b = fit(&mut s, 150, None, &mut LossReport::default()).unwrap();
    assert_eq!(ids(&s), ["p0", "p2", "a2"]);
    assert_eq!(b.turns_kept, 1);
}

#[test]
fn a_turn_too_long_to_keep_whole_keeps_its_prompt_and_newest_messages_with_their_calls() {
    // One prompt, then a long agent run: ten calls, each answered.
    let mut items = vec![
        ("p0", Role::User, vec![text(20)]),
        ("a0", Role::Assistant, vec![text(20)]),
        ("p1", Role::User, vec![text(20)]),
    ];
    let names: Vec<(String, String, String)> = (0..10)
        .map(|i| (format!("a{i}x"), format!("t{i}"), format!("c{i}")))
        .collect();
    for (a, t, c) in &names {
        items.push((a, Role::Assistant, vec![text(30), call(c)]));
        items.push((t, Role::Tool, vec![result(c)]));
    }
    items.push(("end", Role::Assistant, vec![text(10)]));
    let mut s = chain(items);
    let mut losses = LossReport::default();
    let b = fit(&mut s, 200, None, &mut losses).unwrap();
    assert!(b.cut_within_turn);
    assert!(b.kept <= 200, "{b:?}");
    let kept = ids(&s);
    assert_eq!(&kept[..2], ["p0", "p1"], "both prompts kept");
    // The newest messages follow, from an assistant message on, every result with its call.
    assert!(kept[2].ends_with('x'), "{kept:?}");
    assert_eq!(*kept.last().unwrap(), "end");
    assert!(crate::check::document::unanswered_calls(&s).is_empty());
    let results: Vec<&str> = s
        .nodes
        .iter()
        .flat_map(|n| n.message().unwrap().parts.iter())
        .filter_map(|p| match &p.content {
            Content::ToolResult { call_id, .. } => call_id.as_deref(),
            _ => None,
        })
        .collect();
    let calls: Vec<&str> = s
        .nodes
        .iter()
        .flat_map(|n| n.message().unwrap().parts.iter())
        .filter_map(|p| match &p.content {
            Content::ToolCall { id, .. } => id.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(
        results, calls,
        "every kept result has its call and the reverse"
    );
    assert!(!calls.is_empty() && calls.len() < 10, "{calls:?}");
    assert_eq!(s.nodes[2].parent.as_deref(), Some("p1"));
    assert_eq!(losses.losses[0].code, "max-tokens");
}

#[test]
fn a_budget_too_small_for_the_first_prompt_changes_nothing() {
    let mut s = three_turns();
    let before = s.clone();
    let mut losses = LossReport::default();
    let e = fit(&mut s, 40, None, &mut losses).unwrap_err();
    assert!(e.contains("first prompt alone is about 54 tokens"), "{e}");
    assert_eq!(s, before);
    assert!(losses.is_empty());
    let e = fit(&mut s, 80, None, &mut losses).unwrap_err();
    assert!(e.contains("do not fit"), "{e}");
    assert_eq!(s, before);
}

#[test]
fn other_branches_are_left_out_when_cutting_and_counted() {
    let mut s = three_turns();
    // A side branch off a0 that is not the head.
    s.nodes
        .insert(2, node("side", Some("a0"), Role::User, vec![text(5)]));
    s.meta.head = Some("a2".into());
    let mut losses = LossReport::default();
    let b = fit(&mut s, 260, None, &mut losses).unwrap();
    assert_eq!(ids(&s), ["p0", "p1", "a1", "p2", "a2"]);
    assert_eq!(b.other_branches, 1);
    let codes: Vec<(&str, usize)> = losses.losses.iter().map(|l| (l.code, l.count)).collect();
    assert_eq!(codes, [("max-tokens", 1), ("other-branches", 1)]);
}

#[test]
fn safe_ends_follow_every_pair() {
    // Positions: 0 call c, 1 result c, 2 call d, 3 result d.
    let nodes = [
        node("0", None, Role::Assistant, vec![call("c")]),
        node("1", None, Role::Tool, vec![result("c")]),
        node("2", None, Role::Assistant, vec![call("d")]),
        node("3", None, Role::Tool, vec![result("d")]),
    ];
    let refs: Vec<&Node> = nodes.iter().collect();
    let pairs = Pairs::of(&refs);
    // A gap from 0: ends 0 (empty), 2 (drops c's pair) and 4 are safe; 1 and 3 part a pair.
    assert_eq!(
        pairs.safe_ends(0, 4, |_| true),
        [true, false, true, false, true]
    );
    // A gap from 1 with 0 kept: c's result must stay, so only the empty gap is safe.
    assert_eq!(pairs.safe_ends(1, 4, |_| true), [true, false, false, false]);
    // ... with 0 left out: c's result must go too.
    assert_eq!(pairs.safe_ends(1, 4, |_| false), [false, true, false, true]);
}
