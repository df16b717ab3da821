//! Writing a session into a tool's store: converted, recorded under the project it is placed
//! for, named and filed the way the tool names and files its own, with the tool's registries
//! told about it. Never replaces a file unless asked.

use std::path::{Path, PathBuf};

use super::gemini_registry;
use super::home::Home;
use super::tool::Tool;
use super::tools::{self, NewSession, PlaceError, Registration};
use crate::convert::{self, Conversion, ConvertError};
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
    let tool = Tool::of_format(request.to.name()).ok_or_else(|| {
        PlaceError(format!(
            "{} is an export, not a format any tool resumes",
            request.to.name()
        ))
    })?;
    let project = request.project;
    let mut conversion =
        convert::convert_with(input, request.from, request.to, request.options, |s| {
            s.meta.cwd = Some(project.to_string());
            s.meta.project_hash = Some(sha256_hex(project));
        })?;
    // The file is named from the session as written (a writer may mint its id).
    let written = request
        .to
        .read(&Input {
            name: input.name,
            path: None,
            bytes: &conversion.bytes,
        })
        .map_err(|e| PlaceError(format!("the converted session does not read back: {e}")))?;
    let target = tools::of(tool).place(
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
    for path in std::iter::once(&target.path).chain(target.registrations.iter().flat_map(files)) {
        super::guard::check(home, path).map_err(|e| PlaceFailure::Io(path.clone(), e))?;
    }
    if !request.dry_run {
        for r in &target.registrations {
            apply(r)?;
        }
        conversion.replaced = write_session(&target.path, &conversion.bytes, request.force)?;
    }
    Ok(Placed {
        path: target.path,
        tool,
        conversion,
        registered,
    })
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

/// Tells a registry about a new session.
pub fn apply(registration: &Registration) -> Result<(), PlaceFailure> {
    match registration {
        Registration::GeminiProject {
            gemini,
            project,
            slug,
        } => gemini_registry::register(gemini, project, slug)
            .map_err(|e| PlaceFailure::Io(gemini.join("projects.json"), e)),
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
            if let Some(dir) = index.parent() {
                std::fs::create_dir_all(dir).map_err(|e| PlaceFailure::Io(dir.to_path_buf(), e))?;
            }
            crate::io::write_atomic(index, &updated, true)
                .map_err(|e| PlaceFailure::Io(index.clone(), e))
        }
    }
}

/// The files a registration writes.
fn files(registration: &Registration) -> Vec<&PathBuf> {
    match registration {
        Registration::GeminiProject { gemini, .. } => vec![gemini],
        Registration::SimpleAgentIndex { index, .. } => vec![index],
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
            gemini.join("projects.json").display()
        ),
        Registration::SimpleAgentIndex { index, cwd, id } => {
            format!("{} lists {id} under {cwd}", index.display())
        }
    }
}
