//! Comparing profiles: the ensemble's members, the heatmap's columns and
//! normalisation, `diff A B` with its markers, and the metadata filter.

use regex::Regex;

use super::command::Command;
use super::{App, CmdError, SortKey};
use crate::ensemble::{self, STATS};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Norm {
    /// Each column's own range (default).
    #[default]
    Column,
    Row,
    Global,
    /// Standard scores per row: outlier ranks stand out.
    ZScore,
}

impl Norm {
    pub fn name(self) -> &'static str {
        match self {
            Norm::Column => "column",
            Norm::Row => "row",
            Norm::Global => "global",
            Norm::ZScore => "zscore",
        }
    }

    fn next(self) -> Norm {
        match self {
            Norm::Column => Norm::Row,
            Norm::Row => Norm::Global,
            Norm::Global => Norm::ZScore,
            Norm::ZScore => Norm::Column,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct HeatmapView {
    pub norm: Norm,
    pub col: usize,
}

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

impl App {
    /// Members shown (the metadata filter may hide some).
    pub fn visible_members(&self) -> Vec<String> {
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

    /// The heatmap's columns: per member the primary metric (inclusive when it exists);
    /// for a single profile, every metric column.
    pub fn heatmap_columns(&self) -> Vec<String> {
        let members = self.visible_members();
        let m = &self.profile.metrics;
        if members.is_empty() {
            return m.names();
        }
        // After `diff`, the shown metric is `diff`; its members come from the diffed one.
        let shows_diff = ensemble::base_metric(&self.metric) == "diff";
        let base = match &self.diff_base {
            Some(b) if shows_diff => b.clone(),
            _ => ensemble::split_column(&self.metric)
                .map(|x| x.0.to_string())
                .unwrap_or_else(|| self.metric.clone()),
        };
        members
            .iter()
            .map(|l| {
                let exc = ensemble::column(&base, l);
                m.inclusive_of(&exc)
            })
            .filter(|c| m.has(c))
            .collect()
    }

    pub(super) fn compare_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::HeatmapNorm(mode) => {
                self.heatmap.norm = match mode.as_str() {
                    "row" => Norm::Row,
                    "column" => Norm::Column,
                    "global" => Norm::Global,
                    "zscore" => Norm::ZScore,
                    _ => self.heatmap.norm.next(),
                };
                Ok(Some(Command::HeatmapNorm(self.heatmap.norm.name().into())))
            }
            Command::HeatmapColumn(next) => {
                let n = self.heatmap_columns().len().max(1);
                self.heatmap.col = if next {
                    (self.heatmap.col + 1).min(n - 1)
                } else {
                    self.heatmap.col.saturating_sub(1)
                };
                Ok(None)
            }
            Command::HeatmapSort => {
                let cols = self.heatmap_columns();
                let col = cols
                    .get(self.heatmap.col)
                    .ok_or("the heatmap has no column")?
                    .clone();
                self.sort = SortKey::Metric {
                    column: col.clone(),
                    descending: true,
                };
                self.resort();
                Ok(Some(Command::Sort(super::command::SortSpec::By {
                    key: col,
                    descending: true,
                })))
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
