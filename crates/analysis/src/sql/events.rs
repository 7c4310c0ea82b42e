//! The small trace tables, `lanes`, `steps` and `counters`, and the lane and step of
//! each event (the wide tables, `events` and `kernels`, are in `wide.rs`), from the
//! event table the reader built (docs/sql.md).

use std::collections::HashMap;

use polars::prelude::*;

use crate::model::events::{NONE_I64, NONE_U32};
use crate::model::{EventKind, EventTable, Profile};

/// The events, or why there are none to give (an empty table for a profile without
/// events: a query over a tree-only profile answers with no rows).
pub(super) fn events_of(p: &Profile) -> PolarsResult<Option<&EventTable>> {
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
pub(super) struct Lane {
    pub(super) label: String,
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
pub(super) fn lanes_of(ev: &EventTable) -> (Vec<u32>, Vec<Lane>) {
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
pub(super) fn step_slices(ev: &EventTable) -> Vec<(i64, u32)> {
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
pub(super) fn step_of_events(ev: &EventTable, steps: &[(i64, u32)]) -> Vec<Option<i64>> {
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
        strs("process", ev, &ids, |i| ev.pid[i])?,
        strs("thread", ev, &ids, |i| ev.tid[i])?,
        Column::new(
            "node".into(),
            ids.iter()
                .map(|&i| node_ok.then(|| opt_u32(ev.node[i as usize])).flatten())
                .collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(ids.len(), cols)
}

fn strs(
    name: &str,
    ev: &EventTable,
    ids: &[u32],
    f: impl Fn(usize) -> u32,
) -> PolarsResult<Column> {
    let codes = ids.iter().map(|&i| Some(f(i as usize)));
    super::wide::dict_strings(name, codes, |c| ev.strings.resolve(c))
}

/// Counter samples (`ph: C`), one row per sample in file order: the counter's name,
/// the series (the args key), the track the timeline draws it on (`name.series`, or the
/// name alone when the series repeats it), process, time (ns) and value.
pub fn counters(p: &Profile) -> PolarsResult<DataFrame> {
    let empty = crate::model::events::CounterTable::default();
    let c = p.counters.as_ref().unwrap_or(&empty);
    let Some(ev) = p.events.as_ref().filter(|_| !c.ts.is_empty()) else {
        let cols = [
            ("name", DataType::String),
            ("series", DataType::String),
            ("track", DataType::String),
            ("process", DataType::String),
            ("time", DataType::Int64),
            ("value", DataType::Float64),
        ]
        .into_iter()
        .map(|(n, t)| Column::full_null(n.into(), 0, &t))
        .collect();
        return DataFrame::new(0, cols);
    };
    let s = &ev.strings;
    let n = c.ts.len();
    let str_of = |name: &str, v: &[u32]| {
        super::wide::dict_strings(name, v.iter().map(|&x| Some(x)), |x| s.resolve(x))
    };
    let mut tracks: HashMap<(u32, u32), String> = HashMap::new();
    let track: Vec<&str> = {
        for k in 0..n {
            tracks.entry((c.name[k], c.series[k])).or_insert_with(|| {
                let (a, b) = (s.resolve(c.name[k]), s.resolve(c.series[k]));
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}.{b}")
                }
            });
        }
        (0..n)
            .map(|k| tracks[&(c.name[k], c.series[k])].as_str())
            .collect()
    };
    let cols = vec![
        str_of("name", &c.name)?,
        str_of("series", &c.series)?,
        Column::new("track".into(), track),
        str_of("process", &c.pid)?,
        Column::new("time".into(), &c.ts),
        Column::new(
            "value".into(),
            c.value
                .iter()
                .map(|v| Some(*v).filter(|v| v.is_finite()))
                .collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(n, cols)
}
