//! The blocks of a stream read, analysed and merged by every thread of the pool at once. Each
//! thread takes the next block from the reader (one thread reads at a time, in order),
//! analyses it and hands the result in; whichever thread finds the next result in file order
//! ready merges it (one thread merges at a time). A thread analyses the block it just read,
//! while its bytes are still in that core's cache, and no thread waits for a whole window of
//! blocks to be read before it starts: on two threads a window read first was a sixth of
//! fsck's wall time.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::{Mutex, MutexGuard, TryLockError};

use super::{BlockReader, Piece};

/// Reads every piece of `blocks`, `analyse`s each on the pool's threads and gives the results
/// to `merge` in file order, one call at a time. When `merge` returns false no more pieces are
/// read and no more results merged. Returns whether every piece was merged.
pub fn analyse_in_order<R, T>(
    blocks: &mut BlockReader<R>,
    analyse: impl Fn(&Piece) -> T + Sync,
    merge: impl FnMut(T) -> bool + Send,
) -> io::Result<bool>
where
    R: Read + Send,
    T: Send,
{
    let shared = Shared {
        reading: Mutex::new(Reading {
            blocks,
            next: 0,
            over: false,
            error: None,
        }),
        ready: Mutex::new(BTreeMap::new()),
        merging: Mutex::new(Merging {
            next: 0,
            merge,
            stopped: false,
        }),
    };
    let threads = rayon::current_num_threads().max(1);
    rayon::scope(|s| {
        for _ in 1..threads {
            s.spawn(|_| shared.work(&analyse));
        }
        shared.work(&analyse);
    });
    // Every thread merges what it handed in when it can; this catches the last ones.
    shared.merge_ready();
    let reading = shared
        .reading
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(e) = reading.error {
        return Err(e);
    }
    let merging = shared
        .merging
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    Ok(!merging.stopped)
}

struct Shared<'b, R: Read, T, M> {
    reading: Mutex<Reading<'b, R>>,
    /// Results analysed, by piece number, not merged yet.
    ready: Mutex<BTreeMap<u64, T>>,
    merging: Mutex<Merging<M>>,
}

struct Reading<'b, R: Read> {
    blocks: &'b mut BlockReader<R>,
    /// The number of the next piece.
    next: u64,
    /// Nothing more is to be read: the end, an error, or the merge stopped.
    over: bool,
    error: Option<io::Error>,
}

struct Merging<M> {
    /// The number of the next piece to merge.
    next: u64,
    merge: M,
    stopped: bool,
}

/// A lock that a panic on another thread does not make unusable (the panic is raised again
/// when the scope ends).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<R: Read, T, M: FnMut(T) -> bool> Shared<'_, R, T, M> {
    /// One thread's share: read, analyse, hand in, until the stream is over.
    fn work(&self, analyse: &impl Fn(&Piece) -> T) {
        loop {
            let (number, piece) = {
                let mut reading = lock(&self.reading);
                if reading.over {
                    return;
                }
                match reading.blocks.next_piece() {
                    Ok(Some(piece)) => {
                        reading.next += 1;
                        (reading.next - 1, piece)
                    }
                    Ok(None) => {
                        reading.over = true;
                        return;
                    }
                    Err(e) => {
                        reading.over = true;
                        reading.error = Some(e);
                        return;
                    }
                }
            };
            let out = analyse(&piece);
            if let Piece::Block(block) = piece {
                lock(&self.reading).blocks.recycle(block.data);
            }
            lock(&self.ready).insert(number, out);
            self.merge_ready();
        }
    }

    /// Merges the results that are next in order, unless another thread is merging (it
    /// takes them).
    fn merge_ready(&self) {
        loop {
            let mut merging = match self.merging.try_lock() {
                Ok(m) => m,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            loop {
                let next = merging.next;
                let Some(out) = lock(&self.ready).remove(&next) else {
                    break;
                };
                merging.next += 1;
                if !merging.stopped && !(merging.merge)(out) {
                    merging.stopped = true;
                    lock(&self.reading).over = true;
                }
            }
            let next = merging.next;
            drop(merging);
            // A result handed in while this thread held the merge, by a thread that found
            // it held: merged here, as that thread left it.
            if !lock(&self.ready).contains_key(&next) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` lines `{"i":k}` read in blocks of `size`: the first line number and bytes of each
    /// piece, in the order merged.
    fn merged(n: usize, size: usize, stop_after: usize) -> (Vec<(u64, usize)>, bool) {
        let text: Vec<u8> = (0..n)
            .flat_map(|k| format!("{{\"i\":{k}}}\n").into_bytes())
            .collect();
        let mut blocks = BlockReader::new(&text[..], size, 1 << 20);
        let mut got = Vec::new();
        let all = analyse_in_order(
            &mut blocks,
            |piece| match piece {
                Piece::Block(b) => (b.line, b.data.len()),
                Piece::Oversized { line, len, .. } => (*line, *len as usize),
            },
            |out| {
                got.push(out);
                got.len() < stop_after
            },
        )
        .unwrap();
        (got, all)
    }

    #[test]
    fn results_are_merged_in_file_order() {
        for size in [1, 7, 64, 4096] {
            let (got, all) = merged(500, size, usize::MAX);
            assert!(all);
            let lines: Vec<u64> = got.iter().map(|g| g.0).collect();
            assert!(lines.windows(2).all(|w| w[0] < w[1]), "size {size}");
            let bytes: usize = got.iter().map(|g| g.1).sum();
            let want: usize = (0..500).map(|k| format!("{{\"i\":{k}}}\n").len()).sum();
            assert_eq!(bytes, want, "size {size}");
        }
    }

    #[test]
    fn a_merge_that_says_stop_gets_no_more() {
        let (got, all) = merged(500, 8, 3);
        assert!(!all);
        assert_eq!(got.len(), 3);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn a_read_error_is_returned() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("no"))
            }
        }
        let mut blocks = BlockReader::new(Failing, 64, 1 << 20);
        let err = analyse_in_order(&mut blocks, |_| (), |()| true).unwrap_err();
        assert_eq!(err.to_string(), "no");
    }
}
