//! What every plan does between pass one and pass two, whatever its formats: the metadata as
//! the writer gets it, the `--leaf` node, the branch to write and what it leaves out, the calls
//! to close, what the conversion says.

use std::io;

use sha2::{Digest, Sha256};

use super::reading::{self, Reading};
use super::{Job, MadeFor, PlanError, Source, pass1};
use crate::convert::{ConvertError, unanswered_diagnostic};
use crate::diag::Diagnostic;
use crate::formats::{Format, WriteError};
use crate::model::{Meta, Node};
use crate::tree::LeftOut;

/// The session's metadata as the writer gets it: its id filled as `convert` fills it (from
/// the whole input's content), then `adjust`ed; `None` when the adjustment makes it another
/// format's (the whole path writes that).
pub(crate) fn adjusted(
    job: &Job,
    meta: &Meta,
    from: &dyn Format,
    adjust: &mut dyn FnMut(&mut Meta),
) -> io::Result<Option<Meta>> {
    let mut meta = meta.clone();
    if meta.id.is_none() {
        meta.id = Some(crate::ids::derived_uuid(&sha256_of(job.source)?));
    }
    adjust(&mut meta);
    Ok((meta.source_format.as_deref() == Some(from.name())).then_some(meta))
}

/// Pass one over the job's input with `scanner`.
pub(crate) fn first_pass<S: pass1::Scan>(job: &Job, scanner: &S) -> io::Result<S::Known> {
    let options = pass1::Pass1Options {
        block_size: job.tuning.block_size,
    };
    pass1::known(job.source, job.name, scanner, options)
}

/// What the conversion says: the reader's diagnostics, then the unanswered calls the target
/// leaves as they are, as the whole path says them.
fn said(job: &Job, read: &[Diagnostic], open_calls: usize) -> Vec<Diagnostic> {
    let mut diagnostics = read.to_vec();
    diagnostics.extend(unanswered_diagnostic(open_calls, job.to, job.name));
    diagnostics
}

/// Whether the target closes calls (`convert::close_calls`), which adds result nodes to the
/// session: then the conversion goes through the whole session. It closes the calls no
/// result answers when asked to, and always those a sub-agent inherited from its parent
/// (only a Codex reader names them).
fn closes_calls(job: &Job, meta: &Meta, open_calls: usize) -> bool {
    let to = job.to;
    to.resumable()
        && !to.answers_open_calls_itself()
        && (!meta.inherited_calls.is_empty() || (job.options.close_open_calls && open_calls > 0))
}

/// What a plan knows after pass one, to write.
pub(crate) struct Prepared {
    /// The metadata to write.
    pub meta: Meta,
    /// The `--leaf` node's whole id.
    pub leaf: Option<String>,
    /// What the conversion says.
    pub diagnostics: Vec<Diagnostic>,
}

/// What every plan over a [`Reading`] does after pass one: `None` when the whole path
/// converts it (calls to close, or the adjusted metadata another format's).
pub(crate) fn prepared(
    job: &Job,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &dyn Format,
    known: &dyn Reading,
) -> Result<Option<Prepared>, PlanError> {
    let open_calls = known.open_calls();
    if closes_calls(job, known.meta(), open_calls) {
        return Ok(None);
    }
    let leaf = leaf_id(job, known)?;
    let Some(meta) = adjusted(job, known.meta(), from, adjust)? else {
        return Ok(None);
    };
    let diagnostics = said(job, known.diagnostics(), open_calls);
    Ok(Some(Prepared {
        meta,
        leaf,
        diagnostics,
    }))
}

/// The node `--leaf` names, as its whole id: it takes the start of an id too, as the whole
/// path's `Tree::find` does.
fn leaf_id(job: &Job, known: &dyn Reading) -> Result<Option<String>, PlanError> {
    match job.options.leaf.as_deref() {
        Some(wanted) => {
            let skeleton = known.skeleton();
            let i = skeleton.find(wanted).map_err(ConvertError::Leaf)?;
            Ok(Some(skeleton.name(i)))
        }
        None => Ok(None),
    }
}

/// The branch to write (`leaf`'s, else the head's) and what it leaves out; `None` when the
/// whole path writes it (a `--leaf` that cuts a reading whose nodes are one line).
pub(crate) fn branch_of(
    job: &Job,
    known: &dyn Reading,
    leaf: Option<&str>,
) -> Result<Option<(Vec<u32>, LeftOut)>, PlanError> {
    if known.linear() {
        let all = (0..known.spots().len() as u32).collect();
        return Ok(leaf.is_none().then(|| (all, LeftOut::default())));
    }
    let chosen = known
        .skeleton()
        .branch(leaf, known.head(), |i| !known.is_message(i))
        .map_err(|e| ConvertError::Write {
            to: job.to.name(),
            source: WriteError(e),
        })?;
    let left_out = LeftOut {
        other_branches: chosen.other_branches,
        outside: chosen.outside.len(),
        outside_kinds: outside_kinds(job, known, &chosen.outside)?,
    };
    Ok(Some((chosen.path, left_out)))
}

/// Node `index`, read again, made for `made_for`.
pub(crate) fn node_of(
    job: &Job,
    known: &dyn Reading,
    index: u32,
    made_for: MadeFor,
) -> io::Result<Node> {
    let mut node = None;
    reading::each_node(known, job.source, &[index], made_for, |_, n| node = Some(n))?;
    Ok(node.expect("each_node makes every index it is given"))
}

/// The records outside the conversation counted by what they are, as
/// [`crate::tree::Tree::outside_summary`] counts them (each record read again for its name).
fn outside_kinds(job: &Job, known: &dyn Reading, outside: &[u32]) -> io::Result<String> {
    let mut names = Vec::with_capacity(outside.len());
    reading::each_node(known, job.source, outside, MadeFor::Anyone, |_, node| {
        names.push(crate::tree::record_name(&node))
    })?;
    Ok(crate::tree::kinds_summary(names))
}

/// The sha256 of the whole input, read in pieces.
fn sha256_of(source: &dyn Source) -> io::Result<String> {
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < source.len() {
        let n = (source.len() - at).min(buf.len() as u64) as usize;
        source.read_exact_at(&mut buf[..n], at)?;
        hash.update(&buf[..n]);
        at += n as u64;
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
