//! A session from another format written as a rollout one node at a time, for the two-pass
//! engine ([`crate::engine`]): the `session_meta` line first, then the branch's nodes in order,
//! then what the session holds that no line carries. Byte for byte and loss for loss what
//! [`Foreign::write`] gives for the same branch, through the same code: one writer goes
//! through the whole branch, as the writer's lines depend on the lines before them (the time
//! of the last line, the model of the last `turn_context`, the running token totals).

use super::foreign::Foreign;
use crate::diag::LossReport;
use crate::formats::{WriteError, WriteOptions};
use crate::model::{Meta, Node, Session};
use crate::tree::LeftOut;

/// What the rollout writer of one session reads of it: its metadata, never its nodes.
pub(crate) struct RolloutStream {
    session: Session,
    options: WriteOptions,
}

impl RolloutStream {
    /// Whether the writer writes the values of fields it has no place for: it only counts
    /// them (see [`Foreign`]'s `count_extras`).
    pub(crate) const WRITES_EXTRA_VALUES: bool = false;

    pub(crate) fn new(meta: Meta, options: &WriteOptions) -> Result<Self, WriteError> {
        let session = Session {
            meta,
            nodes: Vec::new(),
        };
        // What `Foreign::new` refuses, refused before anything is written.
        Foreign::new(&session, options, &mut LossReport::default())?;
        Ok(RolloutStream {
            session,
            options: options.clone(),
        })
    }

    /// The session's start time (the meta line's time, when it has one).
    pub(crate) fn start_time(&self) -> Option<&str> {
        self.session.meta.start_time.as_deref()
    }

    /// The writer, its losses into `losses` in the order `Foreign::write` reports them (the
    /// session id, what the branch leaves out, then the lines').
    pub(crate) fn writer<'s>(
        &'s self,
        losses: &'s mut LossReport,
        left_out: &LeftOut,
    ) -> Result<Writer<'s>, WriteError> {
        let mut w = Foreign::new(&self.session, &self.options, losses)?;
        w.left_out(left_out);
        Ok(Writer(w))
    }
}

/// See [`RolloutStream::writer`].
pub(crate) struct Writer<'s>(Foreign<'s>);

impl Writer<'_> {
    /// The `session_meta` line; `first_timed`: the branch's first node that has a time (the
    /// line's time when the session has no start time).
    pub(crate) fn begin(&mut self, first_timed: Option<Node>, out: &mut Vec<u8>) {
        let branch = Session {
            meta: Meta::default(),
            nodes: first_timed.into_iter().collect(),
        };
        self.0.meta_line(&branch, out);
    }

    /// The lines of the branch's next node.
    pub(crate) fn node(&mut self, node: &Node, out: &mut Vec<u8>) {
        self.0.node_lines(node, out);
    }

    /// What the session holds that no line carries.
    pub(crate) fn finish(mut self) {
        self.0.finish();
    }
}
