//! The trace tables: `events`, `kernels`, `lanes` and `steps`, from the event table
//! the reader built (docs/sql.md). Names are resolved from the interned strings; the
//! lane and step of each event are worked out once per table build.

use std::collections::HashMap;

use polars::prelude::*;

use crate::gpu::classify::Categories;
use crate::model::events::{NONE_I64, NONE_U32};
use crate::model::{EventKind, EventTable, Profile};

/// The events, or why there are none to give (an empty table for a profile without
/// events: a query over a tree-only profile answers with no rows).
fn events_of(p: &Profile) -> PolarsResult<Option<&EventTable>> {
    match &p.events {
        Some(ev) if ev.lod.is_some() => Err(PolarsError::ComputeError(
            "low-memory mode: single events are not loaded (reopen without --low-memory)".into(),
        )),
        Some(ev) => Ok(Some(ev)),
        None => Ok(None),
    }
}

fn opt_i64(v: i64) -> Option<i64> {
    (v != NONE_I64).then_some(v)
}

fn opt_u32(v: u32) -> Option<u32> {
    (v != NONE_U32).then_some(v)
}

/// A timeline lane: a GPU stream (its activities) or a CPU thread (its slices and
/// runtime calls), as the timeline panel draws them.
struct Lane {
    label: String,
    gpu: bool,
    device: i64,
    stream: i64,
    pid: u32,
    tid: u32,
    events: u64,
    start: i64,
    end: i64,
}

/// Each event's lane (an index into the lanes, NONE_U32 for kinds no lane draws) and
/// the lanes in the timeline's order: GPU streams by (device, stream), then CPU
/// threads in the order their first slice comes.
fn lanes_of(ev: &EventTable) -> (Vec<u32>, Vec<Lane>) {
    let mut gpu: HashMap<(i64, i64), u32> = HashMap::new();
    let mut cpu: HashMap<(u32, u32), u32> = HashMap::new();
    let mut keys: Vec<(bool, i64, i64, u32, u32)> = Vec::new();
    let mut of = vec![NONE_U32; ev.len()];
    for (i, k) in ev.kind.iter().enumerate() {
        let slot = if k.is_gpu_activity() {
            let key = (ev.device[i], ev.stream[i]);
            *gpu.entry(key).or_insert_with(|| {
                keys.push((true, key.0, key.1, ev.pid[i], ev.tid[i]));
                keys.len() as u32 - 1
            })
        } else if matches!(k, EventKind::Cpu | EventKind::Runtime) {
            let key = (ev.pid[i], ev.tid[i]);
            *cpu.entry(key).or_insert_with(|| {
                keys.push((false, NONE_I64, NONE_I64, key.0, key.1));
                keys.len() as u32 - 1
            })
        } else {
            continue;
        };
        of[i] = slot;
    }
    // Timeline order: GPU lanes sorted, CPU lanes in first-seen order.
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by_key(|&k| {
        let (g, d, s, ..) = keys[k as usize];
        (!g, if g { (d, s) } else { (0, 0) }, k)
    });
    let mut rank = vec![0u32; keys.len()];
    for (r, &k) in order.iter().enumerate() {
        rank[k as usize] = r as u32;
    }
    let mut lanes: Vec<Lane> = order
        .iter()
        .map(|&k| {
            let (gpu, device, stream, pid, tid) = keys[k as usize];
            let label = if gpu {
                crate::gpu::Lane {
                    device,
                    stream,
                    events: Vec::new(),
                    member: 0,
                    group: String::new(),
                }
                .label()
            } else {
                format!("CPU t{}", ev.strings.resolve(tid))
            };
            Lane {
                label,
                gpu,
                device,
                stream,
                pid,
                tid,
                events: 0,
                start: i64::MAX,
                end: i64::MIN,
            }
        })
        .collect();
    for (i, l) in of.iter_mut().enumerate() {
        if *l != NONE_U32 {
            *l = rank[*l as usize];
            let lane = &mut lanes[*l as usize];
            lane.events += 1;
            lane.start = lane.start.min(ev.ts[i]);
            lane.end = lane.end.max(ev.ts[i] + ev.dur[i].max(0));
        }
    }
    (of, lanes)
}

/// `ProfilerStep#N` slices: (N, event), sorted by start.
fn step_slices(ev: &EventTable) -> Vec<(i64, u32)> {
    let names: HashMap<u32, i64> = (0..ev.strings.len() as u32)
        .filter_map(|s| {
            let n = ev.strings.resolve(s).strip_prefix("ProfilerStep#")?;
            Some((s, n.trim().parse().ok()?))
        })
        .collect();
    let mut steps: Vec<(i64, u32)> = Vec::new();
    if names.is_empty() {
        return steps;
    }
    for (i, (name, kind)) in ev.name.iter().zip(&ev.kind).enumerate() {
        if *kind == EventKind::Cpu {
            if let Some(&n) = names.get(name) {
                steps.push((n, i as u32));
            }
        }
    }
    steps.sort_by_key(|&(_, i)| (ev.ts[i as usize], i));
    steps
}

/// The step each event belongs to: that of the slice its start (a GPU activity's
/// launch's start, where the launch is known) falls in.
fn step_of_events(ev: &EventTable, steps: &[(i64, u32)]) -> Vec<Option<i64>> {
    let starts: Vec<i64> = steps.iter().map(|&(_, i)| ev.ts[i as usize]).collect();
    let has_launch = ev.launch.len() == ev.len();
    (0..ev.len())
        .map(|i| {
            if steps.is_empty() {
                return None;
            }
            let at = match has_launch.then(|| ev.launch[i]) {
                Some(l) if l != NONE_U32 => l as usize,
                _ => i,
            };
            let t = ev.ts[at];
            let k = starts.partition_point(|&s| s <= t).checked_sub(1)?;
            let (n, e) = steps[k];
            let e = e as usize;
            (t < ev.ts[e] + ev.dur[e].max(1)).then_some(n)
        })
        .collect()
}

fn str_col<'a>(name: &str, ev: &'a EventTable, ids: &[u32], f: impl Fn(usize) -> u32) -> Column {
    let v: Vec<&'a str> = ids
        .iter()
        .map(|&i| ev.strings.resolve(f(i as usize)))
        .collect();
    Column::new(name.into(), v)
}

/// The columns `events` and `kernels` share, for the rows `ids`.
fn common(ev: &EventTable, ids: &[u32]) -> Vec<Column> {
    let (lane_of, lanes) = lanes_of(ev);
    let steps = step_slices(ev);
    let step = step_of_events(ev, &steps);
    let at =
        |f: &dyn Fn(usize) -> i64| -> Vec<i64> { ids.iter().map(|&i| f(i as usize)).collect() };
    let node_ok = ev.node.len() == ev.len();
    let launch_ok = ev.launch.len() == ev.len();
    vec![
        Column::new("id".into(), ids),
        str_col("name", ev, ids, |i| ev.name[i]),
        Column::new("start".into(), at(&|i| ev.ts[i])),
        Column::new("duration".into(), at(&|i| ev.dur[i])),
        Column::new("end".into(), at(&|i| ev.ts[i] + ev.dur[i])),
        str_col("process", ev, ids, |i| ev.pid[i]),
        str_col("thread", ev, ids, |i| ev.tid[i]),
        Column::new(
            "lane".into(),
            ids.iter()
                .map(|&i| {
                    lanes
                        .get(lane_of[i as usize] as usize)
                        .map(|l| l.label.as_str())
                })
                .collect::<Vec<Option<&str>>>(),
        ),
        Column::new(
            "device".into(),
            ids.iter()
                .map(|&i| opt_i64(ev.device[i as usize]))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "stream".into(),
            ids.iter()
                .map(|&i| opt_i64(ev.stream[i as usize]))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "correlation".into(),
            ids.iter()
                .map(|&i| opt_i64(ev.correlation[i as usize]))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "launch".into(),
            ids.iter()
                .map(|&i| launch_ok.then(|| opt_u32(ev.launch[i as usize])).flatten())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "node".into(),
            ids.iter()
                .map(|&i| node_ok.then(|| opt_u32(ev.node[i as usize])).flatten())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "step".into(),
            ids.iter().map(|&i| step[i as usize]).collect::<Vec<_>>(),
        ),
    ]
}

/// Every event, in file order, with its kind and category.
pub fn events(p: &Profile) -> PolarsResult<DataFrame> {
    let empty = EventTable::default();
    let ev = events_of(p)?.unwrap_or(&empty);
    let ids: Vec<u32> = (0..ev.len() as u32).collect();
    let mut cols = common(ev, &ids);
    cols.insert(
        1,
        Column::new(
            "kind".into(),
            ev.kind.iter().map(|k| k.label()).collect::<Vec<&str>>(),
        ),
    );
    cols.insert(3, str_col("category", ev, &ids, |i| ev.cat[i]));
    DataFrame::new(ids.len(), cols)
}

/// The kernels `grove kernels` counts (GPU activities of kind kernel), one row per
/// instance in start order, with grove's category.
pub fn kernels(p: &Profile, cats: &Categories) -> PolarsResult<DataFrame> {
    let empty = EventTable::default();
    let ev = events_of(p)?.unwrap_or(&empty);
    let mut ids: Vec<u32> = (0..ev.len() as u32)
        .filter(|&i| ev.kind[i as usize] == EventKind::Kernel)
        .collect();
    ids.sort_by_key(|&i| (ev.ts[i as usize], i));
    let mut by_name: HashMap<u32, usize> = HashMap::new();
    let category: Vec<&str> = ids
        .iter()
        .map(|&i| {
            let name = ev.name[i as usize];
            let c = *by_name
                .entry(name)
                .or_insert_with(|| cats.classify(ev.strings.resolve(name), EventKind::Kernel));
            cats.rules.get(c).map_or("other", |r| r.name.as_str())
        })
        .collect();
    let mut cols = common(ev, &ids);
    cols.insert(2, Column::new("category".into(), category));
    DataFrame::new(ids.len(), cols)
}

/// The timeline's lanes, in its order (GPU streams, then CPU threads).
pub fn lanes(p: &Profile) -> PolarsResult<DataFrame> {
    let empty = EventTable::default();
    let ev = events_of(p)?.unwrap_or(&empty);
    let (_, lanes) = lanes_of(ev);
    let n = lanes.len();
    let cols = vec![
        Column::new("id".into(), (0..n as u32).collect::<Vec<u32>>()),
        Column::new(
            "lane".into(),
            lanes.iter().map(|l| l.label.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "gpu".into(),
            lanes.iter().map(|l| l.gpu).collect::<Vec<_>>(),
        ),
        Column::new(
            "device".into(),
            lanes.iter().map(|l| opt_i64(l.device)).collect::<Vec<_>>(),
        ),
        Column::new(
            "stream".into(),
            lanes.iter().map(|l| opt_i64(l.stream)).collect::<Vec<_>>(),
        ),
        Column::new(
            "process".into(),
            lanes
                .iter()
                .map(|l| ev.strings.resolve(l.pid))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "thread".into(),
            lanes
                .iter()
                .map(|l| (!l.gpu).then(|| ev.strings.resolve(l.tid)))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "events".into(),
            lanes.iter().map(|l| l.events).collect::<Vec<_>>(),
        ),
        Column::new(
            "start".into(),
            lanes.iter().map(|l| l.start).collect::<Vec<_>>(),
        ),
        Column::new(
            "end".into(),
            lanes.iter().map(|l| l.end).collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(n, cols)
}

/// The `ProfilerStep#N` slices, by start.
pub fn steps(p: &Profile) -> PolarsResult<DataFrame> {
    let empty = EventTable::default();
    let ev = events_of(p)?.unwrap_or(&empty);
    let steps = step_slices(ev);
    let ids: Vec<u32> = steps.iter().map(|&(_, i)| i).collect();
    let at =
        |f: &dyn Fn(usize) -> i64| -> Vec<i64> { ids.iter().map(|&i| f(i as usize)).collect() };
    let node_ok = ev.node.len() == ev.len();
    let cols = vec![
        Column::new(
            "step".into(),
            steps.iter().map(|s| s.0).collect::<Vec<i64>>(),
        ),
        Column::new("id".into(), &ids),
        Column::new("start".into(), at(&|i| ev.ts[i])),
        Column::new("duration".into(), at(&|i| ev.dur[i])),
        Column::new("end".into(), at(&|i| ev.ts[i] + ev.dur[i])),
        str_col("process", ev, &ids, |i| ev.pid[i]),
        str_col("thread", ev, &ids, |i| ev.tid[i]),
        Column::new(
            "node".into(),
            ids.iter()
                .map(|&i| node_ok.then(|| opt_u32(ev.node[i as usize])).flatten())
                .collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(ids.len(), cols)
}
