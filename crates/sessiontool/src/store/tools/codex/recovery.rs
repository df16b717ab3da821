//! What `recover` does for Codex besides the rollout: Codex 0.169 resumes as "the latest" only
//! what its state database lists, so a rollout it has no row for, a stale row, or a row made
//! before this run repaired the rollout (its projection's offsets moved) is registered again,
//! as Codex itself would.

use std::path::Path;

use super::Codex;
use super::state::{self, Writer};
use crate::store::home::Home;
use crate::store::tools::{Reregistered, ToolStore};

pub(super) fn register_again<'b>(
    home: &Home,
    path: &Path,
    bytes: &dyn Fn() -> Result<&'b [u8], String>,
    repaired: bool,
    dry_run: bool,
) -> Result<Option<Reregistered>, String> {
    let Some(databases) = state::locate(home)? else {
        return Ok(None);
    };
    let bytes = bytes()?;
    if !repaired && !state::needs_registration(&databases, path, bytes)? {
        return Ok(None);
    }
    if dry_run {
        return Ok(Some(Reregistered {
            index: databases.state,
            id: None,
            backup: None,
        }));
    }
    let mut writer = Writer::begin(&databases, &crate::repair::now_stamp())?;
    let id = writer.register(&Codex.folder(home), path, bytes)?;
    let backups = writer.commit()?;
    Ok(Some(Reregistered {
        index: databases.state,
        id: Some(id),
        backup: backups.into_iter().next(),
    }))
}
