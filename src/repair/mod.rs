//! repair: apply the fixes fsck found. Untouched records are copied byte for byte; dropped
//! bytes go to a sidecar file; the original is backed up first and replaced atomically (temp
//! file in the same folder, fsync, rename, fsync of the folder). A file that changed since it
//! was checked, or that a live lock says a tool is writing, is left alone.

pub mod jsonl;
pub mod safety;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::document::Rewrite;
use crate::check::{CheckOptions, Diagnosis, Fixes, Issue};

const CHANGED: &str = "the file changed since it was checked (is a tool still writing it?); nothing was changed, run the repair again";

#[derive(Debug, Clone, Default)]
pub struct RepairOptions {
    /// Where backups go (default: beside the file).
    pub backup_dir: Option<PathBuf>,
    /// Replace without keeping the original (only when asked).
    pub no_backup: bool,
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
    };
    if outcome.fixed.is_empty() || options.dry_run {
        return Ok(outcome);
    }
    if let Some(lock) = safety::live_lock(path) {
        return Err(refused(format!(
            "{} says a tool is writing this session; close it (or wait) and run the repair again",
            lock.display()
        )));
    }
    let stamp = options.stamp.clone().unwrap_or_else(now_stamp);
    let dir = safety::parent(path);
    let mut tmp = temp_beside(path, dir).map_err(io)?;
    // Dropped bytes stream to a temp file too (a sidecar can be large: a file of garbage
    // lines); it gets its real name only when something was written to it.
    let mut side_tmp = temp_beside(path, dir).map_err(io)?;
    let mut sidecar = Counting::new(BufWriter::new(side_tmp.as_file_mut()));
    let mut expected = Some(0);
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
    let original = crate::regular_file::open(path).map_err(io)?;
    if !safety::unchanged(path, &diagnosis.stamp).map_err(io)? {
        return Err(refused(CHANGED.into()));
    }
    if side_bytes > 0 {
        let p = safety::fresh_name(path, None, "torn", &stamp);
        side_tmp.as_file().sync_all().map_err(io)?;
        side_tmp.persist_noclobber(&p).map_err(|e| io(e.error))?;
        outcome.sidecar = Some(p);
    }
    crate::fault::point("repair.before-backup").map_err(io)?;
    if !options.no_backup {
        let p = safety::fresh_name(path, options.backup_dir.as_deref(), "bak", &stamp);
        safety::backup(path, &p).map_err(io)?;
        outcome.backup = Some(p);
    }
    let permissions = std::fs::metadata(path).map_err(io)?.permissions();
    tmp.as_file().set_permissions(permissions).map_err(io)?;
    crate::fault::point("repair.before-rename").map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    crate::fault::point("repair.after-rename").map_err(io)?;
    crate::io::sync_dir(dir).map_err(io)?;
    outcome.changed = true;
    outcome.carried_over = safety::carry_over(
        &original,
        diagnosis.stamp.len,
        path,
        outcome.backup.as_deref(),
    )
    .map_err(io)?;
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
