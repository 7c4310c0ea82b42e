//! Comparing profiles: the ensemble's members, `diff A B` with its markers and its
//! ranking (`diff-next`, `diff-prev`), and the metadata filter. The heatmap panel that
//! shows them is `panels::heatmap`.

use std::sync::Arc;

use regex::Regex;

use super::command::Command;
use super::{App, CmdError};
use crate::diff::{self as ranking, Side};
use crate::ensemble::{self, STATS};
use crate::present::format;

pub use super::panels::heatmap::{HeatmapView, Norm};

/// The members of an ensemble, from its `metric@label` columns.
pub fn member_labels(metrics: &crate::model::MetricTable) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Seen labels in a set: a scan of `out` per column was quadratic (10,000 members
    // have 50,000 columns), a second at every open of such an ensemble.
    let mut seen: std::collections::HashSet<&str> = Default::default();
    for n in metrics.name_refs() {
        if let Some((_, l)) = ensemble::split_column(n) {
            if !STATS.contains(&l) && seen.insert(l) {
                out.push(l.to_string());
            }
        }
    }
    out
}

/// Whether a column is one of an ensemble's statistics (`time@mean`, `time (inc)@cv`).
pub fn is_stat_column(name: &str) -> bool {
    ensemble::split_column(name).is_some_and(|(_, l)| STATS.contains(&l))
}

impl App {
    /// Members shown (the metadata filter may hide some), kept until the filter
    /// changes: the filter's regex is compiled once, not on every frame.
    pub fn visible_members(&self) -> Arc<Vec<String>> {
        self.heatmap
            .members
            .get(&self.meta_filter, || self.members_matching())
    }

    fn members_matching(&self) -> Vec<String> {
        let all = member_labels(self.original().1);
        let Some(f) = &self.meta_filter else {
            return all;
        };
        let (key, op, val) = match f.split_once('~') {
            Some((k, v)) => (k.trim(), '~', v.trim()),
            None => match f.split_once('=') {
                Some((k, v)) => (k.trim(), '=', v.trim()),
                None => return all,
            },
        };
        let val = val.trim_matches('"');
        let re = (op == '~').then(|| Regex::new(val).ok()).flatten();
        all.into_iter()
            .filter(|l| {
                let v = self.profile.meta_value(&format!("{l}.{key}"));
                match (op, v) {
                    ('=', Some(v)) => v == val,
                    ('~', Some(v)) => re.as_ref().is_some_and(|r| r.is_match(v)),
                    _ => false,
                }
            })
            .collect()
    }

    pub(super) fn compare_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            c @ (Command::HeatmapNorm(_) | Command::HeatmapSort | Command::HeatmapColumn(_)) => {
                self.heatmap_command(c)
            }
            Command::Diff(a, b) => {
                let members = member_labels(self.original().1);
                for l in [&a, &b] {
                    if !members.contains(l) {
                        return Err(format!(
                            "{l:?} is not a profile of this ensemble (profiles: {})",
                            members.join(", ")
                        )
                        .into());
                    }
                }
                let base = ensemble::base_metric(&self.metric);
                self.diff_base = Some(base.clone());
                // A node missing from one side counts as zero there, so new and vanished
                // work rank by their size and add to their parents' difference.
                let def = format!(
                    "diff = nz({}) - nz({})",
                    expr_string(&ensemble::column(&base, &a)),
                    expr_string(&ensemble::column(&base, &b))
                );
                self.run_inner(&format!("derive {def}"))?;
                self.run_inner("metric diff")?;
                self.diff = Some((a.clone(), b.clone()));
                self.info(format!(
                    "diff = {base}@{a} - {base}@{b} (missing = 0); new: only in {a}, gone: only in {b}"
                ));
                Ok(Some(Command::Diff(a, b)))
            }
            Command::DiffStep(forward) => {
                self.diff_step(forward)?;
                Ok(Some(Command::DiffStep(forward)))
            }
            Command::MetaFilter(f) => {
                let before = std::mem::replace(&mut self.meta_filter, f.clone());
                if f.is_some() && self.visible_members().is_empty() {
                    self.meta_filter = before;
                    return Err("no profile's metadata matches".into());
                }
                self.heatmap.col = 0;
                Ok(Some(Command::MetaFilter(f)))
            }
            Command::Stats(mode) => self.set_stats(mode),
            other => Err(format!("{other} is not a comparison command").into()),
        }
    }

    /// Runs a command as part of another (not logged on its own).
    fn run_inner(&mut self, text: &str) -> Result<(), CmdError> {
        let c = Command::parse(text).map_err(|e| CmdError::plain(e.msg))?;
        self.apply(c).map(|_| ())
    }

    /// Moves the cursor along the diff's ranking, `grove diff`'s order (from
    /// `crate::diff`): the largest increase first, down to the smallest, then the
    /// decreases from the smallest to the largest, so `diff-next` from nowhere starts
    /// at the largest increase and `diff-prev` at the largest decrease. The step is
    /// taken from the node under the cursor, so no position is kept; a command walks
    /// the tree once, a frame never does.
    fn diff_step(&mut self, forward: bool) -> Result<(), CmdError> {
        let Some((a, b)) = self.diff.clone() else {
            return Err("no diff: open two profiles (grove A B) or run diff A B".into());
        };
        let base = ensemble::base_metric(&self.metric_for_markers());
        // diff A B is A - B: A is the newer side.
        let c = ranking::compare(&self.profile, &base, &b, &a).map_err(CmdError::plain)?;
        let order: Vec<&ranking::Change> = c.changes.iter().filter(|x| x.delta != 0.0).collect();
        let ups = order.iter().take_while(|x| x.delta > 0.0).count();
        if order.is_empty() {
            return Err(format!("no node differs in {base} between {a} and {b}").into());
        }
        let cur = self
            .tree
            .selected_pos()
            .map(|p| self.tree.po.node[p as usize]);
        let here = cur.and_then(|n| order.iter().position(|x| x.node == n));
        let i = match (here, forward) {
            (Some(i), true) => (i + 1) % order.len(),
            (Some(i), false) => (i + order.len() - 1) % order.len(),
            (None, true) => 0,
            (None, false) => order.len() - 1,
        };
        let x = order[i];
        self.tree.reveal(x.node);
        let unit = self.profile.metrics.unit(&ensemble::column(&base, &a));
        let kind = if x.delta > 0.0 {
            "increase"
        } else {
            "decrease"
        };
        // Decreases count from the largest, as `grove diff` lists them.
        let (rank, of) = if x.delta > 0.0 {
            (i + 1, ups)
        } else {
            (order.len() - i, order.len() - ups)
        };
        let side = match x.side {
            Side::Both => String::new(),
            s => format!(" ({})", s.marker()),
        };
        self.info(format!(
            "{kind} {rank}/{of}: {} {}{side}",
            signed(x.delta, unit),
            self.profile.cct.name(x.node)
        ));
        Ok(())
    }

    /// The fixed markers column: `new` for a node only in the diff's first profile
    /// (the newer side of `diff A B`), `gone` for one only in the second.
    pub fn diff_side(&self, node: u32) -> Side {
        match self.diff_marker(node) {
            Some(true) => Side::OnlyNew,
            Some(false) => Side::OnlyBase,
            None => Side::Both,
        }
    }

    /// `Some(true)` for a node only in the diff's first profile, `Some(false)` for one
    /// only in the second.
    pub fn diff_marker(&self, node: u32) -> Option<bool> {
        let (a, b) = self.diff.as_ref()?;
        let base = ensemble::base_metric(&self.metric_for_markers());
        let m = &self.profile.metrics;
        let has = |l: &str| {
            let c = m.inclusive_of(&ensemble::column(&base, l));
            !m.get(&c, node).is_nan()
        };
        match (has(a), has(b)) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        }
    }

    fn metric_for_markers(&self) -> String {
        // The diff metric itself has no members; markers read the compared metric.
        self.diff_base
            .clone()
            .unwrap_or_else(|| self.metric.clone())
    }
}

/// `+1.50 ms`, `-2.00 µs`: a difference always shows its sign.
pub fn signed(v: f64, unit: &str) -> String {
    // Messages are drawn as they are, in ASCII mode too.
    let s = format::value(v, unit, "us");
    if v > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

/// A column name as a string of the expression language: always quoted, since a label
/// may hold what its words cannot (`rank0#1`, two runs of rank 0).
fn expr_string(name: &str) -> String {
    let mut s = String::from("\"");
    for c in name.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}
