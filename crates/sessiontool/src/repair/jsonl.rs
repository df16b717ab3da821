//! Pass two of a JSONL repair: stream the file through the records layer again and write
//! every record on its own line, byte for byte, except where the plan says otherwise: a new
//! parent spliced into exactly the bytes of the old one, synthetic results inserted after a
//! call. Bytes that are not records (torn tails, fragments, lines that are not JSON, lines
//! with invalid UTF-8 in their original form) go to the sidecar, never to nowhere.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use crate::check::Plan;
use crate::check::conversation::RECOVERED;
use crate::check::ident::QuickMap;
use crate::check::scan::{JsonlScan, Link};
use crate::formats::{Format, OpenCall};
use crate::records::{Damage, Event, Options, Splitter};

/// What pass two did.
#[derive(Debug, Default)]
pub struct Rewritten {
    pub records_in: u64,
    pub records_out: u64,
    pub relinked: u64,
    pub renumbered: u64,
    pub inserted: u64,
    /// Bytes written to the sidecar.
    pub sidecar_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Pass two did not see what pass one saw: the file changed in between.
    #[error("the file changed while it was being repaired (record {0} is not where it was)")]
    Changed(u64),
    #[error("{0}")]
    Format(String),
}

pub fn rewrite(
    source: &File,
    scan: &JsonlScan,
    plan: &Plan,
    format: &dyn Format,
    out: &mut impl Write,
    sidecar: &mut impl Write,
) -> Result<Rewritten, RewriteError> {
    let mut done = Rewritten::default();
    // Call records whose bytes a synthetic result is made from, kept until it is written.
    let wanted: QuickMap<u32, ()> = plan
        .inserts
        .values()
        .flatten()
        .map(|i| (i.call_record, ()))
        .collect();
    let mut call_bytes: QuickMap<u32, Vec<u8>> = QuickMap::default();
    let mut splitter = Splitter::new(source, Options::default());
    let mut index: u32 = 0;
    // The sequence number of the record before, while renumbering.
    let mut last_seq: Option<u64> = None;
    while let Some(event) = splitter.next_event()? {
        match event {
            Event::Damage(f) => {
                let keep_original = match f.damage {
                    Damage::TornTail
                    | Damage::TornRecordGlued { .. }
                    | Damage::InvalidJson { .. } => true,
                    Damage::Oversized { len } => {
                        // Kept where it is, unread: copy it through.
                        copy_range(source, f.span.offset, len, out)?;
                        out.write_all(b"\n")?;
                        false
                    }
                    _ => false,
                };
                if keep_original {
                    copy_range(source, f.span.offset, f.span.len, sidecar)?;
                    sidecar.write_all(b"\n")?;
                    done.sidecar_bytes += f.span.len + 1;
                }
            }
            Event::Record(record) => {
                let Some(rec) = scan.records.get(index as usize) else {
                    return Err(RewriteError::Changed(u64::from(index) + 1));
                };
                if rec.offset != record.span.offset || u64::from(rec.len) != record.span.len {
                    return Err(RewriteError::Changed(u64::from(index) + 1));
                }
                done.records_in += 1;
                if matches!(record.bytes, Cow::Owned(_)) {
                    // Invalid UTF-8 was replaced: the original line is kept in the sidecar.
                    copy_range(source, record.span.offset, record.span.len, sidecar)?;
                    sidecar.write_all(b"\n")?;
                    done.sidecar_bytes += record.span.len + 1;
                }
                let mut bytes: Cow<[u8]> = Cow::Borrowed(&record.bytes);
                if let Some(link) = rec.id.and_then(|id| plan.relink.get(&id)) {
                    bytes = Cow::Owned(relinked(&bytes, *link, scan, format)?);
                    done.relinked += 1;
                }
                if let Some(from) = plan.renumber_from
                    && let Some(seq) = format.keys(&bytes).and_then(|k| k.seq)
                {
                    match last_seq {
                        Some(last) if index >= from && seq <= last => {
                            let renumbered =
                                format.renumbered(&bytes, last + 1).ok_or_else(|| {
                                    RewriteError::Format(format!(
                                        "{} cannot renumber record {}",
                                        format.name(),
                                        u64::from(index) + 1
                                    ))
                                })?;
                            bytes = Cow::Owned(renumbered);
                            last_seq = Some(last + 1);
                            done.renumbered += 1;
                        }
                        _ => last_seq = Some(seq),
                    }
                }
                out.write_all(&bytes)?;
                out.write_all(b"\n")?;
                done.records_out += 1;
                if wanted.contains_key(&index) {
                    call_bytes.insert(index, record.bytes.to_vec());
                }
                for insert in plan.inserts.get(&index).into_iter().flatten() {
                    let call_record = call_bytes
                        .get(&insert.call_record)
                        .ok_or(RewriteError::Changed(u64::from(insert.call_record) + 1))?;
                    let call_id = scan.ids.name(insert.call_id).to_string();
                    let new_id = scan.ids.name(insert.new_id).to_string();
                    let parent_id = insert
                        .parent
                        .map(|p| scan.ids.name(p).to_string())
                        .unwrap_or_default();
                    let bytes = format
                        .synthetic_result(&OpenCall {
                            call_record,
                            call_id: &call_id,
                            new_id: &new_id,
                            parent_id: &parent_id,
                            message: RECOVERED,
                        })
                        .ok_or_else(|| {
                            RewriteError::Format(format!(
                                "{} cannot write a result for call {call_id}",
                                format.name()
                            ))
                        })?;
                    out.write_all(&bytes)?;
                    out.write_all(b"\n")?;
                    done.inserted += 1;
                    done.records_out += 1;
                }
                index += 1;
            }
        }
    }
    if index as usize != scan.records.len() {
        return Err(RewriteError::Changed(u64::from(index) + 1));
    }
    Ok(done)
}

/// The record with its parent value replaced; every other byte as it was.
fn relinked(
    record: &[u8],
    link: Link,
    scan: &JsonlScan,
    format: &dyn Format,
) -> Result<Vec<u8>, RewriteError> {
    let span = format
        .keys(record)
        .and_then(|k| k.parent_span)
        .ok_or_else(|| {
            RewriteError::Format("a record to relink has no parent value to replace".into())
        })?;
    let value = match link {
        Link::Id(p) => serde_json::to_string(&scan.ids.name(p).to_string()).unwrap_or_default(),
        _ => "null".to_string(),
    };
    Ok([&record[..span.start], value.as_bytes(), &record[span.end..]].concat())
}

/// Copies `len` bytes at `offset` of `source` to `out`, in pieces.
fn copy_range(source: &File, offset: u64, len: u64, out: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; len.min(1 << 20) as usize];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        source.read_exact_at(&mut buf[..n], offset + done)?;
        out.write_all(&buf[..n])?;
        done += n as u64;
    }
    Ok(())
}
