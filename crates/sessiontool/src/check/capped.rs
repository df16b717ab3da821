//! Bounded lists of what fsck finds. A file with two million damaged lines must not take a
//! gigabyte to describe: of each kind of problem the first [`LISTED_PER_KIND`] are kept one by
//! one, and the rest are counted, with the first of them kept to say where they start. Counts
//! stay exact; only the listing is cut.

use crate::diag::Severity;
use crate::records::Finding;

use super::issue::{self, Issue};

/// How many problems of one kind a report lists one by one.
pub const LISTED_PER_KIND: usize = 1000;

/// How often a growing list is cut back to its bound: a trim walks the list, so it runs only
/// after this many more pushes.
const TRIM_EVERY: usize = 4096;

/// Something with a kind to count by.
pub trait Kinded {
    type Kind: Copy + Eq;
    fn kind(&self) -> Self::Kind;
    /// How many items this one stands for (a summary stands for many).
    fn weight(&self) -> u64 {
        1
    }
}

impl Kinded for Finding {
    type Kind = &'static str;
    fn kind(&self) -> &'static str {
        issue::code_of(&self.damage)
    }
}

/// Issues are counted apart by code, severity and whether repair fixes them, so a summary
/// line stands for issues that are alike in all that matters to the counts.
impl Kinded for Issue {
    type Kind = (&'static str, Severity, bool);
    fn kind(&self) -> Self::Kind {
        (self.code, self.severity, self.fixable())
    }
    fn weight(&self) -> u64 {
        Issue::weight(self)
    }
}

/// Items of one kind that are not listed.
#[derive(Debug, Clone)]
pub struct Unlisted<T> {
    pub count: u64,
    /// The first of them in file order.
    pub first: T,
}

/// A list that keeps the first [`LISTED_PER_KIND`] items of each kind, in the order pushed
/// (or, after a [`Capped::trim`], the order they were in), and counts the rest.
#[derive(Debug, Clone)]
pub struct Capped<T: Kinded> {
    pub listed: Vec<T>,
    kept: Vec<(T::Kind, usize)>,
    pub unlisted: Vec<Unlisted<T>>,
    /// `listed` items already counted in `kept` (pushed through [`Capped::push`] or trimmed).
    counted: usize,
    trim_at: usize,
}

impl<T: Kinded> Default for Capped<T> {
    fn default() -> Self {
        Capped {
            listed: Vec::new(),
            kept: Vec::new(),
            unlisted: Vec::new(),
            counted: 0,
            trim_at: TRIM_EVERY,
        }
    }
}

impl<T: Kinded> Capped<T> {
    pub fn push(&mut self, item: T) {
        self.count_pending();
        if self.take(&item) {
            self.listed.push(item);
            self.counted = self.listed.len();
        } else {
            self.add_unlisted(item);
        }
    }

    /// Items appended to `listed` directly (by code that fills a `Vec`) are counted and cut
    /// back here, once enough have come that the walk is worth it.
    pub fn maybe_trim(&mut self) {
        if self.listed.len() >= self.trim_at {
            self.trim();
        }
    }

    /// Cuts `listed` back to its bound, keeping order.
    pub fn trim(&mut self) {
        if self.counted == self.listed.len() {
            return;
        }
        let pending: Vec<T> = self.listed.drain(self.counted..).collect();
        for item in pending {
            if self.take(&item) {
                self.listed.push(item);
            } else {
                self.add_unlisted(item);
            }
        }
        self.counted = self.listed.len();
        self.trim_at = self.listed.len() + TRIM_EVERY;
    }

    /// Appends `other` (which comes after everything here in file order).
    pub fn append(&mut self, mut other: Capped<T>) {
        other.trim();
        for item in other.listed {
            self.push(item);
        }
        for u in other.unlisted {
            self.add_count(u.first, u.count);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.unlisted.is_empty()
    }

    fn count_pending(&mut self) {
        if self.counted != self.listed.len() {
            self.trim();
        }
    }

    /// Whether one more item of this kind may be listed (and counts it if so).
    fn take(&mut self, item: &T) -> bool {
        let kind = item.kind();
        match self.kept.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) if *n >= LISTED_PER_KIND => false,
            Some((_, n)) => {
                *n += 1;
                true
            }
            None => {
                self.kept.push((kind, 1));
                true
            }
        }
    }

    fn add_unlisted(&mut self, item: T) {
        let count = item.weight();
        self.add_count(item, count);
    }

    /// Counts `count` items like `first` (the first of them) as unlisted.
    pub fn add_count(&mut self, first: T, count: u64) {
        let item = first;
        let kind = item.kind();
        match self.unlisted.iter_mut().find(|u| u.first.kind() == kind) {
            Some(u) => u.count += count,
            None => self.unlisted.push(Unlisted { count, first: item }),
        }
    }
}

impl Capped<Issue> {
    /// Every listed issue, then one summary issue for each kind with unlisted ones.
    pub fn into_issues(mut self) -> Vec<Issue> {
        self.trim();
        let mut out = self.listed;
        out.extend(self.unlisted.into_iter().map(summary));
        out
    }
}

/// The issue that stands for `u.count` unlisted issues like `u.first`.
pub fn summary(u: Unlisted<Issue>) -> Issue {
    let first = u.first;
    let from = match (first.line, first.offset) {
        (Some(line), Some(offset)) => format!(", the first at line {line} (byte {offset})"),
        _ => String::new(),
    };
    let mut issue = Issue::new(
        first.code,
        first.severity,
        format!(
            "{} more like this{from}, not listed one by one (fsck lists the first {LISTED_PER_KIND} of each kind; the counts include them all)",
            u.count
        ),
    );
    issue.fix = first.fix;
    issue.unlisted = Some(u.count);
    issue
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(code: &'static str, line: u64) -> Issue {
        Issue::new(code, Severity::Info, "x").at(line, line * 10)
    }

    #[test]
    fn keeps_the_first_of_each_kind_and_counts_the_rest() {
        let mut c: Capped<Issue> = Capped::default();
        for line in 1..=(LISTED_PER_KIND as u64 + 500) {
            c.push(issue("blank-line", line));
        }
        c.push(issue("crlf", 7));
        let out = c.into_issues();
        assert_eq!(out.len(), LISTED_PER_KIND + 2);
        assert_eq!(out[0].line, Some(1));
        let s = out.last().unwrap();
        assert_eq!((s.code, s.unlisted), ("blank-line", Some(500)));
        assert!(s.message.contains("line 1001"), "{}", s.message);
    }

    #[test]
    fn direct_appends_are_trimmed_in_order() {
        let mut c: Capped<Issue> = Capped::default();
        for line in 1..=(3 * LISTED_PER_KIND as u64) {
            c.listed.push(issue("orphan-parent", line));
            c.maybe_trim();
        }
        c.trim();
        assert_eq!(c.listed.len(), LISTED_PER_KIND);
        assert_eq!(c.listed.last().unwrap().line, Some(LISTED_PER_KIND as u64));
        assert_eq!(c.unlisted[0].count, 2 * LISTED_PER_KIND as u64);
        assert_eq!(c.unlisted[0].first.line, Some(LISTED_PER_KIND as u64 + 1));
    }

    #[test]
    fn append_keeps_file_order_across_parts() {
        let mut a: Capped<Issue> = Capped::default();
        let mut b: Capped<Issue> = Capped::default();
        for line in 1..=600 {
            a.push(issue("blank-line", line));
        }
        for line in 601..=1300 {
            b.push(issue("blank-line", line));
        }
        a.append(b);
        let out = a.into_issues();
        assert_eq!(out[LISTED_PER_KIND - 1].line, Some(LISTED_PER_KIND as u64));
        assert_eq!(out.last().unwrap().unlisted, Some(300));
        assert_eq!(out.last().unwrap().line, None);
    }

    #[test]
    fn a_summary_pushed_past_the_bound_keeps_its_count() {
        let mut c: Capped<Issue> = Capped::default();
        for line in 1..=(LISTED_PER_KIND as u64) {
            c.push(issue("blank-line", line));
        }
        let mut s = issue("blank-line", 5000);
        s.unlisted = Some(70);
        c.push(s);
        c.push(issue("blank-line", 6000));
        assert_eq!(Issue::total(&c.into_issues()), LISTED_PER_KIND as u64 + 71);
    }

    #[test]
    fn fixable_and_unfixable_are_counted_apart() {
        let mut c: Capped<Issue> = Capped::default();
        for line in 1..=(LISTED_PER_KIND as u64 + 2) {
            c.push(issue("tool-call-unanswered", line).fix("close it"));
            c.push(issue("tool-call-unanswered", line));
        }
        let out = c.into_issues();
        let summaries: Vec<_> = out.iter().filter(|i| i.unlisted.is_some()).collect();
        assert_eq!(summaries.len(), 2);
        assert!(summaries.iter().any(|s| s.fixable()));
        assert!(summaries.iter().any(|s| !s.fixable()));
    }
}
