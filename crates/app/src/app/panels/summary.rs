//! The summary panel: HTA's breakdowns for a trace, as charts (`gpu::charts`, drawn by
//! `ui::charts`) or as the seven tables of `grove summary` (`summary tables`), or the
//! metadata of the profile (of every member for an ensemble). Its data is derived when
//! the data or the panel's settings change, never per frame: a breakdown walks every
//! GPU activity (and parses each memcpy's args), which on a 5M-kernel trace takes
//! seconds.

use std::sync::Arc;

use super::memo::Memo;
use crate::app::App;
use crate::gpu::breakdown::Options;
use crate::gpu::charts::SummaryCharts;
use crate::gpu::report::{self, Table};

/// How a summary line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    Title,
    Header,
    Text,
    /// A member the metadata filter hides.
    Dim,
}

pub type Lines = Vec<(String, LineStyle)>;

#[derive(Debug, Clone, Default)]
pub struct SummaryView {
    pub scroll: usize,
    /// Columns the table is scrolled right by (`scroll table N`).
    pub hscroll: usize,
    /// HTA's tables instead of the charts (`summary tables`).
    pub show_tables: bool,
    /// The breakdown tables (cleared when the GPU state is rebuilt).
    tables: Memo<(), Lines>,
    /// The charts' figures (cleared with the tables).
    charts: Memo<(), SummaryCharts>,
    /// The metadata table, for the metadata filter it was built with.
    metadata: Memo<Option<String>, Lines>,
}

impl SummaryView {
    /// Forgets the derived lines (the GPU state or the categories changed).
    pub fn clear(&self) {
        self.tables.clear();
        self.charts.clear();
        self.metadata.clear();
    }
}

/// The seven tables, in the panel's order.
const TABLES: [Table; 7] = [
    Table::Temporal,
    Table::Overlap,
    Table::Idle,
    Table::Launch,
    Table::Queue,
    Table::Memory,
    Table::Overhead,
];

impl App {
    /// The charts of the breakdowns, when the panel shows charts and the trace has GPU
    /// activity with its events (else the panel shows `summary_lines`).
    pub fn summary_charts(&self) -> Option<Arc<SummaryCharts>> {
        if self.summary.show_tables || self.profile.events.is_none() {
            return None;
        }
        let gpu = self.gpu_activity()?;
        let ev = self.profile.events.as_ref()?;
        Some(self.summary.charts.get(&(), || {
            let rank = report::rank_of(&self.profile, 0);
            // Events point into the tree as loaded, not the reshaped one.
            let cct = self.original().0;
            crate::gpu::charts::summary_charts(ev, &gpu.model, cct, rank, &Options::default())
        }))
    }

    /// `summary charts|tables|toggle`.
    pub(crate) fn summary_command(
        &mut self,
        tables: Option<bool>,
    ) -> Result<Option<crate::app::command::Command>, crate::app::CmdError> {
        let s = &mut self.view.summary;
        s.show_tables = tables.unwrap_or(!s.show_tables);
        s.scroll = 0;
        s.hscroll = 0;
        Ok(Some(crate::app::command::Command::Summary(Some(
            s.show_tables,
        ))))
    }

    /// The summary panel's lines: the breakdowns of a trace with GPU activity, else
    /// the metadata.
    pub fn summary_lines(&self) -> Arc<Lines> {
        match (self.gpu_activity(), self.profile.events.is_some()) {
            (Some(gpu), true) => self.summary.tables.get(&(), || {
                let mut lines = Lines::new();
                breakdown_lines(&self.profile, &gpu.model, &mut lines);
                lines
            }),
            // An ensemble of traces: each member's breakdowns under its label, then
            // the members' metadata.
            _ if !self.members().is_empty() => self.summary.tables.get(&(), || {
                let mut lines = Lines::new();
                for m in self.members() {
                    lines.push((format!("profile {}", m.label), LineStyle::Title));
                    lines.push((String::new(), LineStyle::Text));
                    breakdown_lines(&m.profile, &m.model, &mut lines);
                }
                lines.extend(self.metadata_lines());
                lines
            }),
            _ => self.summary.metadata.get(&self.meta_filter, || {
                // The breakdowns come with the events: say so above the metadata.
                let mut lines = Lines::new();
                if self.loading() {
                    lines.push((
                        format!("breakdowns: {}", self.loading_note()),
                        LineStyle::Title,
                    ));
                    lines.push((String::new(), LineStyle::Text));
                } else if self.lod().is_some() {
                    lines.push((
                        "breakdowns: low-memory mode, single events are not loaded".into(),
                        LineStyle::Title,
                    ));
                    lines.push((String::new(), LineStyle::Text));
                }
                lines.extend(self.metadata_lines());
                lines
            }),
        }
    }

    /// The metadata of the profile, or of every ensemble member as a table (members
    /// hidden by `meta` are dimmed).
    fn metadata_lines(&self) -> Lines {
        let members = crate::app::compare::member_labels(self.original().1);
        let shown = self.visible_members();
        let mut lines = Lines::new();
        if members.is_empty() {
            lines.push(("metadata".into(), LineStyle::Title));
            // Keys as wide as the longest (OTF2's `otf2.property.OTF2::…` run to 50),
            // so the values stay in one column.
            let kw = self
                .profile
                .meta
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(28, 56);
            for (k, v) in &self.profile.meta {
                lines.push((format!("{k:<kw$} {v}"), LineStyle::Text));
            }
            return lines;
        }
        // Keys are `LABEL.KEY`; a label may hold dots itself (`gcc10.3.1/O3/1`), so
        // the member's label is matched, not the first dot.
        let mut keys: Vec<String> = Vec::new();
        for (k, _) in &self.profile.meta {
            let key = members
                .iter()
                .filter_map(|l| k.strip_prefix(l.as_str())?.strip_prefix('.'))
                .min_by_key(|key| key.len());
            if let Some(key) = key {
                if !keys.iter().any(|x| x == key) {
                    keys.push(key.to_string());
                }
            }
        }
        // Paths share their start (the directory of the runs): only the rest is shown.
        let files: Vec<&str> = members
            .iter()
            .map(|l| self.profile.meta_value(&format!("{l}.file")).unwrap_or(""))
            .collect();
        let common = common_dir(&files);
        let cell = |l: &str, k: &str| -> String {
            let v = self.profile.meta_value(&format!("{l}.{k}")).unwrap_or("");
            if k == "file" {
                v.get(common..).unwrap_or(v).to_string()
            } else {
                v.to_string()
            }
        };
        // The keys whose values differ between the members come first: they are what
        // tells the runs apart; the keys every member shares follow.
        let differs = |k: &String| {
            let first = cell(&members[0], k);
            members.iter().any(|l| cell(l, k) != first)
        };
        let (mut keys, same): (Vec<String>, Vec<String>) = keys.into_iter().partition(differs);
        keys.extend(same);
        let filter = self
            .meta_filter
            .as_deref()
            .map(|f| format!(" (meta {f})"))
            .unwrap_or_default();
        lines.push((
            format!(
                "{} profiles{filter}  ({{ }} scroll sideways; the columns that differ come first)",
                members.len()
            ),
            LineStyle::Title,
        ));
        // Each column as wide as its widest value, within bounds.
        const MAX_W: usize = 40;
        let width = |head: &str, vals: &mut dyn Iterator<Item = String>| {
            vals.map(|v| v.chars().count())
                .chain([head.chars().count()])
                .max()
                .unwrap_or(0)
                .clamp(4, MAX_W)
        };
        let lw = width("profile", &mut members.iter().cloned());
        let widths: Vec<usize> = keys
            .iter()
            .map(|k| width(k, &mut members.iter().map(|l| cell(l, k))))
            .collect();
        let fit = |v: &str, w: usize| -> String {
            let v = crate::present::format::clip_label(v, w, "…");
            format!("{v:<w$}")
        };
        let mut head = fit("profile", lw);
        for (k, &w) in keys.iter().zip(&widths) {
            head.push(' ');
            head.push_str(&fit(k, w));
        }
        lines.push((head.trim_end().to_string(), LineStyle::Header));
        for l in &members {
            let mut row = fit(l, lw);
            for (k, &w) in keys.iter().zip(&widths) {
                row.push(' ');
                row.push_str(&fit(&cell(l, k), w));
            }
            let st = if shown.contains(l) {
                LineStyle::Text
            } else {
                LineStyle::Dim
            };
            lines.push((row.trim_end().to_string(), st));
        }
        lines
    }
}

/// The length of the directory prefix all paths share (up to and including a `/`).
fn common_dir(paths: &[&str]) -> usize {
    let Some(first) = paths.first() else {
        return 0;
    };
    let mut n = first.len();
    for p in &paths[1..] {
        n = first
            .bytes()
            .zip(p.bytes())
            .take(n)
            .take_while(|(a, b)| a == b)
            .count();
    }
    first[..n].rfind('/').map_or(0, |i| i + 1)
}

/// The summary panel: the breakdowns or the metadata, its state `ViewState::summary`.
pub struct Summary;

impl super::Panel for Summary {
    fn usable(&self, _: &App) -> bool {
        true
    }

    fn open(&self, _: &mut App) -> Result<(), crate::app::CmdError> {
        Ok(())
    }

    /// Up and down scroll the lines.
    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        let s = &mut app.view.summary;
        s.scroll = (s.scroll as isize + delta).max(0) as usize;
        true
    }

    /// `scroll table N` scrolls the summary/metadata table on every panel without a
    /// table of its own (`App::scroll`).
    fn scroll_table(&self, _: &mut App, _: i64) -> bool {
        false
    }

    /// The breakdowns do not depend on the tree: a replay keeps the scroll and the
    /// derived lines.
    fn reset(&self, was: &mut super::ViewState, now: &mut super::ViewState) {
        now.summary = std::mem::take(&mut was.summary);
    }
}

/// The seven breakdown tables of one trace, as the panel draws them.
fn breakdown_lines(p: &crate::model::Profile, model: &crate::gpu::GpuModel, lines: &mut Lines) {
    let rank = report::rank_of(p, 0);
    let opt = Options::default();
    for t in TABLES {
        let rows = report::table_rows(p, model, rank, t, &opt);
        // Times with units on screen (an ASCII screen folds µ to u).
        let (header, rows) = report::humanize_ns(t.header(), &rows, "µs");
        for l in report::render_text(&header, &rows, t.name()).lines() {
            let title =
                !l.starts_with(' ') && !l.is_empty() && l.chars().all(|c| c.is_ascii_lowercase());
            let st = if title {
                LineStyle::Title
            } else {
                LineStyle::Text
            };
            lines.push((l.to_string(), st));
        }
        lines.push((String::new(), LineStyle::Text));
    }
}
