//! Builds the CCT of a trace from its event table.
//!
//! CPU slices nest by time containment per (pid, tid). Sorted by start; at equal starts
//! the longer X slice is the parent, while slices from B/E pairs keep file order; other
//! ties keep file order. While sweeping, an open slice is closed when the next one
//! starts at or after its end, except that zero-duration slices at the same instant
//! nest (later inside earlier). So a zero-duration slice at the start of a longer X
//! nests inside it, and one at its exact end is a sibling — Perfetto's rules (HTA nests
//! the latter; see docs/formats.md). A slice that starts inside an open one but ends after it is placed
//! beside it, under the nearest open slice that contains it.
//!
//! GPU activities hang under the runtime call that launched them (same `correlation`,
//! else the ac2g flow); activities whose launch is not in the file go under one
//! `<unattributed> stream N` root per stream, so nothing is lost; under it, activities
//! that name their framework op (`tf_op`) or XLA op (`hlo_op`) are grouped by them.

use std::collections::HashMap;
use std::sync::Arc;

use super::chrome::ChromeTrace;
use crate::model::cct::FrameId;
use crate::model::events::{EventKind, EventTable, Sparse, NONE_I64};
use crate::model::intern::FxBuild;
use crate::model::{Attrs, Cct, Frame, MetricTable, NO_NODE};

/// Args of a GPU activity without a launch that group it under its root, outermost
/// first: the framework op and the XLA op of an XPlane device event.
const GROUP_ARGS: &[&str] = &["tf_op", "hlo_op"];

pub struct TraceTree {
    pub cct: Cct,
    pub metrics: MetricTable,
    /// The CCT node of each event (NO_NODE for events outside the tree).
    pub node_of_event: Vec<u32>,
    /// The runtime call that launched each GPU activity (NONE_U32 when not in the file).
    pub launch_of_event: Sparse<u32>,
    pub warnings: Vec<String>,
}

/// A thread's role, not its id, names its root: ids differ between runs and ranks, and
/// trees are compared by call path. Kineto's `thread 4037 (python3.8)` becomes
/// `python3.8`; the main thread (tid = pid) is marked so.
fn lane_label(tr: &ChromeTrace, pid: u32, tid: u32) -> String {
    let s = &tr.events.strings;
    let (p, t) = (s.resolve(pid), s.resolve(tid));
    let named = tr
        .thread_names
        .get(&(pid, tid))
        .map(|n| n.trim())
        .filter(|n| !n.is_empty());
    let role = match named {
        Some(n) => {
            // "thread <digits> (<name>)" -> "<name>"
            let inner = n
                .strip_prefix("thread ")
                .and_then(|r| r.split_once(' '))
                .filter(|(id, _)| id.chars().all(|c| c.is_ascii_digit()))
                .and_then(|(_, rest)| rest.strip_prefix('(').and_then(|x| x.strip_suffix(')')));
            inner.unwrap_or(n).to_string()
        }
        None if p.is_empty() && t.is_empty() => return "<global>".to_string(),
        None => match tr.process_names.get(&pid) {
            Some(pn) if !pn.is_empty() => pn.clone(),
            _ => "thread".to_string(),
        },
    };
    if !t.is_empty() && p == t {
        format!("{role} (main thread)")
    } else {
        role
    }
}

pub fn build(tr: &ChromeTrace) -> TraceTree {
    let ev = &tr.events;
    let n = ev.len();
    let mut cct = Cct::default();
    let mut node_of_event = vec![NO_NODE; n];
    // Memory at the load's peak (the end of this build, issue 16): counts are whole
    // numbers (u32 until the column is made), and `gpu` exists only for the GPU pass.
    let mut time = Vec::<f64>::new();
    let mut count = Vec::<u32>::new();
    let grow_count = |v: &mut Vec<u32>, len: usize| {
        if v.len() < len {
            v.resize(len, 0);
        }
    };
    let mut warnings = Vec::new();
    let grow = |v: &mut Vec<f64>, len: usize| {
        if v.len() < len {
            v.resize(len, 0.0);
        }
    };

    let mut nodes = NodeIndex::new(ev);
    // CPU lanes in order of first appearance.
    let mut lanes: Vec<(u32, u32)> = Vec::new();
    let mut lane_events: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for i in 0..n {
        if in_cpu_tree(ev, i) {
            let key = (ev.pid[i], ev.tid[i]);
            lane_events
                .entry(key)
                .or_insert_with(|| {
                    lanes.push(key);
                    Vec::new()
                })
                .push(i as u32);
        }
    }
    // Lane roots are named by role; threads that share one are numbered in order of
    // first appearance (stable across ranks), and their ids stay in the root's attrs.
    let mut labels: HashMap<(u32, u32), String> = HashMap::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for &(p, t) in &lanes {
        let l = lane_label(tr, p, t);
        let k = seen.entry(l.clone()).or_default();
        *k += 1;
        let l = if *k > 1 { format!("{l} #{k}") } else { l };
        labels.insert((p, t), l);
    }
    let mut overlaps = 0u64;
    for key in &lanes {
        let mut idx = lane_events.remove(key).unwrap_or_default();
        order_slices(ev, &mut idx);
        let root = cct.child(None, &labels[&(key.0, key.1)], "thread");
        {
            let s = &tr.events.strings;
            let f = cct.frame_mut(root);
            f.set_attr("pid", s.resolve(key.0));
            f.set_attr("tid", s.resolve(key.1));
            if let Some(n) = tr.thread_names.get(&(key.0, key.1)) {
                f.set_attr("thread_name", n);
            }
        }
        grow(&mut time, cct.len());
        grow_count(&mut count, cct.len());
        count[root as usize] = 1;
        // Open slices: (event, end, node, children's summed duration).
        let mut stack: Vec<(usize, i64, u32, i64)> = Vec::new();
        let close = |s: (usize, i64, u32, i64), time: &mut Vec<f64>| {
            let (e, _, node, child) = s;
            time[node as usize] += (ev.dur[e] - child).max(0) as f64;
        };
        for &i in &idx {
            let i = i as usize;
            let (ts, end) = (ev.ts[i], ev.ts[i] + ev.dur[i]);
            while let Some(&top) = stack.last() {
                let (te, tend) = (top.0, top.1);
                let ended = tend < ts || (tend == ts && (ev.dur[te] > 0 || ev.dur[i] > 0));
                if ended {
                    close(stack.pop().unwrap(), &mut time);
                } else {
                    break;
                }
            }
            // Improper nesting: place the slice under the nearest open one containing it.
            let mut parent_at = stack.len();
            while parent_at > 0 && stack[parent_at - 1].1 < end {
                parent_at -= 1;
            }
            if parent_at < stack.len() {
                overlaps += 1;
            }
            let parent_node = if parent_at == 0 {
                root
            } else {
                stack[parent_at - 1].2
            };
            if parent_at > 0 {
                stack[parent_at - 1].3 += ev.dur[i];
            }
            let node = nodes.child(&mut cct, parent_node, ev, i);
            grow(&mut time, cct.len());
            grow_count(&mut count, cct.len());
            count[node as usize] += 1;
            node_of_event[i] = node;
            if parent_at == stack.len() {
                stack.push((i, end, node, 0));
            } else {
                // It cannot enclose later slices that the open ones do not; account for it now.
                time[node as usize] += ev.dur[i] as f64;
            }
        }
        while let Some(s) = stack.pop() {
            close(s, &mut time);
        }
    }
    if overlaps > 0 {
        warnings.push(format!(
            "{overlaps} CPU slice(s) overlap a slice they start in without nesting; placed beside it"
        ));
    }

    // Launch links: correlation first, ac2g flows as the fallback. The start index of
    // the fallback is built only when an activity needs it (Kineto traces link every
    // activity by correlation).
    let mut by_corr: HashMap<i64, usize, FxBuild> = HashMap::default();
    let placed_runtime = |i: usize| ev.kind[i] == EventKind::Runtime && node_of_event[i] != NO_NODE;
    for i in 0..n {
        if placed_runtime(i) && ev.correlation[i] != NONE_I64 {
            by_corr.entry(ev.correlation[i]).or_insert(i);
        }
    }
    let by_correlation = |i: usize| match ev.correlation[i] {
        NONE_I64 => None,
        c => by_corr.get(&c).copied(),
    };
    let mut by_start: HashMap<(u32, u32, i64), usize, FxBuild> = HashMap::default();
    if (0..n).any(|i| ev.kind[i].is_gpu_activity() && by_correlation(i).is_none()) {
        for i in (0..n).filter(|&i| placed_runtime(i)) {
            by_start
                .entry((ev.pid[i], ev.tid[i], ev.ts[i]))
                .or_insert(i);
        }
    }
    let launch_of = |i: usize| -> Option<usize> {
        if let Some(r) = by_correlation(i) {
            return Some(r);
        }
        let id = tr.flow_ends.get(&(ev.pid[i], ev.tid[i], ev.ts[i]))?;
        let start = tr.flow_starts.get(id)?;
        by_start.get(start).copied()
    };
    let devices: std::collections::BTreeSet<i64> = (0..n)
        .filter(|&i| ev.kind[i].is_gpu_activity())
        .map(|i| ev.device[i])
        .collect();
    let mut unattributed = 0u64;
    // An activity adds at most its stream root, its group nodes and its own node. The
    // zeroed allocation is not touched below the first GPU node: the CPU nodes' zeros
    // cost no memory.
    let gpu_rows = (0..n).filter(|&i| ev.kind[i].is_gpu_activity()).count();
    let mut gpu = vec![0.0f64; cct.len() + gpu_rows * (2 + GROUP_ARGS.len())];
    // Filled in row order, so the sparse column only ever appends.
    let mut launch_of_event: Sparse<u32> = Sparse::new();
    for i in 0..n {
        let k = ev.kind[i];
        if !k.is_gpu_activity() {
            continue;
        }
        let parent = match launch_of(i) {
            Some(r) => {
                launch_of_event.resize_none(i);
                launch_of_event.push(r as u32);
                node_of_event[r]
            }
            None => {
                unattributed += 1;
                let stream = match ev.stream[i] {
                    NONE_I64 => "?".to_string(),
                    s => s.to_string(),
                };
                let label = if devices.len() > 1 {
                    format!("<unattributed> GPU {} stream {stream}", ev.device[i])
                } else {
                    format!("<unattributed> stream {stream}")
                };
                let mut r = cct.child(None, &label, "stream");
                grow_count(&mut count, cct.len());
                count[r as usize] = 1;
                // Framework and XLA ops (XPlane's tf_op/hlo_op) group what has no launch.
                if let Some(a) = ev.args_of(i) {
                    for key in GROUP_ARGS {
                        if let Some(v) = a.get(key) {
                            r = cct.child(Some(r), &a.text(v), key);
                            grow_count(&mut count, cct.len());
                            count[r as usize] += 1;
                        }
                    }
                }
                r
            }
        };
        let node = nodes.child(&mut cct, parent, ev, i);
        grow_count(&mut count, cct.len());
        // A no-op: the bound above holds.
        grow(&mut gpu, cct.len());
        if count[node as usize] == 0 {
            set_gpu_attrs(&mut cct, &mut nodes, node, ev, i);
        }
        count[node as usize] += 1;
        gpu[node as usize] += ev.dur[i] as f64;
        node_of_event[i] = node;
    }
    // The build's indexes go before the metric columns are made: the load's peak.
    drop(nodes);
    drop(by_start);
    drop(by_corr);
    if unattributed > 0 {
        warnings.push(format!(
            "{unattributed} GPU activit(ies) have no launch in the file; shown under <unattributed> roots"
        ));
    }
    launch_of_event.resize_none(n);
    launch_of_event.shrink_to_fit();
    let len = cct.len();
    grow(&mut time, len);
    gpu.truncate(len);
    grow(&mut gpu, len);
    grow_count(&mut count, len);
    let count: Vec<f64> = count.into_iter().map(f64::from).collect();
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", time);
    metrics.set("gpu_time", "ns", gpu);
    metrics.derive_inclusive(&cct, &["time", "gpu_time"]);
    metrics.set("count", "", count);
    TraceTree {
        cct,
        metrics,
        node_of_event,
        launch_of_event,
        warnings,
    }
}

/// Orders one thread's slices for the nesting sweep: by start, then file order; among
/// X slices that start together the longer comes first (it is the parent), while B/E
/// slices keep their place in the file. Reordering only the X slices inside each run of
/// equal starts keeps the order total and consistent.
fn order_slices(ev: &EventTable, idx: &mut [u32]) {
    idx.sort_unstable_by_key(|&i| (ev.ts[i as usize], ev.seq[i as usize]));
    let mut start = 0;
    while start < idx.len() {
        let ts = ev.ts[idx[start] as usize];
        let mut end = start + 1;
        while end < idx.len() && ev.ts[idx[end] as usize] == ts {
            end += 1;
        }
        if end - start > 1 {
            let run = &mut idx[start..end];
            let slots: Vec<usize> = (0..run.len())
                .filter(|&k| !ev.begin_end[run[k] as usize])
                .collect();
            let mut xs: Vec<u32> = slots.iter().map(|&k| run[k]).collect();
            xs.sort_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                ev.dur[b].cmp(&ev.dur[a]).then(ev.seq[a].cmp(&ev.seq[b]))
            });
            for (&k, x) in slots.iter().zip(xs) {
                run[k] = x;
            }
        }
        start = end;
    }
}

/// Finds or makes the node for an event under a parent, keyed by interned ids so the
/// hot loop neither hashes nor allocates text; frames share one string per name.
struct NodeIndex {
    map: HashMap<(u32, u32, u32), u32, FxBuild>,
    text: Vec<Option<Arc<str>>>,
    function: Arc<str>,
    /// Kernel attribute keys and values repeat across nodes (`registers per thread`,
    /// `[128, 1, 1]`): one shared string each (by id) instead of two allocations per
    /// attribute.
    attr_ids: HashMap<Box<str>, u32, FxBuild>,
    attr_text: Vec<Arc<str>>,
    /// Whole lists repeat too (a few launch configurations per kernel): nodes with equal
    /// lists share one, keyed by the (key, value) ids.
    lists: HashMap<Vec<(u32, u32)>, (u32, Attrs), FxBuild>,
    /// Frames repeat across nodes (every `cudaLaunchKernel`, a kernel under each of its
    /// launches): one shared slot per (name, cat) and per (name, cat, attrs list).
    plain: HashMap<(u32, u32), FrameId, FxBuild>,
    with_attrs: HashMap<(u32, u32, u32), FrameId, FxBuild>,
}

impl NodeIndex {
    fn new(ev: &EventTable) -> NodeIndex {
        NodeIndex {
            map: HashMap::default(),
            text: vec![None; ev.strings.len()],
            function: Arc::from("function"),
            attr_ids: HashMap::default(),
            attr_text: Vec::new(),
            lists: HashMap::default(),
            plain: HashMap::default(),
            with_attrs: HashMap::default(),
        }
    }

    fn attr_id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.attr_ids.get(s) {
            return id;
        }
        let id = self.attr_text.len() as u32;
        self.attr_text.push(Arc::from(s));
        self.attr_ids.insert(s.into(), id);
        id
    }

    /// The shared list for these (key, value) ids, and its id.
    fn list(&mut self, ids: Vec<(u32, u32)>) -> (u32, Attrs) {
        if let Some(a) = self.lists.get(&ids) {
            return a.clone();
        }
        let text = &self.attr_text;
        let a = Attrs::from(
            ids.iter()
                .map(|&(k, v)| (text[k as usize].clone(), text[v as usize].clone()))
                .collect::<Vec<_>>(),
        );
        let id = self.lists.len() as u32;
        self.lists.insert(ids, (id, a.clone()));
        (id, a)
    }

    fn text(&mut self, ev: &EventTable, id: u32) -> Arc<str> {
        self.text[id as usize]
            .get_or_insert_with(|| Arc::from(ev.strings.resolve(id)))
            .clone()
    }

    fn child(&mut self, cct: &mut Cct, parent: u32, ev: &EventTable, i: usize) -> u32 {
        let key = (parent, ev.name[i], ev.cat[i]);
        if let Some(&n) = self.map.get(&key) {
            return n;
        }
        let frame = match self.plain.get(&(ev.name[i], ev.cat[i])) {
            Some(&f) => f,
            None => {
                let name = self.text(ev, ev.name[i]);
                let kind = if ev.strings.resolve(ev.cat[i]).is_empty() {
                    self.function.clone()
                } else {
                    self.text(ev, ev.cat[i])
                };
                let f = cct.shared_frame(Frame {
                    name,
                    kind,
                    attrs: Attrs::new(),
                });
                self.plain.insert((ev.name[i], ev.cat[i]), f);
                f
            }
        };
        let n = cct.add_shared(Some(parent), frame);
        self.map.insert(key, n);
        n
    }
}

fn in_cpu_tree(ev: &EventTable, i: usize) -> bool {
    match ev.kind[i] {
        EventKind::Cpu | EventKind::Runtime => true,
        // Sync rows on a GPU stream lane stay out; host-side waits are CPU slices.
        EventKind::Sync => {
            ev.device[i] == NONE_I64
                || ev.strings.resolve(ev.pid[i]).trim() != ev.device[i].to_string()
        }
        _ => false,
    }
}

/// Copies the launch configuration of a GPU activity onto its node (first instance).
/// The node is new, so its attrs are empty and every key is set once, in arg order.
fn set_gpu_attrs(cct: &mut Cct, nodes: &mut NodeIndex, node: u32, ev: &EventTable, i: usize) {
    let mut attrs: Vec<(u32, u32)> = Vec::new();
    let mut set = |k: &str, v: &str| {
        let k = nodes.attr_id(k);
        let v = nodes.attr_id(v);
        match attrs.iter_mut().find(|(key, _)| *key == k) {
            Some((_, old)) => *old = v,
            None => attrs.push((k, v)),
        }
    };
    if ev.device[i] != NONE_I64 {
        set("device", &ev.device[i].to_string());
    }
    if ev.stream[i] != NONE_I64 {
        set("stream", &ev.stream[i].to_string());
    }
    if let Some(args) = ev.args_of(i) {
        for (k, v) in args.iter() {
            if matches!(
                k,
                "device" | "stream" | "correlation" | "External id" | "external id" | "context"
            ) {
                continue;
            }
            set(k, &args.text(v));
        }
    }
    let (list, attrs) = nodes.list(attrs);
    if cct.frame(node).attrs.is_empty() {
        // The node's frame is the plain one of its (name, cat): with this list it is
        // the same for every kernel launched with this configuration.
        let key = (ev.name[i], ev.cat[i], list);
        let f = match nodes.with_attrs.get(&key) {
            Some(&f) => f,
            None => {
                let mut frame = cct.frame(node).clone();
                frame.attrs = attrs;
                let f = cct.shared_frame(frame);
                nodes.with_attrs.insert(key, f);
                f
            }
        };
        cct.set_frame(node, f);
    } else {
        let f = cct.frame_mut(node);
        for (k, v) in attrs.iter() {
            f.set_attr(k, v);
        }
    }
}
