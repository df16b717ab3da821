//! A derived id's seed from its template (see [`super::CallIds::seed`]).

/// `template` with `{session}`, `{node}` and `{index}` replaced, in one pass (an id that holds
/// one of the names is not read again).
pub(super) fn seed(template: &str, session: &str, node: &str, index: usize) -> String {
    let mut out = String::with_capacity(template.len() + session.len() + node.len() + 4);
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("{session}") {
            out.push_str(session);
            rest = after;
        } else if let Some(after) = rest.strip_prefix("{node}") {
            out.push_str(node);
            rest = after;
        } else if let Some(after) = rest.strip_prefix("{index}") {
            out.push_str(&index.to_string());
            rest = after;
        } else {
            out.push('{');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::seed;

    #[test]
    fn names_are_replaced_once() {
        assert_eq!(
            seed("{session}/{node}#{index}", "s", "{index}", 3),
            "s/{index}#3"
        );
        assert_eq!(seed("{node}/{index}", "s", "n", 0), "n/0");
        assert_eq!(seed("{other}", "s", "n", 0), "{other}");
    }
}
