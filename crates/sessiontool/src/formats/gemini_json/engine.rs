//! What the engine ([`crate::engine`]) does with Gemini sessions: reads a legacy document in
//! two passes ([`super::two_pass`]), and writes a session of another format (or of the other
//! Gemini layout) as a Gemini session node by node ([`DocumentStream`]), in either layout: the
//! legacy document here, the JSONL recording through [`stream_route`] from its own module.

use std::io;

use super::GeminiJson;
use super::stream::{DocumentStream, Layout};
use crate::engine::pass1::Pass1Options;
use crate::engine::plan::{branch_of, node_of};
use crate::engine::reading::{Needs, Reading, TwoPassReader};
use crate::engine::target::StreamTarget;
use crate::engine::{Job, MadeFor, PlanError, Route, Source};
use crate::model::Meta;

impl TwoPassReader for GeminiJson {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        _needs: Needs,
        _options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let known = super::two_pass::known(source, name)?;
        Ok(known.map(|k| Box::new(k) as Box<dyn Reading>))
    }
}

impl StreamTarget for GeminiJson {
    fn needs(&self) -> Needs {
        STREAM_NEEDS
    }

    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        stream_route(job, known, meta, leaf, Layout::Document)
    }
}

/// What the Gemini writer needs of pass one: the name of each call (a result that names no
/// call gets it).
pub(crate) const STREAM_NEEDS: Needs = Needs {
    nodes: true,
    open_calls: false,
    call_names: true,
};

/// The branch (to `leaf`, else the head) into a Gemini session of `layout`; `None` when the
/// whole path writes it (a Gemini session into its own layout: its own fields and layout
/// written back; the last message's time needed up front).
pub(crate) fn stream_route(
    job: &Job,
    mut known: Box<dyn Reading>,
    meta: Meta,
    leaf: Option<String>,
    layout: Layout,
) -> Result<Option<Route>, PlanError> {
    let Some(stream) = DocumentStream::new(meta, job.options, layout) else {
        return Ok(None);
    };
    let Some((branch, left_out)) = branch_of(job, &*known, leaf.as_deref())? else {
        return Ok(None);
    };
    let Some(times) = times(job, &*known, &stream, &branch)? else {
        return Ok(None);
    };
    let calls = known.call_names(&branch);
    let writer = stream.writer(calls.names, &left_out, times, calls.root_parent);
    Ok(Some(Route::Nodes {
        known,
        indices: branch,
        sink: Box::new(writer),
    }))
}

/// The document's start time and last update for `branch` ([`DocumentStream::times`]): from
/// what pass one knows, and the node that gives the first message its time made again when
/// the session has no start time. (Every node of the readers here that is not a message is
/// an event.)
fn times(
    job: &Job,
    known: &dyn Reading,
    stream: &DocumentStream,
    branch: &[u32],
) -> io::Result<Option<[String; 2]>> {
    let first_message = branch.iter().position(|&i| known.is_message(i));
    let any_timed = branch.iter().any(|&i| known.timed(i));
    stream.times(first_message.is_some(), any_timed, || {
        let upto = &branch[..=first_message.unwrap_or(0)];
        match upto.iter().rev().find(|&&i| known.timed(i)) {
            Some(&i) => Ok(node_of(job, known, i, MadeFor::Counting)?.timestamp),
            None => Ok(None),
        }
    })
}
