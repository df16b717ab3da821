//! A session from another format written as a rollout one node at a time, for the two-pass
//! engine ([`crate::engine`]): the `session_meta` line first, then runs of nodes (on several
//! threads at once, each run knowing the time of the line before it), then what the session
//! holds that no line carries. Byte for byte and loss for loss what [`Foreign::write`] gives
//! for the same branch, through the same code.

use super::foreign::Foreign;
use super::write::OTHER_BRANCHES;
use crate::diag::LossReport;
use crate::formats::{WriteError, WriteOptions};
use crate::model::{Meta, Node, Session};

/// The rollout writer of one session.
pub(crate) struct RolloutStream {
    /// The session's metadata, without nodes: all the writer reads of the session.
    session: Session,
    options: WriteOptions,
    session_id: String,
}

impl RolloutStream {
    pub(crate) fn new(meta: Meta, options: &WriteOptions) -> Result<Self, WriteError> {
        let session = Session {
            meta,
            nodes: Vec::new(),
        };
        let session_id = Foreign::new(&session, options, &mut LossReport::default())?
            .session_id()
            .to_string();
        Ok(RolloutStream {
            session,
            options: options.clone(),
            session_id,
        })
    }

    /// The session's start time (the meta line's time, when it has one).
    pub(crate) fn start_time(&self) -> Option<&str> {
        self.session.meta.start_time.as_deref()
    }

    /// The `session_meta` line. `left_out`: the nodes on other branches than the one
    /// written; `first_timed`: the branch's first node that has a time (the line's time when
    /// the session has no start time). Returns the time the line was given.
    pub(crate) fn begin(
        &self,
        losses: &mut LossReport,
        left_out: usize,
        first_timed: Option<Node>,
        out: &mut Vec<u8>,
    ) -> Result<Option<String>, WriteError> {
        // The losses in the order `Foreign::write` reports them: the session id, the other
        // branches, then the meta line's.
        Foreign::new(&self.session, &self.options, losses)?;
        losses.add("other-branches", left_out, OTHER_BRANCHES);
        let branch = Session {
            meta: Meta::default(),
            nodes: first_timed.into_iter().collect(),
        };
        let mut w = self.run(losses, None);
        w.0.meta_line(&branch, out);
        Ok(w.0.last_ts().cloned())
    }

    /// A writer for a run of consecutive nodes of the branch (`node_lines` for each), after
    /// a line whose time was `last_ts`.
    pub(crate) fn run<'s>(&'s self, losses: &'s mut LossReport, last_ts: Option<String>) -> Run<'s> {
        Run(Foreign::continued(
            &self.session,
            &self.options,
            losses,
            self.session_id.clone(),
            last_ts,
        ))
    }

    /// What the session holds that no line carries.
    pub(crate) fn finish(&self, losses: &mut LossReport) {
        self.run(losses, None).0.finish();
    }
}

/// See [`RolloutStream::run`].
pub(crate) struct Run<'s>(Foreign<'s>);

impl Run<'_> {
    /// The lines of the next node.
    pub(crate) fn node(&mut self, node: &Node, out: &mut Vec<u8>) {
        self.0.node_lines(node, out);
    }
}
