//! pi, llxprt-code and the Go agent written back into their own formats through the two
//! passes (each format's target takes its own sessions too), against the whole-session path:
//! every fixture and real sample, the same files damaged and cut in the ways the records layer
//! names, with each leaf, and with the session moved to another project (the header rebuilt).
//! Every one of these conversions must be taken by the engine: a session of these formats is
//! never held whole to be written back.

use std::path::Path;

use sessiontool::model::Meta;

use super::{agree, fmt, leaves_in, no_adjust, options};

const FORMATS: [&str; 3] = ["pi-jsonl", "llxprt-jsonl", "agent-jsonl"];

/// The files of `format`: its fixtures and, for pi, the real samples.
fn files_of(format: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = super::files(&root.join("fixtures").join(format));
    if format == "pi-jsonl"
        && let Some(samples) = super::common::prerequisite::shared("pi")
    {
        paths.extend(
            super::files(&samples)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl")),
        );
    }
    assert!(paths.len() >= 3, "{format}: {paths:?}");
    paths
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

/// `bytes` and the same lines damaged: no final line end, a torn last line, CRLF line ends, a
/// BOM, a blank line and NUL padding, a line that is not JSON, two records glued, the header
/// lost, a line written twice.
fn variants(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let joined = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut out = vec![("as it is", bytes.to_vec())];
    out.push((
        "no final line end",
        text.trim_end_matches('\n').as_bytes().to_vec(),
    ));
    let mut torn = text.clone();
    torn.push_str("{\"type\":\"mess");
    out.push(("torn", torn.into_bytes()));
    out.push(("crlf", text.replace('\n', "\r\n").into_bytes()));
    out.push(("bom", format!("\u{feff}{text}").into_bytes()));
    if lines.len() >= 2 {
        let mut padded = joined(&lines[..1]);
        padded.push('\n');
        padded.push_str(&joined(&lines[1..]));
        padded.push_str("\0\0\0\0");
        out.push(("blank and padding", padded.into_bytes()));
        let mut broken = joined(&lines[..1]);
        broken.push_str("not json at all\n");
        broken.push_str(&joined(&lines[1..]));
        out.push(("not json", broken.into_bytes()));
        let glued = format!("{}{}\n{}", lines[0], lines[1], joined(&lines[2..]));
        out.push(("glued", glued.into_bytes()));
        out.push(("no header", joined(&lines[1..]).into_bytes()));
        let mut twice = joined(&lines);
        twice.push_str(lines[lines.len() - 1]);
        twice.push('\n');
        out.push(("a line twice", twice.into_bytes()));
    }
    out
}

#[test]
fn every_line_format_is_written_back_in_two_passes_as_the_whole_session_path_writes_it() {
    let mut taken = 0;
    for format in FORMATS {
        let to = fmt(format);
        for (name, bytes) in files_of(format) {
            for (how, bytes) in variants(&bytes) {
                let name = format!("{name} ({how})");
                for leaf in leaves_in(format, &bytes) {
                    let o = options(leaf.as_deref());
                    // Forced through the format's reader: a damaged head may detect as none.
                    assert!(
                        agree(&name, &bytes, Some(to), to, &o, &no_adjust),
                        "{name} -> {format} (leaf {leaf:?}): not taken by the engine"
                    );
                    taken += 1;
                }
            }
        }
    }
    assert!(taken >= 100, "{taken}");
}

#[test]
fn a_line_format_session_moved_to_another_project_is_written_back_as_the_whole_path_writes_it() {
    let place = |m: &mut Meta| {
        m.cwd = Some("/elsewhere/app".into());
        m.project_hash = Some("abc".into());
    };
    for format in FORMATS {
        let to = fmt(format);
        for (name, bytes) in files_of(format) {
            assert!(
                agree(&name, &bytes, Some(to), to, &options(None), &place),
                "{name} -> {format}: not taken by the engine"
            );
        }
    }
}
