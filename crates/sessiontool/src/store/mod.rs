//! Where the tools keep their sessions: the project-folder naming schemes (FORMATS.md 4), each
//! tool's store (roots, environment overrides, discovery, where a new session goes), and the
//! operations over stores (listing, placing, relocating).

pub mod catalog;
pub mod confined;
pub mod find;
pub mod guard;
pub mod home;
pub mod lock;
pub mod migrate;
pub mod names;
pub mod place;
pub mod recover;
pub mod rekey;
pub mod relocate;
pub mod resume;
pub mod scheme;
pub mod stored;
pub mod switch;
pub mod tool;
pub mod tools;
pub mod txn;

// Their old paths, which the command line and the tests use.
pub use tools::codex::state as codex_state;
pub use tools::gemini::registry as gemini_registry;
