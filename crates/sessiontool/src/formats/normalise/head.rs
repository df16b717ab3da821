//! A session's head as the target writes it: its id, its start time and its working directory
//! (see [`super::Target`]'s `session_ids`, `start` and `cwd`).

use super::target::{MissingId, Target, Time};
use crate::diag::LossReport;
use crate::formats::{WriteError, WriteOptions};
use crate::ids::derived_uuid;
use crate::model::{Meta, Node};

/// What the head takes of the nodes written (a streaming writer that does not hold them gives
/// them as it learns them).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// How many there are.
    pub nodes: usize,
    /// The first one's id.
    pub first_id: Option<&'a str>,
    /// The first time one of them has.
    pub first_time: Option<&'a str>,
}

impl<'a> Facts<'a> {
    pub(crate) fn of(nodes: &'a [Node]) -> Facts<'a> {
        Facts {
            nodes: nodes.len(),
            first_id: nodes.first().map(|n| n.id.as_str()),
            first_time: nodes.iter().find_map(|n| n.timestamp.as_deref()),
        }
    }
}

/// The session's id, start time and working directory.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub id: String,
    pub start: String,
    pub cwd: String,
}

impl Head {
    /// The head of `meta`'s session, its losses said in that order (id, start, cwd).
    pub(crate) fn of(
        target: &Target,
        meta: &Meta,
        facts: Facts,
        options: &WriteOptions,
        losses: &mut LossReport,
    ) -> Result<Head, WriteError> {
        Ok(Head {
            id: session_id(target, meta, facts, losses)?,
            start: start(target, meta, facts.first_time, options, losses),
            cwd: cwd(target, meta, options, losses),
        })
    }
}

/// The session's id as the target takes it: its own, else a UUID derived from it (said as a
/// `session-id` loss naming both, unless the session is the target's own), else what the
/// target gives a session without one.
pub(crate) fn session_id(
    target: &Target,
    meta: &Meta,
    facts: Facts,
    losses: &mut LossReport,
) -> Result<String, WriteError> {
    let rules = &target.session_ids;
    let id = match (meta.id.as_deref(), rules.missing) {
        (Some(""), MissingId::AsEmpty) | (None, _) => {
            return match rules.missing {
                MissingId::Refused => Err(WriteError("the session has no id to name it by".into())),
                MissingId::Empty => Ok(String::new()),
                MissingId::AsEmpty => Ok(derived_uuid(rules.namespace)),
                MissingId::FromNodeCount => {
                    Ok(derived_uuid(&format!("{}/{}", target.name, facts.nodes)))
                }
                MissingId::FromFirstNode => Ok(derived_uuid(&format!(
                    "{}/{}",
                    target.name,
                    facts.first_id.unwrap_or_default()
                ))),
                MissingId::FromStartTime => Ok(derived_uuid(&format!("{:?}", meta.start_time))),
            };
        }
        (Some(id), _) => id,
    };
    if rules.takes.is_none_or(|takes| takes(id)) {
        return Ok(id.to_string());
    }
    let new = derived_uuid(&format!("{}{id}", rules.namespace));
    if meta.source_format.as_deref() != Some(target.name) {
        losses.add(
            "session-id",
            1,
            format!("the session id {id} is written as {new} ({})", rules.why),
        );
    }
    Ok(new)
}

/// The session's start time: the first the target's `start` finds, else what it gives.
pub(crate) fn start(
    target: &Target,
    meta: &Meta,
    first_time: Option<&str>,
    options: &WriteOptions,
    losses: &mut LossReport,
) -> String {
    let found = target.start.from.iter().find_map(|t| match t {
        Time::Started => meta.start_time.as_deref(),
        Time::FirstNode => first_time,
        Time::Now => options.now.as_deref(),
        Time::LastUpdated => meta.last_updated.as_deref(),
    });
    match (found, target.start.otherwise) {
        (Some(t), _) => t.to_string(),
        (None, Ok(t)) => t.to_string(),
        (None, Err(said)) => {
            losses.add(said.code, 1, said.message);
            String::new()
        }
    }
}

/// The working directory: the session's, else `--cwd`, else (where the target says so) the
/// first of its directories; `""` when none, said as the target's loss.
pub(crate) fn cwd(
    target: &Target,
    meta: &Meta,
    options: &WriteOptions,
    losses: &mut LossReport,
) -> String {
    let cwd = cwd_of(target, meta, options);
    if cwd.is_none()
        && let Some(said) = target.cwd.unknown
    {
        losses.add(said.code, 1, said.message);
    }
    cwd.unwrap_or_default()
}

/// [`cwd`] when there is one, unsaid when there is none.
pub(crate) fn cwd_of(target: &Target, meta: &Meta, options: &WriteOptions) -> Option<String> {
    meta.cwd
        .clone()
        .or_else(|| options.cwd.clone())
        .or_else(|| {
            let first = meta.directories.as_ref().and_then(|d| d.first());
            first.filter(|_| target.cwd.directories).cloned()
        })
}
