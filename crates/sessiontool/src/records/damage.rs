//! The kinds of damage the splitter names, and where it found them.

use std::fmt;

use serde::Serialize;

/// Where something is in a file.
///
/// `line` is 1-based; `offset` is the absolute byte offset in the file of the first byte; `len`
/// is in bytes (0 for a position, such as [`Damage::MissingFinalNewline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    pub line: u64,
    pub offset: u64,
    pub len: u64,
}

impl Span {
    /// Offset one past the last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// One kind of damage. The [`Finding`] around it says where.
///
/// Serialised with a `kind` tag in kebab-case (`{"kind":"nul-padding","len":4096}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Damage {
    /// UTF-8 byte order mark at file offset 0 (stripped from the record). Span: the 3 bytes.
    Bom,
    /// A run of consecutive lines ended with `\r\n` (records still yielded, `\r` stripped).
    /// Span: the `\r` of the run's first line; the run covers lines
    /// `span.line .. span.line + lines`. A file with CRLF everywhere gives one finding.
    Crlf { lines: u64 },
    /// Empty or whitespace-only line (no record). Span: the line without its `\n` (and `\r`).
    BlankLine,
    /// A run of NUL bytes within one line (stripped; a line of only NULs yields no record).
    /// Span: the run.
    NulPadding { len: u64 },
    /// First invalid UTF-8 byte of a line, at absolute offset `at` (== `span.offset`). The
    /// line's records are yielded with lossy replacement (U+FFFD) when otherwise valid JSON;
    /// otherwise another finding (e.g. [`Damage::InvalidJson`]) covers the bytes too.
    InvalidUtf8 { at: u64 },
    /// Several records yielded from one line (glued at `}{` / `} {`, or around a torn fragment
    /// or NUL padding). `records`: how many. Span: first record's start to last record's end.
    Glued { records: u32 },
    /// A torn partial record with a complete record glued after it (`...partial{"uuid":...}`).
    /// Span: the fragment (not yielded); the complete records after it are yielded.
    TornRecordGlued { fragment_len: u64 },
    /// Last line, no final newline, not valid JSON: bytes NOT yielded. Span: the torn bytes
    /// (complete records before them on the same line are still yielded).
    TornTail,
    /// Bytes on a line that are not valid JSON and cannot be split into records (not the torn
    /// end of an unterminated last line). Span: those bytes. Not yielded.
    InvalidJson { message: String },
    /// Line longer than [`Options::max_line_len`](super::Options): not buffered, not yielded,
    /// whatever it holds. Span: the line without its `\n`.
    Oversized { len: u64 },
    /// The last line is valid JSON but has no trailing `\n` (record is yielded). Span: the end
    /// of the file, `len` 0.
    MissingFinalNewline,
}

impl Damage {
    /// True when the finding's span covers bytes that are in no [`Record`](super::Record):
    /// stripped (BOM, NUL, blank) or dropped (torn, invalid, oversized). Spans of these
    /// findings never overlap each other or a record. Together with the records and the
    /// `\n`/`\r`/whitespace between them they account for every byte of the input.
    pub fn excludes_span(&self) -> bool {
        matches!(
            self,
            Damage::Bom
                | Damage::BlankLine
                | Damage::NulPadding { .. }
                | Damage::TornRecordGlued { .. }
                | Damage::TornTail
                | Damage::InvalidJson { .. }
                | Damage::Oversized { .. }
        )
    }

    /// True when the span's bytes are lost to the records and must be kept elsewhere (a
    /// repair moves them to a sidecar): torn, invalid or oversized bytes.
    pub fn drops_data(&self) -> bool {
        matches!(
            self,
            Damage::TornRecordGlued { .. }
                | Damage::TornTail
                | Damage::InvalidJson { .. }
                | Damage::Oversized { .. }
        )
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Bom => f.write_str("UTF-8 byte order mark"),
            Damage::Crlf { lines } => write!(f, "{lines} line(s) end with CRLF"),
            Damage::BlankLine => f.write_str("blank line"),
            Damage::NulPadding { len } => write!(f, "{len} NUL byte(s)"),
            Damage::InvalidUtf8 { at } => write!(f, "invalid UTF-8 at byte {at}"),
            Damage::Glued { records } => write!(f, "{records} records glued on one line"),
            Damage::TornRecordGlued { fragment_len } => {
                write!(
                    f,
                    "torn record ({fragment_len} bytes) with a record glued after it"
                )
            }
            Damage::TornTail => f.write_str("torn last line"),
            Damage::InvalidJson { message } => write!(f, "invalid JSON: {message}"),
            Damage::Oversized { len } => write!(f, "line of {len} bytes is over the limit"),
            Damage::MissingFinalNewline => f.write_str("no newline at end of file"),
        }
    }
}

/// One piece of damage and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub span: Span,
    pub damage: Damage,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, byte {}: {}",
            self.span.line, self.span.offset, self.damage
        )
    }
}
