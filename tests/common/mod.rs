//! Fixture lists shared by the integration tests (`gemini_formats` checks each list is the
//! whole folder).

pub const GEMINI_JSON: &[&str] = &[
    "plain.json",
    "tools.json",
    "thoughts.json",
    "v028-parts.json",
    "notices.json",
    "unknown-fields.json",
    "unicode.json",
    "empty.json",
    "every-part.json",
    "seed003.json",
];
pub const CHECKPOINT: &[&str] = &[
    "checkpoint-object.json",
    "checkpoint-array.json",
    "checkpoint-my%20tag.json",
];
