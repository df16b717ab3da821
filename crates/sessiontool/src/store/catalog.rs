//! What `list` shows of each stored session: read it, count its messages, find its project,
//! and give it a health mark from fsck.

use std::path::Path;

use jiff::Timestamp;
use rayon::prelude::*;
use serde::Serialize;

use super::home::Home;
use super::stored::{Discovery, Fit, FolderKey, Stored, StoredKind};
use super::tool::Tool;
use super::tools;
use crate::check::{self, CheckOptions};
use crate::diag::Severity;
use crate::engine::view::HeadBranch;
use crate::engine::view::View;
use crate::engine::{FileSource, Source};
use crate::formats::{self, Input};
use crate::ids::sha256_hex;
use crate::model::{Meta, Session};

/// One session as `list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub tool: Tool,
    pub path: String,
    #[serde(flatten)]
    pub kind: StoredKind,
    pub format: Option<&'static str>,
    pub id: Option<String>,
    /// The project path, when the file, its folder or a known path's hash says it.
    pub project: Option<String>,
    pub start: Option<String>,
    /// The last update the file records, else its modification time (RFC 3339).
    pub updated: Option<String>,
    /// User and assistant messages on the branch the tool resumes.
    pub messages: usize,
    pub title: Option<String>,
    pub first_prompt: Option<String>,
    pub health: Health,
    /// What fsck found, in a few words (empty when healthy).
    pub findings: Vec<String>,
    pub bytes: u64,
    /// The same session in the layout or format the tool uses now (a legacy Qwen file already
    /// migrated, a Gemini `.json` beside the `.jsonl` the CLI wrote when it was resumed).
    pub superseded_by: Option<String>,
    #[serde(skip)]
    hashed_folder: bool,
    #[serde(skip)]
    sort_key: Option<Timestamp>,
}

/// A quick check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    Ok,
    /// Warnings only: the tool resumes it.
    Warnings,
    /// Errors `sessiontool repair` fixes.
    Repairable,
    /// Errors no repair fixes, or a file no reader understands.
    Broken,
}

impl Health {
    /// A one-character mark for tables.
    pub fn mark(self) -> &'static str {
        match self {
            Health::Ok => "ok",
            Health::Warnings => "warn",
            Health::Repairable => "REPAIR",
            Health::Broken => "BROKEN",
        }
    }
}

/// Told `(files read, files to read)` as the catalog reads the sessions (for a progress bar).
#[derive(Clone)]
pub struct Tick(pub std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>);

impl std::fmt::Debug for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tick")
    }
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only these tools (all when empty).
    pub tools: Vec<Tool>,
    /// Only this project (absolute path); `None` lists every project.
    pub project: Option<String>,
    /// Paths that sha256 folders may be the hash of (the current folder, paths named by the
    /// user); every project path seen in the stores is tried too.
    pub candidates: Vec<String>,
    pub progress: Option<Tick>,
}

/// The catalog: entries newest first, and what discovery could not read.
#[derive(Debug, Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
    pub problems: Vec<String>,
    pub own_files: usize,
}

pub fn list(home: &Home, query: &Query) -> Catalog {
    let mut found = Discovery::default();
    for store in tools::all() {
        if query.tools.is_empty() || query.tools.contains(&Tool::of(*store)) {
            store.discover(home, &mut found);
        }
    }
    let wanted: Vec<Stored> = found
        .files
        .into_iter()
        .filter(|s| match &query.project {
            Some(p) => s.folder.fits(p) != Fit::No,
            None => true,
        })
        .collect();
    let read = std::sync::atomic::AtomicUsize::new(0);
    let mut entries: Vec<Entry> = wanted
        .par_iter()
        .map(|s| {
            let e = entry(s);
            if let Some(Tick(tick)) = &query.progress {
                let n = read.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                tick(n, wanted.len());
            }
            e
        })
        .collect();
    resolve_hashes(&mut entries, &wanted, query);
    let mut problems = found.problems;
    for tool in Tool::all().filter(|t| query.tools.is_empty() || query.tools.contains(t)) {
        entries.extend(tool.store().database_entries(home, &mut problems));
    }
    if let Some(project) = &query.project {
        entries.retain(|e| belongs(e, project));
    }
    mark_superseded(&mut entries);
    entries.sort_by(|a, b| b.sort_key.cmp(&a.sort_key).then(a.path.cmp(&b.path)));
    for tool in Tool::all().filter(|t| query.tools.is_empty() || query.tools.contains(t)) {
        problems.extend(tool.store().index_problems(home, query.project.as_deref()));
    }
    Catalog {
        entries,
        problems,
        own_files: found.own_files,
    }
}

/// Whether an entry that survived the folder check is the project's: its folder proved it,
/// or the path recorded inside says so; a folder name that fits decides when the file records
/// no path.
fn belongs(entry: &Entry, project: &str) -> bool {
    match &entry.project {
        Some(p) => p == project,
        None => false,
    }
}

/// Gives entries in sha256 folders (and entries without a recorded path) the project whose
/// hash matches, trying every path the catalog knows and the query's candidates.
fn resolve_hashes(entries: &mut [Entry], stored: &[Stored], query: &Query) {
    let mut known: Vec<String> = entries.iter().filter_map(|e| e.project.clone()).collect();
    known.extend(query.candidates.iter().cloned());
    known.extend(query.project.iter().cloned());
    known.sort();
    known.dedup();
    let hashes: Vec<(String, &String)> = known.iter().map(|p| (sha256_hex(p), p)).collect();
    for (entry, s) in entries.iter_mut().zip(stored) {
        if entry.project.is_some() {
            continue;
        }
        entry.project = match &s.folder {
            FolderKey::Sha256 { hash } => hashes
                .iter()
                .find(|(h, _)| h == hash)
                .map(|(_, p)| (*p).clone()),
            // A folder named from the path with nothing recorded inside: the query's project
            // when the name fits it.
            FolderKey::Named { .. } => query
                .project
                .clone()
                .filter(|p| s.folder.fits(p) == Fit::AskContent),
            _ => None,
        };
    }
}

/// Links an older copy of a session to the copy its tool reads first: the one in the tool's
/// current format, and for Gemini in a slug folder rather than the sha256 folder the CLI
/// copied it from.
fn mark_superseded(entries: &mut [Entry]) {
    let rank = |e: &Entry| {
        u8::from(e.format == Some(e.tool.current_format())) * 2 + u8::from(!e.hashed_folder)
    };
    let mut best: std::collections::HashMap<(Tool, String), (u8, String)> = Default::default();
    for e in entries.iter().filter(|e| e.kind != StoredKind::Unreadable) {
        let (Some(id), false) = (&e.id, matches!(e.kind, StoredKind::Checkpoint { .. })) else {
            continue;
        };
        let r = rank(e);
        let slot = best
            .entry((e.tool, id.clone()))
            .or_insert((r, e.path.clone()));
        if r > slot.0 {
            *slot = (r, e.path.clone());
        }
    }
    for e in entries.iter_mut() {
        let Some(id) = &e.id else { continue };
        if let Some((r, path)) = best.get(&(e.tool, id.clone()))
            && *r > rank(e)
        {
            e.superseded_by = Some(path.clone());
        }
    }
}

fn entry(stored: &Stored) -> Entry {
    let path = &stored.path;
    let meta = std::fs::metadata(path).ok();
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| Timestamp::try_from(t).ok());
    let mut e = Entry {
        tool: stored.tool,
        path: path.display().to_string(),
        kind: stored.kind.clone(),
        format: None,
        id: None,
        project: stored.folder.project().map(String::from),
        start: None,
        updated: mtime.map(|t| t.to_string()),
        messages: 0,
        title: None,
        first_prompt: None,
        health: Health::Broken,
        findings: Vec::new(),
        bytes: meta.map(|m| m.len()).unwrap_or(0),
        superseded_by: None,
        hashed_folder: matches!(stored.folder, FolderKey::Sha256 { .. }),
        sort_key: mtime,
    };
    if let Err(err) = read_file(&mut e, path) {
        e.findings.push(format!("cannot read: {err}"));
    }
    e
}

/// Fills in what the file at `path` says: read in two passes when the format allows it
/// ([`View`]: the same answers in memory bounded by its number of records), else whole.
fn read_file(e: &mut Entry, path: &Path) -> std::io::Result<()> {
    let source = FileSource::new(crate::regular_file::open(path)?)?;
    let Some(view) = View::open(&e.path, Some(path), &source, None)? else {
        let mut bytes = Vec::with_capacity(source.len() as usize);
        std::io::Read::read_to_end(&mut source.file(), &mut bytes)?;
        read(e, path, &bytes);
        return Ok(());
    };
    let format = view.format();
    e.format = Some(format.name());
    describe_meta(e, view.meta());
    let branch = view.head_branch(|text| is_first_prompt(Some(format), text))?;
    e.messages = branch.messages;
    e.first_prompt = branch.first_prompt.map(|t| one_line(&t, 80));
    health(e, path);
    Ok(())
}

/// Fills in what the file's `bytes` say.
fn read(e: &mut Entry, path: &Path, bytes: &[u8]) {
    let input = Input {
        name: &e.path,
        path: Some(path),
        bytes,
    };
    match formats::detect(Some(path), bytes) {
        Some(format) => {
            e.format = Some(format.name());
            match format.read(&input) {
                Ok(outcome) => describe(e, &outcome.session),
                Err(err) => {
                    e.findings.push(err.to_string());
                    // A document cut off by a crash: its complete part still names the
                    // session (id, times, first prompt), as a repair will keep it.
                    let saved = format.salvage(bytes).and_then(|s| {
                        let input = Input {
                            bytes: &s.document,
                            ..input
                        };
                        format.read(&input).ok()
                    });
                    if let Some(outcome) = saved {
                        describe(e, &outcome.session);
                    }
                }
            }
        }
        None => e.findings.push("no format recognises this file".into()),
    }
    health(e, path);
}

/// The sessions in OpenCode's databases (rows, not files), each read as `show` reads it: its
/// health is what that reading says (sessiontool never repairs a database).
pub(crate) fn database_entries(home: &Home, problems: &mut Vec<String>) -> Vec<Entry> {
    use crate::formats::database::{self, DatabaseFormat};
    let format = &crate::formats::opencode::OpenCodeDb;
    let mut out = Vec::new();
    for db in tools::opencode::databases(home) {
        if !db.exists() {
            continue;
        }
        let rows = match format.sessions(&db) {
            Ok(rows) => rows,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        for row in rows {
            let address = database::Address {
                db: db.clone(),
                session: row.id.clone(),
            };
            let mut e = Entry {
                tool: Tool::OpenCode,
                path: address.name(),
                kind: match row.parent {
                    Some(_) => StoredKind::Subagent,
                    None => StoredKind::Session,
                },
                format: Some(format.name()),
                id: Some(row.id.clone()),
                project: row.directory.clone(),
                start: row.created.clone(),
                updated: row.updated.clone(),
                messages: 0,
                title: row.title.clone(),
                first_prompt: None,
                health: Health::Broken,
                findings: Vec::new(),
                bytes: 0,
                superseded_by: None,
                hashed_folder: false,
                sort_key: row.updated.as_deref().and_then(|t| t.parse().ok()),
            };
            match database::read(&address, format) {
                Ok(outcome) => {
                    describe(&mut e, &outcome.session);
                    let worst = outcome.diagnostics.iter().map(|d| d.severity).max();
                    e.health = match worst {
                        Some(Severity::Error) => Health::Broken,
                        Some(Severity::Warning) => Health::Warnings,
                        _ => Health::Ok,
                    };
                    e.findings = outcome
                        .diagnostics
                        .iter()
                        .filter(|d| d.severity >= Severity::Warning)
                        .map(|d| d.code.to_string())
                        .collect();
                }
                Err(err) => e.findings.push(err.to_string()),
            }
            out.push(e);
        }
    }
    out
}

/// Fills in what `session` says.
fn describe(e: &mut Entry, session: &Session) {
    let format = e.format.and_then(formats::by_name);
    describe_meta(e, &session.meta);
    let tree = session.tree();
    let path = tree.head().map(|h| tree.path_to(h)).unwrap_or_default();
    let mut branch = HeadBranch::default();
    for &i in &path {
        if let Some(m) = tree.node(i).message() {
            branch.note(m, |text| is_first_prompt(format, text));
        }
    }
    e.messages += branch.messages;
    e.first_prompt = e
        .first_prompt
        .take()
        .or(branch.first_prompt.map(|t| one_line(&t, 80)));
}

/// Whether the text of a user message is the prompt `list` shows: not empty, and not the
/// context a tool sends before it.
fn is_first_prompt(format: Option<&dyn formats::Format>, text: &str) -> bool {
    !text.trim().is_empty() && !format.is_some_and(|f| f.is_context_message(text))
}

/// Fills in what the session's metadata says.
fn describe_meta(e: &mut Entry, meta: &Meta) {
    e.id = meta.id.clone();
    e.start = meta.start_time.clone();
    if let Some(updated) = &meta.last_updated {
        e.updated = Some(updated.clone());
        if let Ok(t) = updated.parse::<Timestamp>() {
            e.sort_key = Some(t);
        }
    }
    e.title = [&meta.title, &meta.summary]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
        .cloned();
    if e.project.is_none() {
        e.project = recorded_project(meta);
    }
}

/// The project a session records: its `cwd`, or the one of its `directories` whose hash is
/// its `projectHash`.
fn recorded_project(meta: &Meta) -> Option<String> {
    if let Some(cwd) = &meta.cwd {
        return Some(cwd.clone());
    }
    let dirs = meta.directories.as_deref().unwrap_or_default();
    match &meta.project_hash {
        Some(hash) => dirs.iter().find(|d| sha256_hex(d) == *hash).cloned(),
        None => None,
    }
}

fn health(e: &mut Entry, path: &Path) {
    if e.kind == StoredKind::Unreadable {
        e.findings
            .insert(0, "the tool could not read it and set it aside".into());
    }
    if e.format.is_none() {
        e.health = Health::Broken;
        return;
    }
    match check::check_file(path, &CheckOptions::default()) {
        Ok(report) => {
            e.health = if report.unfixable_errors() > 0 {
                Health::Broken
            } else if report.fixable() > 0 || report.count(Severity::Error) > 0 {
                Health::Repairable
            } else if report.count(Severity::Warning) > 0 {
                Health::Warnings
            } else {
                Health::Ok
            };
            let mut codes: Vec<&str> = report.issues.iter().map(|i| i.code).collect();
            codes.dedup();
            e.findings.extend(codes.into_iter().map(String::from));
            if e.kind == StoredKind::Unreadable && e.health < Health::Repairable {
                // Readable now, but the tool will not look at it under this name.
                e.health = Health::Repairable;
            }
        }
        Err(err) => {
            e.health = Health::Broken;
            e.findings.push(err.to_string());
        }
    }
}

/// The first line of `text`, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max - 1).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// What `list` shows of a session file found outside every store: its tool is the one whose
/// format it is, its project the one it records. `None` when no tool's format reads it.
pub fn entry_of_file(path: &Path) -> Option<Entry> {
    let mut head = Vec::with_capacity(formats::DETECT_HEAD);
    let file = crate::regular_file::open(path).ok()?;
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, formats::DETECT_HEAD as u64),
        &mut head,
    )
    .ok()?;
    let format = formats::detect(Some(path), &head)?;
    let tool = Tool::of_format(format.name())?;
    Some(entry(&Stored {
        tool,
        path: path.to_path_buf(),
        kind: StoredKind::Session,
        folder: FolderKey::None,
    }))
}

#[cfg(test)]
mod tests;
