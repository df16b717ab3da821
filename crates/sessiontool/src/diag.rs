//! Diagnostics (what a reader found, and where) and loss reports (what a writer could not carry).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where in a file. `line` is 1-based; `offset` is the byte offset of the thing in the file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl Location {
    pub fn file(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            line: None,
            offset: None,
        }
    }

    pub fn at(file: impl Into<String>, line: u64, offset: u64) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            offset: Some(offset),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

/// Something a reader noticed. `code` is stable (scripts match on it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub location: Location,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} [{}]: {}",
            self.location,
            self.severity.as_str(),
            self.code,
            self.message
        )
    }
}

/// Diagnostics in file order (line, then byte offset; those of the whole file last), as the
/// readers give them: a stable sort, so those of one place keep the order they were found in.
pub fn sort_in_file_order(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| {
        (
            d.location.line.unwrap_or(u64::MAX),
            d.location.offset.unwrap_or(u64::MAX),
        )
    });
}

/// What a conversion could not carry into the target format, counted by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// Stable code, e.g. `other-branches`, `notices`, `tool-display`.
    pub code: &'static str,
    pub count: usize,
    pub message: String,
}

/// Collects losses, merging repeats of one code into one line with a count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LossReport {
    pub losses: Vec<Loss>,
}

impl LossReport {
    pub fn add(&mut self, code: &'static str, count: usize, message: impl Into<String>) {
        if count == 0 {
            return;
        }
        if let Some(l) = self.losses.iter_mut().find(|l| l.code == code) {
            l.count += count;
        } else {
            self.losses.push(Loss {
                code,
                count,
                message: message.into(),
            });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.losses.is_empty()
    }

    /// Adds what `later` reported after this one (a report made in parts, in order).
    pub fn merge(&mut self, later: LossReport) {
        for l in later.losses {
            self.add(l.code, l.count, l.message);
        }
    }
}
