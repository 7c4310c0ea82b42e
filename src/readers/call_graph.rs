//! Call graphs (cProfile's callers, gprof2dot's edges) as a tree. Hatchet keeps such
//! a graph with several parents per node; grove's tree gives each node one parent, so
//! the graph becomes a spanning tree with the same nodes: the roots are the nodes no
//! one calls, and from them outwards, greedily, each other node hangs under the
//! caller whose edge is heaviest. Each node is placed once, so cycles are cut where
//! they would close. Nodes only reached from a cycle no root reaches become roots.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A candidate edge for the spanning tree: heaviest first, then the earliest caller
/// and callee (deterministic).
struct Edge {
    weight: f64,
    src: usize,
    dst: usize,
}

impl PartialEq for Edge {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Edge {}
impl PartialOrd for Edge {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Edge {
    fn cmp(&self, o: &Self) -> Ordering {
        self.weight
            .total_cmp(&o.weight)
            .then(o.src.cmp(&self.src))
            .then(o.dst.cmp(&self.dst))
    }
}

/// Each node's parent in the spanning tree (`None` for roots) and the order in which
/// nodes were placed (parents before children). `callers[n]` lists (caller, edge
/// weight) of node n; `weight[n]` picks which node of an unreached cycle becomes its
/// root (the heaviest).
pub fn spanning_tree(
    callers: &[Vec<(usize, f64)>],
    weight: &[f64],
    warnings: &mut Vec<String>,
) -> (Vec<Option<usize>>, Vec<usize>) {
    let n = callers.len();
    let mut callees: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for (dst, cs) in callers.iter().enumerate() {
        for &(src, w) in cs {
            if src != dst {
                callees[src].push((dst, w));
            }
        }
    }
    let mut parent = vec![None; n];
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut heap = BinaryHeap::new();
    let mut place =
        |f: usize, p: Option<usize>, placed: &mut Vec<bool>, heap: &mut BinaryHeap<Edge>| {
            placed[f] = true;
            parent[f] = p;
            order.push(f);
            for &(dst, weight) in &callees[f] {
                heap.push(Edge {
                    weight,
                    src: f,
                    dst,
                });
            }
        };
    for (i, cs) in callers.iter().enumerate() {
        if cs.is_empty() {
            place(i, None, &mut placed, &mut heap);
        }
    }
    let mut orphan_cycles = 0;
    loop {
        while let Some(e) = heap.pop() {
            if !placed[e.dst] {
                place(e.dst, Some(e.src), &mut placed, &mut heap);
            }
        }
        // Functions only reached from a cycle no root reaches: the heaviest becomes a root.
        let next = (0..n)
            .filter(|&i| !placed[i])
            .max_by(|&a, &b| weight[a].total_cmp(&weight[b]).then(b.cmp(&a)));
        match next {
            Some(i) => {
                orphan_cycles += 1;
                place(i, None, &mut placed, &mut heap);
            }
            None => break,
        }
    }
    if orphan_cycles > 0 {
        warnings.push(format!(
            "{orphan_cycles} node(s) are only called from within a cycle; each became a root"
        ));
    }
    (parent, order)
}
