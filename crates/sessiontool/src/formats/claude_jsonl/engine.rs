//! What the engine ([`crate::engine`]) does with Claude Code sessions: reads them in two
//! passes ([`super::two_pass`]), writes one back into Claude Code with its entries copied (or
//! rebuilt, when the session's fields change), and takes a session of another format node by
//! node ([`ForeignStream`]).

use std::io;

use rayon::prelude::*;

use super::ClaudeJsonl;
use super::foreign::ForeignStream;
use super::two_pass::{Known, Rewrite, Scanner};
use crate::convert::ConvertError;
use crate::diag::LossReport;
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::plan::{Prepared, first_pass, prepared};
use crate::engine::reading::{Needs, Reading, TwoPassReader};
use crate::engine::runs::{copy_lines, runs, window};
use crate::engine::target::{Lookup, NodeSink, PassTwo, StreamTarget};
use crate::engine::{Job, Output, Plan, PlanError, Route, Source, pass2};
use crate::model::{Meta, Node};

impl TwoPassReader for ClaudeJsonl {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let mut scanner = Scanner::new(name, needs.open_calls);
        scanner.call_names = needs.call_names;
        Ok(Some(Box::new(pass1::known(
            source, name, &scanner, options,
        )?)))
    }

    /// Each entry copied, or rebuilt with the session's other fields (see [`Rewrite`]).
    fn write_back<'a>(
        &self,
        job: Job<'a>,
        needs: Needs,
        adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        let known = first_pass(&job, &Scanner::new(job.name, needs.open_calls))?;
        let Some(Prepared {
            meta, diagnostics, ..
        }) = prepared(&job, adjust, &ClaudeJsonl, &known)?
        else {
            return Ok(None);
        };
        let back = Back {
            rewrite: known.rewrite(&meta, job.tuning.rebuild_unchanged),
            drop_final_newline: Known::drops_final_newline(&meta),
            known,
        };
        Ok(Some(Plan::new(
            job,
            &ClaudeJsonl,
            diagnostics,
            Route::Own(Box::new(back)),
        )))
    }
}

/// Claude Code written back into Claude Code.
struct Back {
    known: Known,
    /// How entries are rebuilt, when the session's fields changed; else each is copied.
    rewrite: Option<Rewrite>,
    drop_final_newline: bool,
}

impl PassTwo for Back {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let Back {
            known,
            rewrite,
            drop_final_newline,
        } = *self;
        match rewrite {
            None => {
                copy_lines(job, &known.spots, known.clean, out)?;
            }
            Some(rewrite) => rebuild_entries(job, &known, &rewrite, out)?,
        }
        if drop_final_newline {
            out.take_back_last()?;
        }
        Ok(LossReport::default())
    }
}

/// Every entry rebuilt, in runs on the thread pool, written in order.
fn rebuild_entries(
    job: &Job,
    known: &Known,
    rewrite: &Rewrite,
    out: &mut dyn Output,
) -> io::Result<()> {
    let all: Vec<u32> = (0..known.spots.len() as u32).collect();
    for window_runs in runs(&known.spots, &all, job.tuning.run_bytes).chunks(window()) {
        let done: Vec<io::Result<Vec<u8>>> = window_runs
            .par_iter()
            .map(|run| {
                let mut buf = Vec::new();
                pass2::each_record(job.source, &known.spots, &all[run.clone()], |i, bytes| {
                    rewrite.entry(known, i, bytes, &mut buf)
                })?;
                Ok(buf)
            })
            .collect();
        for buf in done {
            out.put(&buf?)?;
        }
    }
    Ok(())
}

/// A session of another format: every node, in file order, as the whole path writes it (a
/// tree stays a tree).
impl StreamTarget for ClaudeJsonl {
    fn route(
        &self,
        job: &Job,
        known: Box<dyn Reading>,
        meta: Meta,
        _leaf: Option<String>,
    ) -> Result<Option<Route>, PlanError> {
        let sink =
            ForeignStream::new(&meta, job.options).map_err(|source| ConvertError::Write {
                to: job.to.name(),
                source,
            })?;
        let indices = (0..known.spots().len() as u32).collect();
        Ok(Some(Route::Nodes {
            known,
            indices,
            sink: Box::new(sink),
        }))
    }
}

impl NodeSink for ForeignStream {
    fn node(&mut self, _: u32, node: &mut Node, _: &Lookup, out: &mut Vec<u8>) -> io::Result<()> {
        ForeignStream::node(self, node, out);
        Ok(())
    }

    fn finish(self: Box<Self>, _out: &mut Vec<u8>) -> LossReport {
        ForeignStream::finish(*self)
    }
}
