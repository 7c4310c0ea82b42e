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

    /// Opens the heaviest child repeatedly from `start` while that child outweighs the
    /// node's own (self) value, moves the cursor to where it stopped, and says on the
    /// status line where and why: a node whose self value exceeds its heaviest child
    /// is where the cost is, not its negligible leaves (issue 24).
    fn hot_path(&mut self, start: u32) {
        let col = self.inclusive_column();
        let inc = self.profile.metrics.values(&col).unwrap_or(&[]).to_vec();
        // The exclusive column when the metric has one (`time` for `time (inc)`);
        // otherwise self is what the node's value leaves over its children.
        let exc = (col != self.metric)
            .then(|| {
                self.profile
                    .metrics
                    .values(&self.metric)
                    .map(<[f64]>::to_vec)
            })
            .flatten();
        // A ratio or a spread statistic has no "self share" to weigh against a child:
        // there the path goes down to a leaf, as it always did.
        let additive = self.is_additive(&col);
        let mut n = start;
        let stop = loop {
            let kids = self.tree.children(n);
            let step = match next_on_hot_path(&inc, exc.as_deref(), n, &kids) {
                Step::Stop(Stop::SelfHeavier { child, .. }) if !additive => Step::Into(child),
                s => s,
            };
            match step {
                Step::Into(c) => {
                    self.tree.set_open(n, true);
                    n = c;
                }
                Step::Stop(why) => break why,
            }
        };
        self.tree.rebuild();
        self.tree.reveal(n);
        let cct = &self.profile.cct;
        let text = stop.describe(cct.name(n), &inc, n, |c| cct.name(c).to_string());
        self.info(text);
    }
}

/// One step of the hot path from a node.
#[derive(Debug, PartialEq)]
enum Step {
    Into(u32),
    Stop(Stop),
}

/// Why the hot path stopped where it did.
#[derive(Debug, PartialEq)]
enum Stop {
    /// The node has no child in the view.
    Leaf,
    /// The node's self value exceeds its heaviest child's inclusive value.
    SelfHeavier {
        own: f64,
        child: u32,
        child_value: f64,
    },
}

/// Value of a node in a column; no value (NaN, or no column) counts as nothing.
fn value_in(col: &[f64], n: u32) -> Option<f64> {
    col.get(n as usize).copied().filter(|v| !v.is_nan())
}

/// The hot path's rule at node `n` with children `kids` (in the view): step into the
/// heaviest child (ties: the first) unless the node's self value exceeds it.
fn next_on_hot_path(inc: &[f64], exc: Option<&[f64]>, n: u32, kids: &[u32]) -> Step {
    let weight = |c: u32| value_in(inc, c).unwrap_or(f64::NEG_INFINITY);
    let Some(best) = kids
        .iter()
        .copied()
        .max_by(|&a, &b| weight(a).total_cmp(&weight(b)).then(b.cmp(&a)))
    else {
        return Step::Stop(Stop::Leaf);
    };
    let own = match exc {
        Some(e) => value_in(e, n),
        None => value_in(inc, n).map(|v| {
            let below: f64 = kids.iter().filter_map(|&c| value_in(inc, c)).sum();
            (v - below).max(0.0)
        }),
    };
    let child_value = weight(best);
    match own {
        Some(own) if own > child_value && child_value.is_finite() => {
            Step::Stop(Stop::SelfHeavier {
                own,
                child: best,
                child_value,
            })
        }
        // A node with a self value whose children have none: its own value outweighs them.
        _ if !child_value.is_finite() && own.is_some_and(|o| o > 0.0) => {
            Step::Stop(Stop::SelfHeavier {
                own: own.unwrap_or(0.0),
                child: best,
                child_value: 0.0,
            })
        }
        _ => Step::Into(best),
    }
}

impl Stop {
    /// The status line: where the path stopped and why, in shares of the node's
    /// inclusive value when it has one.
    fn describe(&self, name: &str, inc: &[f64], n: u32, name_of: impl Fn(u32) -> String) -> String {
        match *self {
            Stop::Leaf => format!("hot path: stopped at {name}: a leaf"),
            Stop::SelfHeavier {
                own,
                child,
                child_value,
            } => {
                let total = value_in(inc, n).filter(|&t| t > 0.0);
                let show = |v: f64| match total {
                    Some(t) => format!("{:.1}%", 100.0 * v / t),
                    None => crate::present::format::number(v),
                };
                format!(
                    "hot path: stopped at {name}: self {} > heaviest child {} ({})",
                    show(own),
                    show(child_value),
                    name_of(child)
                )
            }
        }
    }
}

#[cfg(test)]
mod hot_path_tests {
    use super::*;

    /// Node 0 with children 1 and 2.
    const KIDS: [u32; 2] = [1, 2];

    #[test]
    fn follows_a_child_that_outweighs_the_node_itself() {
        // 0: inc 10, self 2; children 6 and 2.
        let inc = [10.0, 6.0, 2.0];
        let exc = [2.0, 6.0, 2.0];
        assert_eq!(next_on_hot_path(&inc, Some(&exc), 0, &KIDS), Step::Into(1));
        // Ties between node and child: the child (only a larger self stops).
        let exc = [6.0, 2.0, 2.0];
        let inc = [10.0, 2.0, 2.0];
        assert_eq!(
            next_on_hot_path(&inc, Some(&exc), 0, &KIDS),
            Step::Stop(Stop::SelfHeavier {
                own: 6.0,
                child: 1,
                child_value: 2.0
            })
        );
    }

    #[test]
    fn stops_where_the_self_value_exceeds_the_heaviest_child() {
        // `## backward ##`, 229 ms self of 229 ms inclusive, over a 0 ns kernel.
        let inc = [229.0, 0.0, 0.0];
        let exc = [229.0, 0.0, 0.0];
        let s = next_on_hot_path(&inc, Some(&exc), 0, &KIDS);
        assert_eq!(
            s,
            Step::Stop(Stop::SelfHeavier {
                own: 229.0,
                child: 1,
                child_value: 0.0
            })
        );
        let Step::Stop(stop) = s else { unreachable!() };
        assert_eq!(
            stop.describe("## backward ##", &inc, 0, |_| "kernel".into()),
            "hot path: stopped at ## backward ##: self 100.0% > heaviest child 0.0% (kernel)"
        );
    }

    #[test]
    fn without_an_exclusive_column_self_is_what_children_leave() {
        // inc only: 0 has 100, children 0.5 and 0.2: self 99.3.
        let inc = [100.0, 0.5, 0.2];
        let Step::Stop(stop) = next_on_hot_path(&inc, None, 0, &KIDS) else {
            panic!("went on")
        };
        assert_eq!(
            stop.describe("f", &inc, 0, |_| "__memset".into()),
            "hot path: stopped at f: self 99.3% > heaviest child 0.5% (__memset)"
        );
        // Children that hold most of it are followed.
        assert_eq!(
            next_on_hot_path(&[10.0, 5.0, 4.0], None, 0, &KIDS),
            Step::Into(1)
        );
    }

    #[test]
    fn leaves_and_missing_values() {
        assert_eq!(
            next_on_hot_path(&[1.0], None, 0, &[]),
            Step::Stop(Stop::Leaf)
        );
        // No value anywhere: follow the first child, as before.
        let nan = [f64::NAN, f64::NAN, f64::NAN];
        assert_eq!(next_on_hot_path(&nan, Some(&nan), 0, &KIDS), Step::Into(1));
    }
}
