//! `sessiontool formats`: the formats this build reads and writes.

use clap::Parser;
use serde::Serialize;
use sessiontool::formats;

use crate::error::CliError;

/// List the session formats sessiontool reads and writes.
#[derive(Parser)]
#[command(after_help = "Example:\n  sessiontool formats --json")]
pub struct Args {
    /// One JSON array on standard output.
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
            layout: if f.is_jsonl() { "jsonl" } else { "json" },
            read: true,
            write: true,
            description: f.description(),
        })
        .collect();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serializes")
        );
    } else {
        println!("{:<14} {:<8} {:<6} description", "format", "tool", "layout");
        for r in &rows {
            println!(
                "{:<14} {:<8} {:<6} {}",
                r.name, r.tool, r.layout, r.description
            );
        }
    }
    Ok(0)
}
