//! Moving a session from one format to another: detect, read, fill what the target needs,
//! write, and report what could not be carried.

pub mod budget;
pub mod close_calls;

use crate::diag::{Diagnostic, Location, LossReport, Severity};
use crate::formats::{
    self, Format, Input, LOSSY, ReadError, ReadOutcome, WriteError, WriteOptions,
};
use crate::ids::derived_uuid;
use crate::model::{Meta, Session};

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{name}: cannot tell which format this is")]
    UnknownFormat { name: String },
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("cannot write {to}: {source}")]
    Write {
        to: &'static str,
        source: WriteError,
    },
    /// `--from` named a format the content plainly is not.
    #[error("{name} is {found}, not {asked}")]
    NotThisFormat {
        name: String,
        asked: &'static str,
        found: &'static str,
    },
    /// `--leaf` names no node, or the start of several node ids.
    #[error("--leaf: {0}")]
    Leaf(#[from] crate::id_prefix::IdError),
}

impl ConvertError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            ConvertError::UnknownFormat { .. } => Some(format!(
                "name the format with --from (one of: {})",
                formats::all()
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            ConvertError::Read(e) => e.hint.clone(),
            ConvertError::Write { .. } => None,
            ConvertError::NotThisFormat { found, .. } => Some(format!(
                "leave out --from to read it as {found}, or pass --from {found}"
            )),
            ConvertError::Leaf(e) => Some(format!(
                "{}; `sessiontool tree FILE` shows the ids",
                e.hint()
            )),
        }
    }
}

/// The result of one conversion.
#[derive(Debug)]
pub struct Conversion {
    pub from: &'static str,
    pub to: &'static str,
    pub bytes: Vec<u8>,
    /// What the reader noticed in the input.
    pub diagnostics: Vec<Diagnostic>,
    /// What the target format could not hold.
    pub losses: LossReport,
    /// Set once the bytes are written over an existing file (`--force`): where that file was
    /// kept (`<name>.bak-<time>`, its own inode).
    pub replaced: Option<std::path::PathBuf>,
    /// With [`WriteOptions::max_tokens`]: what fitting the session into it did.
    pub budget: Option<budget::Budget>,
}

/// Reads a session in the given format, or the one its content shows.
pub fn read(
    input: &Input,
    from: Option<&'static dyn Format>,
) -> Result<(&'static dyn Format, ReadOutcome), ConvertError> {
    let format = match from {
        Some(f) => match formats::contradicts(f, input.path, input.bytes) {
            Some(found) => {
                return Err(ConvertError::NotThisFormat {
                    name: input.name.to_string(),
                    asked: f.name(),
                    found: found.name(),
                });
            }
            None => f,
        },
        None => {
            formats::detect(input.path, input.bytes).ok_or_else(|| ConvertError::UnknownFormat {
                name: input.name.to_string(),
            })?
        }
    };
    let mut outcome = format.read(input)?;
    outcome.session.meta.source_format = Some(format.name().to_string());
    Ok((format, outcome))
}

/// Reads `input` and writes it as `to`.
pub fn convert(
    input: &Input,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
) -> Result<Conversion, ConvertError> {
    convert_with(input, from, to, options, |_: &mut Meta| {})
}

/// [`convert`], with `adjust` changing the session's metadata between reading and writing
/// (placing a session into a store records the project it is placed under).
///
/// Conversions the two-pass engine covers ([`crate::engine::covers`]: Claude Code JSONL into
/// Claude Code, Codex or Gemini; a Codex rollout into a rollout, Claude Code or Gemini) go
/// through it,
/// in memory bounded by the number of records; every other one through [`convert_whole`].
/// Both give the same bytes, diagnostics and losses.
pub fn convert_with(
    input: &Input,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
    mut adjust: impl FnMut(&mut Meta),
) -> Result<Conversion, ConvertError> {
    let bytes = crate::engine::Bytes(input.bytes);
    let job = crate::engine::Job {
        name: input.name,
        path: input.path,
        source: &bytes,
        from,
        to,
        options,
        tuning: Default::default(),
    };
    match crate::engine::plan(job, &mut adjust) {
        Ok(Some(plan)) => {
            let mut bytes = crate::formats::output_buffer(0);
            let mut conversion = plan
                .write(&mut bytes)
                .expect("bytes in memory are read and written without I/O errors");
            conversion.bytes = bytes;
            Ok(conversion)
        }
        Ok(None) => convert_whole(input, from, to, options, adjust),
        Err(crate::engine::PlanError::Convert(e)) => Err(e),
        Err(crate::engine::PlanError::Input(e)) => {
            unreachable!("bytes in memory are read without I/O errors: {e}")
        }
    }
}

/// Converts by reading the whole session into the model and writing it: every format, in
/// memory several times the input's size (the engine's two passes avoid that where they
/// apply; see [`convert_with`]).
pub fn convert_whole(
    input: &Input,
    from: Option<&'static dyn Format>,
    to: &'static dyn Format,
    options: &WriteOptions,
    adjust: impl FnOnce(&mut Meta),
) -> Result<Conversion, ConvertError> {
    if !to.writable() {
        return Err(ConvertError::Write {
            to: to.name(),
            source: WriteError(format!(
                "{} is read only (its tool no longer reads it): write another format",
                to.name()
            )),
        });
    }
    let (from, outcome) = read(input, from)?;
    convert_read(from.name(), outcome, input, to, options, adjust)
}

/// The writing half of [`convert_with`], for a session already read (`from`: the format it
/// was read from; `input` names it in messages, and its bytes derive an id when it has none).
/// A database session ([`formats::database`]) is read by its own reader, then written here.
pub fn convert_read(
    from: &'static str,
    outcome: ReadOutcome,
    input: &Input,
    to: &'static dyn Format,
    options: &WriteOptions,
    adjust: impl FnOnce(&mut Meta),
) -> Result<Conversion, ConvertError> {
    let mut session = outcome.session;
    fill_session_id(&mut session, input.bytes);
    adjust(&mut session.meta);
    // `--leaf` takes the start of an id too (as `tree` prints them): the writers get the id.
    let with_leaf;
    let options = match &options.leaf {
        Some(wanted) => {
            let index = session.tree().find(wanted)?;
            with_leaf = WriteOptions {
                leaf: Some(session.nodes[index].id.clone()),
                ..options.clone()
            };
            &with_leaf
        }
        None => options,
    };
    let mut diagnostics = outcome.diagnostics;
    let write_error = |source| ConvertError::Write {
        to: to.name(),
        source,
    };
    // A sub-agent's copy of its parent's spawn call is always answered in a target that
    // needs every call answered (it is no damage); unanswered calls when asked.
    if to.resumable() && !to.answers_open_calls_itself() {
        let (closed, inherited) = close_calls::close_calls(&mut session, options.close_open_calls);
        if inherited > 0 {
            diagnostics.push(Diagnostic {
                code: "tool-call-inherited",
                severity: Severity::Info,
                location: Location::file(input.name),
                message: format!(
                    "{inherited} tool call(s) are the parent's call that spawned this sub-agent (answered in the parent session); each got a result saying so, as {} needs every call answered",
                    to.tool()
                ),
            });
        }
        if closed > 0 {
            diagnostics.push(Diagnostic {
                code: "tool-call-closed",
                severity: Severity::Warning,
                location: Location::file(input.name),
                message: format!(
                    "{closed} tool call(s) had no result; each got an error result saying so, as {} does not answer them itself when it resumes",
                    to.tool()
                ),
            });
        }
    }
    let mut cut = crate::diag::LossReport::default();
    let budget = match options.max_tokens {
        Some(max) => Some(
            budget::fit(&mut session, max, options.leaf.as_deref(), &mut cut)
                .map_err(|e| write_error(WriteError(e)))?,
        ),
        None => None,
    };
    let mut written = to.write(&session, options).map_err(write_error)?;
    if from == to.name() && !to.is_jsonl() && diagnostics.iter().any(|d| d.code == LOSSY) {
        written.bytes = given_back(input.bytes, written.bytes);
    }
    let mut losses = cut;
    for l in written.losses.losses {
        losses.add(l.code, l.count, l.message);
    }
    let open = crate::check::document::unanswered_calls(&session).len();
    diagnostics.extend(unanswered_diagnostic(open, to, input.name));
    Ok(Conversion {
        from,
        to: to.name(),
        bytes: written.bytes,
        diagnostics,
        losses,
        replaced: None,
        budget,
    })
}

/// A document written back into its own format when it holds what a value cannot (a lone
/// surrogate escape, read as U+FFFD): the input's bytes when what was `written` reads as the
/// very values the input reads as (nothing was changed, and rebuilt the escapes are lost),
/// else what was written. (A JSONL format's writer gives back each record it does not change
/// as its bytes itself.)
fn given_back(input: &[u8], written: Vec<u8>) -> Vec<u8> {
    use crate::json::value::to_value;
    match (to_value(input), to_value(&written)) {
        (Ok((was, _)), Ok((is, _))) if was == is => input.to_vec(),
        _ => written,
    }
}

/// What a conversion says of the `open` tool calls without a result, when `to`'s tool does
/// not accept them.
pub(crate) fn unanswered_diagnostic(
    open: usize,
    to: &dyn Format,
    name: &str,
) -> Option<Diagnostic> {
    (open > 0 && to.resumable() && !to.answers_open_calls_itself()).then(|| Diagnostic {
        code: "tool-call-unanswered",
        severity: Severity::Warning,
        location: Location::file(name),
        message: format!(
            "{open} tool call(s) have no result; {} does not accept that when it resumes: run `sessiontool repair` on the output to close them",
            to.tool()
        ),
    })
}

/// The time written where a target needs one and the session has none, when the caller gives
/// none (`WriteOptions::now`): the current time as the tools write it (UTC, milliseconds,
/// `Z`), or the one `SOURCE_DATE_EPOCH` names (seconds since 1970), so that converting the
/// same session twice writes the same bytes (as reproducible builds use that variable).
pub fn now() -> String {
    let stamp = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .unwrap_or_else(jiff::Timestamp::now);
    stamp.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A session without an id (a checkpoint has none) gets one derived from its content, so the
/// same input always converts to the same session.
fn fill_session_id(session: &mut Session, input: &[u8]) {
    if session.meta.id.is_none() {
        session.meta.id = Some(derived_uuid(&crate::ids::sha256_hex_bytes(input)));
    }
}
