//! Programs nobody here wrote read what sessiontool converts and count the same tokens (issue
//! 17, items 6 and 11): ccusage 18.0.11 (Claude Code files) and @ccusage/codex 18.0.11 (Codex
//! rollouts), pinned, installed from npm by this test into `target/third-party/` (npm's cache
//! there too: nothing in the home folder). Without node and npm, or without the registry, the
//! tests say NOT RUN (tests/common/prerequisite.rs); with CI=true that is a failure.
//!
//! What the two readers count: ccusage adds up `message.usage` per reply (`message.id` +
//! `requestId`, the first entry of a reply) with the cache reads and writes apart from
//! `input_tokens`; @ccusage/codex adds up `last_token_usage` of every `token_count` event, with
//! `input_tokens` including the cached ones. So a Codex total's input is ccusage's input + cache
//! reads + cache writes, and both readers' `totalTokens` are input + output.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

const CCUSAGE: &str = "ccusage@18.0.11";
const CCUSAGE_CODEX: &str = "@ccusage/codex@18.0.11";

fn manifest(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A prerequisite that is missing: a failure in CI, said on standard error elsewhere.
fn not_run(why: &str) {
    common::prerequisite::present(false, why);
}

static INSTALL: Mutex<Option<Result<PathBuf, String>>> = Mutex::new(None);

/// The folder the two readers are installed in (once per run; kept between runs).
fn readers() -> Result<PathBuf, String> {
    let mut done = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = &*done {
        return r.clone();
    }
    let r = install();
    *done = Some(r.clone());
    r
}

fn install() -> Result<PathBuf, String> {
    let dir = manifest("target/third-party/ccusage-18.0.11");
    let installed = |pkg: &str| {
        let p = dir.join("node_modules").join(pkg).join("package.json");
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v["version"] == "18.0.11")
    };
    if installed("ccusage") && installed("@ccusage/codex") {
        return Ok(dir);
    }
    for tool in ["node", "npm"] {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return Err(format!("{tool} is not installed (needed to run ccusage)"));
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(&dir)
        .args([CCUSAGE, CCUSAGE_CODEX])
        .env("npm_config_cache", dir.join(".npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .map_err(|e| format!("npm: {e}"))?;
    if !out.status.success() || !installed("ccusage") || !installed("@ccusage/codex") {
        return Err(format!(
            "npm install {CCUSAGE} {CCUSAGE_CODEX} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(dir)
}

/// Runs one reader's `session --json --offline` with its store in `home` (and HOME there, so
/// nothing of the real home is read); its `totals`.
fn totals(readers: &Path, script: &str, env: (&str, &Path), home: &Path) -> Value {
    let out = Command::new("node")
        .arg(readers.join("node_modules").join(script))
        .args(["session", "--json", "--offline"])
        .env(env.0, env.1)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{script}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    v
}

/// ccusage on one Claude Code session file: `totals` and the models it saw.
fn ccusage_claude(readers: &Path, session: &[u8]) -> (Value, Vec<String>) {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("claude");
    let project = config.join("projects").join("-work-app");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("session.jsonl"), session).unwrap();
    let v = totals(
        readers,
        "ccusage/dist/index.js",
        ("CLAUDE_CONFIG_DIR", &config),
        home.path(),
    );
    let mut models: Vec<String> = v["sessions"][0]["modelsUsed"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    models.sort();
    (v["totals"].clone(), models)
}

/// @ccusage/codex on one rollout: `totals` and the models it saw.
fn ccusage_codex(readers: &Path, rollout: &[u8]) -> (Value, Vec<String>) {
    let home = tempfile::tempdir().unwrap();
    let codex = home.path().join("codex");
    let day = codex.join("sessions/2026/01/12");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join("rollout-2026-01-12T09-00-00-0199a3c4-7d2e-7b10-9a4c-1f2e3d4c5b6a.jsonl"),
        rollout,
    )
    .unwrap();
    let v = totals(
        readers,
        "@ccusage/codex/dist/index.js",
        ("CODEX_HOME", &codex),
        home.path(),
    );
    let mut models: Vec<String> = v["sessions"][0]["models"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    models.sort();
    (v["totals"].clone(), models)
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// The same usage, as the two readers count it: (prompt tokens with the cached ones, cached,
/// generated, total).
fn from_claude(t: &Value) -> [u64; 4] {
    let input = n(t, "inputTokens") + n(t, "cacheReadTokens") + n(t, "cacheCreationTokens");
    [
        input,
        n(t, "cacheReadTokens"),
        n(t, "outputTokens"),
        n(t, "totalTokens"),
    ]
}

fn from_codex(t: &Value) -> [u64; 4] {
    [
        n(t, "inputTokens"),
        n(t, "cachedInputTokens"),
        n(t, "outputTokens"),
        n(t, "totalTokens"),
    ]
}

fn convert(bytes: &[u8], to: &str) -> Vec<u8> {
    sessiontool::convert_bytes(bytes, None, to).unwrap().bytes
}

/// The last cumulative count a rollout records, in the same order.
fn rollout_total(bytes: &[u8]) -> [u64; 4] {
    let last = bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter(|l| l["payload"]["type"] == "token_count")
        .filter_map(|l| {
            l["payload"]["info"]["total_token_usage"]
                .as_object()
                .cloned()
        })
        .next_back()
        .map(Value::Object)
        .unwrap();
    [
        n(&last, "input_tokens"),
        n(&last, "cached_input_tokens"),
        n(&last, "output_tokens"),
        n(&last, "total_tokens"),
    ]
}

fn with_readers() -> Option<PathBuf> {
    match readers() {
        Ok(d) => Some(d),
        Err(why) => {
            not_run(&why);
            None
        }
    }
}

#[test]
fn ccusage_counts_a_rollout_converted_to_claude_as_the_rollout_says() {
    let Some(readers) = with_readers() else {
        return;
    };
    let rollout = std::fs::read(manifest("fixtures/codex-jsonl/usage.jsonl")).unwrap();
    let claude = convert(&rollout, "claude-jsonl");
    let (t, models) = ccusage_claude(&readers, &claude);
    assert_eq!(from_claude(&t), rollout_total(&rollout), "{t}");
    assert_eq!(models, ["gpt-5", "gpt-5-codex"]);

    // Back into a rollout: @ccusage/codex counts what ccusage counted.
    let again = convert(&claude, "codex-jsonl");
    let (c, models) = ccusage_codex(&readers, &again);
    assert_eq!(from_codex(&c), from_claude(&t), "{c}");
    assert_eq!(models, ["gpt-5", "gpt-5-codex"]);
}

#[test]
fn ccusage_codex_counts_a_claude_session_converted_to_codex_as_ccusage_counts_it() {
    let Some(readers) = with_readers() else {
        return;
    };
    let claude = std::fs::read(manifest("fixtures/claude-jsonl/tools.jsonl")).unwrap();
    let (source, source_models) = ccusage_claude(&readers, &claude);
    let rollout = convert(&claude, "codex-jsonl");
    let (t, models) = ccusage_codex(&readers, &rollout);
    assert_eq!(from_codex(&t), from_claude(&source), "{t} / {source}");
    assert_eq!(models, source_models);
    assert!(n(&t, "totalTokens") > 0);
}

#[test]
fn the_real_rollout_converted_to_claude_counts_what_codex_counted() {
    let Some(sample) = common::prerequisite::shared("codex/pomodoro-timer.jsonl") else {
        return;
    };
    let rollout = std::fs::read(sample).unwrap();
    let Some(readers) = with_readers() else {
        return;
    };
    let (t, models) = ccusage_claude(&readers, &convert(&rollout, "claude-jsonl"));
    // 215,755 in (181,760 cached), 14,976 out, 230,731 in all: Codex's own total. (@ccusage/codex
    // shows 412,777 / 28,829 for the rollout itself: it adds each response's `last_token_usage`
    // twice, as Codex 0.47 repeats a token_count, same totals, with each rate-limit update.)
    assert_eq!(from_claude(&t), rollout_total(&rollout), "{t}");
    assert_eq!(from_claude(&t), [215_755, 181_760, 14_976, 230_731]);
    assert_eq!(models, ["gpt-5-codex"]);
}
