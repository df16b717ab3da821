//! Memory freed by the thread that allocated it. Pass two makes nodes on the thread pool and
//! hands them to one thread that writes or shows them; freed there, every block went back to
//! another thread's arena of the system allocator, under that arena's lock (thousands of
//! context switches on a session of 100 MB, and a fifth of the wall time). Instead, what is
//! done with goes back to a bin of the thread that made it, which empties its bin before it
//! makes more.

use std::sync::Mutex;

/// One bin per thread of the pool.
pub(crate) struct Bins<T>(Vec<Mutex<Vec<T>>>);

impl<T> Bins<T> {
    pub(crate) fn new() -> Self {
        Bins(
            (0..rayon::current_num_threads())
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
        )
    }

    /// Frees what was given back to the current thread of the pool; that thread's index
    /// (`None` off the pool).
    pub(crate) fn empty_own(&self) -> Option<usize> {
        let thread = rayon::current_thread_index();
        if let Some(bin) = thread.and_then(|t| self.0.get(t)) {
            let done = std::mem::take(&mut *bin.lock().unwrap_or_else(|e| e.into_inner()));
            drop(done);
        }
        thread
    }

    /// Gives `done` back to thread `thread` (as [`Bins::empty_own`] named it), to be freed
    /// there; freed here when it has no bin.
    pub(crate) fn give_back(&self, thread: Option<usize>, done: T) {
        match thread.and_then(|t| self.0.get(t)) {
            Some(bin) => bin.lock().unwrap_or_else(|e| e.into_inner()).push(done),
            None => drop(done),
        }
    }
}
