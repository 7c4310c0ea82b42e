//! The per-node metric table: one row per CCT node (row = node index) and one f64
//! column per metric. Names follow Hatchet: exclusive `time`, inclusive `time (inc)`.
//! A missing value is NaN ("no value", not zero).
//!
//! Columns are plain shared slices with a name index rather than a polars DataFrame:
//! an ensemble of 10,000 profiles has 70,000 columns, and a DataFrame looks a column up
//! (and checks a new one for a clash) by a linear scan over all names, which made
//! building such a table quadratic. Export builds a DataFrame when it needs one
//! (`to_frame`). Columns are `Arc`s so that cloning a table (undo checkpoints) shares
//! them; an `Arc<Vec>` rather than an `Arc<[f64]>`, so that a new column keeps the
//! buffer it was built in (an `Arc<[f64]>` copied every column once more, issue 16).
//! A column may also lie outside the heap (`Outside`: a warm open's columns, read
//! where they lie in the memory-mapped cache entry, issue 30); `values` reads it there,
//! and `column`, whose holders want an `Arc<Vec>`, copies it once, shared by clones.
//! A trace's exclusive columns hold no values of their own (`Residual`, issue 30): each
//! is its inclusive partner less the node's children, exact for whole nanoseconds;
//! `at` reads it node by node (the rows on screen, the cache writer) and `values`
//! makes it whole once, for those that need a slice.

use polars::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use super::cct::Cct;

pub const INC_SUFFIX: &str = " (inc)";

#[derive(Debug, Clone, Default)]
pub struct MetricTable {
    rows: usize,
    /// Column names in table order.
    order: Vec<String>,
    columns: Vec<Col>,
    /// Name -> position in `order`/`columns`.
    index: HashMap<String, usize>,
    /// Unit per column ("ns", "s", "" for counts or unknown).
    pub units: BTreeMap<String, String>,
}

/// A column's values kept outside the heap (`summary::tree_file`'s mapped columns).
pub trait Outside: Send + Sync + std::fmt::Debug {
    fn values(&self) -> &[f64];
    /// The values copied to the heap (`MetricTable::column`).
    fn to_vec(&self) -> Vec<f64> {
        self.values().to_vec()
    }
}

#[derive(Debug, Clone)]
enum Col {
    Heap(Arc<Vec<f64>>),
    /// Outside the heap, with its copy once one was asked for (shared by clones).
    Outside(Arc<dyn Outside>, Arc<OnceLock<Arc<Vec<f64>>>>),
    /// An exclusive column kept as its inclusive partner less each node's children,
    /// with its values once they were asked for as a whole (shared by clones).
    Residual(Arc<Residual>, Arc<OnceLock<Arc<Vec<f64>>>>),
    /// A column of whole numbers in 0..2^32 (a trace's `count`) kept as u32: half the
    /// bytes of a node (issue 30: 10 MB of a 1 GB trace's TUI), with its values as f64
    /// once they were asked for as a whole (shared by clones). Every u32 is exact in
    /// f64, and negative zero, NaN and fractions keep a column in f64: the values given
    /// back are the ones set, bit for bit.
    Whole(Arc<Vec<u32>>, Arc<OnceLock<Arc<Vec<f64>>>>),
}

/// The column as u32 when every value is a whole number in 0..2^32 (not -0.0).
fn as_whole(v: &[f64]) -> Option<Vec<u32>> {
    let fits = |x: f64| (0.0..=u32::MAX as f64).contains(&x) && x.fract() == 0.0;
    let zero = 0.0f64.to_bits();
    v.iter()
        .all(|&x| fits(x) && (x != 0.0 || x.to_bits() == zero))
        .then(|| v.iter().map(|&x| x as u32).collect())
}

/// An exclusive column that holds no values of its own (issue 30: the load's peak):
/// node n's value is `inc[n]` less the `inc` of its children. The inclusive column was
/// summed from it in place, and it is made so only when every value is a whole number
/// and their magnitudes sum below 2^52 (`exact_sums`): then every sum and difference
/// is exact in f64 and the values given back are the very ones summed, bit for bit.
#[derive(Debug)]
pub struct Residual {
    inc: Arc<Vec<f64>>,
    parent: Arc<Vec<u32>>,
}

impl Residual {
    /// The whole column (one pass over the parent links).
    fn make(&self) -> Vec<f64> {
        let mut exc = self.inc.to_vec();
        for (n, &p) in self.parent.iter().enumerate() {
            if p != super::cct::NO_NODE {
                exc[p as usize] -= self.inc[n];
            }
        }
        exc
    }
}

/// Whether summing `v` up a tree is exact in f64 in any order: whole numbers, no
/// NaN, infinity or negative zero, and magnitudes that add up below 2^52.
fn exact_sums(v: &[f64]) -> bool {
    let mut total = 0.0f64;
    for &x in v {
        if x.fract() != 0.0 || x.to_bits() == (-0.0f64).to_bits() {
            return false;
        }
        total += x.abs();
    }
    total <= (1u64 << 52) as f64
}

/// One column's values node by node (`MetricTable::at`): a residual column is read
/// without making it whole, for those that need a few rows (the tree's rows on
/// screen) or stream every row once (the cache entry's writer).
pub enum At<'a> {
    Values(&'a [f64]),
    Residual(&'a [f64], &'a Cct),
    Whole(&'a [u32]),
}

impl At<'_> {
    /// Node `n`'s value, NaN past the column's end.
    pub fn get(&self, n: usize) -> f64 {
        match self {
            At::Values(v) => v.get(n).copied().unwrap_or(f64::NAN),
            At::Whole(v) => v.get(n).map_or(f64::NAN, |&x| x as f64),
            At::Residual(inc, cct) => match inc.get(n) {
                Some(&v) => cct
                    .children(n as u32)
                    .fold(v, |left, c| left - inc[c as usize]),
                None => f64::NAN,
            },
        }
    }
}

impl Col {
    fn values(&self) -> &[f64] {
        match self {
            Col::Heap(v) => v,
            Col::Outside(o, copy) => match copy.get() {
                Some(v) => v,
                None => o.values(),
            },
            Col::Residual(r, whole) => whole.get_or_init(|| Arc::new(r.make())),
            Col::Whole(w, whole) => whole.get_or_init(|| Arc::new(widen(w))),
        }
    }

    fn shared(&self) -> Arc<Vec<f64>> {
        match self {
            Col::Heap(v) => v.clone(),
            Col::Outside(o, copy) => copy.get_or_init(|| Arc::new(o.to_vec())).clone(),
            Col::Residual(r, whole) => whole.get_or_init(|| Arc::new(r.make())).clone(),
            Col::Whole(w, whole) => whole.get_or_init(|| Arc::new(widen(w))).clone(),
        }
    }
}

fn widen(w: &[u32]) -> Vec<f64> {
    w.iter().map(|&x| x as f64).collect()
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
            rows,
            ..Default::default()
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// How many columns.
    pub fn width(&self) -> usize {
        self.order.len()
    }

    /// Adds or replaces a column (a replaced column keeps its place).
    pub fn set(&mut self, name: &str, unit: &str, mut values: Vec<f64>) {
        assert_eq!(
            values.len(),
            self.rows,
            "metric column has one value per node"
        );
        // Spare room a builder reserved would stay with the column for good.
        values.shrink_to_fit();
        self.put(name, unit, Arc::new(values));
    }

    /// Replaces a column's values where it stands, or adds it: recomputed statistics
    /// keep their place beside their metric's columns. (`set` keeps a replaced
    /// column's place too; this name says that the caller relies on it.)
    pub fn set_in_place(&mut self, name: &str, unit: &str, values: Vec<f64>) {
        self.set(name, unit, values);
    }

    /// Drops the columns after the first `width` (undo of a command that added them:
    /// `app::undo` keeps the width, not a copy of the table).
    pub fn truncate(&mut self, width: usize) {
        for name in self.order.drain(width.min(self.order.len())..) {
            self.index.remove(&name);
            self.units.remove(&name);
        }
        self.columns.truncate(width);
    }

    /// Puts a shared column back under its name, where it stands (or last).
    pub fn put(&mut self, name: &str, unit: &str, col: Arc<Vec<f64>>) {
        self.place(name, unit, Col::Heap(col));
    }

    /// Adds or replaces a column whose values lie outside the heap.
    pub fn set_outside(&mut self, name: &str, unit: &str, values: Arc<dyn Outside>) {
        assert_eq!(
            values.values().len(),
            self.rows,
            "metric column has one value per node"
        );
        self.place(name, unit, Col::Outside(values, Arc::default()));
    }

    fn place(&mut self, name: &str, unit: &str, col: Col) {
        match self.index.get(name) {
            Some(&i) => self.columns[i] = col,
            None => {
                self.index.insert(name.to_string(), self.order.len());
                self.order.push(name.to_string());
                self.columns.push(col);
            }
        }
        self.units.insert(name.to_string(), unit.to_string());
    }

    pub fn has(&self, name: &str) -> bool {
        self.index.contains_key(name)
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
        self.index.get(name).map(|&i| self.columns[i].values())
    }

    /// The column itself, shared: state kept beside the table (the tree view's row
    /// weights) holds it without copying a value per node.
    pub fn column(&self, name: &str) -> Option<Arc<Vec<f64>>> {
        self.index.get(name).map(|&i| self.columns[i].shared())
    }

    /// The column node by node, without making a residual column whole: `cct` is the
    /// tree the table belongs to (a residual reads its children).
    pub fn at<'a>(&'a self, name: &str, cct: &'a Cct) -> Option<At<'a>> {
        let &i = self.index.get(name)?;
        Some(match &self.columns[i] {
            Col::Residual(r, whole) if whole.get().is_none() && cct.len() == self.rows => {
                At::Residual(&r.inc, cct)
            }
            Col::Whole(w, whole) if whole.get().is_none() => At::Whole(w),
            c => At::Values(c.values()),
        })
    }

    pub fn get(&self, name: &str, row: u32) -> f64 {
        self.values(name)
            .and_then(|v| v.get(row as usize).copied())
            .unwrap_or(f64::NAN)
    }

    pub fn names(&self) -> Vec<String> {
        self.order.clone()
    }

    /// Column names in table order, without copying them.
    pub fn name_refs(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(|s| s.as_str())
    }

    pub fn unit(&self, name: &str) -> &str {
        self.units.get(name).map(|s| s.as_str()).unwrap_or("")
    }

    /// Keeps only the named columns, in the given order (unknown names are skipped).
    pub fn reorder(&mut self, names: &[String]) {
        let mut order = Vec::with_capacity(names.len());
        let mut columns = Vec::with_capacity(names.len());
        for n in names {
            if let Some(&i) = self.index.get(n) {
                order.push(n.clone());
                columns.push(self.columns[i].clone());
            }
        }
        self.index = order
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        self.units.retain(|k, _| self.index.contains_key(k));
        self.order = order;
        self.columns = columns;
    }

    /// The table as a polars DataFrame, for writers that need one.
    pub fn to_frame(&self) -> PolarsResult<DataFrame> {
        let cols: Vec<Column> = self
            .order
            .iter()
            .zip(&self.columns)
            .map(|(n, c)| Column::new(n.as_str().into(), c.values()))
            .collect();
        DataFrame::new(self.rows, cols)
    }

    /// Metrics that can be chosen as the primary metric: every exclusive metric with an
    /// inclusive partner, then the other columns, in table order.
    pub fn base_metrics(&self) -> Vec<String> {
        let names = &self.order;
        let mut out: Vec<String> = names
            .iter()
            .filter(|n| base_of_inclusive(n).is_none() && self.has(&inclusive_name(n)))
            .cloned()
            .collect();
        let mut taken: HashSet<String> = out.iter().cloned().collect();
        for n in names {
            if base_of_inclusive(n).is_none() && taken.insert(n.clone()) {
                out.push(n.clone());
            }
        }
        for n in names {
            if let Some(b) = base_of_inclusive(n) {
                if !self.has(&b) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    /// The metrics in the order the picker lists them: time metrics first (a Caliper
    /// RAJAPerf profile has ~90 counters before its times), then the others, each group
    /// in `base_metrics` order.
    pub fn picker_metrics(&self) -> Vec<String> {
        let (mut time, other): (Vec<String>, Vec<String>) = self
            .base_metrics()
            .into_iter()
            .partition(|m| is_time_metric(m, self.unit(m)));
        time.extend(other);
        time
    }

    /// The primary metric to open with when the reader's own choice is no time metric:
    /// an exclusive time metric, else an inclusive one (an average before a min, max or
    /// total, since it reads as "the" time of a region); None without time metrics.
    pub fn preferred_time_metric(&self) -> Option<String> {
        let time: Vec<String> = self
            .base_metrics()
            .into_iter()
            .filter(|m| is_time_metric(m, self.unit(m)))
            .collect();
        let exclusive = time.iter().find(|m| base_of_inclusive(m).is_none());
        let average = time
            .iter()
            .find(|m| m.to_ascii_lowercase().starts_with("avg"));
        exclusive.or(average).or(time.first()).cloned()
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
    /// The sums of all columns are made in one pass over the tree's parents.
    pub fn derive_inclusive(&mut self, cct: &Cct, bases: &[&str]) {
        let found: Vec<&str> = bases.iter().copied().filter(|b| self.has(b)).collect();
        let mut sums: Vec<Vec<f64>> = found
            .iter()
            .map(|b| self.values(b).unwrap_or_default().to_vec())
            .collect();
        add_to_parents(cct, &mut sums);
        self.set_inclusive(&found, sums);
    }

    /// As `derive_inclusive` (the same columns, in the same order, with the same
    /// values), for a trace's tree of millions of nodes: each exclusive column whose
    /// sums are exact (`exact_sums`) is summed in place into its inclusive partner and
    /// kept as the residual of it (`Residual`), so the table holds one vector for the
    /// pair, also at the load's peak. The others are copied and summed as
    /// `derive_inclusive` does; with `threads`, the columns side by side (`sum_up`).
    pub fn derive_inclusive_residual(&mut self, cct: &mut Cct, bases: &[&str], threads: bool) {
        let found: Vec<&str> = bases.iter().copied().filter(|b| self.has(b)).collect();
        // Each column to sum: taken out of the table when its sums are exact (it is
        // summed in place), else copied.
        let mut residual = Vec::with_capacity(found.len());
        let cols: Vec<Vec<f64>> = found
            .iter()
            .map(|b| {
                let col = &mut self.columns[self.index[*b]];
                let exact = matches!(col, Col::Heap(a) if exact_sums(a.as_slice()));
                residual.push(exact);
                match col {
                    Col::Heap(a) if exact => {
                        Arc::try_unwrap(std::mem::take(a)).unwrap_or_else(|v| v.to_vec())
                    }
                    c => c.values().to_vec(),
                }
            })
            .collect();
        let parent = residual.contains(&true).then(|| cct.shared_parents());
        let sums = sum_up(cct, cols, threads);
        for ((b, inc), residual) in found.iter().zip(sums).zip(residual) {
            let inc = Arc::new(inc);
            if let (true, Some(parent)) = (residual, &parent) {
                let r = Residual {
                    inc: inc.clone(),
                    parent: parent.clone(),
                };
                self.columns[self.index[*b]] = Col::Residual(Arc::new(r), Arc::default());
            }
            let unit = self.unit(b).to_string();
            self.put(&inclusive_name(b), &unit, inc);
        }
    }

    /// Keeps each column of whole numbers in 0..2^32 that nothing else holds (a
    /// trace's `count`) as u32 (`Col::Whole`): every stream reader's profile passes
    /// here once (`readers::finish`).
    pub fn narrow_whole(&mut self) {
        for c in &mut self.columns {
            if let Col::Heap(a) = c {
                if let (1, Some(w)) = (Arc::strong_count(a), as_whole(a)) {
                    *c = Col::Whole(Arc::new(w), Arc::default());
                }
            }
        }
    }

    /// Adds `<base> (inc)` for each base, with the base's unit.
    fn set_inclusive(&mut self, bases: &[&str], sums: Vec<Vec<f64>>) {
        for (base, inc) in bases.iter().zip(sums) {
            let unit = self.unit(base).to_string();
            self.set(&inclusive_name(base), &unit, inc);
        }
    }
}

/// A metric that measures time: a time unit, or (unit unknown) a name that says so.
/// Ensemble columns (`time@mean`) are judged by their metric part.
pub fn is_time_metric(name: &str, unit: &str) -> bool {
    if matches!(
        unit,
        "s" | "sec" | "ms" | "us" | "µs" | "usec" | "ns" | "nsec"
    ) {
        return true;
    }
    if !unit.is_empty() {
        return false;
    }
    let m = name.rsplit_once('@').map(|x| x.0).unwrap_or(name);
    let m = m.to_ascii_lowercase();
    m.contains("time") || m.contains("duration")
}

/// Sum of `exc` over each node's subtree (NaN counts as 0 unless the whole subtree is NaN).
/// Nodes are created after their parents, so one backward pass over ids suffices.
pub fn subtree_sums(cct: &Cct, exc: &[f64]) -> Vec<f64> {
    let mut inc = [exc.to_vec()];
    add_to_parents(cct, &mut inc);
    let [inc] = inc;
    inc
}

/// Each column made its subtree sums in place: in one pass over the tree, or with
/// `threads` the first on this thread and each other on one of its own (as many
/// threads as `memory` counts); every column gets the same additions in the same order
/// either way, so the values are identical.
fn sum_up(cct: &Cct, mut cols: Vec<Vec<f64>>, threads: bool) -> Vec<Vec<f64>> {
    if !threads || cols.len() < 2 {
        add_to_parents(cct, &mut cols);
        return cols;
    }
    let sum = |mut c: Vec<f64>| {
        add_to_parents(cct, std::slice::from_mut(&mut c));
        c
    };
    std::thread::scope(|sc| {
        let mut each = cols.into_iter();
        let first = each.next();
        let others: Vec<_> = each.map(|c| sc.spawn(move || sum(c))).collect();
        first
            .map(sum)
            .into_iter()
            .chain(
                others
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
            )
            .collect()
    })
}

/// Turns each column of exclusive values into subtree sums in place (NaN as in
/// `subtree_sums`): one backward pass over ids for all of them, as a tree of a big
/// trace has most of a million parents to look up.
fn add_to_parents(cct: &Cct, cols: &mut [Vec<f64>]) {
    for n in (0..cct.len() as u32).rev() {
        if let Some(par) = cct.parent(n) {
            for inc in cols.iter_mut() {
                let v = inc[n as usize];
                if !v.is_nan() {
                    let p = &mut inc[par as usize];
                    *p = if p.is_nan() { v } else { *p + v };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree with fan-out and depth: r(a(b, c(d)), e), a second root f.
    fn residual_tree() -> Cct {
        let mut c = Cct::default();
        let r = c.child(None, "r", "function");
        let a = c.child(Some(r), "a", "function");
        c.child(Some(a), "b", "function");
        let cc = c.child(Some(a), "c", "function");
        c.child(Some(cc), "d", "function");
        c.child(Some(r), "e", "function");
        c.child(None, "f", "function");
        c
    }

    fn table_of(c: &Cct, time: Vec<f64>, gpu: Vec<f64>) -> MetricTable {
        let mut t = MetricTable::new(c.len());
        t.set("time", "ns", time);
        t.set("gpu_time", "ns", gpu);
        t
    }

    #[test]
    fn a_residual_column_gives_back_the_values_it_was_summed_from() {
        let c = residual_tree();
        let time = vec![5.0, 0.0, 3.0, 7.0, 11.0, 2.0, 9.0];
        let gpu = vec![0.0, 4.0, 0.0, 1.0, 8e12, 0.0, 6.0];
        for threads in [false, true] {
            let mut plain = table_of(&c, time.clone(), gpu.clone());
            plain.derive_inclusive(&c, &["time", "gpu_time"]);
            let mut cr = c.clone();
            let mut res = table_of(&cr, time.clone(), gpu.clone());
            res.derive_inclusive_residual(&mut cr, &["time", "gpu_time"], threads);
            assert_eq!(res.names(), plain.names());
            for m in ["time", "gpu_time"] {
                assert!(matches!(res.at(m, &cr), Some(At::Residual(..))), "{m}");
                // Node by node without making the column whole, then whole.
                let each: Vec<f64> = (0..cr.len())
                    .map(|n| res.at(m, &cr).unwrap().get(n))
                    .collect();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&each), bits(plain.values(m).unwrap()), "{m}");
                assert_eq!(bits(res.values(m).unwrap()), bits(plain.values(m).unwrap()));
                assert!(
                    matches!(res.at(m, &cr), Some(At::Values(_))),
                    "whole once asked"
                );
            }
            for m in plain.names() {
                assert_eq!(res.values(&m), plain.values(&m), "{m}");
                assert_eq!(res.unit(&m), plain.unit(&m));
            }
        }
    }

    /// A trace's `count` (whole numbers below 2^32) is kept as u32 and read back bit
    /// for bit, node by node and whole; any other value keeps a column in f64.
    #[test]
    fn whole_number_columns_are_kept_narrow_and_read_back_exactly() {
        let c = residual_tree();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let counts = vec![1.0, 0.0, 3.0, 4294967295.0, 2.0, 1.0, 7.0];
        let not_whole = [
            vec![1.0, 0.0, 3.0, 4294967296.0, 2.0, 1.0, 7.0],
            vec![1.0, -0.0, 3.0, 1.0, 2.0, 1.0, 7.0],
            vec![1.0, 0.5, 3.0, 1.0, 2.0, 1.0, 7.0],
            vec![1.0, f64::NAN, 3.0, 1.0, 2.0, 1.0, 7.0],
            vec![1.0, -1.0, 3.0, 1.0, 2.0, 1.0, 7.0],
        ];
        for (col, narrow) in std::iter::once((counts, true)).chain(not_whole.map(|v| (v, false))) {
            let mut cr = c.clone();
            let mut t = table_of(&cr, vec![1.0; 7], vec![2.0; 7]);
            t.set("count", "", col.clone());
            t.derive_inclusive_residual(&mut cr, &["time", "gpu_time"], false);
            t.narrow_whole();
            assert_eq!(
                matches!(t.at("count", &cr), Some(At::Whole(_))),
                narrow,
                "{col:?}"
            );
            let each: Vec<f64> = (0..7).map(|n| t.at("count", &cr).unwrap().get(n)).collect();
            assert_eq!(bits(&each), bits(&col));
            assert!(t.at("count", &cr).unwrap().get(7).is_nan());
            assert_eq!(bits(t.values("count").unwrap()), bits(&col));
            assert_eq!(bits(&t.column("count").unwrap()), bits(&col));
            assert!(
                matches!(t.at("count", &cr), Some(At::Values(_))),
                "whole once asked"
            );
        }
    }

    #[test]
    fn columns_whose_sums_could_round_are_summed_as_before() {
        let c = residual_tree();
        let fractions = vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
        let huge = vec![4e15, 4e15, 1.0, 1.0, 1.0, 1.0, 1.0];
        let odd = vec![1.0, f64::NAN, 1.0, -0.0, 1.0, 1.0, 1.0];
        for (time, gpu) in [(fractions.clone(), huge), (odd, fractions)] {
            let mut plain = table_of(&c, time.clone(), gpu.clone());
            plain.derive_inclusive(&c, &["time", "gpu_time"]);
            let mut cr = c.clone();
            let mut res = table_of(&cr, time, gpu);
            res.derive_inclusive_residual(&mut cr, &["time", "gpu_time"], false);
            for m in plain.names() {
                let a: Vec<u64> = res
                    .values(&m)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect();
                let b: Vec<u64> = plain
                    .values(&m)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect();
                assert_eq!(a, b, "{m}");
            }
            assert!(matches!(res.at("time", &cr), Some(At::Values(_))));
        }
    }

    #[test]
    fn a_tree_that_shares_its_parents_still_grows_and_copies() {
        let mut c = residual_tree();
        let shared = c.shared_parents();
        let copy = c.clone();
        let g = c.child(Some(0), "g", "function");
        assert_eq!(c.parent(g), Some(0));
        assert_eq!(
            shared.len(),
            copy.len(),
            "the column's links stay as they were"
        );
        assert_eq!(copy.len() + 1, c.len());
        for n in 0..copy.len() as u32 {
            assert_eq!(c.parent(n), copy.parent(n));
        }
    }

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
        assert_eq!(t.preferred_time_metric().as_deref(), Some("time"));
    }

    #[test]
    fn time_metrics_come_first() {
        let mut t = MetricTable::new(1);
        t.set("BlockSize", "", vec![1.0]);
        t.set("Min time/rank (inc)", "s", vec![1.0]);
        t.set("Avg time/rank (inc)", "s", vec![1.0]);
        t.set("Reps", "", vec![1.0]);
        assert_eq!(
            t.picker_metrics(),
            vec![
                "Min time/rank (inc)",
                "Avg time/rank (inc)",
                "BlockSize",
                "Reps"
            ]
        );
        assert_eq!(
            t.preferred_time_metric().as_deref(),
            Some("Avg time/rank (inc)")
        );
        t.set("BlockSize", "", vec![1.0]);
        let mut u = MetricTable::new(1);
        u.set("BlockSize", "", vec![1.0]);
        assert_eq!(u.preferred_time_metric(), None);
    }
}
