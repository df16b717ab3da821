//! What the integration tests share: fixture lists (`gemini_formats` checks each list is the
//! whole folder), the path of a fixture, and a legacy Gemini session made for a project. Each
//! test uses some of it.
#![allow(dead_code)]

pub mod prerequisite;

use std::path::{Path, PathBuf};

use sessiontool::ids::sha256_hex;

/// `fixtures/<rel>` of this checkout.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Every format sessiontool writes sessions in for a tool to resume (the exports are checked
/// elsewhere), from the registry: a format added there is in every cross-format test at once.
pub fn session_formats() -> Vec<&'static str> {
    sessiontool::formats::all()
        .iter()
        .filter(|f| f.resumable() && f.writable())
        .map(|f| f.name())
        .collect()
}

/// Every format sessions are read from (the read-only ones too, such as Codex's older
/// layout), from the registry.
pub fn source_formats() -> Vec<&'static str> {
    sessiontool::formats::all()
        .iter()
        .filter(|f| f.resumable())
        .map(|f| f.name())
        .collect()
}

/// The non-empty files of `fixtures/<format>/`, sorted. A format without fixtures fails the
/// test that asks: it would otherwise be in no conversion at all.
pub fn fixtures_of(format: &str) -> Vec<PathBuf> {
    let folder = fixture(format);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{format} has no fixtures folder {}: {e}", folder.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && std::fs::metadata(p).unwrap().len() > 0)
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{format}: {} is empty", folder.display());
    names
}

/// Writes `bytes` to `path` with a modification time an hour back: a session a tool stopped
/// writing (a crashed one), which repair does not wait for as it waits for a file whose last
/// line may still be being written.
pub fn write_idle(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::write(path, bytes).unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
}

/// The legacy Gemini JSON fixture `fixture_rel` with its `projectHash` set to `project`'s,
/// written pretty as `dir/name` (as Gemini CLI keeps a session of that project).
pub fn legacy(fixture_rel: &str, project: &str, dir: &Path, name: &str) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture(fixture_rel)).unwrap()).unwrap();
    doc["projectHash"] = sha256_hex(project).into();
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

pub const GEMINI_JSON: &[&str] = &[
    "plain.json",
    "tools.json",
    "thoughts.json",
    "v028-parts.json",
    "notices.json",
    "unknown-fields.json",
    "unicode.json",
    "empty.json",
    "every-part.json",
    "seed003.json",
];
pub const CHECKPOINT: &[&str] = &[
    "checkpoint-object.json",
    "checkpoint-array.json",
    "checkpoint-my%20tag.json",
];
