//! What the engine ([`crate::engine`]) does with Gemini CLI's JSONL recordings: reads them in
//! two passes ([`super::two_pass`]), writes one back into a recording with its lines as they
//! are (when the whole writer gives them back so), and writes a session of another format (or
//! a legacy document) as a recording, node by node.

use std::io;

use super::GeminiJsonl;
use super::two_pass::{Lines, Recording, Scanner};
use crate::diag::LossReport;
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::plan::{Prepared, first_pass, prepared};
use crate::engine::reading::{Needs, Reading, TwoPassReader};
use crate::engine::runs::copy_lines;
use crate::engine::target::{PassTwo, StreamTarget};
use crate::engine::{Job, Output, Plan, PlanError, Route, Source};
use crate::formats::gemini_json::engine::{STREAM_NEEDS, stream_route};
use crate::formats::gemini_json::stream::Layout;
use crate::model::Meta;

impl TwoPassReader for GeminiJsonl {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        _needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let scanner = Scanner {
            name,
            source,
            lines: false,
        };
        let recording = pass1::known(source, name, &scanner, options)??;
        Ok(recording.map(|r| Box::new(r.known) as Box<dyn Reading>))
    }

    /// The lines as they are, when the whole writer gives them back so: the whole branch (no
    /// `--leaf`), the metadata unchanged (the session had an id; nothing adjusted), no call
    /// to close, and a line at least. Anything else the whole writer lays out again.
    fn write_back<'a>(
        &self,
        job: Job<'a>,
        _needs: Needs,
        adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        if job.options.leaf.is_some() {
            return Ok(None);
        }
        let scanner = Scanner {
            name: job.name,
            source: job.source,
            lines: true,
        };
        let Some(Recording {
            known,
            lines: Some(lines),
        }) = first_pass(&job, &scanner)??
        else {
            return Ok(None);
        };
        let Some(Prepared {
            meta, diagnostics, ..
        }) = prepared(&job, adjust, &GeminiJsonl, &known)?
        else {
            return Ok(None);
        };
        if meta != *known.meta() || lines.spots.is_empty() {
            return Ok(None);
        }
        Ok(Some(Plan::new(
            job,
            &GeminiJsonl,
            diagnostics,
            Route::Own(Box::new(Back(lines))),
        )))
    }
}

/// A recording's lines written back as they are.
struct Back(Lines);

impl PassTwo for Back {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let lines = self.0;
        // Copied record by record, a final line break the input did not have is taken back.
        if !copy_lines(job, &lines.spots, lines.clean, out)? && !lines.final_newline {
            out.take_back_last()?;
        }
        Ok(LossReport::default())
    }
}

impl StreamTarget for GeminiJsonl {
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
        stream_route(job, known, meta, leaf, Layout::Lines)
    }
}
