//! Conversation checks: every tool call needs a result (the model APIs reject a history with
//! an unanswered call) and every result a call. Unanswered calls are closed by a synthetic
//! error result inserted right after the call, in the format's own shape.

use super::capped::Capped;
use super::ident::{Ident, QuickMap};
use super::issue::Issue;
use super::plan::{Insert, Plan};
use super::scan::{JsonlScan, Link};
use super::tree::{Nodes, planned_parent};
use crate::diag::Severity;
use crate::formats::Format;

/// What a synthetic result says.
pub const RECOVERED: &str = "[sessiontool] this tool call never got a result (the session was interrupted); result added by `sessiontool repair` so the history is valid again";

pub struct Options {
    /// Report unanswered calls but do not close them (`--keep-open-tool-calls`).
    pub keep_open: bool,
}

pub fn check(
    scan: &mut JsonlScan,
    nodes: &Nodes,
    format: &dyn Format,
    options: &Options,
    issues: &mut Capped<Issue>,
    plan: &mut Plan,
) {
    // Call ids are interned: flags indexed by id number, no hashing.
    let mut answered = vec![false; scan.ids.len()];
    let mut called = vec![false; scan.ids.len()];
    for &(_, id) in &scan.results {
        answered[id as usize] = true;
    }
    for &(_, id) in &scan.calls {
        called[id as usize] = true;
    }
    for &(rec, id) in &scan.results {
        if !called[id as usize] {
            let r = &scan.records[rec as usize];
            if scan.subagent {
                // A sub-agent's history opens with its parent's: the call is in that file.
                issues.push(
                    Issue::new(
                        "tool-result-inherited",
                        Severity::Info,
                        format!(
                            "result for tool call {}, made in the parent session this sub-agent's history was copied from",
                            scan.ids.name(id)
                        ),
                    )
                    .at(r.line, r.offset),
                );
                continue;
            }
            issues.push(
                Issue::new(
                    "tool-result-orphan",
                    Severity::Warning,
                    format!(
                        "result for tool call {} that is not in the file",
                        scan.ids.name(id)
                    ),
                )
                .at(r.line, r.offset),
            );
        }
    }
    // The call a parent made to spawn this sub-agent is copied into the sub-agent's history;
    // its result goes to the parent's file. It is not unanswered, and nothing closes it here.
    let mut spawned = vec![false; if scan.subagent { scan.ids.len() } else { 0 }];
    for &(_, id) in scan.spawns.iter().filter(|_| scan.subagent) {
        spawned[id as usize] = true;
    }
    let open: Vec<(u32, u32)> = scan
        .calls
        .iter()
        .copied()
        .filter(|&(_, id)| !answered[id as usize])
        .filter(|&(rec, id)| {
            let inherited = spawned.get(id as usize).copied().unwrap_or(false);
            if inherited {
                let r = &scan.records[rec as usize];
                issues.push(
                    Issue::new(
                        "tool-call-inherited",
                        Severity::Info,
                        format!(
                            "tool call {} is the parent's call that spawned this sub-agent: its result is in the parent session, not this one",
                            scan.ids.name(id)
                        ),
                    )
                    .at(r.line, r.offset),
                );
            }
            !inherited
        })
        .collect();
    let can_fix = !options.keep_open && !nodes.ambiguous && format.closes_tool_calls();
    // The new results of one call record, chained in order; they go after the last record
    // that shares the call record's id (records with one id are one message).
    let mut last_of: Vec<u32> = Vec::new();
    if can_fix && !open.is_empty() {
        last_of = vec![u32::MAX; scan.ids.len()];
        for (i, r) in scan.records.iter().enumerate() {
            if let Some(id) = r.id {
                last_of[id as usize] = i as u32;
            }
        }
    }
    let mut tail_of: QuickMap<u32, u32> = QuickMap::default();
    for (rec, call) in open {
        let r = scan.records[rec as usize].clone();
        let (severity, why) = if format.answers_open_calls_itself() {
            (
                Severity::Warning,
                "this tool answers it with a placeholder when it resumes, other tools and the model APIs do not",
            )
        } else {
            (
                Severity::Error,
                "model APIs reject a history with an unanswered call",
            )
        };
        let mut issue = Issue::new(
            "tool-call-unanswered",
            severity,
            format!("tool call {} has no result; {why}", scan.ids.name(call)),
        )
        .at(r.line, r.offset);
        if can_fix {
            let owner = r.id;
            let after = owner
                .and_then(|id| last_of.get(id as usize).copied())
                .filter(|&i| i != u32::MAX)
                .unwrap_or(rec);
            let parent = owner.map(|id| *tail_of.get(&id).unwrap_or(&id));
            let seed = format!(
                "sessiontool-recovered-result:{}:{}",
                scan.ids.name(call),
                r.offset
            );
            let new_id = scan
                .ids
                .intern(Ident::new(&crate::ids::derived_uuid(&seed)));
            if let Some(owner) = owner {
                tail_of.insert(owner, new_id);
            }
            plan.inserts.entry(after).or_default().push(Insert {
                call_record: rec,
                call_id: call,
                new_id,
                parent,
            });
            issue = issue.fix("add an error result marked as recovered right after the call");
        }
        issues.push(issue);
    }
    // What hung under a call record now hangs under its last new result.
    if !tail_of.is_empty() {
        for &id in &nodes.order {
            if let Link::Id(p) = planned_parent(nodes, plan, id)
                && let Some(&tail) = tail_of.get(&p)
                && !is_new(plan, id)
            {
                plan.relink.insert(id, Link::Id(tail));
            }
        }
    }
}

fn is_new(plan: &Plan, id: u32) -> bool {
    plan.inserts.values().flatten().any(|i| i.new_id == id)
}
