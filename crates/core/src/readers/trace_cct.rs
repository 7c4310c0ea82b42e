//! Builds the CCT of a trace from its event table.
//!
//! CPU slices nest by time containment per (pid, tid). Sorted by start; at equal starts
//! the longer X slice is the parent, while slices from B/E pairs keep file order; other
//! ties keep file order. While sweeping, an open slice is closed when the next one
//! starts at or after its end, except that zero-duration slices at the same instant
//! nest (later inside earlier). So a zero-duration slice at the start of a longer X
//! nests inside it, and one at its exact end is a sibling — Perfetto's rules (HTA nests
//! the latter; see docs/formats.md). A slice that starts inside an open one but ends
//! after it is placed beside it, under the nearest open slice that contains it, and
//! counts from the end of the slice it overlaps: nothing is counted twice, and what
//! runs inside it later nests under it.
//!
//! GPU activities hang under the runtime call that launched them (same `correlation`,
//! else the ac2g flow); activities whose launch is not in the file go under one
//! `<unattributed> stream N` root per stream, so nothing is lost; under it, activities
//! that name their framework op (`tf_op`) or XLA op (`hlo_op`) are grouped by them.

use std::collections::HashMap;

use super::chrome::ChromeTrace;
use crate::model::cct::Grow;
use crate::model::coded::BytePairs;
use crate::model::events::{EventKind, EventTable, Sparse, NONE_I64, NONE_U32};
use crate::model::intern::FxBuild;
use crate::model::{Cct, MetricTable, NO_NODE};

mod launches;
mod nodes;
pub mod phases;
mod sort;
#[cfg(test)]
mod tests;

use nodes::NodeIndex;

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
    let mut ph = phases::Phases::start();
    let ev = &tr.events;
    let n = ev.len();
    // The launch index and the kernels' attrs lists need no tree: with a second core
    // they are made while the CPU lanes are swept.
    let (mut gpu, b) = if super::chrome::threads() > 1 {
        std::thread::scope(|s| {
            // The second core gathers the lanes of the second half of the rows, then
            // makes the event-to-node column (its pages are fresh memory, first
            // written here) while the lanes are sorted: each is taken when needed.
            let half = n / 2;
            let (give_lanes, take_lanes) = std::sync::mpsc::sync_channel(1);
            let (give, take) = std::sync::mpsc::sync_channel(1);
            let gpu = s.spawn(move || {
                // The loading thread takes them or has ended early by a panic: either
                // way no one waits on a failed send.
                let _ = give_lanes.send(gather_lanes(ev, half..n));
                let _ = give.send(vec![NO_NODE; n]);
                let mut gpu = launches::gpu_rows(tr);
                gpu.make_lists_ahead(ev);
                gpu
            });
            let b = cpu_tree(
                tr,
                &mut ph,
                half,
                || {
                    take_lanes
                        .recv()
                        .unwrap_or_else(|_| gather_lanes(ev, half..n))
                },
                || take.recv().unwrap_or_else(|_| vec![NO_NODE; n]),
            );
            let gpu = gpu.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (gpu, b)
        })
    } else {
        let gpu = launches::gpu_rows(tr);
        ph.mark("launch-index");
        (gpu, cpu_tree(tr, &mut ph, n, Vec::new, || vec![NO_NODE; n]))
    };
    ph.mark("launch-index-wait");
    let Builder {
        mut cct,
        mut nodes,
        mut node_of_event,
        mut time,
        mut count,
        mut warnings,
    } = b;

    let mut unattributed = 0u64;
    // An activity adds its own node at most, and one without a launch by correlation
    // its stream root and group nodes too: the column is made once at that bound (a
    // looser one cost memory at the load's peak). The zeroed allocation is not touched
    // below the first GPU node: the CPU nodes' zeros cost no memory.
    let bound = cct.len() + gpu.rows.len() + gpu.unlinked * (1 + GROUP_ARGS.len());
    let mut gpu_time = vec![0.0f64; bound];
    let mut stream_roots = StreamRoots::default();
    for (k, &i) in gpu.rows.iter().enumerate() {
        let i = i as usize;
        let parent = match gpu.launch[k] {
            NONE_U32 => {
                unattributed += 1;
                let mut r = stream_roots.root(&mut cct, ev, i, gpu.multi_device);
                grow(&mut count, cct.len());
                count[r as usize] = 1.0;
                // Framework and XLA ops (XPlane's tf_op/hlo_op) group what has no launch.
                if let Some(a) = ev.args_of(i) {
                    for key in GROUP_ARGS {
                        if let Some(v) = a.get(key) {
                            r = cct.child(Some(r), &a.text(v), key);
                            grow(&mut count, cct.len());
                            count[r as usize] += 1.0;
                        }
                    }
                }
                r
            }
            r => node_of_event[r as usize],
        };
        let mut g = cct.grow();
        let node = nodes.child(&mut g, parent, ev, i);
        grow(&mut count, g.len());
        // A no-op: the bound above holds.
        grow(&mut gpu_time, g.len());
        // A node's first instance is its first row: its launch configuration is the
        // node's attrs.
        if count[node as usize] == 0.0 {
            let list = match gpu.made.get(k) {
                Some(&l) => l,
                None => gpu.lists.of(ev, i),
            };
            nodes.set_attrs(&mut g, node, list, gpu.lists.get(list));
        }
        count[node as usize] += 1.0;
        gpu_time[node as usize] += ev.dur[i] as f64;
        node_of_event[i] = node;
    }
    ph.mark("gpu-pass");
    // The build's indexes go before the metric columns are made: the load's peak.
    let launch_of_event = gpu.launch_of_event;
    drop(gpu.rows);
    drop(gpu.launch);
    drop(gpu.lists);
    drop(gpu.made);
    drop(nodes);
    cct.release_last_children();
    // glibc keeps what the build freed in its heap, where the metric columns do not
    // fit: hand those pages back first, or they count on top of the columns at the
    // load's peak.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
    ph.mark("trim");
    if unattributed > 0 {
        warnings.push(format!(
            "{unattributed} GPU {} no launch in the file; shown under <unattributed> roots",
            activities(unattributed as usize)
        ));
    }
    let len = cct.len();
    grow(&mut time, len);
    gpu_time.truncate(len);
    grow(&mut gpu_time, len);
    grow(&mut count, len);
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", time);
    metrics.set("gpu_time", "ns", gpu_time);
    // The exclusive columns become residuals of the inclusive ones (whole
    // nanoseconds: exact), one vector for each pair at the load's peak.
    let threads = super::chrome::threads() > 1;
    metrics.derive_inclusive_residual(&mut cct, &["time", "gpu_time"], threads);
    metrics.set("count", "", count);
    ph.mark("metrics");
    TraceTree {
        cct,
        metrics,
        node_of_event,
        launch_of_event,
        warnings,
    }
}

/// The `<unattributed>` root of each GPU stream, found by the row's (device, stream):
/// its label was formatted and looked up for every activity without a launch (a
/// rocprofv3 trace's every kernel), about 1,000 instructions each.
#[derive(Default)]
struct StreamRoots {
    last: Option<((i64, i64), u32)>,
    root_of: HashMap<(i64, i64), u32, FxBuild>,
}

impl StreamRoots {
    fn root(&mut self, cct: &mut Cct, ev: &EventTable, i: usize, multi_device: bool) -> u32 {
        let key = (ev.device[i], ev.stream[i]);
        if let Some((k, r)) = self.last {
            if k == key {
                return r;
            }
        }
        let r = *self.root_of.entry(key).or_insert_with(|| {
            let stream = match key.1 {
                NONE_I64 => "?".to_string(),
                s => s.to_string(),
            };
            let label = if multi_device {
                format!("<unattributed> GPU {} stream {stream}", key.0)
            } else {
                format!("<unattributed> stream {stream}")
            };
            // Devices that share a label (one device named) share the root.
            cct.child(None, &label, "stream")
        });
        self.last = Some((key, r));
        r
    }
}

fn grow(v: &mut Vec<f64>, len: usize) {
    if v.len() < len {
        v.resize(len, 0.0);
    }
}

/// The tree as the CPU lanes leave it, and what the GPU pass adds to.
struct Builder {
    cct: Cct,
    nodes: NodeIndex,
    node_of_event: Vec<u32>,
    time: Vec<f64>,
    /// The column as it is kept (whole numbers): made as u32 and converted, it stood
    /// beside its copy at the load's peak and cost a pass.
    count: Vec<f64>,
    warnings: Vec<String>,
}

/// The CPU lanes' slices nested by time, one root per lane.
/// `rest`: gives the lanes of the rows from `split` on (`gather_lanes`);
/// `node_of_event`: gives the event-to-node column, every row NO_NODE.
fn cpu_tree(
    tr: &ChromeTrace,
    ph: &mut phases::Phases,
    split: usize,
    rest: impl FnOnce() -> Lanes,
    node_of_event: impl FnOnce() -> Vec<u32>,
) -> Builder {
    let ev = &tr.events;
    let n = ev.len();
    // The node arrays grow as nodes come: events bound them, but a trace whose events
    // repeat few call paths (grove-gen's) has far fewer nodes, and room for every event
    // raised its peak.
    let mut cct = Cct::default();
    let mut time = Vec::<f64>::new();
    let mut count = Vec::<f64>::new();
    let mut warnings = Vec::new();
    let nodes = NodeIndex::new(ev, n);
    // One core: each lane's rows are linked through the event-to-node column (a lane
    // list cost 4 bytes a CPU row at the load's peak); with two, the second gathers
    // half the lists while the first gathers the other half.
    let (mut lanes, column): (Vec<((u32, u32), Rows)>, _) = if split == n {
        let mut column = node_of_event();
        (linked_lanes(ev, &mut column), column)
    } else {
        let lanes = all_lanes(ev, split, rest)
            .into_iter()
            .map(|(key, idx)| (key, Rows::List(idx)))
            .collect();
        (lanes, node_of_event())
    };
    // Each event makes at most one node, each lane its root: the per-node columns are
    // made once at their size (what GPU activities without a launch add aside), not
    // regrown (issue 16: regrowing left holes that raised the load's peak).
    time.reserve_exact(n + lanes.len());
    count.reserve_exact(n + lanes.len());
    ph.mark("lanes");
    let labels = lane_labels(tr, lanes.iter().map(|(key, _)| *key));
    for (_, rows) in &mut lanes {
        if let Rows::List(idx) = rows {
            order_slices(ev, idx);
        }
    }
    ph.mark("lane-sort");
    let mut sweep = Sweep::new(tr, nodes, column, time, count);
    for ((key, rows), label) in lanes.into_iter().zip(&labels) {
        let root = lane_root(tr, &mut cct, key, label);
        grow(&mut sweep.time, cct.len());
        grow(&mut sweep.count, cct.len());
        sweep.count[root as usize] = 1.0;
        // The lane's nodes are added through the arrays held once.
        let mut g = cct.grow();
        match rows {
            Rows::List(idx) => sweep.lane(&mut g, root, list_rows(&idx)),
            Rows::Linked(l) if l.in_order => sweep.lane(&mut g, root, linked_rows(l)),
            Rows::Linked(l) => {
                // Out of order: this lane's list alone, sorted as above.
                let mut idx = Vec::with_capacity(l.count as usize);
                let mut next = linked_rows(l);
                while let Some(i) = next(&sweep) {
                    idx.push(i as u32);
                }
                order_slices(ev, &mut idx);
                sweep.lane(&mut g, root, list_rows(&idx));
            }
        }
    }
    ph.mark("cpu-sweep");
    warnings.extend(sweep.overlap_warning());
    let Sweep {
        nodes,
        node_of_event,
        time,
        count,
        ..
    } = sweep;
    Builder {
        cct,
        nodes,
        node_of_event,
        time,
        count,
        warnings,
    }
}

/// The CPU lanes of the first `split` rows, then those `rest` gives: the second part's
/// lanes follow on from the first's; its new lanes come after them, still in order of
/// first appearance.
fn all_lanes(ev: &EventTable, split: usize, rest: impl FnOnce() -> Lanes) -> Lanes {
    let mut lanes = gather_lanes(ev, 0..split);
    let rest = rest();
    if !rest.is_empty() {
        let mut lane_of: HashMap<(u32, u32), usize, FxBuild> = lanes
            .iter()
            .enumerate()
            .map(|(l, (key, _))| (*key, l))
            .collect();
        for (key, rows) in rest {
            match lane_of.get(&key) {
                Some(&l) => lanes[l].1.extend_from_slice(&rows),
                None => {
                    lane_of.insert(key, lanes.len());
                    lanes.push((key, rows));
                }
            }
        }
    }
    lanes
}

/// Lane roots are named by role; threads that share one are numbered in order of first
/// appearance (stable across ranks), and their ids stay in the root's attrs.
fn lane_labels(tr: &ChromeTrace, keys: impl ExactSizeIterator<Item = (u32, u32)>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::with_capacity(keys.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (p, t) in keys {
        let l = lane_label(tr, p, t);
        let k = seen.entry(l.clone()).or_default();
        *k += 1;
        labels.push(if *k > 1 { format!("{l} #{k}") } else { l });
    }
    labels
}

/// A lane's root (made in lane order: node ids follow it), its ids in its attrs.
fn lane_root(tr: &ChromeTrace, cct: &mut Cct, key: (u32, u32), label: &str) -> u32 {
    let root = cct.child(None, label, "thread");
    let s = &tr.events.strings;
    let f = cct.frame_mut(root);
    f.set_attr("pid", s.resolve(key.0));
    f.set_attr("tid", s.resolve(key.1));
    if let Some(n) = tr.thread_names.get(&(key.0, key.1)) {
        f.set_attr("thread_name", n);
    }
    root
}

/// An open slice on a lane's stack: (event, end, node, children's summed duration, the
/// duration it counts: its own, or from where it was placed when it overlapped).
type Open = (usize, i64, u32, i64, i64);

/// The slices that overlapped without nesting (`Sweep::counted`): counted in a local
/// during a lane's sweep (`Sweep::lane`), so the step's loop keeps them in registers.
#[derive(Default, Clone, Copy)]
struct Overlaps {
    overlaps: u64,
    /// Overlaps where Python frames were cut short, and the time cut; the time that
    /// the other overlapping slices left in the slices they started in.
    cut_short: u64,
    cut_time: i64,
    clipped: i64,
}

impl Overlaps {
    fn add(&mut self, o: Overlaps) {
        self.overlaps += o.overlaps;
        self.cut_short += o.cut_short;
        self.cut_time += o.cut_time;
        self.clipped += o.clipped;
    }
}

/// The sweep of the CPU lanes: the per-node columns it fills and the overlaps it met.
struct Sweep<'a> {
    ev: &'a EventTable,
    nodes: NodeIndex,
    node_of_event: Vec<u32>,
    time: Vec<f64>,
    count: Vec<f64>,
    python: Option<u32>,
    /// Slices whose end is not in the file (sorted): their rows run to the trace's end
    /// so that what ran after them nests under them, but they count no time of their
    /// own, and never cut the frames they start in (their end is not a real one).
    unended: Vec<u32>,
    stats: Overlaps,
}

impl<'a> Sweep<'a> {
    fn new(
        tr: &'a ChromeTrace,
        nodes: NodeIndex,
        node_of_event: Vec<u32>,
        time: Vec<f64>,
        count: Vec<f64>,
    ) -> Sweep<'a> {
        let ev = &tr.events;
        let mut unended = tr.unended.clone();
        unended.sort_unstable();
        Sweep {
            ev,
            nodes,
            node_of_event,
            time,
            count,
            python: ev.strings.get("python_function"),
            unended,
            stats: Overlaps::default(),
        }
    }

    /// Tested for every slice: inline while no slice is unended (most traces).
    #[inline(always)]
    fn is_unended(&self, i: usize) -> bool {
        !self.unended.is_empty() && self.unended_row(i)
    }

    #[inline(never)]
    fn unended_row(&self, i: usize) -> bool {
        self.unended.binary_search(&self.ev.seq.get(i)).is_ok()
    }

    /// Closes the top slice; an unended one counts no time of its own and hands its
    /// children's time to the slice below (its parent), which counted none of it.
    /// Inline: the sweep closes a slice for about every slice it opens.
    #[inline(always)]
    fn close(&mut self, stack: &mut Vec<Open>) {
        let Some((e, _, node, child, dur)) = stack.pop() else {
            return;
        };
        if self.is_unended(e) {
            if let Some(up) = stack.last_mut() {
                up.3 += child;
            }
        } else {
            self.time[node as usize] += (dur - child).max(0) as f64;
        }
    }

    /// One lane's slices under its root, in nesting order as `next` gives them (it
    /// reads a linked lane's next row before the row's node replaces its link).
    fn lane(&mut self, g: &mut Grow, root: u32, mut next: impl FnMut(&Self) -> Option<usize>) {
        let mut stack: Vec<Open> = Vec::new();
        let mut stats = Overlaps::default();
        while let Some(i) = next(self) {
            self.step(g, root, &mut stack, &mut stats, i);
        }
        self.end(&mut stack);
        self.stats.add(stats);
    }

    /// Closes what a lane left open.
    fn end(&mut self, stack: &mut Vec<Open>) {
        while !stack.is_empty() {
            self.close(stack);
        }
    }

    /// Slice `i`, the next of its lane in nesting order, under the lane's `root`, with
    /// the lane's open slices (`stack`) and overlaps.
    #[inline(always)]
    fn step(
        &mut self,
        g: &mut Grow,
        root: u32,
        stack: &mut Vec<Open>,
        stats: &mut Overlaps,
        i: usize,
    ) {
        let ev = self.ev;
        let (ts, end) = (ev.ts[i], ev.ts[i] + ev.dur[i]);
        while let Some(&top) = stack.last() {
            let (te, tend) = (top.0, top.1);
            let ended = tend < ts || (tend == ts && (ev.dur[te] > 0 || ev.dur[i] > 0));
            if ended {
                self.close(stack);
            } else {
                break;
            }
        }
        let mut parent_at = stack.len();
        while parent_at > 0 && stack[parent_at - 1].1 < end {
            parent_at -= 1;
        }
        // A slice that overlaps none above its parent counts its own duration:
        // tested here, the common case takes no call.
        let dur = if parent_at == stack.len() {
            ev.dur[i]
        } else {
            self.counted(stack, stats, parent_at, i)
        };
        let parent_node = if parent_at == 0 {
            root
        } else {
            stack[parent_at - 1].2
        };
        if parent_at > 0 && !self.is_unended(i) {
            stack[parent_at - 1].3 += dur;
        }
        let node = self.nodes.child(g, parent_node, ev, i);
        if node as usize >= self.time.len() {
            // A new node: the columns grow to it (not tested per slice).
            grow(&mut self.time, g.len());
            grow(&mut self.count, g.len());
        }
        self.count[node as usize] += 1.0;
        self.node_of_event[i] = node;
        // Below the slices it overlaps: they end first, and it stays open for what
        // starts after them. Ends on the stack stay in decreasing order.
        if parent_at == stack.len() {
            stack.push((i, end, node, 0, dur));
        } else {
            stack.insert(parent_at, (i, end, node, 0, dur));
        }
    }

    /// The duration slice `i` counts, its parent being `stack[parent_at - 1]` (the
    /// slices above that it overlaps).
    ///
    /// Improper nesting (a PyTorch annotation that starts inside the Python frames of
    /// the `record_function.__enter__` that opens it and ends after them): nothing may
    /// be counted twice (docs/formats.md "Improper overlaps"). A Python frame yields to
    /// an op or annotation: the frames it overlaps end where it starts, so it keeps its
    /// whole duration, as PyTorch's key_averages counts it. Otherwise the later slice
    /// yields: it counts from the end of the outermost open slice it overlaps, and the
    /// part before stays time of the slices it started in. Either way its parent is the
    /// nearest open slice that contains it, and what runs inside it afterwards nests
    /// under it.
    fn counted(
        &mut self,
        stack: &mut Vec<Open>,
        stats: &mut Overlaps,
        parent_at: usize,
        i: usize,
    ) -> i64 {
        let ev = self.ev;
        let (ts, end) = (ev.ts[i], ev.ts[i] + ev.dur[i]);
        if parent_at == stack.len() {
            return ev.dur[i];
        }
        stats.overlaps += 1;
        let python = self.python;
        let yields = |s: &Self, e: usize| python.is_some_and(|p| ev.cat[e] == p) || s.is_unended(e);
        if !yields(self, i) && stack[parent_at..].iter().all(|o| yields(self, o.0)) {
            stats.cut_short += 1;
            while stack.len() > parent_at {
                let Some((e, oend, node, child, d)) = stack.pop() else {
                    break;
                };
                // A frame that counts from later than `ts` (it yielded itself) loses
                // only what it counts.
                let cut = (oend - ts).min(d);
                stats.cut_time += cut;
                if let Some(up) = stack.last_mut() {
                    up.3 -= cut;
                }
                stack.push((e, oend, node, child, d - cut));
                self.close(stack);
            }
            ev.dur[i]
        } else {
            let from = stack[parent_at].1;
            stats.clipped += from - ts;
            end - from
        }
    }

    /// The one line on the slices that overlapped without nesting, if any did.
    fn overlap_warning(&self) -> Option<String> {
        let Overlaps {
            overlaps,
            cut_short,
            cut_time,
            clipped,
        } = self.stats;
        (overlaps > 0).then(|| {
            format!(
                "{overlaps} CPU slice(s) overlap a slice they start in without nesting: {cut_short} \
                 op(s) or annotation(s) end the Python frames they start in ({:.3} ms cut from \
                 those frames), {} placed beside the slice they start in from its end on ({:.3} ms \
                 left in the slices they started in)",
                cut_time as f64 / 1e6,
                overlaps - cut_short,
                clipped as f64 / 1e6
            )
        })
    }
}

/// The rows of each CPU lane: (pid, tid) and its rows in file order.
type Lanes = Vec<((u32, u32), Vec<u32>)>;

/// A lane's rows: a list, or linked through the event-to-node column.
enum Rows {
    List(Vec<u32>),
    Linked(Linked),
}

/// A lane whose rows are linked: each row's slot in the event-to-node column holds
/// the lane's next row until the sweep gives the row its node.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Linked {
    first: u32,
    last: u32,
    count: u32,
    /// Every row starts after the one before it: the sweep's order (`order_slices`
    /// would leave it as it is), so the lane is swept by following the links.
    in_order: bool,
    /// The last row's start: compared with the next one's without reading it again.
    last_ts: i64,
}

fn list_rows(idx: &[u32]) -> impl FnMut(&Sweep) -> Option<usize> + '_ {
    let mut it = idx.iter();
    move |_| it.next().map(|&i| i as usize)
}

fn linked_rows(l: Linked) -> impl FnMut(&Sweep) -> Option<usize> {
    let (mut at, mut left) = (l.first as usize, l.count);
    move |s| {
        if left == 0 {
            return None;
        }
        let i = at;
        at = s.node_of_event[i] as usize;
        left -= 1;
        Some(i)
    }
}

/// The CPU lanes of every row in order of first appearance, each row linked to its
/// lane's next in `column` (`Linked`).
fn linked_lanes(ev: &EventTable, column: &mut [u32]) -> Vec<((u32, u32), Rows)> {
    let mut lanes = LinkedLanes::default();
    // The rows both columns hold as byte codes by their pairs (a Chrome trace's last
    // row is kept apart, `Coded::push`), the others by value.
    let pairs = BytePairs::new(&ev.pid, &ev.tid);
    if let Some(pairs) = &pairs {
        lanes.by_codes(ev, column, pairs);
    }
    let coded = pairs.map_or(0, |p| p.len().min(ev.len()));
    lanes.by_values(ev, coded..ev.len(), column);
    lanes.rows()
}

/// The lanes `linked_lanes` finds, in order of first appearance.
#[derive(Default)]
struct LinkedLanes {
    list: Vec<((u32, u32), Linked)>,
    find: LaneFinder,
}

impl LinkedLanes {
    fn rows(self) -> Vec<((u32, u32), Rows)> {
        self.list
            .into_iter()
            .map(|(key, l)| (key, Rows::Linked(l)))
            .collect()
    }

    /// The lanes of `rows` by their pid and tid values.
    fn by_values(&mut self, ev: &EventTable, rows: std::ops::Range<usize>, column: &mut [u32]) {
        for i in rows {
            if in_cpu_tree(ev, i) {
                let l = self.find((ev.pid[i], ev.tid[i]), i);
                self.link(l, i, ev.ts[i], column);
            }
        }
    }

    /// The lane of (pid, tid), made at row `i` when new.
    #[inline(always)]
    fn find(&mut self, key: (u32, u32), i: usize) -> usize {
        let list = &mut self.list;
        self.find.lane(key, || {
            let first = Linked {
                first: i as u32,
                last: i as u32,
                count: 0,
                in_order: true,
                last_ts: 0,
            };
            list.push((key, first));
            list.len() - 1
        })
    }

    /// Row `i` (starting at `ts`) appended to lane `l`.
    #[inline(always)]
    fn link(&mut self, l: usize, i: usize, ts: i64, column: &mut [u32]) {
        let lane = &mut self.list[l].1;
        if lane.count > 0 {
            column[lane.last as usize] = i as u32;
            lane.in_order &= lane.last_ts < ts;
        }
        lane.last = i as u32;
        lane.last_ts = ts;
        lane.count += 1;
    }

    /// The lanes of the rows `pairs` covers (the pid and tid columns' byte codes):
    /// each pair of codes finds its lane by value once, then by a table, with no column
    /// read through its checks per row (about 80 instructions a row before, a third of
    /// them bounds checks). Pairs of equal values share the lane the values find.
    fn by_codes(&mut self, ev: &EventTable, column: &mut [u32], pairs: &BytePairs<u32>) {
        const NEW: u32 = u32::MAX;
        let mut lane_of = vec![NEW; pairs.slots()];
        let rows = ev.kind.iter().zip(&ev.ts).zip(pairs.codes());
        for (i, ((&kind, &ts), (&p, &t))) in rows.enumerate() {
            let cpu = match kind {
                EventKind::Cpu | EventKind::Runtime => true,
                EventKind::Sync => in_cpu_tree(ev, i),
                _ => false,
            };
            if !cpu {
                continue;
            }
            let at = pairs.pair(p, t);
            let l = match lane_of.get(at) {
                Some(&l) if l != NEW => l as usize,
                _ => {
                    let key = pairs.values(at).unwrap_or_else(|| (ev.pid[i], ev.tid[i]));
                    let l = self.find(key, i);
                    if let Some(x) = lane_of.get_mut(at) {
                        *x = l as u32;
                    }
                    l
                }
            };
            self.link(l, i, ts, column);
        }
    }
}

/// The CPU lanes of `rows` in order of first appearance.
fn gather_lanes(ev: &EventTable, rows: std::ops::Range<usize>) -> Lanes {
    let mut lanes: Lanes = Vec::new();
    let mut find = LaneFinder::default();
    for i in rows {
        if in_cpu_tree(ev, i) {
            let key = (ev.pid[i], ev.tid[i]);
            let l = find.lane(key, || {
                lanes.push((key, Vec::new()));
                lanes.len() - 1
            });
            lanes[l].1.push(i as u32);
        }
    }
    lanes
}

/// A (pid, tid) lane's index among the lanes found so far.
#[derive(Default)]
struct LaneFinder {
    /// The first FEW lanes, looked through before hashing: most traces have a few
    /// threads, whose rows interleave (a Perfetto trace's threads switch every few
    /// rows), and a look through a few words is cheaper than a hash-map entry.
    few: Vec<(u64, usize)>,
    /// The lanes after the first FEW, keyed by (pid, tid) in one word: one hashing step.
    lane_of: HashMap<u64, usize, FxBuild>,
    /// Rows of one lane mostly come in runs, so the last lane is tried first.
    last: Option<((u32, u32), usize)>,
}

/// Lanes kept in `LaneFinder::few`.
const FEW: usize = 16;

impl LaneFinder {
    /// The lane of `key`; `add` makes a new one and gives its index.
    #[inline]
    fn lane(&mut self, key: (u32, u32), add: impl FnOnce() -> usize) -> usize {
        match self.last {
            Some((k, l)) if k == key => l,
            _ => {
                let word = u64::from(key.0) << 32 | u64::from(key.1);
                let l = match self.few.iter().find(|(k, _)| *k == word) {
                    Some(&(_, l)) => l,
                    None if self.few.len() < FEW => {
                        let l = add();
                        self.few.push((word, l));
                        l
                    }
                    None => *self.lane_of.entry(word).or_insert_with(add),
                };
                self.last = Some((key, l));
                l
            }
        }
    }
}

/// Orders one thread's slices for the nesting sweep: by start, then file order; among
/// X slices that start together the longer comes first (it is the parent), while B/E
/// slices keep their place in the file. Reordering only the X slices inside each run of
/// equal starts keeps the order total and consistent.
fn order_slices(ev: &EventTable, idx: &mut [u32]) {
    // The row is the last key: (ts, seq) is unique already (a seq per file event), and
    // with it any correct sort gives this one order.
    let key = |i: u32| (ev.ts[i as usize], ev.seq.get(i as usize), i);
    if !sort::nearly_sorted(idx, key) && !sort::few_out_of_place(idx, key) {
        // The keys side by side: the sort compares them without reaching into two
        // columns at scattered rows.
        let mut keyed: Vec<(i64, u32, u32)> = idx.iter().map(|&i| key(i)).collect();
        keyed.sort_unstable();
        for (row, k) in idx.iter_mut().zip(&keyed) {
            *row = k.2;
        }
    }
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
                ev.dur[b]
                    .cmp(&ev.dur[a])
                    .then(ev.seq.get(a).cmp(&ev.seq.get(b)))
            });
            for (&k, x) in slots.iter().zip(xs) {
                run[k] = x;
            }
        }
        start = end;
    }
}

#[inline(always)]
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

/// `activity has` or `activities have`, by the count (a warning says `3 GPU activities
/// have`, `1 GPU activity has`, not `activit(ies)`).
pub(crate) fn activities(n: usize) -> &'static str {
    if n == 1 {
        "activity has"
    } else {
        "activities have"
    }
}
