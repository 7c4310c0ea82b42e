//! Comparing profiles: the ensemble's members, `diff A B` with its markers, and the
//! metadata filter. The heatmap panel that shows them is `panels::heatmap`.

use std::sync::Arc;

use regex::Regex;

use super::command::Command;
use super::{App, CmdError};
use crate::ensemble::{self, STATS};

pub use super::panels::heatmap::{HeatmapView, Norm};

/// The members of an ensemble, from its `metric@label` columns.
pub fn member_labels(metrics: &crate::model::MetricTable) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in metrics.names() {
        if let Some((_, l)) = ensemble::split_column(&n) {
            if !STATS.contains(&l) && !out.iter().any(|x| x == l) {
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
        let all = member_labels(&self.original.1);
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
                let members = member_labels(&self.original.1);
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
                let def = format!(
                    "diff = {} - {}",
                    super::command::quote(&ensemble::column(&base, &a)),
                    super::command::quote(&ensemble::column(&base, &b))
                );
                self.run_inner(&format!("derive {def}"))?;
                self.run_inner("metric diff")?;
                self.diff = Some((a.clone(), b.clone()));
                self.info(format!(
                    "diff = {base}@{a} - {base}@{b}; ◀ only in {a}, ▶ only in {b}"
                ));
                Ok(Some(Command::Diff(a, b)))
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

    /// ◀ for a node only in the diff's first profile, ▶ for one only in the second.
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
