//! `relocate`: after a project folder moved from OLD to NEW, re-key every session of OLD (and
//! of folders below it) in every store: project folders named after the path move, the
//! `cwd`/`projectHash` values inside the files are rewritten (only those bytes, see
//! [`rekey`](super::rekey)), and the registries follow (`projects.json` and `.project_root`
//! markers, simple-agent's `meta.json`). All of it goes through one [`Txn`]: staged first,
//! committed only when everything staged, originals kept as `.bak-<stamp>` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::catalog::{self, Entry, Query};
use super::codex_state;
use super::confined;
use super::home::Home;
use super::rekey::{Move, rekey_bytes};
use super::scheme::{Scheme, claude_of_real_path};
use super::stored::{Discovery, FolderKey, Stored};
use super::tool::Tool;
use super::tools;
use super::txn::{Done, Old, Retire, Txn};
use crate::check::Stamp;
use crate::formats;
use crate::ids::sha256_hex;

/// One file to write.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub tool: Option<Tool>,
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub from: PathBuf,
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub to: PathBuf,
    /// What changed inside, in words (`3 cwd, 1 projectHash`), or why it only moves.
    pub inside: String,
    /// The new file is in place already (an interrupted run wrote it): only the old one is
    /// retired.
    pub already: bool,
    #[serde(skip)]
    bytes: Vec<u8>,
    /// The old file as it was read: it is not retired if it changed since.
    #[serde(skip)]
    read: Stamp,
    /// A registry other writers change too: committed under its lock.
    #[serde(skip)]
    registry: bool,
    /// Not a file: the rows of Codex's state database, changed in the same commit.
    #[serde(skip)]
    database: Option<codex_state::relocation::Relocation>,
}

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub changes: Vec<Change>,
    /// Sessions of OLD that cannot be moved, and why (nothing is changed while any exist).
    pub problems: Vec<String>,
    /// Files in a folder named like OLD's that record no project path, so cannot be told to
    /// be OLD's: left where they are, and said so.
    pub left: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Outcome {
    pub plan: Plan,
    pub done: Vec<Done>,
}

pub fn plan(home: &Home, only: &[Tool], mv: &Move) -> Plan {
    let mut plan = Plan::default();
    let query = Query {
        tools: only.to_vec(),
        project: None,
        candidates: vec![mv.old_path().to_string()],
        ..Query::default()
    };
    let entries = catalog::list(home, &query).entries;
    // OpenCode's sessions are rows of its database, which sessiontool only reads: said, not
    // skipped silently.
    let in_database = entries.iter().filter(|e| e.tool == Tool::OpenCode).count();
    if in_database > 0 {
        plan.left.push(format!(
            "{in_database} OpenCode session(s) of {} are rows of its database, which sessiontool only reads: not relocated (OpenCode still finds them under the old folder)",
            mv.old_path()
        ));
    }
    let mut found = Discovery::default();
    for store in tools::all() {
        if only.is_empty() || only.contains(&Tool::of(*store)) {
            store.discover(home, &mut found);
        }
    }
    let by_path: BTreeMap<&str, &Stored> = found
        .files
        .iter()
        .map(|s| (s.path.to_str().unwrap_or(""), s))
        .collect();
    let mut hashed_dirs: BTreeMap<PathBuf, (PathBuf, Tool)> = BTreeMap::new();
    for e in &entries {
        let Some(project) = &e.project else {
            if let Some(stored) = by_path.get(e.path.as_str())
                && matches!(stored.folder, FolderKey::Named { .. })
                && stored.folder.fits(mv.old_path()) != super::stored::Fit::No
            {
                plan.left.push(format!(
                    "{}: records no project path, so it may be another project's (its folder name is shared); left where it is",
                    e.path
                ));
            }
            continue;
        };
        let Some(new_project) = mv.map_path(project) else {
            continue;
        };
        let Some(stored) = by_path.get(e.path.as_str()) else {
            continue;
        };
        match &stored.folder {
            FolderKey::Sha256 { hash } => {
                // The whole folder moves, with everything in it (logs, checkpoints, history).
                if let Some(dir) = ancestor_named(&stored.path, hash) {
                    match renamed(&dir, &sha256_hex(&new_project)) {
                        Ok(to) => {
                            hashed_dirs.insert(dir, (to, e.tool));
                        }
                        Err(err) => plan.problems.push(err.to_string()),
                    }
                }
            }
            FolderKey::Named { scheme, name } => {
                let new_name = match scheme {
                    // Claude Code names a folder after the project's real path.
                    Scheme::Claude => claude_of_real_path(&new_project).name,
                    other => other.folder(&new_project),
                };
                let Some(dir) = ancestor_named(&stored.path, name) else {
                    plan.problems.push(format!(
                        "{}: not below a folder named {name}, as its listing says",
                        stored.path.display()
                    ));
                    continue;
                };
                let rel = stored.path.strip_prefix(&dir).unwrap_or(&stored.path);
                match renamed(&dir, &new_name).and_then(|to| confined::join_all(&to, rel)) {
                    Ok(to) => rewrite(&mut plan, e.tool, Some(e), &stored.path, &to, mv),
                    Err(err) => plan.problems.push(err.to_string()),
                }
            }
            FolderKey::Slug { .. } | FolderKey::None => {
                rewrite(&mut plan, e.tool, Some(e), &stored.path, &stored.path, mv);
            }
        }
    }
    for (from_dir, (to_dir, tool)) in &hashed_dirs {
        move_folder(&mut plan, *tool, from_dir, to_dir, mv);
    }
    for tool in Tool::all().filter(|t| only.is_empty() || only.contains(t)) {
        tool.store().relocate_indexes(home, mv, &mut plan);
    }
    plan
}

/// The rows of Codex's state database that follow the rollouts (and any other row recorded
/// under OLD), as one more change of the plan.
pub(crate) fn codex_database(home: &Home, mv: &Move, plan: &mut Plan) {
    let moved: Vec<codex_state::relocation::Moved> = plan
        .changes
        .iter()
        .filter(|c| c.tool == Some(Tool::Codex) && c.database.is_none())
        .map(|c| codex_state::relocation::Moved {
            from: &c.from,
            to: &c.to,
            bytes: &c.bytes,
        })
        .collect();
    match codex_state::relocation::plan(home, &moved, &|p| mv.map_path(p)) {
        Ok(Some(relocation)) => {
            let db = relocation.database().to_path_buf();
            let read = match Stamp::of(&db) {
                Ok(read) => read,
                Err(e) => {
                    plan.problems
                        .push(format!("cannot read {}: {e}", db.display()));
                    return;
                }
            };
            plan.changes.push(Change {
                tool: Some(Tool::Codex),
                from: db.clone(),
                to: db,
                inside: relocation.describe(),
                already: false,
                bytes: Vec::new(),
                read,
                registry: false,
                database: Some(relocation),
            });
        }
        Ok(None) => {}
        Err(e) => plan.problems.push(e),
    }
}

/// Carries the plan out: stage everything, then commit. Nothing is written when the plan has
/// problems or any file fails to stage.
pub fn execute(home: &Home, plan: Plan, stamp: &str) -> Result<Outcome, (Plan, String)> {
    if !plan.problems.is_empty() {
        return Err((plan, "nothing was changed".into()));
    }
    let mut txn = Txn::new(stamp).within(home);
    for c in &plan.changes {
        if let Some(database) = &c.database {
            txn.finish_with(database.clone().into_finish(stamp));
            continue;
        }
        let old = Old {
            path: &c.from,
            read: c.read,
            retire: Retire::Backup,
        };
        if c.registry {
            txn.lock_for_commit(&c.to);
        }
        let staged = if c.already {
            txn.retire(&c.to, old)
        } else {
            txn.stage(&c.to, &c.bytes, Some(old))
        };
        if let Err(e) = staged {
            let msg = format!("cannot write {}: {e}; nothing was changed", c.to.display());
            return Err((plan, msg));
        }
    }
    match txn.commit() {
        Ok(done) => Ok(Outcome { plan, done }),
        Err((done, e)) => {
            let msg = format!(
                "stopped after {} of {} files: {e} (the files listed as done are in place; the rest are untouched: run relocate again)",
                done.len(),
                plan.changes.len()
            );
            Err((plan, msg))
        }
    }
}

/// A session file re-keyed, at `to` (which may be `from`).
fn rewrite(plan: &mut Plan, tool: Tool, entry: Option<&Entry>, from: &Path, to: &Path, mv: &Move) {
    let (bytes, read) = match crate::io::read_stamped(from) {
        Ok(b) => b,
        Err(e) => {
            plan.problems
                .push(format!("cannot read {}: {e}", from.display()));
            return;
        }
    };
    let format = entry
        .and_then(|e| e.format)
        .and_then(formats::by_name)
        .or_else(|| formats::detect(Some(from), &bytes));
    let (bytes, inside) = match format {
        Some(f) => match rekey_bytes(f, &bytes, mv) {
            Ok((out, rekeyed)) => (out, rekeyed.to_string()),
            Err(e) => {
                plan.problems.push(format!(
                    "{}: {e}; run `sessiontool repair` on it first",
                    from.display()
                ));
                return;
            }
        },
        None => (bytes, "moved as it is (not a session file)".into()),
    };
    if from == to && inside == "nothing" {
        return;
    }
    let mut already = false;
    if from != to && to.exists() {
        match std::fs::read(to) {
            Ok(there) if there == bytes => already = true,
            _ => {
                plan.problems.push(format!(
                    "{} exists already with other content (both the old and the new project folder hold it): compare them and move one away first",
                    to.display()
                ));
                return;
            }
        }
    }
    plan.changes.push(Change {
        tool: Some(tool),
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        inside,
        already,
        bytes,
        read,
        registry: false,
        database: None,
    });
}

/// Every file below a hash-named project folder, to the folder of the new hash.
fn move_folder(plan: &mut Plan, tool: Tool, from_dir: &Path, to_dir: &Path, mv: &Move) {
    let (files, problems) = super::stored::files_below(from_dir);
    plan.problems.extend(problems);
    for rel in files {
        match confined::join_all(to_dir, &rel) {
            Ok(to) => rewrite(plan, tool, None, &from_dir.join(&rel), &to, mv),
            Err(e) => plan.problems.push(e.to_string()),
        }
    }
}

/// `projects.json` entries and `.project_root` markers naming OLD (or below), in the `.gemini`
/// folder `gemini`.
pub(crate) fn gemini_registries(gemini: &Path, mv: &Move, plan: &mut Plan) {
    // Stamps taken before the reads: a change in between shows at the commit.
    let stamps = registry_stamps(gemini);
    match super::gemini_registry::rekeyed(gemini, &|p| mv.map_path(p)) {
        Ok(changes) => {
            for (path, bytes, inside) in changes {
                let Some(&read) = stamps.get(&path) else {
                    plan.problems.push(format!(
                        "{} changed while it was read; run relocate again",
                        path.display()
                    ));
                    continue;
                };
                // Gemini CLI locks projects.json, not the markers.
                let registry = path == super::gemini_registry::registry_path(gemini);
                plan.changes.push(Change {
                    tool: Some(Tool::Gemini),
                    from: path.clone(),
                    to: path,
                    inside,
                    already: false,
                    bytes,
                    read,
                    registry,
                    database: None,
                });
            }
        }
        Err(problems) => plan.problems.extend(problems),
    }
}

/// simple-agent's `meta.json` path index, at `index`.
pub(crate) fn simple_agent_index(index: &Path, mv: &Move, plan: &mut Plan) {
    let index = index.to_path_buf();
    match crate::io::read_stamped(&index) {
        Ok((bytes, read)) => {
            match formats::simple_agent_json::rekey_index(&bytes, &|p| mv.map_path(p)) {
                Ok(Some((bytes, n))) => plan.changes.push(Change {
                    tool: Some(Tool::SimpleAgent),
                    from: index.clone(),
                    to: index,
                    inside: format!("{n} path_index key(s)"),
                    already: false,
                    bytes,
                    read,
                    registry: true,
                    database: None,
                }),
                Ok(None) => {}
                Err(e) => plan.problems.push(format!("{}: {e}", index.display())),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => plan
            .problems
            .push(format!("cannot read {}: {e}", index.display())),
    }
}

/// The stamps of `projects.json` and of every `.project_root` marker, before they are read.
fn registry_stamps(gemini: &Path) -> BTreeMap<PathBuf, Stamp> {
    let mut stamps = BTreeMap::new();
    for f in super::gemini_registry::every_file(gemini) {
        if let Ok(s) = Stamp::of(&f) {
            stamps.insert(f, s);
        }
    }
    stamps
}

/// `dir` renamed to `name` (a name made from a project path), beside it.
fn renamed(dir: &Path, name: &str) -> Result<PathBuf, confined::NotAName> {
    confined::join(dir.parent().unwrap_or(Path::new("")), name)
}

/// The ancestor folder of `path` named `name`.
fn ancestor_named(path: &Path, name: &str) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == name))
        .map(Path::to_path_buf)
}
