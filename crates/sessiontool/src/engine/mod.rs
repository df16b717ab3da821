//! Engine v2's two-pass conversion (docs/engine-v2.md, stage 3): a JSONL session converted in
//! memory bounded by its number of records, never by its content.
//!
//! Pass one ([`pass1`]) splits the input into records exactly as the records layer does and
//! keeps, per record, where it is and the few facts its format's reader needs to know about
//! the whole file (ids, parents, flags); the session's metadata and every diagnostic the whole
//! reader would give come out of it. The nodes to write are chosen on that skeleton
//! ([`skeleton`]) as the whole-session writers choose them. Pass two ([`pass2`]) reads each
//! chosen record again (borrowed from memory, or by positioned reads of a file), makes its node
//! with the format's own reading code, hands it to the target's writer, and drops it; runs of
//! nodes are converted on several threads at once and written in order. A same-format
//! conversion that changes nothing copies each record's bytes.
//!
//! What goes through here: Claude Code JSONL to Claude Code, to Codex and to Gemini (the legacy
//! document and the JSONL recording); a Codex rollout back into a rollout (its lines copied,
//! the metadata line as the writer writes it), into Claude Code and into Gemini; a Qwen Code
//! session into Claude Code, into Codex, into Gemini and back into Qwen Code (its records
//! copied, those merged from several written merged); a Gemini session (a legacy document or
//! the JSONL recording, its messages the records) into Claude Code, into Codex and into the
//! other Gemini layout, and a recording back into a recording (its lines copied). The view
//! ([`view`]) shows, trees and lists these formats the same way. Everything else goes through the whole-session path
//! ([`crate::convert::convert_whole`]), which this path equals byte for byte, diagnostic for
//! diagnostic and loss for loss (`tests/engine.rs`).

mod bins;
pub mod links;
pub mod pass1;
pub mod pass2;
mod qwen_same;
pub(crate) mod reading;
pub mod skeleton;
pub mod source;
pub mod view;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::convert::{Conversion, ConvertError, unanswered_diagnostic};
use crate::diag::{Diagnostic, LossReport};
use crate::formats::claude_jsonl::foreign::ForeignStream;
use crate::formats::claude_jsonl::two_pass::{Known, Rewrite, Scanner};
use crate::formats::codex_jsonl::stream::RolloutStream;
use crate::formats::codex_jsonl::two_pass as rollout;
use crate::formats::gemini_json::stream::{self as gemini_stream, DocumentStream, Layout};
use crate::formats::gemini_json::two_pass as gemini_document;
use crate::formats::gemini_jsonl::two_pass as gemini_recording;
use crate::formats::{self, Format, WriteError, WriteOptions};
use crate::model::Meta;
use crate::tree::LeftOut;
use reading::Reading;
pub use source::{Bytes, FileSource, Source};

/// What pass two makes a node for, so that a reader makes no more of an entry than the
/// node's user reads of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadeFor {
    /// The format's own writer: with the hints it needs to give the entry back byte for byte.
    OwnWriter,
    /// Any user of the model: `show`, `tree`, a writer that writes the fields it does not
    /// know.
    Anyone,
    /// A user that looks at no field the reader does not interpret, beyond counting them (a
    /// writer with no place for them; `show`'s text): the values of those fields are left
    /// null, never read (a Claude Code tool result's `toolUseResult`, about half of a
    /// session's bytes, is one).
    Counting,
}

/// Sizes the engine works in (tests make them small, to cross many boundaries).
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// Pass one's blocks.
    pub block_size: usize,
    /// Pass two's runs of records converted on one thread at a time.
    pub run_bytes: u64,
    /// Rebuild every record of a same-format conversion even when it would be copied (for
    /// tests: both must give the same bytes).
    pub rebuild_unchanged: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            block_size: 4 << 20,
            run_bytes: 1 << 20,
            rebuild_unchanged: false,
        }
    }
}

/// One conversion.
pub struct Job<'a> {
    /// What to call the input in messages.
    pub name: &'a str,
    pub path: Option<&'a Path>,
    pub source: &'a dyn Source,
    pub from: Option<&'static dyn Format>,
    pub to: &'static dyn Format,
    pub options: &'a WriteOptions,
    pub tuning: Tuning,
}

/// A conversion whose pass one is done: everything is known but the output's bytes. Errors
/// of reading and of the target (an unknown `--leaf`) have been said; writing can only fail
/// on input or output.
pub struct Plan<'a> {
    job: Job<'a>,
    from: &'static dyn Format,
    diagnostics: Vec<Diagnostic>,
    route: Route,
}

/// How a plan writes: from Claude Code JSONL into several formats, and a Codex rollout back
/// into a rollout.
enum Route {
    /// Claude Code to Claude Code: each entry copied, or rebuilt with other session fields.
    Same {
        known: Box<Known>,
        rewrite: Option<Rewrite>,
        drop_final_newline: bool,
    },
    /// Claude Code or Qwen Code to a Codex rollout: the branch's nodes, one run at a time.
    ToCodex {
        known: Box<dyn Reading>,
        branch: Vec<u32>,
        left_out: LeftOut,
        stream: Box<RolloutStream>,
    },
    /// Claude Code or a Codex rollout to Gemini (either layout): the branch's nodes, one run
    /// at a time.
    ToGemini {
        known: Box<dyn Reading>,
        branch: Vec<u32>,
        writer: Box<gemini_stream::Writer>,
    },
    /// A Codex rollout to a rollout: each line copied, the metadata line as the writer
    /// writes it.
    RolloutSame {
        known: Box<rollout::Known>,
        meta_line: Vec<u8>,
    },
    /// Qwen Code to Qwen Code: each record copied, or its node made and written, in the
    /// writer's order.
    QwenSame {
        known: Box<crate::formats::qwen_jsonl::two_pass::Known>,
        order: Vec<u32>,
        writer: Box<crate::formats::qwen_jsonl::two_pass::RecordWriter>,
        copies: bool,
    },
    /// Gemini CLI's JSONL recording to a recording, nothing changed: its lines as they are.
    Lines(gemini_recording::Lines),
    /// A session from another format to Claude Code: every node, one run at a time.
    ToClaude {
        known: Box<dyn Reading>,
        writer: Box<ForeignStream>,
    },
}

/// What an output is written into: memory, or a file through a buffer.
pub trait Output: Send {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Puts `len` bytes of `source` from its start, copied where it can without passing
    /// through this process (by the kernel, file to file); `false` when it cannot (nothing
    /// was put: the caller puts them itself).
    fn put_copy_of(&mut self, _source: &dyn Source, _len: u64) -> io::Result<bool> {
        Ok(false)
    }
    /// Takes back the last byte written (a line break the input did not end with).
    fn take_back_last(&mut self) -> io::Result<()>;
}

impl Output for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn put_copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        let Some(all) = source.as_slice() else {
            return Ok(false);
        };
        let len = usize::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
        self.extend_from_slice(all.get(..len).ok_or(io::ErrorKind::UnexpectedEof)?);
        Ok(true)
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        self.pop();
        Ok(())
    }
}

/// An output thrown away (a dry run: the report without the bytes).
pub struct Discard;

impl Output for Discard {
    fn put(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A file written through a buffer of 1 MiB.
pub struct FileOutput<'f> {
    writer: BufWriter<&'f File>,
    written: u64,
    failed: bool,
    /// How far the kernel was asked to start writing the file to disk (see `write_behind`).
    started: u64,
}

/// Bytes handed to the kernel between two requests to start writing them to disk.
const WRITE_BEHIND: u64 = 8 << 20;

impl<'f> FileOutput<'f> {
    pub fn new(file: &'f File) -> Self {
        FileOutput {
            writer: BufWriter::with_capacity(1 << 20, file),
            written: 0,
            failed: false,
            started: 0,
        }
    }

    /// Asks the kernel to start writing to disk what it holds of the file so far, without
    /// waiting: the fsync that makes the output durable before it is renamed into place then
    /// has little left to wait for (at 100 MB it waited about 50 ms for all of it). Only a
    /// hint: it changes nothing of what is written or when it is durable.
    fn write_behind(&mut self) {
        let handed = self.written - self.writer.buffer().len() as u64;
        if handed < self.started + WRITE_BEHIND {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.writer.get_ref().as_raw_fd();
            // SAFETY: a plain system call on a descriptor this output borrows; it reads no
            // memory of ours. Its result is ignored: it is a hint.
            unsafe {
                libc::sync_file_range(
                    fd,
                    self.started as libc::off64_t,
                    (handed - self.started) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.started = handed;
    }

    /// Whether writing into the file failed (else an error of [`Plan::write`] was the
    /// input's).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Writes what is still buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Output for FileOutput<'_> {
    fn put_copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        let done = self.copy_of(source, len);
        self.failed |= done.is_err();
        done
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        let done = self.writer.write_all(bytes);
        self.failed |= done.is_err();
        if done.is_ok() {
            self.write_behind();
        }
        done
    }

    fn take_back_last(&mut self) -> io::Result<()> {
        let done = self.take_back_last_byte();
        self.failed |= done.is_err();
        done
    }
}

impl FileOutput<'_> {
    /// [`Output::put_copy_of`]: `copy_file_range` from the source's file, after what is
    /// buffered. Where the kernel cannot (another file system on an old kernel, a special
    /// file) nothing is copied and `false` said.
    #[cfg(target_os = "linux")]
    fn copy_of(&mut self, source: &dyn Source, len: u64) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        let Some(from) = source.file() else {
            return Ok(false);
        };
        self.writer.flush()?;
        let (fd_in, fd_out) = (from.as_raw_fd(), self.writer.get_ref().as_raw_fd());
        let mut offset: libc::loff_t = 0;
        let mut left = len;
        while left > 0 {
            // In pieces, so the kernel starts writing each to disk as the next is copied.
            let chunk = left.min(WRITE_BEHIND) as usize;
            // SAFETY: two descriptors this process holds open, and the offset of the input a
            // local the call updates; the output's own offset moves as a write moves it.
            let n = unsafe {
                libc::copy_file_range(fd_in, &mut offset, fd_out, std::ptr::null_mut(), chunk, 0)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                let unsupported = matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP)
                );
                if left == len && unsupported {
                    return Ok(false);
                }
                return Err(e);
            }
            if n == 0 {
                // The input is shorter than pass one found it.
                return Err(source::short());
            }
            left -= n as u64;
            self.written += n as u64;
            self.write_behind();
        }
        Ok(true)
    }

    #[cfg(not(target_os = "linux"))]
    fn copy_of(&mut self, _source: &dyn Source, _len: u64) -> io::Result<bool> {
        Ok(false)
    }

    fn take_back_last_byte(&mut self) -> io::Result<()> {
        if self.written == 0 {
            return Ok(());
        }
        self.writer.flush()?;
        self.written -= 1;
        let file = *self.writer.get_ref();
        file.set_len(self.written)?;
        use std::io::Seek;
        let mut f = file;
        f.seek(io::SeekFrom::Start(self.written))?;
        Ok(())
    }
}

/// Whether the engine converts `from` into `to`.
pub fn covers(from: &dyn Format, to: &dyn Format) -> bool {
    route_of(from, to).is_some()
}

/// The routes, before pass one (see [`Route`]).
#[derive(Clone, Copy)]
enum Kind {
    Same,
    ToCodex,
    ToGemini(Layout),
    RolloutSame,
    RolloutToClaude,
    RolloutToGemini(Layout),
    QwenToClaude,
    QwenToCodex,
    QwenToGemini(Layout),
    QwenSame,
    GeminiToClaude,
    GeminiToCodex,
    /// Gemini CLI's JSONL recording.
    RecordingToClaude,
    RecordingToCodex,
    RecordingSame,
    /// A Gemini session into the other layout.
    GeminiToRecording,
    RecordingToDocument,
}

fn route_of(from: &dyn Format, to: &dyn Format) -> Option<Kind> {
    use crate::formats::{claude_jsonl, codex_jsonl, gemini_json, gemini_jsonl, qwen_jsonl};
    match (from.name(), to.name()) {
        (claude_jsonl::NAME, claude_jsonl::NAME) => Some(Kind::Same),
        (claude_jsonl::NAME, codex_jsonl::NAME) => Some(Kind::ToCodex),
        (claude_jsonl::NAME, gemini_json::NAME) => Some(Kind::ToGemini(Layout::Document)),
        (claude_jsonl::NAME, gemini_jsonl::NAME) => Some(Kind::ToGemini(Layout::Lines)),
        (codex_jsonl::NAME, codex_jsonl::NAME) => Some(Kind::RolloutSame),
        (codex_jsonl::NAME, claude_jsonl::NAME) => Some(Kind::RolloutToClaude),
        (codex_jsonl::NAME, gemini_json::NAME) => Some(Kind::RolloutToGemini(Layout::Document)),
        (codex_jsonl::NAME, gemini_jsonl::NAME) => Some(Kind::RolloutToGemini(Layout::Lines)),
        (qwen_jsonl::NAME, claude_jsonl::NAME) => Some(Kind::QwenToClaude),
        (qwen_jsonl::NAME, codex_jsonl::NAME) => Some(Kind::QwenToCodex),
        (qwen_jsonl::NAME, qwen_jsonl::NAME) => Some(Kind::QwenSame),
        (qwen_jsonl::NAME, gemini_json::NAME) => Some(Kind::QwenToGemini(Layout::Document)),
        (qwen_jsonl::NAME, gemini_jsonl::NAME) => Some(Kind::QwenToGemini(Layout::Lines)),
        (gemini_json::NAME, claude_jsonl::NAME) => Some(Kind::GeminiToClaude),
        (gemini_json::NAME, codex_jsonl::NAME) => Some(Kind::GeminiToCodex),
        (gemini_jsonl::NAME, claude_jsonl::NAME) => Some(Kind::RecordingToClaude),
        (gemini_jsonl::NAME, codex_jsonl::NAME) => Some(Kind::RecordingToCodex),
        (gemini_jsonl::NAME, gemini_jsonl::NAME) => Some(Kind::RecordingSame),
        (gemini_json::NAME, gemini_jsonl::NAME) => Some(Kind::GeminiToRecording),
        (gemini_jsonl::NAME, gemini_json::NAME) => Some(Kind::RecordingToDocument),
        _ => None,
    }
}

/// The input's format as [`crate::convert::read`] finds it: given, or detected from the
/// first bytes (all that detection looks at). `None` too when the given format is plainly not
/// the content's: the whole path says so.
fn detect(job: &Job) -> io::Result<Option<&'static dyn Format>> {
    format_of(job.source, job.path, job.from)
}

/// [`detect`] for any input: `from` when the content does not contradict it, else the format
/// detected from the first bytes.
pub(crate) fn format_of(
    source: &dyn Source,
    path: Option<&Path>,
    from: Option<&'static dyn Format>,
) -> io::Result<Option<&'static dyn Format>> {
    let n = source.len().min(formats::DETECT_HEAD as u64) as usize;
    let mut head = vec![0; n];
    source.read_exact_at(&mut head, 0)?;
    Ok(match from {
        Some(f) => formats::contradicts(f, path, &head).is_none().then_some(f),
        None => formats::detect(path, &head),
    })
}

/// Pass one, when the engine covers the conversion: `Ok(None)` when it does not (the caller
/// converts the whole session instead). `adjust` changes the session's metadata between
/// reading and writing, as [`crate::convert::convert_with`]'s does.
pub fn plan<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
) -> Result<Option<Plan<'a>>, PlanError> {
    let Some(from) = detect(&job)? else {
        return Ok(None);
    };
    let Some(kind) = route_of(from, job.to) else {
        return Ok(None);
    };
    // Fitting a session into a token budget weighs every turn of the branch against the
    // others (`convert::budget`): that conversion goes through the whole session.
    if job.options.max_tokens.is_some() {
        return Ok(None);
    }
    match kind {
        Kind::RolloutSame => plan_rollout(job, adjust, from),
        Kind::RolloutToClaude => plan_rollout_to_claude(job, adjust, from),
        Kind::RolloutToGemini(layout) => plan_rollout_to_gemini(job, adjust, from, layout),
        Kind::QwenToClaude | Kind::QwenToCodex | Kind::QwenToGemini(_) | Kind::QwenSame => {
            plan_qwen(job, adjust, from, kind)
        }
        Kind::GeminiToClaude
        | Kind::GeminiToCodex
        | Kind::RecordingToClaude
        | Kind::RecordingToCodex
        | Kind::GeminiToRecording
        | Kind::RecordingToDocument => plan_gemini(job, adjust, from, kind),
        Kind::RecordingSame => plan_recording_same(job, adjust, from),
        _ => plan_claude(job, adjust, from, kind),
    }
}

/// The session's metadata as the writer gets it: its id filled as `convert` fills it (from
/// the whole input's content), then `adjust`ed; `None` when the adjustment makes it another
/// format's (the whole path writes that).
fn adjusted(
    job: &Job,
    meta: &Meta,
    from: &dyn Format,
    adjust: &mut dyn FnMut(&mut Meta),
) -> io::Result<Option<Meta>> {
    let mut meta = meta.clone();
    if meta.id.is_none() {
        meta.id = Some(crate::ids::derived_uuid(&sha256_of(job.source)?));
    }
    adjust(&mut meta);
    Ok((meta.source_format.as_deref() == Some(from.name())).then_some(meta))
}

/// Pass one over the job's input with `scanner`.
fn first_pass<S: pass1::Scan>(job: &Job, scanner: &S) -> io::Result<S::Known> {
    let options = pass1::Pass1Options {
        block_size: job.tuning.block_size,
    };
    pass1::known(job.source, job.name, scanner, options)
}

/// What the conversion says: the reader's diagnostics, then the unanswered calls the target
/// leaves as they are, as the whole path says them.
fn said(job: &Job, read: &[Diagnostic], open_calls: usize) -> Vec<Diagnostic> {
    let mut diagnostics = read.to_vec();
    diagnostics.extend(unanswered_diagnostic(open_calls, job.to, job.name));
    diagnostics
}

/// Whether the target closes calls (`convert::close_calls`), which adds result nodes to the
/// session: then the conversion goes through the whole session. It closes the calls no
/// result answers when asked to, and always those a sub-agent inherited from its parent
/// (only a Codex reader names them).
fn closes_calls(job: &Job, meta: &Meta, open_calls: usize) -> bool {
    let to = job.to;
    to.resumable()
        && !to.answers_open_calls_itself()
        && (meta.hints.contains_key(crate::model::INHERITED_CALLS)
            || (job.options.close_open_calls && open_calls > 0))
}

/// Pass one of a Codex rollout written back as a rollout.
fn plan_rollout<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
) -> Result<Option<Plan<'a>>, PlanError> {
    // A leaf ends the rollout early (`one_branch`): that goes through the whole session.
    if job.options.leaf.is_some() {
        return Ok(None);
    }
    let scanner = rollout::Scanner::new(job.name);
    let mut known = first_pass(&job, &scanner)?;
    let Some(meta) = adjusted(&job, &known.meta, from, adjust)? else {
        return Ok(None);
    };
    let meta_line = known.meta_bytes(&meta);
    // Codex answers unanswered calls itself: nothing to close, nothing more to say.
    let diagnostics = std::mem::take(&mut known.diagnostics);
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route: Route::RolloutSame {
            known: Box::new(known),
            meta_line,
        },
    }))
}

/// Pass one of a Codex rollout written as Claude Code entries.
fn plan_rollout_to_claude<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
) -> Result<Option<Plan<'a>>, PlanError> {
    let scanner = rollout::Scanner::with_nodes(job.name, true);
    let known = first_pass(&job, &scanner)?;
    // The writer writes every node, but a leaf that is not there is the whole path's error.
    let Some(Prepared {
        meta, diagnostics, ..
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    let route = claude_route(&job, Box::new(known), &meta)?;
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route,
    }))
}

/// Every node into Claude Code, as the whole path writes a session of another format (a tree
/// stays a tree).
fn claude_route(job: &Job, known: Box<dyn Reading>, meta: &Meta) -> Result<Route, PlanError> {
    let writer = ForeignStream::new(meta, job.options).map_err(|source| ConvertError::Write {
        to: job.to.name(),
        source,
    })?;
    Ok(Route::ToClaude {
        known,
        writer: Box::new(writer),
    })
}

/// Pass one of a Qwen Code session written as Claude Code (every node, in file order, as the
/// whole path writes them: a tree stays a tree), as a Codex rollout or a Gemini session (the
/// branch; into Gemini its parts as they are, Qwen Code being of the Gemini family) or back as
/// Qwen Code (every node, the head last: [`qwen_same`]).
fn plan_qwen<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
    kind: Kind,
) -> Result<Option<Plan<'a>>, PlanError> {
    let to = job.to;
    // The calls no result answers matter only to a target whose tool does not answer them.
    let scanner = crate::formats::qwen_jsonl::two_pass::Scanner {
        name: job.name,
        source: job.source,
        calls: to.resumable() && !to.answers_open_calls_itself(),
    };
    let known = first_pass(&job, &scanner)??;
    let Some(Prepared {
        meta,
        leaf,
        diagnostics,
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    let route = match kind {
        Kind::QwenToCodex => codex_route(&job, Box::new(known), meta, leaf)?,
        Kind::QwenToGemini(layout) => {
            // Its parts are kept as they are: no call names for results that name none.
            let no_names = |_: &_, _: &[u32]| Default::default();
            match gemini_route(&job, known, meta, leaf.as_deref(), layout, no_names)? {
                Some(route) => route,
                None => return Ok(None),
            }
        }
        Kind::QwenSame => {
            let Some((mut writer, copies)) = known.same_format_writer(&meta, job.options) else {
                return Ok(None);
            };
            let leaf = leaf.as_deref().and_then(|l| known.skeleton().index_of(l));
            let order = known.write_order(leaf, writer.losses());
            Route::QwenSame {
                known: Box::new(known),
                order,
                writer: Box::new(writer),
                copies: copies && !job.tuning.rebuild_unchanged,
            }
        }
        _ => claude_route(&job, Box::new(known), &meta)?,
    };
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route,
    }))
}

/// What a plan knows after pass one, to write.
struct Prepared {
    /// The metadata to write.
    meta: Meta,
    /// The `--leaf` node's whole id.
    leaf: Option<String>,
    /// What the conversion says.
    diagnostics: Vec<Diagnostic>,
}

/// What every plan over a [`Reading`] does after pass one: `None` when the whole path
/// converts it (calls to close, or the adjusted metadata another format's); `open_calls`:
/// the calls no result answers.
fn prepared(
    job: &Job,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &dyn Format,
    known: &dyn Reading,
    open_calls: usize,
) -> Result<Option<Prepared>, PlanError> {
    if closes_calls(job, known.meta(), open_calls) {
        return Ok(None);
    }
    let leaf = leaf_id(job, known.skeleton())?;
    let Some(meta) = adjusted(job, known.meta(), from, adjust)? else {
        return Ok(None);
    };
    let diagnostics = said(job, known.diagnostics(), open_calls);
    Ok(Some(Prepared {
        meta,
        leaf,
        diagnostics,
    }))
}

/// Pass one of a Gemini session (a legacy document, [`gemini_document`], or the JSONL
/// recording, [`gemini_recording`]) written as Claude Code (every node) or as a Codex rollout
/// (the branch). A session the two passes do not read goes through the whole path, which
/// says what it is.
fn plan_gemini<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
    kind: Kind,
) -> Result<Option<Plan<'a>>, PlanError> {
    let known = match kind {
        Kind::RecordingToClaude | Kind::RecordingToCodex | Kind::RecordingToDocument => {
            let scanner = gemini_recording::Scanner {
                name: job.name,
                source: job.source,
                lines: false,
            };
            first_pass(&job, &scanner)??.map(|r| r.known)
        }
        _ => gemini_document::known(job.source, job.name)?,
    };
    let Some(known) = known else {
        return Ok(None);
    };
    let Some(Prepared {
        meta,
        leaf,
        diagnostics,
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    let route = match kind {
        Kind::GeminiToCodex | Kind::RecordingToCodex => {
            codex_route(&job, Box::new(known), meta, leaf)?
        }
        Kind::GeminiToRecording | Kind::RecordingToDocument => {
            let layout = match kind {
                Kind::GeminiToRecording => Layout::Lines,
                _ => Layout::Document,
            };
            // Its parts are kept as they are: no call names for results that name none.
            let no_names = |_: &_, _: &[u32]| Default::default();
            match gemini_route(&job, known, meta, leaf.as_deref(), layout, no_names)? {
                Some(route) => route,
                None => return Ok(None),
            }
        }
        _ => claude_route(&job, Box::new(known), &meta)?,
    };
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route,
    }))
}

/// Pass one of Gemini CLI's JSONL recording written back as a recording, when the whole
/// writer gives its lines back as they are: the whole branch (no `--leaf`), the metadata
/// unchanged (the session had an id; nothing adjusted), no call to close, and a line at
/// least. Anything else the whole writer lays out again.
fn plan_recording_same<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
) -> Result<Option<Plan<'a>>, PlanError> {
    if job.options.leaf.is_some() {
        return Ok(None);
    }
    let scanner = gemini_recording::Scanner {
        name: job.name,
        source: job.source,
        lines: true,
    };
    let Some(gemini_recording::Recording {
        known,
        lines: Some(lines),
    }) = first_pass(&job, &scanner)??
    else {
        return Ok(None);
    };
    let Some(Prepared {
        meta, diagnostics, ..
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    if meta != *known.meta() || lines.spots.is_empty() {
        return Ok(None);
    }
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route: Route::Lines(lines),
    }))
}

/// Pass one of a Codex rollout written as a Gemini session (either layout): every node, in
/// order (a rollout is one line of nodes).
fn plan_rollout_to_gemini<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
    layout: Layout,
) -> Result<Option<Plan<'a>>, PlanError> {
    // A leaf cuts the rollout (`one_branch`): that goes through the whole session.
    if job.options.leaf.is_some() {
        return Ok(None);
    }
    let mut scanner = rollout::Scanner::with_nodes(job.name, true);
    // The Gemini writer names each result by its call.
    scanner.call_names = true;
    let mut known = first_pass(&job, &scanner)?;
    let Some(Prepared {
        meta, diagnostics, ..
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    let Some(stream) = DocumentStream::new(meta, job.options, layout) else {
        return Ok(None);
    };
    let branch: Vec<u32> = (0..known.spots.len() as u32).collect();
    let Some(times) = gemini_times(&job, &known, &stream, &branch, |i| known.timed(i))? else {
        return Ok(None);
    };
    let names = known.call_names();
    // The first node hangs under nothing: no loop of parents to name results by.
    let writer = stream.writer(names, &LeftOut::default(), times, None);
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route: Route::ToGemini {
            known: Box::new(known),
            branch,
            writer: Box::new(writer),
        },
    }))
}

/// The Gemini document's start time and last update for `branch` ([`DocumentStream::times`]),
/// `timed` saying which nodes have a time: from what pass one knows, and the node that gives
/// the first message its time made again when the session has no start time. (Every node of
/// the readers here that is not a message is an event.)
fn gemini_times(
    job: &Job,
    known: &dyn Reading,
    stream: &DocumentStream,
    branch: &[u32],
    timed: impl Fn(u32) -> bool,
) -> io::Result<Option<[String; 2]>> {
    let first_message = branch.iter().position(|&i| known.is_message(i));
    let any_timed = branch.iter().any(|&i| timed(i));
    stream.times(first_message.is_some(), any_timed, || {
        let upto = &branch[..=first_message.unwrap_or(0)];
        match upto.iter().rev().find(|&&i| timed(i)) {
            Some(&i) => Ok(node_of(job, known, i, MadeFor::Counting)?.timestamp),
            None => Ok(None),
        }
    })
}

/// Pass one of a Claude Code session, into any format it goes to through here.
fn plan_claude<'a>(
    job: Job<'a>,
    adjust: &mut dyn FnMut(&mut Meta),
    from: &'static dyn Format,
    kind: Kind,
) -> Result<Option<Plan<'a>>, PlanError> {
    let to = job.to;
    let mut scanner = Scanner::new(job.name, to.resumable() && !to.answers_open_calls_itself());
    // The Gemini writer names each result by its call.
    scanner.call_names = matches!(kind, Kind::ToGemini(_));
    let known = first_pass(&job, &scanner)?;
    let Some(Prepared {
        meta,
        leaf,
        diagnostics,
    }) = prepared(&job, adjust, from, &known, known.open_calls)?
    else {
        return Ok(None);
    };
    let route = match kind {
        Kind::Same => {
            let rewrite = known.rewrite(&meta, job.tuning.rebuild_unchanged);
            Route::Same {
                drop_final_newline: Known::drops_final_newline(&meta),
                known: Box::new(known),
                rewrite,
            }
        }
        Kind::ToCodex => codex_route(&job, Box::new(known), meta, leaf)?,
        Kind::RolloutSame
        | Kind::RolloutToClaude
        | Kind::RolloutToGemini(_)
        | Kind::QwenToClaude
        | Kind::QwenToCodex
        | Kind::QwenToGemini(_)
        | Kind::QwenSame
        | Kind::GeminiToClaude
        | Kind::GeminiToCodex
        | Kind::RecordingToClaude
        | Kind::RecordingToCodex
        | Kind::RecordingSame
        | Kind::GeminiToRecording
        | Kind::RecordingToDocument => {
            unreachable!("planned by plan_rollout, plan_qwen, plan_gemini and plan_recording_same")
        }
        Kind::ToGemini(layout) => {
            let calls = |known: &Known, branch: &[u32]| {
                // The root's parent is on the branch only when the parents make a loop.
                let root_parent = branch
                    .first()
                    .and_then(|&i| known.skeleton.parent(i))
                    .filter(|p| branch.contains(p))
                    .map(|p| (known.skeleton.name(p), known.calls_of(p)));
                (known.call_names(branch), root_parent)
            };
            match gemini_route(&job, known, meta, leaf.as_deref(), layout, calls)? {
                Some(route) => route,
                None => return Ok(None),
            }
        }
    };
    Ok(Some(Plan {
        job,
        from,
        diagnostics,
        route,
    }))
}

/// The branch (to `leaf`, else the head) into a Gemini session of `layout`; `calls` gives the
/// branch's call names and the node its root hangs under, when the results need them
/// ([`gemini_stream::DocumentStream::writer`]). `None` when the whole path writes it.
fn gemini_route<K: Reading + 'static>(
    job: &Job,
    known: K,
    meta: Meta,
    leaf: Option<&str>,
    layout: Layout,
    calls: impl FnOnce(&K, &[u32]) -> gemini_stream::CallNames,
) -> Result<Option<Route>, PlanError> {
    let Some(stream) = DocumentStream::new(meta, job.options, layout) else {
        return Ok(None);
    };
    let (branch, left_out) = branch_of(job, &known, leaf)?;
    let timed = |i| known.timed(i);
    let Some(times) = gemini_times(job, &known, &stream, &branch, timed)? else {
        return Ok(None);
    };
    let (names, root_parent) = calls(&known, &branch);
    let writer = stream.writer(names, &left_out, times, root_parent);
    Ok(Some(Route::ToGemini {
        known: Box::new(known),
        branch,
        writer: Box::new(writer),
    }))
}

/// The node `--leaf` names, as its whole id: it takes the start of an id too, as the whole
/// path's `Tree::find` does.
fn leaf_id(job: &Job, skeleton: &skeleton::Skeleton) -> Result<Option<String>, PlanError> {
    match job.options.leaf.as_deref() {
        Some(wanted) => {
            let i = skeleton.find(wanted).map_err(ConvertError::Leaf)?;
            Ok(Some(skeleton.name(i)))
        }
        None => Ok(None),
    }
}

/// Into a Codex rollout: the branch to `leaf` (a whole id), else the head's, written by one
/// rollout writer for `meta`.
fn codex_route(
    job: &Job,
    known: Box<dyn Reading>,
    meta: Meta,
    leaf: Option<String>,
) -> Result<Route, PlanError> {
    let options = WriteOptions {
        leaf,
        ..job.options.clone()
    };
    let stream = RolloutStream::new(meta, &options).map_err(|source| ConvertError::Write {
        to: job.to.name(),
        source,
    })?;
    let (branch, left_out) = branch_of(job, &*known, options.leaf.as_deref())?;
    Ok(Route::ToCodex {
        known,
        branch,
        left_out,
        stream: Box::new(stream),
    })
}

/// The branch to write (`leaf`'s, else the head's) and what it leaves out.
fn branch_of(
    job: &Job,
    known: &dyn Reading,
    leaf: Option<&str>,
) -> Result<(Vec<u32>, LeftOut), PlanError> {
    let chosen = known
        .skeleton()
        .branch(leaf, known.head(), |i| !known.is_message(i))
        .map_err(|e| ConvertError::Write {
            to: job.to.name(),
            source: WriteError(e),
        })?;
    let left_out = LeftOut {
        other_branches: chosen.other_branches,
        outside: chosen.outside.len(),
        outside_kinds: outside_kinds(job, known, &chosen.outside)?,
    };
    Ok((chosen.path, left_out))
}

/// Node `index`, read again, made for `made_for`.
fn node_of(
    job: &Job,
    known: &dyn Reading,
    index: u32,
    made_for: MadeFor,
) -> io::Result<crate::model::Node> {
    let mut node = None;
    reading::each_node(known, job.source, &[index], made_for, |_, n| node = Some(n))?;
    Ok(node.expect("each_node makes every index it is given"))
}

/// The records outside the conversation counted by what they are, as
/// [`crate::tree::Tree::outside_summary`] counts them (each record read again for its name).
fn outside_kinds(job: &Job, known: &dyn Reading, outside: &[u32]) -> io::Result<String> {
    let mut names = Vec::with_capacity(outside.len());
    reading::each_node(known, job.source, outside, MadeFor::Anyone, |_, node| {
        names.push(crate::tree::record_name(&node))
    })?;
    Ok(crate::tree::kinds_summary(names))
}

/// Why pass one stopped.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The input could not be read.
    #[error("{0}")]
    Input(#[from] io::Error),
}

/// The sha256 of the whole input, read in pieces.
fn sha256_of(source: &dyn Source) -> io::Result<String> {
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < source.len() {
        let n = (source.len() - at).min(buf.len() as u64) as usize;
        source.read_exact_at(&mut buf[..n], at)?;
        hash.update(&buf[..n]);
        at += n as u64;
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl Plan<'_> {
    /// Pass two: the output into `out`; the conversion's report (its `bytes` left empty: they
    /// went to `out`).
    pub fn write(self, out: &mut dyn Output) -> io::Result<Conversion> {
        let Plan {
            job,
            from,
            diagnostics,
            route,
        } = self;
        let job = &job;
        let losses = match route {
            Route::Same {
                known,
                rewrite,
                drop_final_newline,
            } => {
                same_format(job, &known, rewrite.as_ref(), out)?;
                if drop_final_newline {
                    out.take_back_last()?;
                }
                LossReport::default()
            }
            Route::ToCodex {
                known,
                branch,
                left_out,
                stream,
            } => to_codex(job, &*known, &branch, &left_out, &stream, out)?,
            Route::ToGemini {
                known,
                branch,
                writer,
            } => {
                let mut w = *writer;
                let mut buf = Vec::new();
                w.begin(&mut buf);
                out.put(&buf)?;
                each_branch_node(job, &*known, &branch, MadeFor::Counting, |nodes| {
                    buf.clear();
                    for node in nodes.iter_mut() {
                        w.node(node, &mut buf);
                    }
                    out.put(&buf)
                })?;
                buf.clear();
                let losses = w.finish(&mut buf);
                out.put(&buf)?;
                losses
            }
            Route::ToClaude { known, writer } => {
                let mut w = *writer;
                let all: Vec<u32> = (0..known.spots().len() as u32).collect();
                let mut buf = Vec::new();
                each_branch_node(job, &*known, &all, MadeFor::Counting, |nodes| {
                    buf.clear();
                    for node in nodes.iter() {
                        w.node(node, &mut buf);
                    }
                    out.put(&buf)
                })?;
                w.finish()
            }
            Route::QwenSame {
                known,
                order,
                writer,
                copies,
            } => qwen_same::write(job, &known, &order, *writer, copies, out)?,
            Route::Lines(lines) => {
                let len = job.source.len();
                let copied = lines.clean
                    && pass1::lines_intact(&lines.spots, len)
                    && out.put_copy_of(job.source, len)?;
                if !copied {
                    copy_records(job, &lines.spots, out, |_| None)?;
                    if !lines.final_newline {
                        out.take_back_last()?;
                    }
                }
                LossReport::default()
            }
            Route::RolloutSame { known, meta_line } => {
                let before = |i| (known.meta_at == Some(i)).then_some(&meta_line[..]);
                copy_records(job, &known.spots, out, before)?;
                if known.meta_at == Some(known.spots.len() as u32) {
                    out.put(&meta_line)?;
                }
                LossReport::default()
            }
        };
        Ok(Conversion {
            from: from.name(),
            to: job.to.name(),
            bytes: Vec::new(),
            diagnostics,
            losses,
            replaced: None,
            budget: None,
        })
    }
}

/// Runs of consecutive positions of `indices` holding about `bytes` of records each.
pub(crate) fn runs(
    known_spots: &[pass1::Spot],
    indices: &[u32],
    bytes: u64,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (k, &i) in indices.iter().enumerate() {
        size += u64::from(known_spots[i as usize].len) + 1;
        if size >= bytes {
            out.push(start..k + 1);
            start = k + 1;
            size = 0;
        }
    }
    if start < indices.len() {
        out.push(start..indices.len());
    }
    out
}

/// Runs converted at once (twice the threads: while one is long, others go on).
pub(crate) fn window() -> usize {
    2 * rayon::current_num_threads().max(1)
}

/// Claude Code to Claude Code: each record's bytes, or its entry rebuilt.
fn same_format(
    job: &Job,
    known: &Known,
    rewrite: Option<&Rewrite>,
    out: &mut dyn Output,
) -> io::Result<()> {
    let Some(rewrite) = rewrite else {
        // Every record as it is, each on its line: when those are the input's lines exactly,
        // the output is the input's bytes, copied by the kernel where it can.
        let len = job.source.len();
        if known.clean
            && pass1::lines_intact(&known.spots, len)
            && out.put_copy_of(job.source, len)?
        {
            return Ok(());
        }
        return copy_records(job, &known.spots, out, |_| None);
    };
    let all: Vec<u32> = (0..known.spots.len() as u32).collect();
    for window_runs in runs(&known.spots, &all, job.tuning.run_bytes).chunks(window()) {
        let done: Vec<io::Result<Vec<u8>>> = window_runs
            .par_iter()
            .map(|run| {
                let mut buf = Vec::new();
                pass2::each_record(job.source, &known.spots, &all[run.clone()], |i, bytes| {
                    rewrite.entry(known, i, bytes, &mut buf)
                })?;
                Ok(buf)
            })
            .collect();
        for buf in done {
            out.put(&buf?)?;
        }
    }
    Ok(())
}

/// Every record's bytes, each on its line, after `before(index)` (bytes with their line
/// break) when there are some.
fn copy_records<'b>(
    job: &Job,
    spots: &[pass1::Spot],
    out: &mut dyn Output,
    before: impl Fn(u32) -> Option<&'b [u8]>,
) -> io::Result<()> {
    let all: Vec<u32> = (0..spots.len() as u32).collect();
    // The output's first error stops the copy (the rest is not read).
    let mut failed = None;
    pass2::each_record(job.source, spots, &all, |i, bytes| {
        if failed.is_some() {
            return;
        }
        let put = match before(i) {
            Some(first) => out.put(first),
            None => Ok(()),
        }
        .and_then(|()| out.put(bytes))
        .and_then(|()| out.put(b"\n"));
        if let Err(e) = put {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// Claude Code to Codex: the meta line, the branch's nodes, the closing losses. The nodes of
/// several runs are made at once on the thread pool; one writer then writes them in order
/// (each line depends on the ones before it).
fn to_codex(
    job: &Job,
    known: &dyn Reading,
    branch: &[u32],
    left_out: &LeftOut,
    stream: &RolloutStream,
    out: &mut dyn Output,
) -> io::Result<LossReport> {
    let mut losses = LossReport::default();
    let made_for = match RolloutStream::WRITES_EXTRA_VALUES {
        true => MadeFor::Anyone,
        false => MadeFor::Counting,
    };
    let mut w = stream
        .writer(&mut losses, left_out)
        .map_err(io::Error::other)?;
    let first_timed = match stream.start_time() {
        None => match branch.iter().find(|&&i| known.timed(i)) {
            Some(&i) => Some(node_of(job, known, i, made_for)?),
            None => None,
        },
        Some(_) => None,
    };
    let mut buf = Vec::new();
    w.begin(first_timed, &mut buf);
    out.put(&buf)?;
    // Each run's lines are made where its nodes are; the writer adds what depends on the
    // lines before.
    let lines_of = |nodes| stream.run(nodes);
    each_branch_run(job, known, branch, made_for, lines_of, |run| {
        buf.clear();
        w.run(std::mem::take(run), &mut buf);
        out.put(&buf)
    })?;
    w.finish();
    Ok(losses)
}

/// The nodes of `branch`, made for `made_for`, handed to `write` run by run in order. The nodes
/// of several runs are made at once on the thread pool, the next window while `write` writes
/// one (each writer's lines depend on the ones before: one writer goes through them in order).
/// What `write` leaves of a run is freed by the thread that made it.
fn each_branch_node(
    job: &Job,
    known: &dyn Reading,
    branch: &[u32],
    made_for: MadeFor,
    write: impl FnMut(&mut Vec<crate::model::Node>) -> io::Result<()> + Send,
) -> io::Result<()> {
    each_branch_run(job, known, branch, made_for, |nodes| nodes, write)
}

/// [`each_branch_node`], each run's nodes turned by `finish` into what `write` takes, on the
/// thread that made them (a writer's work that does not depend on the lines before, done
/// there). What `write` leaves of a run is freed by the thread that made it ([`bins`]).
fn each_branch_run<T: Send>(
    job: &Job,
    known: &dyn Reading,
    branch: &[u32],
    made_for: MadeFor,
    finish: impl Fn(Vec<crate::model::Node>) -> T + Sync,
    mut write: impl FnMut(&mut T) -> io::Result<()> + Send,
) -> io::Result<()> {
    let runs = runs(known.spots(), branch, job.tuning.run_bytes);
    let bins = bins::Bins::new();
    // The nodes of a window of runs, made at once, with the thread that made each.
    let make = |part: &[std::ops::Range<usize>]| -> Vec<io::Result<(Option<usize>, T)>> {
        part.par_iter()
            .map(|run| {
                let thread = bins.empty_own();
                let mut nodes = Vec::with_capacity(run.len());
                reading::each_node(
                    known,
                    job.source,
                    &branch[run.clone()],
                    made_for,
                    |_, node| nodes.push(node),
                )?;
                Ok((thread, finish(nodes)))
            })
            .collect()
    };
    let mut parts = runs.chunks(window());
    let mut made = parts.next().map(make).unwrap_or_default();
    loop {
        let next_part = parts.next();
        let (next, written) = rayon::join(
            || next_part.map(make),
            || -> io::Result<()> {
                for made in made {
                    let (thread, mut run) = made?;
                    write(&mut run)?;
                    bins.give_back(thread, run);
                }
                Ok(())
            },
        );
        written?;
        match next {
            Some(n) => made = n,
            None => break,
        }
    }
    Ok(())
}
