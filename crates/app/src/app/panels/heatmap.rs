//! The heatmap panel: its columns (the members of an ensemble, or every metric of a
//! single profile), the normalisation and the column under the cursor. The columns and
//! each column's range over all nodes are derived when the metrics, the metric, the
//! diff or the metadata filter change, not per frame.

use std::sync::Arc;

use super::super::command::{Command, SortSpec};
use super::super::{App, CmdError, SortKey};
use super::memo::Memo;
use crate::ensemble;
use crate::model::MetricTable;

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
    /// Keyed by (metric, diff base, metadata filter); cleared when the metrics change.
    columns: Memo<(String, Option<String>, Option<String>), Columns>,
    /// The members the metadata filter shows, keyed by the filter.
    pub(crate) members: Memo<Option<String>, Vec<String>>,
}

impl HeatmapView {
    /// Forgets the derived columns (the metric table changed).
    pub fn clear(&self) {
        self.columns.clear();
    }
}

/// The heatmap's columns with the range of each over all nodes.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    pub names: Vec<String>,
    /// Min and max of each column's finite values; None when it has none.
    pub ranges: Vec<Option<(f64, f64)>>,
}

impl Columns {
    fn new(m: &MetricTable, names: Vec<String>) -> Columns {
        let ranges = names
            .iter()
            .map(|n| finite_range(m.values(n).unwrap_or(&[])))
            .collect();
        Columns { names, ranges }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

fn finite_range(v: &[f64]) -> Option<(f64, f64)> {
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for &x in v.iter().filter(|x| x.is_finite()) {
        min = min.min(x);
        max = max.max(x);
    }
    (min <= max).then_some((min, max))
}

impl App {
    /// The heatmap's columns: per member the primary metric (inclusive when it exists);
    /// for a single profile, every metric column.
    pub fn heatmap_columns(&self) -> Arc<Columns> {
        let key = (
            self.metric.clone(),
            self.diff_base.clone(),
            self.meta_filter.clone(),
        );
        self.heatmap.columns.get(&key, || {
            Columns::new(&self.profile.metrics, self.column_names())
        })
    }

    fn column_names(&self) -> Vec<String> {
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

    pub(crate) fn heatmap_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
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
                    .names
                    .get(self.heatmap.col)
                    .ok_or("the heatmap has no column")?
                    .clone();
                self.sort = SortKey::Metric {
                    column: col.clone(),
                    descending: true,
                };
                self.resort();
                Ok(Some(Command::Sort(SortSpec::By {
                    key: col,
                    descending: true,
                })))
            }
            other => Err(format!("{other} is not a heatmap command").into()),
        }
    }
}

/// The heatmap panel: its state `ViewState::heatmap`; its rows are the tree's, so up
/// and down move the tree's cursor.
pub struct Heatmap;

impl super::Panel for Heatmap {
    fn usable(&self, _: &App) -> bool {
        true
    }

    fn open(&self, _: &mut App) -> Result<(), CmdError> {
        Ok(())
    }

    fn move_cursor(&self, _: &mut App, _: isize) -> bool {
        false
    }

    fn scroll_table(&self, _: &mut App, _: i64) -> bool {
        false
    }

    /// The normalisation and column start afresh.
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}
}
