//! sessiontool: read, check, repair and convert the session files that AI coding agents write.
//!
//! Layers, bottom up: [`records`] splits bytes into records and names damage; [`formats`] turn
//! records into the one [`model`] and back; [`convert`] moves a session between formats with a
//! loss report; the binary in `src/bin` is a thin command line over these.

pub mod check;
pub mod convert;
pub mod diag;
pub mod fault;
pub mod formats;
pub mod ids;
pub mod io;
pub mod model;
pub mod records;
pub mod repair;
pub mod serde_path;
pub mod store;
pub mod tree;
