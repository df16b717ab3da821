//! Writing a session into a tool's store: converted, recorded under the project it is placed
//! for, named and filed the way the tool names and files its own, with the tool's registries
//! told about it. Never replaces a file unless asked.

use std::path::{Path, PathBuf};

use super::home::Home;
use super::tool::Tool;
use super::tools::{self, NewSession, PlaceError, RegistryLocks};
use crate::convert::{self, Conversion, ConvertError};
use crate::formats::database::{self, Address, DatabaseFormat};
use crate::formats::{Format, Input, WriteOptions};
use crate::ids::sha256_hex;

/// What to place, where.
pub struct Request<'a> {
    pub from: Option<&'static dyn Format>,
    pub to: &'static dyn Format,
    /// The project's absolute path.
    pub project: &'a str,
    /// For checkpoints: the tag.
    pub tag: Option<&'a str>,
    pub options: &'a WriteOptions,
    /// Replace a session file of the same name.
    pub force: bool,
    /// Work out the target only; write nothing.
    pub dry_run: bool,
}

#[derive(Debug)]
pub struct Placed {
    pub path: PathBuf,
    /// The session's id as written (a writer may mint one, e.g. a UUID for Qwen Code).
    pub id: Option<String>,
    pub tool: Tool,
    pub conversion: Conversion,
    /// Registries updated (or, in a dry run, that would be), in words.
    pub registered: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlaceFailure {
    #[error(transparent)]
    Convert(#[from] ConvertError),
    #[error("{0}")]
    Place(#[from] PlaceError),
    #[error("{} exists; nothing was written", .0.display())]
    Exists(PathBuf),
    #[error("cannot write {}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

/// Converts `input` into `request.to` and writes it where that format's tool finds sessions
/// of `request.project`. The session is recorded under the project (its `cwd` and
/// `projectHash` become the project's), since a tool only resumes sessions of the folder it
/// runs in.
pub fn place(home: &Home, input: &Input, request: &Request) -> Result<Placed, PlaceFailure> {
    let tool = target_tool(request)?;
    let project = request.project;
    let conversion =
        convert::convert_with(input, request.from, request.to, request.options, |s| {
            record_project(s, project)
        })?;
    place_converted(home, input, tool, conversion, request)
}

/// [`place`] for a session in a database (`PATH#SESSION_ID`), read by its database format.
pub fn place_database(
    home: &Home,
    address: &Address,
    format: &'static dyn DatabaseFormat,
    request: &Request,
) -> Result<Placed, PlaceFailure> {
    let tool = target_tool(request)?;
    let outcome = database::read(address, format).map_err(ConvertError::Read)?;
    let name = address.name();
    let input = Input {
        name: &name,
        path: Some(&address.db),
        bytes: &[],
    };
    let project = request.project;
    let conversion = convert::convert_read(
        format.name(),
        outcome,
        &input,
        request.to,
        request.options,
        |s| record_project(s, project),
    )?;
    place_converted(home, &input, tool, conversion, request)
}

fn target_tool(request: &Request) -> Result<Tool, PlaceError> {
    Tool::of_format(request.to.name()).ok_or_else(|| {
        PlaceError(format!(
            "{} is an export, not a format any tool resumes",
            request.to.name()
        ))
    })
}

/// A tool resumes only sessions of the folder it runs in: the session is recorded there.
fn record_project(meta: &mut crate::model::Meta, project: &str) {
    meta.cwd = Some(project.to_string());
    meta.project_hash = Some(sha256_hex(project));
}

/// Writes a converted session where its tool finds it, and registers it.
fn place_converted(
    home: &Home,
    input: &Input,
    tool: Tool,
    mut conversion: Conversion,
    request: &Request,
) -> Result<Placed, PlaceFailure> {
    let project = request.project;
    // A JSONL session placed in a store ends with its newline, whatever the input did: the
    // tool appends its next record there (without one the two would be glued), and fsck
    // warns about a missing final newline.
    if request.to.is_jsonl() && conversion.bytes.last().is_some_and(|&b| b != b'\n') {
        conversion.bytes.push(b'\n');
    }
    // The file is named from the session as written (a writer may mint its id).
    let written = request
        .to
        .read(&Input {
            name: input.name,
            path: None,
            bytes: &conversion.bytes,
        })
        .map_err(|e| PlaceError(format!("the converted session does not read back: {e}")))?;
    let store = tools::of(tool);
    // The registries that decide where the session goes and learn about it are locked from
    // the first read to the last write, so two writers (or Gemini CLI) never lose each
    // other's entries or claim one slug twice.
    let locks = if request.dry_run {
        RegistryLocks::default()
    } else {
        RegistryLocks::acquire(home, store.registries(home))?
    };
    let target = store.place(
        home,
        &NewSession {
            format: request.to,
            project,
            meta: &written.session.meta,
            tag: request.tag,
        },
    )?;
    if target.path.exists() && !request.force {
        return Err(PlaceFailure::Exists(target.path));
    }
    let mut registered: Vec<String> = target.registrations.iter().map(|r| r.describe()).collect();
    let mut writes = vec![target.path.clone()];
    writes.extend(target.registrations.iter().flat_map(|r| r.files()));
    for path in writes {
        super::guard::check(home, &path).map_err(|e| PlaceFailure::Io(path.clone(), e))?;
    }
    if !request.dry_run {
        // Every registration readies itself before anything is written (Codex's database is
        // locked and backed up: a refusal writes nothing), the registries are written under
        // their locks, then the session, then what is made from the session as written
        // (Codex's row; dropped unwritten, it is rolled back).
        let mut after = Vec::new();
        for (i, r) in target.registrations.iter().enumerate() {
            if let Some(rest) = r.begin()? {
                after.push((i, rest));
            }
        }
        for r in &target.registrations {
            r.apply(&locks)?;
        }
        locks.release()?;
        conversion.replaced = write_session(&target.path, &conversion.bytes, request.force)?;
        for (i, rest) in after {
            registered[i] = rest.write(&target.path, &conversion.bytes)?;
        }
    }
    Ok(Placed {
        path: target.path,
        id: written.session.meta.id.clone(),
        tool,
        conversion,
        registered,
    })
}

/// Whether a session of `project` could go into `to`'s store as far as its registries say:
/// not damaged, not behind a symbolic link. For a caller that changes something else first
/// (recover repairs before it places), so a refusal comes before any change.
pub fn preflight(home: &Home, to: &dyn Format, project: &str) -> Result<(), PlaceFailure> {
    let Some(tool) = Tool::of_format(to.name()) else {
        return Ok(());
    };
    let store = tools::of(tool);
    let mut files = store.registries(home);
    files.extend(store.check_registries(home, project)?);
    for file in files {
        super::guard::check(home, &file).map_err(|e| PlaceFailure::Io(file.clone(), e))?;
    }
    Ok(())
}

/// Writes the session file; one it replaces (`force`) is kept as `<name>.bak-<time>`,
/// returned.
fn write_session(path: &Path, bytes: &[u8], force: bool) -> Result<Option<PathBuf>, PlaceFailure> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| PlaceFailure::Io(dir.to_path_buf(), e))?;
    }
    crate::io::write_output(path, bytes, force).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            PlaceFailure::Exists(path.to_path_buf())
        } else {
            PlaceFailure::Io(path.to_path_buf(), e)
        }
    })
}
