//! A test hook that makes the write paths fail or die at named points, so the tests can prove
//! that no step of a write loses data. Compiled only into debug builds (and builds with the
//! `fault-injection` feature); a release build has no hook at all.
//!
//! `SESSIONTOOL_FAULT=<point>[@N]:<error|abort>`: at the N-th time (default 1) the process
//! reaches `<point>`, return an I/O error from there (`error`) or abort the process on the spot
//! as a crash or SIGKILL would (`abort`). The points are listed in [`POINTS`].

/// Every point, in the order a write reaches them.
pub const POINTS: &[&str] = &[
    // crate::io::write_atomic (convert, convert --store, registries)
    "write.temp-written",
    "write.before-backup",
    "write.before-rename",
    "write.after-rename",
    // crate::repair (repair, fsck --repair, recover)
    "repair.temp-written",
    "repair.before-backup",
    "repair.before-rename",
    "repair.after-rename",
    // crate::store::txn (migrate, relocate): once per file
    "txn.staged",
    "txn.before-backup",
    "txn.before-rename",
    "txn.after-rename",
    // crate::store::codex_state (convert --store, recover, relocate into Codex's database)
    "codex-state.backed-up",
    "codex-state.before-commit",
];

/// Passes unless the environment asks for a fault here.
#[inline]
pub fn point(name: &str) -> std::io::Result<()> {
    #[cfg(any(debug_assertions, feature = "fault-injection"))]
    {
        armed::check(name)
    }
    #[cfg(not(any(debug_assertions, feature = "fault-injection")))]
    {
        let _ = name;
        Ok(())
    }
}

#[cfg(any(debug_assertions, feature = "fault-injection"))]
mod armed {
    use std::collections::HashMap;
    use std::sync::Mutex;

    static HITS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

    pub fn check(name: &str) -> std::io::Result<()> {
        let Ok(spec) = std::env::var("SESSIONTOOL_FAULT") else {
            return Ok(());
        };
        let (target, mode) = spec.rsplit_once(':').unwrap_or((spec.as_str(), "error"));
        let (target, nth) = match target.split_once('@') {
            Some((t, n)) => (t, n.parse::<usize>().unwrap_or(1)),
            None => (target, 1),
        };
        if target != name {
            return Ok(());
        }
        debug_assert!(super::POINTS.contains(&name), "unlisted fault point {name}");
        let hit = {
            let mut hits = HITS.lock().unwrap_or_else(|e| e.into_inner());
            let n = hits
                .get_or_insert_with(HashMap::new)
                .entry(name.to_string())
                .or_default();
            *n += 1;
            *n
        };
        if hit != nth {
            return Ok(());
        }
        if mode == "abort" {
            eprintln!("sessiontool: injected crash at {name}");
            std::process::abort();
        }
        Err(std::io::Error::other(format!("injected fault at {name}")))
    }
}
