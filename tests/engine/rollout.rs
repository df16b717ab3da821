//! A Codex rollout written back as a rollout through the two passes (each line copied, the
//! metadata line as the writer writes it), and written as Claude Code entries (node by node),
//! against the whole-session path: every fixture and
//! real sample forced through the Codex reader, with the metadata left alone and changed;
//! generated rollouts with the metadata anywhere or nowhere, twice, unshaped; lines of every
//! type Codex writes, of unknown types, not objects, not `{timestamp, type, payload}`, that
//! serde_json refuses (a lone surrogate escape, nesting past its limit), in key orders and
//! spacing the writer would not give; and the records layer's damage (torn, glued and invalid
//! lines, invalid UTF-8, NUL padding, CRLF, a BOM, no final newline).

use std::path::{Path, PathBuf};

use sessiontool::model::Meta;

use super::{Rng, agree, files, fmt, no_adjust, options, push_line, seeds, targets};

/// A metadata change a conversion may make, named.
type Adjustment = (&'static str, fn(&mut Meta));

/// The metadata changes a conversion may make (a move to another project, an id given).
fn adjustments() -> [Adjustment; 4] {
    [
        ("none", no_adjust),
        ("moved", |m| m.cwd = Some("/w/moved".into())),
        ("renamed", |m| m.id = Some("not-a-uuid".into())),
        ("titled", |m| m.title = Some("A title".into())),
    ]
}

/// Each file forced through the Codex reader (and detected), written into each target with
/// each adjustment; how many the engine took.
fn check_rollouts(paths: &[PathBuf]) -> usize {
    let codex = fmt("codex-jsonl");
    let mut taken = 0;
    for path in paths {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        for from in [None, Some(codex)] {
            for to in targets() {
                for (_, adjust) in adjustments() {
                    if agree(&name, &bytes, from, fmt(to), &options(None), &adjust) {
                        taken += 1;
                    }
                }
            }
        }
    }
    taken
}

fn codex_files(root: &Path) -> Vec<PathBuf> {
    files(root)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("codex"))
        .collect()
}

#[test]
fn every_fixture_rollout_is_written_back_as_the_whole_session_path_writes_it() {
    // Every fixture: those of other formats too, forced through the Codex reader.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let all = files(&root);
    assert!(codex_files(&root).len() >= 7);
    let taken = check_rollouts(&all);
    // The rollouts of today's layout are taken, detected and forced, with every adjustment.
    let current = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("/codex-jsonl/"))
        .count();
    assert!(
        taken >= current * 2 * targets().len() * adjustments().len(),
        "{taken} taken"
    );
}

#[test]
fn every_real_sample_rollout_is_written_back_as_the_whole_session_path_writes_it() {
    let Some(root) = super::common::prerequisite::shared("") else {
        return;
    };
    let all = codex_files(&root);
    assert!(!all.is_empty(), "no Codex sample under {}", root.display());
    let taken = check_rollouts(&all);
    assert!(taken >= all.len(), "{taken} taken of {}", all.len());
}

#[test]
fn only_nodes_made_for_the_rollout_writer_keep_their_line() {
    // A node's line (its origin) is read only by this format's writer: the nodes made for
    // anything else do not copy it; those made for it keep it as the whole reader does (the
    // `session_meta` line after the line of the node before it, when it was not first).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/codex-jsonl/tools.jsonl");
    let source = sessiontool::engine::FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
    let name = path.display().to_string();
    let view = sessiontool::engine::view::View::open(&name, Some(&path), &source, None)
        .unwrap()
        .expect("the view reads a rollout");
    let all: Vec<u32> = (0..view.len() as u32).collect();
    let whole = session(&std::fs::read(&path).unwrap());
    assert!(whole.nodes.iter().all(|n| n.origin.is_some()));
    for made_for in [
        sessiontool::engine::MadeFor::Anyone,
        sessiontool::engine::MadeFor::Counting,
        sessiontool::engine::MadeFor::OwnWriter,
    ] {
        let mut kept = 0;
        view.each_node(&all, made_for, |i, node| {
            kept += usize::from(node.origin.is_some());
            if node.origin.is_some() {
                assert_eq!(node.origin, whole.nodes[i as usize].origin);
            }
            Ok(())
        })
        .unwrap();
        let own = made_for == sessiontool::engine::MadeFor::OwnWriter;
        assert_eq!(kept, if own { all.len() } else { 0 }, "{made_for:?}");
    }
}

/// The whole reader's session of `bytes`.
fn session(bytes: &[u8]) -> sessiontool::model::Session {
    fmt("codex-jsonl")
        .read(&sessiontool::formats::Input {
            name: "x",
            path: None,
            bytes,
        })
        .unwrap()
        .session
}

const ID: &str = "019435fa-9c55-7643-b5ab-c684d3a3ca39";

/// A generated rollout (see the module's comment).
pub(super) fn rollout(seed: u64) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(0xA24B_AED4_963E_E407) | 1);
    let mut out = Vec::new();
    if r.chance(5) {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    let crlf = r.chance(8);
    let n = 1 + r.below(40);
    // Where the metadata line stands: first, later, nowhere.
    let meta_at = match r.below(10) {
        0 => None,
        1 | 2 => Some(r.below(n)),
        _ => Some(0),
    };
    for k in 0..n {
        let ts = format!("2025-01-0{}T00:00:{:02}.000Z", 1 + r.below(9), k % 60);
        let line = if meta_at == Some(k) || r.chance(3) {
            meta(&mut r, &ts)
        } else {
            item(&mut r, &ts, k)
        };
        push_line(&mut r, &mut out, &line, k + 1 == n, crlf);
    }
    out
}

/// A `session_meta` line, mostly as Codex writes it.
fn meta(r: &mut Rng, ts: &str) -> String {
    let id = if r.chance(85) { ID } else { "not-a-uuid" };
    match r.below(12) {
        // Its payload's keys in another order, with a field the model does not know.
        0 => format!(
            r#"{{"timestamp":"{ts}","type":"session_meta","payload":{{"cwd":"/w/app","id":"{id}","originator":"codex_cli_rs","timestamp":"{ts}","cli_version":"0.47.0"}}}}"#
        ),
        // Spaced as Codex never writes it: kept as its text.
        1 => format!(
            r#"{{"timestamp": "{ts}", "type": "session_meta", "payload": {{"id": "{id}", "timestamp": "{ts}", "cwd": "/w/app"}}}}"#
        ),
        // No time on the line: not a `{timestamp, type, payload}` object.
        2 => format!(r#"{{"type":"session_meta","payload":{{"id":"{id}","cwd":"/w/app"}}}}"#),
        // A sub-agent's.
        3 | 6 | 7 => format!(
            r#"{{"timestamp":"{ts}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{ts}","cwd":"/w/app","cli_version":"0.47.0","source":{{"subagent":{{"thread_spawn":{{"parent":"p"}}}}}}}}}}"#
        ),
        // A payload that is not an object: not the metadata.
        4 => format!(r#"{{"timestamp":"{ts}","type":"session_meta","payload":[1,2]}}"#),
        _ => format!(
            r#"{{"timestamp":"{ts}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{ts}","cwd":"/w/app","originator":"codex_cli_rs","cli_version":"0.47.0","git":{{"branch":"main"}}}}}}"#
        ),
    }
}

/// Any other line.
fn item(r: &mut Rng, ts: &str, k: u64) -> String {
    let line = |kind: &str, payload: String| {
        format!(r#"{{"timestamp":"{ts}","type":"{kind}","payload":{payload}}}"#)
    };
    let call = r.below(6);
    match r.below(30) {
        0..=3 => line(
            "response_item",
            format!(
                r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"ask {k} \u00e9"}}]}}"#
            ),
        ),
        4..=6 => line(
            "response_item",
            format!(
                r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"answer {k}"}}]}}"#
            ),
        ),
        7 => line(
            "response_item",
            r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}"#.into(),
        ),
        8 | 9 => {
            // Now and then the call a sub-agent's rollout inherits from its parent.
            let name = if r.chance(30) { "spawn_agent" } else { "shell" };
            line(
                "response_item",
                format!(
                    r#"{{"type":"function_call","name":"{name}","arguments":"{{\"command\":[\"ls\"]}}","call_id":"call_{call}"}}"#
                ),
            )
        }
        10 | 11 => line(
            "response_item",
            format!(
                r#"{{"type":"function_call_output","call_id":"call_{call}","output":"{{\"output\":\"ok\",\"metadata\":{{\"exit_code\":0}}}}"}}"#
            ),
        ),
        12 => line(
            "response_item",
            r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"xyz"}"#.into(),
        ),
        13 => line(
            "response_item",
            format!(r#"{{"type":"custom_tool_call","call_id":"call_{call}","name":"apply_patch","input":"*** Begin Patch"}}"#),
        ),
        // Items of an unknown type or an odd shape: an assistant message with no content, of
        // a role the reader does not know, with content that is not a list; an output with
        // no output or a call id that is not a string; a type that is not a string.
        14 => {
            let payload = match r.below(8) {
                0 => r#"{"type":"message","role":"assistant","content":[]}"#,
                1 => r#"{"type":"message","role":"critic","content":[]}"#,
                2 => r#"{"type":"message","role":"user","content":"not a list"}"#,
                3 => r#"{"type":"function_call_output","call_id":"call_1"}"#,
                4 => r#"{"type":"function_call_output","call_id":7,"output":"x"}"#,
                5 => r#"{"type":7}"#,
                6 => r#"{"type":"custom_tool_call_output","call_id":"call_2","output":{"success":false}}"#,
                _ => r#"{"type":"future_item","x":1}"#,
            };
            line("response_item", payload.into())
        }
        15 | 16 => line(
            "event_msg",
            format!(r#"{{"type":"user_message","message":"ask {k}","images":[]}}"#),
        ),
        17 => line(
            "event_msg",
            format!(r#"{{"type":"agent_message","message":"said {k}"}}"#),
        ),
        // Token counts: of a response; without the last response's (its growth counts); a
        // rate-limit update (the same totals again, or no info at all).
        18 => {
            let total = k - k % 2;
            let payload = match r.below(4) {
                0 => format!(
                    r#"{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"output_tokens":3,"total_tokens":9}}}}}}"#
                ),
                1 => r#"{"type":"token_count","info":null,"rate_limits":{"primary":null}}"#.into(),
                _ => format!(
                    r#"{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"output_tokens":3,"reasoning_output_tokens":1,"total_tokens":9}},"last_token_usage":{{"input_tokens":1,"output_tokens":3,"total_tokens":4}}}}}}"#
                ),
            };
            line("event_msg", payload)
        }
        19 => {
            let model = ["gpt-5-codex", "gpt-5.1-codex", "  "][r.below(3) as usize];
            line(
                "turn_context",
                format!(r#"{{"cwd":"/w/app","approval_policy":"on-request","model":"{model}"}}"#),
            )
        }
        20 => line(
            "compacted",
            r#"{"message":"summary of before","replacement_history":[]}"#.into(),
        ),
        // Of a type this version does not know, or named as the reader names lines it keeps
        // whole.
        21 => line("future_line", r#"{"x":1}"#.into()),
        22 => line("codex-jsonl.record", r#"{"x":1}"#.into()),
        // Not `{timestamp, type, payload}`.
        23 => r#"{"type":"event_msg","payload":{"type":"user_message","message":"untimed"}}"#.to_string(),
        24 => format!(r#"[{k},"not a line"]"#),
        // What serde_json refuses and the grammar takes.
        25 => line(
            "event_msg",
            r#"{"type":"user_message","message":"cut \ud83d here"}"#.into(),
        ),
        26 => line(
            "event_msg",
            format!(r#"{{"type":"x","deep":{}1{}}}"#, "[".repeat(150), "]".repeat(150)),
        ),
        // A repeated key (the last one counts), keys out of order, spacing.
        27 => format!(
            r#"{{"type":"event_msg","timestamp":"{ts}","payload":{{"type":"agent_message","message":"a"}},"type":"event_msg"}}"#
        ),
        28 => match r.below(4) {
            0 => r#"{"torn":"this line was cut"#.into(),
            1 => "{not json}".into(),
            2 => String::new(),
            _ => format!(
                r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"user_message","message":"a"}}}}{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"agent_message","message":"glued"}}}}"#
            ),
        },
        _ => format!(
            r#"{{"timestamp": "{ts}", "type": "event_msg", "payload": {{"type": "agent_message", "message": "spaced"}}}}"#
        ),
    }
}

// Generated rollouts in two halves, so that both run at once.
#[test]
fn generated_rollouts_are_written_back_as_the_whole_session_path_writes_them() {
    generated_rollouts(0..seeds() / 2);
}

#[test]
fn more_generated_rollouts_are_written_back_as_the_whole_session_path_writes_them() {
    generated_rollouts(seeds() / 2..seeds());
}

fn generated_rollouts(seeds: std::ops::Range<u64>) {
    let codex = fmt("codex-jsonl");
    let count = seeds.end - seeds.start;
    let mut inheriting = 0;
    for seed in seeds {
        let bytes = rollout(seed);
        let name = format!("rollout-{seed}.jsonl");
        // A sub-agent's rollout with an inherited call goes through the whole session into a
        // tool that does not answer calls itself (the call gets a result there): all others
        // (exports too) are taken.
        let inherits = !sessiontool::check::document::inherited_calls(&session(&bytes)).is_empty();
        inheriting += usize::from(inherits);
        for to in targets() {
            for (what, adjust) in adjustments() {
                let taken = agree(&name, &bytes, Some(codex), fmt(to), &options(None), &adjust);
                let closes = fmt(to).resumable() && !fmt(to).answers_open_calls_itself();
                let want = !(closes && inherits);
                assert_eq!(taken, want, "{name} -> {to} ({what}): taken");
            }
        }
        if seed % 5 == 0 {
            // A leaf: a rollout is cut there through the whole session; the Claude Code
            // writer writes every node, and a leaf that is not there (or names several) is
            // the same error either way (into Gemini, the engine's).
            for leaf in ["line-2", "line", "no-such-line"] {
                let o = options(Some(leaf));
                assert!(!agree(&name, &bytes, Some(codex), codex, &o, &no_adjust));
                let gemini = fmt("gemini-json");
                let taken = agree(&name, &bytes, Some(codex), gemini, &o, &no_adjust);
                let input = sessiontool::formats::Input {
                    name: &name,
                    path: None,
                    bytes: &bytes,
                };
                let error =
                    sessiontool::convert::convert_whole(&input, Some(codex), gemini, &o, |_| {})
                        .is_err();
                assert!(!taken || error, "{name}, leaf {leaf}: taken");
                agree(
                    &name,
                    &bytes,
                    Some(codex),
                    fmt("claude-jsonl"),
                    &o,
                    &no_adjust,
                );
            }
            // Closing unanswered calls, when there are some, goes through the whole session.
            let close = sessiontool::formats::WriteOptions {
                close_open_calls: true,
                ..options(None)
            };
            for to in ["claude-jsonl", "gemini-jsonl"] {
                agree(&name, &bytes, Some(codex), fmt(to), &close, &no_adjust);
            }
        }
    }
    assert!(count < 50 || inheriting > 0, "no sub-agent inherits a call");
}
