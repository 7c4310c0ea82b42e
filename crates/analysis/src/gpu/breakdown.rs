//! HTA's breakdowns, per rank and stream, in integer nanoseconds (HTA rounds to whole
//! µs; `hta_rounding` reproduces that for comparisons). Definitions: docs/formats.md,
//! "GPU breakdowns".

use std::collections::BTreeMap;

use super::classify::HtaType;
use super::intervals::{intersection_length, length, union};
use super::GpuModel;
use crate::model::events::{NONE_I64, NONE_U32};
use crate::model::{EventKind, EventTable};

/// Which rows the breakdowns read, and how times are rounded.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// HTA rounds ns-resolution times inward to µs: ts = ceil, end = floor.
    pub hta_rounding: bool,
    /// Idle gaps shorter than this are "kernel wait" (HTA's consecutive_kernel_delay).
    pub kernel_wait_ns: i64,
    pub runtime_cutoff_ns: i64,
    pub launch_delay_cutoff_ns: i64,
    /// baseTimeNanoseconds of the trace: HTA rounds the file's relative µs.
    pub hta_base_ns: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hta_rounding: false,
            kernel_wait_ns: 30_000,
            runtime_cutoff_ns: 50_000,
            launch_delay_cutoff_ns: 100_000,
            hta_base_ns: 0,
        }
    }
}

/// Start and end of an event under the chosen rounding.
pub fn span(ev: &EventTable, i: usize, opt: &Options) -> (i64, i64) {
    let (s, e) = (ev.ts[i], ev.ts[i] + ev.dur[i]);
    if !opt.hta_rounding {
        return (s, e);
    }
    // HTA works on the file's µs as float64: end = ts + dur in float, then ts rounds
    // up and end down. Reproduce that arithmetic, precision loss included (epoch µs
    // with a ns fraction do not fit a double exactly).
    let base = opt.hta_base_ns;
    let as_us = |ns: i64| -> f64 {
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        format!("{sign}{}.{:03}", a / 1000, a % 1000)
            .parse()
            .unwrap_or(0.0)
    };
    let ts = as_us(s - base);
    let end = ts + as_us(ev.dur[i]);
    let _ = e;
    (
        ts.ceil() as i64 * 1000 + base,
        end.floor() as i64 * 1000 + base,
    )
}

fn pct(x: i64, of: i64) -> f64 {
    if of > 0 {
        (x as f64 * 10000.0 / of as f64).round() / 100.0
    } else {
        0.0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Temporal {
    pub rank: i64,
    /// None for the rank row (all streams merged).
    pub stream: Option<(i64, i64)>,
    pub kernel_time_ns: i64,
    pub compute_time_ns: i64,
    pub non_compute_time_ns: i64,
    pub idle_time_ns: i64,
    pub compute_pct: f64,
    pub non_compute_pct: f64,
    pub idle_pct: f64,
}

pub const TEMPORAL_HEADER: &str =
    "rank,stream,kernel_time_ns,compute_time_ns,non_compute_time_ns,idle_time_ns,compute_pct,non_compute_pct,idle_pct";

fn temporal_of(
    ev: &EventTable,
    gpu: &GpuModel,
    rows: &[u32],
    opt: &Options,
) -> (i64, i64, i64, i64) {
    if rows.is_empty() {
        return (0, 0, 0, 0);
    }
    let all = union(rows.iter().map(|&i| span(ev, i as usize, opt)).collect());
    let kernel_time = all.last().unwrap().1 - all.first().unwrap().0;
    let busy = length(&all);
    let idle = kernel_time - busy;
    let compute = length(&union(
        rows.iter()
            .filter(|&&i| gpu.hta_of(i) == HtaType::Computation)
            .map(|&i| span(ev, i as usize, opt))
            .collect(),
    ));
    (kernel_time, compute, kernel_time - compute - idle, idle)
}

pub fn temporal(ev: &EventTable, gpu: &GpuModel, rank: i64, opt: &Options) -> Vec<Temporal> {
    let mk = |stream, (k, c, n, i): (i64, i64, i64, i64)| Temporal {
        rank,
        stream,
        kernel_time_ns: k,
        compute_time_ns: c,
        non_compute_time_ns: n,
        idle_time_ns: i,
        compute_pct: pct(c, k),
        non_compute_pct: pct(n, k),
        idle_pct: pct(i, k),
    };
    let mut out = vec![mk(None, temporal_of(ev, gpu, &gpu.activities, opt))];
    for lane in &gpu.lanes {
        out.push(mk(
            Some((lane.device, lane.stream)),
            temporal_of(ev, gpu, &lane.events, opt),
        ));
    }
    out
}

pub fn stream_label(s: Option<(i64, i64)>) -> String {
    match s {
        None => "all".into(),
        Some((_, st)) if st == NONE_I64 => "?".into(),
        Some((_, st)) => st.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Idle {
    pub rank: i64,
    pub stream: i64,
    pub category: &'static str,
    pub idle_time_ns: i64,
    pub idle_time_ratio: f64,
}

pub const IDLE_HEADER: &str = "rank,stream,idle_category,idle_time_ns,idle_time_ratio";

/// HTA's idle-time breakdown: each gap before an activity on its stream is host wait
/// (the launch came after the stream went idle), kernel wait (shorter than the
/// threshold) or other. Gaps are not merged, so overlapping activities give negative
/// gaps, as in HTA.
pub fn idle(ev: &EventTable, gpu: &GpuModel, rank: i64, opt: &Options) -> Vec<Idle> {
    let mut out = Vec::new();
    for lane in &gpu.lanes {
        let mut sums: BTreeMap<&'static str, i64> = BTreeMap::new();
        for cat in ["host_wait", "kernel_wait", "other"] {
            sums.insert(cat, 0);
        }
        let mut prev_end: Option<i64> = None;
        for &i in &lane.events {
            let iu = i as usize;
            let (s, e) = span(ev, iu, opt);
            if let Some(pe) = prev_end {
                let gap = s - pe;
                let launch = ev.launch.get(iu).copied().unwrap_or(NONE_U32);
                let launched_late = launch != NONE_U32 && span(ev, launch as usize, opt).0 > pe;
                let cat = if launched_late {
                    "host_wait"
                } else if gap < opt.kernel_wait_ns {
                    "kernel_wait"
                } else {
                    "other"
                };
                *sums.get_mut(cat).unwrap() += gap;
            }
            prev_end = Some(e);
        }
        let total: i64 = sums.values().sum();
        for (cat, t) in sums {
            out.push(Idle {
                rank,
                stream: lane.stream,
                category: cat,
                idle_time_ns: t,
                idle_time_ratio: if total != 0 {
                    t as f64 / total as f64
                } else {
                    0.0
                },
            });
        }
    }
    out
}

pub const OVERLAP_HEADER: &str = "rank,comp_comm_overlap_pct";

/// Share of communication time that overlaps computation: |∪COMP ∩ ∪COMM| / |∪COMM|.
pub fn overlap(ev: &EventTable, gpu: &GpuModel, opt: &Options) -> f64 {
    let of = |t: HtaType| {
        union(
            gpu.activities
                .iter()
                .filter(|&&i| gpu.hta_of(i) == t)
                .map(|&i| span(ev, i as usize, opt))
                .collect(),
        )
    };
    let comm = of(HtaType::Communication);
    let comp = of(HtaType::Computation);
    let c = length(&comm);
    if c == 0 {
        0.0
    } else {
        intersection_length(&comp, &comm) as f64 * 100.0 / c as f64
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub rank: i64,
    pub launches: u64,
    pub cpu_duration_mean_ns: f64,
    pub gpu_duration_mean_ns: f64,
    pub launch_delay_mean_ns: f64,
    pub launch_delay_max_ns: i64,
    pub short_kernels: u64,
    pub runtime_outliers: u64,
    pub launch_delay_outliers: u64,
}

pub const LAUNCH_HEADER: &str = "rank,launches,cpu_duration_mean_ns,gpu_duration_mean_ns,launch_delay_mean_ns,launch_delay_max_ns,short_kernels,runtime_outliers,launch_delay_outliers";

/// Launch calls HTA counts (CUDA, H100's ExC, MTIA, and async copies/sets).
pub fn is_launch_call(name: &str) -> bool {
    matches!(
        name,
        "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cuLaunchKernel"
            | "cuLaunchKernelEx"
            | "hipLaunchKernel"
            | "hipExtLaunchKernel"
            | "cudaMemcpyAsync"
            | "cudaMemsetAsync"
            | "hipMemcpyAsync"
            | "hipMemsetAsync"
    ) || name.starts_with("runFunction")
}

/// Per launch: (cpu duration, gpu duration, launch delay), by correlation.
pub fn launches(ev: &EventTable, gpu: &GpuModel, opt: &Options) -> Vec<(u32, i64, i64, i64)> {
    let mut out = Vec::new();
    for &i in &gpu.activities {
        let iu = i as usize;
        let r = ev.launch.get(iu).copied().unwrap_or(NONE_U32);
        if r == NONE_U32 || !is_launch_call(ev.name_of(r as usize)) {
            continue;
        }
        let (cs, ce) = span(ev, r as usize, opt);
        let (gs, ge) = span(ev, iu, opt);
        out.push((i, ce - cs, ge - gs, (gs - ce).max(0)));
    }
    out
}

pub fn launch_summary(ev: &EventTable, gpu: &GpuModel, rank: i64, opt: &Options) -> Launch {
    let l = launches(ev, gpu, opt);
    let n = l.len().max(1) as f64;
    Launch {
        rank,
        launches: l.len() as u64,
        cpu_duration_mean_ns: l.iter().map(|x| x.1 as f64).sum::<f64>() / n,
        gpu_duration_mean_ns: l.iter().map(|x| x.2 as f64).sum::<f64>() / n,
        launch_delay_mean_ns: l.iter().map(|x| x.3 as f64).sum::<f64>() / n,
        launch_delay_max_ns: l.iter().map(|x| x.3).max().unwrap_or(0),
        short_kernels: l
            .iter()
            .filter(|x| x.1 <= opt.runtime_cutoff_ns && x.2 < x.1)
            .count() as u64,
        runtime_outliers: l.iter().filter(|x| x.1 > opt.runtime_cutoff_ns).count() as u64,
        launch_delay_outliers: l
            .iter()
            .filter(|x| x.3 > opt.launch_delay_cutoff_ns)
            .count() as u64,
    }
}

/// count, mean, std (n-1), min, 25 %, 50 %, 75 %, max — pandas' describe().
pub fn describe(mut v: Vec<f64>) -> [f64; 8] {
    if v.is_empty() {
        return [0.0; 8];
    }
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        f64::NAN
    };
    let q = |p: f64| {
        // Linear interpolation, as numpy's default.
        let h = (v.len() - 1) as f64 * p;
        let lo = h.floor() as usize;
        let hi = h.ceil() as usize;
        v[lo] + (v[hi] - v[lo]) * (h - lo as f64)
    };
    [n, mean, std, v[0], q(0.25), q(0.5), q(0.75), v[v.len() - 1]]
}

pub const QUEUE_HEADER: &str = "rank,stream,samples,mean,std,min,p25,p50,p75,max";

/// Queue length per stream: +1 when a launch call starts, -1 when its GPU work starts;
/// the summary describes the sampled step function (one sample per change).
pub fn queue(ev: &EventTable, gpu: &GpuModel, opt: &Options) -> Vec<((i64, i64), [f64; 8])> {
    let mut out = Vec::new();
    for lane in &gpu.lanes {
        let mut steps: Vec<(i64, i32)> = Vec::new();
        for &i in &lane.events {
            let iu = i as usize;
            let r = ev.launch.get(iu).copied().unwrap_or(NONE_U32);
            if r == NONE_U32 {
                continue;
            }
            steps.push((span(ev, r as usize, opt).0, 1));
            steps.push((span(ev, iu, opt).0, -1));
        }
        steps.sort_unstable();
        let mut q = 0i64;
        let samples: Vec<f64> = steps
            .iter()
            .map(|&(_, d)| {
                q += d as i64;
                q as f64
            })
            .collect();
        out.push(((lane.device, lane.stream), describe(samples)));
    }
    out
}

pub const MEMORY_HEADER: &str = "rank,type,samples,mean_gbps,std,min,p25,p50,p75,max";

/// Memory bandwidth per copy type (`Memcpy HtoD`, `Memset`, ...): the concurrent
/// bandwidth step function, described over its non-zero points, as HTA does.
/// Zero-length copies count as 1 µs (HTA #20).
pub fn memory(ev: &EventTable, gpu: &GpuModel, opt: &Options) -> Vec<(String, [f64; 8])> {
    let mut by_type: BTreeMap<String, Vec<(i64, f64)>> = BTreeMap::new();
    for &i in &gpu.activities {
        let iu = i as usize;
        if !matches!(ev.kind[iu], EventKind::Memcpy | EventKind::Memset) {
            continue;
        }
        let name = ev.name_of(iu);
        let ty = if name.starts_with("Memset") {
            "Memset".to_string()
        } else {
            name.chars().take(11).collect()
        };
        let bw = ev
            .args_of(iu)
            .and_then(|a| a.get("memory bandwidth (GB/s)"))
            .and_then(|x| x.as_f64())
            .unwrap_or(0.0);
        let (s, mut e) = span(ev, iu, opt);
        if e <= s {
            e = s + 1000;
        }
        let v = by_type.entry(ty).or_default();
        v.push((s, bw));
        v.push((e, -bw));
    }
    by_type
        .into_iter()
        .map(|(ty, mut steps)| {
            // Starts before ends at equal times (HTA concatenates them so), and like
            // HTA the summary leaves out the points where no copy runs.
            steps.sort_by(|a, b| a.0.cmp(&b.0).then((b.1 > 0.0).cmp(&(a.1 > 0.0))));
            let mut cur = 0.0;
            let samples = steps
                .iter()
                .map(|&(_, d)| {
                    cur += d;
                    cur
                })
                .filter(|&x| x > 1e-12)
                .collect();
            (ty, describe(samples))
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Overhead {
    pub rank: i64,
    pub step: String,
    pub step_ns: i64,
    pub launch_ns: i64,
    pub before_first_launch_ns: i64,
    pub after_last_launch_ns: i64,
    pub between_launches_ns: i64,
    pub gap_between_ops_ns: i64,
}

pub const OVERHEAD_HEADER: &str = "rank,step,step_ns,launch_ns,before_first_launch_ns,after_last_launch_ns,between_launches_ns,gap_between_ops_ns";

/// The CPU overhead split used in DLRM analyses, per ProfilerStep of the thread that
/// owns it: time in launch calls, before the first and after the last launch, between
/// consecutive launches, and gaps where no top-level op runs.
/// (start, end, is a launch call) of one CPU slice.
type Slice = (i64, i64, bool);

pub fn overhead(ev: &EventTable, rank: i64, opt: &Options) -> Vec<Overhead> {
    // Each thread's CPU slices once, sorted by start: a step reads its range by binary
    // search instead of scanning the whole table.
    let mut by_thread: BTreeMap<(u32, u32), Vec<Slice>> = BTreeMap::new();
    for i in 0..ev.len() {
        if matches!(ev.kind[i], EventKind::Cpu | EventKind::Runtime) {
            let (a, b) = span(ev, i, opt);
            let launch = ev.kind[i] == EventKind::Runtime && is_launch_call(ev.name_of(i));
            by_thread
                .entry((ev.pid[i], ev.tid[i]))
                .or_default()
                .push((a, b, launch));
        }
    }
    for v in by_thread.values_mut() {
        v.sort_unstable_by_key(|x| (x.0, x.1));
    }
    let mut out = Vec::new();
    for s in 0..ev.len() {
        if ev.kind[s] != EventKind::Cpu || !ev.name_of(s).starts_with("ProfilerStep#") {
            continue;
        }
        let (ss, se) = span(ev, s, opt);
        let Some(slices) = by_thread.get(&(ev.pid[s], ev.tid[s])) else {
            continue;
        };
        let lo = slices.partition_point(|x| x.0 < ss);
        let hi = slices.partition_point(|x| x.0 <= se);
        // The step itself is among the slices: leave it out.
        let inside: Vec<Slice> = slices[lo..hi]
            .iter()
            .copied()
            .filter(|&(a, b, _)| b <= se && !(a == ss && b == se))
            .collect();
        let launch: Vec<(i64, i64)> = inside.iter().filter(|x| x.2).map(|x| (x.0, x.1)).collect();
        let busy = union(inside.iter().map(|x| (x.0, x.1)).collect());
        let launch_ns = length(&union(launch.clone()));
        let (before, after, between) = match (launch.first(), launch.last()) {
            (Some(f), Some(l)) => {
                let between: i64 = launch.windows(2).map(|w| (w[1].0 - w[0].1).max(0)).sum();
                (f.0 - ss, se - l.1, between)
            }
            _ => (se - ss, 0, 0),
        };
        out.push(Overhead {
            rank,
            step: ev.name_of(s).to_string(),
            step_ns: se - ss,
            launch_ns,
            before_first_launch_ns: before,
            after_last_launch_ns: after,
            between_launches_ns: between,
            gap_between_ops_ns: (se - ss) - length(&busy),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hta_rounding_is_inward() {
        let mut ev = EventTable::default();
        let n = ev.strings.intern("k");
        let i = ev.push(n, n, EventKind::Kernel, 1_500, 2_000, 0, 0);
        let opt = Options {
            hta_rounding: true,
            ..Default::default()
        };
        assert_eq!(span(&ev, i, &opt), (2_000, 3_000));
        assert_eq!(span(&ev, i, &Options::default()), (1_500, 3_500));
    }

    #[test]
    fn describe_like_pandas() {
        let d = describe(vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(d[0], 4.0);
        assert_eq!(d[1], 2.5);
        assert!((d[2] - 1.2909944487358056).abs() < 1e-12);
        assert_eq!((d[4], d[5], d[6]), (1.75, 2.5, 3.25));
    }
}
