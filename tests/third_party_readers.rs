//! Programs nobody here wrote read what sessiontool converts and count the same tokens (issue
//! 17, items 6 and 11): ccusage 18.0.11 (Claude Code files) and @ccusage/codex 18.0.11 (Codex
//! rollouts), pinned, installed from npm by this test into `target/third-party/` (npm's cache
//! there too: nothing in the home folder); and claude-code-log 1.7.0 (Claude Code files and
//! Codex rollouts of both layouts, rendered to JSON), pinned, installed from PyPI into a venv
//! in `target/third-party/` (pip's cache there too). Without node and npm, or python3 with
//! venv, or without the registry, the tests say NOT RUN (tests/common/prerequisite.rs); with
//! CI=true that is a failure.
//!
//! What claude-code-log counts: its JSON rendering's message tree, by type (`user`,
//! `assistant`, `tool_use`, `tool_result`, `thinking`), and for Claude files each session's
//! `token_summary`, a reply counted once (`Input` without the cached tokens, `Output`, `Cache
//! Read`, `Cache Creation`; for rollouts it shows none). The
//! same program reads the source and the converted session, and the counts must agree where
//! the target holds them (a Claude file holds no reasoning of another model, a rollout none of
//! another provider's thinking: those are in the loss report).
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

const CLAUDE_CODE_LOG: &str = "claude-code-log==1.7.0";

static CCL_INSTALL: Mutex<Option<Result<PathBuf, String>>> = Mutex::new(None);

/// claude-code-log's program, installed once per run into its own venv (kept between runs).
fn claude_code_log() -> Option<PathBuf> {
    let mut done = CCL_INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if done.is_none() {
        *done = Some(install_claude_code_log());
    }
    match done.as_ref().unwrap() {
        Ok(bin) => Some(bin.clone()),
        Err(why) => {
            not_run(why);
            None
        }
    }
}

fn install_claude_code_log() -> Result<PathBuf, String> {
    let venv = manifest("target/third-party/claude-code-log-1.7.0");
    let bin = venv.join("bin/claude-code-log");
    let version = |bin: &Path| {
        Command::new(bin)
            .arg("--version")
            .env("HOME", &venv)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    if version(&bin).is_some_and(|v| v.contains("1.7.0")) {
        return Ok(bin);
    }
    let python = Command::new("python3")
        .args(["-c", "import venv, ensurepip"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !python {
        return Err(
            "python3 with venv and ensurepip is not installed (needed to run claude-code-log)"
                .into(),
        );
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv {} failed: {}",
            venv.display(),
            String::from_utf8_lossy(&made.stderr)
        ));
    }
    let out = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--disable-pip-version-check",
            "--no-input",
            CLAUDE_CODE_LOG,
        ])
        .env("PIP_CACHE_DIR", venv.join(".pip-cache"))
        .env("HOME", &venv)
        .output()
        .map_err(|e| format!("pip: {e}"))?;
    match version(&bin) {
        Some(v) if out.status.success() && v.contains("1.7.0") => Ok(bin),
        _ => Err(format!(
            "pip install {CLAUDE_CODE_LOG} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// What claude-code-log shows of one session: messages by type, and the usage it adds up.
#[derive(Debug, Default, PartialEq, Eq)]
struct Shown {
    types: std::collections::BTreeMap<String, u64>,
    tokens: std::collections::BTreeMap<String, u64>,
}

impl Shown {
    fn count(&self, t: &str) -> u64 {
        self.types.get(t).copied().unwrap_or(0)
    }
    /// The messages a target can hold whatever the source: user and assistant messages, tool
    /// calls and their results.
    fn conversation(&self) -> [u64; 4] {
        ["user", "assistant", "tool_use", "tool_result"].map(|t| self.count(t))
    }
    fn token(&self, k: &str) -> u64 {
        self.tokens.get(k).copied().unwrap_or(0)
    }
}

/// claude-code-log renders `file_name` (holding `bytes`) to JSON, with HOME in a temporary
/// folder; what it shows. Rollouts must be named `rollout-*.jsonl`, as Codex names them.
fn ccl_show(bin: &Path, file_name: &str, bytes: &[u8]) -> Shown {
    let home = tempfile::tempdir().unwrap();
    let input = home.path().join(file_name);
    std::fs::write(&input, bytes).unwrap();
    let output = home.path().join("shown.json");
    let out = Command::new(bin)
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && output.exists(),
        "claude-code-log {file_name}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&output).unwrap()).unwrap();
    let mut shown = Shown::default();
    fn walk(messages: &Value, shown: &mut Shown) {
        for m in messages.as_array().into_iter().flatten() {
            let t = m["type"].as_str().unwrap_or("?").to_string();
            *shown.types.entry(t).or_default() += 1;
            walk(&m["children"], shown);
        }
    }
    walk(&doc["messages"], &mut shown);
    // Each session's usage, a reply counted once however many entries repeat it:
    // "Token usage – Input: 1528 | Output: 256 | Cache Read: 14592".
    for session in doc["sessions"].as_array().into_iter().flatten() {
        let summary = session["token_summary"].as_str().unwrap_or("");
        let summary = summary.split_once('–').map_or(summary, |(_, s)| s);
        for field in summary.split('|') {
            if let Some((k, v)) = field.split_once(':')
                && let Ok(v) = v.trim().parse::<u64>()
            {
                *shown.tokens.entry(k.trim().to_string()).or_default() += v;
            }
        }
    }
    shown
}

const ROLLOUT_NAME: &str = "rollout-2026-01-12T09-00-00-0199a3c4-7d2e-7b10-9a4c-1f2e3d4c5b6a.jsonl";
const CLAUDE_NAME: &str = "5f0c2d1e-8a47-4b6e-9c3d-2e1f0a9b8c7d.jsonl";

#[test]
fn claude_code_log_shows_a_rollout_converted_to_claude_as_it_shows_the_rollout() {
    let Some(bin) = claude_code_log() else {
        return;
    };
    for src in [
        "fixtures/codex-jsonl/usage.jsonl",
        "fixtures/codex-jsonl/messages.jsonl",
        "fixtures/codex-legacy-jsonl/git-reasoning.jsonl",
    ] {
        let rollout = std::fs::read(manifest(src)).unwrap();
        let source = ccl_show(&bin, ROLLOUT_NAME, &rollout);
        assert!(source.count("user") > 0, "{src}: {source:?}");
        let conversion = sessiontool::convert_bytes(&rollout, None, "claude-jsonl").unwrap();
        let claude = ccl_show(&bin, CLAUDE_NAME, &conversion.bytes);
        assert_eq!(
            claude.conversation(),
            source.conversation(),
            "{src}: user, assistant, tool calls, tool results: {source:?} / {claude:?}"
        );
        // Reasoning of another model has no place in a Claude file: said, never silent.
        if source.count("thinking") > claude.count("thinking") {
            assert!(
                conversion
                    .losses
                    .losses
                    .iter()
                    .any(|l| l.code == "thoughts"),
                "{src}: {:?}",
                conversion.losses
            );
        }
    }
    // The tokens: what claude-code-log adds up in the Claude file is what the rollout counted.
    let rollout = std::fs::read(manifest("fixtures/codex-jsonl/usage.jsonl")).unwrap();
    let claude = ccl_show(&bin, CLAUDE_NAME, &convert(&rollout, "claude-jsonl"));
    let [input, cached, output, _] = rollout_total(&rollout);
    assert_eq!(
        [
            claude.token("Input") + claude.token("Cache Read") + claude.token("Cache Creation"),
            claude.token("Cache Read"),
            claude.token("Output"),
        ],
        [input, cached, output],
        "{claude:?}"
    );
    assert!(output > 0);
}

#[test]
fn claude_code_log_shows_a_claude_session_converted_to_codex_as_it_shows_the_source() {
    let Some(bin) = claude_code_log() else {
        return;
    };
    for src in [
        "fixtures/claude-jsonl/tools.jsonl",
        "fixtures/claude-jsonl/plain.jsonl",
        "fixtures/claude-jsonl/split-reply.jsonl",
    ] {
        let claude = std::fs::read(manifest(src)).unwrap();
        let source = ccl_show(&bin, CLAUDE_NAME, &claude);
        assert!(source.count("user") > 0, "{src}: {source:?}");
        let rollout = convert(&claude, "codex-jsonl");
        let shown = ccl_show(&bin, ROLLOUT_NAME, &rollout);
        assert_eq!(
            shown.conversation(),
            source.conversation(),
            "{src}: user, assistant, tool calls, tool results: {source:?} / {shown:?}"
        );
        // And back into Claude: the same messages, and the same tokens as the source.
        let again = ccl_show(&bin, CLAUDE_NAME, &convert(&rollout, "claude-jsonl"));
        assert_eq!(again.conversation(), source.conversation(), "{src}");
        assert_eq!(again.tokens, source.tokens, "{src}: tokens");
    }
}
