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
        } = &self.origin
        else {
            return Vec::new();
        };
        let nm = inc.len();
        // Slot of each other function in `out` (ROOT is the last function index + 1).
        let root_slot = self.len();
        let mut slot = vec![NO_NODE; self.len() + 1];
        let mut out: Vec<Edge> = Vec::new();
        // Open nodes per other function that count for the edge (see the module).
        let mut open = vec![0u32; self.len() + 1];
        let func = |n: u32| of_node[n as usize];
        walk(cct, |n, down| {
            let parent = cct.parent(n);
            // The other end of the edge this node is the callee end of, if it counts.
            let other = match side {
                Side::Callees => match parent {
                    Some(p) if func(p) == f => func(n) as usize,
                    _ => return,
                },
                Side::Callers => {
                    if func(n) != f {
                        return;
                    }
                    parent.map_or(root_slot, |p| func(p) as usize)
                }
            };
            if !down {
                open[other] -= 1;
                return;
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
        });
        out
    }
}
