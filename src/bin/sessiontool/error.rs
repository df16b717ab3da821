//! Errors the command line reports: what happened, where, what to do, and the exit code; as
//! text on standard error, and with `--json` also as a `sessiontool.error/1` document.

use anstream::eprintln;
use serde::Serialize;
use sessiontool::convert::ConvertError;
use sessiontool::diag::Location;

use crate::escape;
use crate::style::{self, ERROR, HINT, NOTE};

/// Documented exit codes (also in `--help` and README).
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INPUT: i32 = 3;
pub const EXIT_OUTPUT: i32 = 4;
pub const EXIT_PARTIAL: i32 = 5;

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
    pub location: Option<Location>,
    pub hint: Option<String>,
}

impl CliError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        CliError {
            code,
            message: message.into(),
            location: None,
            hint: None,
        }
    }

    /// An option or a value that is wrong (exit 2; fsck and repair say 16).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(EXIT_USAGE, message)
    }

    pub fn input(message: impl Into<String>) -> Self {
        CliError::new(EXIT_INPUT, message)
    }

    pub fn output(message: impl Into<String>) -> Self {
        CliError::new(EXIT_OUTPUT, message)
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        self.code
    }

    /// On standard error; messages quote file names and session text, so every part is
    /// escaped for the terminal.
    pub fn print(&self) {
        eprintln!(
            "{} {}",
            style::paint(ERROR, "sessiontool: error:"),
            escape::line(&self.message)
        );
        if let Some(at) = &self.location {
            eprintln!(
                "  {} {}",
                style::paint(NOTE, "at:"),
                escape::line(&at.to_string())
            );
        }
        if let Some(h) = &self.hint {
            eprintln!("  {} {}", style::paint(HINT, "hint:"), escape::line(h));
        }
    }

    /// The `sessiontool.error/1` document (schemas/error.schema.json).
    pub fn document<'a>(&'a self, command: Option<&'a str>) -> impl Serialize + 'a {
        #[derive(Serialize)]
        struct Body<'a> {
            kind: &'static str,
            message: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            location: Option<&'a Location>,
            #[serde(skip_serializing_if = "Option::is_none")]
            hint: Option<&'a str>,
        }
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            command: Option<&'a str>,
            exit_code: i32,
            error: Body<'a>,
        }
        let fsck_like = matches!(command, Some("fsck" | "repair"));
        let kind = match (self.code, fsck_like) {
            (crate::FSCK_USAGE, true) | (EXIT_USAGE, false) => "usage",
            (crate::fsck::EXIT_OPERATIONAL, true) => "operational",
            (EXIT_INPUT, false) => "input",
            (EXIT_OUTPUT, false) => "output",
            (EXIT_PARTIAL, false) => "partial",
            _ => "other",
        };
        Doc {
            schema: "sessiontool.error/1",
            command,
            exit_code: self.code,
            error: Body {
                kind,
                message: &self.message,
                location: self.location.as_ref(),
                hint: self.hint.as_deref(),
            },
        }
    }
}

impl From<ConvertError> for CliError {
    fn from(e: ConvertError) -> Self {
        let hint = e.hint();
        match e {
            ConvertError::Read(r) => CliError {
                code: EXIT_INPUT,
                message: r.message,
                location: Some(r.location),
                hint,
            },
            ConvertError::UnknownFormat { name } => CliError {
                code: EXIT_INPUT,
                message: format!("{name}: cannot tell which session format this is"),
                location: None,
                hint,
            },
            ConvertError::Write { to, source } => CliError {
                code: EXIT_OUTPUT,
                message: format!("cannot write {to}: {source}"),
                location: None,
                hint,
            },
            // --from contradicts the content: the option is wrong, not the file.
            e @ ConvertError::NotThisFormat { .. } => CliError {
                code: EXIT_USAGE,
                message: e.to_string(),
                location: None,
                hint,
            },
            ConvertError::Leaf(e) => CliError {
                code: id_code(&e),
                message: format!("--leaf: {e}"),
                location: None,
                hint,
            },
        }
    }
}

/// An id that names nothing is like an input without it (3, as recover says of a session);
/// one that names several is a usage error (2): more of it is needed.
pub fn id_code(e: &sessiontool::id_prefix::IdError) -> i32 {
    match e {
        sessiontool::id_prefix::IdError::NotFound { .. } => EXIT_INPUT,
        sessiontool::id_prefix::IdError::Ambiguous { .. } => EXIT_USAGE,
    }
}
