//! `sessiontool detect`: which format each file is in.

use std::path::PathBuf;

use anstream::println;
use clap::{Parser, ValueHint};
use serde::Serialize;
use sessiontool::formats;

use crate::error::{CliError, EXIT_INPUT};
use crate::escape;
use crate::input;

const EXAMPLES: &str = "Examples:
  sessiontool detect ~/.gemini/tmp/*/chats/*.json
  sessiontool detect --json session.jsonl";

/// Tell which session format each file is in (from its content).
#[derive(Parser)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Files to look at (`-` for standard input).
    #[arg(required = true, value_hint = ValueHint::FilePath)]
    files: Vec<PathBuf>,
    /// One JSON document on standard output (schema sessiontool.detect/1).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Detected {
    file: String,
    format: Option<&'static str>,
    tool: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let mut results = Vec::new();
    for f in &args.files {
        let r = match input::load(f) {
            Ok(l) => {
                let found = formats::detect(l.path.as_deref(), &l.bytes);
                Detected {
                    file: l.name,
                    format: found.map(|f| f.name()),
                    tool: found.map(|f| f.tool()),
                    error: None,
                }
            }
            Err(e) => Detected {
                file: f.display().to_string(),
                format: None,
                tool: None,
                error: Some(e.message),
            },
        };
        results.push(r);
    }
    if args.json {
        let doc = serde_json::json!({"schema": "sessiontool.detect/1", "files": results});
        crate::report::print_json(&doc);
    } else {
        for r in &results {
            let file = escape::line(&r.file);
            match (&r.error, r.format) {
                (Some(e), _) => println!(
                    "{file}: {} {}",
                    crate::style::paint(crate::style::ERROR, "error:"),
                    escape::line(e)
                ),
                (None, Some(f)) => println!("{file}: {f} ({})", r.tool.unwrap_or("")),
                (None, None) => {
                    println!("{file}: unknown (not a session format sessiontool reads)")
                }
            }
        }
    }
    let all_known = results.iter().all(|r| r.format.is_some());
    Ok(if all_known { 0 } else { EXIT_INPUT })
}
