//! The one-core sweep: every CPU lane at once, in row order.
//!
//! A lane's pass over its own rows read the `ts`, `dur` and event-to-node columns once
//! per lane, and where threads interleave (a Perfetto trace's switch every few rows)
//! each pass touched nearly every cache line of them: eight lanes, eight passes over the
//! columns. Here one pass reads them once, each lane with its own stack of open slices.
//!
//! The nodes come out in another order then (the lanes' nodes interleaved), and node ids
//! and frame slots reach every output (the cache entry writes them): so the pass makes a
//! scratch tree, and the real one is made from it lane by lane, each scratch node's
//! first row asked of the node index in the order its lane made them — the calls a
//! lane-by-lane sweep makes that create nodes, in its order: the same ids, frames and
//! index state. The scratch tree has a node per call path (84,000 on a 200 MB trace of
//! six million rows), so remaking it costs little; the rows' scratch ids are then
//! mapped to the real ones in one sequential pass.
//!
//! A lane whose rows do not start one after the other is not in nesting order: from
//! the row that shows it, its rows are gathered (those before by a look back over the
//! rows since its first), sorted (`order_slices`) and swept again after the pass under a
//! new scratch root; what its first sweep made is left out of the real tree.

use crate::model::{Cct, Frame, NO_NODE};

use super::{
    grow, in_cpu_tree, lane_labels, lane_root, order_slices, phases, Builder, ChromeTrace,
    LaneFinder, NodeIndex, Open, Overlaps, Sweep,
};

/// A lane during the pass.
struct Lane {
    key: (u32, u32),
    /// Its scratch root (a new one when it is swept again from a list).
    root: u32,
    /// The last scratch node it made: its nodes are linked in the order made (`Made`).
    last: u32,
    stack: Vec<Open>,
    stats: Overlaps,
    first: u32,
    rows: u32,
    last_ts: i64,
    /// Rows out of order: all its rows, swept from this list after the pass.
    list: Option<Vec<u32>>,
}

/// What the replay needs of each scratch node: its parent, its first row, and the next
/// node its lane made (`next`, then the real node once it is made).
struct Made {
    parent: Vec<u32>,
    row: Vec<u32>,
    next: Vec<u32>,
}

impl Made {
    /// Node `s` made for row `row` (NO_NODE: a root) under `parent`; `lane_last`, its
    /// lane's last node, is linked to it.
    #[inline]
    fn push(&mut self, s: u32, parent: u32, row: u32, lane_last: Option<&mut u32>) {
        debug_assert_eq!(s as usize, self.row.len());
        self.parent.push(parent);
        self.row.push(row);
        self.next.push(NO_NODE);
        if let Some(last) = lane_last {
            self.next[*last as usize] = s;
            *last = s;
        }
    }
}

pub(super) fn cpu_tree(tr: &ChromeTrace, ph: &mut phases::Phases, column: Vec<u32>) -> Builder {
    let ev = &tr.events;
    let n = ev.len();
    let mut scratch = Cct::default();
    let mut made = Made {
        parent: Vec::new(),
        row: Vec::new(),
        next: Vec::new(),
    };
    // The per-node columns are indexed by scratch node during the sweep and moved to the
    // real ids in place (`permute`): made once at their bound (issue 16: regrowing left
    // holes that raised the load's peak); untouched room costs no memory.
    // Slices are counted per node as the rows are mapped to the real nodes, when the
    // scratch tree is gone: 8 bytes a node less at the load's peak.
    let mut time = Vec::<f64>::new();
    time.reserve_exact(n + 1);
    let mut sweep = Sweep::new(tr, NodeIndex::new(ev, n), column, time, Vec::new());
    sweep.counting = false;
    let mut lanes: Vec<Lane> = Vec::new();
    {
        let mut g = scratch.grow();
        let frame = g.shared_frame(Frame::new("", ""));
        let mut find = LaneFinder::default();
        for i in 0..n {
            if !in_cpu_tree(ev, i) {
                continue;
            }
            let key = (ev.pid[i], ev.tid[i]);
            let l = find.lane(key, || {
                let root = g.add_shared(None, frame);
                made.push(root, NO_NODE, NO_NODE, None);
                lanes.push(Lane {
                    key,
                    root,
                    last: root,
                    stack: Vec::new(),
                    stats: Overlaps::default(),
                    first: i as u32,
                    rows: 0,
                    last_ts: 0,
                    list: None,
                });
                lanes.len() - 1
            });
            let lane = &mut lanes[l];
            if let Some(list) = &mut lane.list {
                list.push(i as u32);
                continue;
            }
            let ts = ev.ts[i];
            if lane.rows > 0 && lane.last_ts >= ts {
                lane.list = Some(rows_until(tr, key, lane.first as usize, i));
                continue;
            }
            lane.rows += 1;
            lane.last_ts = ts;
            let before = g.len();
            let (s, parent) = sweep.step(&mut g, lane.root, &mut lane.stack, &mut lane.stats, i);
            if g.len() > before {
                made.push(s, parent, i as u32, Some(&mut lane.last));
            }
        }
        for lane in &mut lanes {
            let Some(list) = lane.list.as_mut() else {
                sweep.end(&mut lane.stack);
                continue;
            };
            // Swept again from the sorted list under a new root; the first sweep's
            // nodes stay in the scratch tree, unlinked from the lane.
            order_slices(ev, list);
            lane.stack.clear();
            lane.stats = Overlaps::default();
            lane.root = g.add_shared(None, frame);
            made.push(lane.root, NO_NODE, NO_NODE, None);
            lane.last = lane.root;
            for &i in list.iter() {
                let before = g.len();
                let i = i as usize;
                let (s, parent) =
                    sweep.step(&mut g, lane.root, &mut lane.stack, &mut lane.stats, i);
                if g.len() > before {
                    made.push(s, parent, i as u32, Some(&mut lane.last));
                }
            }
            sweep.end(&mut lane.stack);
            lane.list = None;
        }
    }
    ph.mark("cpu-sweep");
    for lane in &lanes {
        sweep.stats.add(lane.stats);
    }
    let mut warnings = Vec::new();
    warnings.extend(sweep.overlap_warning());
    let Sweep {
        nodes,
        node_of_event: mut column,
        mut time,
        ..
    } = sweep;
    // The scratch index and tree go before the real ones are made.
    drop(nodes);
    drop(scratch);
    let (cct, nodes) = replay(tr, &lanes, &mut made);
    let real = cct.len();
    let remap = made.next;
    drop(made.parent);
    drop(made.row);
    // Made at its bound, as the lane-by-lane sweep makes it (the GPU pass adds to it).
    let mut count = Vec::<f64>::new();
    count.reserve_exact(n + lanes.len());
    count.resize(real, 0.0);
    for c in column.iter_mut() {
        if *c != NO_NODE {
            let r = remap[*c as usize];
            *c = r;
            count[r as usize] += 1.0;
        }
    }
    // Room for every scratch node's time (a redone lane's new root may be past it).
    grow(&mut time, remap.len());
    permute(remap, &mut time);
    time.truncate(real);
    for &r in &cct.roots {
        count[r as usize] = 1.0;
    }
    ph.mark("cpu-replay");
    Builder {
        cct,
        nodes,
        node_of_event: column,
        time,
        count,
        warnings,
    }
}

/// The rows of lane `key` from its first row `first` up to row `upto`, which is one too.
#[inline(never)]
fn rows_until(tr: &ChromeTrace, key: (u32, u32), first: usize, upto: usize) -> Vec<u32> {
    let ev = &tr.events;
    let mut list: Vec<u32> = (first..upto)
        .filter(|&j| in_cpu_tree(ev, j) && (ev.pid[j], ev.tid[j]) == key)
        .map(|j| j as u32)
        .collect();
    list.push(upto as u32);
    list
}

/// The real tree: lane by lane, its root, then its scratch nodes in the order made, each
/// by its first row under its parent's real node. `made.next` holds each live scratch
/// node's real node afterwards (NO_NODE for the nodes of a lane's first sweep that was
/// redone).
fn replay(tr: &ChromeTrace, lanes: &[Lane], made: &mut Made) -> (Cct, NodeIndex) {
    let ev = &tr.events;
    let mut cct = Cct::default();
    let mut nodes = NodeIndex::new(ev, ev.len());
    let labels = lane_labels(tr, lanes.iter().map(|l| l.key));
    // Scratch nodes no lane links (a redone lane's first sweep) map to no node.
    let mut live = vec![false; made.next.len()];
    for lane in lanes {
        let mut s = lane.root;
        while s != NO_NODE {
            live[s as usize] = true;
            s = made.next[s as usize];
        }
    }
    for (s, l) in live.iter().enumerate() {
        if !l {
            made.next[s] = NO_NODE;
        }
    }
    drop(live);
    for (lane, label) in lanes.iter().zip(&labels) {
        let root = lane_root(tr, &mut cct, lane.key, label);
        let mut g = cct.grow();
        let mut s = made.next[lane.root as usize];
        made.next[lane.root as usize] = root;
        while s != NO_NODE {
            let at = s as usize;
            let parent = made.next[made.parent[at] as usize];
            let node = nodes.child(&mut g, parent, ev, made.row[at] as usize);
            s = made.next[at];
            made.next[at] = node;
        }
    }
    (cct, nodes)
}

/// Moves each scratch node's value to its real node (`remap`, NO_NODE: dropped), in
/// place: each chain of moves carries a value to its place and takes the one there on.
fn permute(mut remap: Vec<u32>, time: &mut [f64]) {
    for s in 0..remap.len() {
        if remap[s] == NO_NODE {
            continue;
        }
        let mut carried = time[s];
        let mut at = s;
        loop {
            let to = remap[at] as usize;
            remap[at] = NO_NODE;
            std::mem::swap(&mut carried, &mut time[to]);
            // The value taken is stale when its node was moved already (the chain
            // closed), or dropped.
            if remap[to] == NO_NODE {
                break;
            }
            at = to;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::readers::chrome::{parse, set_thread_override};

    /// Everything the build gives, node by node and slot by slot.
    fn digest(json: &str, threads: usize) -> String {
        let tr = parse(json.as_bytes()).expect("parses");
        set_thread_override(None, Some(threads));
        let t = super::super::build(&tr);
        set_thread_override(None, None);
        let c = &t.cct;
        let mut out = format!("roots {:?} slots {}\n", c.roots, c.slot_count());
        for f in c.frames() {
            out += &format!("frame {f:?}\n");
        }
        for n in 0..c.len() as u32 {
            out += &format!("node {n} {:?} slot {}\n", c.parent(n), c.frame_slot(n));
        }
        for m in t.metrics.names() {
            out += &format!("{m} {:?}\n", t.metrics.values(&m));
        }
        let launch: Vec<u32> = (0..tr.events.len()).map(|i| t.launch_of_event[i]).collect();
        out += &format!("{:?}\n{launch:?}\n{:?}\n", t.node_of_event, t.warnings);
        out
    }

    fn x(name: &str, cat: &str, tid: u32, ts: i64, dur: i64) -> String {
        format!(
            r#"{{"ph":"X","name":"{name}","cat":"{cat}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur}}}"#
        )
    }

    /// Lanes whose rows interleave, one out of order (swept again from its list), nested,
    /// zero-length, overlapping (Python frames cut, slices placed beside), unended and
    /// B/E slices, a kernel under its launch: the sweep in row order (one core) makes the
    /// tree the lane-by-lane sweep (two cores) makes, node for node.
    #[test]
    fn row_order_sweep_makes_the_lane_sweeps_tree() {
        let mut ev = vec![
            r#"{"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"worker"}}"#
                .to_string(),
        ];
        for k in 0..40i64 {
            let t = k * 100;
            ev.push(x("outer", "cpu_op", 1, t, 90));
            ev.push(x(&format!("w{}", k % 3), "cpu_op", 2, t + 1, 50));
            ev.push(x("inner", "cpu_op", 1, t + 10, 20));
            ev.push(x("z", "cpu_op", 1, t + 10, 0));
            ev.push(x(&format!("w{}", k % 5), "cpu_op", 2, t + 10, 20));
            ev.push(x("py", "python_function", 1, t + 40, 30));
            ev.push(x("op", "cpu_op", 1, t + 50, 35));
            ev.push(x("late", "cpu_op", 2, t + 30, 40));
            // Tid 3's rows go back in time from its fifth row on.
            let back = if k >= 4 { t - 250 } else { t };
            ev.push(x("s", "user_annotation", 3, back + 5, 10));
            ev.push(x(&format!("s{}", k % 4), "cpu_op", 3, back + 6, 4));
        }
        ev.push(r#"{"ph":"B","name":"open","pid":1,"tid":4,"ts":3}"#.into());
        ev.push(r#"{"ph":"B","name":"b","pid":1,"tid":4,"ts":5}"#.into());
        ev.push(r#"{"ph":"E","pid":1,"tid":4,"ts":9}"#.into());
        ev.push(
            r#"{"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":2,"ts":4001,"dur":5,"args":{"correlation":7}}"#
                .into(),
        );
        ev.push(
            r#"{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":4010,"dur":5,"args":{"correlation":7,"device":0,"stream":7}}"#
                .into(),
        );
        let json = format!("{{\"traceEvents\":[{}]}}", ev.join(",\n"));
        let one = digest(&json, 1);
        assert!(one.contains("overlap"), "{one}");
        assert_eq!(one, digest(&json, 2));
    }
}
