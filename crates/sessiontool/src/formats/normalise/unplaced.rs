//! What a session from another format holds that the target has no place for, counted in
//! the target's words (see [`super::Unplaced`]).

use super::target::{Unplaced, UsageFields};
use crate::diag::LossReport;
use crate::model::{Message, Meta, Node, Part, Usage};

impl Unplaced {
    /// The fields of a message's node and of the message (and of its usage, where the target
    /// counts them there) that the model does not interpret.
    pub(crate) fn message_fields(&self, node: &Node, m: &Message) -> usize {
        let usage = match self.usage_fields {
            UsageFields::InExtraFields => m.usage.as_ref().map_or(0, |u| u.extra.len()),
            UsageFields::Apart(_) => 0,
        };
        node.extra.len() + m.extra.len() + usage
    }

    /// [`Unplaced::message_fields`], said as `extra-fields`.
    pub(crate) fn message(&self, node: &Node, m: &Message, losses: &mut LossReport) {
        self.extra(self.message_fields(node, m), losses);
    }

    /// `count` fields said as `extra-fields`.
    pub(crate) fn extra(&self, count: usize, losses: &mut LossReport) {
        losses.add("extra-fields", count, self.extra_fields);
    }

    /// The usage's fields said as `usage-fields`, where the target counts them apart.
    pub(crate) fn usage(&self, usage: &Usage, losses: &mut LossReport) {
        if let UsageFields::Apart(message) = self.usage_fields {
            losses.add("usage-fields", usage.extra.len(), message);
        }
    }

    /// A part's fields (`part-fields`, where the target counts them apart) and its signature
    /// (`signatures`, where the target does not keep them).
    pub(crate) fn part(&self, p: &Part, losses: &mut LossReport) {
        if let Some(message) = self.part_fields {
            losses.add("part-fields", p.extras(), message);
        }
        if let Some(message) = self.signatures {
            losses.add("signatures", usize::from(p.signature.is_some()), message);
        }
    }

    /// The session's title, summary and fields, where the target has no place for them.
    pub(crate) fn session(&self, meta: &Meta, losses: &mut LossReport) {
        self.title(meta, losses);
        self.summary(meta, losses);
        self.session_fields(meta, losses);
    }

    /// The session's title, said as `title` where the target has no place for it.
    pub(crate) fn title(&self, meta: &Meta, losses: &mut LossReport) {
        if let Some(message) = self.title {
            losses.add("title", usize::from(meta.title.is_some()), message);
        }
    }

    /// The session's summary, said as `session-summary` where the target has no place for it.
    pub(crate) fn summary(&self, meta: &Meta, losses: &mut LossReport) {
        if let Some(message) = self.summary {
            losses.add(
                "session-summary",
                usize::from(meta.summary.is_some()),
                message,
            );
        }
    }

    /// The session's fields of the source format, said as `session-fields` where the target
    /// says them (a target that says them before its title calls this first).
    pub(crate) fn session_fields(&self, meta: &Meta, losses: &mut LossReport) {
        if let Some(message) = self.session_fields {
            let hash = usize::from(self.project_hash && meta.project_hash.is_some());
            losses.add("session-fields", meta.extra.len() + hash, message);
        }
    }
}

/// The fields of `parts` that the model does not interpret, and how many of them are signed.
pub(crate) fn of_parts(parts: &[Part]) -> (usize, usize) {
    parts.iter().fold((0, 0), |(fields, signed), p| {
        (
            fields + p.extras(),
            signed + usize::from(p.signature.is_some()),
        )
    })
}
