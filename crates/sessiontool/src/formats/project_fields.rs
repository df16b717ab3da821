//! Where a format records the project a session belongs to: the fields a move of the project
//! folder must rewrite (`sessiontool relocate`, see [`crate::store::rekey`]).

/// What a project field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An absolute path: the project folder or a folder inside it.
    Path,
    /// An array of such paths (workspace directories).
    PathList,
    /// The lower-case hex sha256 of the project root path (`projectHash`).
    Hash,
}

/// One field that records the project, found by keys from the record's top-level object (a
/// JSONL line, or the whole document of a whole-file format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectField {
    /// Object keys from the top level down to the value (`["payload", "cwd"]`).
    pub path: &'static [&'static str],
    pub kind: FieldKind,
    /// Only on records whose top-level `type` is one of these; empty: on every record.
    pub types: &'static [&'static str],
}

impl ProjectField {
    pub const fn path(path: &'static [&'static str]) -> Self {
        ProjectField {
            path,
            kind: FieldKind::Path,
            types: &[],
        }
    }

    pub const fn list(path: &'static [&'static str]) -> Self {
        ProjectField {
            path,
            kind: FieldKind::PathList,
            types: &[],
        }
    }

    pub const fn hash(path: &'static [&'static str]) -> Self {
        ProjectField {
            path,
            kind: FieldKind::Hash,
            types: &[],
        }
    }

    /// The same field, only on records of these `type`s.
    pub const fn on(self, types: &'static [&'static str]) -> Self {
        ProjectField { types, ..self }
    }

    /// The dotted path (`payload.cwd`), as reports name the field.
    pub fn name(&self) -> String {
        self.path.join(".")
    }
}
