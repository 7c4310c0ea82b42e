//! The functions table (issue 26): every function once, merged over all its call
//! sites, with its self and inclusive cost per metric, its calls where the input
//! counts them, and (`edges`) its callers and callees with the cost along each edge.
//!
//! * **Identity.** A function is its frame's name and kind plus the first of
//!   `PLACE_ATTRS` the frame has (module, else file): two `main`s of different
//!   binaries, or two `__init__`s of different Python files, stay apart; the same
//!   function reached along many paths is one row.
//! * **Path-based profiles** (traces, samples, trees): self is the sum of the
//!   function's nodes' exclusive values; inclusive the sum of the inclusive values of
//!   its *outermost* nodes, those with no ancestor of the same function on their path,
//!   so a recursive function counts once on each path (as `pprof -top`'s cum does).
//! * **Call-graph profiles** (`Profile::call_graph`: callgrind, gprof2dot, pstats): the
//!   file's exact figures, one row per function of the graph; the profile's tree is an
//!   estimate unfolded from the graph and is not read.

pub mod cycles;
pub mod edges;

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::call_graph::CallGraph;
use crate::model::intern::FxBuild;
use crate::model::metrics::{base_of_inclusive, inclusive_name, subtree_sums};
use crate::model::{Cct, MetricTable, Profile, NO_NODE};

/// The frame attributes that tell two functions of one name apart; the first a frame
/// has is its place.
pub const PLACE_ATTRS: [&str; 2] = ["module", "file"];

/// Count-like columns: the first one a tree has without an inclusive partner is its
/// calls (or visits) column.
pub const CALL_COLUMNS: [&str; 5] = ["calls", "numcalls", "count", "visits", "ncalls"];

/// A function's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Function {
    pub name: Arc<str>,
    pub kind: Arc<str>,
    /// Its module or file (`PLACE_ATTRS`), when the frame says.
    pub place: Option<Arc<str>>,
}

impl Function {
    /// `name [place]`, or the name alone.
    pub fn label(&self) -> String {
        match &self.place {
            Some(p) => format!("{} [{p}]", self.name),
            None => self.name.to_string(),
        }
    }
}

/// A metric of the table: its name (the tree's exclusive column, or the graph's) and
/// unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub unit: String,
}

/// Where the figures come from, and what the callers and callees are read from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// The tree: `of_node[n]` is node n's function; `inc[m]` the inclusive column of
    /// metric m, `count` the calls column.
    Paths {
        cct: Cct,
        of_node: Vec<u32>,
        inc: Vec<Arc<Vec<f64>>>,
        count: Option<Arc<Vec<f64>>>,
        /// Each function's nodes in pre-order, made at the first callers/callees asked.
        index: Box<std::sync::OnceLock<edges::PathIndex>>,
    },
    /// The file's call graph (function f is the graph's node f).
    Graph(CallGraph),
}

/// The table: per metric m and function f, `self_cost[m][f]` and `inclusive[m][f]`.
#[derive(Debug, Clone)]
pub struct Functions {
    pub metrics: Vec<Metric>,
    pub functions: Vec<Function>,
    pub self_cost: Vec<Vec<f64>>,
    pub inclusive: Vec<Vec<f64>>,
    /// Calls (or visits) of each function, where the input counts them.
    pub calls: Option<Vec<f64>>,
    /// The column the calls come from (`calls` for a call graph's own counts).
    pub calls_name: Option<String>,
    /// Per metric: the sum of every function's self cost (the profile's total).
    pub totals: Vec<f64>,
    pub origin: Origin,
}

/// A column to sort the table by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Name,
    Place,
    Self_,
    Inclusive,
    Calls,
}

impl Column {
    pub fn parse(s: &str) -> Option<Column> {
        Some(match s {
            "name" | "function" => Column::Name,
            "place" | "module" | "file" => Column::Place,
            "self" | "exclusive" | "flat" | "tottime" => Column::Self_,
            "inclusive" | "inc" | "cum" | "cumtime" | "total" => Column::Inclusive,
            "calls" | "visits" | "count" => Column::Calls,
            _ => return None,
        })
    }
}

impl Functions {
    /// The table of a profile: from its call graph when it has one, else from its tree.
    pub fn of_profile(p: &Profile) -> Functions {
        match &p.call_graph {
            Some(g) if !g.is_empty() => Functions::of_graph(g),
            _ => Functions::of_paths(&p.cct, &p.metrics),
        }
    }

    pub fn len(&self) -> usize {
        self.functions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// Whether the figures are the call graph's (exact, from the file).
    pub fn from_graph(&self) -> bool {
        matches!(self.origin, Origin::Graph(_))
    }

    /// The position of a metric: its name, or its inclusive column's name.
    pub fn metric(&self, name: &str) -> Option<usize> {
        if let Some(m) = self.metrics.iter().position(|m| m.name == name) {
            return Some(m);
        }
        let base = base_of_inclusive(name)?;
        self.metrics.iter().position(|m| m.name == base)
    }

    /// The functions whose name is `name` (every place); else those whose name or
    /// label contains it.
    pub fn find(&self, name: &str) -> Vec<u32> {
        let exact: Vec<u32> = (0..self.len() as u32)
            .filter(|&f| {
                &*self.functions[f as usize].name == name
                    || self.functions[f as usize].label() == name
            })
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        (0..self.len() as u32)
            .filter(|&f| self.functions[f as usize].label().contains(name))
            .collect()
    }

    /// Function indices sorted by a column of metric `m` (names ascending, figures
    /// descending unless `reverse`); ties by name, then index, so the order is stable.
    pub fn order(&self, m: usize, by: Column, reverse: bool) -> Vec<u32> {
        let mut idx: Vec<u32> = (0..self.len() as u32).collect();
        let key = |f: u32| -> f64 {
            let v = match by {
                Column::Self_ => self.self_cost[m][f as usize],
                Column::Inclusive => self.inclusive[m][f as usize],
                Column::Calls => self.calls.as_ref().map_or(0.0, |c| c[f as usize]),
                Column::Name | Column::Place => 0.0,
            };
            if v.is_nan() {
                f64::NEG_INFINITY
            } else {
                v
            }
        };
        let fs = &self.functions;
        let place = |f: u32| fs[f as usize].place.as_deref().unwrap_or("");
        idx.sort_by(|&a, &b| {
            let primary = match by {
                Column::Name => fs[a as usize].name.cmp(&fs[b as usize].name),
                Column::Place => place(a).cmp(place(b)),
                _ => key(b).total_cmp(&key(a)),
            };
            primary
                .then_with(|| fs[a as usize].name.cmp(&fs[b as usize].name))
                .then(a.cmp(&b))
        });
        if reverse {
            idx.reverse();
        }
        idx
    }

    /// The table of a call graph: its functions and their figures as the file gives
    /// them.
    pub fn of_graph(g: &CallGraph) -> Functions {
        let nm = g.metrics.len();
        let n = g.len();
        let mut self_cost = vec![vec![0.0; n]; nm];
        let mut inclusive = vec![vec![0.0; n]; nm];
        let mut functions = Vec::with_capacity(n);
        let mut calls = vec![f64::NAN; n];
        for f in 0..n {
            let func = g.function(f);
            functions.push(identity(&func.frame));
            for m in 0..nm {
                self_cost[m][f] = func.self_cost.get(m).copied().unwrap_or(0.0);
                inclusive[m][f] = func.inclusive.get(m).copied().unwrap_or(0.0);
            }
            calls[f] = func.calls;
        }
        let counted = calls.iter().any(|c| !c.is_nan());
        let totals = self_cost.iter().map(|c| sum(c)).collect();
        Functions {
            metrics: g
                .metrics
                .iter()
                .map(|(name, unit)| Metric {
                    name: name.clone(),
                    unit: unit.clone(),
                })
                .collect(),
            functions,
            self_cost,
            inclusive,
            calls: counted.then_some(calls),
            calls_name: counted.then(|| "calls".to_string()),
            totals,
            origin: Origin::Graph(g.clone()),
        }
    }

    /// The table of a tree (see the module's comment).
    pub fn of_paths(cct: &Cct, metrics: &MetricTable) -> Functions {
        let (of_node, functions, _) = identify(cct);
        let nf = functions.len();
        let cols = columns(cct, metrics);
        let mut self_cost = vec![vec![0.0; nf]; cols.len()];
        for (m, c) in cols.iter().enumerate() {
            let s = &mut self_cost[m];
            for (n, &v) in c.exc.iter().enumerate() {
                if !v.is_nan() {
                    s[of_node[n] as usize] += v;
                }
            }
        }
        let inclusive = outermost_sums(cct, &of_node, nf, &cols);
        let count = calls_column(metrics);
        let calls = count.as_ref().map(|(_, col)| {
            let mut c = vec![0.0; nf];
            for (n, &v) in col.iter().enumerate() {
                if !v.is_nan() {
                    c[of_node[n] as usize] += v;
                }
            }
            c
        });
        let totals = self_cost.iter().map(|c| sum(c)).collect();
        Functions {
            metrics: cols
                .iter()
                .map(|c| Metric {
                    name: c.name.clone(),
                    unit: c.unit.clone(),
                })
                .collect(),
            functions,
            self_cost,
            inclusive,
            calls,
            calls_name: count.as_ref().map(|(n, _)| n.clone()),
            totals,
            origin: Origin::Paths {
                cct: cct.clone(),
                of_node,
                inc: cols.into_iter().map(|c| c.inc).collect(),
                count: count.map(|(_, c)| c),
                index: Default::default(),
            },
        }
    }
}

fn sum(v: &[f64]) -> f64 {
    v.iter().filter(|x| !x.is_nan()).sum()
}

/// A frame's function identity.
pub fn identity(frame: &crate::model::Frame) -> Function {
    let place = PLACE_ATTRS
        .iter()
        .find_map(|k| frame.attr(k))
        .map(Arc::<str>::from);
    Function {
        name: frame.name.clone(),
        kind: frame.kind.clone(),
        place,
    }
}

/// The function of every node, the functions in order of first appearance, and the
/// first node of each. Each frame slot is looked up once (nodes sharing a slot share
/// its function), by a hash of its identity's text: no key is built per node.
pub fn identify(cct: &Cct) -> (Vec<u32>, Vec<Function>, Vec<u32>) {
    use std::hash::BuildHasher;
    let mut of_slot = vec![NO_NODE; cct.slot_count()];
    // Hash -> the first function with it; `same_hash` chains the others.
    let mut by_hash: HashMap<u64, u32, FxBuild> = HashMap::default();
    let mut same_hash: Vec<u32> = Vec::new();
    let mut functions: Vec<Function> = Vec::new();
    let mut first = Vec::new();
    let mut of_node = Vec::with_capacity(cct.len());
    let build = FxBuild::default();
    for n in 0..cct.len() as u32 {
        let s = cct.frame_slot(n) as usize;
        if of_slot[s] == NO_NODE {
            let frame = cct.frame(n);
            let place = PLACE_ATTRS.iter().find_map(|k| frame.attr(k));
            let h = build.hash_one((&*frame.name, &*frame.kind, place));
            let is = |f: &Function| {
                *f.name == *frame.name && *f.kind == *frame.kind && f.place.as_deref() == place
            };
            let mut at = by_hash.get(&h).copied().unwrap_or(NO_NODE);
            while at != NO_NODE && !is(&functions[at as usize]) {
                at = same_hash[at as usize];
            }
            if at == NO_NODE {
                at = functions.len() as u32;
                same_hash.push(by_hash.insert(h, at).unwrap_or(NO_NODE));
                functions.push(identity(frame));
                first.push(n);
            }
            of_slot[s] = at;
        }
        of_node.push(of_slot[s]);
    }
    (of_node, functions, first)
}

/// A metric's exclusive and inclusive columns over the tree.
pub struct Columns {
    pub name: String,
    pub unit: String,
    pub exc: Arc<Vec<f64>>,
    pub inc: Arc<Vec<f64>>,
}

/// The tree's metrics as exclusive/inclusive pairs: each exclusive column with its
/// inclusive partner (summed here when it has none), and each inclusive column without
/// an exclusive one (its exclusive part is what its children do not cover). The calls
/// column is not a metric here.
pub fn columns(cct: &Cct, metrics: &MetricTable) -> Vec<Columns> {
    let calls = calls_column(metrics).map(|(n, _)| n);
    let mut out = Vec::new();
    for name in metrics.base_metrics() {
        if Some(&name) == calls.as_ref() {
            continue;
        }
        let unit = metrics.unit(&name).to_string();
        let Some(col) = metrics.column(&name) else {
            continue;
        };
        let (exc, inc) = match base_of_inclusive(&name) {
            None => {
                let inc = match metrics.column(&inclusive_name(&name)) {
                    Some(i) => i,
                    None => Arc::new(subtree_sums(cct, &col)),
                };
                (col, inc)
            }
            Some(_) => (Arc::new(exclusive_of(cct, &col)), col),
        };
        out.push(Columns {
            name,
            unit,
            exc,
            inc,
        });
    }
    out
}

/// The exclusive part of an inclusive column: a node's value less its children's.
fn exclusive_of(cct: &Cct, inc: &[f64]) -> Vec<f64> {
    let mut exc: Vec<f64> = inc.to_vec();
    for n in 0..cct.len() as u32 {
        if let Some(p) = cct.parent(n) {
            let v = inc[n as usize];
            if !v.is_nan() && !exc[p as usize].is_nan() {
                exc[p as usize] -= v;
            }
        }
    }
    exc
}

/// The calls column: the first of `CALL_COLUMNS` without an inclusive partner.
pub fn calls_column(metrics: &MetricTable) -> Option<(String, Arc<Vec<f64>>)> {
    CALL_COLUMNS.iter().find_map(|&c| {
        let col = metrics.column(c)?;
        (!metrics.has(&inclusive_name(c))).then(|| (c.to_string(), col))
    })
}

/// Visits every node depth first: `visit(n, true)` on the way down, `visit(n, false)`
/// once its subtree is done (an explicit stack: call paths can be thousands deep).
pub fn walk(cct: &Cct, mut visit: impl FnMut(u32, bool)) {
    const LEAVE: u32 = 1 << 31;
    let mut stack: Vec<u32> = cct.roots.iter().rev().copied().collect();
    while let Some(x) = stack.pop() {
        if x & LEAVE != 0 {
            visit(x & !LEAVE, false);
            continue;
        }
        visit(x, true);
        stack.push(x | LEAVE);
        let from = stack.len();
        stack.extend(cct.children(x));
        stack[from..].reverse();
    }
}

/// Per metric and function: the inclusive values of the function's outermost nodes
/// summed (one walk for all metrics, counting the function's nodes on the path).
fn outermost_sums(cct: &Cct, of_node: &[u32], nf: usize, cols: &[Columns]) -> Vec<Vec<f64>> {
    let mut sums = vec![vec![0.0; nf]; cols.len()];
    let mut open = vec![0u32; nf];
    walk(cct, |n, down| {
        let f = of_node[n as usize] as usize;
        if down {
            if open[f] == 0 {
                for (m, c) in cols.iter().enumerate() {
                    let v = c.inc[n as usize];
                    if !v.is_nan() {
                        sums[m][f] += v;
                    }
                }
            }
            open[f] += 1;
        } else {
            open[f] -= 1;
        }
    });
    sums
}

#[cfg(test)]
mod tests;
