//! Qwen Code to Qwen Code in pass two. The format's writer gives back a record of its own as
//! its very bytes while the session's fields are the ones read
//! ([`RecordWriter::gives_back_records_read_with`]): those records are copied, and only the
//! nodes merged from several records are made and written by the writer. When the fields
//! change, every node is made and written by it. Either way in the order the writer puts
//! them (the head last), equal byte for byte to the whole writer (`tests/engine/qwen.rs`).

use std::io;

use super::{Job, MadeFor, Output, each_branch_node, node_of, pass2};
use crate::diag::LossReport;
use crate::engine::reading::Reading;
use crate::formats::qwen_jsonl::two_pass::{Known, RecordWriter};

/// Writes the nodes of `order` into `out`; what the writer lost.
pub(super) fn write(
    job: &Job,
    known: &Known,
    order: &[u32],
    mut w: RecordWriter,
    copies: bool,
    out: &mut dyn Output,
) -> io::Result<LossReport> {
    let len = job.source.len();
    if !copies {
        let mut buf = Vec::new();
        each_branch_node(job, known, order, MadeFor::OwnWriter, |nodes| {
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
    if known.lines_intact(order, len) && out.put_copy_of(job.source, len)? {
        return Ok(w.finish());
    }
    // (A node the writer makes gets no time from the records before it: a record of this
    // format written back keeps its own `timestamp` key or has none, whatever the copied
    // records before it hold.)
    let mut buf = Vec::new();
    let mut failed = None;
    pass2::each_record(job.source, known.spots(), order, |i, bytes| {
        if failed.is_some() {
            return;
        }
        let put = if known.is_merged(i) {
            node_of(job, known, i, MadeFor::OwnWriter).and_then(|node| {
                buf.clear();
                w.native_node(&node, &mut buf);
                out.put(&buf)
            })
        } else {
            out.put(bytes).and_then(|()| out.put(b"\n"))
        };
        if let Err(e) = put {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(w.finish()), Err)
}
