//! Paths in `--json` documents: a path that is not UTF-8 is written with U+FFFD for the bytes
//! that are not (as the human output shows it), instead of failing the whole document.

use std::path::{Path, PathBuf};

use serde::Serializer;

pub fn lossy<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

pub fn lossy_opt<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_some(&*p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

pub fn lossy_vec<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| p.to_string_lossy()))
}
