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
                let mut start = self.target(&p)?;
                // From a root (the cursor's usual place after a metric change) the
                // heaviest root for the current metric is the place to start: with a
                // CPU and a GPU thread, `m gpu_time` then H must follow the GPU one.
                if p.is_none() && self.tree.parent(start).is_none() {
                    start = self.hottest_root().unwrap_or(start);
                }
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

    /// The root with the largest value of the primary inclusive column (ties: the
    /// first in the current order); None when no root has a value.
    fn hottest_root(&self) -> Option<u32> {
        let col = self.inclusive_column();
        let vals = self.profile.metrics.values(&col)?;
        let po = &self.tree.po;
        po.root_positions()
            .map(|p| po.node[p as usize])
            .filter(|&n| vals.get(n as usize).is_some_and(|v| !v.is_nan()))
            .fold(None, |best: Option<u32>, n| match best {
                Some(b) if vals[b as usize] >= vals[n as usize] => Some(b),
                _ => Some(n),
            })
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
