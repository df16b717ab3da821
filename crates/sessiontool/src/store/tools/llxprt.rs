//! llxprt-code: `<tmp>/<sha256>/chats/session-<YYYY-MM-DDTHH-MM-SS>-<id12>.jsonl`, `<tmp>`
//! being `$LLXPRT_LOG_HOME/tmp` (v0.10+) or `~/.llxprt/tmp` (v0.9).

use std::path::PathBuf;

use super::{NewSession, PlaceError, Target, ToolStore, by_id, inside};
use crate::ids::sha256_hex;
use crate::store::home::Home;
use crate::store::names::{prefix, utc};
use crate::store::stored::{Discovery, FolderKey, Stored, StoredKind, file_name};
use crate::store::tool::Tool;

pub struct Llxprt;

/// Where llxprt-code v0.10+ keeps its state (`tmp/` among it) instead of
/// `~/.local/state/llxprt-code`.
const LOG_HOME: &str = "LLXPRT_LOG_HOME";

impl Tool {
    #[allow(non_upper_case_globals)]
    pub const Llxprt: Tool = Tool::of(&Llxprt);
}

impl ToolStore for Llxprt {
    fn name(&self) -> &'static str {
        "llxprt"
    }

    fn current_format(&self) -> &'static str {
        "llxprt-jsonl"
    }

    fn overrides(&self) -> &'static [&'static str] {
        &[LOG_HOME]
    }

    /// `$LLXPRT_LOG_HOME` (default `~/.local/state/llxprt-code`): the current layout's.
    fn folder(&self, home: &Home) -> PathBuf {
        home.override_or(LOG_HOME, || home.dir().join(".local/state/llxprt-code"))
    }

    fn bases(&self, home: &Home) -> Vec<PathBuf> {
        tmps(home).to_vec()
    }

    fn resume(&self, id: Option<&str>, _path: &str) -> Option<Vec<String>> {
        by_id(&["llxprt", "--continue"], id)
    }

    fn home_variable(&self, home: &Home) -> Option<(&'static str, PathBuf)> {
        // Its sessions are in `$LLXPRT_LOG_HOME/tmp`.
        Some((LOG_HOME, self.folder(home)))
    }

    fn roots(&self, home: &Home) -> Vec<PathBuf> {
        tmps(home).to_vec()
    }

    fn discover(&self, home: &Home, found: &mut Discovery) {
        for root in tmps(home) {
            for dir in found.dirs_in(&root) {
                let folder = FolderKey::Sha256 {
                    hash: file_name(&dir).to_string(),
                };
                for path in found.files_in(&dir.join("chats"), |n| n.ends_with(".jsonl")) {
                    found.files.push(Stored {
                        tool: Tool::Llxprt,
                        path,
                        kind: StoredKind::Session,
                        folder: folder.clone(),
                    });
                }
            }
        }
    }

    fn place(&self, home: &Home, new: &NewSession) -> Result<Target, PlaceError> {
        if new.format.name() != "llxprt-jsonl" {
            return Err(new.refuse_format(Tool::Llxprt));
        }
        let hash = sha256_hex(new.project);
        // The layout the project already uses, else the current one.
        let roots = tmps(home);
        let root = roots
            .iter()
            .find(|r| r.join(&hash).is_dir())
            .unwrap_or(&roots[0]);
        let id = new.safe_id()?;
        let stamp = utc(new.start(), "%Y-%m-%dT%H-%M-%S");
        let file = format!("session-{stamp}-{}.jsonl", prefix(&id, 12));
        Ok(Target::at(inside(root, &[&hash, "chats", &file])?))
    }
}

/// llxprt-code's `tmp` folders, newest layout first: `$LLXPRT_LOG_HOME/tmp` (v0.10+) and
/// `~/.llxprt/tmp` (v0.9).
fn tmps(home: &Home) -> [PathBuf; 2] {
    [
        Llxprt.folder(home).join("tmp"),
        home.dir().join(".llxprt/tmp"),
    ]
}
