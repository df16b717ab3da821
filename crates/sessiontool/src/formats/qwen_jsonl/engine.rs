//! What the engine ([`crate::engine`]) does with Qwen Code sessions: reads them in two passes
//! ([`super::two_pass`]) and writes one back into Qwen Code.
//!
//! Written back, the format's writer gives a record of its own back as its very bytes while
//! the session's fields are the ones read ([`RecordWriter::gives_back_records_read_with`]),
//! and a node merged from several records as those records: they are copied. When the fields
//! change, every node is made and written by the writer.
//! Either way in the order the writer puts them (the head last), equal byte for byte to the
//! whole writer (`tests/engine/qwen.rs`).

use std::io;

use super::QwenJsonl;
use super::two_pass::{Known, RecordWriter, Scanner};
use crate::diag::LossReport;
use crate::engine::pass1::{self, Pass1Options};
use crate::engine::plan::{Prepared, first_pass, prepared};
use crate::engine::reading::{Needs, Reading, TwoPassReader};
use crate::engine::runs::each_branch_node;
use crate::engine::target::PassTwo;
use crate::engine::{Job, MadeFor, Output, Plan, PlanError, Route, Source, pass2};
use crate::model::Meta;
use crate::records::record_bytes;

impl TwoPassReader for QwenJsonl {
    fn read(
        &self,
        name: &str,
        source: &dyn Source,
        needs: Needs,
        options: Pass1Options,
    ) -> io::Result<Option<Box<dyn Reading>>> {
        let scanner = Scanner {
            name,
            source,
            calls: needs.open_calls,
        };
        Ok(Some(Box::new(pass1::known(
            source, name, &scanner, options,
        )??)))
    }

    /// Every node, the head last ([`super::write::head_last`]).
    fn write_back<'a>(
        &self,
        job: Job<'a>,
        needs: Needs,
        adjust: &mut dyn FnMut(&mut Meta),
    ) -> Result<Option<Plan<'a>>, PlanError> {
        let scanner = Scanner {
            name: job.name,
            source: job.source,
            calls: needs.open_calls,
        };
        let known = first_pass(&job, &scanner)??;
        let Some(Prepared {
            meta,
            leaf,
            diagnostics,
        }) = prepared(&job, adjust, &QwenJsonl, &known)?
        else {
            return Ok(None);
        };
        let Some((mut writer, copies)) = known.same_format_writer(&meta, job.options) else {
            return Ok(None);
        };
        let leaf = leaf.as_deref().and_then(|l| known.skeleton().index_of(l));
        let order = known.write_order(leaf, writer.losses());
        let back = Back {
            known,
            order,
            writer,
            copies: copies && !job.tuning.rebuild_unchanged,
        };
        Ok(Some(Plan::new(
            job,
            &QwenJsonl,
            diagnostics,
            Route::Own(Box::new(back)),
        )))
    }
}

/// Qwen Code written back into Qwen Code.
struct Back {
    known: Known,
    /// The nodes in the order the writer puts them.
    order: Vec<u32>,
    writer: RecordWriter,
    /// Records of one node each are copied (else every node is made and written).
    copies: bool,
}

impl PassTwo for Back {
    fn write(self: Box<Self>, job: &Job, out: &mut dyn Output) -> io::Result<LossReport> {
        let Back {
            known,
            order,
            writer: mut w,
            copies,
        } = *self;
        let len = job.source.len();
        if !copies {
            let mut buf = Vec::new();
            each_branch_node(job, &known, &order, MadeFor::OwnWriter, |_, nodes| {
                buf.clear();
                for node in nodes.iter() {
                    w.native_node(node, &mut buf);
                }
                out.put(&buf)
            })?;
            return Ok(w.finish());
        }
        // Every record as it is, each on its line: when those are the input's lines exactly,
        // the output is the input's bytes, copied by the kernel where it can.
        if known.lines_intact(&order, len) && out.put_copy_of(job.source, len)? {
            return Ok(w.finish());
        }
        // (A node the writer makes gets no time from the records before it: a record of this
        // format written back keeps its own `timestamp` key or has none, whatever the copied
        // records before it hold.)
        let mut buf = Vec::new();
        let mut failed = None;
        pass2::each_record(job.source, known.spots(), &order, |i, bytes| {
            if failed.is_some() {
                return;
            }
            let put = out.put(bytes).and_then(|()| out.put(b"\n")).and_then(|()| {
                // A node merged from several records reads as they do: the writer gives it
                // back as those records, each on its line, after the first.
                for spot in known.more_records_of(i) {
                    buf.resize(spot.len as usize, 0);
                    job.source.read_exact_at(&mut buf, spot.offset)?;
                    out.put(&record_bytes(&buf, spot.lossy))?;
                    out.put(b"\n")?;
                }
                Ok(())
            });
            if let Err(e) = put {
                failed = Some(e);
            }
        })?;
        failed.map_or(Ok(w.finish()), Err)
    }
}
