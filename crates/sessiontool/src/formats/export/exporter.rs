//! The [`Format`] of a write-only export: everything but its name, its file names and how it
//! prints a [`Doc`] is the same for every export, so each only implements [`Exporter`].

use std::path::Path;

use super::{Doc, build};
use crate::diag::Location;
use crate::formats::{
    Confidence, Format, Input, Keys, ReadError, ReadOutcome, WriteError, WriteOptions, Written,
};
use crate::model::Session;

/// What tells one export from another.
pub(crate) trait Exporter: Sync {
    /// Stable name used on the command line.
    const NAME: &'static str;
    /// One line for `sessiontool formats`.
    const DESCRIPTION: &'static str;
    /// The file name endings that ask for this export (`.md`).
    const EXTENSIONS: &'static [&'static str];
    /// The document as the export's text.
    fn render(doc: &Doc) -> String;
}

impl<E: Exporter> Format for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn description(&self) -> &'static str {
        E::DESCRIPTION
    }

    fn tool(&self) -> &'static str {
        "export"
    }

    fn resumable(&self) -> bool {
        false
    }

    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(E::EXTENSIONS.iter().any(|e| n.ends_with(e))) * 90
    }

    fn is_jsonl(&self) -> bool {
        false
    }

    fn file_name(&self, stem: &str) -> String {
        format!("{stem}{}", E::EXTENSIONS[0])
    }

    fn detect(&self, _path: Option<&Path>, _head: &[u8]) -> Confidence {
        0
    }

    fn read(&self, input: &Input) -> Result<ReadOutcome, ReadError> {
        Err(ReadError::new(
            Location::file(input.name),
            format!(
                "{} is write-only: sessions can be exported to it, not read from it",
                E::NAME
            ),
        )
        .with_hint("read the session in its original format (see `sessiontool formats`)"))
    }

    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let doc = build(session, options)?;
        let text = E::render(&doc);
        Ok(Written {
            bytes: text.into_bytes(),
            losses: doc.losses,
        })
    }

    fn keys<'a>(&self, _record: &'a [u8]) -> Option<Keys<'a>> {
        None
    }
}
