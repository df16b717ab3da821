//! The row Codex's state database keeps for a rollout (`threads`), built from the rollout the
//! way Codex 0.169.0 builds it when it indexes a rollout file it finds on disk (its backfill):
//! `session_meta` gives the id, creation time, working folder, source, originator, CLI
//! version, model provider and git facts; the last `turn_context` the model, approval mode
//! and permissions; the first `event_msg` `user_message` (or, as Codex 0.169 writes it, the
//! first completed `UserMessage` item) the title, preview and first message;
//! the last `token_count` the tokens used; the file's modification time the update time.
//! `fixtures/codex-state/backfill-rows-0.169.0.json` holds rows Codex itself wrote, and the
//! tests compare against them.
//!
//! Lines that are not JSON are skipped, as Codex skips them.

use std::path::Path;

use memchr::memmem;
use serde_json::Value;

/// Codex's prefix before the user's own words in older user messages.
const USER_MESSAGE_BEGIN: &str = "## My request for Codex:";
/// What Codex records as the first message of a thread that began with images only.
const IMAGE_ONLY: &str = "[Image]";
/// The permission profile Codex 0.169.0 records for a rollout without a `turn_context`: its
/// default, read-only.
pub const DEFAULT_SANDBOX_POLICY: &str = r#"{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]},"network":"restricted"}"#;
const DEFAULT_APPROVAL_MODE: &str = "on-request";

/// One `threads` row, as Codex writes it for a rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadRow {
    pub id: String,
    pub rollout_path: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub source: String,
    pub originator: Option<String>,
    /// `paginated` for a rollout Codex 0.169 wrote itself (its records carry `ordinal`),
    /// `legacy` otherwise.
    pub history_mode: &'static str,
    pub thread_source: Option<String>,
    pub agent_nickname: Option<String>,
    pub agent_role: Option<String>,
    pub agent_path: Option<String>,
    pub model_provider: String,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    pub cwd: String,
    pub cli_version: String,
    pub title: String,
    pub preview: String,
    pub sandbox_policy: String,
    pub approval_mode: String,
    pub tokens_used: i64,
    pub first_user_message: String,
    /// Set for a rollout in `archived_sessions/`.
    pub archived_at_ms: Option<i64>,
    pub git_sha: Option<String>,
    pub git_branch: Option<String>,
    pub git_origin_url: Option<String>,
}

/// A column value, as SQLite stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Int(i64),
    Text(String),
    Null,
}

impl From<&Option<String>> for Cell {
    fn from(v: &Option<String>) -> Cell {
        v.as_ref().map_or(Cell::Null, |s| Cell::Text(s.clone()))
    }
}

impl ThreadRow {
    /// The columns a row sets.
    pub fn known_columns() -> Vec<&'static str> {
        ThreadRow::default()
            .cells()
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    /// Every column this row sets, in Codex's names, with its value.
    pub fn cells(&self) -> Vec<(&'static str, Cell)> {
        let text = |s: &str| Cell::Text(s.to_string());
        let secs = |ms: i64| Cell::Int(ms.div_euclid(1000));
        vec![
            ("id", text(&self.id)),
            ("rollout_path", text(&self.rollout_path)),
            ("created_at", secs(self.created_at_ms)),
            ("updated_at", secs(self.updated_at_ms)),
            ("recency_at", secs(self.updated_at_ms)),
            ("created_at_ms", Cell::Int(self.created_at_ms)),
            ("updated_at_ms", Cell::Int(self.updated_at_ms)),
            ("recency_at_ms", Cell::Int(self.updated_at_ms)),
            ("source", text(&self.source)),
            ("originator", (&self.originator).into()),
            ("history_mode", text(self.history_mode)),
            ("thread_source", (&self.thread_source).into()),
            ("agent_nickname", (&self.agent_nickname).into()),
            ("agent_role", (&self.agent_role).into()),
            ("agent_path", (&self.agent_path).into()),
            ("model_provider", text(&self.model_provider)),
            ("model", (&self.model).into()),
            ("reasoning_effort", (&self.reasoning_effort).into()),
            ("cwd", text(&self.cwd)),
            ("cli_version", text(&self.cli_version)),
            ("title", text(&self.title)),
            ("preview", text(&self.preview)),
            ("sandbox_policy", text(&self.sandbox_policy)),
            ("approval_mode", text(&self.approval_mode)),
            ("tokens_used", Cell::Int(self.tokens_used)),
            ("first_user_message", text(&self.first_user_message)),
            (
                "archived",
                Cell::Int(i64::from(self.archived_at_ms.is_some())),
            ),
            ("archived_at", self.archived_at_ms.map_or(Cell::Null, secs)),
            ("git_sha", (&self.git_sha).into()),
            ("git_branch", (&self.git_branch).into()),
            ("git_origin_url", (&self.git_origin_url).into()),
            ("memory_mode", text("enabled")),
        ]
    }
}

/// Why a rollout has no row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("the rollout has no session_meta record with an id (Codex does not index it)")]
    NoSessionMeta,
}

/// What the row needs besides the rollout's bytes.
pub struct Facts<'a> {
    /// The rollout's absolute path.
    pub path: &'a Path,
    /// Its modification time, in milliseconds since the epoch.
    pub mtime_ms: i64,
    /// The model provider a rollout without its own gets (Codex's configured one).
    pub default_provider: &'a str,
    /// The rollout lies in `archived_sessions/`.
    pub archived: bool,
}

/// The row Codex writes for the rollout `bytes`.
pub fn thread_row(bytes: &[u8], facts: &Facts) -> Result<ThreadRow, RowError> {
    let mut meta: Option<Value> = None;
    let mut paginated = false;
    let mut turn: Option<Value> = None;
    let mut first_message: Option<String> = None;
    let mut tokens: Option<i64> = None;
    let wanted = [
        memmem::Finder::new(b"\"session_meta\""),
        memmem::Finder::new(b"\"turn_context\""),
        memmem::Finder::new(b"\"user_message\""),
        memmem::Finder::new(b"\"token_count\""),
        memmem::Finder::new(b"\"item_completed\""),
    ];
    for line in bytes.split(|&b| b == b'\n') {
        // Most lines are conversation: only these kinds are parsed.
        if !wanted.iter().any(|f| f.find(line).is_some()) {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let payload = &record["payload"];
        match record["type"].as_str() {
            Some("session_meta")
                if meta.is_none() && payload["id"].as_str().is_some_and(|id| !id.is_empty()) =>
            {
                paginated = record.get("ordinal").is_some_and(Value::is_i64);
                meta = Some(record);
            }
            Some("turn_context") => turn = Some(record),
            Some("event_msg") => match payload["type"].as_str() {
                Some("user_message") if first_message.is_none() => {
                    first_message = user_message_preview(payload);
                }
                // Codex 0.169 records the user's turn as a completed `UserMessage` item.
                Some("item_completed")
                    if first_message.is_none() && payload["item"]["type"] == "UserMessage" =>
                {
                    first_message = user_item_preview(&payload["item"]);
                }
                Some("token_count") => {
                    if let Some(n) = payload["info"]["total_token_usage"]["total_tokens"].as_i64() {
                        tokens = Some(n.max(0));
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    let meta = meta.ok_or(RowError::NoSessionMeta)?;
    let m = &meta["payload"];
    let text = |v: &Value| v.as_str().map(str::to_string);
    let turn_payload = turn.as_ref().map(|t| &t["payload"]);
    let mut cwd = text(&m["cwd"]).unwrap_or_default();
    if cwd.is_empty() {
        cwd = turn_payload
            .and_then(|t| text(&t["cwd"]))
            .unwrap_or_default();
    }
    let created_at_ms = [&m["timestamp"], &meta["timestamp"]]
        .into_iter()
        .find_map(|t| t.as_str().and_then(millis))
        .unwrap_or(facts.mtime_ms);
    let git = &m["git"];
    let title = first_message
        .as_deref()
        .filter(|t| *t != IMAGE_ONLY)
        .unwrap_or("")
        .to_string();
    Ok(ThreadRow {
        id: text(&m["id"]).unwrap_or_default(),
        rollout_path: facts.path.display().to_string(),
        created_at_ms,
        updated_at_ms: facts.mtime_ms,
        source: enum_to_string(&m["source"]).unwrap_or_default(),
        originator: text(&m["originator"]),
        history_mode: if paginated { "paginated" } else { "legacy" },
        thread_source: text(&m["thread_source"]),
        agent_nickname: text(&m["agent_nickname"]),
        agent_role: text(&m["agent_role"]),
        agent_path: text(&m["agent_path"]),
        model_provider: text(&m["model_provider"])
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| facts.default_provider.to_string()),
        model: turn_payload.and_then(|t| text(&t["model"])),
        reasoning_effort: turn_payload.and_then(|t| text(&t["effort"])),
        cwd,
        cli_version: text(&m["cli_version"]).unwrap_or_default(),
        preview: title.clone(),
        title,
        sandbox_policy: turn_payload
            .and_then(sandbox_policy)
            .unwrap_or_else(|| DEFAULT_SANDBOX_POLICY.to_string()),
        approval_mode: turn_payload
            .and_then(|t| enum_to_string(&t["approval_policy"]))
            .unwrap_or_else(|| DEFAULT_APPROVAL_MODE.to_string()),
        tokens_used: tokens.unwrap_or(0),
        first_user_message: first_message.unwrap_or_default(),
        archived_at_ms: facts.archived.then_some(facts.mtime_ms),
        git_sha: text(&git["commit_hash"]),
        git_branch: text(&git["branch"]),
        git_origin_url: text(&git["repository_url"]),
    })
}

/// The permissions a `turn_context` records: Codex 0.169's `permission_profile`, or an older
/// `sandbox_policy` (its read-only policy is the same profile).
fn sandbox_policy(turn: &Value) -> Option<String> {
    if let Some(profile) = turn.get("permission_profile").filter(|v| !v.is_null()) {
        return enum_to_string(profile);
    }
    let policy = turn.get("sandbox_policy").filter(|v| !v.is_null())?;
    if policy["type"] == "read-only" && policy.as_object().is_some_and(|o| o.len() == 1) {
        return Some(DEFAULT_SANDBOX_POLICY.to_string());
    }
    enum_to_string(policy)
}

/// Codex's `enum_to_string`: a string as it is, anything else as compact JSON.
fn enum_to_string(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The words of a user message Codex shows for a thread: after its request prefix, trimmed;
/// `[Image]` for a message of images only.
fn user_message_preview(payload: &Value) -> Option<String> {
    let message = payload["message"].as_str().unwrap_or("");
    let words = match message.find(USER_MESSAGE_BEGIN) {
        Some(i) => &message[i + USER_MESSAGE_BEGIN.len()..],
        None => message,
    }
    .trim();
    if !words.is_empty() {
        return Some(words.to_string());
    }
    let has = |key: &str| payload[key].as_array().is_some_and(|a| !a.is_empty());
    (has("images") || has("local_images")).then(|| IMAGE_ONLY.to_string())
}

/// The same for a `UserMessage` item: its text parts, joined.
fn user_item_preview(item: &Value) -> Option<String> {
    let parts = item["content"].as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect();
    let words = text.join("\n");
    let words = words.trim();
    if !words.is_empty() {
        return Some(words.to_string());
    }
    (!parts.is_empty()).then(|| IMAGE_ONLY.to_string())
}

/// An RFC 3339 time in milliseconds since the epoch.
fn millis(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(path: &Path) -> Facts<'_> {
        Facts {
            path,
            mtime_ms: 1_000_500,
            default_provider: "openai",
            archived: false,
        }
    }

    #[test]
    fn the_first_user_message_names_the_thread_and_later_context_wins() {
        let rollout = concat!(
            r#"{"timestamp":"2026-01-01T00:00:01.250Z","type":"session_meta","payload":{"id":"t1","timestamp":"2026-01-01T00:00:01.250Z","cwd":"/w","source":{"subagent":"review"},"cli_version":"0.1.0","git":{"branch":"main"}}}"#,
            "\n",
            "not json\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"intro\n## My request for Codex:\n  fix it  "}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"second"}}"#,
            "\n",
            r#"{"type":"turn_context","payload":{"cwd":"/w","model":"a","approval_policy":"never","sandbox_policy":{"type":"read-only"}}}"#,
            "\n",
            r#"{"type":"turn_context","payload":{"cwd":"/w","model":"b","approval_policy":"on-failure","sandbox_policy":{"type":"danger-full-access"}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":7}}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
            "\n",
        );
        let path = Path::new("/c/sessions/r.jsonl");
        let row = thread_row(rollout.as_bytes(), &facts(path)).unwrap();
        assert_eq!(row.id, "t1");
        assert_eq!(row.title, "fix it");
        assert_eq!(row.first_user_message, "fix it");
        assert_eq!(row.preview, "fix it");
        assert_eq!(row.source, r#"{"subagent":"review"}"#);
        assert_eq!(row.model.as_deref(), Some("b"));
        assert_eq!(row.approval_mode, "on-failure");
        assert_eq!(row.sandbox_policy, r#"{"type":"danger-full-access"}"#);
        assert_eq!(row.tokens_used, 7);
        assert_eq!(row.created_at_ms, 1_767_225_601_250);
        assert_eq!(row.updated_at_ms, 1_000_500);
        assert_eq!(row.model_provider, "openai");
        assert_eq!(row.git_branch.as_deref(), Some("main"));
        assert_eq!(row.history_mode, "legacy");
        assert_eq!(row.rollout_path, "/c/sessions/r.jsonl");
    }

    #[test]
    fn a_rollout_without_session_meta_has_no_row() {
        let rollout = br#"{"type":"event_msg","payload":{"type":"user_message","message":"x"}}"#;
        assert_eq!(
            thread_row(rollout, &facts(Path::new("/r"))),
            Err(RowError::NoSessionMeta)
        );
    }

    #[test]
    fn an_image_only_first_message_is_a_placeholder_without_a_title() {
        let rollout = concat!(
            r#"{"type":"session_meta","payload":{"id":"t","cwd":"/w","source":"cli"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":" ","images":["data:x"]}}"#,
        );
        let row = thread_row(rollout.as_bytes(), &facts(Path::new("/r"))).unwrap();
        assert_eq!(row.first_user_message, "[Image]");
        assert_eq!(row.title, "");
        assert_eq!(row.sandbox_policy, DEFAULT_SANDBOX_POLICY);
        assert_eq!(row.approval_mode, "on-request");
    }
}
