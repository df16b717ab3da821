//! The [`Format`] of a write-only export: everything but its name, its file names and how it
//! prints ([`Render`]) is the same for every export, so each only implements [`Exporter`].

use super::whole::Whole;
use super::{ExportError, Render, export};
use crate::formats::{Confidence, Format, Rules, WriteError, WriteOptions, Writer, Written};
use crate::model::Session;

/// What tells one export from another.
pub(crate) trait Exporter: Sync + 'static {
    /// Stable name used on the command line.
    const NAME: &'static str;
    /// One line for `sessiontool formats`.
    const DESCRIPTION: &'static str;
    /// The file name endings that ask for this export (`.md`).
    const EXTENSIONS: &'static [&'static str];
    /// The export itself (what the engine is handed).
    const THIS: &'static Self;
    /// What prints a session as the export's text.
    fn renderer() -> Box<dyn Render>;
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

    fn stream_target(&self) -> Option<crate::engine::Target> {
        Some(crate::engine::Target(E::THIS))
    }
}

/// What the checks, repair, conversion and the stores act on (see [`Rules`]).
const RULES: Rules = Rules {
    resumable: false,
    ..Rules::DOCUMENT
};

impl<E: Exporter> Writer for E {
    fn write(&self, session: &Session, options: &WriteOptions) -> Result<Written, WriteError> {
        let mut text = String::new();
        let put = &mut |s: &str| {
            text.push_str(s);
            Ok(())
        };
        let losses = match export(&Whole::new(session), options, &mut *E::renderer(), put) {
            Ok(losses) => losses,
            Err(ExportError::Write(e)) => return Err(e),
            Err(ExportError::Io(e)) => unreachable!("a session in memory is read without I/O: {e}"),
        };
        Ok(Written {
            bytes: text.into_bytes(),
            losses,
        })
    }

    fn file_name(&self, stem: &str) -> Option<String> {
        Some(format!("{stem}{}", E::EXTENSIONS[0]))
    }

    fn claims_name(&self, n: &str) -> Confidence {
        u8::from(E::EXTENSIONS.iter().any(|e| n.ends_with(e))) * 90
    }
}
