//! A small, stable API for scripts (migrations, exports, audits) that do not want to learn the
//! layers below: open a session file, check it, repair it, convert it, list and fill the tools'
//! stores. Everything here is re-exported at the crate root (`sessiontool::open`, ...).
//!
//! Each function is a thin call into the library ([`convert`](mod@crate::convert),
//! [`check`](mod@crate::check), [`repair`](mod@crate::repair), [`crate::store`]) and behaves as the matching `sessiontool` command does:
//! formats are detected from the content, outputs are written atomically and never replace a
//! file unless asked, repairs keep a backup. Every failure is one [`Error`] whose message says
//! what went wrong and where (file, line, byte offset).
//!
//! Formats are named as on the command line (`gemini-json`, `qwen-jsonl`, `markdown`, ...; see
//! [`crate::formats::all`]); tools as in `sessiontool list` ([`Tool`](crate::Tool)).
//!
//! ```
//! # fn main() -> Result<(), sessiontool::Error> {
//! let opened = sessiontool::open("fixtures/gemini-json/tools.json")?;
//! assert_eq!(opened.format, "gemini-json");
//!
//! let markdown = sessiontool::convert_bytes(&std::fs::read("fixtures/gemini-json/tools.json").unwrap(), None, "markdown")?;
//! assert!(String::from_utf8(markdown.bytes).unwrap().starts_with('#'));
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};

use crate::check::{self, CheckError, CheckOptions, FileReport};
use crate::convert::{self as conv, Conversion, ConvertError};
use crate::diag::Diagnostic;
use crate::formats::{self, Format, Input, ReadError, WriteError, WriteOptions};
use crate::model::Session;
use crate::repair::{self as rep, RepairError, RepairOptions, Repaired};
use crate::store::catalog::{self, Catalog, Query};
use crate::store::home::Home;
use crate::store::place::{self as plc, PlaceFailure, Placed, Request};

/// Everything that can go wrong in this API. The message names the file (and, when there is
/// one, the line and byte offset) and what happened; [`Error::hint`] says what to do about it.
///
/// ```
/// let err = sessiontool::open("fixtures/damaged/truncated-document.json").unwrap_err();
/// assert!(matches!(err, sessiontool::Error::Unreadable(_)));
/// // fixtures/damaged/truncated-document.json:118 (byte 3900): the session JSON is not valid: ...
/// assert!(err.to_string().starts_with("fixtures/damaged/truncated-document.json:118"));
/// assert!(err.hint().is_some());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read (missing, a folder, not allowed).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No format recognises the content: not a session file.
    #[error("{name}: not a session file of any supported format")]
    UnknownFormat {
        /// The file (or `<bytes>`).
        name: String,
    },
    /// A format name that is not one of [`crate::formats::all`].
    #[error("unknown format {name:?} (one of: {})", format_names())]
    UnknownFormatName { name: String },
    /// The content was to be read as `asked`, but it is plainly `found`'s.
    #[error("{name} is {found}, not {asked}")]
    NotThisFormat {
        name: String,
        asked: &'static str,
        found: &'static str,
    },
    /// An id (or the start of one) that names no node, or several.
    #[error(transparent)]
    Id(#[from] crate::id_prefix::IdError),
    /// The file is in a known format but cannot be read at all (cut off, damaged beyond
    /// reading). The [`ReadError`] has the location and, often, a hint.
    #[error(transparent)]
    Unreadable(ReadError),
    /// The session cannot be written in the target format.
    #[error("{name}: cannot be written as {to}: {source}")]
    Unwritable {
        /// The input (file or `<bytes>`).
        name: String,
        /// The target format.
        to: &'static str,
        #[source]
        source: WriteError,
    },
    /// An output exists and replacing it was not asked for; nothing was written.
    #[error("{} exists; nothing was written", path.display())]
    Exists { path: PathBuf },
    /// An output could not be written; the file that was there (if any) is untouched.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The current folder could not be read (to resolve a relative project path).
    #[error("cannot read the current folder: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// fsck could not read the file.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// A repair refused (the file changed while it ran, a tool holds its lock) or failed; the
    /// file is as it was.
    #[error(transparent)]
    Repair(#[from] RepairError),
    /// A tool's store cannot take the session (an export format, a checkpoint without a tag, an
    /// id that cannot name a file).
    #[error("{name}: cannot place it in a store as {to}: {message}")]
    Place {
        name: String,
        to: &'static str,
        message: String,
    },
}

impl Error {
    /// What the user can do about it, when there is something to say.
    ///
    /// ```
    /// let err = sessiontool::convert_bytes(b"not a session", None, "markdown").unwrap_err();
    /// assert!(err.hint().unwrap().contains("gemini-json"));
    /// ```
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownFormat { .. } => Some(format!(
                "name the format it is in (one of: {}); `sessiontool detect FILE` tells",
                format_names()
            )),
            Error::Unreadable(e) => e.hint.clone(),
            Error::Exists { .. } => Some("ask for it to be replaced (`force`)".into()),
            Error::NotThisFormat { found, .. } => {
                Some(format!("read it as {found}, or let the format be detected"))
            }
            Error::Id(e) => Some(e.hint().to_string()),
            Error::Repair(RepairError::Refused { .. }) => {
                Some("nothing was changed; run the repair again later".into())
            }
            _ => None,
        }
    }

    fn convert(e: ConvertError, name: &str) -> Error {
        match e {
            ConvertError::UnknownFormat { name } => Error::UnknownFormat { name },
            ConvertError::Read(r) => Error::Unreadable(r),
            ConvertError::Write { to, source } => Error::Unwritable {
                name: name.to_string(),
                to,
                source,
            },
            ConvertError::NotThisFormat { name, asked, found } => {
                Error::NotThisFormat { name, asked, found }
            }
            ConvertError::Leaf(e) => Error::Id(e),
        }
    }
}

fn format_names() -> String {
    formats::all()
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn format_named(name: &str) -> Result<&'static dyn Format, Error> {
    formats::by_name(name).ok_or_else(|| Error::UnknownFormatName {
        name: name.to_string(),
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    crate::regular_file::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// What the command line writes where a target needs a time and the session has none.
fn write_options() -> WriteOptions {
    WriteOptions {
        now: Some(crate::convert::now()),
        ..WriteOptions::default()
    }
}

/// Writes an output; a file replaced with `force` is kept as `<name>.bak-<time>`, returned.
fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<Option<PathBuf>, Error> {
    crate::io::write_output(path, bytes, force).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Exists {
                path: path.to_path_buf(),
            }
        } else {
            Error::Write {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// A session file, read: [`open`] returns it.
///
/// ```
/// use sessiontool::model::Role;
/// # fn main() -> Result<(), sessiontool::Error> {
/// let opened = sessiontool::open("fixtures/qwen-jsonl/plain.jsonl")?;
/// assert_eq!((opened.format, opened.tool), ("qwen-jsonl", "qwen"));
/// // The branch the tool resumes, root first.
/// let tree = opened.session.tree();
/// for i in tree.head().map(|h| tree.path_to(h)).unwrap_or_default() {
///     if let Some(m) = tree.node(i).message().filter(|m| m.role == Role::User) {
///         println!("> {}", m.text());
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Opened {
    /// The file it was read from.
    pub path: PathBuf,
    /// The format detected (`gemini-json`, `qwen-jsonl`, ...).
    pub format: &'static str,
    /// The tool that writes this format (`gemini`, `qwen`, `claude`, ...).
    pub tool: &'static str,
    /// The session: metadata and every node, branches and unknown fields included.
    pub session: Session,
    /// What the reader noticed on the way (skipped lines, merged records), in file order.
    /// Never empty when something was skipped.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads a session file of any supported format (detected from its content and name).
///
/// A file with damage its reader can live with (a torn last line, a BOM) opens, and
/// [`Opened::diagnostics`] says what was skipped; a file no reader can make sense of is an
/// [`Error`] that says where it stops making sense.
///
/// ```
/// # fn main() -> Result<(), sessiontool::Error> {
/// let opened = sessiontool::open("fixtures/gemini-json/tools.json")?;
/// assert_eq!(opened.format, "gemini-json");
/// assert!(opened.diagnostics.is_empty());
/// let tree = opened.session.tree();
/// let head = tree.head().expect("a session with messages has a head");
/// println!("{} nodes, {} on the head branch", opened.session.nodes.len(), tree.path_to(head).len());
///
/// // A torn last line is skipped, and said.
/// let torn = sessiontool::open("fixtures/damaged/torn-tail.jsonl")?;
/// assert!(torn.diagnostics.iter().any(|d| d.code == "torn-tail"));
/// # Ok(())
/// # }
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<Opened, Error> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    let name = path.display().to_string();
    let input = Input {
        name: &name,
        path: Some(path),
        bytes: &bytes,
    };
    let (format, outcome) = conv::read(&input, None).map_err(|e| Error::convert(e, &name))?;
    Ok(Opened {
        path: path.to_path_buf(),
        format: format.name(),
        tool: format.tool(),
        session: outcome.session,
        diagnostics: outcome.diagnostics,
    })
}

/// Checks one file as `sessiontool fsck FILE` does and returns its report: every finding with
/// its stable code, severity, line, byte offset and, when [`repair`] can fix it, what the fix
/// does. Nothing is changed.
///
/// A file no format recognises is not an error here: its report has `format: None` and one
/// `unknown-format` warning (as fsck lists it).
///
/// ```
/// # fn main() -> Result<(), sessiontool::Error> {
/// let clean = sessiontool::check("fixtures/qwen-jsonl/plain.jsonl")?;
/// assert!(clean.is_clean());
///
/// let torn = sessiontool::check("fixtures/damaged/torn-tail.jsonl")?;
/// assert_eq!(torn.format, Some("qwen-jsonl"));
/// let issue = &torn.issues[0];
/// assert_eq!((issue.code, issue.line), ("torn-tail", Some(4)));
/// assert!(issue.fixable());
/// # Ok(())
/// # }
/// ```
pub fn check(path: impl AsRef<Path>) -> Result<FileReport, Error> {
    Ok(check::check_file(path.as_ref(), &CheckOptions::default())?)
}

/// Checks one file and repairs what can be repaired, as `sessiontool repair FILE` does: the
/// original is copied to `<file>.bak-<time>` first (or into `options.backup_dir`; none with
/// `options.no_backup`), bytes that are dropped go to `<file>.torn-<time>`, and the new file
/// replaces the old one atomically only after it was read back and checked. A file that
/// changed while it was checked, or that a live lock says a tool is writing, is left alone
/// ([`Error::Repair`]). With `options.dry_run` nothing is written and the result says what
/// would be fixed.
///
/// Tool calls without a result are closed with an error result (as the command line does
/// without `--keep-open-tool-calls`).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("torn-tail.jsonl");
/// std::fs::copy("fixtures/damaged/torn-tail.jsonl", &file)?;
///
/// let repaired = sessiontool::repair(&file, &sessiontool::RepairOptions::default())?;
/// assert!(repaired.changed);
/// assert_eq!(repaired.fixed[0].code, "torn-tail");
/// assert!(repaired.backup.as_ref().unwrap().exists());
/// assert!(repaired.sidecar.as_ref().unwrap().exists()); // the cut-off bytes
/// assert!(sessiontool::check(&file)?.is_clean());
///
/// // A second run finds nothing to fix.
/// assert!(!sessiontool::repair(&file, &Default::default())?.changed);
/// # Ok(())
/// # }
/// ```
pub fn repair(path: impl AsRef<Path>, options: &RepairOptions) -> Result<Repaired, Error> {
    let path = path.as_ref();
    let diagnosis = check::diagnose(path, &CheckOptions::default())?;
    if diagnosis.format.is_none() {
        return Err(Error::UnknownFormat {
            name: path.display().to_string(),
        });
    }
    Ok(rep::repair(path, diagnosis, options)?)
}

/// Converts a session file into format `to` and writes it to `output`, as `sessiontool convert
/// INPUT --to TO -o OUTPUT` does: the input format is detected, the output is written to a temp
/// file beside it, synced and renamed (a crash never leaves half a file), and an existing
/// output is replaced only when `force` is true ([`Error::Exists`] otherwise, with nothing
/// written).
///
/// The returned [`Conversion`] holds the bytes written, what the reader noticed
/// (`diagnostics`) and what the target could not hold (`losses`).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("tools.jsonl");
/// let c = sessiontool::convert("fixtures/gemini-json/tools.json", "qwen-jsonl", &out, false)?;
/// assert_eq!((c.from, c.to), ("gemini-json", "qwen-jsonl"));
/// assert_eq!(sessiontool::open(&out)?.format, "qwen-jsonl");
/// for loss in &c.losses.losses {
///     println!("not carried: {} x{}: {}", loss.code, loss.count, loss.message);
/// }
///
/// // Never replaced without force.
/// let again = sessiontool::convert("fixtures/gemini-json/tools.json", "qwen-jsonl", &out, false);
/// assert!(matches!(again, Err(sessiontool::Error::Exists { .. })));
/// sessiontool::convert("fixtures/gemini-json/tools.json", "qwen-jsonl", &out, true)?;
/// # Ok(())
/// # }
/// ```
pub fn convert(
    input: impl AsRef<Path>,
    to: &str,
    output: impl AsRef<Path>,
    force: bool,
) -> Result<Conversion, Error> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let to = format_named(to)?;
    if !force && output.exists() {
        return Err(Error::Exists {
            path: output.to_path_buf(),
        });
    }
    let bytes = read_file(input)?;
    let name = input.display().to_string();
    let input = Input {
        name: &name,
        path: Some(input),
        bytes: &bytes,
    };
    let mut conversion =
        conv::convert(&input, None, to, &write_options()).map_err(|e| Error::convert(e, &name))?;
    conversion.replaced = write_output(output, &conversion.bytes, force)?;
    Ok(conversion)
}

/// Converts a session held in memory: `from` names its format (`None`: detected from the
/// content), `to` the target. Nothing is written; the result's `bytes` are the converted
/// session. Messages call the input `<bytes>`.
///
/// ```
/// # fn main() -> Result<(), sessiontool::Error> {
/// let bytes = std::fs::read("fixtures/claude-jsonl/tools.jsonl").unwrap();
/// let c = sessiontool::convert_bytes(&bytes, Some("claude-jsonl"), "markdown")?;
/// assert_eq!(c.from, "claude-jsonl");
/// let markdown = String::from_utf8(c.bytes).unwrap();
/// assert!(markdown.starts_with('#'));
///
/// let err = sessiontool::convert_bytes(&bytes, None, "word-doc").unwrap_err();
/// assert!(err.to_string().starts_with("unknown format \"word-doc\""));
/// # Ok(())
/// # }
/// ```
pub fn convert_bytes(bytes: &[u8], from: Option<&str>, to: &str) -> Result<Conversion, Error> {
    let from = from.map(format_named).transpose()?;
    let to = format_named(to)?;
    let name = "<bytes>";
    let input = Input {
        name,
        path: None,
        bytes,
    };
    conv::convert(&input, from, to, &write_options()).map_err(|e| Error::convert(e, name))
}

/// The sessions in every tool's store under `home`, as `sessiontool list` shows them: newest
/// first, each [`Entry`](crate::store::catalog::Entry) with its tool, path, format, id,
/// project, message count, title or first prompt, and fsck's health mark; older copies of a
/// session point at the copy the tool reads (`superseded_by`). Folders that could not be read
/// are in `problems`.
///
/// [`Query`] picks the tools (all when empty) and the project (an absolute path, see
/// [`project_path`]; `None` for every project). Use [`Home::at`] for a folder standing in for
/// the home (nothing else is looked at) or [`Home::from_env`] for the user's own stores
/// (`$HOME` and the tools' variables: `GEMINI_CLI_HOME`, `CODEX_HOME`, ...).
///
/// ```
/// use sessiontool::{Home, PlaceOptions, Query, Tool};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let home = tempfile::tempdir()?;
/// let home = Home::at(home.path());
/// sessiontool::place(&home, "fixtures/qwen-jsonl/plain.jsonl", "qwen-jsonl", "/w/app", &PlaceOptions::default())?;
/// sessiontool::place(&home, "fixtures/gemini-json/tools.json", "claude-jsonl", "/w/other", &PlaceOptions::default())?;
///
/// let all = sessiontool::sessions(&home, Query::default());
/// assert_eq!(all.entries.len(), 2);
///
/// let app = sessiontool::sessions(&home, Query { project: Some("/w/app".into()), ..Query::default() });
/// assert_eq!(app.entries.len(), 1);
/// let entry = &app.entries[0];
/// assert_eq!((entry.tool, entry.format), (Tool::Qwen, Some("qwen-jsonl")));
/// println!("{} {} messages, {}: {}", entry.tool, entry.messages, entry.health.mark(), entry.path);
///
/// let claude = sessiontool::sessions(&home, Query { tools: vec![Tool::Claude], ..Query::default() });
/// assert_eq!(claude.entries[0].project.as_deref(), Some("/w/other"));
/// # Ok(())
/// # }
/// ```
pub fn sessions(home: &Home, query: Query) -> Catalog {
    catalog::list(home, &query)
}

/// How [`place`] writes a session into a store.
///
/// ```
/// use sessiontool::{Home, PlaceOptions};
/// # fn main() -> Result<(), sessiontool::Error> {
/// let dir = tempfile::tempdir().unwrap();
/// let home = Home::at(dir.path());
/// // Where would Codex CLI find this session for /w/app? Nothing is written.
/// let options = PlaceOptions { dry_run: true, ..PlaceOptions::default() };
/// let placed = sessiontool::place(&home, "fixtures/gemini-json/plain.json", "codex-jsonl", "/w/app", &options)?;
/// assert!(placed.path.starts_with(dir.path().join(".codex/sessions")));
/// assert!(!placed.path.exists());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct PlaceOptions {
    /// For a Gemini checkpoint (`to` = `checkpoint`): the tag `/chat resume TAG` names.
    pub tag: Option<String>,
    /// Replace a session file of the same name.
    pub force: bool,
    /// Work out where it would go (and which registries would change); write nothing.
    pub dry_run: bool,
}

/// Converts the session in `input` into format `to` and writes it where that format's tool
/// finds the sessions of `project`, as `sessiontool convert INPUT --to TO --store --project
/// PROJECT` does: named and filed as the tool names its own (Gemini
/// `chats/session-<time>-<id8>.jsonl`, Codex's dated folders, ...), recorded under the project
/// (its `cwd` and `projectHash`), with the tool's registries updated (Gemini's
/// `projects.json`, simple-agent's `meta.json`). Never replaces a file unless
/// `options.force`; [`Error::Exists`] otherwise.
///
/// `project` may be relative (to the current folder). The result says where the session went
/// (`path`), which tool's store it is in, the conversion's losses and the registrations.
///
/// ```
/// use sessiontool::{Home, PlaceOptions, Query};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let home = Home::at(dir.path());
/// let placed = sessiontool::place(&home, "fixtures/gemini-json/tools.json", "gemini-jsonl", "/w/app", &PlaceOptions::default())?;
/// assert!(placed.path.starts_with(dir.path().join(".gemini/tmp/app/chats")));
/// assert_eq!(sessiontool::open(&placed.path)?.format, "gemini-jsonl");
/// let app = sessiontool::sessions(&home, Query { project: Some("/w/app".into()), ..Query::default() });
/// assert_eq!(app.entries[0].path, placed.path.display().to_string());
/// assert!(!placed.registered.is_empty()); // projects.json maps /w/app to the slug `app`
///
/// // A checkpoint needs its tag.
/// let options = PlaceOptions { tag: Some("before refactor".into()), ..PlaceOptions::default() };
/// let checkpoint = sessiontool::place(&home, "fixtures/gemini-json/tools.json", "checkpoint", "/w/app", &options)?;
/// assert!(checkpoint.path.ends_with("checkpoint-before%20refactor.json"));
/// # Ok(())
/// # }
/// ```
pub fn place(
    home: &Home,
    input: impl AsRef<Path>,
    to: &str,
    project: impl AsRef<Path>,
    options: &PlaceOptions,
) -> Result<Placed, Error> {
    let input = input.as_ref();
    let to = format_named(to)?;
    let project = project_path(project)?;
    let bytes = read_file(input)?;
    let name = input.display().to_string();
    let write_options = write_options();
    let request = Request {
        from: None,
        to,
        project: &project,
        tag: options.tag.as_deref(),
        options: &write_options,
        force: options.force,
        dry_run: options.dry_run,
    };
    let input = Input {
        name: &name,
        path: Some(input),
        bytes: &bytes,
    };
    plc::place(home, &input, &request).map_err(|e| match e {
        PlaceFailure::Convert(c) => Error::convert(c, &name),
        PlaceFailure::Place(p) => Error::Place {
            name: name.clone(),
            to: to.name(),
            message: p.0,
        },
        PlaceFailure::Exists(path) => Error::Exists { path },
        PlaceFailure::Io(path, source) => Error::Write { path, source },
    })
}

/// A project folder as the tools key their sessions by: an absolute path, `.` and `..`
/// resolved against the current folder (symbolic links are not followed, as the tools do not).
/// What [`Query::project`] wants.
///
/// ```
/// # fn main() -> Result<(), sessiontool::Error> {
/// assert_eq!(sessiontool::project_path("/w/app/../lib/.")?, "/w/lib");
/// let here = std::env::current_dir().unwrap();
/// assert_eq!(sessiontool::project_path("src")?, here.join("src").to_string_lossy());
/// # Ok(())
/// # }
/// ```
pub fn project_path(dir: impl AsRef<Path>) -> Result<String, Error> {
    let dir = dir.as_ref();
    let cwd = if dir.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().map_err(Error::CurrentDir)?
    };
    Ok(crate::store::scheme::resolve(dir, &cwd)
        .to_string_lossy()
        .into_owned())
}
