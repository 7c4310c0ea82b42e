//! The summary panel: HTA's seven breakdowns for a trace, or the metadata of the
//! profile (of every member for an ensemble). Its lines are derived when the data or
//! the panel's settings change, never per frame: a breakdown walks every GPU activity
//! (and parses each memcpy's args), which on a 5M-kernel trace takes seconds.

use std::sync::Arc;

use super::memo::Memo;
use crate::app::App;
use crate::gpu::breakdown::Options;
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
    /// The breakdown tables (cleared when the GPU state is rebuilt).
    tables: Memo<(), Lines>,
    /// The metadata table, for the metadata filter it was built with.
    metadata: Memo<Option<String>, Lines>,
}

impl SummaryView {
    /// Forgets the derived lines (the GPU state or the categories changed).
    pub fn clear(&self) {
        self.tables.clear();
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
    /// The summary panel's lines: the breakdowns of a trace with GPU activity, else
    /// the metadata.
    pub fn summary_lines(&self) -> Arc<Lines> {
        match (self.gpu.as_ref(), self.profile.events.is_some()) {
            (Some(gpu), true) => self.summary.tables.get(&(), || {
                let rank = report::rank_of(&self.profile, 0);
                let opt = Options::default();
                let mut lines = Lines::new();
                for t in TABLES {
                    let rows = report::table_rows(&self.profile, &gpu.model, rank, t, &opt);
                    // Times with units on screen (an ASCII screen folds µ to u).
                    let (header, rows) = report::humanize_ns(t.header(), &rows, "µs");
                    for l in report::render(&header, &rows, report::Format::Text, t.name()).lines()
                    {
                        let title = !l.starts_with(' ')
                            && !l.is_empty()
                            && l.chars().all(|c| c.is_ascii_lowercase());
                        let st = if title {
                            LineStyle::Title
                        } else {
                            LineStyle::Text
                        };
                        lines.push((l.to_string(), st));
                    }
                    lines.push((String::new(), LineStyle::Text));
                }
                lines
            }),
            _ => self
                .summary
                .metadata
                .get(&self.meta_filter, || self.metadata_lines()),
        }
    }

    /// The metadata of the profile, or of every ensemble member as a table (members
    /// hidden by `meta` are dimmed).
    fn metadata_lines(&self) -> Lines {
        let members = crate::app::compare::member_labels(&self.original.1);
        let shown = self.visible_members();
        let mut lines = Lines::new();
        if members.is_empty() {
            lines.push(("metadata".into(), LineStyle::Title));
            for (k, v) in &self.profile.meta {
                lines.push((format!("{k:<28} {v}"), LineStyle::Text));
            }
            return lines;
        }
        let mut keys: Vec<String> = Vec::new();
        for (k, _) in &self.profile.meta {
            if let Some((_, key)) = k.split_once('.') {
                if !keys.iter().any(|x| x == key) {
                    keys.push(key.to_string());
                }
            }
        }
        let filter = self
            .meta_filter
            .as_deref()
            .map(|f| format!(" (meta {f})"))
            .unwrap_or_default();
        lines.push((
            format!("{} profiles{filter}", members.len()),
            LineStyle::Title,
        ));
        let w = 14;
        let mut head = format!("{:<w$}", "profile");
        for k in &keys {
            head.push_str(&format!(" {:<w$}", k.chars().take(w).collect::<String>()));
        }
        lines.push((head, LineStyle::Header));
        for l in &members {
            let mut row = format!("{:<w$}", l.chars().take(w).collect::<String>());
            for k in &keys {
                let v = self.profile.meta_value(&format!("{l}.{k}")).unwrap_or("");
                // Paths differ between machines: the file name says enough here.
                let v = if k == "file" {
                    std::path::Path::new(v)
                        .file_name()
                        .and_then(|f| f.to_str())
                        .unwrap_or(v)
                } else {
                    v
                };
                row.push_str(&format!(" {:<w$}", v.chars().take(w).collect::<String>()));
            }
            let st = if shown.contains(l) {
                LineStyle::Text
            } else {
                LineStyle::Dim
            };
            lines.push((row, st));
        }
        lines
    }
}
