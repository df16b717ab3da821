//! Rules on the order of a file's lines: the header a tool needs (first, or anywhere), and
//! rewinds that must name a record before them.

use super::capped::Capped;
use super::ident::{Ident, QuickMap};
use super::issue::Issue;
use super::scan::{JsonlScan, Link};
use crate::diag::Severity;
use crate::formats::RewindRule;

/// The format's header must be the first record (pi's `session`, Codex's `session_meta`), or,
/// when `first_only` is false, some record (Gemini JSONL's `sessionId`/`projectHash` line).
pub fn header(
    scan: &JsonlScan,
    kind: &str,
    consequence: &str,
    first_only: bool,
    issues: &mut Capped<Issue>,
) {
    let wanted = scan.kinds.get(&Ident::new(kind)).map(|k| k as u16);
    let first = scan.records.first();
    let found = match first_only {
        true => first.is_some_and(|r| r.kind.is_some() && r.kind == wanted),
        false => wanted.is_some_and(|w| scan.records.iter().any(|r| r.kind == Some(w))),
    };
    if found {
        return;
    }
    let which = if first_only {
        "the first record is not"
    } else {
        "no record is"
    };
    let mut issue = Issue::new(
        "header-missing",
        Severity::Error,
        format!(
            "{which} the session header (`{kind}`): {consequence}; a header cannot be rebuilt without guessing, so it is left to you"
        ),
    );
    if let Some(r) = first {
        issue = issue.at(r.line, r.offset);
    }
    issues.push(issue);
}

/// Replays the rewinds as the tool does: a rewind line cuts the list back to before the record
/// it names; one that names no record in the list empties the whole session, which is almost
/// never what its user meant (the record was lost to damage, or the line was copied from
/// another session), so it is reported. After a line that replaces the whole list with records
/// fsck does not see one by one, a target it does not know is not judged.
pub fn rewinds(scan: &JsonlScan, rule: RewindRule, issues: &mut Capped<Issue>) {
    let kind_of = |name: &str| scan.kinds.get(&Ident::new(name)).map(|k| k as u16);
    let Some(rewind) = kind_of(rule.kind) else {
        return;
    };
    let replaces = rule.replaces_all.and_then(kind_of);
    // The list as the tool holds it: ids in order, and each id's place.
    let mut list: Vec<u32> = Vec::new();
    let mut place: QuickMap<u32, usize> = QuickMap::default();
    let mut unseen_part = false;
    for rec in &scan.records {
        if rec.kind == Some(rewind) {
            let Link::Id(target) = rec.parent else {
                continue;
            };
            let held = list.len();
            match place.get(&target) {
                Some(&at) => {
                    for id in list.drain(at..) {
                        place.remove(&id);
                    }
                }
                None if unseen_part => {}
                None => {
                    issues.push(
                        Issue::new(
                            "rewind-unknown",
                            Severity::Error,
                            format!(
                                "`{}` names {:?}, which is not in the session at this point: {}, dropping the {held} message(s) before it; to keep them, delete this line (sessiontool cannot know whether the rewind was meant, so it leaves the line to you)",
                                rule.kind,
                                scan.ids.name(target).to_string(),
                                rule.unknown_target
                            ),
                        )
                        .at(rec.line, rec.offset),
                    );
                    list.clear();
                    place.clear();
                }
            }
        } else if replaces.is_some() && rec.kind == replaces {
            list.clear();
            place.clear();
            unseen_part = true;
        } else if let Some(id) = rec.id
            && !place.contains_key(&id)
        {
            place.insert(id, list.len());
            list.push(id);
        }
    }
}
