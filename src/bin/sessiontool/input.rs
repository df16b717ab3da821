//! Reading an input argument: a file path, `-` for standard input, or a session in a database
//! as `PATH#SESSION_ID` (OpenCode's `opencode.db#ses_…`).

use std::io::Read;
use std::path::{Path, PathBuf};

use sessiontool::convert::ConvertError;
use sessiontool::engine::view::View;
use sessiontool::engine::{FileSource, Source};
use sessiontool::formats::database::{self, Address, DatabaseFormat};
use sessiontool::formats::{self, Format, ReadOutcome};
use sessiontool::regular_file;

use crate::error::CliError;
use crate::escape;

pub struct Loaded {
    /// What to call it in messages.
    pub name: String,
    pub path: Option<PathBuf>,
    pub bytes: Vec<u8>,
    /// A session in a database: read by its database format, not from `bytes` (empty).
    pub database: Option<(Address, &'static dyn DatabaseFormat)>,
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
            database: None,
        });
    }
    if let Some((address, format)) = Address::parse(arg) {
        return Ok(Loaded {
            name: address.name(),
            path: Some(address.db.clone()),
            bytes: Vec::new(),
            database: Some((address, format)),
        });
    }
    // Only a regular file: a FIFO would block the read, a device could do anything.
    let bytes = regular_file::read(arg).map_err(|e| read_error(arg, e))?;
    Ok(Loaded {
        name: arg.display().to_string(),
        path: Some(arg.to_path_buf()),
        bytes,
        database: None,
    })
}

/// A file argument to read in place, in two passes (`show`, `tree`), or `None` when it must be
/// [`load`]ed whole: standard input, a session in a database, a database file named without a
/// session (reading it whole says to name one).
pub fn in_place(file: &Path) -> Result<Option<FileSource>, CliError> {
    if file == Path::new("-") || Address::parse(file).is_some() {
        return Ok(None);
    }
    let source = FileSource::new(open(file)?).map_err(|e| read_error(file, e))?;
    let mut magic = [0; database::SQLITE_MAGIC.len()];
    if source.read_exact_at(&mut magic, 0).is_ok() && magic == *database::SQLITE_MAGIC {
        return Ok(None);
    }
    Ok(Some(source))
}

/// A session file read in two passes ([`View`]): `read` gets its name (as messages call it)
/// and its view. `Ok(None)`, with nothing said, when the engine does not read it (standard
/// input, a database, a format it has no scanner for): the caller reads the whole session.
pub fn with_view<T>(
    file: &Path,
    from: Option<&'static dyn Format>,
    read: impl FnOnce(&str, &View) -> Result<T, CliError>,
) -> Result<Option<T>, CliError> {
    let Some(source) = in_place(file)? else {
        return Ok(None);
    };
    let name = file.display().to_string();
    let view = View::open(&name, Some(file), &source, from).map_err(|e| read_error(file, e))?;
    view.map(|view| read(&name, &view)).transpose()
}

/// Every node of `view` in file order, made for `made_for`, into `seq`: what `element` makes of
/// each, serialized as it is read. The output's first error stops the reading and is the one
/// returned; the input not read again (it changed since pass one) is an error of the output.
pub fn serialize_each_node<S: serde::ser::SerializeSeq>(
    view: &View,
    made_for: sessiontool::engine::MadeFor,
    seq: &mut S,
    mut element: impl FnMut(&mut S, u32, &sessiontool::model::Node) -> Result<(), S::Error>,
) -> Result<(), S::Error> {
    let all: Vec<u32> = (0..view.len() as u32).collect();
    let mut failed = None;
    let read = view.each_node(&all, made_for, |i, node| {
        element(seq, i, node).map_err(|e| {
            failed = Some(e);
            std::io::Error::other("output failed")
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    read.map_err(|e| serde::ser::Error::custom(format!("cannot read the session again: {e}")))
}

/// A file argument opened to be read in place (not `-`), refused as [`load`] refuses it.
pub fn open(arg: &Path) -> Result<std::fs::File, CliError> {
    regular_file::open(arg).map_err(|e| read_error(arg, e))
}

pub fn read_error(arg: &Path, e: std::io::Error) -> CliError {
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

/// Reads the session `loaded` holds: a file's in the format given or detected, a database's
/// with its database format (`from` must then be left out). The format's name and what was
/// read.
pub fn read(
    loaded: &Loaded,
    from: Option<&'static dyn Format>,
) -> Result<(&'static str, ReadOutcome), CliError> {
    match &loaded.database {
        None => {
            refuse_whole_database(loaded)?;
            let (format, outcome) = sessiontool::convert::read(&loaded.input(), from)?;
            Ok((format.name(), outcome))
        }
        Some((address, format)) => {
            if let Some(asked) = from {
                return Err(CliError::usage(format!(
                    "{} is a session of {}, not {}",
                    escape::line(&loaded.name),
                    format.name(),
                    asked.name()
                ))
                .hint("leave out --from: a database's format is known from the file"));
            }
            let outcome = database::read(address, *format).map_err(ConvertError::Read)?;
            Ok((format.name(), outcome))
        }
    }
}

/// A `--from`/`--to` value as a format (clap has checked it against [`all_formats`]).
pub fn format_arg(name: &str) -> Result<&'static dyn Format, CliError> {
    formats::by_name(name).ok_or_else(|| {
        CliError::usage(format!("unknown format {name:?}")).hint("`sessiontool formats` lists them")
    })
}

/// A database file named without a session: it holds many, so say which.
fn refuse_whole_database(loaded: &Loaded) -> Result<(), CliError> {
    let Some(path) = &loaded.path else {
        return Ok(());
    };
    if !loaded.bytes.starts_with(database::SQLITE_MAGIC) {
        return Ok(());
    }
    match database::detect(path) {
        Some(format) => Err(ConvertError::Read(database::needs_session(path, format)).into()),
        None => Ok(()),
    }
}

/// Reads and converts the session `loaded` holds into `to` (see [`read`]).
pub fn convert(
    loaded: &Loaded,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &formats::WriteOptions,
) -> Result<sessiontool::convert::Conversion, CliError> {
    if loaded.database.is_none() {
        refuse_whole_database(loaded)?;
        return Ok(sessiontool::convert::convert(
            &loaded.input(),
            from,
            to,
            options,
        )?);
    }
    let (format, outcome) = read(loaded, from)?;
    let convert =
        sessiontool::convert::convert_read(format, outcome, &loaded.input(), to, options, |_| {});
    Ok(convert?)
}

/// `--from` values, for completions and `--help`: the file formats sessiontool reads (exports
/// are written only; a database session's format is always known from its file).
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
