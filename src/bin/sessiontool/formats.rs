//! `sessiontool formats`: the formats this build reads and writes.

use anstream::println;
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
            write: f.writable(),
            description: f.description(),
        })
        .collect();
    if args.json {
        let doc = serde_json::json!({"schema": "sessiontool.formats/1", "formats": rows});
        crate::report::print_json(&doc);
    } else {
        // Columns as wide as their longest value.
        let width = |f: fn(&Row) -> &str, head: &str| {
            rows.iter()
                .map(|r| f(r).len())
                .max()
                .unwrap_or(0)
                .max(head.len())
        };
        let (n, t, l) = (
            width(|r| r.name, "format"),
            width(|r| r.tool, "tool"),
            width(|r| r.layout, "layout"),
        );
        let head = format!(
            "{:<n$} {:<t$} {:<l$} description",
            "format", "tool", "layout"
        );
        println!("{}", crate::style::bold(&head));
        for r in &rows {
            println!(
                "{:<n$} {:<t$} {:<l$} {}",
                r.name, r.tool, r.layout, r.description
            );
        }
    }
    Ok(0)
}
