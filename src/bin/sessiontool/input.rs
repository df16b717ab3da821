//! Reading an input argument: a file path, or `-` for standard input.

use std::io::Read;
use std::path::{Path, PathBuf};

use sessiontool::formats::{self, Format};
use sessiontool::regular_file;

use crate::error::CliError;
use crate::escape;

pub struct Loaded {
    /// What to call it in messages.
    pub name: String,
    pub path: Option<PathBuf>,
    pub bytes: Vec<u8>,
}

impl Loaded {
    pub fn input(&self) -> formats::Input<'_> {
        formats::Input {
            name: &self.name,
            path: self.path.as_deref(),
            bytes: &self.bytes,
        }
    }
}

pub fn load(arg: &Path) -> Result<Loaded, CliError> {
    if arg == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::input(format!("cannot read standard input: {e}")))?;
        return Ok(Loaded {
            name: "<stdin>".into(),
            path: None,
            bytes,
        });
    }
    // Only a regular file: a FIFO would block the read, a device could do anything.
    let bytes = regular_file::read(arg).map_err(|e| read_error(arg, e))?;
    Ok(Loaded {
        name: arg.display().to_string(),
        path: Some(arg.to_path_buf()),
        bytes,
    })
}

/// A file argument opened to be read in place (not `-`), refused as [`load`] refuses it.
pub fn open(arg: &Path) -> Result<std::fs::File, CliError> {
    regular_file::open(arg).map_err(|e| read_error(arg, e))
}

fn read_error(arg: &Path, e: std::io::Error) -> CliError {
    match regular_file::is_not_regular(&e) {
        Some(kind) => CliError::input(format!(
            "{} is not a regular file ({kind})",
            escape::path(arg)
        ))
        .hint(
            "name a session file; to read from a pipe, pass `-` and redirect it to standard input",
        ),
        None => CliError::input(format!("cannot read {}: {e}", escape::path(arg)))
            .hint("check the path; `-` reads standard input"),
    }
}

/// A `--from`/`--to` value as a format (clap has checked it against [`all_formats`]).
pub fn format_arg(name: &str) -> Result<&'static dyn Format, CliError> {
    formats::by_name(name).ok_or_else(|| {
        CliError::usage(format!("unknown format {name:?}")).hint("`sessiontool formats` lists them")
    })
}

/// `--from` values, for completions and `--help`: the formats sessiontool reads (exports are
/// written only).
pub fn readable_formats() -> clap::builder::PossibleValuesParser {
    formats::all()
        .iter()
        .filter(|f| f.resumable())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .into()
}

/// `--to` values: every format sessiontool writes (a read-only layout is not one).
pub fn all_formats() -> clap::builder::PossibleValuesParser {
    formats::all()
        .iter()
        .filter(|f| f.writable())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .into()
}
