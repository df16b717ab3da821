//! Sessions and a sink for the unit tests of the commands that draw a session (tree, show):
//! deep ones, built in memory (reading a million records would take minutes in a debug
//! build), and a writer that measures what was drawn without keeping it.

use std::sync::LazyLock;

use sessiontool::model::{Body, Extra, Message, Node, Part, Role, Session};

/// A chain `depth` nodes deep; with `comb`, every node of it but the first also has a leaf
/// of its own beside it (so every node of the chain is a branch point), written after it.
pub fn deep(depth: usize, comb: bool) -> Session {
    let node = |id: String, parent: Option<&String>, role| Node {
        parent: parent.cloned(),
        timestamp: None,
        body: Body::Message(Message::new(
            role,
            vec![Part::text(format!("text of {id}"))],
        )),
        extra: Extra::new(),
        origin: None,
        id,
    };
    let mut nodes = Vec::with_capacity(if comb { depth * 2 } else { depth });
    let mut parent: Option<String> = None;
    for i in 0..depth {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        nodes.push(node(format!("n{i}"), parent.as_ref(), role));
        if comb && i > 0 {
            nodes.push(node(format!("s{i}"), parent.as_ref(), Role::User));
        }
        parent = Some(format!("n{i}"));
    }
    Session {
        nodes,
        ..Default::default()
    }
}

/// A million-deep chain, built once for every test that draws it.
pub static MILLION_CHAIN: LazyLock<Session> = LazyLock::new(|| deep(1_000_000, false));

/// What was written: lines, bytes and the longest line, in bytes.
#[derive(Default, Debug)]
pub struct Measured {
    pub lines: usize,
    pub bytes: usize,
    pub longest: usize,
    current: usize,
    /// Colour codes are left out, as a terminal shows the line (and as a pipe gets it).
    colour: anstream::adapter::StripBytes,
}

impl std::io::Write for Measured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut colour = std::mem::take(&mut self.colour);
        for shown in colour.strip_next(buf) {
            for &b in shown {
                if b == b'\n' {
                    self.lines += 1;
                    self.longest = self.longest.max(self.current);
                    self.current = 0;
                } else {
                    self.current += 1;
                }
            }
            self.bytes += shown.len();
        }
        self.colour = colour;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
