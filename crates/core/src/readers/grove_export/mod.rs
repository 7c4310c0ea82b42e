//! grove's own tables read back: `grove tree --format json|csv|parquet` (and `:export`
//! of the same) reopen as the tree they were written from, so an export is a way to
//! save, send and recover a reshaped tree. Each form is rows in pre-order: the JSON's
//! nodes name their parent, the CSV's and Parquet's rows their depth. Ensemble columns
//! (`time@gcc`) come back as columns of those names, so the members and their labels
//! are the ones written.
//!
//! What a form does not carry is said, not guessed: the CSV has no units, and neither
//! the CSV nor the Parquet has the source file or the attributes outside the CSV's
//! columns.

pub mod csv;
pub mod json;
pub mod parquet;

use crate::model::{Cct, Frame, MetricTable, Profile, Source};

/// What every form gives: frames with their depth, and metric columns.
pub(crate) struct Rows {
    pub frames: Vec<Frame>,
    pub depth: Vec<usize>,
    /// (name, unit, values), in the file's column order.
    pub metrics: Vec<(String, String, Vec<f64>)>,
}

/// The tree of rows in pre-order given by their depths: each row hangs under the
/// nearest row before it that is one level up (a row deeper than that, as a filtered
/// export may hold, hangs under the row before it, which is said).
pub(crate) fn tree(frames: Vec<Frame>, depth: &[usize], warnings: &mut Vec<String>) -> Cct {
    let mut cct = Cct::default();
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut jumps = 0usize;
    for (f, &d) in frames.into_iter().zip(depth) {
        while stack.last().is_some_and(|&(sd, _)| sd >= d) {
            stack.pop();
        }
        let parent = stack.last().map(|&(sd, n)| {
            if sd + 1 != d {
                jumps += 1;
            }
            n
        });
        if parent.is_none() && d > 0 {
            jumps += 1;
        }
        let n = cct.add_node(parent, f);
        stack.push((d, n));
    }
    if jumps > 0 {
        warnings.push(format!(
            "{jumps} row(s) sit more than one level below the row before them (a \
             filtered export): each hangs under the nearest row above it"
        ));
    }
    cct.finish();
    cct
}

/// The default metric: the one written (JSON), else the first exclusive column,
/// else the first.
pub(crate) fn default_metric(names: &[String], written: Option<&str>) -> String {
    if let Some(w) = written.filter(|w| names.iter().any(|n| n == w)) {
        return w.to_string();
    }
    names
        .iter()
        .find(|n| crate::model::metrics::base_of_inclusive(n).is_none())
        .or(names.first())
        .cloned()
        .unwrap_or_default()
}

/// The profile of a table read back.
pub(crate) fn profile(
    rows: Rows,
    source: Source,
    dialect: &str,
    default: Option<&str>,
    mut warnings: Vec<String>,
) -> Profile {
    let cct = tree(rows.frames, &rows.depth, &mut warnings);
    let mut metrics = MetricTable::new(cct.len());
    let names: Vec<String> = rows.metrics.iter().map(|m| m.0.clone()).collect();
    for (name, unit, vals) in rows.metrics {
        metrics.set(&name, &unit, vals);
    }
    Profile {
        call_graph: None,
        source,
        dialect: dialect.into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta: Vec::new(),
        warnings,
        default_metric: default_metric(&names, default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_make_the_tree() {
        let frames = ["main", "a", "b", "c", "other"]
            .iter()
            .map(|n| Frame::new(n, "function"))
            .collect();
        let mut w = Vec::new();
        let cct = tree(frames, &[0, 1, 2, 1, 0], &mut w);
        assert_eq!(cct.parent(2), Some(1));
        assert_eq!(cct.parent(3), Some(0));
        assert_eq!(cct.parent(4), None);
        assert!(w.is_empty());
        let frames = ["main", "deep"]
            .iter()
            .map(|n| Frame::new(n, "function"))
            .collect();
        let cct = tree(frames, &[0, 3], &mut w);
        assert_eq!(cct.parent(1), Some(0));
        assert_eq!(w.len(), 1);
    }
}
