//! repair: apply the fixes fsck found. Untouched records are copied byte for byte; dropped
//! bytes go to a sidecar file; the original is replaced atomically (temp file in the same
//! folder, fsync, rename, fsync of the folder) and its inode kept as the backup
//! ([`crate::io::replace`]). A file that changed since it was checked, that another process
//! holds open for writing, or that a live lock says a tool is writing, is left alone; what a
//! tool appends in the last instant is carried over (JSONL), and a whole document a tool
//! rewrote meanwhile is put back as the tool wrote it.

pub mod jsonl;
pub mod safety;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::document::Rewrite;
use crate::check::{CheckOptions, Diagnosis, Fixes, Issue};
use crate::io::replace::{self, Backup, Original, ReplaceError};

const CHANGED: &str = "the file changed since it was checked (is a tool still writing it?); nothing was changed, run the repair again";
const REWRITTEN: &str = "a tool rewrote the file while it was being repaired; it is back as the tool wrote it and nothing was changed: run the repair again once the tool is closed";

#[derive(Debug, Clone, Default)]
pub struct RepairOptions {
    /// Where backups go (default: beside the file).
    pub backup_dir: Option<PathBuf>,
    /// Replace without keeping the original (only when asked).
    pub no_backup: bool,
    /// Replace even while another process holds the file open for writing: what it writes
    /// afterwards goes to the backup (the old inode), and the outcome says so.
    pub force: bool,
    /// How long a file whose last line has no newline must have been left alone before that
    /// line is taken for torn (a tool may be writing it in pieces); default
    /// [`safety::QUIET`]. A script repairing files it knows are idle may pass zero.
    pub quiet: Option<std::time::Duration>,
    /// Say what would change, change nothing.
    pub dry_run: bool,
    /// Time stamp used in backup and sidecar names (default: now, UTC, to the millisecond).
    pub stamp: Option<String>,
}

/// What a repair did (or, on a dry run, would do) to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Repaired {
    pub file: String,
    /// The file was replaced (false on a dry run, or when there was nothing to fix).
    pub changed: bool,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::serde_path::lossy_opt"
    )]
    pub backup: Option<PathBuf>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::serde_path::lossy_opt"
    )]
    pub sidecar: Option<PathBuf>,
    /// Issues fixed (or to be fixed), then those left as they are.
    pub fixed: Vec<Issue>,
    pub left: Vec<Issue>,
    pub records_before: u64,
    pub records_after: u64,
    /// Bytes a tool appended while the repair ran, carried into the repaired file (check it
    /// again when this is not 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub carried_over: u64,
    /// A tool went on writing to the old file after it was replaced: what it wrote after
    /// `carried_over` is in the backup only. Says which file to look at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub still_written: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    #[error("{file}: {message}")]
    Refused { file: String, message: String },
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

/// Repairs the file a [`Diagnosis`] is about.
pub fn repair(
    path: &Path,
    diagnosis: Diagnosis,
    options: &RepairOptions,
) -> Result<Repaired, RepairError> {
    let file = path.display().to_string();
    let refused = |message: String| RepairError::Refused {
        file: file.clone(),
        message,
    };
    let io = |source| RepairError::Io {
        file: file.clone(),
        source,
    };
    let (fixed, left): (Vec<Issue>, Vec<Issue>) = diagnosis
        .report
        .issues
        .iter()
        .cloned()
        .partition(Issue::fixable);
    let mut outcome = Repaired {
        file: file.clone(),
        changed: false,
        backup: None,
        sidecar: None,
        fixed,
        left,
        records_before: diagnosis.report.records,
        records_after: diagnosis.report.records,
        carried_over: 0,
        still_written: None,
    };
    if outcome.fixed.is_empty() || options.dry_run {
        return Ok(outcome);
    }
    // The backup folder is made before anything is written (no sidecar left when it cannot
    // be).
    if !options.no_backup
        && let Some(dir) = &options.backup_dir
    {
        crate::io::create_dir_checked(dir).map_err(|e| {
            refused(format!(
                "cannot make the backup folder {}: {e}",
                dir.display()
            ))
        })?;
    }
    if let Some(lock) = safety::live_lock(path, diagnosis.format) {
        return Err(refused(format!(
            "{} says a tool is writing this session; close it (or wait) and run the repair again",
            lock.display()
        )));
    }
    let busy = |e: ReplaceError| match e {
        ReplaceError::Busy(m) => refused(format!(
            "{m}: close it and run the repair again, or pass --force (what it writes afterwards then stays in the backup, and the repair says so)"
        )),
        ReplaceError::Changed(_) => refused(CHANGED.into()),
        ReplaceError::Io(e) => io(e),
    };
    // Another process holding the file open for writing is refused just before the rename
    // (replace); with --force it is allowed, and watched for afterwards.
    let writer_seen = options.force && !crate::io::writers::holders(path).is_empty();
    // A JSONL file's last line without its newline may be one a tool is still writing, in
    // pieces. (A whole document ends without one as its tool writes it.)
    if matches!(diagnosis.fixes, Fixes::Jsonl { .. }) {
        safety::wait_until_quiet(path, &diagnosis.stamp, options.quiet)
            .map_err(io)?
            .then_some(())
            .ok_or_else(|| refused(CHANGED.into()))?;
    }
    let stamp = options.stamp.clone().unwrap_or_else(now_stamp);
    let dir = safety::parent(path);
    let mut tmp = temp_beside(path, dir).map_err(io)?;
    // Dropped bytes stream to a temp file too (a sidecar can be large: a file of garbage
    // lines); it gets its real name only when something was written to it.
    let mut side_tmp = temp_beside(path, dir).map_err(io)?;
    let mut sidecar = Counting::new(BufWriter::new(side_tmp.as_file_mut()));
    let mut expected = Some(0);
    let append_only = matches!(diagnosis.fixes, Fixes::Jsonl { .. });
    match &diagnosis.fixes {
        Fixes::Jsonl { scan, plan } => {
            let Some(format) = diagnosis.format else {
                return Err(refused("no format".into()));
            };
            let source = crate::regular_file::open(path).map_err(io)?;
            let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
            let done = jsonl::rewrite(&source, scan, plan, format, &mut out, &mut sidecar)
                .map_err(|e| match e {
                    jsonl::RewriteError::Io(source) => io(source),
                    other => refused(other.to_string()),
                })?;
            out.flush().map_err(io)?;
            drop(out);
            outcome.records_after = done.records_out;
        }
        Fixes::Document {
            rewrite: Some(Rewrite::Salvage(s)),
        } => {
            let bytes = crate::regular_file::read(path).map_err(io)?;
            if bytes.len() as u64 != diagnosis.stamp.len {
                return Err(refused(CHANGED.into()));
            }
            sidecar
                .write_all(bytes.get(s.cut_at as usize..).unwrap_or_default())
                .map_err(io)?;
            tmp.as_file_mut().write_all(&s.document).map_err(io)?;
            expected = None;
        }
        Fixes::Document {
            rewrite: Some(Rewrite::Closed(bytes)),
        } => {
            tmp.as_file_mut().write_all(bytes).map_err(io)?;
            // Each closed call adds a result to the model: the count is taken from the read-back.
            expected = None;
        }
        _ => {
            // Only fixes without a rewrite path: report them as left.
            outcome.left.append(&mut outcome.fixed);
            return Ok(outcome);
        }
    }
    sidecar.flush().map_err(io)?;
    let side_bytes = sidecar.count;
    drop(sidecar);
    crate::fault::point("repair.temp-written").map_err(io)?;
    // Read back what was written: it must check clean of record damage before it replaces
    // anything (a bug here must never cost the user their session).
    tmp.as_file().sync_all().map_err(io)?;
    if expected.is_some() {
        expected = Some(outcome.records_after);
    }
    outcome.records_after = verify(tmp.path(), &diagnosis, expected).map_err(refused)?;
    // Held open through the rename: what a tool appends from here on is read back from it.
    let original = Original::open(path, &diagnosis.stamp).map_err(busy)?;
    if side_bytes > 0 {
        let p = safety::fresh_name(path, None, "torn", &stamp);
        crate::io::replace::same_owner_and_mode(side_tmp.as_file(), &original.file).map_err(io)?;
        side_tmp.as_file().sync_all().map_err(io)?;
        side_tmp.persist_noclobber(&p).map_err(|e| io(e.error))?;
        outcome.sidecar = Some(p);
    }
    let replace_options = replace::Options {
        backup: if options.no_backup {
            Backup::Drop
        } else {
            Backup::Keep {
                dir: options.backup_dir.as_deref(),
                stamp: &stamp,
            }
        },
        allow_writers: options.force,
        points: [
            "repair.before-backup",
            "repair.before-rename",
            "repair.after-rename",
        ],
    };
    let mut replaced = match replace::replace(original, tmp, &replace_options) {
        Ok(r) => r,
        Err(e) => {
            // Nothing was replaced: the dropped bytes are still in the file itself.
            if let Some(side) = outcome.sidecar.take() {
                let _ = std::fs::remove_file(side);
            }
            return Err(busy(e));
        }
    };
    if !append_only {
        // A whole document cannot take a tail: if a tool rewrote it meanwhile, its version
        // stands.
        if replaced.original.now().map_err(io)? != diagnosis.stamp {
            replaced.undo().map_err(io)?;
            if let Some(side) = outcome.sidecar.take() {
                let _ = std::fs::remove_file(side);
            }
            return Err(refused(REWRITTEN.into()));
        }
        outcome.backup = replaced.finish().map_err(io)?;
        outcome.changed = true;
        return Ok(outcome);
    }
    outcome.changed = true;
    let carried = safety::carry_over(&replaced, diagnosis.stamp.len, writer_seen).map_err(io)?;
    outcome.carried_over = carried.bytes;
    // A writer seen holding the file (what --force allows) may write again at any moment, not
    // only while the old file was watched: whatever it writes goes to the old inode, which
    // must stay reachable, and the user must hear of it. (Watching finds the writers that
    // could not be seen.)
    if carried.still_writing || writer_seen {
        // What the tool writes next lands in the old inode: it must stay reachable.
        replaced.keep(&stamp).map_err(io)?;
        let kept = replaced.backup.as_deref().or(replaced.keeper());
        outcome.still_written = Some(match kept {
            Some(b) => format!(
                "a tool still writes to the old file: what it writes from now on goes to {} (kept for that reason), not to the repaired file; close the tool, then run the repair again",
                b.display()
            ),
            None => "a tool still writes to the old file, and this file system cannot keep it by name: close the tool at once; what it writes from now on is not in the repaired file".into(),
        });
    }
    outcome.backup = replaced.finish().map_err(io)?;
    Ok(outcome)
}

/// The repaired file has nothing left to fix and the records it should have; returns how
/// many records it has.
fn verify(path: &Path, diagnosis: &Diagnosis, expected: Option<u64>) -> Result<u64, String> {
    let options = CheckOptions {
        format: diagnosis.format.map(|f| f.name()),
        ..diagnosis.options.clone()
    };
    let check = crate::check::check_file(path, &options).map_err(|e| e.to_string())?;
    let bad: Vec<&Issue> = check.issues.iter().filter(|i| i.fixable()).collect();
    if let Some(i) = bad.first() {
        return Err(format!(
            "refusing to replace the file: the repaired copy still has `{}` ({}); this is a bug in sessiontool, please report it",
            i.code, i.message
        ));
    }
    if let Some(records) = expected
        && check.records != records
    {
        return Err(format!(
            "refusing to replace the file: the repaired copy has {} records, {records} expected; this is a bug in sessiontool, please report it",
            check.records
        ));
    }
    Ok(check.records)
}

/// A temp file beside `path` (fsck does not check such names).
fn temp_beside(path: &Path, _dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    crate::io::temp_beside(path, "repair")
}

/// A writer that counts what goes through it.
struct Counting<W: Write> {
    inner: W,
    count: u64,
}

impl<W: Write> Counting<W> {
    fn new(inner: W) -> Self {
        Counting { inner, count: 0 }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The time stamp in backup and sidecar names: now, UTC, to the millisecond.
pub fn now_stamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%S%.3fZ")
        .to_string()
}
