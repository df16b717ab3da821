//! The [`Format`] of a write-only export: everything but its name, its file names and how it
//! prints a [`Doc`] is the same for every export, so each only implements [`Exporter`].

use super::{Doc, build};
use crate::formats::{Confidence, Format, Rules, WriteError, WriteOptions, Writer, Written};
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

    fn rules(&self) -> &'static Rules {
        &RULES
    }

    fn writer(&self) -> Option<&dyn Writer> {
        Some(self)
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    resumable: false,
    ..Rules::DOCUMENT
};

impl<E: Exporter> Writer for E {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let doc = build(session, options)?;
        let text = E::render(&doc);
        Ok(Written {
            bytes: text.into_bytes(),
            losses: doc.losses,
        })
    }

    fn file_name(&self, stem: &str) -> Option<String> {
        Some(format!("{stem}{}", E::EXTENSIONS[0]))
    }

    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(E::EXTENSIONS.iter().any(|e| n.ends_with(e))) * 90
    }
}
