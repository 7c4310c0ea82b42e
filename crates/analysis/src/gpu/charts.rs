//! The figures behind the summary panel's charts, derived once per GPU state: time per
//! stream split into compute, non-compute and idle; idle time by cause; device time per
//! kernel category; communication overlapped by computation; the distributions of launch
//! delays and kernel durations; and for the operators with the most device time, the
//! share of each kernel category. The numbers are those of the breakdown tables
//! (`breakdown`), so the charts and `grove summary` agree.

use std::collections::HashMap;

use super::breakdown::{self, Options};
use super::classify::HtaType;
use super::GpuModel;
use crate::model::cct::Cct;
use crate::model::events::NONE_U32;
use crate::model::{EventKind, EventTable};

/// One bar of parts that add up: a label and a value per series of its chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    pub label: String,
    pub parts: Vec<i64>,
}

/// A series of a stacked chart: its name and its colour slot (`None`: the chart's own
/// colour for that position).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stacked {
    pub series: Vec<Series>,
    pub bars: Vec<Stack>,
}

/// One bin of a histogram: values in `lo..hi` (ns; `hi` None: and above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    pub lo: i64,
    pub hi: Option<i64>,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Histogram {
    pub bins: Vec<Bin>,
    pub n: u64,
    pub median_ns: i64,
    pub max_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SummaryCharts {
    /// Per stream (the first bar all streams merged): compute, non-compute, idle.
    pub temporal: Stacked,
    /// Per stream: host wait, kernel wait, other.
    pub idle: Stacked,
    /// One bar per category: its device time (a bar chart, largest first).
    pub categories: Stacked,
    /// Each category bar's colour slot.
    pub category_colors: Vec<u8>,
    /// Communication time overlapped by computation and not; None without
    /// communication kernels.
    pub overlap: Option<(i64, i64)>,
    pub launch_delay: Histogram,
    pub kernel_duration: Histogram,
    /// Per operator (outermost CPU op above the launch), its device time by category.
    pub ops: Stacked,
}

/// How many operators the per-op chart shows, and how many categories it names (the
/// rest are summed as `other`): past that, fills and colours stop being told apart.
pub const TOP_OPS: usize = 10;
pub const OP_CATEGORIES: usize = 7;

pub fn summary_charts(
    ev: &EventTable,
    gpu: &GpuModel,
    cct: &Cct,
    rank: i64,
    opt: &Options,
) -> SummaryCharts {
    let (categories, category_colors) = categories(ev, gpu);
    SummaryCharts {
        temporal: temporal(ev, gpu, rank, opt),
        idle: idle(ev, gpu, rank, opt),
        categories,
        category_colors,
        overlap: overlap(ev, gpu, opt),
        launch_delay: histogram(
            breakdown::launches(ev, gpu, opt)
                .into_iter()
                .map(|l| l.3)
                .collect(),
        ),
        kernel_duration: histogram(
            gpu.activities
                .iter()
                .filter(|&&i| ev.kind[i as usize] == EventKind::Kernel)
                .map(|&i| ev.dur[i as usize])
                .collect(),
        ),
        ops: ops(ev, gpu, cct),
    }
}

fn series(names: &[&str]) -> Vec<Series> {
    names
        .iter()
        .map(|n| Series {
            name: n.to_string(),
            color: None,
        })
        .collect()
}

fn lane_labels(gpu: &GpuModel) -> Vec<String> {
    gpu.lanes.iter().map(|l| l.label()).collect()
}

fn temporal(ev: &EventTable, gpu: &GpuModel, rank: i64, opt: &Options) -> Stacked {
    let rows = breakdown::temporal(ev, gpu, rank, opt);
    let labels = std::iter::once("all streams".to_string()).chain(lane_labels(gpu));
    Stacked {
        series: series(&["compute", "non-compute", "idle"]),
        bars: rows
            .iter()
            .zip(labels)
            .map(|(t, label)| Stack {
                label,
                parts: vec![t.compute_time_ns, t.non_compute_time_ns, t.idle_time_ns],
            })
            .collect(),
    }
}

fn idle(ev: &EventTable, gpu: &GpuModel, rank: i64, opt: &Options) -> Stacked {
    let rows = breakdown::idle(ev, gpu, rank, opt);
    let names = ["host_wait", "kernel_wait", "other"];
    Stacked {
        series: series(&["host wait", "kernel wait", "other"]),
        // Three rows per lane, in lane order.
        bars: rows
            .chunks(3)
            .zip(lane_labels(gpu))
            .map(|(c, label)| Stack {
                label,
                parts: names
                    .iter()
                    .map(|n| {
                        c.iter()
                            .find(|r| r.category == *n)
                            .map_or(0, |r| r.idle_time_ns)
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn categories(ev: &EventTable, gpu: &GpuModel) -> (Stacked, Vec<u8>) {
    let mut by: Vec<(String, u8, i64)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for &i in &gpu.activities {
        let name = gpu.category_name(i);
        let k = *at.entry(name.to_string()).or_insert_with(|| {
            by.push((name.to_string(), gpu.category_color(i), 0));
            by.len() - 1
        });
        by[k].2 += ev.dur[i as usize];
    }
    by.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let colors = by.iter().map(|b| b.1).collect();
    let chart = Stacked {
        series: vec![Series {
            name: "device time".into(),
            color: None,
        }],
        bars: by
            .into_iter()
            .map(|(name, _, t)| Stack {
                label: name,
                parts: vec![t],
            })
            .collect(),
    };
    (chart, colors)
}

fn overlap(ev: &EventTable, gpu: &GpuModel, opt: &Options) -> Option<(i64, i64)> {
    let of = |t: HtaType| {
        super::intervals::union(
            gpu.activities
                .iter()
                .filter(|&&i| gpu.hta_of(i) == t)
                .map(|&i| breakdown::span(ev, i as usize, opt))
                .collect(),
        )
    };
    let comm = of(HtaType::Communication);
    let total = super::intervals::length(&comm);
    if total == 0 {
        return None;
    }
    let both = super::intervals::intersection_length(&of(HtaType::Computation), &comm);
    Some((both, total - both))
}

/// Bin edges 1-2-5 per decade from 1 µs: durations and delays span decades, and equal
/// widths would put nearly all of them in the first bin.
pub fn histogram(mut v: Vec<i64>) -> Histogram {
    if v.is_empty() {
        return Histogram::default();
    }
    v.sort_unstable();
    let max = *v.last().unwrap();
    let mut edges = vec![0i64];
    let mut e = 1000i64;
    while edges.last().copied().unwrap_or(0) <= max {
        edges.push(e);
        e = match e.to_string().as_bytes()[0] {
            b'1' => e * 2,
            b'2' => e / 2 * 5,
            _ => e * 2,
        };
    }
    let mut bins: Vec<Bin> = edges
        .windows(2)
        .map(|w| {
            let lo = v.partition_point(|&x| x < w[0]);
            let hi = v.partition_point(|&x| x < w[1]);
            Bin {
                lo: w[0],
                hi: Some(w[1]),
                count: (hi - lo) as u64,
            }
        })
        .collect();
    // Empty bins at the ends say nothing; between filled ones they are the shape.
    while bins.first().is_some_and(|b| b.count == 0) {
        bins.remove(0);
    }
    while bins.last().is_some_and(|b| b.count == 0) {
        bins.pop();
    }
    Histogram {
        bins,
        n: v.len() as u64,
        median_ns: v[(v.len() - 1) / 2],
        max_ns: max,
    }
}

/// The operator a GPU activity is charged to: the outermost `cpu_op` above the runtime
/// call that launched it (`aten::linear`, not the `aten::addmm` inside it), so one bar
/// holds the kernels of one model-level op; else the launch's caller; else none. This
/// is the node the walk starts from: the launch's, or the activity's own without one.
fn launch_node(ev: &EventTable, cct: &Cct, i: usize) -> Option<u32> {
    let l = ev.launch.get(i).copied().unwrap_or(NONE_U32);
    let from = if l != NONE_U32 { l as usize } else { i };
    let n = *ev.node.get(from)?;
    (n != NONE_U32 && (n as usize) < cct.len()).then_some(n)
}

/// The operator above node `n` (see `launch_node`).
fn op_of(cct: &Cct, n: u32) -> Option<u32> {
    let mut outer = None;
    let mut at = Some(n);
    while let Some(a) = at {
        if &*cct.frame(a).kind == "cpu_op" {
            outer = Some(a);
        }
        at = cct.parent(a);
    }
    outer.or_else(|| cct.parent(n))
}

fn ops(ev: &EventTable, gpu: &GpuModel, cct: &Cct) -> Stacked {
    // Device time per (op name, category index).
    let mut per: HashMap<String, HashMap<u16, i64>> = HashMap::new();
    // Launches share their call path's node: each node's walk up is done once.
    let mut op_memo: HashMap<u32, Option<u32>> = HashMap::new();
    for &i in &gpu.activities {
        let iu = i as usize;
        let op = launch_node(ev, cct, iu)
            .and_then(|n| *op_memo.entry(n).or_insert_with(|| op_of(cct, n)));
        let name = match op {
            Some(o) => cct.frame(o).name.to_string(),
            None => "(no operator)".to_string(),
        };
        let c = gpu.category_of(i).unwrap_or(u16::MAX);
        *per.entry(name).or_default().entry(c).or_default() += ev.dur[iu];
    }
    let mut ops: Vec<(String, HashMap<u16, i64>, i64)> = per
        .into_iter()
        .map(|(n, m)| {
            let t = m.values().sum();
            (n, m, t)
        })
        .collect();
    ops.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    ops.truncate(TOP_OPS);
    // The categories of the shown ops, by their time there; past OP_CATEGORIES, one
    // `other` series.
    let mut cat_time: HashMap<u16, i64> = HashMap::new();
    for (_, m, _) in &ops {
        for (&c, &t) in m {
            *cat_time.entry(c).or_default() += t;
        }
    }
    let mut cats: Vec<(u16, i64)> = cat_time.into_iter().collect();
    let name_of = |c: u16| -> (String, u8) {
        match gpu.categories.rules.get(c as usize) {
            Some(r) => (r.name.clone(), r.color),
            None => ("other".into(), 0),
        }
    };
    cats.sort_by(|a, b| b.1.cmp(&a.1).then(name_of(a.0).0.cmp(&name_of(b.0).0)));
    // Rules can share a name (a user's file in front of the built-in one): one series
    // per name.
    let mut names: Vec<(String, u8)> = Vec::new();
    for &(c, _) in &cats {
        let n = name_of(c);
        if !names.iter().any(|x| x.0 == n.0) {
            names.push(n);
        }
    }
    let rest = names.len() > OP_CATEGORIES;
    if rest {
        names.truncate(OP_CATEGORIES - 1);
    }
    let index = |c: u16| -> usize {
        let n = name_of(c).0;
        names.iter().position(|x| x.0 == n).unwrap_or(names.len())
    };
    let width = names.len() + rest as usize;
    let mut series: Vec<Series> = names
        .iter()
        .map(|(n, col)| Series {
            name: n.clone(),
            color: Some(*col),
        })
        .collect();
    if rest {
        series.push(Series {
            name: "rest".into(),
            color: None,
        });
    }
    let bars = ops
        .into_iter()
        .map(|(label, m, _)| {
            let mut parts = vec![0i64; width];
            for (c, t) in m {
                parts[index(c).min(width - 1)] += t;
            }
            Stack { label, parts }
        })
        .collect();
    Stacked { series, bars }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_one_two_five_and_trimmed() {
        let h = histogram(vec![1_500, 1_700, 3_000, 60_000]);
        let edges: Vec<(i64, Option<i64>, u64)> =
            h.bins.iter().map(|b| (b.lo, b.hi, b.count)).collect();
        assert_eq!(
            edges,
            [
                (1_000, Some(2_000), 2),
                (2_000, Some(5_000), 1),
                (5_000, Some(10_000), 0),
                (10_000, Some(20_000), 0),
                (20_000, Some(50_000), 0),
                (50_000, Some(100_000), 1),
            ]
        );
        assert_eq!((h.n, h.median_ns, h.max_ns), (4, 1_700, 60_000));
        // Zero delays fall in the first bin, below 1 µs.
        let h = histogram(vec![0, 0, 999, 1000]);
        assert_eq!(
            h.bins[0],
            Bin {
                lo: 0,
                hi: Some(1000),
                count: 3
            }
        );
        assert_eq!(h.bins[1].count, 1);
        assert_eq!(histogram(vec![]), Histogram::default());
        // Every value lands in one bin.
        let v: Vec<i64> = (0..5000).map(|i| i * 997 % 3_000_000).collect();
        let h = histogram(v);
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<u64>(), 5000);
    }
}
