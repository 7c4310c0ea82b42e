//! The per-node metric table: a polars DataFrame with one row per CCT node (row = node
//! index) and one f64 column per metric. Names follow Hatchet: exclusive `time`,
//! inclusive `time (inc)`. A missing value is NaN ("no value", not zero).

use polars::prelude::*;
use std::collections::BTreeMap;

use super::cct::Cct;

pub const INC_SUFFIX: &str = " (inc)";

#[derive(Debug, Clone, Default)]
pub struct MetricTable {
    pub df: DataFrame,
    /// Unit per column ("ns", "s", "" for counts or unknown).
    pub units: BTreeMap<String, String>,
}

/// `time` -> `time (inc)`; per-profile columns keep their label last:
/// `time@gcc` -> `time (inc)@gcc`.
pub fn inclusive_name(base: &str) -> String {
    match base.rsplit_once('@') {
        Some((m, l)) => format!("{m}{INC_SUFFIX}@{l}"),
        None => format!("{base}{INC_SUFFIX}"),
    }
}

/// `time (inc)` -> Some("time"); `time (inc)@gcc` -> Some("time@gcc").
pub fn base_of_inclusive(name: &str) -> Option<String> {
    match name.rsplit_once('@') {
        Some((m, l)) => m.strip_suffix(INC_SUFFIX).map(|b| format!("{b}@{l}")),
        None => name.strip_suffix(INC_SUFFIX).map(String::from),
    }
}

impl MetricTable {
    pub fn new(rows: usize) -> MetricTable {
        MetricTable {
            df: DataFrame::empty_with_height(rows),
            units: BTreeMap::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.df.height()
    }

    /// Adds or replaces a column.
    pub fn set(&mut self, name: &str, unit: &str, values: Vec<f64>) {
        let s = Column::new(name.into(), values);
        let _ = self.df.drop_in_place(name);
        self.df
            .with_column(s)
            .expect("metric column has one value per node");
        self.units.insert(name.to_string(), unit.to_string());
    }

    pub fn has(&self, name: &str) -> bool {
        self.df.column(name).is_ok()
    }

    /// The column a metric name means: itself, else the column Hatchet or Thicket call
    /// by that name (`Avg time/rank` is `Avg time/rank (inc)`; see
    /// `model::metric_aliases`). Every place that takes a metric name from the user
    /// resolves it here.
    pub fn resolve(&self, name: &str) -> Option<String> {
        if self.has(name) {
            return Some(name.to_string());
        }
        super::metric_aliases::resolve(self, name)
    }

    /// The note shown when `name` stood for another column, None when it is one.
    pub fn alias_note(&self, name: &str) -> Option<String> {
        let real = self.resolve(name).filter(|r| r != name)?;
        Some(format!("metric `{name}` is grove's `{real}`"))
    }

    /// The column as a contiguous slice (columns are built single-chunk, NaN for missing).
    pub fn values(&self, name: &str) -> Option<&[f64]> {
        let c = self.df.column(name).ok()?;
        c.as_materialized_series().f64().ok()?.cont_slice().ok()
    }

    pub fn get(&self, name: &str, row: u32) -> f64 {
        self.values(name)
            .and_then(|v| v.get(row as usize).copied())
            .unwrap_or(f64::NAN)
    }

    pub fn names(&self) -> Vec<String> {
        self.df
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    pub fn unit(&self, name: &str) -> &str {
        self.units.get(name).map(|s| s.as_str()).unwrap_or("")
    }

    /// Metrics that can be chosen as the primary metric: every exclusive metric with an
    /// inclusive partner, then the other columns, in table order.
    pub fn base_metrics(&self) -> Vec<String> {
        let names = self.names();
        let mut out: Vec<String> = names
            .iter()
            .filter(|n| base_of_inclusive(n).is_none() && names.contains(&inclusive_name(n)))
            .cloned()
            .collect();
        for n in &names {
            if base_of_inclusive(n).is_none() && !out.contains(n) {
                out.push(n.clone());
            }
        }
        for n in &names {
            if let Some(b) = base_of_inclusive(n) {
                if !names.contains(&b) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    /// The column shown as "inclusive" for a base metric (itself when it has no partner).
    pub fn inclusive_of(&self, base: &str) -> String {
        let inc = inclusive_name(base);
        if self.has(&inc) {
            inc
        } else {
            base.to_string()
        }
    }

    /// Fills `<m> (inc)` as subtree sums of every exclusive metric that lacks one.
    pub fn derive_inclusive(&mut self, cct: &Cct, bases: &[&str]) {
        for base in bases {
            let Some(exc) = self.values(base).map(|v| v.to_vec()) else {
                continue;
            };
            let inc = subtree_sums(cct, &exc);
            let unit = self.unit(base).to_string();
            self.set(&inclusive_name(base), &unit, inc);
        }
    }
}

/// Sum of `exc` over each node's subtree (NaN counts as 0 unless the whole subtree is NaN).
/// Nodes are created after their parents, so one backward pass over ids suffices.
pub fn subtree_sums(cct: &Cct, exc: &[f64]) -> Vec<f64> {
    let mut inc: Vec<f64> = exc.to_vec();
    for n in (0..cct.len() as u32).rev() {
        if let Some(par) = cct.parent(n) {
            let v = inc[n as usize];
            if !v.is_nan() {
                let p = &mut inc[par as usize];
                *p = if p.is_nan() { v } else { *p + v };
            }
        }
    }
    inc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_roundtrip() {
        let mut c = Cct::default();
        let r = c.child(None, "r", "function");
        let a = c.child(Some(r), "a", "function");
        let _b = c.child(Some(a), "b", "function");
        let mut t = MetricTable::new(3);
        t.set("time", "ns", vec![1.0, 2.0, 4.0]);
        t.derive_inclusive(&c, &["time"]);
        assert_eq!(t.values("time (inc)").unwrap(), &[7.0, 6.0, 4.0]);
        t.set("count", "", vec![1.0, 1.0, 1.0]);
        assert_eq!(t.base_metrics(), vec!["time", "count"]);
        assert_eq!(t.inclusive_of("count"), "count");
        t.set("time", "ns", vec![0.0, 0.0, 0.0]);
        assert_eq!(t.get("time", 2), 0.0);
    }
}
