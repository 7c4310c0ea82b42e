//! Cycles of the function graph, as gprof and KCachegrind mark them: functions that call
//! each other round (directly or through others) form one cycle, and a function that
//! calls itself is recursive. The functions panel marks edges inside the selected
//! function's cycle, so a caller that is also a callee reads as the loop it is.
//!
//! The graph is the call graph's for a call-graph profile, else the function-to-function
//! edges of the tree (a node's function calls its children's). petgraph's Tarjan finds
//! the strongly connected components in O(functions + edges).

use std::collections::HashSet;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::{Functions, Origin};
use crate::model::NO_NODE;

/// The cycle of each function: `NONE`, or an index of `members`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cycles {
    pub of: Vec<u32>,
    /// The functions of each cycle (two or more), largest cycle first.
    pub members: Vec<Vec<u32>>,
    /// Functions with an edge to themselves.
    pub recursive: HashSet<u32>,
}

impl Cycles {
    pub const NONE: u32 = NO_NODE;

    /// Whether `a` and `b` sit in one cycle, or are one recursive function: an edge
    /// between them goes round.
    pub fn loops(&self, a: u32, b: u32) -> bool {
        if a == b {
            return self.recursive.contains(&a);
        }
        let (ca, cb) = (self.cycle(a), self.cycle(b));
        ca != Self::NONE && ca == cb
    }

    pub fn cycle(&self, f: u32) -> u32 {
        self.of.get(f as usize).copied().unwrap_or(Self::NONE)
    }
}

impl Functions {
    /// The cycles of this table's function graph.
    pub fn cycles(&self) -> Cycles {
        let n = self.len();
        let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
        for _ in 0..n {
            g.add_node(());
        }
        let mut seen: HashSet<(u32, u32)> = HashSet::new();
        let mut recursive = HashSet::new();
        let mut edge = |g: &mut DiGraph<(), ()>, a: u32, b: u32| {
            if a == b {
                recursive.insert(a);
            } else if seen.insert((a, b)) {
                g.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), ());
            }
        };
        match &self.origin {
            Origin::Graph(cg) => {
                for f in 0..n {
                    for (to, _) in cg.callees(f) {
                        edge(&mut g, f as u32, to as u32);
                    }
                }
            }
            Origin::Paths { cct, of_node, .. } => {
                for node in 0..cct.len() as u32 {
                    if let Some(p) = cct.parent(node) {
                        edge(&mut g, of_node[p as usize], of_node[node as usize]);
                    }
                }
            }
        }
        let mut members: Vec<Vec<u32>> = tarjan_scc(&g)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<u32> = c.into_iter().map(|i| i.index() as u32).collect();
                c.sort_unstable();
                c
            })
            .collect();
        members.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let mut of = vec![Cycles::NONE; n];
        for (i, c) in members.iter().enumerate() {
            for &f in c {
                of[f as usize] = i as u32;
            }
        }
        Cycles {
            of,
            members,
            recursive,
        }
    }
}
