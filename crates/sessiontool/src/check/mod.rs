//! fsck: find every kind of damage in a session file, say precisely where, and work out the
//! fixes `repair` can make without guessing.
//!
//! JSONL formats are checked in one streaming pass that keeps offsets and interned ids, never
//! content ([`scan`]), then tree ([`tree`]) and conversation ([`conversation`]) checks run on
//! those facts. Whole-file JSON formats go through their reader ([`document`]).

pub mod capped;
pub mod conversation;
mod database;
pub mod document;
pub mod ident;
pub mod issue;
pub mod order;
pub mod plan;
pub mod scan;
pub mod tree;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

pub use capped::Capped;
pub use issue::{CODES, Issue};
pub use plan::Plan;
pub use scan::{JsonlScan, ScanOptions};

use crate::diag::Severity;
use crate::formats::{self, Format};

#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub scan: ScanOptions,
    /// Report unanswered tool calls without planning to close them.
    pub keep_open_tool_calls: bool,
    /// Read the file as this format instead of detecting it.
    pub format: Option<&'static str>,
    /// Told how many more bytes were checked, as the work goes (for a progress bar).
    pub progress: Option<Progress>,
}

/// A callback taking the number of bytes just checked.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

impl Progress {
    fn add(progress: &Option<Progress>, bytes: u64) {
        if let Some(p) = progress {
            (p.0)(bytes);
        }
    }
}

/// What fsck says about one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub file: String,
    /// `None` when no format recognised the file.
    pub format: Option<&'static str>,
    pub bytes: u64,
    pub records: u64,
    /// In file order (issues without a place last). Of each kind the first
    /// [`capped::LISTED_PER_KIND`] are listed; one issue with `unlisted` set stands for the rest.
    pub issues: Vec<Issue>,
}

impl FileReport {
    /// Issues of this severity, unlisted ones included.
    pub fn count(&self, severity: Severity) -> usize {
        self.weigh(|i| i.severity == severity)
    }

    /// Errors `--repair` cannot fix.
    pub fn unfixable_errors(&self) -> usize {
        self.weigh(|i| i.severity == Severity::Error && !i.fixable())
    }

    pub fn fixable(&self) -> usize {
        self.weigh(Issue::fixable)
    }

    fn weigh(&self, which: impl Fn(&Issue) -> bool) -> usize {
        self.issues
            .iter()
            .filter(|i| which(i))
            .map(|i| i.weight() as usize)
            .sum()
    }

    /// No errors and nothing to fix.
    pub fn is_clean(&self) -> bool {
        self.count(Severity::Error) == 0 && self.fixable() == 0
    }
}

/// A report, and what repair needs to act on it.
pub struct Diagnosis {
    pub report: FileReport,
    /// The file as it was when checked: a repair refuses to replace a file that changed.
    pub stamp: Stamp,
    /// The options it was checked with (a repair checks its result the same way).
    pub options: CheckOptions,
    pub format: Option<&'static dyn Format>,
    pub fixes: Fixes,
}

/// Which file, and in what state: the inode (a file replaced by a rename is another file),
/// its size and its modification time. A repair refuses to replace a file whose stamp moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub len: u64,
    pub modified: Option<std::time::SystemTime>,
    /// Device and inode number (0 where the system has none).
    pub dev: u64,
    pub ino: u64,
}

impl Stamp {
    pub fn of(path: &Path) -> std::io::Result<Stamp> {
        Ok(Stamp::from_metadata(&std::fs::metadata(path)?))
    }

    /// The stamp of an open file (what it is now, wherever its name went).
    pub fn of_file(file: &File) -> std::io::Result<Stamp> {
        Ok(Stamp::from_metadata(&file.metadata()?))
    }

    pub fn from_metadata(m: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            dev,
            ino,
        }
    }

    /// Whether `other` is the same file (inode), whatever its content did since.
    pub fn same_file(&self, other: &Stamp) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

pub enum Fixes {
    None,
    Jsonl { scan: Box<JsonlScan>, plan: Plan },
    Document { rewrite: Option<document::Rewrite> },
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {source}")]
pub struct CheckError {
    pub file: String,
    #[source]
    pub source: std::io::Error,
}

/// Checks one file and keeps what a repair needs.
pub fn diagnose(path: &Path, options: &CheckOptions) -> Result<Diagnosis, CheckError> {
    let file = path.display().to_string();
    // One descriptor for the stamp and every read: the stamp describes the bytes checked.
    let opened = crate::regular_file::open(path).map_err(|source| CheckError {
        file: file.clone(),
        source,
    })?;
    diagnose_open(&opened, Some(path), file, options)
}

/// Checks a file that is already open and has no path of its own (standard input, copied to
/// an unnamed temp file), called `name` in the report.
pub fn check_open(
    file: &File,
    name: &str,
    options: &CheckOptions,
) -> Result<FileReport, CheckError> {
    diagnose_open(file, None, name.to_string(), options).map(|d| d.report)
}

fn diagnose_open(
    opened: &File,
    path: Option<&Path>,
    file: String,
    options: &CheckOptions,
) -> Result<Diagnosis, CheckError> {
    let io = |source| CheckError {
        file: file.clone(),
        source,
    };
    let opened = reopened(opened).map_err(io)?;
    let stamp = Stamp::of_file(&opened).map_err(io)?;
    let mut head = Vec::with_capacity(formats::DETECT_HEAD);
    (&opened)
        .take(formats::DETECT_HEAD as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    let asked = options.format.map(formats::by_name);
    let format = match asked {
        // Read as the wrong format, a file would be all findings, and repaired by another
        // tool's rules: content that plainly is another format's is not checked.
        Some(Some(asked)) => match formats::contradicts(asked, path, &head) {
            Some(found) => {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the content is {}, not {} (the format asked for); not checked: read it as {}, or let the format be detected",
                        found.name(),
                        asked.name(),
                        found.name()
                    ),
                )));
            }
            None => Some(asked),
        },
        Some(None) => None,
        None => formats::detect(path, &head),
    };
    let mut report = FileReport {
        file: file.clone(),
        format: format.map(|f| f.name()),
        bytes: 0,
        records: 0,
        issues: Vec::new(),
    };
    let Some(format) = format else {
        report.bytes = stamp.len;
        Progress::add(&options.progress, report.bytes);
        if let Some((name, issues)) = path.and_then(database::issues) {
            report.format = Some(name);
            report.issues = issues.map_err(|e| io(std::io::Error::other(e)))?;
            return Ok(Diagnosis {
                report,
                stamp,
                options: options.clone(),
                format: None,
                fixes: Fixes::None,
            });
        }
        if let Some(issues) = path.and_then(|p| codex_state_issues(p, &opened)) {
            report.issues = issues.map_err(|e| io(std::io::Error::other(e)))?;
            return Ok(Diagnosis {
                report,
                stamp,
                options: options.clone(),
                format: None,
                fixes: Fixes::None,
            });
        }
        report.issues.push(Issue::new(
            "unknown-format",
            Severity::Warning,
            "not a session file of any supported format (see `sessiontool formats`); not checked",
        ));
        return Ok(Diagnosis {
            report,
            stamp,
            options: options.clone(),
            format: None,
            fixes: Fixes::None,
        });
    };
    let fixes = if format.is_jsonl() {
        let scan_options = ScanOptions {
            expected_bytes: stamp.len,
            ..options.scan
        };
        let progress = |bytes| Progress::add(&options.progress, bytes);
        let mut scan = scan::scan(
            reopened(&opened).map_err(io)?,
            format,
            scan_options,
            &progress,
        )
        .map_err(io)?;
        let mut issues = Capped::default();
        let plan = check_jsonl(&mut scan, format, options, &mut issues);
        if let Some(path) = path.filter(|_| format.name() == "codex-jsonl") {
            // Whether Codex's state database lists it (a store fact, not the file's; none
            // for standard input).
            crate::store::codex_state::index::rollout_issues(path)
                .into_iter()
                .for_each(|i| issues.push(i));
        }
        report.issues = issues.into_issues();
        report.bytes = scan.bytes;
        report.records = scan.records.len() as u64;
        Fixes::Jsonl {
            scan: Box::new(scan),
            plan,
        }
    } else {
        let mut bytes = Vec::with_capacity(stamp.len as usize);
        reopened(&opened)
            .map_err(io)?
            .read_to_end(&mut bytes)
            .map_err(io)?;
        report.bytes = bytes.len() as u64;
        Progress::add(&options.progress, report.bytes);
        let mut issues = Vec::new();
        let (records, rewrite) = document::check(
            &file,
            &bytes,
            format,
            options.keep_open_tool_calls,
            &mut issues,
        );
        let mut capped = Capped::default();
        issues.into_iter().for_each(|i| capped.push(i));
        report.issues = capped.into_issues();
        report.records = records;
        Fixes::Document { rewrite }
    };
    sort(&mut report.issues);
    Ok(Diagnosis {
        report,
        stamp,
        options: options.clone(),
        format: Some(format),
        fixes,
    })
}

/// A Codex state database's findings (rows whose rollout is gone), when `path` is one.
fn codex_state_issues(path: &Path, file: &File) -> Option<Result<Vec<Issue>, String>> {
    let mut head = [0u8; 16];
    let n = reopened(file).ok()?.read(&mut head).ok()?;
    crate::store::codex_state::index::is_state_database(path, &head[..n])
        .then(|| crate::store::codex_state::index::database_issues(path))
}

/// The same open file, read from its start.
fn reopened(file: &File) -> std::io::Result<File> {
    use std::io::{Seek, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(0))?;
    Ok(f)
}

/// Checks one file.
pub fn check_file(path: &Path, options: &CheckOptions) -> Result<FileReport, CheckError> {
    diagnose(path, options).map(|d| d.report)
}

/// Every check on the facts of pass one; returns the fixes.
fn check_jsonl(
    scan: &mut JsonlScan,
    format: &dyn Format,
    options: &CheckOptions,
    issues: &mut Capped<Issue>,
) -> Plan {
    let mut plan = Plan {
        renumber_from: scan.first_bad_seq.filter(|_| format.renumbers().is_some()),
        ..Plan::default()
    };
    let findings = std::mem::take(&mut scan.findings);
    for f in &findings.listed {
        issues.push(issue::from_finding(f));
    }
    for u in &findings.unlisted {
        issues.add_count(issue::from_finding(&u.first), u.count);
    }
    issues.append(std::mem::take(&mut scan.issues));
    if let Some((kind, consequence)) = format.header_kind() {
        order::header(scan, kind, consequence, format.header_first(), issues);
    }
    if let Some(rule) = format.rewind_rule() {
        order::rewinds(scan, rule, issues);
    }
    let nodes = tree::check(scan, issues, &mut plan);
    let conv = conversation::Options {
        keep_open: options.keep_open_tool_calls,
    };
    conversation::check(scan, &nodes, format, &conv, issues, &mut plan);
    plan
}

fn sort(issues: &mut [Issue]) {
    issues.sort_by_key(|i| (i.offset.is_none(), i.offset.unwrap_or(0)));
}

#[cfg(test)]
mod tests;
