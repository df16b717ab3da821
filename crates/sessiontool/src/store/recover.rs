//! `recover`: make a stored session resumable again, and on request put it where a tool will
//! find it. Each step uses the general machinery (fsck's repair with its backups, the store
//! placement); this module only decides which steps a session needs.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::catalog::{Entry, Health};
use super::home::Home;
use super::place::{self, Request};
use super::stored::StoredKind;
use super::tool::Tool;
use crate::check::{self, CheckOptions, Issue};
use crate::engine::FileSource;
use crate::engine::view::View;
use crate::formats::{self, Format, Input, WriteOptions};
use crate::repair::{self, RepairOptions};

#[derive(Clone, Default)]
pub struct Options {
    /// Also write the session as a Gemini checkpoint with this tag.
    pub checkpoint: Option<String>,
    /// Also write the session into the store of this format's tool.
    pub to: Option<&'static dyn Format>,
    /// Say what would be done, change nothing.
    pub dry_run: bool,
    /// Replace files of the same name when placing.
    pub force: bool,
    pub repair: RepairOptions,
    pub write: WriteOptions,
}

/// One step done (or planned, on a dry run).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// An `.unreadable-*` file moved back to the name the tool lists (when it needs a repair,
    /// its bytes are kept as the repair's backup).
    Restored {
        #[serde(serialize_with = "crate::serde_path::lossy")]
        from: PathBuf,
        #[serde(serialize_with = "crate::serde_path::lossy")]
        to: PathBuf,
    },
    /// Repaired in place; the original kept as `backup`.
    Repaired {
        #[serde(serialize_with = "crate::serde_path::lossy")]
        path: PathBuf,
        fixed: usize,
        left: usize,
        #[serde(serialize_with = "crate::serde_path::lossy_opt")]
        backup: Option<PathBuf>,
        #[serde(serialize_with = "crate::serde_path::lossy_opt")]
        sidecar: Option<PathBuf>,
        /// Bytes a tool appended while the repair ran, carried into the repaired file.
        #[serde(skip_serializing_if = "is_zero")]
        carried_over: u64,
        /// A tool went on writing to the old file: where what it writes now lands.
        #[serde(skip_serializing_if = "Option::is_none")]
        still_written: Option<String>,
    },
    /// Written into a tool's store.
    Placed {
        #[serde(serialize_with = "crate::serde_path::lossy")]
        path: PathBuf,
        tool: Tool,
        format: &'static str,
        registered: Vec<String>,
        /// How many items the target format could not hold (`lost` says which).
        losses: usize,
        /// `3 × what [code]`, one per kind of item not carried.
        lost: Vec<String>,
        /// A file of the same name replaced (`--force`): where it was kept.
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "crate::serde_path::lossy_opt"
        )]
        replaced: Option<PathBuf>,
    },
    /// Registered in the tool's index (Codex's state database), which had no row for it, a
    /// stale one, or one made from the bytes before a repair.
    Registered {
        #[serde(serialize_with = "crate::serde_path::lossy")]
        database: PathBuf,
        id: String,
        /// The database as it was before (none on a dry run).
        #[serde(serialize_with = "crate::serde_path::lossy_opt")]
        backup: Option<PathBuf>,
    },
    /// Nothing needed doing.
    Healthy,
}

/// What recovering one session did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(serialize_with = "crate::serde_path::lossy")]
    pub session: PathBuf,
    pub id: Option<String>,
    pub tool: Tool,
    pub steps: Vec<Step>,
    /// How to resume the result, when known.
    pub resume: Vec<String>,
    /// Why the recovery stopped, when it did (the steps before it stand).
    pub error: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether `recover` without a chosen session takes this one: the tool cannot resume it as it
/// is (damaged, set aside as unreadable, or in a layout the tool no longer lists).
pub fn needs_recovery(entry: &Entry) -> bool {
    entry.health == Health::Repairable
        || entry.kind == StoredKind::Unreadable
        || (entry.kind == StoredKind::Legacy && entry.superseded_by.is_none())
}

pub fn recover(home: &Home, entry: &Entry, project: &str, options: &Options) -> Outcome {
    let mut outcome = Outcome {
        session: PathBuf::from(&entry.path),
        id: entry.id.clone(),
        tool: entry.tool,
        steps: Vec::new(),
        resume: Vec::new(),
        error: None,
    };
    if let Err(e) = run(home, entry, project, options, &mut outcome) {
        outcome.error = Some(e);
    }
    if outcome.steps.is_empty() && outcome.error.is_none() {
        outcome.steps.push(Step::Healthy);
    }
    outcome
}

fn run(
    home: &Home,
    entry: &Entry,
    project: &str,
    options: &Options,
    outcome: &mut Outcome,
) -> Result<(), String> {
    if entry.tool.read_only() {
        return Err(format!(
            "{} keeps its sessions in a database that sessiontool only reads: nothing to recover in it; `sessiontool convert '{}' -o FILE` copies the session out, `--to FORMAT --store` places it in another tool's store",
            entry.tool, entry.path
        ));
    }
    // A store that cannot take the session (a damaged or linked registry) is refused before
    // anything is changed.
    let legacy = (entry.kind == StoredKind::Legacy && options.to.is_none())
        .then(|| by_name(entry.tool.current_format()));
    let checkpoint = options.checkpoint.as_ref().map(|_| by_name("checkpoint"));
    for to in legacy.into_iter().chain(options.to).chain(checkpoint) {
        place::preflight(home, to, project).map_err(|e| e.to_string())?;
    }
    let mut source = PathBuf::from(&entry.path);
    if entry.kind == StoredKind::Unreadable {
        let to = restore_name(&source)?;
        if !options.dry_run {
            move_no_clobber(&source, &to)
                .map_err(|e| format!("cannot move it back to {}: {e}", to.display()))?;
            source = to.clone();
        }
        outcome.steps.push(Step::Restored {
            from: PathBuf::from(&entry.path),
            to,
        });
    }
    repair_step(&source, options, outcome)?;
    // The session is read whole only by the steps that need it (registering a rollout,
    // placing the session in a store): a healthy or repaired session that stays where it is
    // is never held in memory.
    let whole: std::cell::OnceCell<Vec<u8>> = std::cell::OnceCell::new();
    let bytes = || -> Result<&[u8], String> {
        if let Some(read) = whole.get() {
            return Ok(read);
        }
        let read =
            std::fs::read(&source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        Ok(whole.get_or_init(|| read))
    };
    if outcome.id.is_none() {
        outcome.id = session_id(&source)?;
    }
    // A tool's own index (Codex's state database) may lack the session or hold a stale entry.
    let repaired = outcome
        .steps
        .iter()
        .any(|s| matches!(s, Step::Repaired { .. }));
    let store = entry.tool.store();
    if let Some(again) = store.register_again(home, &source, &bytes, repaired, options.dry_run)? {
        outcome.steps.push(Step::Registered {
            database: again.index,
            id: again.id.or_else(|| outcome.id.clone()).unwrap_or_default(),
            backup: again.backup,
        });
    }
    let mut placements: Vec<(&'static dyn Format, Option<&str>)> = Vec::new();
    if entry.kind == StoredKind::Legacy && options.to.is_none() {
        // Qwen Code v0.4+ lists only its JSONL projects: give it the session there.
        placements.push((by_name(entry.tool.current_format()), None));
    }
    if let Some(to) = options.to {
        placements.push((to, None));
    }
    if let Some(tag) = &options.checkpoint {
        placements.push((by_name("checkpoint"), Some(tag)));
    }
    for (to, tag) in placements {
        let request = Request {
            from: entry.format.and_then(formats::by_name),
            to,
            project,
            tag,
            options: &options.write,
            force: options.force,
            dry_run: options.dry_run,
        };
        let input = Input {
            name: &entry.path,
            path: Some(&source),
            bytes: bytes()?,
        };
        let placed = place::place(home, &input, &request).map_err(|e| e.to_string())?;
        let losses = placed
            .conversion
            .losses
            .losses
            .iter()
            .map(|l| l.count)
            .sum();
        outcome.resume.push(match tag {
            Some(tag) => Tool::checkpoint_hint(tag),
            None => placed
                .tool
                // The id as written: a target may have been given another (a UUID).
                .resume_hint(placed.id.as_deref().or(outcome.id.as_deref()), &placed.path)
                .unwrap_or_else(|| format!("open it in {}", placed.tool)),
        });
        outcome.steps.push(Step::Placed {
            replaced: placed.conversion.replaced.clone(),
            path: placed.path,
            tool: placed.tool,
            format: to.name(),
            registered: placed.registered,
            losses,
            lost: placed
                .conversion
                .losses
                .losses
                .iter()
                .map(|l| format!("{} × {} [{}]", l.count, l.message, l.code))
                .collect(),
        });
    }
    if outcome.resume.is_empty() {
        let hint = match &entry.kind {
            StoredKind::Checkpoint { tag } => Some(Tool::checkpoint_hint(tag)),
            _ => entry.tool.resume_hint(outcome.id.as_deref(), &source),
        };
        outcome.resume.extend(hint);
    }
    Ok(())
}

/// The id of the session in the file at `path`, read again (a restored or repaired file may
/// now have one), as its reader gives it: through the two-pass view when it reads the format
/// (in memory bounded by the number of records), else read whole.
fn session_id(path: &Path) -> Result<Option<String>, String> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = crate::regular_file::open(path).map_err(cannot)?;
    let source = FileSource::new(file).map_err(cannot)?;
    let name = path.display().to_string();
    if let Some(view) = View::open(&name, Some(path), &source, None).map_err(cannot)? {
        return Ok(view.meta().id.clone());
    }
    let bytes = std::fs::read(path).map_err(cannot)?;
    let Some(format) = formats::detect(Some(path), &bytes) else {
        return Ok(None);
    };
    let input = Input {
        name: "",
        path: Some(path),
        bytes: &bytes,
    };
    Ok(format.read(&input).ok().and_then(|o| o.session.meta.id))
}

/// Renames `from` to `to` unless `to` exists (a hard link is made first, so an existing `to`
/// is never replaced), then makes the change durable.
fn move_no_clobber(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {
            // No hard links here: copy durably (mode and owner kept), then drop the old name.
            crate::io::replace::copy_backup(&crate::regular_file::open(from)?, to)?;
        }
    }
    std::fs::remove_file(from)?;
    crate::io::sync_dir(to.parent().unwrap_or(Path::new(".")))
}

fn by_name(name: &str) -> &'static dyn Format {
    formats::by_name(name).expect("every store format exists")
}

/// fsck's repair, with its backups, when the file has something to fix.
fn repair_step(path: &Path, options: &Options, outcome: &mut Outcome) -> Result<(), String> {
    let diagnosis = check::diagnose(path, &CheckOptions::default()).map_err(|e| e.to_string())?;
    if diagnosis.report.fixable() == 0 {
        return Ok(());
    }
    let repair_options = RepairOptions {
        dry_run: options.dry_run,
        ..options.repair.clone()
    };
    let repaired = repair::repair(path, diagnosis, &repair_options).map_err(|e| e.to_string())?;
    outcome.steps.push(Step::Repaired {
        path: path.to_path_buf(),
        fixed: Issue::total(&repaired.fixed) as usize,
        left: Issue::total(&repaired.left) as usize,
        backup: repaired.backup,
        sidecar: repaired.sidecar,
        carried_over: repaired.carried_over,
        still_written: repaired.still_written,
    });
    Ok(())
}

/// The name an `.unreadable-<ms>` file had before the tool set it aside; a `-recovered`
/// name beside it when the tool has since written a new file there.
fn restore_name(path: &Path) -> Result<PathBuf, String> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let original = name
        .rsplit_once(".unreadable-")
        .map(|(o, _)| o)
        .filter(|o| !o.is_empty())
        .ok_or_else(|| format!("{name} is not an .unreadable-<time> file"))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let candidate = super::confined::join(dir, original).map_err(|e| e.to_string())?;
    if !candidate.exists() {
        return Ok(candidate);
    }
    let (stem, ext) = original.rsplit_once('.').unwrap_or((original, ""));
    let other = super::confined::join(dir, &format!("{stem}-recovered.{ext}"))
        .map_err(|e| e.to_string())?;
    if other.exists() {
        return Err(format!(
            "both {original} and {} exist; move one away first",
            file_name(&other)
        ));
    }
    Ok(other)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_files_get_their_old_name_back() {
        let dir = tempfile::tempdir().unwrap();
        let set_aside = dir
            .path()
            .join("session-2026-01-01T00-00-abcd.json.unreadable-1767225600000");
        assert_eq!(
            restore_name(&set_aside).unwrap(),
            dir.path().join("session-2026-01-01T00-00-abcd.json")
        );
        std::fs::write(dir.path().join("session-2026-01-01T00-00-abcd.json"), "{}").unwrap();
        assert_eq!(
            restore_name(&set_aside).unwrap(),
            dir.path()
                .join("session-2026-01-01T00-00-abcd-recovered.json")
        );
        assert!(restore_name(&dir.path().join("x.json")).is_err());
    }
}
