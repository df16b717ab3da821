//! `switch`: continue a stored session in another tool, in one step. The session (found by
//! [`find`](super::find)) is read, a damaged one repaired on a private copy first (the
//! original is never written), converted with its unanswered tool calls closed where the
//! target's tool does not close them itself (and, on request, cut to a token budget), placed
//! for its project and registered as `convert --store` places (the same code), and the
//! command that resumes it is worked out.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::catalog::Entry;
use super::home::Home;
use super::place::{self, PlaceFailure, Request as PlaceRequest};
use super::resume::{self, Resume};
use super::tool::Tool;
use crate::check::{self, CheckOptions};
use crate::convert::budget::Budget;
use crate::diag::{Diagnostic, LossReport, Severity};
use crate::formats::{self, Format, Input, WriteOptions};
use crate::ids::sha256_hex_bytes;
use crate::repair::{self, RepairOptions};

/// Where to, and how.
#[derive(Clone, Default)]
pub struct Request<'a> {
    /// The format written: the target tool's current one ([`target_format`]).
    pub to: Option<&'static dyn Format>,
    /// The project to place it for; `None`: the one the session records.
    pub project: Option<&'a str>,
    /// `--max-tokens`: see [`crate::convert::budget`].
    pub max_tokens: Option<u64>,
    /// Replace a session file of the same name in the target store (kept as a backup).
    pub force: bool,
    /// Work everything out; write nothing into any store.
    pub dry_run: bool,
    /// The time written where the target needs one the session lacks (ISO 8601).
    pub now: Option<String>,
}

/// The session switched from.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub path: String,
    pub tool: Tool,
    pub format: Option<&'static str>,
    pub id: Option<String>,
    /// sha256 of the bytes read.
    pub sha256: String,
    /// The file held the same bytes when the switch was done (it is never written; a tool
    /// still writing it would change it).
    pub unchanged: bool,
}

/// A damaged source, repaired on a private copy before it was converted.
#[derive(Debug, Clone, Serialize)]
pub struct RepairedCopy {
    pub fixed: usize,
    /// Errors no repair fixes, left as they are.
    pub left: usize,
    /// fsck's codes of what was fixed.
    pub codes: Vec<&'static str>,
    /// Damaged records (torn, not JSON) the repair set aside, and their bytes: not in what
    /// was switched, still in the original.
    pub set_aside_records: usize,
    pub set_aside_bytes: u64,
}

/// The session as written into the target store.
#[derive(Debug, Clone, Serialize)]
pub struct Output {
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub path: PathBuf,
    pub tool: Tool,
    pub format: &'static str,
    pub id: Option<String>,
    /// The registries and indexes told about it (or that would be, on a dry run), in words.
    pub registered: Vec<String>,
    /// `force` replaced a file of the same name: where that one was kept.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::serde_path::lossy_opt"
    )]
    pub replaced: Option<PathBuf>,
}

/// What a switch did (or, on a dry run, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Switched {
    pub dry_run: bool,
    pub source: Source,
    pub repaired: Option<RepairedCopy>,
    pub project: String,
    pub output: Output,
    /// What the reader noticed, and what the conversion did about unanswered calls.
    pub diagnostics: Vec<Diagnostic>,
    /// What the target cannot hold, and what the budget left out.
    pub losses: LossReport,
    pub budget: Option<Budget>,
    /// How to resume it; `None` for a tool without a known command.
    pub resume: Option<Resume>,
    /// Things worth knowing, in words.
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error("{target:?} names no tool to switch to")]
    UnknownTarget { target: String },
    #[error("{path} is already a {tool} session")]
    SameTool {
        path: String,
        tool: Tool,
        resume: Option<Box<Resume>>,
    },
    #[error("{path}: the session records no project folder")]
    NoProject { path: String },
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("the damaged session could not be repaired on a copy: {0}")]
    Repair(String),
    #[error(transparent)]
    Place(#[from] PlaceFailure),
}

impl SwitchError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            SwitchError::UnknownTarget { target } if target == "checkpoint" => Some(
                "a checkpoint needs a tag: `sessiontool recover SESSION --checkpoint TAG` writes one"
                    .into(),
            ),
            SwitchError::UnknownTarget { .. } => Some(format!(
                "one of: {} (or a format one of their stores holds)",
                Tool::names()
            )),
            SwitchError::SameTool { resume, .. } => Some(match resume {
                Some(r) => format!("nothing to switch; resume it with: {}", r.shell),
                None => "nothing to switch".into(),
            }),
            SwitchError::NoProject { .. } => {
                Some("name the project folder to continue it in with --project DIR".into())
            }
            SwitchError::Read { .. } | SwitchError::Repair(_) => {
                Some("`sessiontool fsck FILE` says what is wrong with it".into())
            }
            SwitchError::Place(PlaceFailure::Exists(_)) => Some(
                "it was switched before: pass --force to replace that copy (it is kept as a backup)"
                    .into(),
            ),
            SwitchError::Place(PlaceFailure::Convert(c)) => c.hint(),
            SwitchError::Place(_) => None,
        }
    }
}

/// The format a switch to `name` writes: a tool's current format (`claude` → `claude-jsonl`),
/// or a format a tool's store holds (`gemini-json` for Gemini CLI before v0.39).
pub fn target_format(name: &str) -> Result<&'static dyn Format, SwitchError> {
    let unknown = || SwitchError::UnknownTarget {
        target: name.to_string(),
    };
    let format = match Tool::by_name(name) {
        Some(tool) => formats::by_name(tool.current_format()),
        None => formats::by_name(name).filter(|f| Tool::of_format(f.name()).is_some()),
    }
    .ok_or_else(unknown)?;
    // A checkpoint is saved under a tag and resumed inside the CLI: not a switch.
    if format.name() == "checkpoint" {
        return Err(unknown());
    }
    Ok(format)
}

/// Switches the stored session `entry` into the store of `request.to`'s tool.
pub fn switch(home: &Home, entry: &Entry, request: &Request) -> Result<Switched, SwitchError> {
    let to = request.to.ok_or_else(|| SwitchError::UnknownTarget {
        target: String::new(),
    })?;
    let tool = Tool::of_format(to.name()).ok_or_else(|| SwitchError::UnknownTarget {
        target: to.name().to_string(),
    })?;
    if entry.tool.read_only() {
        return Err(SwitchError::Read {
            path: entry.path.clone(),
            message: format!(
                "a session in {}'s database is not switched yet: `sessiontool convert '{}' --to FORMAT --store --project DIR` places it in another tool's store",
                entry.tool, entry.path
            ),
        });
    }
    let source_path = PathBuf::from(&entry.path);
    if entry.tool == tool {
        let resume = entry.project.as_deref().and_then(|p| {
            resume::command(home, tool, entry.id.as_deref(), &source_path, p).map(Box::new)
        });
        return Err(SwitchError::SameTool {
            path: entry.path.clone(),
            tool,
            resume,
        });
    }
    let project = request
        .project
        .map(str::to_string)
        .or_else(|| entry.project.clone())
        .ok_or_else(|| SwitchError::NoProject {
            path: entry.path.clone(),
        })?;
    // A store that cannot take it (a damaged or linked registry) refuses before any work.
    place::preflight(home, to, &project)?;
    let read_error = |e: std::io::Error| SwitchError::Read {
        path: entry.path.clone(),
        message: e.to_string(),
    };
    let original = crate::regular_file::read(&source_path).map_err(read_error)?;
    let sha256 = sha256_hex_bytes(&original);
    let mut notes = Vec::new();
    let copy = repair_copy(&source_path, &original, &mut notes)?;
    let (bytes, input_path, repaired) = match &copy {
        Some(c) => (
            std::fs::read(&c.path).map_err(|e| SwitchError::Repair(e.to_string()))?,
            c.path.as_path(),
            Some(c.report.clone()),
        ),
        None => (original, source_path.as_path(), None),
    };
    let options = WriteOptions {
        now: request.now.clone(),
        max_tokens: request.max_tokens,
        close_open_calls: true,
        ..WriteOptions::default()
    };
    let input = Input {
        name: &entry.path,
        path: Some(input_path),
        bytes: &bytes,
    };
    let placed = place::place(
        home,
        &input,
        &PlaceRequest {
            from: entry.format.and_then(formats::by_name),
            to,
            project: &project,
            tag: None,
            options: &options,
            force: request.force,
            dry_run: request.dry_run,
        },
    )?;
    drop(copy);
    let mut losses = placed.conversion.losses.clone();
    if let Some(r) = &repaired {
        losses.add(
            "repair-set-aside",
            r.set_aside_records,
            format!(
                "damaged records ({} bytes: cut off or not JSON) the repair of a copy set aside; they stay in the original, which was not changed",
                r.set_aside_bytes
            ),
        );
    }
    let unchanged = crate::regular_file::read(&source_path)
        .map(|now| sha256_hex_bytes(&now) == sha256)
        .unwrap_or(false);
    if !unchanged {
        notes.push(format!(
            "{} changed while it was switched (is its tool still writing it?): what was switched is the session as it was read (sha256 {sha256})",
            entry.path
        ));
    }
    if !Path::new(&project).is_dir() {
        notes.push(format!(
            "the project folder {project} does not exist here: create it, or switch again with --project DIR, before resuming"
        ));
    }
    let resume = resume::command(home, tool, placed.id.as_deref(), &placed.path, &project);
    if resume.is_none() {
        notes.push(format!(
            "{tool} has no command sessiontool knows to resume a session: open {} in it",
            placed.path.display()
        ));
    }
    Ok(Switched {
        dry_run: request.dry_run,
        source: Source {
            path: entry.path.clone(),
            tool: entry.tool,
            format: entry.format,
            id: entry.id.clone(),
            sha256,
            unchanged,
        },
        repaired,
        project,
        output: Output {
            path: placed.path,
            tool,
            format: to.name(),
            id: placed.id,
            registered: placed.registered,
            replaced: placed.conversion.replaced.clone(),
        },
        diagnostics: placed.conversion.diagnostics.clone(),
        losses,
        budget: placed.conversion.budget.clone(),
        resume,
        notes,
    })
}

/// fsck's code for a tool call without a result: the conversion closes those itself.
const OPEN_CALL: &str = "tool-call-unanswered";

/// A damaged source repaired in a private temporary folder (removed when this is dropped).
struct Copy {
    _dir: tempfile::TempDir,
    path: PathBuf,
    report: RepairedCopy,
}

/// When fsck finds something to repair in `source` (unanswered tool calls aside: the
/// conversion closes those in the target's own shape, where its tool needs it), `bytes`
/// (the source as read) are repaired in a copy of the same name in a private folder.
fn repair_copy(
    source: &Path,
    bytes: &[u8],
    notes: &mut Vec<String>,
) -> Result<Option<Copy>, SwitchError> {
    let check_options = CheckOptions {
        keep_open_tool_calls: true,
        ..CheckOptions::default()
    };
    let failed = |e: &dyn std::fmt::Display| SwitchError::Repair(e.to_string());
    let report = check::check_file(source, &check_options).map_err(|e| failed(&e))?;
    let unfixable: u64 = report
        .issues
        .iter()
        .filter(|i| !i.fixable() && i.code != OPEN_CALL && i.severity == Severity::Error)
        .map(check::Issue::weight)
        .sum();
    if unfixable > 0 {
        let mut codes: Vec<&str> = report
            .issues
            .iter()
            .filter(|i| !i.fixable() && i.code != OPEN_CALL && i.severity == Severity::Error)
            .map(|i| i.code)
            .collect();
        codes.sort_unstable();
        codes.dedup();
        notes.push(format!(
            "fsck finds {unfixable} error(s) in the source no repair fixes ({}): the session was switched as its reader reads it",
            codes.join(", ")
        ));
    }
    if report.fixable() == 0 {
        return Ok(None);
    }
    let dir = tempfile::Builder::new()
        .prefix("sessiontool-switch-")
        .tempdir()
        .map_err(|e| failed(&e))?;
    let name = source
        .file_name()
        .map_or_else(|| "session".into(), |n| n.to_os_string());
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).map_err(|e| failed(&e))?;
    let diagnosis = check::diagnose(&path, &check_options).map_err(|e| failed(&e))?;
    let repaired = repair::repair(
        &path,
        diagnosis,
        &RepairOptions {
            no_backup: true,
            // The copy is sessiontool's own: nobody is writing it.
            quiet: Some(std::time::Duration::ZERO),
            ..RepairOptions::default()
        },
    )
    .map_err(|e| failed(&e))?;
    // The sidecar holds each piece set aside on a line of its own.
    let sidecar = repaired
        .sidecar
        .as_ref()
        .map(std::fs::read)
        .transpose()
        .map_err(|e| failed(&e))?
        .unwrap_or_default();
    let set_aside_records = memchr::memchr_iter(b'\n', &sidecar).count();
    let set_aside_bytes = (sidecar.len() - set_aside_records) as u64;
    let mut codes: Vec<&'static str> = repaired.fixed.iter().map(|i| i.code).collect();
    codes.sort_unstable();
    codes.dedup();
    Ok(Some(Copy {
        _dir: dir,
        path,
        report: RepairedCopy {
            fixed: check::Issue::total(&repaired.fixed) as usize,
            left: check::Issue::total(&repaired.left) as usize,
            codes,
            set_aside_records,
            set_aside_bytes,
        },
    }))
}
