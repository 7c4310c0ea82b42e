//! The call graph of a profile that records one (callgrind/cachegrind, gprof2dot DOT,
//! cProfile/pstats): functions with their exact self and inclusive cost, and
//! caller -> callee edges with the exact cost of those calls and their count, as the
//! file gives them. These are the figures the reference tools print (callgrind_annotate
//! `--inclusive=yes`, pstats `tottime`/`cumtime`, gprof2dot's node labels).
//!
//! A call graph does not say how a function's cost divides among the call paths that
//! reach it. The CCT grove shows for such a file is unfolded from the graph
//! (`readers::call_paths`), with every node's figures estimated (`estimated_paths`);
//! this graph is where the exact per-function figures live, for the functions panel
//! and for tests that compare with the reference tools.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::Direction;

use super::Frame;

/// One function: its identity (name and attributes such as file, line, module) and
/// its cost per metric of `CallGraph::metrics`.
#[derive(Debug, Clone)]
pub struct Function {
    pub frame: Frame,
    /// Cost spent in the function's own code.
    pub self_cost: Vec<f64>,
    /// Self plus the cost of its calls, a recursive call counted once (as the
    /// reference tool counts it).
    pub inclusive: Vec<f64>,
    /// Times it was called, when the file says (NaN when it does not).
    pub calls: f64,
}

/// The calls from one function to another: how many, and their inclusive cost per
/// metric.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub count: f64,
    pub cost: Vec<f64>,
}

/// Functions and the calls between them; one edge per (caller, callee) pair.
#[derive(Debug, Clone, Default)]
pub struct CallGraph {
    /// (name, unit) of each position of the cost vectors: the CCT's base metrics.
    pub metrics: Vec<(String, String)>,
    pub graph: DiGraph<Function, Call>,
    /// Whether the CCT's figures were estimated from this graph (a call-path tree
    /// unfolded from it) rather than read from the file.
    pub estimated_paths: bool,
}

/// What the header and exports say about a tree unfolded from a call graph.
pub const ESTIMATED_NOTE: &str = "call paths estimated from the call graph";

impl CallGraph {
    pub fn new(metrics: Vec<(String, String)>) -> CallGraph {
        CallGraph {
            metrics,
            ..CallGraph::default()
        }
    }

    /// A graph without functions that only says a tree was estimated: what an ensemble
    /// of call-graph profiles keeps (its members' graphs differ; their trees merge).
    pub fn estimated_marker() -> CallGraph {
        CallGraph {
            estimated_paths: true,
            ..CallGraph::default()
        }
    }

    pub fn add_function(&mut self, f: Function) -> NodeIndex {
        self.graph.add_node(f)
    }

    /// Adds `count` calls costing `cost` from `caller` to `callee`, merged with the
    /// pair's edge when it has one.
    pub fn add_call(&mut self, caller: NodeIndex, callee: NodeIndex, count: f64, cost: &[f64]) {
        let e = match self.graph.find_edge(caller, callee) {
            Some(e) => e,
            None => self.graph.add_edge(caller, callee, Call::default()),
        };
        let c = &mut self.graph[e];
        c.count += count;
        if c.cost.len() < cost.len() {
            c.cost.resize(cost.len(), 0.0);
        }
        for (a, x) in c.cost.iter_mut().zip(cost) {
            *a += x;
        }
    }

    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    pub fn function(&self, f: usize) -> &Function {
        &self.graph[NodeIndex::new(f)]
    }

    /// The position of a metric in the cost vectors.
    pub fn metric(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|(n, _)| n == name)
    }

    /// The functions `f` calls, with the calls (petgraph lists the latest edge first).
    pub fn callees(&self, f: usize) -> impl Iterator<Item = (usize, &Call)> {
        self.neighbours(f, Direction::Outgoing)
    }

    /// The functions that call `f`, with the calls.
    pub fn callers(&self, f: usize) -> impl Iterator<Item = (usize, &Call)> {
        self.neighbours(f, Direction::Incoming)
    }

    fn neighbours(&self, f: usize, dir: Direction) -> impl Iterator<Item = (usize, &Call)> {
        use petgraph::visit::EdgeRef;
        self.graph
            .edges_directed(NodeIndex::new(f), dir)
            .map(move |e| {
                let other = if dir == Direction::Outgoing {
                    e.target()
                } else {
                    e.source()
                };
                (other.index(), e.weight())
            })
    }

    /// The edge from `caller` to `callee`, if there are such calls.
    pub fn call(&self, caller: usize, callee: usize) -> Option<&Call> {
        let e: EdgeIndex = self
            .graph
            .find_edge(NodeIndex::new(caller), NodeIndex::new(callee))?;
        Some(&self.graph[e])
    }

    /// The first function named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.graph
            .node_indices()
            .find(|&i| &*self.graph[i].frame.name == name)
            .map(|i| i.index())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_merge_per_pair() {
        let mut g = CallGraph::new(vec![("Ir".into(), String::new())]);
        let f = |n: &str| Function {
            frame: Frame::new(n, "function"),
            self_cost: vec![1.0],
            inclusive: vec![1.0],
            calls: f64::NAN,
        };
        let a = g.add_function(f("a"));
        let b = g.add_function(f("b"));
        g.add_call(a, b, 2.0, &[5.0]);
        g.add_call(a, b, 1.0, &[3.0]);
        let c = g.call(0, 1).unwrap();
        assert_eq!((c.count, c.cost.clone()), (3.0, vec![8.0]));
        assert_eq!(g.callers(1).count(), 1);
        assert_eq!(g.callees(0).next().unwrap().0, 1);
        assert_eq!(g.find("b"), Some(1));
    }
}
