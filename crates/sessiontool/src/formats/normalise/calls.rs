//! Tool calls and their results as the target names them (see [`super::CallIds`]): ids for
//! calls that have none, ids made acceptable, each result paired with its call, the calls left
//! open counted.

use std::borrow::Cow;
use std::collections::HashMap;

use super::seed::seed;
use super::target::{CallIds, Pairing};
use crate::diag::LossReport;
use crate::ids::sha256_hex;

/// The calls written so far and those still open.
pub(crate) struct Calls {
    rules: &'static CallIds,
    /// Calls written and not yet answered, in order: (name, id written).
    open: Vec<(String, String)>,
    /// A call's own id to the id it was written with.
    written: HashMap<String, String>,
    /// The id a call was written with to its tool's name.
    names: HashMap<String, String>,
}

/// A result's call: the id it answers, and the tool's name.
pub(crate) struct Answer {
    pub id: String,
    /// The name of the call it answers, when it answers one.
    pub name: Option<String>,
}

impl Calls {
    pub(crate) fn new(rules: &'static CallIds) -> Calls {
        Calls {
            rules,
            open: Vec::new(),
            written: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// The id the call `name` (its own id `id`, the `index`th call-bearing place of node
    /// `node` in session `session`) is written with, the call now open.
    pub(crate) fn call(
        &mut self,
        id: Option<&str>,
        name: &str,
        (session, node, index): (&str, &str, usize),
    ) -> String {
        let written = match id {
            Some(id) => {
                let written = acceptable(self.rules, id).into_owned();
                self.written.insert(id.to_string(), written.clone());
                written
            }
            None => derived(self.rules, session, node, index),
        };
        self.open.push((name.to_string(), written.clone()));
        self.names.insert(written.clone(), name.to_string());
        written
    }

    /// The call the result of `name` naming `call_id` answers (see [`Pairing`]); it is closed.
    pub(crate) fn answer(&mut self, call_id: Option<&str>, name: Option<&str>) -> Answer {
        let id = match self.rules.pairing {
            Pairing::Loose => {
                let id = call_id
                    .and_then(|c| self.written.get(c).cloned())
                    .or_else(|| Some(self.open[self.oldest_open(name)?].1.clone()))
                    .or_else(|| call_id.map(|c| acceptable(self.rules, c).into_owned()))
                    .unwrap_or_default();
                self.open.retain(|(_, o)| *o != id);
                id
            }
            Pairing::Strict => {
                let at = match call_id {
                    Some(id) => self.open.iter().position(|(_, c)| c == id),
                    None => self.oldest_open(name),
                };
                let matched = at.map(|at| self.open.remove(at));
                call_id
                    .map(str::to_string)
                    .or_else(|| matched.map(|(_, c)| c))
                    .unwrap_or_default()
            }
        };
        Answer {
            name: self.names.get(&id).cloned(),
            id,
        }
    }

    /// The oldest open call of `name`, else the oldest open call.
    fn oldest_open(&self, name: Option<&str>) -> Option<usize> {
        self.open
            .iter()
            .position(|(n, _)| Some(n.as_str()) == name)
            .or((!self.open.is_empty()).then_some(0))
    }

    /// The calls left without a result, said as the target's loss.
    pub(crate) fn finish(self, losses: &mut LossReport) {
        if let Some(said) = self.rules.open {
            losses.add(said.code, self.open.len(), said.message);
        }
    }
}

/// The id of a call without one: the target's prefix and the digest of its seed.
pub(crate) fn derived(rules: &CallIds, session: &str, node: &str, index: usize) -> String {
    let digest = sha256_hex(&seed(rules.seed, session, node, index));
    format!("{}{}", rules.prefix, &digest[..rules.digits])
}

/// A call's own id as the target takes it (its other characters as `_`; the prefix when none
/// is left).
pub(crate) fn acceptable<'i>(rules: &CallIds, id: &'i str) -> Cow<'i, str> {
    let Some(allowed) = rules.allowed else {
        return Cow::Borrowed(id);
    };
    if id.is_empty() {
        return Cow::Borrowed(rules.prefix);
    }
    if id.chars().all(allowed) {
        return Cow::Borrowed(id);
    }
    Cow::Owned(
        id.chars()
            .map(|c| if allowed(c) { c } else { '_' })
            .collect(),
    )
}
