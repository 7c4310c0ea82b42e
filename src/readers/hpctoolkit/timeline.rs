//! HPCToolkit's trace.db as grove's event table: each traced CPU thread and GPU stream
//! becomes a lane of events, so the timeline, the kernel chart and the breakdowns work
//! on a database as on a Kineto trace.
//!
//! A trace line is a list of samples (time, calling context); a sample holds until the
//! next one on its line. Consecutive samples in the same context form one event. On a
//! GPU stream the context is the kernel's (or copy's) own node, found below HPCToolkit's
//! placeholder (`<gpu kernel>`, `<gpu copy>`, ...) under the CPU call path that launched
//! it, so "go to launch" lands on the launching call path.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::{ctx_nodes, read_traces};
use crate::model::events::{EventKind, EventTable, NONE_U32};
use crate::model::{Cct, Profile};

/// The event table of a database's traces, with nodes of `tree` (the tree shown:
/// profile 0's own, or the union of the profiles). None without trace.db.
pub fn trace_events(
    dir: &Path,
    profiles: &[Profile],
    tree: &Cct,
) -> Result<Option<EventTable>, String> {
    let traces = read_traces(dir)?;
    let Some(first) = profiles.first() else {
        return Ok(None);
    };
    if traces.is_empty() {
        return Ok(None);
    }
    let to_tree = map_into(tree, &first.cct);
    let ctx: HashMap<u32, u32> = ctx_nodes(&first.cct)
        .into_iter()
        .filter_map(|(c, n)| Some((c, *to_tree.get(n as usize)?)))
        .filter(|&(_, n)| n != NONE_U32)
        .collect();
    let end = traces
        .iter()
        .filter_map(|(_, s)| s.last().map(|x| x.0))
        .max()
        .unwrap_or(0);
    let mut ev = EventTable::default();
    let mut names: HashMap<u32, (u32, EventKind)> = HashMap::new();
    let cat_gpu = ev.strings.intern("gpu");
    let cat_cpu = ev.strings.intern("cpu");
    for (prof, samples) in &traces {
        let Some(p) = profiles.get(*prof) else {
            continue;
        };
        let lane = Lane::of(p.meta_value("id tuple").unwrap_or(""));
        let pid = ev.strings.intern(&lane.rank.to_string());
        let tid = ev.strings.intern(&lane.thread_label());
        let mut k = 0;
        while k < samples.len() {
            let (t0, c) = samples[k];
            let mut j = k + 1;
            while j < samples.len() && samples[j].1 == c {
                j += 1;
            }
            let t1 = samples.get(j).map(|s| s.0).unwrap_or(end);
            k = j;
            let Some(&node) = ctx.get(&c) else {
                continue; // ctx 0: idle
            };
            if t1 <= t0 {
                continue;
            }
            let (name, kind) = *names.entry(node).or_insert_with(|| {
                let (n, kind) = describe(tree, node, lane.gpu);
                (ev.strings.intern(&n), kind)
            });
            let cat = if lane.gpu { cat_gpu } else { cat_cpu };
            let i = ev.push(name, cat, kind, t0 as i64, (t1 - t0) as i64, pid, tid);
            if lane.gpu {
                ev.device[i] = lane.device;
                ev.stream[i] = lane.stream;
            }
            ev.node.push(node);
            ev.launch.push(NONE_U32);
        }
    }
    Ok((!ev.is_empty()).then_some(ev))
}

/// What a trace line is, from its profile's identifier tuple
/// (`NODE 0 [0x590a0502] / GPUCONTEXT 1 / GPUSTREAM 7`, `RANK 1 / THREAD 0`).
#[derive(Debug, Default, PartialEq)]
struct Lane {
    gpu: bool,
    rank: i64,
    thread: i64,
    device: i64,
    stream: i64,
}

impl Lane {
    fn of(tuple: &str) -> Lane {
        let mut l = Lane::default();
        for part in tuple.split(" / ") {
            let mut w = part.split_whitespace();
            let (Some(kind), Some(v)) = (w.next(), w.next().and_then(|v| v.parse::<i64>().ok()))
            else {
                continue;
            };
            match kind {
                "RANK" => l.rank = v,
                "THREAD" => l.thread = v,
                "GPUDEVICE" | "GPUCONTEXT" => {
                    l.gpu = true;
                    l.device = v;
                }
                "GPUSTREAM" => {
                    l.gpu = true;
                    l.stream = v;
                }
                _ => {}
            }
        }
        l
    }

    fn thread_label(&self) -> String {
        if self.gpu {
            format!("gpu{}.{}", self.device, self.stream)
        } else if self.rank != 0 {
            format!("{}.{}", self.rank, self.thread)
        } else {
            self.thread.to_string()
        }
    }
}

/// The event's name and kind: on a GPU lane the node just below HPCToolkit's `<gpu ...>`
/// placeholder (the kernel), on a CPU lane the innermost function.
fn describe(tree: &Cct, node: u32, gpu: bool) -> (String, EventKind) {
    let path = tree.path(node);
    if gpu {
        if let Some(at) = path.iter().rposition(|&n| tree.name(n).starts_with("<gpu")) {
            let kind = match tree.name(path[at]) {
                k if k.contains("kernel") => EventKind::Kernel,
                k if k.contains("memset") => EventKind::Memset,
                k if k.contains("cop") || k.contains("memcpy") => EventKind::Memcpy,
                k if k.contains("sync") => EventKind::Sync,
                _ => EventKind::Kernel,
            };
            let named = path.get(at + 1).copied().unwrap_or(path[at]);
            return (tree.name(named).to_string(), kind);
        }
        return (tree.name(node).to_string(), EventKind::Kernel);
    }
    let f = path
        .iter()
        .rev()
        .find(|&&n| &*tree.frame(n).kind == "function")
        .copied()
        .unwrap_or(node);
    (tree.name(f).to_string(), EventKind::Cpu)
}

/// Each node of `from` -> the node of `into` at the same path of (name, type)
/// (NONE_U32 when absent): parents come before children in both trees.
fn map_into(into: &Cct, from: &Cct) -> Vec<u32> {
    let mut index: HashMap<(u32, Arc<str>, Arc<str>), u32> = HashMap::new();
    for n in 0..into.len() as u32 {
        let f = into.frame(n);
        let parent = into.parent(n).unwrap_or(u32::MAX);
        index
            .entry((parent, f.name.clone(), f.kind.clone()))
            .or_insert(n);
    }
    let mut map = vec![NONE_U32; from.len()];
    for n in 0..from.len() as u32 {
        let f = from.frame(n);
        let parent = match from.parent(n) {
            Some(p) if map[p as usize] == NONE_U32 => continue,
            Some(p) => map[p as usize],
            None => u32::MAX,
        };
        if let Some(&u) = index.get(&(parent, f.name.clone(), f.kind.clone())) {
            map[n as usize] = u;
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_from_identifier_tuples() {
        let g = Lane::of("NODE 0 [0x590a0502] / GPUCONTEXT 1 / GPUSTREAM 7");
        assert!(g.gpu);
        assert_eq!((g.device, g.stream), (1, 7));
        assert_eq!(g.thread_label(), "gpu1.7");
        let c = Lane::of("RANK 1 / THREAD 3");
        assert!(!c.gpu);
        assert_eq!(c.thread_label(), "1.3");
    }

    /// trace.db against profile.db, two independent records of one run: the kernel
    /// time on the GPU stream lines adds up to the database's total GKER time, and
    /// there is one event per kernel launch (GKER:COUNT).
    #[test]
    fn gpu_lines_add_up_to_the_profiles_kernel_time() {
        let c = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        if !c.is_dir() {
            crate::corpus_skip!()
        }
        let base = c.join("hpctoolkit/tests/data/dbase");
        let mut checked = 0;
        for db in [
            "loops-cuda-nvidia-t.d",
            "loops-cuda-nvidiapc-t.nostruct.d",
            "loops-hip-amd-t.d",
            "recursion-cuda-nvidiapc-t.d",
        ] {
            let dir = base.join(db);
            let p = crate::load::load_path(&dir).unwrap();
            let ev = p.events.as_ref().expect(db);
            let kernels: Vec<usize> = (0..ev.len())
                .filter(|&i| ev.kind[i] == EventKind::Kernel)
                .collect();
            let total: i64 = kernels.iter().map(|&i| ev.dur[i]).sum();
            let want: f64 = p
                .meta_value("summary.total GKER (sec) (inc)")
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                (total as f64 - want * 1e9).abs() <= kernels.len() as f64,
                "{db}: {total} ns vs {want} s"
            );
            if let Some(count) = p.meta_value("summary.total GKER:COUNT (inc)") {
                assert_eq!(kernels.len() as f64, count.parse::<f64>().unwrap(), "{db}");
            }
            for &i in &kernels {
                assert!(ev.stream[i] >= 0 && ev.device[i] >= 0, "{db}: stream");
                let path: Vec<&str> = p
                    .cct
                    .path(ev.node[i])
                    .iter()
                    .map(|&n| p.cct.name(n))
                    .collect();
                assert!(path.contains(&"<gpu kernel>"), "{db}: {path:?}");
                if db.contains("cuda") && !db.contains("nostruct") {
                    assert!(
                        path.iter().any(|n| n.starts_with("cudaLaunchKernel")),
                        "{db}: {path:?}"
                    );
                }
            }
            checked += 1;
        }
        assert_eq!(checked, 4);
        // CPU threads: one lane per traced thread, events in time order without overlap.
        let p = crate::load::load_path(&base.join("loops-cputime-t.d")).unwrap();
        let ev = p.events.as_ref().unwrap();
        assert!(ev.len() > 100);
        let mut by_thread: HashMap<u32, Vec<usize>> = HashMap::new();
        for i in 0..ev.len() {
            assert_eq!(ev.kind[i], EventKind::Cpu);
            by_thread.entry(ev.tid[i]).or_default().push(i);
        }
        for evs in by_thread.values() {
            assert!(evs
                .windows(2)
                .all(|w| ev.ts[w[0]] + ev.dur[w[0]] <= ev.ts[w[1]]));
        }
    }
}
