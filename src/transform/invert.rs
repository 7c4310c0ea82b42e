//! The bottom-up (inverted) tree (issue 26, `grove tree --inverted`): its roots are the
//! functions with self cost, the children of a node the functions that called it, and
//! a node of the chain F <- G <- ... <- R holds, per metric, the self cost of F spent on
//! the call paths that end in `R > ... > G > F`. It is an ordinary `Cct` and
//! `MetricTable`, so every writer prints it:
//!
//! * the exclusive column of a node is the self cost of the paths whose whole call
//!   chain it is (R a root of the original tree); the inclusive column sums its subtree,
//!   so a root's inclusive value is its function's self cost (the functions table's),
//!   and the roots add up to the profile's total;
//! * functions are identified as in the functions table (`functions::identity`), and
//!   each node keeps the frame (attributes included) of its function's first node;
//! * recursion is not folded: `F <- F <- main` is a chain of its own, as in `perf
//!   report --no-children`;
//! * children are ordered by the first metric's inclusive value, largest first.

use std::collections::HashMap;

use super::functions::{columns, identify};
use crate::model::intern::FxBuild;
use crate::model::metrics::{base_of_inclusive, inclusive_name, subtree_sums};
use crate::model::{Cct, MetricTable, Profile, NO_NODE};

/// The inverted tree of a tree and its metric table.
pub fn invert(cct: &Cct, metrics: &MetricTable) -> Result<(Cct, MetricTable), String> {
    let (of_node, _, first) = identify(cct);
    let cols = columns(cct, metrics);
    if cols.is_empty() {
        return Err("no metric to invert the tree by".into());
    }
    // The chains as a trie: (parent chain node or NO_NODE, function) -> chain node.
    let mut index: HashMap<(u32, u32), u32, FxBuild> = HashMap::default();
    let mut up: Vec<u32> = Vec::new();
    let mut func: Vec<u32> = Vec::new();
    let mut exc: Vec<Vec<f64>> = vec![Vec::new(); cols.len()];
    for n in 0..cct.len() as u32 {
        let has_self = cols.iter().any(|c| {
            let v = c.exc[n as usize];
            v != 0.0 && !v.is_nan()
        });
        if !has_self {
            continue;
        }
        let mut chain = NO_NODE;
        let mut x = Some(n);
        while let Some(node) = x {
            let f = of_node[node as usize];
            let next = up.len() as u32;
            chain = *index.entry((chain, f)).or_insert_with(|| {
                up.push(chain);
                func.push(f);
                next
            });
            x = cct.parent(node);
        }
        for (m, c) in cols.iter().enumerate() {
            let col = &mut exc[m];
            if col.len() < up.len() {
                col.resize(up.len(), 0.0);
            }
            let v = c.exc[n as usize];
            if !v.is_nan() {
                col[chain as usize] += v;
            }
        }
    }
    drop(index);
    for col in &mut exc {
        col.resize(up.len(), 0.0);
    }
    let order = emit_order(&up, &exc[0]);
    let mut out = Cct::default();
    out.reserve(order.len());
    let mut frames = vec![None; first.len()];
    let mut new_of = vec![NO_NODE; up.len()];
    for &c in &order {
        let f = func[c as usize] as usize;
        let frame = *frames[f].get_or_insert_with(|| out.shared_frame(cct.frame(first[f]).clone()));
        let parent = match up[c as usize] {
            NO_NODE => None,
            p => Some(new_of[p as usize]),
        };
        new_of[c as usize] = out.add_shared(parent, frame);
    }
    out.finish();
    let mut table = MetricTable::new(out.len());
    for (m, c) in cols.iter().enumerate() {
        let mut v = vec![0.0; out.len()];
        for (old, &new) in new_of.iter().enumerate() {
            v[new as usize] = exc[m][old];
        }
        let inc = subtree_sums(&out, &v);
        // An inclusive-only metric (`X (inc)`) gets its exclusive column `X` here.
        let (exc_name, inc_name) = match base_of_inclusive(&c.name) {
            Some(b) => (b, c.name.clone()),
            None => (c.name.clone(), inclusive_name(&c.name)),
        };
        table.set(&exc_name, &c.unit, v);
        table.set(&inc_name, &c.unit, inc);
    }
    Ok((out, table))
}

/// The chain nodes in the order to add them: depth first, parents before children,
/// siblings by the first metric's subtree sum, largest first (ties in trie order).
fn emit_order(up: &[u32], exc: &[f64]) -> Vec<u32> {
    let n = up.len();
    // Trie nodes are made parents first, so one backward pass sums the subtrees.
    let mut inc = exc.to_vec();
    for c in (0..n).rev() {
        if up[c] != NO_NODE {
            inc[up[c] as usize] += inc[c];
        }
    }
    let mut kids: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for c in 0..n as u32 {
        match up[c as usize] {
            NO_NODE => roots.push(c),
            p => kids[p as usize].push(c),
        }
    }
    let by_value = |a: &u32, b: &u32| inc[*b as usize].total_cmp(&inc[*a as usize]).then(a.cmp(b));
    roots.sort_by(by_value);
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<u32> = roots.into_iter().rev().collect();
    while let Some(c) = stack.pop() {
        order.push(c);
        let k = &mut kids[c as usize];
        k.sort_by(by_value);
        stack.extend(k.iter().rev());
    }
    order
}

/// The profile with its tree inverted: the events and counters (which name nodes of the
/// tree) are dropped; the call graph stays, so a tree unfolded from one is still marked
/// estimated.
pub fn invert_profile(mut p: Profile) -> Result<Profile, String> {
    let (cct, metrics) = invert(&p.cct, &p.metrics)?;
    // A node's figure is its inclusive value (the exclusive one is only the part of
    // paths that end there), so the default metric shown is the inclusive column.
    let base = base_of_inclusive(&p.default_metric).unwrap_or(p.default_metric.clone());
    let inc = inclusive_name(&base);
    p.default_metric = if metrics.has(&inc) {
        inc
    } else {
        let first = metrics
            .names()
            .into_iter()
            .find(|n| base_of_inclusive(n).is_some());
        first.unwrap_or_default()
    };
    p.cct = cct;
    p.metrics = metrics;
    p.events = None;
    p.counters = None;
    Ok(p)
}
