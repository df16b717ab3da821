//! The cheap per-line facts of a rollout line, for fsck: one pass over the line's fields that
//! borrows strings and skips the payload's content; only a `response_item` payload's `type`
//! and `call_id` are read.

use crate::formats::Keys;
use crate::formats::keys::{self, object, string};
use crate::json::{Outlined, Raw};

/// `None` when the line is not a JSON object (or not JSON).
pub(super) fn codex_keys(record: &[u8]) -> Option<Keys<'_>> {
    let l = keys::record(record)?;
    if let Some(refused) = refused(&l) {
        return Some(refused);
    }
    let [timestamp, kind, payload] = l.pick(["timestamp", "type", "payload"]);
    let kind = string(kind);
    let mut missing = Vec::new();
    if string(timestamp).is_none() {
        missing.push("timestamp");
    }
    if kind.is_none() {
        missing.push("type");
    }
    if payload.is_none() {
        missing.push("payload");
    }
    let mut k = Keys {
        missing,
        ..Keys::default()
    };
    match kind.as_deref() {
        Some("response_item") => {
            // The payload's fields, from the line's outline.
            if let Some(p) = object(payload) {
                item_fields(l.pick_within(p, ["type", "call_id", "name"]), &mut k);
            }
        }
        Some("session_meta") => k.subagent = is_thread_spawn(object(payload)),
        _ => {}
    }
    k.kind = kind;
    Some(k)
}

/// The keys of a line Codex cannot read: serde_json, which Codex reads each line with into a
/// `Value` (codex-rs's rollout recorder, which skips such a line with a warning), refuses what
/// `JSON.parse` takes (a lone surrogate escape, nesting past 128). Only checked where the
/// grammar check noted something serde_json may refuse.
pub(super) fn refused<'a>(line: &Outlined<'a>) -> Option<Keys<'a>> {
    if line.facts().serde_reads_it() {
        return None;
    }
    let e = serde_json::from_str::<serde_json::Value>(line.text()).err()?;
    Some(Keys {
        refused: Some(refusal(&e)),
        ..Keys::default()
    })
}

/// Why Codex skips a line serde_json refuses, as fsck and the readers say it.
pub(super) fn refusal(e: &serde_json::Error) -> String {
    format!("Codex cannot parse this line ({e}) and skips it")
}

/// The calls and results of one response item (a `response_item` line's payload, or a bare
/// line of the older layout).
pub(super) fn item_keys<'a>(item: Option<Raw<'a>>, k: &mut Keys<'a>) {
    let Some(item) = item else { return };
    item_fields(item.pick(["type", "call_id", "name"]), k);
}

/// [`item_keys`] from the item's `type`, `call_id` and `name`.
fn item_fields<'a>([item_kind, id, name]: [Option<Raw<'a>>; 3], k: &mut Keys<'a>) {
    let (Some(item_kind), Some(id)) = (string(item_kind), string(id)) else {
        return;
    };
    match &*item_kind {
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            if string(name).as_deref() == Some(SPAWN_AGENT) {
                k.spawns.push(id.clone());
            }
            k.calls.push(id);
        }
        "function_call_output" | "custom_tool_call_output" => k.results.push(id),
        _ => {}
    }
}

/// The tool a Codex agent calls to start a sub-agent (codex-rs `tools/handlers/multi_agents`).
pub(super) const SPAWN_AGENT: &str = "spawn_agent";

/// Whether a `session_meta` payload says the rollout is a sub-agent's spawned by its parent's
/// `spawn_agent` call (`"source": {"subagent": {"thread_spawn": {"parent_thread_id", ...}}}`,
/// `SessionSource::SubAgent(SubAgentSource::ThreadSpawn)` in codex-rs/protocol): its history
/// opens with a copy of the parent's, that call included.
pub(super) fn is_thread_spawn(payload: Option<Raw<'_>>) -> bool {
    let [source] = payload.map_or([None], |p| p.pick(["source"]));
    let [subagent] = object(source).map_or([None], |s| s.pick(["subagent"]));
    let [spawn] = object(subagent).map_or([None], |s| s.pick(["thread_spawn"]));
    object(spawn).is_some()
}
