//! `show` of a session read in two passes ([`View`]): the header as soon as pass one is done,
//! then each node of the branch read, written and dropped, so the first screen comes at once
//! and memory is bounded by the number of records, whatever their size; `show --json` the same
//! way, every node serialized as it is read. The output is the whole-session path's, byte for
//! byte (`tests/engine/view.rs` holds it to it).
//!
//! What goes through the whole session instead ([`show`] returns `None`): standard input and
//! sessions in a database (read whole as they are) and database files named without a
//! session (the whole path's error), formats [`View`] does not read yet (all
//! but Claude Code JSONL), `--from` naming a format the content plainly is not (the whole
//! path's error).

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use sessiontool::diag::Diagnostic;
use sessiontool::engine::MadeFor;
use sessiontool::engine::view::View;
use sessiontool::formats::Format;
use sessiontool::model::Meta;

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
    input::with_view(file, from, |name, view| {
        report::print_diagnostics(view.diagnostics());
        let format = view.format().name();
        let leaf = match leaf {
            Some(id) => view.find(id).map_err(|e| leaf_error(e, name))?,
            None => match view.head() {
                Some(h) => h,
                None => {
                    anstream::println!("{}", empty(name, format));
                    return Ok(0);
                }
            },
        };
        let mut out = std::io::BufWriter::new(anstream::stdout().lock());
        render(&mut out, name, format, view, leaf, width)
            .and_then(|()| out.flush().map_err(Failed::Output))
            .map_err(|e| match e {
                Failed::Input(e) => input::read_error(file, e),
                Failed::Output(e) => CliError::output(format!("cannot write standard output: {e}")),
            })?;
        Ok(0)
    })
}

/// `show --json` of the session in `file` when the two-pass reading covers it: the document
/// the whole path prints (schema sessiontool.show/1), each node serialized as it is read.
pub(super) fn show_json(
    file: &Path,
    from: Option<&'static dyn Format>,
) -> Result<Option<i32>, CliError> {
    #[derive(Serialize)]
    struct Doc<'a> {
        schema: &'static str,
        file: &'a str,
        format: &'a str,
        diagnostics: &'a [Diagnostic],
        session: SessionDoc<'a>,
    }
    /// [`sessiontool::model::Session`]'s fields, in its order.
    #[derive(Serialize)]
    struct SessionDoc<'a> {
        meta: &'a Meta,
        nodes: Nodes<'a>,
    }
    input::with_view(file, from, |name, view| {
        report::print_json(&Doc {
            schema: "sessiontool.show/1",
            file: name,
            format: view.format().name(),
            diagnostics: view.diagnostics(),
            session: SessionDoc {
                meta: view.meta(),
                nodes: Nodes(view),
            },
        });
        Ok(0)
    })
}

/// Every node of a view, in file order, serialized as each is read.
struct Nodes<'a>(&'a View<'a>);

impl Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let view = self.0;
        let mut seq = serializer.serialize_seq(Some(view.len()))?;
        input::serialize_each_node(view, MadeFor::Anyone, &mut seq, |seq, _, node| {
            seq.serialize_element(node)
        })?;
        seq.end()
    }
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
    // The text shows no field the reader does not interpret: those are not read.
    let read = view.each_node(&path, MadeFor::Counting, |_, node| {
        let mut others = Vec::new();
        while let Some(&&(p, child)) = side.peek()
            && p == pos
        {
            others.push(view.id(child));
            side.next();
        }
        pos += 1;
        output = render_node(out, node, width).and_then(|()| render_branch_point(out, &others));
        // Stops the reading; the output's error is the one said.
        output
            .as_ref()
            .map_err(|e| std::io::Error::new(e.kind(), "output failed"))
            .copied()
    });
    output.map_err(Failed::Output)?;
    read.map_err(Failed::Input)
}
