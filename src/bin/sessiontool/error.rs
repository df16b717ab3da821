//! Errors the command line reports: what happened, where, what to do, and the exit code.

use sessiontool::convert::ConvertError;
use sessiontool::diag::Location;

use crate::escape;

/// Documented exit codes (also in `--help` and README).
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
    pub fn input(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_INPUT,
            message: message.into(),
            location: None,
            hint: None,
        }
    }

    pub fn output(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_OUTPUT,
            message: message.into(),
            location: None,
            hint: None,
        }
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
        eprintln!("sessiontool: error: {}", escape::line(&self.message));
        if let Some(at) = &self.location {
            eprintln!("  at: {}", escape::line(&at.to_string()));
        }
        if let Some(h) = &self.hint {
            eprintln!("  hint: {}", escape::line(h));
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
        }
    }
}
