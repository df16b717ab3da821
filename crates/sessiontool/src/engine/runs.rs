//! Pass two's work in runs: the records of a branch cut into runs of about a megabyte, the
//! nodes of several runs made at once on the thread pool while one writer writes the runs
//! before them in order, and what is done with freed by the thread that made it
//! ([`super::bins`]); and records copied as they are.

use std::io;

use rayon::prelude::*;

use super::reading::{self, Reading};
use super::{Job, MadeFor, Output, bins, pass1, pass2};

/// Runs of consecutive positions of `indices` holding about `bytes` of records each.
pub(crate) fn runs(
    known_spots: &[pass1::Spot],
    indices: &[u32],
    bytes: u64,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (k, &i) in indices.iter().enumerate() {
        size += u64::from(known_spots[i as usize].len) + 1;
        if size >= bytes {
            out.push(start..k + 1);
            start = k + 1;
            size = 0;
        }
    }
    if start < indices.len() {
        out.push(start..indices.len());
    }
    out
}

/// Runs converted at once (twice the threads: while one is long, others go on).
pub(crate) fn window() -> usize {
    2 * rayon::current_num_threads().max(1)
}

/// Every record's bytes, each on its line: when those are the input's lines exactly (`clean`:
/// the records layer found nothing to say of them), the input's bytes, copied by the kernel
/// where it can, and `true`; else record by record, and `false`.
pub(crate) fn copy_lines(
    job: &Job,
    spots: &[pass1::Spot],
    clean: bool,
    out: &mut dyn Output,
) -> io::Result<bool> {
    let len = job.source.len();
    if clean && pass1::lines_intact(spots, len) && out.put_copy_of(job.source, len)? {
        return Ok(true);
    }
    copy_records(job, spots, out, |_| None)?;
    Ok(false)
}

/// Every record's bytes, each on its line, after `before(index)` (bytes with their line
/// break) when there are some.
pub(crate) fn copy_records<'b>(
    job: &Job,
    spots: &[pass1::Spot],
    out: &mut dyn Output,
    before: impl Fn(u32) -> Option<&'b [u8]>,
) -> io::Result<()> {
    let all: Vec<u32> = (0..spots.len() as u32).collect();
    // The output's first error stops the copy (the rest is not read).
    let mut failed = None;
    pass2::each_record(job.source, spots, &all, |i, bytes| {
        if failed.is_some() {
            return;
        }
        let put = match before(i) {
            Some(first) => out.put(first),
            None => Ok(()),
        }
        .and_then(|()| out.put(bytes))
        .and_then(|()| out.put(b"\n"));
        if let Err(e) = put {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// The nodes of `branch`, made for `made_for`, handed to `write` run by run in order, with
/// their indices. The nodes of several runs are made at once on the thread pool, the next
/// window while `write` writes one (each writer's lines depend on the ones before: one writer
/// goes through them in order). What `write` leaves of a run is freed by the thread that made
/// it.
pub(crate) fn each_branch_node(
    job: &Job,
    known: &dyn Reading,
    branch: &[u32],
    made_for: MadeFor,
    write: impl FnMut(&[u32], &mut Vec<crate::model::Node>) -> io::Result<()> + Send,
) -> io::Result<()> {
    each_branch_run(job, known, branch, made_for, |nodes| nodes, write)
}

/// [`each_branch_node`], each run's nodes turned by `finish` into what `write` takes, on the
/// thread that made them (a writer's work that does not depend on the lines before, done
/// there). What `write` leaves of a run is freed by the thread that made it ([`bins`]).
pub(crate) fn each_branch_run<T: Send>(
    job: &Job,
    known: &dyn Reading,
    branch: &[u32],
    made_for: MadeFor,
    finish: impl Fn(Vec<crate::model::Node>) -> T + Sync,
    mut write: impl FnMut(&[u32], &mut T) -> io::Result<()> + Send,
) -> io::Result<()> {
    let runs = runs(known.spots(), branch, job.tuning.run_bytes);
    let bins = bins::Bins::new();
    // The nodes of a window of runs, made at once, with the thread that made each.
    type Made<T> = io::Result<(Option<usize>, std::ops::Range<usize>, T)>;
    let make = |part: &[std::ops::Range<usize>]| -> Vec<Made<T>> {
        part.par_iter()
            .map(|run| {
                let thread = bins.empty_own();
                let mut nodes = Vec::with_capacity(run.len());
                reading::each_node(
                    known,
                    job.source,
                    &branch[run.clone()],
                    made_for,
                    |_, node| nodes.push(node),
                )?;
                Ok((thread, run.clone(), finish(nodes)))
            })
            .collect()
    };
    let mut parts = runs.chunks(window());
    let mut made = parts.next().map(make).unwrap_or_default();
    loop {
        let next_part = parts.next();
        let (next, written) = rayon::join(
            || next_part.map(make),
            || -> io::Result<()> {
                for made in made {
                    let (thread, indices, mut run) = made?;
                    write(&branch[indices], &mut run)?;
                    bins.give_back(thread, run);
                }
                Ok(())
            },
        );
        written?;
        match next {
            Some(n) => made = n,
            None => break,
        }
    }
    Ok(())
}
