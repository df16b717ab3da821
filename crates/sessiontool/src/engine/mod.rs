//! Engine v2's two-pass conversion (docs/engine-v2.md, stage 3): a session converted in
//! memory bounded by its number of records, never by its content.
//!
//! Pass one ([`pass1`]) splits the input into records exactly as the records layer does and
//! keeps, per record, where it is and the few facts its format's reader needs to know about
//! the whole file (ids, parents, flags); the session's metadata and every diagnostic the whole
//! reader would give come out of it. The nodes to write are chosen on that skeleton
//! ([`skeleton`]) as the whole-session writers choose them. Pass two ([`pass2`]) reads each
//! chosen record again (borrowed from memory, or by positioned reads of a file), makes its node
//! with the format's own reading code, hands it to the target's writer, and drops it; runs of
//! nodes are converted on several threads at once and written in order. A same-format
//! conversion that changes nothing copies each record's bytes.
//!
//! Each format's module declares what the engine does with it: a reader in two passes
//! (`reading::TwoPassReader`, from [`Format::two_pass`]), which may write the format back
//! itself (records copied), and a target that takes a session of another format node by node
//! (`target::StreamTarget`, from [`Format::stream_target`]). Any format with the one converts
//! into any format with the other; nothing here names a format. Readers: every JSONL format
//! and Gemini's legacy documents (each written back into its own format but the legacy
//! document and Codex's older layout, which is not written; pi, llxprt-code and the Go agent
//! through their own targets, `lines`). Targets: every JSONL format that is written, and the
//! exports. The view ([`view`]) shows, trees and lists every format
//! with a reader the same way. Everything else goes through the whole-session path
//! ([`crate::convert::convert_whole`]), which this path equals byte for byte, diagnostic for
//! diagnostic and loss for loss (`tests/engine.rs`).

mod bins;
pub(crate) mod lines;
pub mod links;
mod output;
pub mod pass1;
pub mod pass2;
pub(crate) mod plan;
pub(crate) mod reading;
pub(crate) mod runs;
pub mod skeleton;
pub mod source;
pub(crate) mod target;
pub mod view;

use std::io;
use std::path::Path;

use crate::convert::{Conversion, ConvertError};
use crate::diag::Diagnostic;
use crate::formats::{self, Format, WriteOptions};
use crate::model::Meta;
pub use output::{Discard, FileOutput, Output};
use reading::{Needs, Reading};
pub use source::{Bytes, FileSource, Source};
use target::{NodeSink, PassTwo};

/// What pass two makes a node for, so that a reader makes no more of an entry than the
/// node's user reads of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadeFor {
    /// The format's own writer: with the origin it reads to give the entry back byte for byte.
    OwnWriter,
    /// Any user of the model: `show`, `tree`, a writer that writes the fields it does not
    /// know.
    Anyone,
    /// A user that looks at no field the reader does not interpret, beyond counting them (a
    /// writer with no place for them; `show`'s text): the values of those fields are left
    /// null, never read (a Claude Code tool result's `toolUseResult`, about half of a
    /// session's bytes, is one).
    Counting,
}

/// Sizes the engine works in (tests make them small, to cross many boundaries).
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// Pass one's blocks.
    pub block_size: usize,
    /// Pass two's runs of records converted on one thread at a time.
    pub run_bytes: u64,
    /// Rebuild every record of a same-format conversion even when it would be copied (for
    /// tests: both must give the same bytes).
    pub rebuild_unchanged: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            block_size: 1 << 20,
            run_bytes: 1 << 20,
            rebuild_unchanged: false,
        }
    }
}

/// One conversion.
pub struct Job<'a> {
    /// What to call the input in messages.
    pub name: &'a str,
    pub path: Option<&'a Path>,
    pub source: &'a dyn Source,
    pub from: Option<&'static dyn Format>,
    pub to: &'static dyn Format,
    pub options: &'a WriteOptions,
    pub tuning: Tuning,
}

/// A conversion whose pass one is done: everything is known but the output's bytes. Errors
/// of reading and of the target (an unknown `--leaf`) have been said; writing can only fail
/// on input or output.
pub struct Plan<'a> {
    job: Job<'a>,
    from: &'static dyn Format,
    diagnostics: Vec<Diagnostic>,
    route: Route,
}

impl<'a> Plan<'a> {
    /// The plan of `job`, read from `from`, saying `diagnostics`, written by `route`.
    pub(crate) fn new(
        job: Job<'a>,
        from: &'static dyn Format,
        diagnostics: Vec<Diagnostic>,
        route: Route,
    ) -> Self {
        Plan {
            job,
            from,
            diagnostics,
            route,
        }
    }
}

/// How a plan writes its output.
pub(crate) enum Route {
    /// The nodes of `indices` (the branch, or every node), made in runs on the thread pool and
    /// handed in order to one writer.
    Nodes {
        known: Box<dyn Reading>,
        indices: Vec<u32>,
        sink: Box<dyn NodeSink>,
    },
    /// Pass two as the format's module writes it (a session written back into its own
    /// format, a writer that makes its lines apart from the order they go in).
    Own(Box<dyn PassTwo>),
}

/// A format's reader in two passes, as [`Format::two_pass`] gives it (what it can do is the
/// crate's own).
#[derive(Clone, Copy)]
pub struct TwoPass(pub(crate) &'static dyn reading::TwoPassReader);

/// A format the engine writes sessions of other formats into, as [`Format::stream_target`]
/// gives it (what it can do is the crate's own).
#[derive(Clone, Copy)]
pub struct Target(pub(crate) &'static dyn target::StreamTarget);

/// Whether the engine converts `from` into `to` (for some inputs: a session the two passes do
/// not read, or a conversion that changes what the whole path writes, goes through the whole
/// session).
pub fn covers(from: &dyn Format, to: &dyn Format) -> bool {
    from.two_pass().is_some() && (from.name() == to.name() || to.stream_target().is_some())
}

/// The input's format as [`crate::convert::read`] finds it: given, or detected from the
/// first bytes (all that detection looks at). `None` too when the given format is plainly not
/// the content's: the whole path says so.
fn detect(job: &Job) -> io::Result<Option<&'static dyn Format>> {
    format_of(job.source, job.path, job.from)
}

/// [`detect`] for any input: `from` when the content does not contradict it, else the format
/// detected from the first bytes.
pub(crate) fn format_of(
    source: &dyn Source,
    path: Option<&Path>,
    from: Option<&'static dyn Format>,
) -> io::Result<Option<&'static dyn Format>> {
    let n = source.len().min(formats::DETECT_HEAD as u64) as usize;
    let mut head = vec![0; n];
    source.read_exact_at(&mut head, 0)?;
    Ok(match from {
        Some(f) => formats::contradicts(f, path, &head).is_none().then_some(f),
        None => formats::detect(path, &head),
    })
}

/// Pass one, when the engine covers the conversion: `Ok(None)` when it does not (the caller
/// converts the whole session instead). `adjust` changes the session's metadata between
/// reading and writing, as [`crate::convert::convert_with`]'s does.
pub fn plan<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
) -> Result<Option<Plan<'a>>, PlanError> {
    let Some(from) = detect(&job)? else {
        return Ok(None);
    };
    let Some(TwoPass(reader)) = from.two_pass() else {
        return Ok(None);
    };
    // Fitting a session into a token budget weighs every turn of the branch against the
    // others (`convert::budget`): that conversion goes through the whole session.
    if job.options.max_tokens.is_some() {
        return Ok(None);
    }
    let to = job.to;
    // The calls no result answers matter only to a target whose tool does not answer them.
    let open_calls = to.resumable() && !to.answers_open_calls_itself();
    if from.name() == to.name() {
        let needs = Needs {
            open_calls,
            ..Needs::default()
        };
        return reader.write_back(job, needs, adjust);
    }
    let Some(Target(target)) = to.stream_target() else {
        return Ok(None);
    };
    through_target(job, from, reader, target, open_calls, adjust)
}

/// Pass one of `job` read by `reader` (the reader of `from`) for `target`, the target's own
/// route after it: how a session goes into another format, and how a format whose target
/// writes its own sessions too writes one back (`open_calls`: whether the calls no result
/// answers are to be learnt).
pub(crate) fn through_target<'a>(
    job: Job<'a>,
    from: &'static dyn Format,
    reader: &dyn reading::TwoPassReader,
    target: &dyn target::StreamTarget,
    open_calls: bool,
    adjust: &mut dyn FnMut(&mut Meta),
) -> Result<Option<Plan<'a>>, PlanError> {
    let needs = Needs {
        nodes: true,
        open_calls,
        ..target.needs()
    };
    let options = pass1::Pass1Options {
        block_size: job.tuning.block_size,
    };
    let Some(known) = reader.read(job.name, job.source, needs, options)? else {
        return Ok(None);
    };
    let Some(plan::Prepared {
        meta,
        leaf,
        diagnostics,
    }) = plan::prepared(&job, adjust, from, &*known)?
    else {
        return Ok(None);
    };
    let Some(route) = target.route(&job, known, meta, leaf)? else {
        return Ok(None);
    };
    Ok(Some(Plan::new(job, from, diagnostics, route)))
}

/// Why pass one stopped.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The input could not be read.
    #[error("{0}")]
    Input(#[from] io::Error),
}

impl Plan<'_> {
    /// Pass two: the output into `out`; the conversion's report (its `bytes` left empty: they
    /// went to `out`).
    pub fn write(self, out: &mut dyn Output) -> io::Result<Conversion> {
        let Plan {
            job,
            from,
            diagnostics,
            route,
        } = self;
        let job = &job;
        let losses = match route {
            Route::Nodes {
                known,
                indices,
                mut sink,
            } => {
                let session = target::Lookup {
                    job,
                    known: &*known,
                };
                let mut buf = Vec::new();
                sink.begin(&mut buf);
                out.put(&buf)?;
                let made_for = sink.made_for();
                runs::each_branch_node(job, &*known, &indices, made_for, |run, nodes| {
                    buf.clear();
                    for (&i, node) in run.iter().zip(nodes.iter_mut()) {
                        sink.node(i, node, &session, &mut buf)?;
                    }
                    out.put(&buf)
                })?;
                buf.clear();
                let losses = sink.finish(&mut buf);
                out.put(&buf)?;
                losses
            }
            Route::Own(writing) => writing.write(job, out)?,
        };
        Ok(Conversion {
            from: from.name(),
            to: job.to.name(),
            bytes: Vec::new(),
            diagnostics,
            losses,
            replaced: None,
            budget: None,
        })
    }
}
