//! `show` of a session read in two passes ([`View`]): the header as soon as pass one is done,
//! then each node of the branch read, written and dropped, so the first screen comes at once
//! and memory is bounded by the number of records, whatever their size. The output is the
//! whole-session path's, byte for byte (the tests below hold it to it).
//!
//! What goes through the whole session instead ([`show`] returns `None`): standard input and
//! sessions in a database (read whole as they are) and database files named without a
//! session (the whole path's error), formats [`View`] does not read yet (all
//! but Claude Code JSONL), `--from` naming a format the content plainly is not (the whole
//! path's error), and `--json` (the whole model, every node at once).

use std::io::Write;
use std::path::Path;

use sessiontool::engine::view::View;
use sessiontool::engine::{FileSource, Source};
use sessiontool::formats::Format;
use sessiontool::formats::database::{self, Address};

use super::{Header, empty, leaf_error, render_branch_point, render_node};
use crate::error::CliError;
use crate::input;
use crate::report;

/// Shows the session in `file` when the two-pass reading covers it: its exit code, or `None`
/// (nothing said yet) when the whole path must show it.
pub(super) fn show(
    file: &Path,
    from: Option<&'static dyn Format>,
    leaf: Option<&str>,
    width: Option<usize>,
) -> Result<Option<i32>, CliError> {
    if file == Path::new("-") || Address::parse(file).is_some() {
        return Ok(None);
    }
    let name = file.display().to_string();
    let read_error = |e| input::read_error(file, e);
    let source = FileSource::new(input::open(file)?).map_err(read_error)?;
    // A database file named without a session: the whole path says to name one.
    let mut magic = [0; database::SQLITE_MAGIC.len()];
    if source.read_exact_at(&mut magic, 0).is_ok() && magic == *database::SQLITE_MAGIC {
        return Ok(None);
    }
    let Some(view) = View::open(&name, Some(file), &source, from).map_err(read_error)? else {
        return Ok(None);
    };
    report::print_diagnostics(view.diagnostics());
    let format = view.format().name();
    let leaf = match leaf {
        Some(id) => view.find(id).map_err(|e| leaf_error(e, &name))?,
        None => match view.head() {
            Some(h) => h,
            None => {
                anstream::println!("{}", empty(&name, format));
                return Ok(Some(0));
            }
        },
    };
    let mut out = std::io::BufWriter::new(anstream::stdout().lock());
    render(&mut out, &name, format, &view, leaf, width)
        .and_then(|()| out.flush().map_err(Failed::Output))
        .map_err(|e| match e {
            Failed::Input(e) => read_error(e),
            Failed::Output(e) => CliError::output(format!("cannot write standard output: {e}")),
        })?;
    Ok(Some(0))
}

/// What stopped the rendering: reading the input again (pass two), or writing.
#[derive(Debug)]
enum Failed {
    Input(std::io::Error),
    Output(std::io::Error),
}

/// [`super::render`] of a [`View`].
fn render(
    out: &mut impl Write,
    name: &str,
    format: &str,
    view: &View,
    leaf: u32,
    width: Option<usize>,
) -> Result<(), Failed> {
    let path = view.path_to(leaf);
    let cut_at = path.first().and_then(|&i| view.parent_id(i));
    let header = Header {
        name,
        format,
        meta: view.meta(),
        nodes: view.len(),
        on_branch: path.len(),
        leaves: view.branch_leaves(),
        cut_at: cut_at.as_deref(),
    };
    header.render(out).map_err(Failed::Output)?;
    let side = view.side_children(&path);
    let mut side = side.iter().peekable();
    let mut pos = 0;
    let mut output = Ok(());
    let read = view.each_node(&path, |_, node| {
        let mut others = Vec::new();
        while let Some(&&(p, child)) = side.peek()
            && p == pos
        {
            others.push(view.id(child));
            side.next();
        }
        pos += 1;
        output = render_node(out, &node, width).and_then(|()| render_branch_point(out, &others));
        // Stops the reading; the output's error is the one said.
        output
            .as_ref()
            .map_err(|e| std::io::Error::new(e.kind(), "output failed"))
            .copied()
    });
    output.map_err(Failed::Output)?;
    read.map_err(Failed::Input)
}
