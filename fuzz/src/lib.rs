//! What the libFuzzer targets in `fuzz_targets/` share: each turns its input into a file name
//! and bytes and runs the entry points of `tests/hostile/exercise.rs` on them, the same code
//! and the same invariants as the proptest targets of `tests/fuzz.rs`. An invariant that does
//! not hold is a panic, which libFuzzer reports as a crash, like any panic in the library.
//!
//! With `SESSIONTOOL_FUZZ_SAVE=DIR` in the environment, each input is also written to
//! `DIR/libfuzzer-<target>.<hash>.<name>` before it runs: `scripts/cargo-fuzz` runs a crashing
//! input so to turn it into a fixture that `replay_fuzz_fixtures` replays (the name is the one
//! detection saw).

#[path = "../../tests/hostile/exercise.rs"]
mod exercise;

use std::path::PathBuf;
use std::sync::OnceLock;

use exercise::{Bench, Depth};
use sessiontool::formats;

/// File names detection knows a format by (and a plain one), chosen by the fsck and repair
/// targets.
const NAMES: &[&str] = &[
    "chat.jsonl",
    "rollout-2026-01-12T08-00-00-0199a3c4.jsonl",
    "session-2026-04-20T09-00-7c1e0a52.jsonl",
    "session.json",
    "checkpoint-fuzz.json",
    "20250731_143052_abc123.json",
];

/// The name a format's own files have.
fn name_of(format: &str) -> &'static str {
    match format {
        "codex-jsonl" => NAMES[1],
        "gemini-jsonl" => NAMES[2],
        "gemini-json" => NAMES[3],
        "checkpoint" => NAMES[4],
        "simple-agent-json" => NAMES[5],
        _ => NAMES[0],
    }
}

/// One folder per process for the files fsck and repair work on (below `FUZZ_WORKDIR` when
/// set: libFuzzer ends the process without running destructors, so the script removes it).
fn bench() -> &'static Bench {
    static BENCH: OnceLock<Bench> = OnceLock::new();
    BENCH.get_or_init(Bench::new)
}

/// Writes the input as a fixture when `SESSIONTOOL_FUZZ_SAVE` asks for it.
fn save(target: &str, name: &str, bytes: &[u8]) {
    let Some(dir) = std::env::var_os("SESSIONTOOL_FUZZ_SAVE").map(PathBuf::from) else {
        return;
    };
    let hash = bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    let file = dir.join(format!("libfuzzer-{target}.{hash:016x}.{name}"));
    std::fs::create_dir_all(&dir).expect("create SESSIONTOOL_FUZZ_SAVE");
    std::fs::write(&file, bytes).expect("write the fixture");
    eprintln!("saved {}", file.display());
}

fn held(target: &str, result: Result<(), String>) {
    if let Err(e) = result {
        panic!("{target}: invariant broken: {e}");
    }
}

/// One reader: its `detect`, `keys` of the input and of each line, `synthetic_result`,
/// `salvage`, `close_calls_in_document`, `read`; what it read written into every format and
/// read back by the resumable ones; what it wrote itself read back without a remark is
/// written again byte for byte. A JSONL file read without a remark is written back byte for
/// byte (these formats keep each record's bytes); a whole-file document need not be (its
/// white space, escapes and numbers are the writer's own).
pub fn read(format: &'static str, data: &[u8]) {
    let reader = formats::by_name(format).expect("a format of sessiontool");
    let name = name_of(format);
    let target = format!("read-{format}");
    save(&target, name, data);
    let depth = Depth {
        readers: Some(vec![format]),
        roundtrip: reader.is_jsonl(),
        forced: Vec::new(),
        repair: false,
        chunk: None,
        ..Depth::full()
    };
    held(&target, exercise::in_memory(name, data, &depth));
}

/// The records layer: `split_slice` and the streaming splitter (in chunks of 1 to 64 bytes,
/// from the first byte) agree, every record is JSON and every span is inside the input.
pub fn records(data: &[u8]) {
    let Some((&first, bytes)) = data.split_first() else {
        return;
    };
    save("records", "chat.jsonl", bytes);
    let chunk = 1 + first as usize % 64;
    held("records", exercise::records_layer(bytes, chunk));
}

/// The file name, the format forced besides detection, and fsck's block size, from the first
/// two bytes; the rest is the file.
fn on_disk_case(data: &[u8]) -> Option<(&'static str, Vec<&'static str>, usize, &[u8])> {
    let (&[a, b], bytes) = data.split_first_chunk::<2>()?;
    let name = NAMES[a as usize % NAMES.len()];
    let all = formats::all();
    let forced = match (a as usize / NAMES.len()) % (all.len() + 1) {
        0 => Vec::new(),
        i => vec![all[i - 1].name()],
    };
    let block_size = 1 + b as usize % 128;
    Some((name, forced, block_size, bytes))
}

/// fsck on the file, detected and as the forced format: it accounts for every byte, and the
/// report is the same in blocks of 64 KiB and of 1 to 128 bytes.
pub fn fsck(data: &[u8]) {
    let Some((name, forced, block_size, bytes)) = on_disk_case(data) else {
        return;
    };
    save("fsck", name, bytes);
    let depth = Depth {
        forced,
        readers: Some(Vec::new()),
        repair: false,
        chunk: None,
        small_blocks: vec![block_size],
        ..Depth::full()
    };
    held("fsck", exercise::on_disk(bench(), name, bytes, &depth));
}

/// `fsck --repair` of a copy of the file, detected and as the forced format: a refused repair
/// leaves the file and its folder as they were; a repair keeps a byte-identical backup, writes
/// only in the file's folder, loses nothing (every record in the output, every dropped byte in
/// the sidecar), leaves nothing to fix, and a second repair changes nothing.
pub fn repair(data: &[u8]) {
    let Some((name, forced, block_size, bytes)) = on_disk_case(data) else {
        return;
    };
    save("repair", name, bytes);
    let depth = Depth {
        forced,
        readers: Some(Vec::new()),
        repair: true,
        chunk: None,
        block_size,
        small_blocks: Vec::new(),
        ..Depth::full()
    };
    held("repair", exercise::on_disk(bench(), name, bytes, &depth));
}
