//! What changed between two members of an ensemble: every call path's difference in one
//! metric (NEW − BASE, a node missing from one side counting as zero there, as Hatchet's
//! `sub` on unified trees does), ranked, with the totals; and the same by GPU kernel
//! name for traces. Read by `grove diff` and by the TUI's `diff-next`/`diff-prev`, so
//! the verdict a script gets and the ranking on screen are one computation.

pub mod steps;

use std::collections::HashMap;

use crate::ensemble::column;
use crate::model::metrics::inclusive_name;
use crate::model::{paths, Profile};

/// Which sides have the node (its inclusive column is not NaN there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Both,
    OnlyBase,
    OnlyNew,
}

impl Side {
    /// The marker text: work that appeared or vanished.
    pub fn marker(self) -> &'static str {
        match self {
            Side::Both => "",
            Side::OnlyNew => "new",
            Side::OnlyBase => "gone",
        }
    }

    fn of(base: f64, new: f64) -> Side {
        match (base.is_nan(), new.is_nan()) {
            (false, true) => Side::OnlyBase,
            (true, false) => Side::OnlyNew,
            _ => Side::Both,
        }
    }
}

/// One call path's change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The node in the ensemble's tree.
    pub node: u32,
    /// Exclusive values; NaN where the node is missing.
    pub base: f64,
    pub new: f64,
    /// Exclusive NEW − BASE, missing as zero: the ranking key.
    pub delta: f64,
    /// Inclusive NEW − BASE, missing as zero.
    pub delta_inc: f64,
    pub side: Side,
}

/// One kernel name's change, summed over every call path that launches it.
#[derive(Debug, Clone)]
pub struct KernelChange {
    pub name: String,
    pub base: f64,
    pub new: f64,
    pub delta: f64,
    pub side: Side,
}

/// A whole comparison. `changes` and `kernels` hold every entry whose difference is
/// not zero, largest increase first (so improvements are at the end, largest last).
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The column compared, without label: `time`, or `time (inc)` when the metric has
    /// no exclusive column (`inclusive_only`).
    pub metric: String,
    pub inclusive_only: bool,
    pub unit: String,
    pub base_label: String,
    pub new_label: String,
    /// Sums of the exclusive metric over the whole tree.
    pub base_total: f64,
    pub new_total: f64,
    pub changes: Vec<Change>,
    /// The metric kernels are compared on (`gpu_time` when there is one), and the
    /// kernels; empty when the tree has no kernel nodes.
    pub kernel_metric: String,
    pub kernels: Vec<KernelChange>,
    /// Sums of the kernel metric over the kernel nodes: what a kernel's percentage and
    /// a percentage threshold for kernels are shares of.
    pub kernel_base_total: f64,
    pub kernel_new_total: f64,
}

fn nz(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x
    }
}

/// Compares `metric` (a base name: `time`, not `time@x` nor `time (inc)`) of the members
/// `base` and `new` of the ensemble `p`.
pub fn compare(p: &Profile, metric: &str, base: &str, new: &str) -> Result<Comparison, String> {
    compare_shown(p, metric, base, new, None)
}

/// `compare` over the nodes `shown` marks (all when None): what `grove diff --cmd`
/// leaves in view after `focus`, `hide` and the like. The totals are the shown nodes'.
pub fn compare_shown(
    p: &Profile,
    metric: &str,
    base: &str,
    new: &str,
    shown: Option<&[bool]>,
) -> Result<Comparison, String> {
    let shown = |n: u32| shown.is_none_or(|s| s.get(n as usize).copied().unwrap_or(false));
    let m = &p.metrics;
    // A metric that only comes inclusive (Caliper's `Avg time/rank (inc)`) is compared
    // on that column: its ranking then includes the ancestors of a change.
    let inclusive_only =
        !m.has(&column(metric, base)) && m.has(&column(&inclusive_name(metric), base));
    let exc_name = if inclusive_only {
        inclusive_name(metric)
    } else {
        metric.to_string()
    };
    let col = |l: &str| column(&exc_name, l);
    for l in [base, new] {
        if !m.has(&col(l)) {
            return Err(format!(
                "no column {:?} (metrics: {})",
                col(l),
                m.names().join(", ")
            ));
        }
    }
    let (b, n) = (m.values(&col(base)).unwrap(), m.values(&col(new)).unwrap());
    let inc = |l: &str| {
        let c = column(&inclusive_name(metric), l);
        m.values(&c).unwrap_or(m.values(&col(l)).unwrap())
    };
    let (bi, ni) = (inc(base), inc(new));
    let mut changes = Vec::new();
    for node in (0..p.cct.len() as u32).filter(|&x| shown(x)) {
        let i = node as usize;
        let delta = nz(n[i]) - nz(b[i]);
        let delta_inc = nz(ni[i]) - nz(bi[i]);
        if delta == 0.0 && delta_inc == 0.0 {
            continue;
        }
        changes.push(Change {
            node,
            base: b[i],
            new: n[i],
            delta,
            delta_inc,
            side: Side::of(bi[i], ni[i]),
        });
    }
    // Ties by node id: parents before children, the same order on every run.
    changes.sort_by(|x, y| {
        y.delta
            .total_cmp(&x.delta)
            .then(y.delta_inc.total_cmp(&x.delta_inc))
            .then(x.node.cmp(&y.node))
    });
    let kernel_metric = if m.has(&column("gpu_time", base)) {
        "gpu_time".to_string()
    } else {
        metric.to_string()
    };
    let kernels = kernel_changes(p, &kernel_metric, base, new, &shown);
    let kernel_base_total = kernels_total(p, &kernel_metric, base, &shown);
    let kernel_new_total = kernels_total(p, &kernel_metric, new, &shown);
    let (base_total, new_total) = if inclusive_only {
        // The shown roots' inclusive values: summing every node would count each level.
        let roots: Vec<u32> = (0..p.cct.len() as u32)
            .filter(|&x| shown(x) && p.cct.parent(x).is_none_or(|q| !shown(q)))
            .collect();
        let sum = |v: &[f64]| roots.iter().map(|&r| nz(v[r as usize])).sum();
        (sum(b), sum(n))
    } else {
        let sum = |v: &[f64]| {
            (0..v.len() as u32)
                .filter(|&x| shown(x))
                .map(|x| nz(v[x as usize]))
                .sum()
        };
        (sum(b), sum(n))
    };
    Ok(Comparison {
        metric: exc_name.clone(),
        inclusive_only,
        unit: m.unit(&col(base)).to_string(),
        base_label: base.to_string(),
        new_label: new.to_string(),
        base_total,
        new_total,
        changes,
        kernel_metric,
        kernels,
        kernel_base_total,
        kernel_new_total,
    })
}

impl Change {
    /// Its path (`main/solve#1`), as `grove tree` and the commands name it; computed
    /// only for the rows printed.
    pub fn path(&self, p: &Profile) -> String {
        paths::path_of(&p.cct, self.node)
    }
}

fn kernels_total(p: &Profile, metric: &str, label: &str, shown: &dyn Fn(u32) -> bool) -> f64 {
    let Some(v) = p.metrics.values(&column(metric, label)) else {
        return 0.0;
    };
    (0..p.cct.len() as u32)
        .filter(|&n| shown(n) && &*p.cct.frame(n).kind == "kernel")
        .map(|n| nz(v[n as usize]))
        .sum()
}

fn kernel_changes(
    p: &Profile,
    metric: &str,
    base: &str,
    new: &str,
    shown: &dyn Fn(u32) -> bool,
) -> Vec<KernelChange> {
    let m = &p.metrics;
    let (Some(b), Some(n)) = (
        m.values(&column(metric, base)),
        m.values(&column(metric, new)),
    ) else {
        return Vec::new();
    };
    // name -> (base, new), NaN until a side has the kernel.
    let mut by: HashMap<&str, (f64, f64)> = HashMap::new();
    for node in 0..p.cct.len() as u32 {
        if !shown(node) || &*p.cct.frame(node).kind != "kernel" {
            continue;
        }
        let i = node as usize;
        let e = by.entry(p.cct.name(node)).or_insert((f64::NAN, f64::NAN));
        let add = |acc: f64, x: f64| if x.is_nan() { acc } else { nz(acc) + x };
        e.0 = add(e.0, b[i]);
        e.1 = add(e.1, n[i]);
    }
    let mut out: Vec<KernelChange> = by
        .into_iter()
        .map(|(name, (b, n))| KernelChange {
            name: name.to_string(),
            base: b,
            new: n,
            delta: nz(n) - nz(b),
            side: Side::of(b, n),
        })
        .filter(|k| k.delta != 0.0)
        .collect();
    out.sort_by(|x, y| {
        y.delta
            .total_cmp(&x.delta)
            .then_with(|| x.name.cmp(&y.name))
    });
    out
}

/// How big a change must be to count: a share of BASE's total, or an amount in the
/// metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    Percent(f64),
    Amount(f64),
}

impl Threshold {
    /// `5%`, `2ms`, `150us`, `0.5s`, `1000` (in the metric's unit). Durations are
    /// converted into `unit` when it is one.
    pub fn parse(text: &str, unit: &str) -> Result<Threshold, String> {
        let t = text.trim();
        let bad = || format!("--threshold {text:?}: write N% or an amount such as 2ms");
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| bad())?;
            return if v.is_finite() && v >= 0.0 {
                Ok(Threshold::Percent(v))
            } else {
                Err(bad())
            };
        }
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E'))
            .unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        let v: f64 = num.parse().map_err(|_| bad())?;
        if !v.is_finite() || v < 0.0 {
            return Err(bad());
        }
        let suffix = suffix.trim();
        if suffix.is_empty() {
            return Ok(Threshold::Amount(v));
        }
        let (Some(from), Some(to)) = (ns_per(suffix), ns_per(unit)) else {
            return Err(format!(
                "--threshold {text:?}: {suffix:?} is not a duration the metric's unit \
                 ({}) converts from",
                if unit.is_empty() { "none" } else { unit }
            ));
        };
        Ok(Threshold::Amount(v * from / to))
    }

    /// The amount in the metric's unit, for call paths.
    pub fn amount(self, c: &Comparison) -> f64 {
        match self {
            Threshold::Percent(p) => c.base_total.abs() * p / 100.0,
            Threshold::Amount(a) => a,
        }
    }

    /// The amount for kernels: a percentage is of BASE's kernel total.
    pub fn kernel_amount(self, c: &Comparison) -> f64 {
        match self {
            Threshold::Percent(p) => c.kernel_base_total.abs() * p / 100.0,
            Threshold::Amount(a) => a,
        }
    }
}

fn ns_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" | "µs" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        _ => return None,
    })
}

impl Comparison {
    /// Call paths that grew by more than the threshold, largest first.
    pub fn regressions(&self, t: Threshold) -> impl Iterator<Item = &Change> {
        let a = t.amount(self);
        self.changes.iter().take_while(move |c| c.delta > a)
    }

    /// Call paths that shrank by more than the threshold, largest first.
    pub fn improvements(&self, t: Threshold) -> impl Iterator<Item = &Change> {
        let a = t.amount(self);
        self.changes.iter().rev().take_while(move |c| c.delta < -a)
    }

    pub fn kernel_regressions(&self, t: Threshold) -> impl Iterator<Item = &KernelChange> {
        let a = t.kernel_amount(self);
        self.kernels.iter().take_while(move |k| k.delta > a)
    }

    pub fn kernel_improvements(&self, t: Threshold) -> impl Iterator<Item = &KernelChange> {
        let a = t.kernel_amount(self);
        self.kernels.iter().rev().take_while(move |k| k.delta < -a)
    }

    /// Whether any call path or kernel grew past the threshold: `grove diff`'s exit 1.
    pub fn regressed(&self, t: Threshold) -> bool {
        self.regressions(t).next().is_some() || self.kernel_regressions(t).next().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(paths: &[(&str, f64)]) -> Profile {
        crate::model::profile_of_paths(paths, "ms")
    }

    #[test]
    fn a_missing_node_counts_as_zero_and_ranks_by_size() {
        let before = prof(&[("main/step/conv", 10.0), ("main/step/old", 2.0)]);
        let after = prof(&[
            ("main/step/conv", 11.0),
            ("main/step/CompiledFunction", 13.0),
        ]);
        let u = crate::ensemble::unify(&[before, after], &["before".into(), "after".into()]);
        let c = compare(&u, "time", "before", "after").unwrap();
        let path = |x: &Change| x.path(&u);
        assert_eq!(path(&c.changes[0]), "main/step/CompiledFunction");
        assert_eq!(c.changes[0].delta, 13.0);
        assert_eq!(c.changes[0].side, Side::OnlyNew);
        assert_eq!(path(&c.changes[1]), "main/step/conv");
        let last = c.changes.last().unwrap();
        assert_eq!((path(last).as_str(), last.delta), ("main/step/old", -2.0));
        assert_eq!(last.side, Side::OnlyBase);
        // The parent's inclusive difference includes new and vanished work.
        let step = c.changes.iter().find(|x| path(x) == "main/step").unwrap();
        assert_eq!(step.delta_inc, 13.0 + 1.0 - 2.0);
        assert_eq!((c.base_total, c.new_total), (12.0, 24.0));
        let amount = Threshold::Amount;
        assert_eq!(c.regressions(amount(1.0)).count(), 1);
        assert_eq!(c.improvements(amount(1.0)).count(), 1);
        assert!(c.regressed(amount(12.9)));
        assert!(!c.regressed(amount(13.0)));
        // 100% of BASE's total (12) still lets the 13 ms through.
        assert!(c.regressed(Threshold::Percent(100.0)));
        assert!(c.kernels.is_empty());
    }

    #[test]
    fn thresholds() {
        assert_eq!(Threshold::parse("5%", "ns"), Ok(Threshold::Percent(5.0)));
        assert_eq!(Threshold::parse("2ms", "ns"), Ok(Threshold::Amount(2e6)));
        assert_eq!(
            Threshold::parse("250 us", "ms"),
            Ok(Threshold::Amount(0.25))
        );
        assert_eq!(Threshold::parse("3", ""), Ok(Threshold::Amount(3.0)));
        assert!(Threshold::parse("2ms", "").is_err());
        assert!(Threshold::parse("-1%", "ns").is_err());
        assert!(Threshold::parse("fast", "ns").is_err());
    }
}
