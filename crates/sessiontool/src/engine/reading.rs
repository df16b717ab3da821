//! What a format's pass one knows of a session, for reading its nodes again: the one
//! interface through which the engine's views ([`super::view::View`]) read any format that
//! has a two-pass reader (Claude Code JSONL, Codex rollouts).

use std::io;

use super::pass1::Spot;
use super::skeleton::Skeleton;
use super::{MadeFor, Source, pass2};
use crate::diag::Diagnostic;
use crate::formats::claude_jsonl::listing::HeadBranch;
use crate::model::{Body, Meta, Node, Role};

pub(crate) trait Reading: Send + Sync {
    /// The session's metadata, as the whole reader gives it.
    fn meta(&self) -> &Meta;
    /// The whole reader's diagnostics, in its order.
    fn diagnostics(&self) -> &[Diagnostic];
    /// Where each node's record is.
    fn spots(&self) -> &[Spot];
    /// The nodes' ids and parents.
    fn skeleton(&self) -> &Skeleton;
    /// The nodes from the root down to `leaf` ([`Skeleton::path_to`]).
    fn path_to(&self, leaf: u32) -> Vec<u32> {
        self.skeleton().path_to(leaf)
    }
    /// The head the whole reader names, as a node.
    fn head(&self) -> Option<u32>;
    /// Whether node `index` is a message (else an event).
    fn is_message(&self, index: u32) -> bool;
    /// Node `index`, made from its record's `bytes` as the whole reader makes it.
    fn node(&self, index: u32, bytes: &[u8], made_for: MadeFor) -> Node;

    /// What `list` shows of the nodes of `path`: their user and assistant messages, and the
    /// text of the first user message `prompt` takes. Here, from each message's node.
    fn head_branch(
        &self,
        source: &dyn Source,
        path: &[u32],
        prompt: &dyn Fn(&str) -> bool,
    ) -> io::Result<HeadBranch> {
        let messages: Vec<u32> = path
            .iter()
            .copied()
            .filter(|&i| self.is_message(i))
            .collect();
        let mut out = HeadBranch::default();
        pass2::each_record(source, self.spots(), &messages, |i, bytes| {
            let node = self.node(i, bytes, MadeFor::Counting);
            let Body::Message(m) = &node.body else {
                return;
            };
            out.messages += usize::from(matches!(m.role, Role::User | Role::Assistant));
            if out.first_prompt.is_none() && m.role == Role::User {
                let text = m.text();
                if prompt(&text) {
                    out.first_prompt = Some(text);
                }
            }
        })?;
        Ok(out)
    }
}
