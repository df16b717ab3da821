//! Token usage and model names travel wherever the target has a place for them (issue 17,
//! item 6). The expected numbers come from the source files' own JSON (Codex's cumulative
//! `total_token_usage`, Claude's last entry of each reply), not from sessiontool's readers; the
//! outputs are read back as JSON in the two formats the issue names, and through the readers in
//! every other format.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use sessiontool::model::{Role, Session, Usage};

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The bytes of a fixture (`fixtures/...`) or of a real sample in ../shared/samples (`None`,
/// said, when the samples are not there; a failure in CI).
fn source(rel: &str) -> Option<Vec<u8>> {
    if rel.starts_with("fixtures/") {
        return Some(std::fs::read(manifest(rel)).unwrap());
    }
    common::prerequisite::shared(rel).map(|p| std::fs::read(p).unwrap())
}

const CODEX_FIXTURE: &str = "fixtures/codex-jsonl/usage.jsonl";
const CODEX_SAMPLE: &str = "codex/pomodoro-timer.jsonl";
const CLAUDE_FIXTURE: &str = "fixtures/claude-jsonl/tools.jsonl";
const CLAUDE_SAMPLE: &str = "claude/pomodoro-timer.jsonl";

/// Formats with a place for usage and a reply's model.
const WITH_USAGE: &[&str] = &[
    "claude-jsonl",
    "codex-jsonl",
    "qwen-jsonl",
    "pi-jsonl",
    "gemini-jsonl",
    "gemini-json",
    "llxprt-jsonl",
    "agent-jsonl",
];

/// Prompt tokens (cached included), cached ones, generated tokens (thoughts included).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    input: u64,
    cached: u64,
    output: u64,
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn n(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// What a rollout says it used: the last `total_token_usage`.
fn codex_totals(bytes: &[u8]) -> Counts {
    let total = lines(bytes)
        .into_iter()
        .filter(|l| l["type"] == "event_msg" && l["payload"]["type"] == "token_count")
        .filter_map(|l| {
            l["payload"]["info"]["total_token_usage"]
                .as_object()
                .cloned()
        })
        .next_back()
        .map(Value::Object)
        .unwrap();
    Counts {
        input: n(&total, "input_tokens"),
        cached: n(&total, "cached_input_tokens"),
        output: n(&total, "output_tokens"),
    }
}

/// The models a rollout's turn contexts name.
fn codex_models(bytes: &[u8]) -> BTreeSet<String> {
    lines(bytes)
        .into_iter()
        .filter(|l| l["type"] == "turn_context")
        .filter_map(|l| l["payload"]["model"].as_str().map(String::from))
        .collect()
}

/// What a Claude file says it used: each reply (`message.id`) counted once, by its last entry
/// (the one written when the reply was complete).
fn claude_totals(bytes: &[u8]) -> Counts {
    let mut replies: Vec<(String, Value)> = Vec::new();
    for l in lines(bytes) {
        if l["type"] != "assistant" || !l["message"]["usage"].is_object() {
            continue;
        }
        let id = l["message"]["id"].as_str().unwrap_or_default().to_string();
        let usage = l["message"]["usage"].clone();
        match replies.iter_mut().find(|(i, _)| !id.is_empty() && *i == id) {
            Some(r) => r.1 = usage,
            None => replies.push((id, usage)),
        }
    }
    let mut c = Counts::default();
    for (_, u) in replies {
        let read = n(&u, "cache_read_input_tokens");
        c.input += n(&u, "input_tokens") + read + n(&u, "cache_creation_input_tokens");
        c.cached += read;
        c.output += n(&u, "output_tokens");
    }
    c
}

fn claude_models(bytes: &[u8]) -> BTreeSet<String> {
    lines(bytes)
        .into_iter()
        .filter(|l| l["type"] == "assistant")
        .filter_map(|l| l["message"]["model"].as_str().map(String::from))
        .collect()
}

/// The usage a session's messages carry, as the model counts it.
fn model_totals(s: &Session) -> Counts {
    let mut c = Counts::default();
    for u in s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .filter_map(|m| m.usage.as_ref())
    {
        let Usage {
            input,
            cached,
            output,
            thoughts,
            ..
        } = u;
        c.input += input.unwrap_or(0);
        c.cached += cached.unwrap_or(0);
        c.output += output.unwrap_or(0) + thoughts.unwrap_or(0);
    }
    c
}

fn model_models(s: &Session) -> BTreeSet<String> {
    s.nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.model.clone())
        .collect()
}

fn convert(bytes: &[u8], to: &str) -> sessiontool::Conversion {
    sessiontool::convert_bytes(bytes, None, to).unwrap_or_else(|e| panic!("into {to}: {e}"))
}

fn read(bytes: &[u8], format: &str) -> Session {
    let c = sessiontool::convert_bytes(bytes, Some(format), format).unwrap();
    assert!(
        !c.diagnostics
            .iter()
            .any(|d| d.severity == sessiontool::diag::Severity::Error),
        "{format}: {:?}",
        c.diagnostics
    );
    let input = sessiontool::formats::Input {
        name: "out",
        path: None,
        bytes,
    };
    sessiontool::formats::by_name(format)
        .unwrap()
        .read(&input)
        .unwrap()
        .session
}

fn no_usage_loss(c: &sessiontool::Conversion, to: &str) {
    for l in &c.losses.losses {
        assert!(
            !matches!(l.code, "usage" | "model"),
            "into {to}: usage or models reported lost: {l:?}"
        );
    }
}

fn codex_into_every_target(rel: &str) {
    let Some(bytes) = source(rel) else {
        return;
    };
    let expected = codex_totals(&bytes);
    let models = codex_models(&bytes);
    assert!(expected.input > 0 && !models.is_empty());

    let claude = convert(&bytes, "claude-jsonl");
    no_usage_loss(&claude, "claude-jsonl");
    assert_eq!(claude_totals(&claude.bytes), expected, "{rel} into Claude");
    assert_eq!(claude_models(&claude.bytes), models, "{rel} into Claude");

    for to in WITH_USAGE {
        let c = convert(&bytes, to);
        no_usage_loss(&c, to);
        let s = read(&c.bytes, to);
        assert_eq!(model_totals(&s), expected, "{rel} into {to}");
        assert_eq!(model_models(&s), models, "{rel} into {to}");
    }
}

#[test]
fn codex_usage_and_models_reach_every_target() {
    codex_into_every_target(CODEX_FIXTURE);
}

#[test]
fn the_real_codex_rollout_keeps_its_usage_in_every_target() {
    // 215,755 prompt tokens (181,760 cached) and 14,976 generated: the rollout's own total.
    // Its token_count events come twice per response (once more with each rate-limit update);
    // counting each response once gives that total.
    codex_into_every_target(CODEX_SAMPLE);
}

fn claude_into_every_target(rel: &str) {
    let Some(bytes) = source(rel) else {
        return;
    };
    let expected = claude_totals(&bytes);
    let models = claude_models(&bytes);
    assert!(expected.input > 0 && !models.is_empty());

    let codex = convert(&bytes, "codex-jsonl");
    no_usage_loss(&codex, "codex-jsonl");
    assert_eq!(codex_totals(&codex.bytes), expected, "{rel} into Codex");
    assert_eq!(codex_models(&codex.bytes), models, "{rel} into Codex");

    for to in WITH_USAGE {
        let c = convert(&bytes, to);
        no_usage_loss(&c, to);
        let s = read(&c.bytes, to);
        assert_eq!(model_totals(&s), expected, "{rel} into {to}");
        assert_eq!(model_models(&s), models, "{rel} into {to}");
    }
}

#[test]
fn claude_usage_and_models_reach_every_target() {
    claude_into_every_target(CLAUDE_FIXTURE);
}

#[test]
fn the_real_claude_session_keeps_its_usage_in_every_target() {
    claude_into_every_target(CLAUDE_SAMPLE);
}

#[test]
fn there_and_back_gives_the_same_numbers() {
    let codex = std::fs::read(manifest(CODEX_FIXTURE)).unwrap();
    let claude = convert(&codex, "claude-jsonl").bytes;
    let again = convert(&claude, "codex-jsonl").bytes;
    assert_eq!(codex_totals(&again), codex_totals(&codex));
    assert_eq!(codex_models(&again), codex_models(&codex));

    let claude = std::fs::read(manifest(CLAUDE_FIXTURE)).unwrap();
    let codex = convert(&claude, "codex-jsonl").bytes;
    let again = convert(&codex, "claude-jsonl").bytes;
    assert_eq!(claude_totals(&again), claude_totals(&claude));
    assert_eq!(claude_models(&again), claude_models(&claude));
}

#[test]
fn a_rate_limit_update_is_not_a_second_response() {
    // The fixture's first response is reported twice (the second time with new rate limits
    // only); counted once, as its total says.
    let bytes = std::fs::read(manifest(CODEX_FIXTURE)).unwrap();
    let s = read(&bytes, "codex-jsonl");
    let with_usage = s
        .nodes
        .iter()
        .filter_map(|n| n.message())
        .filter(|m| m.usage.is_some())
        .count();
    assert_eq!(with_usage, 3);
    assert_eq!(model_totals(&s), codex_totals(&bytes));
}
