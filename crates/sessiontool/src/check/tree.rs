//! Tree checks on the interned facts of pass one: duplicate ids that disagree, orphan
//! parents (and how much history they cut off), cycles, several roots, dead branches and
//! records of another session. Fixes go into the [`Plan`]; nothing ambiguous is fixed.

use super::capped::Capped;
use super::ident::QuickMap;
use super::issue::Issue;
use super::plan::Plan;
use super::scan::{JsonlScan, Link};
use crate::diag::Severity;

const NONE: u32 = u32::MAX;

/// The tree as fsck sees it: per interned id, its first record and its parent.
pub struct Nodes {
    /// Index of the first record with this id (`NONE`: the id is only referred to).
    pub first: Vec<u32>,
    pub parent: Vec<Link>,
    /// Ids of records, in file order of their first record.
    pub order: Vec<u32>,
    /// The id of the last record in the file that has one: where the tools resume.
    pub head: Option<u32>,
    /// Some id's records disagree: tree fixes would be guesses.
    pub ambiguous: bool,
}

pub fn check(scan: &JsonlScan, issues: &mut Capped<Issue>, plan: &mut Plan) -> Nodes {
    let mut nodes = collect(scan, issues);
    logical_links(scan, &mut nodes);
    if !nodes.order.is_empty() {
        orphans_and_cycles(scan, &mut nodes, issues, plan);
        shape(scan, &nodes, plan, issues);
    }
    sessions(scan, issues);
    nodes
}

fn collect(scan: &JsonlScan, issues: &mut Capped<Issue>) -> Nodes {
    let n = scan.ids.len();
    let mut nodes = Nodes {
        first: vec![NONE; n],
        parent: vec![Link::None; n],
        order: Vec::new(),
        head: None,
        ambiguous: false,
    };
    for (i, rec) in scan.records.iter().enumerate() {
        let Some(id) = rec.id else { continue };
        nodes.head = Some(id);
        let first = nodes.first[id as usize];
        if first == NONE {
            nodes.first[id as usize] = i as u32;
            nodes.parent[id as usize] = rec.parent;
            nodes.order.push(id);
            continue;
        }
        // The tools merge records that share an id; they must agree on where they belong.
        let f = &scan.records[first as usize];
        let mut differ = Vec::new();
        if f.parent != rec.parent {
            differ.push("parent");
        }
        if f.session != rec.session {
            differ.push("session");
        }
        if f.kind != rec.kind {
            differ.push("type");
        }
        if !differ.is_empty() {
            nodes.ambiguous = true;
            issues.push(
                Issue::new(
                    "duplicate-id-conflict",
                    Severity::Error,
                    format!(
                        "id {} was first used on line {} with another {}; which one is right cannot be told, so tree repairs are left to you",
                        scan.ids.name(id),
                        f.line,
                        differ.join(" and ")
                    ),
                )
                .at(rec.line, rec.offset),
            );
        }
    }
    nodes
}

/// A logical link (a compaction boundary naming the record it continues from) joins the tree
/// when it names a record earlier in the file: the history before a `/compact` is then this
/// session's, not dead branches, and the boundary no second root. Otherwise the record is a
/// root, as the tool's own walk sees it; a repair never touches such a link.
fn logical_links(scan: &JsonlScan, nodes: &mut Nodes) {
    let mut rank = vec![NONE; nodes.first.len()];
    for (r, &id) in nodes.order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    for &id in &nodes.order {
        if !scan.records[nodes.first[id as usize] as usize].logical {
            continue;
        }
        if let Link::Id(p) = nodes.parent[id as usize]
            && (nodes.first[p as usize] == NONE || rank[p as usize] >= rank[id as usize])
        {
            nodes.parent[id as usize] = Link::Root;
        }
    }
}

/// The id of the record before `id`'s first record in file order (another id), or root.
fn previous(nodes: &Nodes, rank: &[u32], id: u32) -> Link {
    match rank[id as usize] {
        0 => Link::Root,
        r => Link::Id(nodes.order[r as usize - 1]),
    }
}

fn orphans_and_cycles(
    scan: &JsonlScan,
    nodes: &mut Nodes,
    issues: &mut Capped<Issue>,
    plan: &mut Plan,
) {
    let mut rank = vec![NONE; nodes.first.len()];
    for (r, &id) in nodes.order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    let on_head = head_path(nodes);
    let mut replacement: QuickMap<u32, Link> = QuickMap::default();
    for &id in &nodes.order {
        let Link::Id(p) = nodes.parent[id as usize] else {
            continue;
        };
        if nodes.first[p as usize] != NONE {
            continue;
        }
        let rec = &scan.records[nodes.first[id as usize] as usize];
        let earlier = rank[id as usize];
        let cut = if on_head.get(id as usize).copied().unwrap_or(false) && earlier > 0 {
            format!(
                "; the {earlier} earlier record(s) are cut off from the history the tool resumes"
            )
        } else {
            String::new()
        };
        // Orphans of one lost record stay siblings: all go under the record before the
        // first of them.
        let fix = *replacement
            .entry(p)
            .or_insert_with(|| previous(nodes, &rank, id));
        let mut issue = Issue::new(
            "orphan-parent",
            Severity::Error,
            format!("parent {} is not in the file{cut}", scan.ids.name(p)),
        )
        .at(rec.line, rec.offset);
        if !nodes.ambiguous {
            issue = issue.fix(match fix {
                Link::Id(q) => format!("link it to the record before it, {}", scan.ids.name(q)),
                _ => "make it the first record (no parent)".to_string(),
            });
            plan.relink.insert(id, fix);
        }
        issues.push(issue);
    }
    for cycle in cycles(nodes, plan) {
        // Break it where a record points forward in the file: the writer chains each record
        // to one written before it, so that link is the wrong one.
        let breaker = cycle
            .iter()
            .copied()
            .find(|&id| match nodes.parent[id as usize] {
                Link::Id(p) => rank[p as usize] > rank[id as usize],
                _ => false,
            })
            .unwrap_or(cycle[0]);
        let rec = &scan.records[nodes.first[breaker as usize] as usize];
        let mut issue = Issue::new(
            "cycle",
            Severity::Error,
            format!(
                "{} record(s) are their own ancestors (parent links go round in a circle); the tool's history walk never ends or stops here",
                cycle.len()
            ),
        )
        .at(rec.line, rec.offset);
        if !nodes.ambiguous {
            let fix = previous(nodes, &rank, breaker);
            issue = issue.fix(format!(
                "break the circle at the link that points forward in the file: {}",
                match fix {
                    Link::Id(q) => format!(
                        "link {} to the record before it, {}",
                        scan.ids.name(breaker),
                        scan.ids.name(q)
                    ),
                    _ => format!("make {} the first record", scan.ids.name(breaker)),
                }
            ));
            plan.relink.insert(breaker, fix);
        }
        issues.push(issue);
    }
    if !nodes.ambiguous {
        // A relink to the previous record can itself close a circle in odd files: make those
        // roots, so the plan never leaves a cycle behind.
        for cycle in cycles(nodes, plan) {
            plan.relink.insert(cycle[0], Link::Root);
        }
    }
}

/// The parent of `id` once the plan is applied.
pub fn planned_parent(nodes: &Nodes, plan: &Plan, id: u32) -> Link {
    plan.relink
        .get(&id)
        .copied()
        .unwrap_or(nodes.parent[id as usize])
}

/// Every cycle of parent links (with the plan applied), each as its members.
fn cycles(nodes: &Nodes, plan: &Plan) -> Vec<Vec<u32>> {
    let mut state = vec![0u8; nodes.first.len()]; // 0 new, 1 on the current walk, 2 done
    let mut found = Vec::new();
    for &start in &nodes.order {
        let mut walk = Vec::new();
        let mut cur = start;
        loop {
            match state[cur as usize] {
                2 => break,
                1 => {
                    let from = walk.iter().position(|&x| x == cur).unwrap_or(0);
                    found.push(walk[from..].to_vec());
                    break;
                }
                _ => {}
            }
            state[cur as usize] = 1;
            walk.push(cur);
            match planned_parent(nodes, plan, cur) {
                Link::Id(p) if nodes.first[p as usize] != NONE => cur = p,
                _ => break,
            }
        }
        for x in walk {
            state[x as usize] = 2;
        }
    }
    found
}

/// Which ids are on the path from the head to its root (as the file is, before repairs).
fn head_path(nodes: &Nodes) -> Vec<bool> {
    let mut on = vec![false; nodes.first.len()];
    let mut cur = nodes.head;
    while let Some(id) = cur {
        if on[id as usize] {
            break;
        }
        on[id as usize] = true;
        cur = match nodes.parent[id as usize] {
            Link::Id(p) if nodes.first[p as usize] != NONE => Some(p),
            _ => None,
        };
    }
    on
}

/// Several roots and dead branches, judged on the tree as it will be after the plan.
fn shape(scan: &JsonlScan, nodes: &Nodes, plan: &Plan, issues: &mut Capped<Issue>) {
    let mut roots = nodes
        .order
        .iter()
        .copied()
        .filter(|&id| nodes.parent[id as usize] == Link::Root);
    if let (Some(_), Some(second)) = (roots.next(), roots.next()) {
        let rec = &scan.records[nodes.first[second as usize] as usize];
        issues.push(
            Issue::new(
                "several-roots",
                Severity::Warning,
                format!(
                    "{} records have no parent; the tools resume only the tree of the last record",
                    2 + roots.count()
                ),
            )
            .at(rec.line, rec.offset),
        );
    }
    let mut on = vec![false; nodes.first.len()];
    let mut cur = nodes.head;
    while let Some(id) = cur {
        if std::mem::replace(&mut on[id as usize], true) {
            break;
        }
        cur = match planned_parent(nodes, plan, id) {
            Link::Id(p) if nodes.first[p as usize] != NONE => Some(p),
            _ => None,
        };
    }
    let mut has_child = vec![false; nodes.first.len()];
    for &id in &nodes.order {
        if let Link::Id(p) = planned_parent(nodes, plan, id) {
            has_child[p as usize] = true;
        }
    }
    // A record without a parent field (a format with a flat list, such as Gemini JSONL) is on
    // no branch: only linked records can be off the one the tool resumes.
    let off: Vec<u32> = nodes
        .order
        .iter()
        .copied()
        .filter(|&id| !on[id as usize] && nodes.parent[id as usize] != Link::None)
        .collect();
    if let Some(&first) = off.first() {
        let leaves = off.iter().filter(|&&id| !has_child[id as usize]).count();
        let rec = &scan.records[nodes.first[first as usize] as usize];
        issues.push(
            Issue::new(
                "dead-branches",
                Severity::Info,
                format!(
                    "{} record(s) on {leaves} branch(es) the tool does not resume (earlier edits, retries or forks); kept as they are",
                    off.len()
                ),
            )
            .at(rec.line, rec.offset),
        );
    }
}

/// Records whose session id is not the file's (the first record's).
fn sessions(scan: &JsonlScan, issues: &mut Capped<Issue>) {
    let mut with = scan.records.iter().filter(|r| r.session.is_some());
    let Some(first) = with.next() else { return };
    let others: Vec<_> = with.filter(|r| r.session != first.session).collect();
    if let Some(r) = others.first() {
        issues.push(
            Issue::new(
                "session-id-mismatch",
                Severity::Warning,
                format!(
                    "{} record(s) belong to session {}, not {} (the file's first record); left as they are",
                    others.len(),
                    r.session.map(|s| scan.ids.name(s).to_string()).unwrap_or_default(),
                    first.session.map(|s| scan.ids.name(s).to_string()).unwrap_or_default(),
                ),
            )
            .at(r.line, r.offset),
        );
    }
}
