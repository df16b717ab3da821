//! sessiontool: read, check, repair and convert the session files that AI coding agents write.
//!
//! # For scripts
//!
//! The functions at the crate root ([`api`], re-exported) are the stable way in: [`open()`] a
//! session file of any format, [`check()`] it as fsck does, [`repair()`] it (with a backup),
//! [`convert()`] it into another format (atomically, never over an existing file unless
//! forced) or [`convert_bytes`], list the tools' stores with [`sessions`] and write into one
//! with [`place`]. Every failure is one [`Error`] that says what and where.
//!
//! ```
//! use sessiontool::{Home, PlaceOptions, Query};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A Gemini CLI legacy session, read, checked and converted to Markdown.
//! let opened = sessiontool::open("fixtures/gemini-json/tools.json")?;
//! println!("{} ({}): {} nodes", opened.format, opened.tool, opened.session.nodes.len());
//! let report = sessiontool::check("fixtures/gemini-json/tools.json")?;
//! for issue in &report.issues {
//!     println!("{:?} {} {}: {}", issue.line, issue.severity.as_str(), issue.code, issue.message);
//! }
//! assert_eq!(report.unfixable_errors(), 0); // what it finds, `sessiontool::repair` fixes
//! let out = tempfile::tempdir()?;
//! let md = out.path().join("tools.md");
//! sessiontool::convert("fixtures/gemini-json/tools.json", "markdown", &md, false)?;
//!
//! // The same session given to Claude Code for a project, then found in the stores (a
//! // temporary folder stands in for the home: the real stores are never touched).
//! let home = Home::at(out.path());
//! let placed = sessiontool::place(&home, "fixtures/gemini-json/tools.json", "claude-jsonl", "/w/app", &PlaceOptions::default())?;
//! let found = sessiontool::sessions(&home, Query { project: Some("/w/app".into()), ..Query::default() });
//! assert_eq!(found.entries[0].path, placed.path.display().to_string());
//! # Ok(())
//! # }
//! ```
//!
//! `examples/` has two migration scripts built on these alone.
//!
//! # Layers
//!
//! Bottom up: [`records`] splits bytes into records and names damage; [`formats`] turn
//! records into the one [`model`] and back; [`convert`](mod@convert) moves a session between
//! formats with a loss report; [`check`](mod@check) and [`repair`](mod@repair) are fsck;
//! [`store`] knows where each tool keeps its sessions; the binary in `src/bin` is a thin
//! command line over these.

pub mod api;
pub mod check;
pub mod convert;
pub mod diag;
pub mod engine;
pub mod fault;
pub mod formats;
pub mod id_prefix;
pub mod ids;
pub mod io;
pub mod json;
pub mod model;
pub mod records;
pub mod regular_file;
pub mod repair;
pub mod serde_path;
pub mod store;
pub mod tree;

/// Tests that need what a machine may lack say so, and fail in CI (shared with tests/).
#[cfg(test)]
#[path = "../../../tests/common/prerequisite.rs"]
pub(crate) mod prerequisite;

pub use api::{
    Error, Opened, PlaceOptions, check, convert, convert_bytes, open, place, project_path, repair,
    sessions,
};
pub use check::FileReport;
pub use convert::Conversion;
pub use model::Session;
pub use repair::{RepairOptions, Repaired};
pub use store::catalog::{Catalog, Entry, Health, Query};
pub use store::home::Home;
pub use store::place::Placed;
pub use store::tool::Tool;
