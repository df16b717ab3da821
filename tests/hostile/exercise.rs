//! One input through every entry point that reads untrusted bytes, checking what must hold
//! whatever the bytes are. Shared by `tests/hostile.rs` (fixed hostile inputs) and
//! `tests/fuzz.rs` (generated ones).
//!
//! Entry points: the records layer (`split_slice` and the streaming `Splitter`, which must
//! agree), `formats::detect`, and for every format: `detect`, `read` (and, when it reads,
//! `write` back into every format), `keys` of the whole input and of each line,
//! `synthetic_result`, `salvage`, `close_calls_in_document`; then `check::diagnose` with the
//! format detected and with formats forced, and `repair` of a copy.
//!
//! What must hold besides "no panic":
//! - the splitter gives the same records and findings whatever the chunk size, every record is
//!   JSON and every span inside the input;
//! - detection is deterministic;
//! - what a writer wrote from what a reader read, the writer's own format reads back (for
//!   formats a tool resumes); with [`Depth::roundtrip`], a file read without a remark is written
//!   back byte for byte; with [`Depth::stable`], so is what a format wrote itself (read back
//!   without a remark, written again: the same bytes);
//! - fsck accounts for every byte of the file (`report.bytes` is its size), and with
//!   [`Depth::small_blocks`] reports the same in small blocks as in one;
//! - a repair either refuses (the file byte-identical, nothing left beside it), changes
//!   nothing (same), or replaces the file after a backup that holds the original byte for byte,
//!   with every file it made in the file's folder; the repaired file then has nothing left to
//!   fix when checked as the same format, and a second repair changes nothing;
//! - nothing a repair drops is lost: in a JSONL file, every record is in the repaired file, in
//!   order, byte for byte (but a parent value spliced in, or a sequence number renumbered),
//!   and the bytes of every torn, invalid or glued-torn line and of every line whose invalid
//!   UTF-8 was replaced are in the sidecar, in order; a document's sidecar is its cut-off end.

#![allow(dead_code)]

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use sessiontool::check::{CheckOptions, Issue, ScanOptions, check_file, diagnose};
use sessiontool::formats::{self, Format, Input, OpenCall, WriteOptions};
use sessiontool::records::{self, Damage, Event, Options, Splitter};
use sessiontool::repair::{RepairOptions, repair};

pub const STAMP: &str = "20260101T000000.000Z";

/// How far to take one input.
#[derive(Clone, Debug)]
pub struct Depth {
    /// Formats to force in fsck and repair, besides detection.
    pub forced: Vec<&'static str>,
    /// Formats whose reader (and `keys`, `salvage`, ...) runs; `None`: every format.
    pub readers: Option<Vec<&'static str>>,
    /// Repair a copy after each check.
    pub repair: bool,
    /// Write what each reader read into every format (else only into its own).
    pub convert: bool,
    /// A file its format reads without a remark must be written back byte for byte (true for
    /// files made of whole records each tool wrote; not for arbitrary bytes, whose white space
    /// and escapes are the writer's own).
    pub roundtrip: bool,
    /// What a format wrote from its own reading, read back without a remark, is written again
    /// byte for byte (the writer is stable: this holds for arbitrary input too).
    pub stable: bool,
    /// `keys` and `synthetic_result` on at most this many lines.
    pub key_lines: usize,
    /// Splitter chunk size to compare with `split_slice` (`None`: skip the records layer).
    pub chunk: Option<usize>,
    /// fsck's block size (small for small inputs: a debug build zeroes every block).
    pub block_size: usize,
    /// Also check in blocks of these many bytes: the report must be the same (a line or a
    /// record cut by a block's end is still read whole, a run of lines over it is one run), as
    /// long as neither report counts issues it does not list (the bound of `check/capped.rs`
    /// applies per block, before runs over blocks are joined).
    pub small_blocks: Vec<usize>,
}

impl Depth {
    /// Everything, for small inputs.
    pub fn full() -> Depth {
        Depth {
            forced: formats::all().iter().map(|f| f.name()).collect(),
            readers: None,
            repair: true,
            convert: true,
            roundtrip: false,
            stable: true,
            key_lines: usize::MAX,
            chunk: Some(7),
            block_size: 64 << 10,
            small_blocks: Vec::new(),
        }
    }

    /// For large inputs: detection plus the named formats (fsck, repair and reader), own-format
    /// writes, keys of a few lines.
    pub fn large(formats: &[&'static str]) -> Depth {
        Depth {
            forced: formats.to_vec(),
            readers: Some(formats.to_vec()),
            repair: true,
            convert: false,
            roundtrip: false,
            stable: false,
            key_lines: 1_000,
            chunk: Some(1 << 20),
            block_size: ScanOptions::default().block_size,
            small_blocks: Vec::new(),
        }
    }
}

/// A folder for the files an input is checked and repaired as (on tmpfs when there is one).
pub struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    pub fn new() -> Bench {
        let base = std::env::var_os("FUZZ_WORKDIR").map(PathBuf::from);
        let dir = match base {
            Some(b) => {
                fs::create_dir_all(&b).unwrap();
                tempfile::tempdir_in(b)
            }
            None => tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()),
        };
        Bench { dir: dir.unwrap() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Empties the folder and writes `bytes` as `name`.
    fn put(&self, name: &str, bytes: &[u8]) -> PathBuf {
        self.clear();
        let path = self.dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    fn clear(&self) {
        for e in fs::read_dir(self.dir.path()).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                fs::remove_dir_all(p).unwrap();
            } else {
                fs::remove_file(p).unwrap();
            }
        }
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    }
}

impl Default for Bench {
    fn default() -> Self {
        Bench::new()
    }
}

/// A file name safe to create: `name`'s last component, or `input` when it has none.
pub fn file_name(name: &str) -> String {
    let n = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if n.is_empty() || n.starts_with('.') {
        "input".into()
    } else {
        n
    }
}

/// `bytes`, named `name`, through every entry point. `Err` says which invariant broke; a panic
/// is left to propagate (the caller catches it).
pub fn everything(bench: &Bench, name: &str, bytes: &[u8], depth: &Depth) -> Result<(), String> {
    let name = file_name(name);
    // On disk first: when a run aborts (a stack overflow, an allocation failure), the input it
    // died on is left in `FUZZ_WORKDIR` for `scripts/fuzz` to save.
    bench.put(&name, bytes);
    if let Some(chunk) = depth.chunk {
        records_layer(bytes, chunk)?;
    }
    in_memory(&name, bytes, depth)?;
    on_disk(bench, &name, bytes, depth)
}

/// `split_slice` and the streaming splitter (default limits and a small line limit) agree.
pub fn records_layer(bytes: &[u8], chunk: usize) -> Result<(), String> {
    let small = Options {
        max_line_len: 4 << 10,
    };
    for options in [Options::default(), small] {
        let (recs, finds) = records::split_slice(bytes, options);
        let mut splitter = Splitter::with_chunk_size(Cursor::new(bytes), options, chunk);
        let mut srecs = Vec::new();
        let mut sfinds = Vec::new();
        while let Some(e) = splitter.next_event().map_err(|e| e.to_string())? {
            match e {
                Event::Record(r) => srecs.push(r.into_owned()),
                Event::Damage(f) => sfinds.push(f),
            }
        }
        if sfinds != finds {
            return Err(format!(
                "records: streaming findings differ (chunk {chunk}, limit {}):\n{sfinds:?}\n{finds:?}",
                options.max_line_len
            ));
        }
        if srecs.len() != recs.len()
            || srecs
                .iter()
                .zip(&recs)
                .any(|(a, b)| a.span != b.span || a.bytes[..] != b.bytes[..])
        {
            return Err(format!("records: streaming records differ (chunk {chunk})"));
        }
        let len = bytes.len() as u64;
        for r in &recs {
            if r.span.offset + r.span.len > len || r.span.len == 0 {
                return Err(format!("records: span {:?} outside the input", r.span));
            }
            if serde_json::from_slice::<serde::de::IgnoredAny>(&r.bytes).is_err() {
                return Err(format!("records: record at {:?} is not JSON", r.span));
            }
        }
        for f in &finds {
            if f.span.offset + f.span.len > len {
                return Err(format!("records: finding {f:?} outside the input"));
            }
        }
    }
    Ok(())
}

/// Detection, readers, writers, keys and the whole-file helpers.
pub fn in_memory(name: &str, bytes: &[u8], depth: &Depth) -> Result<(), String> {
    let path = Path::new(name);
    let detected = formats::detect(Some(path), bytes).map(|f| f.name());
    if formats::detect(Some(path), bytes).map(|f| f.name()) != detected {
        return Err("detect is not deterministic".into());
    }
    formats::detect(None, bytes);
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').take(depth.key_lines).collect();
    let readers = formats::all()
        .iter()
        .filter(|f| depth.readers.as_ref().is_none_or(|r| r.contains(&f.name())));
    for &f in readers {
        f.detect(Some(path), &bytes[..bytes.len().min(formats::DETECT_HEAD)]);
        f.keys(bytes);
        for line in &lines {
            f.keys(line);
            let call = OpenCall {
                call_record: line,
                call_id: "call-1",
                new_id: "new-1",
                parent_id: "parent-1",
                message: "recovered",
            };
            f.synthetic_result(&call);
        }
        f.salvage(bytes);
        f.close_calls_in_document(bytes, "recovered");
        let input = Input {
            name,
            path: Some(path),
            bytes,
        };
        let Ok(outcome) = f.read(&input) else {
            continue;
        };
        let session = &outcome.session;
        session.tree().leaves();
        let targets: Vec<&'static dyn Format> = if depth.convert {
            formats::all().to_vec()
        } else {
            vec![f]
        };
        for to in targets {
            let Ok(written) = to.write(session, &WriteOptions::default()) else {
                continue;
            };
            // What a writer wrote, its own reader reads.
            if to.resumable() {
                let again = Input {
                    name: "written",
                    path: None,
                    bytes: &written.bytes,
                };
                let read_back = match to.read(&again) {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(format!(
                            "{} read it, {} wrote what {} cannot read back: {e}\nwritten:\n{}",
                            f.name(),
                            to.name(),
                            to.name(),
                            String::from_utf8_lossy(&written.bytes)
                        ));
                    }
                };
                if depth.stable && to.name() == f.name() {
                    stable_write(to, &written.bytes, &read_back)?;
                }
            }
            // A file its format reads without a remark is written back byte for byte.
            if depth.roundtrip
                && to.name() == f.name()
                && outcome.diagnostics.is_empty()
                && !session.nodes.is_empty()
                && written.bytes != bytes
            {
                return Err(format!(
                    "{} read it without a remark but writes it back differently:\n{}",
                    f.name(),
                    String::from_utf8_lossy(&written.bytes)
                ));
            }
        }
    }
    Ok(())
}

/// What `format` wrote (`written`) and read back (`read_back`) without a remark, it writes
/// again byte for byte.
fn stable_write(
    format: &dyn Format,
    written: &[u8],
    read_back: &formats::ReadOutcome,
) -> Result<(), String> {
    if !read_back.diagnostics.is_empty() || read_back.session.nodes.is_empty() {
        return Ok(());
    }
    let again = format
        .write(&read_back.session, &WriteOptions::default())
        .map_err(|e| format!("{} cannot write again what it wrote: {e}", format.name()))?;
    if again.bytes != written {
        return Err(format!(
            "{} wrote, read back without a remark and wrote again differently:\nfirst:\n{}\nagain:\n{}",
            format.name(),
            String::from_utf8_lossy(written),
            String::from_utf8_lossy(&again.bytes)
        ));
    }
    Ok(())
}

fn check_options(format: Option<&'static str>, depth: &Depth) -> CheckOptions {
    CheckOptions {
        scan: ScanOptions {
            block_size: depth.block_size,
            ..ScanOptions::default()
        },
        format,
        ..CheckOptions::default()
    }
}

/// fsck with the format detected and with each forced one (but the one detected); a repair of
/// a copy after each.
pub fn on_disk(bench: &Bench, name: &str, bytes: &[u8], depth: &Depth) -> Result<(), String> {
    let mut formats: Vec<Option<&'static str>> = vec![None];
    formats.extend(depth.forced.iter().map(|&f| Some(f)));
    let mut detected = None;
    for format in formats {
        if format.is_some() && format == detected {
            continue;
        }
        let ctx = format!("fsck as {}", format.unwrap_or("detected"));
        let path = bench.put(name, bytes);
        let options = check_options(format, depth);
        let d = match diagnose(&path, &options) {
            Ok(d) => d,
            // Content that plainly is another format's is refused, never checked by the wrong
            // rules (fsck --from): that is an answer, as long as the file was left alone.
            Err(e) if format.is_some() && refused_as_other_format(&e) => {
                if fs::read(&path).map_err(|e| e.to_string())? != bytes {
                    return Err(format!("{ctx}: refused ({e}) but changed the file"));
                }
                bench.clear();
                continue;
            }
            Err(e) => return Err(format!("{ctx}: {e}")),
        };
        if format.is_none() {
            detected = d.format.map(|f| f.name());
        }
        if d.report.bytes != bytes.len() as u64 {
            return Err(format!(
                "{ctx}: report says {} bytes, the file has {}",
                d.report.bytes,
                bytes.len()
            ));
        }
        for &block_size in &depth.small_blocks {
            let small = CheckOptions {
                scan: ScanOptions {
                    block_size,
                    ..options.scan
                },
                ..options.clone()
            };
            let in_blocks = check_file(&path, &small).map_err(|e| format!("{ctx}: {e}"))?;
            let capped = |issues: &[Issue]| issues.iter().any(|i| i.unlisted.is_some());
            if capped(&in_blocks.issues) || capped(&d.report.issues) {
                continue;
            }
            if (in_blocks.records, &in_blocks.issues) != (d.report.records, &d.report.issues) {
                return Err(format!(
                    "{ctx}: in blocks of {block_size} bytes the report differs:\n{:?}\n{:?}",
                    in_blocks.issues, d.report.issues
                ));
            }
        }
        if depth.repair {
            repair_copy(bench, &path, bytes, d, &options).map_err(|e| format!("{ctx}: {e}"))?;
        }
    }
    bench.clear();
    Ok(())
}

/// fsck's refusal of a format the content contradicts (it names the format the content is).
fn refused_as_other_format(e: &sessiontool::check::CheckError) -> bool {
    e.source.kind() == std::io::ErrorKind::InvalidData
        && e.source.to_string().contains("(the format asked for)")
}

/// Repairs the file at `path` (holding `bytes`), then checks what the repair promised.
fn repair_copy(
    bench: &Bench,
    path: &Path,
    bytes: &[u8],
    d: sessiontool::check::Diagnosis,
    options: &CheckOptions,
) -> Result<(), String> {
    let format = d.format.map(|f| f.name());
    let repair_options = RepairOptions {
        stamp: Some(STAMP.into()),
        // Freshly written test files are idle: no wait for a tool finishing a line.
        quiet: Some(std::time::Duration::ZERO),
        ..RepairOptions::default()
    };
    let result = repair(path, d, &repair_options);
    let after = fs::read(path).map_err(|e| e.to_string())?;
    let only_file = bench.files() == [path.to_path_buf()];
    let r = match result {
        Err(e) => {
            if after != bytes {
                return Err(format!("repair refused ({e}) but changed the file"));
            }
            if !only_file {
                return Err(format!(
                    "repair refused ({e}) but left files: {:?}",
                    bench.files()
                ));
            }
            return Ok(());
        }
        Ok(r) => r,
    };
    if !r.changed {
        if after != bytes || !only_file {
            return Err("an unchanged repair touched the folder".into());
        }
        return Ok(());
    }
    let backup = r.backup.as_ref().ok_or("replaced without a backup")?;
    if fs::read(backup).map_err(|e| e.to_string())? != bytes {
        return Err("the backup differs from the original".into());
    }
    for made in r.backup.iter().chain(&r.sidecar) {
        if made.parent() != path.parent() {
            return Err(format!("repair wrote outside the file's folder: {made:?}"));
        }
    }
    let sidecar = match &r.sidecar {
        Some(p) => fs::read(p).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let Some(f) = format.and_then(formats::by_name) else {
        return Err("repaired a file of no format".into());
    };
    nothing_lost(f, bytes, &after, &sidecar)?;
    let again_options = CheckOptions {
        format,
        ..options.clone()
    };
    let report = check_file(path, &again_options).map_err(|e| e.to_string())?;
    if let Some(i) = report.issues.iter().find(|i| i.fixable()) {
        return Err(format!(
            "the repaired file still has `{}` to fix: {}\nrepaired:\n{}",
            i.code,
            i.message,
            String::from_utf8_lossy(&after)
        ));
    }
    let d = diagnose(path, &again_options).map_err(|e| e.to_string())?;
    let no_backup = RepairOptions {
        no_backup: true,
        ..repair_options
    };
    let again = repair(path, d, &no_backup).map_err(|e| format!("second repair: {e}"))?;
    if again.changed {
        return Err("a second repair changed the file again".into());
    }
    Ok(())
}

/// What a repair of `before` dropped is in its sidecar, and every record it kept is in `after`
/// (see the module's doc).
fn nothing_lost(
    format: &dyn Format,
    before: &[u8],
    after: &[u8],
    sidecar: &[u8],
) -> Result<(), String> {
    if !format.is_jsonl() {
        // A document is rebuilt from what parses; what was cut off is the sidecar.
        if !before.ends_with(sidecar) {
            return Err("the sidecar is not the end of the original document".into());
        }
        return Ok(());
    }
    let (records, findings) = records::split_slice(before, Options::default());
    let (kept, _) = records::split_slice(after, Options::default());
    // Pieces the sidecar must hold, in line order (within a line, in any order: a line's
    // findings come before its records).
    let mut dropped: Vec<(u64, u64, &[u8])> = findings
        .iter()
        .filter(|f| {
            matches!(
                f.damage,
                Damage::TornTail | Damage::TornRecordGlued { .. } | Damage::InvalidJson { .. }
            )
        })
        .map(|f| {
            (
                f.span.line,
                f.span.offset,
                span_of(before, f.span.offset, f.span.len),
            )
        })
        .collect();
    let mut next = 0;
    for r in &records {
        if let std::borrow::Cow::Owned(_) = r.bytes {
            let raw = span_of(before, r.span.offset, r.span.len);
            dropped.push((r.span.line, r.span.offset, raw));
        }
        let found = kept[next..]
            .iter()
            .position(|k| same_record(format, &r.bytes, &k.bytes))
            .ok_or_else(|| {
                format!(
                    "the record at byte {} is not in the repaired file (in order):\n{}",
                    r.span.offset,
                    String::from_utf8_lossy(&r.bytes)
                )
            })?;
        next += found + 1;
    }
    dropped.sort_by_key(|&(line, offset, _)| (line, offset));
    // Where the pieces of the line before end in the sidecar, and where this line's start.
    let (mut line_start, mut end, mut line) = (0, 0, 0);
    for (l, offset, piece) in dropped {
        if l != line {
            (line, line_start) = (l, end);
        }
        let found = memchr::memmem::find(&sidecar[line_start..], piece).ok_or_else(|| {
            format!(
                "the {} bytes dropped at byte {offset} are not in the sidecar (in order)",
                piece.len()
            )
        })?;
        end = end.max(line_start + found + piece.len());
    }
    Ok(())
}

fn span_of(bytes: &[u8], offset: u64, len: u64) -> &[u8] {
    &bytes[offset as usize..(offset + len) as usize]
}

/// `kept` is `record` byte for byte, or with another parent value spliced in (a JSON string
/// or `null` in place of the old one), or with its sequence number renumbered.
fn same_record(format: &dyn Format, record: &[u8], kept: &[u8]) -> bool {
    if record == kept {
        return true;
    }
    let prefix = record.iter().zip(kept).take_while(|(a, b)| a == b).count();
    let suffix = record[prefix..]
        .iter()
        .rev()
        .zip(kept[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old = &record[prefix..record.len() - suffix];
    let new = &kept[prefix..kept.len() - suffix];
    let Some(keys) = format.keys(record) else {
        return false;
    };
    let digits = |b: &[u8]| b.iter().all(u8::is_ascii_digit);
    if keys.seq.is_some() && digits(old) && digits(new) {
        return true;
    }
    // A relink: the whole old parent value replaced by a string or null.
    let Some(span) = keys.parent_span else {
        return false;
    };
    if prefix < span.start || record.len() - suffix > span.end {
        return false;
    }
    let tail = record.len() - span.end;
    let Some(value) = kept.get(span.start..kept.len().saturating_sub(tail)) else {
        return false;
    };
    matches!(
        serde_json::from_slice::<serde_json::Value>(value),
        Ok(serde_json::Value::String(_) | serde_json::Value::Null)
    )
}
