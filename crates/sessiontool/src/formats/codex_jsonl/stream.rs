//! A session from another format written as a rollout one node at a time, for the two-pass
//! engine ([`crate::engine`]): the `session_meta` line first, then the branch's nodes in order,
//! then what the session holds that no line carries. Byte for byte and loss for loss what
//! [`Foreign::write`] gives for the same branch, through the same code: one writer goes
//! through the whole branch, as the writer's lines depend on the lines before them (the time
//! of the last line, the model of the last `turn_context`, the running token totals).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::foreign::{Foreign, Lost, Render, Said};
use crate::diag::LossReport;
use crate::formats::{WriteError, WriteOptions};
use crate::model::{Meta, Node, Session};
use crate::tree::LeftOut;

/// The largest buffer a run's lines are given at once (a run of a huge record says little of
/// the next).
const MOST_HINT: usize = 8 << 20;

/// What the rollout writer of one session reads of it: its metadata, never its nodes.
pub(crate) struct RolloutStream {
    session: Session,
    options: WriteOptions,
    /// The session id as the writer writes it, and whether the session was read from a
    /// rollout: all that makes a node's own lines ([`Render`]).
    session_id: String,
    native: bool,
    /// About the size of the last run's lines: the next run's buffer is made that large at
    /// once (grown from nothing, it was copied over and over as it doubled).
    lines_hint: AtomicUsize,
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
        let mut losses = LossReport::default();
        let (session_id, native) = {
            let w = Foreign::new(&session, options, &mut losses)?;
            (w.session_id().to_string(), w.native())
        };
        Ok(RolloutStream {
            session,
            options: options.clone(),
            session_id,
            native,
            lines_hint: AtomicUsize::new(0),
        })
    }

    /// The lines of a run of the branch's nodes, made apart from the writer, on any thread
    /// (the nodes are dropped there too); [`Writer::run`] writes them in order, with the lines
    /// that depend on the ones before. A node without a time before any node of the run that
    /// has one takes the time of the lines before the run: the writer makes its lines itself.
    pub(crate) fn run(&self, nodes: Vec<Node>) -> Run {
        let render = Render::new(&self.session_id, self.native);
        let mut run = Run {
            lines: Vec::with_capacity(self.lines_hint.load(Ordering::Relaxed)),
            ..Run::default()
        };
        let mut ts: Option<String> = None;
        for mut node in nodes {
            // The time is passed apart: the lines are made from the rest of the node.
            if let Some(t) = node.timestamp.take() {
                ts = Some(t);
            }
            let Some(t) = &ts else {
                run.made.push(Made::Node(Box::new(node)));
                continue;
            };
            let (lines, lost) = (run.lines.len(), run.lost.len());
            let said = render.node(&node, t, &mut run.lines, &mut run.lost);
            let ts = (said.model.is_some() || said.usage.is_some()).then(|| t.clone());
            run.made.push(Made::Lines {
                lines: lines..run.lines.len(),
                lost: lost..run.lost.len(),
                said,
                ts,
            });
        }
        run.last_ts = ts;
        let len = run.lines.len();
        self.lines_hint
            .store((len + len / 8).min(MOST_HINT), Ordering::Relaxed);
        run
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

    /// The lines of a run made by [`RolloutStream::run`], in order.
    pub(crate) fn run(&mut self, run: Run, out: &mut Vec<u8>) {
        for made in run.made {
            match made {
                Made::Node(node) => self.0.node_lines(&node, out),
                Made::Lines {
                    lines,
                    lost,
                    said,
                    ts,
                } => self.0.put(
                    ts.as_deref().unwrap_or_default(),
                    &said,
                    &run.lines[lines],
                    &run.lost[lost],
                    out,
                ),
            }
        }
        if let Some(ts) = run.last_ts {
            self.0.set_last_ts(ts);
        }
    }

    /// What the session holds that no line carries.
    pub(crate) fn finish(mut self) {
        self.0.finish();
    }
}

/// See [`RolloutStream::run`].
#[derive(Default)]
pub(crate) struct Run {
    lines: Vec<u8>,
    lost: Vec<Lost>,
    made: Vec<Made>,
    /// The time of the run's last node, when one of its nodes had a time.
    last_ts: Option<String>,
}

enum Made {
    /// A node whose time is the one of the lines before the run.
    Node(Box<Node>),
    /// A node's own lines and losses (places in the run's), what they leave to the writer, and
    /// their time when the writer adds a line to them.
    Lines {
        lines: Range<usize>,
        lost: Range<usize>,
        said: Said,
        ts: Option<String>,
    },
}
