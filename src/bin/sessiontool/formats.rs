//! `sessiontool formats`: the formats this build reads and writes.

use clap::Parser;
use serde::Serialize;
use sessiontool::formats;

use crate::error::CliError;

/// List the session formats sessiontool reads and writes.
#[derive(Parser)]
#[command(after_help = "Example:\n  sessiontool formats --json")]
pub struct Args {
    /// One JSON document on standard output (schema sessiontool.formats/1).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    name: &'static str,
    tool: &'static str,
    layout: &'static str,
    read: bool,
    write: bool,
    description: &'static str,
}

pub fn run(args: Args) -> Result<i32, CliError> {
    let rows: Vec<Row> = formats::all()
        .iter()
        .map(|f| Row {
            name: f.name(),
            tool: f.tool(),
            // Exports (markdown, html) are written for people: not JSON, and never read back.
            layout: match (f.is_jsonl(), f.resumable()) {
                (true, _) => "jsonl",
                (false, true) => "json",
                (false, false) => f.name(),
            },
            read: f.resumable(),
            write: true,
            description: f.description(),
        })
        .collect();
    if args.json {
        let doc = serde_json::json!({"schema": "sessiontool.formats/1", "formats": rows});
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializes")
        );
    } else {
        println!("{:<14} {:<8} {:<8} description", "format", "tool", "layout");
        for r in &rows {
            println!(
                "{:<14} {:<8} {:<8} {}",
                r.name, r.tool, r.layout, r.description
            );
        }
    }
    Ok(0)
}
