//! One kernel dispatch, whichever rocprof file it came from, and the profile built from
//! a list of them: the event table and the flat device → queue → kernel tree.

use std::collections::HashMap;

use crate::model::args::ArgValue;
use crate::model::demangle::{demangle, RAW_NAME};
use crate::model::events::{CounterTable, EventKind, EventTable, NONE_I64};
use crate::model::{Cct, MetricTable, Profile, Source};

#[derive(Debug, Default, Clone)]
pub struct Dispatch {
    pub name: String,
    pub device: i64,
    pub queue: i64,
    pub start: i64,
    pub end: i64,
    pub correlation: Option<i64>,
    /// Launch facts as the file names them (grid, workgroup, registers, ...).
    pub args: Vec<(&'static str, i64)>,
    /// A memory copy (rocprofv3 JSON `memory_copy`), not a kernel: it goes on the GPU's
    /// `copies` lane, `queue` unused.
    pub memcpy: bool,
    /// (process, correlation id) of the host call that started it, where the file links
    /// the two (legacy rocprof's `OPS`/`COPY` and `HIP` tables share `pid` and `Index`).
    pub launch_key: Option<(i64, i64)>,
}

/// A host API call (legacy rocprof's `HIP` table): a runtime call on its thread.
#[derive(Debug, Default, Clone)]
pub struct ApiCall {
    pub name: String,
    pub pid: i64,
    pub tid: i64,
    pub start: i64,
    pub end: i64,
    /// Its correlation id within its process (`Index`).
    pub correlation: i64,
}

/// rocprof names are demangled already (legacy rocprof, rocprofv3 by default) but may
/// be raw symbols (rocprofv3 `--mangled-kernels`); the `.kd` of a kernel descriptor
/// symbol is not part of the name to demangle.
fn shown_name(raw: &str) -> Option<String> {
    demangle(raw.strip_suffix(".kd").unwrap_or(raw))
}

pub fn profile(
    ds: Vec<Dispatch>,
    source: Source,
    dialect: String,
    warnings: Vec<String>,
) -> Profile {
    profile_with_calls(ds, Vec::new(), source, dialect, warnings)
}

/// As `profile`, with host API calls beside the GPU tree: `process <pid>` →
/// `thread <tid>` → call, each a runtime event; a dispatch whose `launch_key` matches a
/// call's (pid, correlation) is linked to it as its launch.
pub fn profile_with_calls(
    mut ds: Vec<Dispatch>,
    calls: Vec<ApiCall>,
    source: Source,
    dialect: String,
    mut warnings: Vec<String>,
) -> Profile {
    ds.sort_by_key(|d| (d.start, d.device, d.queue));
    let mut ev = EventTable::default();
    let cat = ev.strings.intern("kernel");
    let copy_cat = ev.strings.intern("memcpy");
    let mut cct = Cct::default();
    let mut gpu: Vec<f64> = Vec::new();
    let mut count: Vec<f64> = Vec::new();
    let mut devices: HashMap<i64, u32> = HashMap::new();
    let mut queues: HashMap<(i64, i64, bool), u32> = HashMap::new();
    let mut kernels: HashMap<(u32, String), u32> = HashMap::new();
    let mut names: HashMap<String, (String, Option<String>)> = HashMap::new();
    let mut node_of_event = Vec::with_capacity(ds.len());
    let mut launch_keys: Vec<(usize, (i64, i64))> = Vec::new();
    let mut bad = 0u64;
    for d in &ds {
        // Times beyond ±2^61 ns (73 years) are damage, and would overflow later sums.
        const LIMIT: u64 = 1 << 61;
        if d.end < d.start || d.start.unsigned_abs() > LIMIT || d.end.unsigned_abs() > LIMIT {
            bad += 1;
            continue;
        }
        let (name, raw) = names
            .entry(d.name.clone())
            .or_insert_with(|| match shown_name(&d.name) {
                Some(s) => (s, Some(d.name.clone())),
                None => (d.name.clone(), None),
            })
            .clone();
        let dev = *devices.entry(d.device).or_insert_with(|| {
            let n = cct.child(None, &format!("GPU {}", d.device), "device");
            cct.frame_mut(n).set_attr("device", &d.device.to_string());
            n
        });
        // Copies share one `copies` node and lane per GPU, apart from its queues.
        let lane = if d.memcpy {
            "copies".to_string()
        } else {
            d.queue.to_string()
        };
        let q = *queues
            .entry((d.device, d.queue, d.memcpy))
            .or_insert_with(|| {
                let (label, kind) = if d.memcpy {
                    ("copies".to_string(), "copies")
                } else {
                    (format!("queue {}", d.queue), "queue")
                };
                let n = cct.child(Some(dev), &label, kind);
                cct.frame_mut(n).set_attr("stream", &lane);
                n
            });
        let k = *kernels.entry((q, name.clone())).or_insert_with(|| {
            let n = cct.child(Some(q), &name, if d.memcpy { "memcpy" } else { "kernel" });
            if let Some(r) = &raw {
                cct.frame_mut(n).set_attr(RAW_NAME, r);
            }
            for (key, v) in &d.args {
                cct.frame_mut(n).set_attr(key, &v.to_string());
            }
            n
        });
        let (pid, tid) = (
            ev.strings.intern(&d.device.to_string()),
            ev.strings.intern(&lane),
        );
        let nm = ev.strings.intern(&name);
        let (kind, c) = if d.memcpy {
            (EventKind::Memcpy, copy_cat)
        } else {
            (EventKind::Kernel, cat)
        };
        let i = ev.push(nm, c, kind, d.start, d.end - d.start, pid, tid);
        ev.device[i] = d.device;
        ev.stream[i] = if d.memcpy { NONE_I64 } else { d.queue };
        if let Some(c) = d.correlation {
            ev.correlation[i] = c;
        }
        if let Some(k) = d.launch_key {
            launch_keys.push((i, k));
        }
        for (key, v) in &d.args {
            ev.arg_store.push(key, ArgValue::Int(*v));
        }
        ev.arg_store.push("device", ArgValue::Int(d.device));
        if !d.memcpy {
            ev.arg_store.push("stream", ArgValue::Int(d.queue));
        }
        ev.args[i] = ev.arg_store.finish();
        if gpu.len() < cct.len() {
            gpu.resize(cct.len(), 0.0);
            count.resize(cct.len(), 0.0);
        }
        gpu[k as usize] += (d.end - d.start) as f64;
        count[k as usize] += 1.0;
        node_of_event.push(k);
    }
    if bad > 0 {
        warnings.push(format!(
            "{bad} dispatch(es) end before they begin or have implausible times; left out"
        ));
    }
    // The device time is the only time the GPU side has: `time` is it too, so the
    // tree's default column is not empty; host calls add their own time there.
    let mut time = gpu.clone();
    let ncalls = calls.len();
    let linked = add_calls(
        calls,
        &launch_keys,
        (&mut cct, &mut ev),
        (&mut time, &mut count, &mut node_of_event),
    );
    let len = cct.len();
    for v in [&mut gpu, &mut count, &mut time] {
        v.resize(len, 0.0);
    }
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", time);
    metrics.set("gpu_time", "ns", gpu);
    metrics.derive_inclusive(&cct, &["time", "gpu_time"]);
    metrics.set("count", "", count);
    ev.node = node_of_event;
    cct.finish();
    let queues = queues.keys().filter(|k| !k.2).count();
    let meta = counts(&ev, devices.len(), queues, ncalls, linked);
    Profile {
        call_graph: None,
        source,
        dialect,
        cct,
        metrics,
        events: Some(ev),
        counters: Some(CounterTable::default()),
        meta,
        warnings,
        default_metric: "time".into(),
    }
}

/// Puts the host calls in the tree and the event table, and links each dispatch that
/// names its call (`launch_keys`: event index, (pid, correlation)) to that call's event.
/// Returns how many were linked. `ev.launch` is (re)made here for every event.
fn add_calls(
    mut calls: Vec<ApiCall>,
    launch_keys: &[(usize, (i64, i64))],
    (cct, ev): (&mut Cct, &mut EventTable),
    (time, count, node_of_event): (&mut Vec<f64>, &mut Vec<f64>, &mut Vec<u32>),
) -> usize {
    calls.sort_by_key(|c| (c.pid, c.tid, c.start));
    let cat = ev.strings.intern("hip_api");
    let mut procs: HashMap<i64, u32> = HashMap::new();
    let mut lanes: HashMap<(i64, i64), u32> = HashMap::new();
    let mut leaves: HashMap<(u32, String), u32> = HashMap::new();
    let mut by_key: HashMap<(i64, i64), usize> = HashMap::new();
    for c in &calls {
        let p = *procs
            .entry(c.pid)
            .or_insert_with(|| cct.child(None, &format!("process {}", c.pid), "process"));
        let thread = *lanes
            .entry((c.pid, c.tid))
            .or_insert_with(|| cct.child(Some(p), &format!("thread {}", c.tid), "thread"));
        let leaf = *leaves
            .entry((thread, c.name.clone()))
            .or_insert_with(|| cct.child(Some(thread), &c.name, "runtime"));
        let (nm, pid, tid) = (
            ev.strings.intern(&c.name),
            ev.strings.intern(&c.pid.to_string()),
            ev.strings.intern(&c.tid.to_string()),
        );
        let i = ev.push(
            nm,
            cat,
            EventKind::Runtime,
            c.start,
            c.end - c.start,
            pid,
            tid,
        );
        ev.correlation[i] = c.correlation;
        by_key.insert((c.pid, c.correlation), i);
        node_of_event.push(leaf);
        if time.len() < cct.len() {
            time.resize(cct.len(), 0.0);
            count.resize(cct.len(), 0.0);
        }
        time[leaf as usize] += (c.end - c.start) as f64;
        count[leaf as usize] += 1.0;
    }
    ev.launch = crate::model::events::Sparse::with_len(ev.len());
    let mut linked = 0;
    for (i, k) in launch_keys {
        if let Some(&call) = by_key.get(k) {
            ev.launch[*i] = call as u32;
            linked += 1;
        }
    }
    linked
}

/// The metadata: how many dispatches, devices, queues, copies and HIP calls.
fn counts(
    ev: &EventTable,
    devices: usize,
    queues: usize,
    ncalls: usize,
    linked: usize,
) -> Vec<(String, String)> {
    let copies = ev.kind.iter().filter(|&&k| k == EventKind::Memcpy).count();
    let mut meta = vec![
        (
            "dispatches".to_string(),
            (ev.len() - copies - ncalls).to_string(),
        ),
        ("devices".to_string(), devices.to_string()),
        ("queues".to_string(), queues.to_string()),
    ];
    if copies > 0 {
        meta.push(("copies".to_string(), copies.to_string()));
    }
    if ncalls > 0 {
        meta.push(("HIP calls".to_string(), ncalls.to_string()));
        meta.push(("linked to their call".to_string(), linked.to_string()));
    }
    meta
}
