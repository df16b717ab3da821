//! The one step a session from another format goes through on its way into a target: what
//! every writer of such sessions must decide the same way, decided once, by the target's rules
//! given as data ([`Target`]).
//!
//! - the session's head ([`head`]): its id (one derived where the target does not take it,
//!   said as a `session-id` loss), its start time and its working directory;
//! - what has no place in the target, counted ([`Unplaced`]): fields the source format keeps
//!   on nodes, messages, usage and parts, signatures, and the session's own fields;
//! - tool calls ([`Calls`]): ids derived for calls without one and made acceptable to the
//!   target, results paired with their calls, calls left open counted;
//! - the branch, for targets that hold one (`one_branch`).
//!
//! What is left in a format's module is its line shapes: where each kept thing goes. A new
//! target declares a [`Target`] in its own module and calls these pieces where it writes.

mod calls;
pub(crate) mod head;
mod node_ids;
mod seed;
mod target;
mod unplaced;

pub(crate) use calls::{Calls, acceptable, derived};
pub(crate) use head::{Facts, Head};
pub(crate) use node_ids::node_uuid;
pub(crate) use target::{
    CallIds, Cwd, LossWords, MissingId, Pairing, SessionIds, Start, Target, Time, Unplaced,
    UsageFields,
};
pub(crate) use unplaced::of_parts;

#[cfg(test)]
mod tests;
