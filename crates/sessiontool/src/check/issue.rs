//! What fsck reports: one [`Issue`] per problem, with a stable code, a severity, where it is,
//! a message a person understands and, when `--repair` can fix it, what the fix does.

use serde::Serialize;

use crate::diag::Severity;
use crate::records::{Damage, Finding};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// Stable (scripts match on it); see [`CODES`].
    pub code: &'static str,
    pub severity: Severity,
    /// 1-based line of the file, when the issue has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Byte offset in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    pub message: String,
    /// What `--repair` does about it; `None` when it cannot (or must not) fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// Set on the one issue that stands for this many more of its kind that are not listed
    /// one by one (see [`super::capped`]); counts include them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted: Option<u64>,
}

impl Issue {
    pub fn new(code: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Issue {
            code,
            severity,
            line: None,
            offset: None,
            message: message.into(),
            fix: None,
            unlisted: None,
        }
    }

    pub fn at(mut self, line: u64, offset: u64) -> Self {
        self.line = Some(line);
        self.offset = Some(offset);
        self
    }

    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    pub fn fixable(&self) -> bool {
        self.fix.is_some()
    }

    /// How many issues this one stands for: 1, or a summary's count.
    pub fn weight(&self) -> u64 {
        self.unlisted.unwrap_or(1)
    }

    /// How many issues a list holds, counting the unlisted ones a summary stands for.
    pub fn total(issues: &[Issue]) -> u64 {
        issues.iter().map(Issue::weight).sum()
    }
}

/// Every code fsck can report, with its severity and one line on what it means: the list
/// `sessiontool fsck --codes` prints and README documents.
pub const CODES: &[(&str, Severity, &str)] = &[
    (
        "bom",
        Severity::Warning,
        "the file starts with a UTF-8 byte order mark",
    ),
    (
        "crlf",
        Severity::Warning,
        "lines end with CRLF instead of LF",
    ),
    ("blank-line", Severity::Info, "an empty line"),
    (
        "nul-padding",
        Severity::Error,
        "NUL bytes left by a crash or power loss",
    ),
    ("invalid-utf8", Severity::Error, "bytes that are not UTF-8"),
    (
        "glued-records",
        Severity::Error,
        "several records on one line (an append after a torn line)",
    ),
    (
        "torn-record-glued",
        Severity::Error,
        "a torn record with a complete one glued after it",
    ),
    (
        "torn-tail",
        Severity::Error,
        "the last line is cut off (the writer crashed)",
    ),
    ("invalid-json", Severity::Error, "a line that is not JSON"),
    (
        "oversized-line",
        Severity::Warning,
        "a line over the size limit, not checked",
    ),
    (
        "missing-final-newline",
        Severity::Warning,
        "the last line has no newline",
    ),
    (
        "not-a-record",
        Severity::Warning,
        "a JSON line that is not a record of this format",
    ),
    (
        "missing-field",
        Severity::Error,
        "a record without a field its tool requires",
    ),
    (
        "orphan-parent",
        Severity::Error,
        "a record whose parent is not in the file: history before it is cut off",
    ),
    (
        "cycle",
        Severity::Error,
        "parent links that go round in a circle",
    ),
    (
        "duplicate-id-conflict",
        Severity::Error,
        "records with the same id that disagree",
    ),
    (
        "several-roots",
        Severity::Warning,
        "more than one record without a parent",
    ),
    (
        "dead-branches",
        Severity::Info,
        "records not on the branch the tool resumes (earlier edits or retries)",
    ),
    (
        "session-id-mismatch",
        Severity::Warning,
        "records of another session inside this file",
    ),
    (
        "tool-call-unanswered",
        Severity::Error,
        "a tool call without a result (model APIs reject the history)",
    ),
    (
        "tool-result-orphan",
        Severity::Warning,
        "a tool result for a call that is not in the file",
    ),
    (
        "tool-call-inherited",
        Severity::Info,
        "a sub-agent's copy of the call its parent made to spawn it: answered in the parent's session, not unanswered",
    ),
    (
        "tool-result-inherited",
        Severity::Info,
        "a sub-agent's copy of a result whose call is in its parent's session",
    ),
    (
        "header-missing",
        Severity::Error,
        "the header the tool needs to list or resume the session is missing, or not first where it must be",
    ),
    (
        "seq-not-increasing",
        Severity::Error,
        "a sequence number that does not increase (llxprt-code refuses to resume the file)",
    ),
    (
        "rewind-unknown",
        Severity::Error,
        "a rewind to a record that is not in the session (Gemini CLI then drops every message)",
    ),
    (
        "truncated-document",
        Severity::Error,
        "a whole-file JSON session cut off by a crash",
    ),
    (
        "unreadable",
        Severity::Error,
        "the file cannot be read as its format",
    ),
    (
        "codex-thread-unregistered",
        Severity::Warning,
        "Codex's state database has no row for this rollout: Codex does not list it and `resume --last` never picks it (`sessiontool recover` registers it)",
    ),
    (
        "codex-thread-stale",
        Severity::Warning,
        "Codex's state database records this thread in another folder or at another file than the rollout (`sessiontool recover` registers it again)",
    ),
    (
        "codex-thread-missing-rollout",
        Severity::Warning,
        "a row of Codex's state database names a rollout file that does not exist",
    ),
    (
        "reader",
        Severity::Warning,
        "something the format's reader noticed",
    ),
    (
        "opencode-damaged",
        Severity::Error,
        "SQLite's quick_check finds an OpenCode database damaged",
    ),
    (
        "opencode-part-without-message",
        Severity::Error,
        "OpenCode database: parts whose message is not there (OpenCode never shows them)",
    ),
    (
        "opencode-message-without-session",
        Severity::Error,
        "OpenCode database: messages whose session is not there (OpenCode never shows them)",
    ),
    (
        "opencode-part-session-mismatch",
        Severity::Warning,
        "OpenCode database: parts that name another session than their message's",
    ),
    (
        "opencode-invalid-json",
        Severity::Error,
        "OpenCode database: message or part data that is not JSON (OpenCode fails on its session)",
    ),
    (
        "opencode-missing-field",
        Severity::Error,
        "OpenCode database: a message without its role or a part without its type",
    ),
    (
        "opencode-session-without-project",
        Severity::Warning,
        "OpenCode database: sessions whose project is not there",
    ),
    (
        "opencode-checked-only",
        Severity::Info,
        "an OpenCode database is checked, never changed: there is no repair",
    ),
    (
        "unknown-format",
        Severity::Warning,
        "not a session file of any supported format",
    ),
];

/// The severity a code has (Error for a code not in [`CODES`], which is a bug).
pub fn severity_of(code: &str) -> Severity {
    CODES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(Severity::Error, |(_, s, _)| *s)
}

/// The code of a records-layer finding.
pub fn code_of(damage: &Damage) -> &'static str {
    match damage {
        Damage::Bom => "bom",
        Damage::Crlf { .. } => "crlf",
        Damage::BlankLine => "blank-line",
        Damage::NulPadding { .. } => "nul-padding",
        Damage::InvalidUtf8 { .. } => "invalid-utf8",
        Damage::Glued { .. } => "glued-records",
        Damage::TornRecordGlued { .. } => "torn-record-glued",
        Damage::TornTail => "torn-tail",
        Damage::InvalidJson { .. } => "invalid-json",
        Damage::Oversized { .. } => "oversized-line",
        Damage::MissingFinalNewline => "missing-final-newline",
    }
}

/// The issue for a records-layer finding, with the fix repair makes.
pub fn from_finding(f: &Finding) -> Issue {
    let (message, fix): (String, Option<&str>) = match &f.damage {
        Damage::Bom => (
            "file starts with a UTF-8 byte order mark".into(),
            Some("remove it"),
        ),
        Damage::Crlf { lines } => (
            format!("{lines} line(s) from here end with CRLF"),
            Some("end them with LF"),
        ),
        Damage::BlankLine => ("blank line".into(), Some("remove it")),
        Damage::NulPadding { len } => (
            format!("{len} NUL bytes (left by a crash or power loss)"),
            Some("strip them"),
        ),
        Damage::InvalidUtf8 { at } => (
            format!("invalid UTF-8 at byte {at}"),
            Some(
                "replace the bad bytes with U+FFFD, as the tool reads them; the original line goes to the sidecar file",
            ),
        ),
        Damage::Glued { records } => (
            format!("{records} records glued on one line (a write after a torn line)"),
            Some("put each record on its own line"),
        ),
        Damage::TornRecordGlued { fragment_len } => (
            format!("a torn record ({fragment_len} bytes) with a complete record glued after it"),
            Some("move the torn bytes to the sidecar file, keep the complete record"),
        ),
        Damage::TornTail => (
            format!(
                "the last line ({} bytes) is cut off: the writer crashed",
                f.span.len
            ),
            Some("move the cut-off bytes to the sidecar file"),
        ),
        Damage::InvalidJson { message } => (
            format!("line is not valid JSON ({message})"),
            Some("move the line to the sidecar file"),
        ),
        Damage::Oversized { len } => (
            format!("line of {len} bytes is over the size limit; not checked"),
            None,
        ),
        Damage::MissingFinalNewline => (
            "the last line has no newline (the next append would glue onto it)".into(),
            Some("add the newline"),
        ),
    };
    let code = code_of(&f.damage);
    let issue = Issue::new(code, severity_of(code), message).at(f.span.line, f.span.offset);
    match fix {
        Some(fix) => issue.fix(fix),
        None => issue,
    }
}
