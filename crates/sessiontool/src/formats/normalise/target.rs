//! A target's rules for sessions from other formats, as data: each format that writes such
//! sessions declares one (`const TARGET: Target`) in its own module.

use crate::ids::is_uuid;

/// A loss the target reports: its code and its report's words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LossWords {
    pub code: &'static str,
    pub message: &'static str,
}

/// What a target keeps of a session from another format, and how it names what it invents.
#[derive(Debug)]
pub(crate) struct Target {
    /// The format's name (a session read from it is the target's own).
    pub name: &'static str,
    pub session_ids: SessionIds,
    pub start: Start,
    pub cwd: Cwd,
    pub calls: CallIds,
    pub unplaced: Unplaced,
}

impl Target {
    /// A target that makes up no session id, time, directory or call id (ids as given, `""`
    /// for none; the start and cwd its writer takes itself): only what it says of the fields
    /// it has no place for is its own (checkpoints, simple-agent, Gemini).
    pub const fn keeping_ids(name: &'static str, unplaced: Unplaced) -> Target {
        Target {
            name,
            session_ids: SessionIds::any(MissingId::Empty),
            start: Start::UNUSED,
            cwd: Cwd::GIVEN,
            calls: CallIds::KEPT,
            unplaced,
        }
    }
}

/// How the target names sessions.
#[derive(Debug)]
pub(crate) struct SessionIds {
    /// The ids the target takes as they are (`None`: any).
    pub takes: Option<fn(&str) -> bool>,
    /// What the seed of a UUID derived from an id the target does not take starts with.
    pub namespace: &'static str,
    /// Why the id is changed, as the `session-id` loss says it.
    pub why: &'static str,
    pub missing: MissingId,
}

impl SessionIds {
    /// Only UUIDs, derived under `namespace` from an id that is none (see [`SessionIds`]).
    pub const fn uuids(namespace: &'static str, why: &'static str, missing: MissingId) -> Self {
        SessionIds {
            takes: Some(is_uuid),
            namespace,
            why,
            missing,
        }
    }

    /// Any id.
    pub const fn any(missing: MissingId) -> Self {
        SessionIds {
            takes: None,
            namespace: "",
            why: "",
            missing,
        }
    }
}

/// What a session without an id is given.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MissingId {
    /// Nothing: the target refuses the session.
    Refused,
    /// `""`, unsaid (the target's file names it so).
    Empty,
    /// The UUID the empty id is given, unsaid (an empty id is taken as none).
    AsEmpty,
    /// A UUID derived from the target's name and the number of nodes.
    FromNodeCount,
    /// A UUID derived from the target's name and the first node's id.
    FromFirstNode,
    /// A UUID derived from the session's start time as Rust debug-prints the option
    /// (`None`, `Some("…")`): what llxprt files written so far name such a session.
    FromStartTime,
}

/// Where the session's start time comes from, in order, and what it is when none gives it.
#[derive(Debug)]
pub(crate) struct Start {
    pub from: &'static [Time],
    /// The time when none of them has one: this one, or `""` said as this loss.
    pub otherwise: Result<&'static str, LossWords>,
}

impl Start {
    /// For a target that takes its times elsewhere (those of the messages it writes) or has
    /// none: `""`.
    pub const UNUSED: Start = Start {
        from: &[],
        otherwise: Ok(""),
    };
}

/// A time the session gives.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Time {
    /// The session's start time.
    Started,
    /// The first node's time that has one.
    FirstNode,
    /// `--now`.
    Now,
    /// The session's last update.
    LastUpdated,
}

/// Where the working directory comes from: the session's, else `--cwd`.
#[derive(Debug)]
pub(crate) struct Cwd {
    /// Else the first of the session's `directories`.
    pub directories: bool,
    /// When none: `""`, said as this loss (`None`: unsaid).
    pub unknown: Option<LossWords>,
}

impl Cwd {
    /// The session's, else `--cwd`, else none, unsaid.
    pub const GIVEN: Cwd = Cwd {
        directories: false,
        unknown: None,
    };
}

/// How the target names tool calls.
#[derive(Debug)]
pub(crate) struct CallIds {
    /// What a derived id starts with (and what an id left empty by `allowed` becomes).
    pub prefix: &'static str,
    /// What a derived id's digest is of: `{session}`, `{node}` and `{index}` (the call's place
    /// in its message) replaced (see `seed`).
    pub seed: &'static str,
    /// How many hex digits of the digest follow the prefix.
    pub digits: usize,
    /// The characters a call's own id keeps (the others become `_`); `None`: kept as given.
    pub allowed: Option<fn(char) -> bool>,
    pub pairing: Pairing,
    /// The loss for calls left without a result (`None`: unsaid).
    pub open: Option<LossWords>,
}

impl CallIds {
    /// A target that writes calls with the ids they have and derives none.
    pub const KEPT: CallIds = CallIds {
        prefix: "",
        seed: "",
        digits: 0,
        allowed: None,
        pairing: Pairing::Strict,
        open: None,
    };
}

/// How a result finds its call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pairing {
    /// By the id the call was written with; a result whose id names no call (Gemini
    /// checkpoints name only the response) answers the oldest open call of its name, else the
    /// oldest open call. It closes every open call of its id (the API pairs by id).
    Loose,
    /// By the call's id; only a result without one answers the oldest open call of its name,
    /// else the oldest. It closes one call.
    Strict,
}

/// The words of the losses for what has no place in the target.
#[derive(Debug)]
pub(crate) struct Unplaced {
    /// `extra-fields`: the fields of a message's node and of the message.
    pub extra_fields: &'static str,
    pub usage_fields: UsageFields,
    /// `part-fields`: the fields of parts ([`crate::model::Part::extras`]); `None`: they are
    /// counted among the `extra-fields` of their message.
    pub part_fields: Option<&'static str>,
    /// `signatures`: part signatures (`None`: the target keeps them).
    pub signatures: Option<&'static str>,
    /// `title`: the session's title (`None`: the target keeps it).
    pub title: Option<&'static str>,
    /// `session-summary`: the session's summary (`None`: the target keeps it).
    pub summary: Option<&'static str>,
    /// `session-fields`: the session's fields of the source format (`None`: unsaid).
    pub session_fields: Option<&'static str>,
    /// Whether a Gemini project hash counts among them.
    pub project_hash: bool,
}

impl Unplaced {
    /// Nothing said: a target that says these in its own words starts from this one and
    /// names what it does say through the step.
    pub const UNSAID: Unplaced = Unplaced {
        extra_fields: "",
        usage_fields: UsageFields::InExtraFields,
        part_fields: None,
        signatures: None,
        title: None,
        summary: None,
        session_fields: None,
        project_hash: false,
    };
}

/// Where the usage's fields of the source format are counted.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UsageFields {
    /// Among the message's `extra-fields`.
    InExtraFields,
    /// As `usage-fields`, with these words.
    Apart(&'static str),
}
