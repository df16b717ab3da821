//! Writing a session into a tool's store: converted, recorded under the project it is placed
//! for, named and filed the way the tool names and files its own, with the tool's registries
//! told about it. Never replaces a file unless asked.

use std::path::{Path, PathBuf};

use super::codex_state;
use super::gemini_registry;
use super::home::Home;
use super::lock::FileLock;
use super::tool::Tool;
use super::tools::{self, NewSession, PlaceError, Registration};
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
        Vec::new()
    } else {
        lock_registries(home, store.registries(home))?
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
    let registered: Vec<String> = target.registrations.iter().map(describe).collect();
    let mut writes = vec![target.path.clone()];
    writes.extend(target.registrations.iter().flat_map(files));
    for path in writes {
        super::guard::check(home, &path).map_err(|e| PlaceFailure::Io(path.clone(), e))?;
    }
    let mut registered = registered;
    if !request.dry_run {
        // Codex's database is locked and backed up before the session is written (a refusal
        // writes nothing), and the row is written after it (from the file as written).
        let codex = target.registrations.iter().find_map(|r| match r {
            Registration::CodexThread { databases } => Some(databases),
            _ => None,
        });
        let writer = codex
            .map(|d| codex_state::Writer::begin(d, &crate::repair::now_stamp()))
            .transpose()
            .map_err(|e| PlaceError(format!("{e}; nothing was written")))?;
        for r in &target.registrations {
            if !matches!(r, Registration::CodexThread { .. }) {
                apply(r, &locks)?;
            }
        }
        for lock in locks {
            let path = lock.path().to_path_buf();
            lock.release().map_err(|e| PlaceFailure::Io(path, e))?;
        }
        conversion.replaced = write_session(&target.path, &conversion.bytes, request.force)?;
        if let Some(writer) = writer {
            let said = register_codex(home, writer, &target.path, &conversion.bytes)?;
            for r in registered.iter_mut() {
                if r.starts_with(&said.0) {
                    *r = said.1.clone();
                }
            }
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

/// Writes and commits the row of the rollout just written; says where (the database's path,
/// then the registration in words).
fn register_codex(
    home: &Home,
    mut writer: codex_state::Writer,
    path: &Path,
    bytes: &[u8],
) -> Result<(String, String), PlaceFailure> {
    let database = writer.state_path().display().to_string();
    let failed = |e: String| {
        PlaceError(format!(
            "{} was written, but {database} was not updated: {e}; `sessiontool recover {}` registers it",
            path.display(),
            path.display()
        ))
    };
    let id = writer
        .register(&home.codex(), path, bytes)
        .map_err(failed)?;
    let backups = writer.commit().map_err(failed)?;
    let backups: Vec<String> = backups.iter().map(|b| b.display().to_string()).collect();
    Ok((
        database.clone(),
        format!(
            "{database} lists thread {id} (backup: {})",
            backups.join(", ")
        ),
    ))
}

/// Takes the lock of each registry file, after checking that no symbolic link inside the
/// store leads to it (and making its folder, which the lock lives in).
fn lock_registries(home: &Home, files: Vec<PathBuf>) -> Result<Vec<FileLock>, PlaceFailure> {
    let mut locks = Vec::new();
    for file in files {
        super::guard::check(home, &file).map_err(|e| PlaceFailure::Io(file.clone(), e))?;
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| PlaceFailure::Io(dir.to_path_buf(), e))?;
        }
        locks.push(FileLock::acquire(&file).map_err(|e| PlaceFailure::Io(file.clone(), e))?);
    }
    Ok(locks)
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

/// Tells a registry about a new session, under its lock (one of `locks`, checked to be still
/// held). Read again here, so what another writer added meanwhile stays.
fn apply(registration: &Registration, locks: &[FileLock]) -> Result<(), PlaceFailure> {
    let file = files(registration)[0].clone();
    let held = locks
        .iter()
        .find(|l| l.path() == super::lock::lock_path(&file))
        .ok_or_else(|| {
            PlaceError(format!(
                "{} is not locked for this write (sessiontool's own mistake); nothing was written",
                file.display()
            ))
        })?;
    held.verify()
        .map_err(|e| PlaceFailure::Io(file.clone(), e))?;
    match registration {
        Registration::GeminiProject {
            gemini,
            project,
            slug,
        } => {
            gemini_registry::register(gemini, project, slug).map_err(|e| PlaceFailure::Io(file, e))
        }
        // Written with the session itself, under SQLite's lock (see `place`).
        Registration::CodexThread { .. } => Ok(()),
        Registration::SimpleAgentIndex { index, cwd, id } => {
            let current = match std::fs::read(index) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(PlaceFailure::Io(index.clone(), e)),
            };
            let updated =
                crate::formats::simple_agent_json::index_entry(current.as_deref(), cwd, id)
                    .map_err(|e| {
                        PlaceFailure::Place(PlaceError(format!("{}: {e}", index.display())))
                    })?;
            crate::io::write_atomic(index, &updated, true)
                .map_err(|e| PlaceFailure::Io(index.clone(), e))
        }
    }
}

/// The files a registration writes: the registry or index first, then the rest.
fn files(registration: &Registration) -> Vec<PathBuf> {
    match registration {
        Registration::GeminiProject { gemini, slug, .. } => {
            let mut files = vec![gemini_registry::registry_path(gemini)];
            // A slug that is not a folder name was refused when the target was chosen.
            files.extend(gemini_registry::markers(gemini, slug).into_iter().flatten());
            files
        }
        Registration::SimpleAgentIndex { index, .. } => vec![index.clone()],
        Registration::CodexThread { databases } => vec![databases.state.clone()],
    }
}

/// A registration in words.
pub fn describe(registration: &Registration) -> String {
    match registration {
        Registration::GeminiProject {
            gemini,
            project,
            slug,
        } => format!(
            "{} maps {project} to {slug}; .project_root markers in tmp/{slug} and history/{slug}",
            gemini_registry::registry_path(gemini).display()
        ),
        Registration::SimpleAgentIndex { index, cwd, id } => {
            format!("{} lists {id} under {cwd}", index.display())
        }
        Registration::CodexThread { databases } => format!(
            "{} lists the thread as Codex registers a rollout (a backup of it first)",
            databases.state.display()
        ),
    }
}
