//! `store::rekey` against every fixture of every format that records its project, and every
//! real sample in `../shared/samples`: a move and its reverse give the same bytes back; after
//! the move the file reads with its format's reader and its metadata names the new folder; and
//! the only bytes that changed are the values of the format's project fields.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use sessiontool::formats::{self, Format, Input, ProjectField};
use sessiontool::ids::sha256_hex;
use sessiontool::model::Session;
use sessiontool::store::rekey::{Move, Rekeyed, rekey_bytes};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples");

/// Project roots of files that record only their hash (the hash is checked before use).
const KNOWN_ROOTS: &[&str] = &[
    "/home/user/project",
    "/home/alex/src/weather-app",
    "/Users/yoavfarhi/dev/pomodoro/gemini",
];

struct Case {
    path: PathBuf,
    format: &'static dyn Format,
    bytes: Vec<u8>,
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Every fixture whose format records a project: by its folder's format name, else detected
/// (`damaged/`, `unfixable/`). Not the fuzz corpus (`fuzz/`): hostile inputs such as a document
/// nested past the JSON parser's depth limit cannot be re-keyed, only refused, which
/// tests/hostile.rs and tests/fuzz.rs check.
fn fixture_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let fuzz = Path::new(FIXTURES).join("fuzz");
    for path in files_under(Path::new(FIXTURES)) {
        if path.starts_with(&fuzz) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let folder = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let format = formats::by_name(folder).or_else(|| formats::detect(Some(&path), &bytes));
        if let Some(format) = format.filter(|f| !f.project_fields().is_empty()) {
            cases.push(Case {
                path,
                format,
                bytes,
            });
        }
    }
    cases
}

/// The real samples, or `None` after saying that the test did not run.
fn sample_cases() -> Option<Vec<Case>> {
    if !common::prerequisite::present(
        Path::new(SAMPLES).is_dir(),
        &format!("../shared missing ({SAMPLES} is absent)"),
    ) {
        return None;
    }
    let cases: Vec<Case> = files_under(Path::new(SAMPLES))
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            let format = formats::detect(Some(&path), &bytes)
                .unwrap_or_else(|| panic!("{}: no format detected", path.display()));
            Case {
                path,
                format,
                bytes,
            }
        })
        .collect();
    assert!(!cases.is_empty(), "no samples in {SAMPLES}");
    Some(cases)
}

fn read(case: &Case, bytes: &[u8]) -> Option<(Session, Vec<String>)> {
    let name = case.path.display().to_string();
    let input = Input {
        name: &name,
        path: Some(&case.path),
        bytes,
    };
    let outcome = case.format.read(&input).ok()?;
    let codes = outcome
        .diagnostics
        .iter()
        .map(|d| d.code.to_string())
        .collect();
    Some((outcome.session, codes))
}

/// The string values of a format's project fields in a file (every record, every type).
fn field_values(case: &Case) -> Vec<String> {
    let mut out = Vec::new();
    let mut take = |v: &Value| {
        for f in case.format.project_fields() {
            let mut at = Some(v);
            for key in f.path {
                at = at.and_then(|v| v.get(key));
            }
            match at {
                Some(Value::String(s)) => out.push(s.clone()),
                Some(Value::Array(a)) => {
                    out.extend(a.iter().filter_map(|v| v.as_str().map(String::from)))
                }
                _ => {}
            }
        }
    };
    if case.format.is_jsonl() {
        for line in case.bytes.split(|&b| b == b'\n') {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                take(&v);
            }
        }
    } else if let Ok(v) = serde_json::from_slice::<Value>(&case.bytes) {
        take(&v);
    }
    out
}

/// The folders to move for a file, each with whether the move must change something: its
/// project root (from what it reads as, or its project fields, or a known root whose hash it
/// records) and that root's parent (which only moves a recorded path: a hash alone cannot be
/// tied to a folder below OLD). A file that records no known project: a move that must
/// change nothing.
fn olds(case: &Case, session: Option<&Session>) -> Vec<(String, bool)> {
    let values = field_values(case);
    let meta = session.map(|s| &s.meta);
    let path = meta
        .and_then(|m| m.cwd.clone())
        .or_else(|| meta.and_then(|m| m.directories.as_ref()?.first().cloned()))
        .or_else(|| values.iter().find(|v| v.starts_with('/')).cloned());
    let hashes: Vec<&String> = values
        .iter()
        .chain(meta.and_then(|m| m.project_hash.as_ref()))
        .collect();
    let hashed = || {
        KNOWN_ROOTS
            .iter()
            .find(|r| hashes.contains(&&sha256_hex(r)))
            .map(|r| r.to_string())
    };
    let (root, parent_moves) = match (path, hashed()) {
        (Some(p), _) => (p, true),
        (None, Some(h)) => (h, false),
        (None, None) => return vec![("/no/such/project".into(), false)],
    };
    let mut olds = vec![(root.clone(), true)];
    if let Some(cut) = root.rfind('/').filter(|&c| c > 0) {
        olds.push((root[..cut].to_string(), parent_moves));
    }
    olds
}

/// One line of JSON text as string literals (quotes included, `true`) and the bytes between.
fn tokens(line: &[u8]) -> Vec<(bool, &[u8])> {
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < line.len() {
        if line[i] == b'"' {
            if start < i {
                out.push((false, &line[start..i]));
            }
            let open = i;
            i += 1;
            while i < line.len() && line[i] != b'"' {
                i += if line[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(line.len());
            out.push((true, &line[open..i]));
            start = i;
        } else {
            i += 1;
        }
    }
    if start < line.len() {
        out.push((false, &line[start..]));
    }
    out
}

/// Accepts the changed strings of a file or a session: every change is the path rule, or the
/// hash rule for OLD or for a folder below it whose path changed too. Returns how many.
struct Changes<'m> {
    mv: &'m Move,
    paths: Vec<String>,
    hashes: Vec<(String, String)>,
}

impl<'m> Changes<'m> {
    fn new(mv: &'m Move) -> Self {
        Changes {
            mv,
            paths: Vec::new(),
            hashes: Vec::new(),
        }
    }

    fn check(&mut self, before: &str, after: &str, context: &str) {
        if self.mv.map_path(before).as_deref() == Some(after) {
            self.paths.push(before.to_string());
        } else if is_hash(before) && is_hash(after) {
            self.hashes.push((before.to_string(), after.to_string()));
        } else {
            // A reader keeps the text of a record it does not know (Claude's unknown
            // entries): the same text, changed in string values only.
            self.check_text(before.as_bytes(), after.as_bytes(), context);
        }
    }

    /// Two JSON texts that differ only in string values, each changed by a rule.
    fn check_text(&mut self, before: &[u8], after: &[u8], context: &str) {
        let (tb, ta) = (tokens(before), tokens(after));
        assert_eq!(tb.len(), ta.len(), "{context}: token count changed");
        for ((sb, b), (sa, a)) in tb.iter().zip(&ta) {
            assert_eq!(sb, sa, "{context}");
            if b == a {
                continue;
            }
            assert!(
                *sb,
                "{context}: bytes outside a string changed: {:?} -> {:?}",
                String::from_utf8_lossy(b),
                String::from_utf8_lossy(a)
            );
            let b: String = serde_json::from_slice(b).unwrap();
            let a: String = serde_json::from_slice(a).unwrap();
            self.check(&b, &a, context);
        }
    }

    fn finish(self, context: &str) -> usize {
        for (before, after) in &self.hashes {
            let ok = self.mv.map_hash(before) == Some(after.as_str())
                || self.paths.iter().any(|p| {
                    sha256_hex(p) == *before && sha256_hex(&self.mv.map_path(p).unwrap()) == *after
                });
            assert!(
                ok,
                "{context}: {before:?} became {after:?}: neither the path nor the hash rule"
            );
        }
        self.paths.len() + self.hashes.len()
    }
}

fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The byte diff touches only string values, each changed by a rule; and, parsed, the two
/// texts differ only at the format's project fields. Returns how many strings changed.
fn check_diff(case: &Case, before: &[u8], after: &[u8], mv: &Move) -> usize {
    let name = case.path.display();
    let (lines_b, lines_a): (Vec<&[u8]>, Vec<&[u8]>) = (
        before.split(|&b| b == b'\n').collect(),
        after.split(|&b| b == b'\n').collect(),
    );
    assert_eq!(lines_b.len(), lines_a.len(), "{name}: line count changed");
    let mut changes = Changes::new(mv);
    for (n, (lb, la)) in lines_b.iter().zip(&lines_a).enumerate() {
        if lb == la {
            continue;
        }
        let context = format!("{name}:{}", n + 1);
        changes.check_text(lb, la, &context);
        if case.format.is_jsonl() {
            only_fields_differ(case.format.project_fields(), lb, la, &context);
        }
    }
    if !case.format.is_jsonl() {
        only_fields_differ(
            case.format.project_fields(),
            before,
            after,
            &name.to_string(),
        );
    }
    changes.finish(&name.to_string())
}

fn only_fields_differ(fields: &[ProjectField], before: &[u8], after: &[u8], context: &str) {
    let (Ok(mut b), Ok(mut a)) = (
        serde_json::from_slice::<Value>(before),
        serde_json::from_slice::<Value>(after),
    ) else {
        // A damaged line (glued records): the token check above covers it.
        return;
    };
    for v in [&mut b, &mut a] {
        for f in fields {
            let (last, parents) = f.path.split_last().unwrap();
            let mut at = Some(&mut *v);
            for key in parents {
                at = at.and_then(|v| v.get_mut(key));
            }
            if let Some(Value::Object(o)) = at {
                o.shift_remove(*last);
            }
        }
    }
    assert_eq!(
        b, a,
        "{context}: values other than the project fields changed"
    );
}

/// Every string of the session model that differs obeys a rule; nothing else differs.
fn check_session(before: &Value, after: &Value, changes: &mut Changes, context: &str) {
    match (before, after) {
        (Value::String(b), Value::String(a)) if b != a => changes.check(b, a, context),
        (Value::Array(b), Value::Array(a)) => {
            assert_eq!(b.len(), a.len(), "{context}");
            for (b, a) in b.iter().zip(a) {
                check_session(b, a, changes, context);
            }
        }
        (Value::Object(b), Value::Object(a)) => {
            assert!(b.keys().eq(a.keys()), "{context}: keys differ");
            for ((k, b), a) in b.iter().zip(a.values()) {
                check_session(b, a, changes, &format!("{context}.{k}"));
            }
        }
        (b, a) => assert_eq!(b, a, "{context}"),
    }
}

/// Moves one file and checks everything; returns the values changed.
fn check_move(case: &Case, old: &str, must_change: bool) -> Rekeyed {
    let name = case.path.display().to_string();
    let base = old.rsplit('/').next().unwrap();
    let new = format!("/srv/moved \"q\" ü/{base}");
    let mv = Move::new(old, &new).unwrap();
    let (out, rekeyed) =
        rekey_bytes(case.format, &case.bytes, &mv).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (back, reverse) = rekey_bytes(case.format, &out, &mv.reversed()).unwrap();
    assert!(
        back == case.bytes,
        "{name}: {old} -> {new} -> {old} does not give the same bytes"
    );
    assert_eq!(rekeyed.total(), reverse.total(), "{name}");
    assert_eq!(rekeyed.total() > 0, must_change, "{name}: {old}: {rekeyed}");
    assert_eq!(
        check_diff(case, &case.bytes, &out, &mv) as u64,
        rekeyed.total(),
        "{name}: the changed strings are not the values counted"
    );

    let Some((before, codes_before)) = read(case, &case.bytes) else {
        return rekeyed;
    };
    let (after, codes_after) =
        read(case, &out).unwrap_or_else(|| panic!("{name}: does not read after the move"));
    assert_eq!(
        codes_before, codes_after,
        "{name}: other diagnostics after the move"
    );
    let (m, n) = (&before.meta, &after.meta);
    let moved = |p: &String| mv.map_path(p).unwrap_or_else(|| p.clone());
    assert_eq!(n.cwd, m.cwd.as_ref().map(moved), "{name}: meta.cwd");
    assert_eq!(
        n.directories,
        m.directories
            .as_ref()
            .map(|d| d.iter().map(moved).collect::<Vec<_>>()),
        "{name}: meta.directories"
    );
    if let Some(h) = &m.project_hash {
        let recorded: Vec<&String> = m.cwd.iter().chain(m.directories.iter().flatten()).collect();
        let want = mv.map_hash(h).map(String::from).or_else(|| {
            recorded
                .iter()
                .filter(|p| sha256_hex(p) == *h)
                .find_map(|p| mv.map_path(p).map(|p| sha256_hex(&p)))
        });
        assert_eq!(
            n.project_hash.as_ref(),
            Some(want.as_ref().unwrap_or(h)),
            "{name}: projectHash"
        );
    }
    if m.cwd.as_ref().is_some_and(|c| mv.map_path(c).is_some()) {
        assert!(
            n.cwd.as_ref().unwrap().starts_with(&new),
            "{name}: meta.cwd not moved"
        );
    }
    let mut changes = Changes::new(&mv);
    check_session(
        &serde_json::to_value(&before).unwrap(),
        &serde_json::to_value(&after).unwrap(),
        &mut changes,
        &name,
    );
    changes.finish(&name);
    rekeyed
}

fn check_case(case: &Case) -> usize {
    let session = read(case, &case.bytes).map(|(s, _)| s);
    if !case.format.is_jsonl() && session.is_none() {
        // A whole document that does not read (cut off): nothing can be located in it.
        let mv = Move::new("/a", "/b").unwrap();
        assert!(
            rekey_bytes(case.format, &case.bytes, &mv).is_err(),
            "{}: an unreadable document was re-keyed",
            case.path.display()
        );
        println!("{}: unreadable document, refused", case.path.display());
        return 0;
    }
    let olds = olds(case, session.as_ref());
    for (old, must_change) in &olds {
        let r = check_move(case, old, *must_change);
        println!(
            "{} ({}): {old}: {r} ({} unmatched)",
            case.path.display(),
            case.format.name(),
            r.unmatched
        );
    }
    olds.len()
}

#[test]
fn fixtures_move_and_move_back() {
    let cases = fixture_cases();
    let mut formats: Vec<&str> = cases.iter().map(|c| c.format.name()).collect();
    formats.sort_unstable();
    formats.dedup();
    for f in formats::all() {
        if !f.project_fields().is_empty() {
            assert!(formats.contains(&f.name()), "no fixture of {}", f.name());
        }
    }
    let moves: usize = cases.iter().map(check_case).sum();
    println!("{} fixtures, {moves} moves", cases.len());
    assert!(moves > cases.len());
}

#[test]
fn samples_move_and_move_back() {
    let Some(cases) = sample_cases() else { return };
    let moves: usize = cases.iter().map(check_case).sum();
    println!("{} samples, {moves} moves", cases.len());
    assert!(moves >= cases.len());
}

/// A file that only names its project by hash: the hash moves with the folder, and only that.
#[test]
fn gemini_legacy_hash() {
    let path = Path::new(FIXTURES).join("gemini-json/tools.json");
    let bytes = std::fs::read(&path).unwrap();
    let case = Case {
        path,
        format: formats::by_name("gemini-json").unwrap(),
        bytes,
    };
    let r = check_move(&case, "/home/alex/src/weather-app", true);
    assert_eq!(r.to_string(), "1 projectHash");
    // Its parent: the file records no path to tie the hash to, so nothing moves.
    let r = check_move(&case, "/home/alex/src", false);
    assert_eq!(r.total(), 0);
}
