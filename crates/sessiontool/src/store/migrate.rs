//! `migrate`: move a tool's store from one folder naming scheme to another, as the tool's
//! newer version expects it: Gemini CLI `tmp/<sha256>` -> slug folders registered in
//! `projects.json` with `.project_root` markers (and back, for an older CLI); Qwen Code's
//! legacy `tmp/<sha256>/chats/*.json` -> `projects/<dashed>/chats/<id>.jsonl`, converted.
//! Copies are staged and committed through a [`Txn`] (each copy checked against the hash of
//! what was staged), written sessions are checked with fsck, and the old files are deleted
//! only when asked (`--move`), after all that.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::catalog::{self, Entry, Query};
use super::confined;
use super::gemini_registry;
use super::home::Home;
use super::place::{self, Request};
use super::scheme::Scheme;
use super::stored::{StoredKind, files_below};
use super::tool::Tool;
use super::txn::{Done, Old, Retire, Txn};
use crate::check::Stamp;
use crate::check::{self, CheckOptions};
use crate::formats::{self, Input, WriteOptions};
use crate::ids::sha256_hex;

#[derive(Debug, Clone, Serialize)]
pub struct Copy {
    #[serde(serialize_with = "crate::serde_path::lossy_opt")]
    pub from: Option<PathBuf>,
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub to: PathBuf,
    pub project: String,
    /// `copy`, `convert` (with the number of items the target format cannot hold), or
    /// `register`.
    pub how: String,
    /// The copy is in place already (an earlier run made it); with `--move` only the old
    /// file is deleted.
    pub already: bool,
    #[serde(skip)]
    bytes: Vec<u8>,
    /// The file this copy comes from or replaces, as it was read (nothing is retired or
    /// replaced if it changed since).
    #[serde(skip)]
    read: Option<Stamp>,
}

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub copies: Vec<Copy>,
    /// Files already in place with the same content (migrated before, by the tool or by us).
    #[serde(serialize_with = "crate::serde_path::lossy_vec")]
    pub already: Vec<PathBuf>,
    /// What blocks the migration (nothing is written while any exist).
    pub problems: Vec<String>,
    /// Files left where they are, and why.
    pub left: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Outcome {
    pub done: Vec<Done>,
    /// fsck findings on the written sessions (errors only; empty when all check clean).
    pub check: Vec<String>,
}

/// What a tool's store can be migrated to.
pub fn targets(tool: Tool) -> Vec<Scheme> {
    tool.store().migrations().iter().map(|m| m.to).collect()
}

/// A migration a tool's module declares ([`ToolStore::migrations`](super::tools::ToolStore::migrations)):
/// the scheme it moves the store to and the step that plans it.
pub struct Migration {
    pub to: Scheme,
    pub(crate) plan: fn(&Home, &[Entry], Scheme, &[String], &mut Plan),
}

impl Migration {
    /// Gemini CLI's folders copied into the other of its two schemes.
    pub(crate) const fn gemini(to: Scheme) -> Migration {
        Migration {
            to,
            plan: gemini_folders,
        }
    }

    /// Qwen Code's legacy sessions (`tmp/<sha256>`) rewritten into its projects folders.
    pub(crate) const fn qwen_legacy() -> Migration {
        Migration {
            to: Scheme::Dashed,
            plan: |home, entries, _, _, plan| qwen_legacy(home, entries, plan),
        }
    }
}

pub fn plan(home: &Home, tool: Tool, to: Scheme, candidates: &[String]) -> Plan {
    let mut plan = Plan::default();
    let mut query = Query {
        tools: vec![tool],
        project: None,
        candidates: candidates.to_vec(),
        ..Query::default()
    };
    // Paths recorded by every tool help to name sha256 folders.
    query.candidates.extend(
        catalog::list(home, &Query::default())
            .entries
            .into_iter()
            .filter_map(|e| e.project),
    );
    let entries = catalog::list(home, &query).entries;
    match tool.store().migrations().iter().find(|m| m.to == to) {
        Some(migration) => (migration.plan)(home, &entries, to, &query.candidates, &mut plan),
        None => plan.problems.push(format!(
            "{tool}'s store cannot be migrated to {}; it can go to: {}",
            to.name(),
            match targets(tool).as_slice() {
                [] => "nothing (it has one layout)".to_string(),
                t => t.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
            }
        )),
    }
    plan
}

/// Gemini: every project folder of the other scheme is copied, file by file, into the
/// folder the target scheme gives its project.
fn gemini_folders(
    home: &Home,
    entries: &[Entry],
    to: Scheme,
    candidates: &[String],
    plan: &mut Plan,
) {
    let gemini = Tool::Gemini.folder(home);
    // Nothing is written through a damaged registry: not even beside it.
    if let Some(damage) = gemini_registry::damage(&gemini) {
        plan.problems.push(damage);
        return;
    }
    let tmp = gemini.join("tmp");
    let Ok(dirs) = std::fs::read_dir(&tmp) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = dirs
        .flatten()
        .map(|d| d.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let hashes: BTreeMap<String, &String> = candidates.iter().map(|c| (sha256_hex(c), c)).collect();
    let mut slugs_claimed: BTreeMap<String, String> = BTreeMap::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let hashed = super::tools::is_sha256(&name);
        if hashed != (to == Scheme::GeminiSlug) {
            continue; // already in the target scheme
        }
        let project = if hashed {
            project_in(entries, &dir).or_else(|| hashes.get(&name).map(|p| (*p).clone()))
        } else {
            gemini_registry::project_of_slug(&gemini, &name)
        };
        let Some(project) = project else {
            plan.problems.push(format!(
                "cannot tell which project {} belongs to: run in that project or pass --project DIR (its sha256 must be the folder name)",
                dir.display()
            ));
            continue;
        };
        let target_name = if to == Scheme::Sha256 {
            sha256_hex(&project)
        } else {
            let (slug, source) = match gemini_registry::slug_for(&gemini, &project) {
                Ok(found) => found,
                Err(e) => {
                    plan.problems.push(e.to_string());
                    continue;
                }
            };
            let slug = slugs_claimed.get(&project).cloned().unwrap_or(slug);
            slugs_claimed.insert(project.clone(), slug.clone());
            register(&gemini, &project, &slug, source, plan);
            slug
        };
        match confined::join(&tmp, &target_name) {
            Ok(target) => copy_folder(&dir, &target, &project, plan),
            Err(e) => plan.problems.push(e.to_string()),
        }
    }
}

/// Registers the project's slug where it is not yet, and writes its markers where they are
/// missing (also after an interrupted run that registered it but wrote no marker).
fn register(
    gemini: &Path,
    project: &str,
    slug: &str,
    source: gemini_registry::SlugSource,
    plan: &mut Plan,
) {
    if source != gemini_registry::SlugSource::Registered {
        register_entry(gemini, project, slug, plan);
    }
    let markers = match gemini_registry::markers(gemini, slug) {
        Ok(markers) => markers,
        Err(e) => {
            plan.problems.push(e.to_string());
            return;
        }
    };
    for marker in markers {
        if !marker.exists() && !plan.copies.iter().any(|c| c.to == marker) {
            plan.copies.push(Copy {
                from: None,
                to: marker,
                project: project.into(),
                how: "register".into(),
                already: false,
                bytes: project.as_bytes().to_vec(),
                read: None,
            });
        }
    }
}

fn register_entry(gemini: &Path, project: &str, slug: &str, plan: &mut Plan) {
    let registry = gemini_registry::registry_path(gemini);
    // Several projects may register in one run: build on what is already planned.
    let planned = plan.copies.iter().rposition(|c| c.to == registry);
    // Taken before the read: a change in between shows at the commit.
    let read = Stamp::of(&registry).ok();
    let result = match planned {
        Some(i) => gemini_registry::registry_bytes_with(
            Some(&plan.copies[i].bytes),
            &registry,
            None,
            project,
            slug,
        ),
        None => gemini_registry::registry_with(gemini, None, project, slug),
    };
    match (result, planned) {
        (Ok(bytes), Some(i)) => plan.copies[i].bytes = bytes,
        (Ok(bytes), None) => plan.copies.push(Copy {
            from: None,
            to: registry,
            project: project.into(),
            how: "register".into(),
            already: false,
            bytes,
            read,
        }),
        (Err(e), _) => plan.problems.push(e.to_string()),
    }
}

fn copy_folder(from: &Path, to: &Path, project: &str, plan: &mut Plan) {
    let (files, problems) = files_below(from);
    plan.problems.extend(problems);
    // A slug folder's own marker is written by the registration, not copied.
    for rel in files
        .iter()
        .filter(|r| r.file_name() != Some(".project_root".as_ref()))
    {
        let source = from.join(rel);
        let target = match confined::join_all(to, rel) {
            Ok(target) => target,
            Err(e) => {
                plan.problems.push(e.to_string());
                continue;
            }
        };
        let (bytes, read) = match crate::io::read_stamped(&source) {
            Ok(b) => b,
            Err(e) => {
                plan.problems
                    .push(format!("cannot read {}: {e}", source.display()));
                continue;
            }
        };
        match std::fs::read(&target) {
            Ok(there) if there == bytes => {
                plan.copies.push(Copy {
                    from: Some(source),
                    to: target,
                    project: project.into(),
                    how: "copy".into(),
                    already: true,
                    bytes: Vec::new(),
                    read: Some(read),
                });
            }
            Ok(_) => plan.problems.push(format!(
                "{} exists with other content than {}: compare them and move one away first",
                target.display(),
                source.display()
            )),
            Err(_) => plan.copies.push(Copy {
                from: Some(source),
                to: target,
                project: project.into(),
                how: "copy".into(),
                already: false,
                bytes,
                read: Some(read),
            }),
        }
    }
}

/// Qwen Code: each legacy JSON session becomes a JSONL session in the project's folder.
fn qwen_legacy(home: &Home, entries: &[Entry], plan: &mut Plan) {
    let options = WriteOptions::default();
    for e in entries.iter().filter(|e| e.kind == StoredKind::Legacy) {
        let Some(project) = &e.project else {
            plan.problems.push(format!(
                "cannot tell which project {} belongs to: run in that project or pass --project DIR",
                e.path
            ));
            continue;
        };
        if let Some(newer) = &e.superseded_by {
            plan.already.push(PathBuf::from(newer));
            continue;
        }
        let (bytes, read) = match crate::io::read_stamped(Path::new(&e.path)) {
            Ok(b) => b,
            Err(err) => {
                plan.problems.push(format!("cannot read {}: {err}", e.path));
                continue;
            }
        };
        let request = Request {
            from: e.format.and_then(formats::by_name),
            to: formats::by_name(Tool::Qwen.current_format()).expect("every store format exists"),
            project,
            tag: None,
            options: &options,
            force: false,
            dry_run: true,
        };
        let input = Input {
            name: &e.path,
            path: Some(Path::new(&e.path)),
            bytes: &bytes,
        };
        match place::place(home, &input, &request) {
            Ok(placed) => {
                let lost: u64 = placed
                    .conversion
                    .losses
                    .losses
                    .iter()
                    .map(|l| l.count as u64)
                    .sum();
                plan.copies.push(Copy {
                    from: Some(PathBuf::from(&e.path)),
                    to: placed.path,
                    project: project.clone(),
                    how: format!("convert (gemini-json -> qwen-jsonl, {lost} item(s) not carried)"),
                    already: false,
                    bytes: placed.conversion.bytes,
                    read: Some(read),
                });
            }
            Err(err) => plan.problems.push(format!("{}: {err}", e.path)),
        }
    }
    let checkpoints = entries
        .iter()
        .filter(|e| matches!(e.kind, StoredKind::Checkpoint { .. }));
    for c in checkpoints {
        plan.left.push(format!(
            "{}: a /chat checkpoint; it stays in the legacy folder",
            c.path
        ));
    }
}

/// The project recorded by the sessions inside a folder.
fn project_in(entries: &[Entry], dir: &Path) -> Option<String> {
    entries
        .iter()
        .filter(|e| Path::new(&e.path).starts_with(dir))
        .find_map(|e| e.project.clone())
}

/// Stages every copy and commits them; then checks the written sessions with fsck.
pub fn execute(home: &Home, plan: &Plan, stamp: &str, remove_old: bool) -> Result<Outcome, String> {
    if !plan.problems.is_empty() {
        return Err("nothing was changed".into());
    }
    let mut txn = Txn::new(stamp).within(home);
    let retire = if remove_old {
        Retire::Delete
    } else {
        Retire::Keep
    };
    let unread = |c: &Copy| format!("{}: not read; nothing was changed", c.to.display());
    for c in plan.copies.iter().filter(|c| c.already) {
        if let (Some(from), true) = (&c.from, remove_old) {
            let old = Old {
                path: from,
                read: c.read.ok_or_else(|| unread(c))?,
                retire: Retire::Delete,
            };
            txn.retire(&c.to, old).map_err(|e| {
                format!("cannot retire {}: {e}; nothing was changed", from.display())
            })?;
        }
    }
    for c in plan.copies.iter().filter(|c| !c.already) {
        let in_place = c.to.exists() && c.how == "register";
        // Gemini CLI locks projects.json (not the markers) around its read-modify-write.
        if c.how == "register" && c.to.file_name() == Some("projects.json".as_ref()) {
            txn.lock_for_commit(&c.to);
        }
        let old = match (&c.from, in_place) {
            (Some(from), _) => Some(Old {
                path: from,
                read: c.read.ok_or_else(|| unread(c))?,
                retire,
            }),
            (None, true) => Some(Old {
                path: &c.to,
                read: c.read.ok_or_else(|| unread(c))?,
                retire: Retire::Backup,
            }),
            (None, false) => None,
        };
        txn.stage(&c.to, &c.bytes, old)
            .map_err(|e| format!("cannot write {}: {e}; nothing was changed", c.to.display()))?;
    }
    let done = txn.commit().map_err(|(done, e)| {
        format!(
            "stopped after {} of {} files: {e} (the rest are untouched: run migrate again)",
            done.len(),
            plan.copies.len()
        )
    })?;
    let mut findings = Vec::new();
    for c in plan
        .copies
        .iter()
        .filter(|c| c.how != "register" && !c.already)
    {
        if formats::detect(Some(&c.to), &c.bytes).is_none() {
            continue;
        }
        match check::check_file(&c.to, &CheckOptions::default()) {
            Ok(r) if r.unfixable_errors() == 0 && r.count(crate::diag::Severity::Error) == 0 => {}
            Ok(r) => findings.push(format!(
                "{}: {} error(s) (as in the original: run `sessiontool fsck` on it)",
                c.to.display(),
                r.count(crate::diag::Severity::Error)
            )),
            Err(e) => findings.push(format!("{}: {e}", c.to.display())),
        }
    }
    Ok(Outcome {
        done,
        check: findings,
    })
}
