//! Finding a node or a session by its id or the first characters of it, the way git takes an
//! abbreviated commit: `tree` and `list` print the first eight characters of an id, and
//! whatever they print is accepted back (`--leaf`, recover's SESSION).

/// How many matching ids an ambiguity names before it counts the rest.
const NAMED: usize = 10;

/// Why no single id was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("no {what} has the id {wanted:?} or an id that starts with it")]
    NotFound { what: &'static str, wanted: String },
    #[error("{} {what}s have ids that start with {wanted:?}: {}", .matches.len(), named(.matches))]
    Ambiguous {
        what: &'static str,
        wanted: String,
        /// Every matching id, in the order they were given.
        matches: Vec<String>,
    },
}

impl IdError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            IdError::NotFound { .. } => "check the id; the start of one is enough",
            IdError::Ambiguous { .. } => "give more characters of the id",
        }
    }
}

fn named(ids: &[String]) -> String {
    let mut s = ids
        .iter()
        .take(NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED {
        s.push_str(&format!(" and {} more", ids.len() - NAMED));
    }
    s
}

/// The one candidate whose id is `wanted`, else the one whose id starts with it (ASCII case
/// ignored, as ids are hex or UUIDs people type). `what` names the kind in messages ("node",
/// "session"). Candidates sharing an id count once (the first is taken).
pub fn find<'a, T: Copy>(
    candidates: impl IntoIterator<Item = (&'a str, T)>,
    wanted: &str,
    what: &'static str,
) -> Result<T, IdError> {
    let mut prefixed: Vec<(&'a str, T)> = Vec::new();
    let lower = wanted.to_ascii_lowercase();
    for (id, value) in candidates {
        if id == wanted {
            return Ok(value);
        }
        let starts = !wanted.is_empty()
            && id.len() >= wanted.len()
            && id.is_char_boundary(wanted.len())
            && id[..wanted.len()].to_ascii_lowercase() == lower;
        if starts && !prefixed.iter().any(|(seen, _)| *seen == id) {
            prefixed.push((id, value));
        }
    }
    match prefixed.as_slice() {
        [(_, one)] => Ok(*one),
        [] => Err(IdError::NotFound {
            what,
            wanted: wanted.to_string(),
        }),
        many => Err(IdError::Ambiguous {
            what,
            wanted: wanted.to_string(),
            matches: many.iter().map(|(id, _)| id.to_string()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &[&str] = &["6f1c0a2b-1", "6f1c0a2b-2", "7aa", "7AB", "abc"];

    fn lookup(wanted: &str) -> Result<usize, IdError> {
        find(
            IDS.iter().enumerate().map(|(i, id)| (*id, i)),
            wanted,
            "node",
        )
    }

    #[test]
    fn an_exact_id_or_a_unique_start_is_found() {
        assert_eq!(lookup("abc"), Ok(4));
        assert_eq!(lookup("ab"), Ok(4));
        assert_eq!(lookup("7aa"), Ok(2));
        assert_eq!(lookup("7Ab"), Ok(3), "case is ignored");
        assert_eq!(lookup("6f1c0a2b-2"), Ok(1));
    }

    #[test]
    fn an_ambiguous_start_names_every_match() {
        let e = lookup("6f1c").unwrap_err();
        assert_eq!(
            e.to_string(),
            "2 nodes have ids that start with \"6f1c\": 6f1c0a2b-1, 6f1c0a2b-2"
        );
        assert!(
            matches!(lookup("7a"), Err(IdError::Ambiguous { matches, .. }) if matches.len() == 2)
        );
    }

    #[test]
    fn nothing_found_and_the_empty_string_match_nothing() {
        assert!(matches!(lookup("zz"), Err(IdError::NotFound { .. })));
        assert!(matches!(lookup(""), Err(IdError::NotFound { .. })));
    }

    #[test]
    fn long_lists_are_cut() {
        let ids: Vec<String> = (0..15).map(|i| format!("a{i:02}")).collect();
        let e = find(ids.iter().map(|s| (s.as_str(), ())), "a", "session").unwrap_err();
        assert!(e.to_string().ends_with("a09 and 5 more"), "{e}");
    }
}
