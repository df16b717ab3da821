//! Where the tools keep their sessions: the project-folder naming schemes (FORMATS.md 4) and,
//! growing from here, each tool's store.

pub mod gemini;
pub mod scheme;
