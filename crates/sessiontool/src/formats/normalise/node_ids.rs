//! Node ids for targets that name records by UUID only.

use std::borrow::Cow;

use crate::ids::{derived_uuid, is_uuid};

/// `node` as a UUID: itself when it is one, else one derived from it in the session's
/// namespace (the same node of the same session, the same UUID).
pub(crate) fn node_uuid<'n>(session: &str, node: &'n str) -> Cow<'n, str> {
    if is_uuid(node) {
        Cow::Borrowed(node)
    } else {
        Cow::Owned(derived_uuid(&format!("{session}/{node}")))
    }
}
