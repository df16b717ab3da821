//! JSON as the tools' own parsers read it and their serializers write it.
//!
//! The agents are JavaScript programs (Gemini CLI, Qwen Code, Claude Code, pi, llxprt-code),
//! a Rust one (Codex) and Go ones. `JSON.parse` takes what serde_json refuses: a lone UTF-16
//! surrogate escape (`"\ud83d"`, written by `JSON.stringify` for a string cut inside an emoji),
//! a key given twice (the last value counts), numbers beyond any float (`1e400`, 30-digit
//! integers), nesting of any depth. Reading a record as its tool reads it, and writing back what
//! it does not understand byte for byte, needs its own layer:
//!
//! - [`scan`]: the grammar checked in one pass, without recursion or allocation per value;
//! - [`Raw`]: a checked value read lazily (entries, items, strings decoded, numbers as text);
//! - [`out`]: writing, with each tool's escaping, separators and indentation.

mod classes;
pub mod facts;
pub mod out;
mod quick;
#[cfg(test)]
mod quick_tests;
pub mod raw;
pub mod scan;
mod skip;
mod strings;
pub mod text;
pub mod value;

pub use out::{Escape, Out, Style};
pub use raw::{
    FromText, ItemsWithin, Key, Kind, Outline, Outlined, PickedItems, PickedItemsWithin, Picker,
    Raw,
};
pub use scan::SyntaxError;
pub use text::Text;
