//! Re-keying session files after their project folder moved (`sessiontool relocate OLD NEW`).
//!
//! The tools find a project's sessions by the path (or its sha256) recorded inside them: the
//! fields each format lists in [`Rules::project_fields`](crate::formats::Rules::project_fields). This module rewrites the values of
//! those fields and nothing else: every other byte (key order, white space, unknown fields,
//! escapes, torn or garbage lines, NUL padding, a missing final newline) stays as it was.
//!
//! - Path rule: a value equal to OLD becomes NEW; a value starting with OLD followed by a
//!   separator becomes NEW plus the rest (`/old/sub` → `/new/sub`; `/oldx` is another folder
//!   and is left alone). The separator is `/`, and also `\` when OLD is a Windows path.
//! - Hash rule: a value equal to `sha256_hex(OLD)` becomes `sha256_hex(NEW)`. So does the hash
//!   of a folder below OLD when the same file recorded that folder as a path before the hash
//!   (or in the same record): a session of `/old/app` moves with its parent `/old`.
//! - Values are compared decoded (`"\/old"` is `/old`). The part of a value that is replaced
//!   is written with serde_json's escaping, adjusted to the escapes the old value used (`\/`,
//!   `\uXXXX` for non-ASCII); the rest of the value (`/sub` in `/old/sub`) keeps its bytes.
//! - JSONL is streamed line by line: a line that cannot hold a project field (memmem on the
//!   quoted top-level key, and on the quoted record type where the field has one) is copied
//!   without parsing; a line that is not one JSON value goes through the records layer, so
//!   records glued to a torn fragment or behind NUL padding or a BOM are re-keyed too, and
//!   whatever is not a record (torn, garbage, blank) is copied as it is.
//!
//! What it does NOT touch, and why:
//! - Paths in message text, tool call arguments and results, thoughts, summaries, file-history
//!   snapshots, Codex `exec_command_*` working folders and sandbox roots: they are the history
//!   of what was said and done, not where the tool looks for the session. Rewriting them would
//!   alter the conversation (thinking signatures and encrypted reasoning are bound to it), and
//!   a path in free text cannot be told from a mention of some other folder.
//! - Paths of other session files (pi `parentSession`/`branchedFrom`, agent
//!   `parent_session_path`): they point into the tool's store, whose folder names change with
//!   the project; moving those folders and indexes (`projects.json`, `.project_root`,
//!   simple-agent `meta.json`) is the store's step, not a byte rewrite of one file.
//! - Values holding invalid UTF-8: counted in [`Rekeyed::skipped`] (`sessiontool repair`
//!   first). Invalid bytes elsewhere in a record (a message) do not stop its re-keying, and
//!   stay as they were.
//! - Keys and record types written with escapes (`"c\u0077d"`): no writer escapes ASCII
//!   letters, and the cheap pre-filter looks for the plain text.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::ops::Range;

use memchr::memmem;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::formats::{FieldKind, Format, ProjectField};
use crate::ids::sha256_hex;
use crate::records::{LineSplitter, Options, Record};

/// A project folder that moved from `old` to `new` (absolute paths, as the tools store them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    old: String,
    new: String,
    old_hash: String,
    new_hash: String,
    /// OLD is a Windows path: `\` separates too.
    windows: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("{0:?} is not an absolute path")]
    NotAbsolute(String),
    #[error("{0:?} is a root folder: a project folder cannot be the root")]
    Root(String),
    #[error("the old and the new folder are the same ({0:?})")]
    Same(String),
}

impl Move {
    /// Trailing separators are dropped (`/old/` is `/old`). Both paths must be absolute
    /// (POSIX, or Windows `C:\`, `\\server`), not a root, and differ.
    pub fn new(old: &str, new: &str) -> Result<Move, MoveError> {
        let old = normalize(old)?;
        let new = normalize(new)?;
        if old == new {
            return Err(MoveError::Same(old));
        }
        Ok(Move {
            old_hash: sha256_hex(&old),
            new_hash: sha256_hex(&new),
            windows: is_windows(&old),
            old,
            new,
        })
    }

    pub fn old_path(&self) -> &str {
        &self.old
    }

    pub fn new_path(&self) -> &str {
        &self.new
    }

    /// NEW back to OLD.
    pub fn reversed(&self) -> Move {
        Move {
            old: self.new.clone(),
            new: self.old.clone(),
            old_hash: self.new_hash.clone(),
            new_hash: self.old_hash.clone(),
            windows: is_windows(&self.new),
        }
    }

    /// The path rule: where `value` is after the move, `None` when it is not OLD or below it.
    pub fn map_path(&self, value: &str) -> Option<String> {
        let rest = self.rest(value)?;
        Some(format!("{}{rest}", self.new))
    }

    /// The hash rule for OLD itself: `sha256_hex(NEW)` when `value` is `sha256_hex(OLD)`.
    pub fn map_hash(&self, value: &str) -> Option<&str> {
        (value == self.old_hash).then_some(self.new_hash.as_str())
    }

    /// What follows OLD in `value` (empty, or starting with a separator).
    fn rest<'v>(&self, value: &'v str) -> Option<&'v str> {
        let rest = value.strip_prefix(self.old.as_str())?;
        match rest.as_bytes().first() {
            None | Some(b'/') => Some(rest),
            Some(b'\\') if self.windows => Some(rest),
            _ => None,
        }
    }
}

fn is_windows(p: &str) -> bool {
    let b = p.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
        || p.starts_with("\\\\")
}

fn normalize(p: &str) -> Result<String, MoveError> {
    let windows = is_windows(p);
    if !(p.starts_with('/') || windows) {
        return Err(MoveError::NotAbsolute(p.to_string()));
    }
    let is_sep = |c: char| c == '/' || (windows && c == '\\');
    let trimmed = p.trim_end_matches(is_sep);
    let root = trimmed.is_empty() || (windows && trimmed.len() == 2 && trimmed.ends_with(':'));
    if root || (windows && p.starts_with("\\\\") && !trimmed[2..].contains(is_sep)) {
        return Err(MoveError::Root(p.to_string()));
    }
    Ok(trimmed.to_string())
}

/// What a re-key changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rekeyed {
    /// Values changed per field (an element of a path list counts as one), in the order the
    /// format lists its fields.
    pub counts: Vec<(ProjectField, u64)>,
    /// Records (lines; 1 for a whole document) in which something changed.
    pub records: u64,
    /// String values of project fields that are neither OLD, below OLD, nor a hash this move
    /// changes: the file (also) records another project.
    pub unmatched: u64,
    /// Values left alone because they hold invalid UTF-8 (`sessiontool repair` first).
    pub skipped: u64,
}

impl Rekeyed {
    fn new(fields: &[ProjectField]) -> Self {
        Rekeyed {
            counts: fields.iter().map(|f| (*f, 0)).collect(),
            records: 0,
            unmatched: 0,
            skipped: 0,
        }
    }

    /// How many values changed in all.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// How many values of the field with this dotted name (`payload.cwd`) changed.
    pub fn count(&self, field: &str) -> u64 {
        self.counts
            .iter()
            .filter(|(f, _)| f.name() == field)
            .map(|(_, n)| n)
            .sum()
    }
}

/// `12 cwd, 1 projectHash` (the fields that changed), or `nothing`.
impl fmt::Display for Rekeyed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (field, n) in self.counts.iter().filter(|(_, n)| *n > 0) {
            if any {
                f.write_str(", ")?;
            }
            write!(f, "{n} {}", field.name())?;
            any = true;
        }
        if !any {
            f.write_str("nothing")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RekeyError {
    /// A whole-file session that is not a JSON object (cut off by a crash?): nothing can be
    /// located in it. `sessiontool repair` rebuilds what it can first.
    #[error("not a readable JSON document: {0}")]
    NotJson(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Re-keys a JSONL session from `reader` to `writer`, line by line (any size; memory is the
/// longest line). A final line without a newline stays without one.
pub fn rekey_jsonl(
    format: &dyn Format,
    mut reader: impl BufRead,
    writer: impl Write,
    mv: &Move,
) -> io::Result<Rekeyed> {
    let mut rekeyer = Rekeyer::new(format.project_fields(), mv);
    let mut out = io::BufWriter::with_capacity(64 * 1024, writer);
    let mut line = Vec::with_capacity(64 * 1024);
    let (mut offset, mut number) = (0u64, 1u64);
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let terminated = line.last() == Some(&b'\n');
        let content = &line[..n - usize::from(terminated)];
        rekeyer.line(content, number, offset, terminated, &mut out)?;
        if terminated {
            out.write_all(b"\n")?;
        }
        offset += n as u64;
        number += 1;
    }
    out.flush()?;
    Ok(rekeyer.done())
}

/// Re-keys a whole-file session (one JSON document, as `gemini-json` or `simple-agent-json`).
/// Formats without project fields give the bytes back unchanged.
pub fn rekey_document(
    format: &dyn Format,
    bytes: &[u8],
    mv: &Move,
) -> Result<(Vec<u8>, Rekeyed), RekeyError> {
    let mut rekeyer = Rekeyer::new(format.project_fields(), mv);
    if rekeyer.fields.is_empty() {
        return Ok((bytes.to_vec(), rekeyer.done()));
    }
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let raw = &bytes[start..];
    let text = patched(raw);
    let sites = match rekeyer.sites(&text) {
        Ok(Some(sites)) => sites,
        Ok(None) => return Err(RekeyError::NotJson("not a JSON object".into())),
        Err(e) => return Err(RekeyError::NotJson(e.to_string())),
    };
    let edits = rekeyer.edits(&text, raw, sites);
    let mut out = Vec::with_capacity(bytes.len() + 256);
    out.extend_from_slice(&bytes[..start]);
    splice(raw, &edits, &mut out);
    rekeyer.result.records += u64::from(!edits.is_empty());
    Ok((out, rekeyer.done()))
}

/// [`rekey_jsonl`] or [`rekey_document`], as the format's files are laid out.
pub fn rekey_bytes(
    format: &dyn Format,
    bytes: &[u8],
    mv: &Move,
) -> Result<(Vec<u8>, Rekeyed), RekeyError> {
    if format.is_jsonl() {
        let mut out = Vec::with_capacity(bytes.len() + 256);
        let rekeyed = rekey_jsonl(format, bytes, &mut out, mv)?;
        Ok((out, rekeyed))
    } else {
        rekey_document(format, bytes, mv)
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// At most this many distinct folders below OLD are remembered for the hash rule.
const MAX_PROJECTS: usize = 4096;

/// A project value found in a record: which field, and its JSON text (borrowed from the
/// record, so its offset is known).
struct Site<'a> {
    field: usize,
    raw: &'a RawValue,
}

/// One replacement: bytes `range` of the record become `text`.
struct Edit {
    range: Range<usize>,
    text: String,
}

struct Rekeyer<'m> {
    fields: &'static [ProjectField],
    mv: &'m Move,
    /// A line that none of these fits holds no project field.
    filters: Vec<Filter>,
    /// Folders below OLD seen as path values: their hashes, before and after the move.
    seen: HashSet<String>,
    hashes: Vec<(String, String)>,
    result: Rekeyed,
}

/// A field's quoted top-level key and, when it is on some record types only, their quoted
/// names: a line holds the field only if it contains the key and one of the names.
struct Filter {
    key: memmem::Finder<'static>,
    types: Vec<memmem::Finder<'static>>,
}

impl Filter {
    fn fits(&self, line: &[u8]) -> bool {
        (self.types.is_empty() || self.types.iter().any(|t| t.find(line).is_some()))
            && self.key.find(line).is_some()
    }
}

fn quoted(s: &str) -> memmem::Finder<'static> {
    memmem::Finder::new(format!("\"{s}\"").as_bytes()).into_owned()
}

impl<'m> Rekeyer<'m> {
    fn new(fields: &'static [ProjectField], mv: &'m Move) -> Self {
        let mut filters: Vec<(&str, &[&str])> = fields
            .iter()
            .filter_map(|f| Some((*f.path.first()?, f.types)))
            .collect();
        filters.dedup();
        Rekeyer {
            fields,
            mv,
            filters: filters
                .into_iter()
                .map(|(key, types)| Filter {
                    key: quoted(key),
                    types: types.iter().map(|t| quoted(t)).collect(),
                })
                .collect(),
            seen: HashSet::new(),
            hashes: Vec::new(),
            result: Rekeyed::new(fields),
        }
    }

    fn done(self) -> Rekeyed {
        self.result
    }

    /// Copies one line (without its `\n`) to `out`, re-keyed.
    fn line(
        &mut self,
        content: &[u8],
        number: u64,
        offset: u64,
        terminated: bool,
        out: &mut impl Write,
    ) -> io::Result<()> {
        if !self.filters.iter().any(|f| f.fits(content)) {
            return out.write_all(content);
        }
        let text = patched(content);
        let edits = match self.sites(&text) {
            // The common case: the line is one JSON value.
            Ok(sites) => {
                let edits = sites.map_or_else(Vec::new, |s| self.edits(&text, content, s));
                self.result.records += u64::from(!edits.is_empty());
                edits
            }
            // Damaged: the records layer finds the records in it (glued, after a torn
            // fragment, around NUL padding, behind a BOM).
            Err(_) => self.damaged_line(content, &text, number, offset, terminated),
        };
        if edits.is_empty() {
            return out.write_all(content);
        }
        let mut buf = Vec::with_capacity(content.len() + 256);
        splice(content, &edits, &mut buf);
        out.write_all(&buf)
    }

    fn damaged_line(
        &mut self,
        content: &[u8],
        text: &str,
        number: u64,
        offset: u64,
        terminated: bool,
    ) -> Vec<Edit> {
        let mut records: Vec<Record> = Vec::new();
        let mut splitter = LineSplitter::new(Options {
            max_line_len: usize::MAX,
        });
        splitter.line(
            content,
            number,
            offset,
            terminated,
            &mut records,
            &mut Vec::new(),
        );
        splitter.finish(&mut Vec::new());
        let mut edits = Vec::new();
        for record in &records {
            // The span is in the line's own bytes (also when the record's bytes were
            // repaired); `text` has the same length.
            let start = (record.span.offset - offset) as usize;
            let Some(record) = text.get(start..start + record.span.len as usize) else {
                continue;
            };
            if let Ok(Some(sites)) = self.sites(record) {
                let found = self.edits(text, content, sites);
                self.result.records += u64::from(!found.is_empty());
                edits.extend(found);
            }
        }
        edits.sort_by_key(|e| e.range.start);
        edits
    }

    /// The project values in one record. `Ok(None)`: valid JSON but not an object.
    fn sites<'a>(&self, text: &'a str) -> serde_json::Result<Option<Vec<Site<'a>>>> {
        let all: Vec<usize> = (0..self.fields.len()).collect();
        let wants_type = self.fields.iter().any(|f| !f.types.is_empty());
        let mut de = serde_json::Deserializer::from_str(text);
        let picked = match (Pick {
            fields: self.fields,
            live: &all,
            depth: 0,
            wants_type,
        })
        .deserialize(&mut de)
        {
            Ok(picked) => picked,
            Err(e) if e.is_data() => {
                // Not an object; still, trailing garbage is a syntax error, not "no object".
                return match serde_json::from_str::<IgnoredAny>(text) {
                    Ok(_) => Ok(None),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        de.end()?;
        let kind: Option<String> = picked
            .kind
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        let mut sites = Vec::new();
        self.nested(picked.found, kind.as_deref(), &mut sites);
        Ok(Some(sites))
    }

    /// Follows the picked values down to the fields' last keys.
    fn nested<'a>(
        &self,
        found: Vec<(usize, usize, &'a RawValue)>,
        kind: Option<&str>,
        sites: &mut Vec<Site<'a>>,
    ) {
        for (field, depth, raw) in found {
            let f = &self.fields[field];
            if !f.types.is_empty() && !kind.is_some_and(|k| f.types.contains(&k)) {
                continue;
            }
            if depth + 1 == f.path.len() {
                sites.push(Site { field, raw });
                continue;
            }
            let mut de = serde_json::Deserializer::from_str(raw.get());
            let seed = Pick {
                fields: self.fields,
                live: &[field],
                depth: depth + 1,
                wants_type: false,
            };
            if let Ok(inner) = seed.deserialize(&mut de) {
                self.nested(inner.found, kind, sites);
            }
        }
    }

    /// The replacements for the sites found in `text` (a line or document, or a record within
    /// it; `raw`: the bytes `text` was made from, see [`patched`]), counted.
    fn edits(&mut self, text: &str, raw: &[u8], sites: Vec<Site>) -> Vec<Edit> {
        let fields = self.fields;
        let base = text.as_ptr() as usize;
        // Where a value is; `None` (counted as skipped) when it holds invalid UTF-8.
        let span = |value: &RawValue, result: &mut Rekeyed| {
            let at = value.get().as_ptr() as usize - base;
            let range = at..at + value.get().len();
            if raw[range.clone()] == text.as_bytes()[range.clone()] {
                Some(range)
            } else {
                result.skipped += 1;
                None
            }
        };
        let mut edits = Vec::new();
        // Paths first: a folder below OLD found here lets the hash rule move its hash too.
        for site in sites
            .iter()
            .filter(|s| fields[s.field].kind != FieldKind::Hash)
        {
            let values: Vec<&RawValue> = match fields[site.field].kind {
                FieldKind::PathList => {
                    serde_json::from_str::<Vec<&RawValue>>(site.raw.get()).unwrap_or_default()
                }
                _ => vec![site.raw],
            };
            for value in values {
                let Some(decoded) = decode(value) else {
                    continue;
                };
                let Some(range) = span(value, &mut self.result) else {
                    continue;
                };
                let Some(text) = self.path_edit(value.get(), &decoded) else {
                    self.result.unmatched += 1;
                    continue;
                };
                self.result.counts[site.field].1 += 1;
                edits.push(Edit { range, text });
            }
        }
        for site in sites
            .iter()
            .filter(|s| fields[s.field].kind == FieldKind::Hash)
        {
            let Some(decoded) = decode(site.raw) else {
                continue;
            };
            let Some(range) = span(site.raw, &mut self.result) else {
                continue;
            };
            let new = self.mv.map_hash(&decoded).or_else(|| {
                self.hashes
                    .iter()
                    .find(|(old, _)| *old == decoded)
                    .map(|(_, new)| new.as_str())
            });
            let Some(new) = new else {
                self.result.unmatched += 1;
                continue;
            };
            let text = serde_json::to_string(new).expect("a string serializes");
            self.result.counts[site.field].1 += 1;
            edits.push(Edit { range, text });
        }
        edits.sort_by_key(|e| e.range.start);
        edits
    }

    /// The new JSON text of a path value (`raw`, decoded `value`), or `None` when the path
    /// rule leaves it alone. Remembers folders below OLD for the hash rule.
    fn path_edit(&mut self, raw: &str, value: &str) -> Option<String> {
        let rest = self.mv.rest(value)?;
        if !rest.is_empty() && self.seen.len() < MAX_PROJECTS && !self.seen.contains(value) {
            self.seen.insert(value.to_string());
            let moved = format!("{}{rest}", self.mv.new);
            self.hashes.push((sha256_hex(value), sha256_hex(&moved)));
        }
        let inner = &raw[1..raw.len() - 1];
        let mut out = String::with_capacity(raw.len() + self.mv.new.len());
        out.push('"');
        match raw_boundary(inner, value.len() - rest.len()) {
            // Only the OLD part is rewritten; the rest keeps its bytes.
            Some(cut) => {
                Style::of(inner, cut).encode(&self.mv.new, &mut out);
                out.push_str(&inner[cut..]);
            }
            None => {
                let style = Style::of(inner, inner.len());
                style.encode(&format!("{}{rest}", self.mv.new), &mut out);
            }
        }
        out.push('"');
        Some(out)
    }
}

/// `bytes` as text of the same length: every byte of an invalid UTF-8 sequence becomes `?`,
/// so a record with a bad byte in some message still parses and its offsets stay those of
/// the file. Values that hold such a byte are left alone (see [`Rekeyer::edits`]).
fn patched(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    let mut at = 0;
    while let Err(e) = simdutf8::compat::from_utf8(&out[at..]) {
        let bad = at + e.valid_up_to();
        let len = e.error_len().unwrap_or(out.len() - bad);
        out[bad..bad + len].fill(b'?');
        at = bad + len;
    }
    Cow::Owned(String::from_utf8(out).expect("every invalid sequence was replaced"))
}

/// The decoded string of a JSON value; `None` when it is not a string.
fn decode(raw: &RawValue) -> Option<String> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(raw.get()).ok()
}

/// Writes `content` with `edits` (sorted, not overlapping) applied.
fn splice(content: &[u8], edits: &[Edit], out: &mut Vec<u8>) {
    let mut at = 0;
    for e in edits {
        out.extend_from_slice(&content[at..e.range.start]);
        out.extend_from_slice(e.text.as_bytes());
        at = e.range.end;
    }
    out.extend_from_slice(&content[at..]);
}

/// Where, in the JSON text of a string (without its quotes), the first `decoded` bytes of its
/// value end; `None` when that is not at the end of an escape or character.
fn raw_boundary(inner: &str, decoded: usize) -> Option<usize> {
    let b = inner.as_bytes();
    let (mut i, mut n) = (0, 0);
    while n < decoded {
        if b.get(i) == Some(&b'\\') {
            if b.get(i + 1) == Some(&b'u') {
                let cp = hex4(b.get(i + 2..i + 6)?)?;
                if (0xD800..0xDC00).contains(&cp) {
                    // A surrogate pair: one character of four bytes.
                    i += 12;
                    n += 4;
                } else {
                    i += 6;
                    n += char::from_u32(cp)?.len_utf8();
                }
            } else {
                i += 2;
                n += 1;
            }
        } else {
            let len = inner.get(i..)?.chars().next()?.len_utf8();
            i += len;
            n += len;
        }
    }
    (n == decoded && i <= b.len()).then_some(i)
}

fn hex4(b: &[u8]) -> Option<u32> {
    u32::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok()
}

/// The escapes a writer used in a string, beyond what serde_json writes: `\/` for `/`, and
/// `\uXXXX` for non-ASCII characters (Python's `ensure_ascii`), in its hex case.
#[derive(Debug, Clone, Copy, Default)]
struct Style {
    slash: bool,
    ascii: bool,
    upper: bool,
}

/// What the first `/` and the first non-ASCII character of a string's JSON text say.
#[derive(Debug, Clone, Copy, Default)]
struct Evidence {
    slash: Option<bool>,
    /// (escaped, upper-case hex)
    non_ascii: Option<(bool, bool)>,
}

impl Style {
    /// The style of the part of a value that is replaced (`inner[..cut]`), where it shows;
    /// otherwise that of the whole value.
    fn of(inner: &str, cut: usize) -> Style {
        let (part, whole) = (Evidence::of(&inner[..cut]), Evidence::of(inner));
        let slash = part.slash.or(whole.slash).unwrap_or(false);
        let (ascii, upper) = part.non_ascii.or(whole.non_ascii).unwrap_or_default();
        Style {
            slash,
            ascii,
            upper,
        }
    }

    /// Appends `s` as JSON string text (no quotes) in this style.
    fn encode(self, s: &str, out: &mut String) {
        let json = serde_json::to_string(s).expect("a string serializes");
        let inner = &json[1..json.len() - 1];
        if !self.slash && !self.ascii {
            out.push_str(inner);
            return;
        }
        // serde_json's escapes hold neither `/` nor non-ASCII: those are literal characters.
        for c in inner.chars() {
            if c == '/' && self.slash {
                out.push_str("\\/");
            } else if !c.is_ascii() && self.ascii {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if self.upper {
                        out.push_str(&format!("\\u{u:04X}"));
                    } else {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            } else {
                out.push(c);
            }
        }
    }
}

impl Evidence {
    fn of(inner: &str) -> Evidence {
        let b = inner.as_bytes();
        let mut e = Evidence::default();
        let mut i = 0;
        while i < b.len() && (e.slash.is_none() || e.non_ascii.is_none()) {
            match b[i] {
                b'\\' => {
                    match b.get(i + 1) {
                        Some(b'/') => {
                            e.slash.get_or_insert(true);
                        }
                        Some(b'u') => {
                            let hex = b.get(i + 2..i + 6).unwrap_or_default();
                            if hex4(hex).is_some_and(|cp| cp >= 0x80) {
                                let upper = hex.iter().any(u8::is_ascii_uppercase);
                                e.non_ascii.get_or_insert((true, upper));
                            }
                            i += 4;
                        }
                        _ => {}
                    }
                    i += 2;
                }
                b'/' => {
                    e.slash.get_or_insert(false);
                    i += 1;
                }
                c => {
                    if !c.is_ascii() {
                        e.non_ascii.get_or_insert((false, false));
                    }
                    i += 1;
                }
            }
        }
        e
    }
}

/// Reads one JSON object, keeping the raw values of the keys some live field names at `depth`
/// (and of `type`, when asked), skipping the others.
struct Pick<'s> {
    fields: &'static [ProjectField],
    live: &'s [usize],
    depth: usize,
    wants_type: bool,
}

struct Picked<'a> {
    /// (field, depth, value)
    found: Vec<(usize, usize, &'a RawValue)>,
    kind: Option<&'a RawValue>,
}

impl<'de> DeserializeSeed<'de> for Pick<'_> {
    type Value = Picked<'de>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = Picked<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut picked = Picked {
            found: Vec::new(),
            kind: None,
        };
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let key = key.0.as_ref();
            let mut matching = self
                .live
                .iter()
                .copied()
                .filter(|&i| self.fields[i].path.get(self.depth) == Some(&key))
                .peekable();
            if matching.peek().is_some() {
                let raw: &'de RawValue = map.next_value()?;
                picked
                    .found
                    .extend(matching.map(|field| (field, self.depth, raw)));
                if self.wants_type && key == "type" {
                    picked.kind = Some(raw);
                }
            } else if self.wants_type && key == "type" {
                picked.kind = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(picked)
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(v.to_string().into()))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use super::*;
    use crate::formats::by_name;

    fn mv(old: &str, new: &str) -> Move {
        Move::new(old, new).unwrap()
    }

    /// Re-keys `input` as `format` (reading through a tiny buffer, so lines cross reads) and
    /// checks that the reverse move gives the input back.
    fn rekey(format: &str, input: &str, m: &Move) -> (String, Rekeyed) {
        let (out, r) = rekey_raw(format, input.as_bytes(), m);
        (String::from_utf8(out).unwrap(), r)
    }

    fn rekey_raw(format: &str, input: &[u8], m: &Move) -> (Vec<u8>, Rekeyed) {
        let f = by_name(format).unwrap();
        let (out, r) = if f.is_jsonl() {
            let mut out = Vec::new();
            let r = rekey_jsonl(f, BufReader::with_capacity(7, input), &mut out, m).unwrap();
            (out, r)
        } else {
            rekey_document(f, input, m).unwrap()
        };
        assert!(
            rekey_bytes(f, input, m).unwrap().0 == out,
            "rekey_bytes differs"
        );
        let (back, _) = rekey_bytes(f, &out, &m.reversed()).unwrap();
        assert!(
            back == input,
            "the reverse move does not give the input back:\n{}\n{}",
            String::from_utf8_lossy(&back),
            String::from_utf8_lossy(input),
        );
        (out, r)
    }

    #[test]
    fn path_rule() {
        let m = mv("/old", "/new");
        assert_eq!(m.map_path("/old").as_deref(), Some("/new"));
        assert_eq!(m.map_path("/old/sub").as_deref(), Some("/new/sub"));
        assert_eq!(m.map_path("/old/").as_deref(), Some("/new/"));
        assert_eq!(m.map_path("/oldx"), None);
        assert_eq!(m.map_path("/oldx/sub"), None);
        assert_eq!(m.map_path("/ol"), None);
        assert_eq!(m.map_path("/other/old"), None);
        assert_eq!(
            m.map_path("/old\\sub"),
            None,
            "\\ is a file name character on POSIX"
        );
        assert_eq!(
            mv("/old/", "/new//").map_path("/old/a").as_deref(),
            Some("/new/a")
        );
        let w = mv("C:\\Users\\me\\old", "D:\\new");
        assert_eq!(
            w.map_path("C:\\Users\\me\\old\\src").as_deref(),
            Some("D:\\new\\src")
        );
        assert_eq!(w.map_path("C:\\Users\\me\\oldx"), None);
    }

    #[test]
    fn hash_rule_and_bad_moves() {
        let m = mv("/old", "/new");
        assert_eq!(
            m.map_hash(&sha256_hex("/old")),
            Some(sha256_hex("/new").as_str())
        );
        assert_eq!(m.map_hash(&sha256_hex("/old/sub")), None);
        assert_eq!(
            m.reversed().map_hash(&sha256_hex("/new")),
            Some(sha256_hex("/old").as_str())
        );
        assert!(matches!(
            Move::new("old", "/new"),
            Err(MoveError::NotAbsolute(_))
        ));
        assert!(matches!(Move::new("/", "/new"), Err(MoveError::Root(_))));
        assert!(matches!(Move::new("/a", "C:\\"), Err(MoveError::Root(_))));
        assert!(matches!(Move::new("/a/", "/a"), Err(MoveError::Same(_))));
    }

    #[test]
    fn prefix_rule_in_records() {
        let input = concat!(
            r#"{"uuid":"1","cwd":"/old","type":"user"}"#,
            "\n",
            r#"{"uuid":"2","cwd":"/oldx","type":"user"}"#,
            "\n",
            r#"{"uuid":"3","cwd":"/old/sub","type":"user"}"#,
            "\n",
            r#"{"uuid":"4","cwd":"/other/old","type":"user"}"#,
            "\n",
        );
        let (out, r) = rekey("qwen-jsonl", input, &mv("/old", "/new"));
        assert_eq!(
            out,
            concat!(
                r#"{"uuid":"1","cwd":"/new","type":"user"}"#,
                "\n",
                r#"{"uuid":"2","cwd":"/oldx","type":"user"}"#,
                "\n",
                r#"{"uuid":"3","cwd":"/new/sub","type":"user"}"#,
                "\n",
                r#"{"uuid":"4","cwd":"/other/old","type":"user"}"#,
                "\n",
            )
        );
        assert_eq!((r.count("cwd"), r.records, r.unmatched), (2, 2, 2));
        assert_eq!(r.to_string(), "2 cwd");
    }

    #[test]
    fn escaped_values() {
        // Decoded comparison; the escapes the writer used are kept, in the replaced part too.
        let m = mv("/old", "/new");
        let (out, r) = rekey("claude-jsonl", r#"{"cwd":"\/old\/a\"b"}"#, &m);
        assert_eq!(out, r#"{"cwd":"\/new\/a\"b"}"#);
        assert_eq!(r.total(), 1);
        let m = mv("/h\u{e9}", "/n\u{fc}/\u{1F600}");
        let (out, _) = rekey("claude-jsonl", r#"{"cwd":"\/h\u00e9\/\u00E9"}"#, &m);
        assert_eq!(out, r#"{"cwd":"\/n\u00fc\/\ud83d\ude00\/\u00E9"}"#);
        let (out, _) = rekey("claude-jsonl", "{\"cwd\":\"/h\u{e9}/x\"}", &m);
        assert_eq!(out, "{\"cwd\":\"/n\u{fc}/\u{1F600}/x\"}");
        // A new path that needs escaping.
        let m = mv("/old", "/a \"b\"\\c");
        let (out, _) = rekey("claude-jsonl", r#"{"cwd":"/old/x"}"#, &m);
        assert_eq!(out, r#"{"cwd":"/a \"b\"\\c/x"}"#);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["cwd"], "/a \"b\"\\c/x");
        // An escaped old path whose rest starts inside a surrogate pair's neighbour.
        let m = mv("/\u{1F600}", "/x");
        let (out, _) = rekey(
            "claude-jsonl",
            r#"{"cwd":"\/\ud83d\ude00\/\ud83d\ude00"}"#,
            &m,
        );
        assert_eq!(out, r#"{"cwd":"\/x\/\ud83d\ude00"}"#);
    }

    #[test]
    fn damaged_lines_are_copied_and_records_in_them_rekeyed() {
        let m = mv("/old", "/new");
        let input = concat!(
            "\u{feff}{\"cwd\":\"/old\"}\n",              // BOM
            "garbage \"cwd\" here\n",                    // not JSON
            "{\"cwd\":\"/old\"}{\"cwd\":\"/old/a\"}\n",  // glued
            "{\"cwd\":\"/old\",\"x{\"cwd\":\"/old\"}\n", // torn fragment, record glued after it
            "\0\0\0{\"cwd\":\"/old\"}\n",                // NUL padding
            "{\"cwd\":\"/old\"}\r\n",                    // CRLF
            "\n",                                        // blank
            "[\"cwd\",\"/old\"]\n",                      // JSON, not an object
            "{\"cwd\":\"/old\",\"torn",                  // torn last line
        );
        let (out, r) = rekey("claude-jsonl", input, &m);
        assert_eq!(
            out,
            concat!(
                "\u{feff}{\"cwd\":\"/new\"}\n",
                "garbage \"cwd\" here\n",
                "{\"cwd\":\"/new\"}{\"cwd\":\"/new/a\"}\n",
                "{\"cwd\":\"/old\",\"x{\"cwd\":\"/new\"}\n",
                "\0\0\0{\"cwd\":\"/new\"}\n",
                "{\"cwd\":\"/new\"}\r\n",
                "\n",
                "[\"cwd\",\"/old\"]\n",
                "{\"cwd\":\"/old\",\"torn",
            )
        );
        assert_eq!((r.count("cwd"), r.records), (6, 6));
    }

    #[test]
    fn invalid_utf8_is_kept_and_values_holding_it_are_skipped() {
        let m = mv("/old", "/new");
        let input =
            b"{\"cwd\":\"/old\",\"t\":\"\xff\xc3\"}\n{\"cwd\":\"/old/\xe9\"}{\"cwd\":\"/old\"}\n";
        let (out, r) = rekey_raw("qwen-jsonl", input, &m);
        let want =
            b"{\"cwd\":\"/new\",\"t\":\"\xff\xc3\"}\n{\"cwd\":\"/old/\xe9\"}{\"cwd\":\"/new\"}\n";
        assert_eq!(out, want);
        assert_eq!((r.total(), r.skipped, r.records), (2, 1, 2));
        let doc = b"{\n  \"path\": \"/old\",\n  \"x\": \"\xff\"\n}";
        let (out, r) = rekey_raw("simple-agent-json", doc, &m);
        assert_eq!(out, b"{\n  \"path\": \"/new\",\n  \"x\": \"\xff\"\n}");
        assert_eq!(r.total(), 1);
    }

    #[test]
    fn final_line_without_newline_stays_so() {
        let m = mv("/old", "/new");
        let (out, _) = rekey("pi-jsonl", r#"{"type":"session","cwd":"/old"}"#, &m);
        assert_eq!(out, r#"{"type":"session","cwd":"/new"}"#);
        let (out, _) = rekey("pi-jsonl", "{\"type\":\"session\",\"cwd\":\"/old\"}\n", &m);
        assert_eq!(out, "{\"type\":\"session\",\"cwd\":\"/new\"}\n");
        let (out, r) = rekey("pi-jsonl", "", &m);
        assert_eq!((out.as_str(), r.total()), ("", 0));
    }

    #[test]
    fn only_the_listed_fields_change() {
        let m = mv("/old", "/new");
        // Nested in an unrelated place, in text, in tool input: left alone. White space kept.
        let input = concat!(
            r#"{ "message" : {"cwd":"/old","content":"cd /old"}, "toolUseResult":{"cwd":"/old"},"#,
            r#" "cwd" :  "/old" ,"input":{"file_path":"/old/a.rs"},"x":"\"cwd\":\"/old\""}"#,
            "\n"
        );
        let (out, r) = rekey("claude-jsonl", input, &m);
        assert_eq!(
            out,
            input.replacen(r#" "cwd" :  "/old" "#, r#" "cwd" :  "/new" "#, 1)
        );
        assert_eq!(r.total(), 1);
        // Duplicate keys: every occurrence.
        let (out, _) = rekey("claude-jsonl", r#"{"cwd":"/old","cwd":"/old/a"}"#, &m);
        assert_eq!(out, r#"{"cwd":"/new","cwd":"/new/a"}"#);
    }

    #[test]
    fn non_string_values_are_left_alone() {
        let m = mv("/old", "/new");
        for line in [
            r#"{"cwd":null}"#,
            r#"{"cwd":42}"#,
            r#"{"cwd":["/old"]}"#,
            r#"{"cwd":{"path":"/old"}}"#,
            r#"{"cwd":true}"#,
        ] {
            let (out, r) = rekey("qwen-jsonl", line, &m);
            assert_eq!((out.as_str(), r.total(), r.unmatched), (line, 0, 0));
        }
        let (out, r) = rekey(
            "gemini-jsonl",
            r#"{"$set":{"directories":["/old",1,null,"/oldx",{"a":"/old"},"/old/lib"]}}"#,
            &m,
        );
        assert_eq!(
            out,
            r#"{"$set":{"directories":["/new",1,null,"/oldx",{"a":"/old"},"/new/lib"]}}"#
        );
        assert_eq!((r.count("$set.directories"), r.unmatched), (2, 1));
        let (out, _) = rekey(
            "gemini-jsonl",
            r#"{"$set":"/old","directories":"/old"}"#,
            &m,
        );
        assert_eq!(out, r#"{"$set":"/old","directories":"/old"}"#);
    }

    #[test]
    fn record_types_limit_fields() {
        let m = mv("/old", "/new");
        let input = concat!(
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/old"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"exec_command_begin","cwd":"/old"}}"#,
            "\n",
            r#"{"payload":{"cwd":"/old/sub","model":"m"},"timestamp":"t","type":"turn_context"}"#,
            "\n",
        );
        let (out, r) = rekey("codex-jsonl", input, &m);
        assert_eq!(
            out,
            input
                .replacen(r#""cwd":"/old"}}"#, r#""cwd":"/new"}}"#, 1)
                .replace("/old/sub", "/new/sub")
        );
        assert_eq!((r.count("payload.cwd"), r.records), (2, 2));
        // pi: only the header's cwd.
        let input =
            "{\"type\":\"session\",\"cwd\":\"/old\"}\n{\"type\":\"custom\",\"cwd\":\"/old\"}\n";
        let (out, _) = rekey("pi-jsonl", input, &m);
        assert_eq!(out, input.replacen("/old", "/new", 1));
    }

    #[test]
    fn hashes_move_with_their_folder() {
        let m = mv("/old", "/new");
        let (old, new) = (sha256_hex("/old"), sha256_hex("/new"));
        let (app, app_new) = (sha256_hex("/old/app"), sha256_hex("/new/app"));
        let start = |hash: &str, cwd: &str| {
            format!(
                r#"{{"v":1,"seq":1,"ts":"t","type":"session_start","payload":{{"sessionId":"s","projectHash":"{hash}","workspaceDirs":["{cwd}","/lib"],"cwd":"{cwd}"}}}}"#
            )
        };
        let input = format!(
            "{}\n{}\n",
            start(&old, "/old"),
            r#"{"v":1,"seq":2,"ts":"t","type":"directories_changed","payload":{"directories":["/old","/old/x"]}}"#
        );
        let (out, r) = rekey("llxprt-jsonl", &input, &m);
        assert_eq!(out, input.replace(&old, &new).replace("\"/old", "\"/new"));
        assert_eq!(
            r.to_string(),
            "1 payload.projectHash, 1 payload.cwd, 1 payload.workspaceDirs, 2 payload.directories"
        );
        assert_eq!(r.unmatched, 1);
        // A project below OLD: its hash follows the cwd recorded beside it (after it, here).
        let input = start(&app, "/old/app");
        let (out, _) = rekey("llxprt-jsonl", &input, &m);
        assert_eq!(out, start(&app_new, "/new/app"));
        // ... but not a hash of some other folder, nor one in a record of another type.
        let input = start(&sha256_hex("/elsewhere"), "/old/app");
        let (out, _) = rekey("llxprt-jsonl", &input, &m);
        assert_eq!(out, start(&sha256_hex("/elsewhere"), "/new/app"));
        let input = format!(r#"{{"type":"session_event","payload":{{"projectHash":"{old}"}}}}"#);
        assert_eq!(rekey("llxprt-jsonl", &input, &m).0, input);
        // Gemini JSONL: the header's hash; a later `$set.directories` too.
        let input = format!(
            "{{\"sessionId\":\"s\",\"projectHash\":\"{old}\",\"startTime\":\"t\"}}\n{}\n",
            r#"{"$set":{"directories":["/old"]}}"#
        );
        let (out, r) = rekey("gemini-jsonl", &input, &m);
        assert_eq!(
            out,
            input.replace(&old, &new).replace("\"/old\"", "\"/new\"")
        );
        assert_eq!(r.to_string(), "1 projectHash, 1 $set.directories");
    }

    #[test]
    fn documents() {
        let m = mv("/home/u/old", "/home/u/new");
        let doc = format!(
            "{{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"{}\",\n  \"messages\": [\n    {{\"id\": \"m\", \"content\": \"/home/u/old\", \"directories\": [\"/home/u/old\"]}}\n  ],\n  \"directories\": [\n    \"/home/u/old\",\n    \"/home/u/old/lib\"\n  ]\n}}",
            sha256_hex("/home/u/old")
        );
        let (out, r) = rekey("gemini-json", &doc, &m);
        let want = doc
            .replace(&sha256_hex("/home/u/old"), &sha256_hex("/home/u/new"))
            .replace("\n    \"/home/u/old", "\n    \"/home/u/new");
        assert_eq!(out, want);
        assert_eq!(
            (r.to_string().as_str(), r.records),
            ("1 projectHash, 2 directories", 1)
        );
        // BOM and a final newline are kept.
        let (out, _) = rekey(
            "simple-agent-json",
            "\u{feff}{\n  \"path\": \"/home/u/old\"\n}\n",
            &m,
        );
        assert_eq!(out, "\u{feff}{\n  \"path\": \"/home/u/new\"\n}\n");
        // A cut-off document cannot be re-keyed; a format without project fields is unchanged.
        let f = by_name("gemini-json").unwrap();
        assert!(matches!(
            rekey_document(f, b"{\"projectHash\": \"ab", &m),
            Err(RekeyError::NotJson(_))
        ));
        assert!(rekey_document(f, b"[1]", &m).is_err());
        let cp = by_name("checkpoint").unwrap();
        let bytes = b"[{\"role\":\"user\",\"parts\":[{\"text\":\"/home/u/old\"}]}]";
        let (out, r) = rekey_bytes(cp, bytes, &m).unwrap();
        assert_eq!((out.as_slice(), r.total()), (&bytes[..], 0));
        assert_eq!(r.to_string(), "nothing");
    }
}
