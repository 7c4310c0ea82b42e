//! Folding: toggle, expand, collapse (of a node, its children or its subtree),
//! collapse-or-parent, hot-path. A missing path means the node under the cursor; the
//! log names the node by its explicit path.

use std::fmt;

use crate::app::command::{write_opt, Command};
use crate::app::{App, CmdError};

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Toggle(p)
        | Command::Expand(p)
        | Command::Collapse(p)
        | Command::ExpandChildren(p)
        | Command::CollapseChildren(p)
        | Command::ExpandAll(p)
        | Command::CollapseAll(p)
        | Command::HotPath(p) => write_opt(f, c.name(), p),
        _ => f.write_str(c.name()),
    }
}

impl App {
    pub(super) fn fold_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::Toggle(p) => {
                let n = self.target(&p)?;
                let open = !self.tree.is_open(n);
                self.fold(n, open, |n| Command::Toggle(Some(n)))
            }
            Command::Expand(p) => {
                let n = self.target(&p)?;
                self.fold(n, true, |n| Command::Expand(Some(n)))
            }
            Command::Collapse(p) => {
                let n = self.target(&p)?;
                self.fold(n, false, |n| Command::Collapse(Some(n)))
            }
            Command::CollapseOrParent => {
                let n = self.target(&None)?;
                let has_kids = self.profile.cct.has_children(n);
                if self.tree.is_open(n) && has_kids {
                    return self.fold(n, false, |n| Command::Collapse(Some(n)));
                }
                if let Some(p) = self.tree.parent(n) {
                    self.tree.reveal(p);
                }
                Ok(self.log_nav.then_some(Command::Parent))
            }
            Command::ExpandChildren(ref p) | Command::CollapseChildren(ref p) => {
                let n = self.target(p)?;
                let open = matches!(cmd, Command::ExpandChildren(_));
                if open {
                    self.tree.set_open(n, true);
                }
                for c in self.tree.children(n) {
                    self.tree.set_open(c, open);
                }
                self.tree.rebuild();
                let path = Some(self.path_of(n));
                Ok(Some(if open {
                    Command::ExpandChildren(path)
                } else {
                    Command::CollapseChildren(path)
                }))
            }
            Command::ExpandAll(ref p) | Command::CollapseAll(ref p) => {
                let n = self.target(p)?;
                let open = matches!(cmd, Command::ExpandAll(_));
                self.tree.set_subtree(n, open);
                self.tree.rebuild();
                let path = Some(self.path_of(n));
                Ok(Some(if open {
                    Command::ExpandAll(path)
                } else {
                    Command::CollapseAll(path)
                }))
            }
            Command::HotPath(p) => {
                let start = self.target(&p)?;
                self.hot_path(start);
                Ok(Some(Command::HotPath(Some(self.path_of(start)))))
            }
            other => Err(format!("{other} is not a fold command").into()),
        }
    }

    fn fold(
        &mut self,
        n: u32,
        open: bool,
        canonical: fn(String) -> Command,
    ) -> Result<Option<Command>, CmdError> {
        self.tree.set_open(n, open);
        self.tree.rebuild();
        Ok(Some(canonical(self.path_of(n))))
    }

    /// Opens the heaviest child repeatedly from `start` and moves the cursor there.
    fn hot_path(&mut self, start: u32) {
        let col = self.inclusive_column();
        let vals = self.profile.metrics.values(&col).unwrap_or(&[]).to_vec();
        // A node without a value is never the heaviest.
        let value = |n: u32| {
            let v = vals.get(n as usize).copied().unwrap_or(f64::NAN);
            if v.is_nan() {
                f64::NEG_INFINITY
            } else {
                v
            }
        };
        let mut n = start;
        loop {
            let best = self
                .tree
                .children(n)
                .into_iter()
                .max_by(|&a, &b| value(a).total_cmp(&value(b)).then(b.cmp(&a)));
            match best {
                Some(c) => {
                    self.tree.set_open(n, true);
                    n = c;
                }
                None => break,
            }
        }
        self.tree.rebuild();
        self.tree.reveal(n);
    }
}
