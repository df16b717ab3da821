//! `relocate`: after a project folder moved from OLD to NEW, re-key every session of OLD (and
//! of folders below it) in every store: project folders named after the path move, the
//! `cwd`/`projectHash` values inside the files are rewritten (only those bytes, see
//! [`rekey`](super::rekey)), and the registries follow (`projects.json` and `.project_root`
//! markers, simple-agent's `meta.json`, Codex's state database: each tool's module plans its
//! own through [`ToolStore::relocate_indexes`](super::tools::ToolStore::relocate_indexes)).
//! All of it goes through one [`Txn`]: staged first, committed only when everything staged,
//! originals kept as `.bak-<stamp>` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::catalog::{self, Entry, Query};
use super::confined;
use super::home::Home;
use super::rekey::{Move, rekey_bytes};
use super::scheme::{Scheme, claude_of_real_path};
use super::stored::{Discovery, FolderKey, Stored};
use super::tool::Tool;
use super::tools;
use super::txn::{Done, Finish, Old, Retire, Txn};
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
    /// Not a file (the rows of Codex's state database): changed by its own commit, in the
    /// same transaction.
    #[serde(skip)]
    database: Option<Arc<dyn OwnCommit>>,
}

/// A change that is not a file's new bytes, committed with the files of relocate's [`Txn`].
pub(crate) trait OwnCommit: std::fmt::Debug {
    /// The change, made with the files of `stamp`'s commit.
    fn finish(&self, stamp: &str) -> Box<dyn Finish>;
}

impl Change {
    /// A tool's index or registry at `path` (read at `read`), rewritten in place as `bytes`;
    /// `locked`: other writers change it too, so it is committed under its lock.
    pub(crate) fn index(
        tool: Tool,
        path: PathBuf,
        inside: String,
        (bytes, read): (Vec<u8>, Stamp),
        locked: bool,
    ) -> Change {
        Change {
            tool: Some(tool),
            from: path.clone(),
            to: path,
            inside,
            already: false,
            bytes,
            read,
            registry: locked,
            database: None,
        }
    }

    /// A change of the database at `path` (read at `read`) that `commit` makes.
    pub(crate) fn database(
        tool: Tool,
        path: PathBuf,
        inside: String,
        read: Stamp,
        commit: Arc<dyn OwnCommit>,
    ) -> Change {
        Change {
            database: Some(commit),
            ..Change::index(tool, path, inside, (Vec::new(), read), false)
        }
    }

    /// The new bytes of the file.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
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

impl Plan {
    /// The files of `tool` planned so far (not its databases).
    pub(crate) fn files_of(&self, tool: Tool) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(move |c| c.tool == Some(tool) && c.database.is_none())
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
            txn.finish_with(database.finish(stamp));
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
