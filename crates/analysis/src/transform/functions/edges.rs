//! Callers and callees of one function, with the cost that flows along each edge.
//!
//! * From a call graph: the file's edges, their cost and call count as recorded.
//! * From call paths: the edge H -> G carries the inclusive value of every node of G
//!   whose parent is a node of H, except a node inside another such node on its path
//!   (recursion through the same edge counts once, as a function's inclusive value
//!   does). Calls add up over all those nodes. A node of the function without a parent
//!   is called from `ROOT` (the top of its path).

use super::{walk, Functions, Origin};
use crate::model::NO_NODE;

/// The "function" of the callers of a root node: its path starts there.
pub const ROOT: u32 = NO_NODE;

/// One edge seen from the selected function: the other function (or `ROOT`), the cost
/// along it per metric of the table, and its calls (NaN when not counted).
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub function: u32,
    pub value: Vec<f64>,
    pub calls: f64,
}

/// Which side of the function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Callers,
    Callees,
}

impl Functions {
    /// The callers of `f`, in order of first appearance (graph order for a graph).
    pub fn callers(&self, f: u32) -> Vec<Edge> {
        self.edges(f, Side::Callers)
    }

    /// The functions `f` calls.
    pub fn callees(&self, f: u32) -> Vec<Edge> {
        self.edges(f, Side::Callees)
    }

    pub fn edges(&self, f: u32, side: Side) -> Vec<Edge> {
        match &self.origin {
            Origin::Graph(g) => {
                let nm = self.metrics.len();
                let it: Vec<_> = match side {
                    Side::Callers => g.callers(f as usize).collect(),
                    Side::Callees => g.callees(f as usize).collect(),
                };
                let mut out: Vec<Edge> = it
                    .into_iter()
                    .map(|(o, call)| {
                        let mut value = call.cost.clone();
                        value.resize(nm, 0.0);
                        Edge {
                            function: o as u32,
                            value,
                            calls: call.count,
                        }
                    })
                    .collect();
                // petgraph lists the latest edge first: graph order reads better.
                out.sort_by_key(|e| e.function);
                out
            }
            Origin::Paths { .. } => self.path_edges(f, side),
        }
    }

    fn path_edges(&self, f: u32, side: Side) -> Vec<Edge> {
        let Origin::Paths {
            cct,
            of_node,
            inc,
            count,
            index,
        } = &self.origin
        else {
            return Vec::new();
        };
        let ix = index.get_or_init(|| PathIndex::of(cct, of_node, self.len()));
        let nm = inc.len();
        // Slot of each other function in `out` (ROOT is the last function index + 1).
        let root_slot = self.len();
        let func = |n: u32| of_node[n as usize] as usize;
        // The nodes that are the callee end of an edge of `f`, in pre-order, each with
        // the function at the other end: f's nodes (the other end is the parent's
        // function) or the children of f's nodes.
        let mut ends: Vec<(u32, usize)> = Vec::new();
        match side {
            Side::Callers => {
                for &n in ix.nodes(f) {
                    ends.push((n, cct.parent(n).map_or(root_slot, func)));
                }
            }
            Side::Callees => {
                for &n in ix.nodes(f) {
                    ends.extend(cct.children(n).map(|c| (c, func(c))));
                }
                ends.sort_unstable_by_key(|&(c, _)| ix.pre[c as usize]);
            }
        }
        let mut slot = vec![NO_NODE; self.len() + 1];
        let mut out: Vec<Edge> = Vec::new();
        // The ends open on the path to the current one (their subtree holds it), and
        // how many of them each other function has: an end inside another end of the
        // same edge adds no value (recursion through the same edge counts once).
        let mut stack: Vec<(u32, usize)> = Vec::new();
        let mut open = vec![0u32; self.len() + 1];
        for (n, other) in ends {
            let pre = ix.pre[n as usize];
            while let Some(&(top, o)) = stack.last() {
                if ix.end[top as usize] >= pre {
                    break;
                }
                stack.pop();
                open[o] -= 1;
            }
            if slot[other] == NO_NODE {
                slot[other] = out.len() as u32;
                out.push(Edge {
                    function: if other == root_slot {
                        ROOT
                    } else {
                        other as u32
                    },
                    value: vec![0.0; nm],
                    calls: if count.is_some() { 0.0 } else { f64::NAN },
                });
            }
            let e = &mut out[slot[other] as usize];
            if open[other] == 0 {
                for (m, col) in inc.iter().enumerate() {
                    let v = col[n as usize];
                    if !v.is_nan() {
                        e.value[m] += v;
                    }
                }
            }
            if let Some(c) = count {
                let v = c[n as usize];
                if !v.is_nan() {
                    e.calls += v;
                }
            }
            open[other] += 1;
            stack.push((n, other));
        }
        out
    }
}

/// Where each node sits in the tree's pre-order (`pre`, and `end`: the last pre-order
/// position inside its subtree) and each function's nodes in pre-order: the edges of a
/// function then cost its own nodes (and their children), not a walk of the tree, so
/// moving the functions panel's cursor on a 1M-node tree stays within a frame.
#[derive(Debug, Default, Clone)]
pub struct PathIndex {
    pre: Vec<u32>,
    end: Vec<u32>,
    start: Vec<u32>,
    nodes: Vec<u32>,
}

impl PathIndex {
    fn of(cct: &crate::model::Cct, of_node: &[u32], nf: usize) -> PathIndex {
        let n = cct.len();
        let (mut pre, mut end) = (vec![0u32; n], vec![0u32; n]);
        let mut order: Vec<u32> = Vec::with_capacity(n);
        walk(cct, |x, down| {
            if down {
                pre[x as usize] = order.len() as u32;
                order.push(x);
            } else {
                end[x as usize] = order.len() as u32 - 1;
            }
        });
        let mut start = vec![0u32; nf + 1];
        for &x in &order {
            start[of_node[x as usize] as usize + 1] += 1;
        }
        for f in 0..nf {
            start[f + 1] += start[f];
        }
        let mut fill = start.clone();
        let mut nodes = vec![0u32; order.len()];
        for &x in &order {
            let f = of_node[x as usize] as usize;
            nodes[fill[f] as usize] = x;
            fill[f] += 1;
        }
        PathIndex {
            pre,
            end,
            start,
            nodes,
        }
    }

    fn nodes(&self, f: u32) -> &[u32] {
        let f = f as usize;
        &self.nodes[self.start[f] as usize..self.start[f + 1] as usize]
    }
}
