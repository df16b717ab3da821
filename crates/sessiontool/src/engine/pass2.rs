//! Pass two's reading: the records a writer asked for, one at a time, each as the bytes the
//! records layer gave in pass one. From memory they are borrowed; from a file, records that
//! lie close together are read with one positioned read of the stretch that holds them, into
//! a buffer reused from stretch to stretch (never more than a stretch, or one record when a
//! record is longer).

use std::borrow::Cow;
use std::io;

use super::pass1::Spot;
use super::source::Source;
use crate::records::record_bytes;

/// The most a stretch read at once holds (a longer record is read alone).
const STRETCH: u64 = 8 << 20;
/// The most bytes between two records of one stretch (read and thrown away).
const GAP: u64 = 64 << 10;

/// Calls `each(index, bytes)` for the records `indices` (in that order).
pub fn each_record(
    source: &dyn Source,
    spots: &[Spot],
    indices: &[u32],
    mut each: impl FnMut(u32, &[u8]),
) -> io::Result<()> {
    let mut call = |i: u32, bytes: &[u8]| {
        let bytes: Cow<[u8]> = record_bytes(bytes, spots[i as usize].lossy);
        each(i, &bytes);
    };
    if let Some(all) = source.as_slice() {
        for &i in indices {
            let s = spots[i as usize];
            let start = usize::try_from(s.offset).map_err(|_| io::ErrorKind::InvalidInput)?;
            let bytes = all
                .get(start..start + s.len as usize)
                .ok_or(io::ErrorKind::UnexpectedEof)?;
            call(i, bytes);
        }
        return Ok(());
    }
    let mut buf = SpareBuffer::take();
    let mut k = 0;
    while k < indices.len() {
        // The stretch: records in file order, close together, within the size.
        let first = spots[indices[k] as usize];
        let mut end = first.end();
        let mut n = 1;
        while let Some(&next) = indices.get(k + n) {
            let s = spots[next as usize];
            if s.offset < end || s.offset - end > GAP || s.end() - first.offset > STRETCH {
                break;
            }
            end = s.end();
            n += 1;
        }
        // The buffer only grows (zeroing it again for every stretch would cost a pass).
        let len = (end - first.offset) as usize;
        if buf.0.len() < len {
            buf.0.resize(len, 0);
        }
        let buf = &mut buf.0[..len];
        source.read_exact_at(buf, first.offset)?;
        for &i in &indices[k..k + n] {
            let s = spots[i as usize];
            let at = (s.offset - first.offset) as usize;
            call(i, &buf[at..at + s.len as usize]);
        }
        k += n;
    }
    Ok(())
}

thread_local! {
    /// The stretch buffer the last reading of this thread left: pass two reads a run after
    /// another on each thread, and a new buffer for each would be allocated (a megabyte or
    /// more: mapped, faulted in and zeroed) every time.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// This thread's spare stretch buffer while a reading holds it, given back when it is done
/// (unless it grew past a stretch: a record longer than that is rare, and not kept).
struct SpareBuffer(Vec<u8>);

impl SpareBuffer {
    fn take() -> SpareBuffer {
        SpareBuffer(SPARE.with(std::cell::Cell::take))
    }
}

impl Drop for SpareBuffer {
    fn drop(&mut self) {
        if self.0.capacity() <= STRETCH as usize {
            SPARE.with(|spare| spare.set(std::mem::take(&mut self.0)));
        }
    }
}

/// The bytes of the records at `spots`, in that order (a node made of several records).
pub fn records_at(source: &dyn Source, spots: &[Spot]) -> io::Result<Vec<Vec<u8>>> {
    let order: Vec<u32> = (0..spots.len() as u32).collect();
    let mut out = Vec::with_capacity(spots.len());
    each_record(source, spots, &order, |_, bytes| out.push(bytes.to_vec()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_as_pass_one_gave_them_from_memory_and_from_a_file() {
        let text = b"{\"a\":1}\n{\"b\":\xff}\n\n{\"c\":3}\n".to_vec();
        let spot = |offset, len, lossy| Spot {
            offset,
            line: 0,
            len,
            lossy,
        };
        let spots = [spot(0, 7, false), spot(8, 7, true), spot(17, 7, false)];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &text).unwrap();
        let file =
            super::super::source::FileSource::new(std::fs::File::open(&path).unwrap()).unwrap();
        let bytes = super::super::source::Bytes(&text);
        for source in [&bytes as &dyn Source, &file] {
            let mut got = Vec::new();
            each_record(source, &spots, &[2, 0, 1, 2], |i, b| {
                got.push((i, String::from_utf8(b.to_vec()).unwrap()))
            })
            .unwrap();
            assert_eq!(
                got,
                [
                    (2, "{\"c\":3}".to_string()),
                    (0, "{\"a\":1}".into()),
                    (1, "{\"b\":\u{FFFD}}".into()),
                    (2, "{\"c\":3}".into())
                ]
            );
        }
    }
}
