//! What the engine ([`crate::engine`]) does with Codex rollouts: reads them in two passes
//! ([`super::two_pass`]), writes one back into a rollout with its lines copied (the metadata
//! line as the writer writes it), and writes a session of another format as a rollout, run by
//! run ([`RolloutStream`]).

use std::io;

use super::CodexJsonl;
use super::stream::RolloutStream;
use super::two_pass::{self as rollout, Scanner};
use crate::convert::ConvertError;
use crate::diag::LossReport;
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::plan::{adjusted, branch_of, first_pass, node_of};
use crate::engine::reading::{Needs, Reading, TwoPassReader};
use crate::engine::runs::{copy_records, each_branch_run};
use crate::engine::target::{PassTwo, StreamTarget};
use crate::engine::{Job, MadeFor, Output, Plan, PlanError, Route, Source};
use crate::formats::WriteOptions;
use crate::model::Meta;
use crate::tree::LeftOut;

impl TwoPassReader for CodexJsonl {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let scanner = match needs.nodes {
            true => {
                let mut scanner = Scanner::with_nodes(name, needs.open_calls);
                scanner.call_names = needs.call_names;
                scanner
            }
            false => Scanner::new(name),
        };
        Ok(Some(Box::new(pass1::known(
            source, name, &scanner, options,
        )?)))
    }

    /// Each line copied, the metadata line as the writer writes it. A `--leaf` (the rollout
    /// cut there) goes through the whole session.
    fn write_back<'a>(
        &self,
        job: Job<'a>,
        _needs: Needs,
        adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        if job.options.leaf.is_some() {
            return Ok(None);
        }
        let mut known = first_pass(&job, &Scanner::new(job.name))?;
        let Some(meta) = adjusted(&job, &known.meta, &CodexJsonl, adjust)? else {
            return Ok(None);
        };
        let meta_line = known.meta_bytes(&meta);
        // Codex answers unanswered calls itself: nothing to close, nothing more to say.
        let diagnostics = std::mem::take(&mut known.diagnostics);
        let back = Back { known, meta_line };
        Ok(Some(Plan::new(
            job,
            &CodexJsonl,
            diagnostics,
            Route::Own(Box::new(back)),
        )))
    }
}

/// A rollout written back into a rollout.
struct Back {
    known: rollout::Known,
    /// The metadata line, line break included (empty when the rollout has none).
    meta_line: Vec<u8>,
}

impl PassTwo for Back {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let Back { known, meta_line } = *self;
        let before = |i| (known.meta_at == Some(i)).then_some(&meta_line[..]);
        copy_records(job, &known.spots, out, before)?;
        if known.meta_at == Some(known.spots.len() as u32) {
            out.put(&meta_line)?;
        }
        Ok(LossReport::default())
    }
}

/// A session of another format: the branch to `leaf` (else the head's), one run at a time.
impl StreamTarget for CodexJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        let options = WriteOptions {
            leaf,
            ..job.options.clone()
        };
        let stream = RolloutStream::new(meta, &options).map_err(|source| ConvertError::Write {
            to: job.to.name(),
            source,
        })?;
        let Some((branch, left_out)) = branch_of(job, &*known, options.leaf.as_deref())? else {
            return Ok(None);
        };
        Ok(Some(Route::Own(Box::new(ToRollout {
            known,
            branch,
            left_out,
            stream,
        }))))
    }
}

/// A session of another format into a rollout.
struct ToRollout {
    known: Box<dyn Reading>,
    branch: Vec<u32>,
    left_out: LeftOut,
    stream: RolloutStream,
}

impl PassTwo for ToRollout {
    /// The meta line, the branch's nodes, the closing losses. The nodes of several runs are
    /// made at once on the thread pool, and each run's lines where its nodes are made; one
    /// writer then writes them in order, adding what depends on the lines before.
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let ToRollout {
            known,
            branch,
            left_out,
            stream,
        } = *self;
        let known = &*known;
        let mut losses = LossReport::default();
        let made_for = match RolloutStream::WRITES_EXTRA_VALUES {
            true => MadeFor::Anyone,
            false => MadeFor::Counting,
        };
        let mut w = stream
            .writer(&mut losses, &left_out)
            .map_err(io::Error::other)?;
        let first_timed = match stream.start_time() {
            None => match branch.iter().find(|&&i| known.timed(i)) {
                Some(&i) => Some(node_of(job, known, i, made_for)?),
                None => None,
            },
            Some(_) => None,
        };
        let mut buf = Vec::new();
        w.begin(first_timed, &mut buf);
        out.put(&buf)?;
        let lines_of = |nodes| stream.run(nodes);
        each_branch_run(job, known, &branch, made_for, lines_of, |_, run| {
            buf.clear();
            w.run(std::mem::take(run), &mut buf);
            out.put(&buf)
        })?;
        w.finish();
        Ok(losses)
    }
}
