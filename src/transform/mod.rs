//! Tree transforms behind filter, squash, compose and group-by. Each builds a new CCT
//! and metric table from the current ones; the original profile is never changed, so
//! undo is a replay of the remaining commands from it.

pub mod derive;
pub mod groupby;

use std::collections::HashMap;

use crate::model::metrics::{base_of_inclusive, inclusive_name, subtree_sums};
use crate::model::{Cct, Frame, MetricTable, NO_NODE};

/// A rebuilt tree, with the old node each new node came from (the first, when merged).
pub struct Rebuilt {
    pub cct: Cct,
    pub metrics: MetricTable,
    pub origin: Vec<u32>,
}

/// How metric columns combine when nodes merge.
fn summable(name: &str, metrics: &MetricTable) -> bool {
    // Exclusive columns with an inclusive partner, and count, add up; others keep the
    // first value (Hatchet's squash rule for non-metric columns).
    name == "count" || metrics.has(&inclusive_name(name))
}

/// Keeps the nodes with `keep[n]`, attaching each to its nearest kept ancestor.
/// With `merge`, siblings whose (name, type) become equal merge into one node; with
/// `recompute`, exclusive columns are summed over merged nodes and inclusive columns are
/// recomputed from them (Hatchet's squash). Without it, values are copied unchanged.
pub fn rebuild(
    cct: &Cct,
    metrics: &MetricTable,
    keep: &[bool],
    rename: &dyn Fn(u32) -> Option<Frame>,
    merge: bool,
    recompute: bool,
) -> Rebuilt {
    let mut out = Cct::default();
    let mut origin: Vec<u32> = Vec::new();
    let mut new_of = vec![NO_NODE; cct.len()];
    // The old nodes merged into each new node.
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut index: HashMap<(u32, std::sync::Arc<str>, std::sync::Arc<str>), u32> = HashMap::new();
    // Nearest kept ancestor's new node, per old node. Ids grow from parents to
    // children, so one pass in id order sees every parent first.
    let mut anchor = vec![NO_NODE; cct.len()];
    for old in 0..cct.len() as u32 {
        let up = match cct.parent(old) {
            None => NO_NODE,
            Some(pn) if new_of[pn as usize] != NO_NODE => new_of[pn as usize],
            Some(pn) => anchor[pn as usize],
        };
        anchor[old as usize] = up;
        if !keep[old as usize] {
            continue;
        }
        let frame = rename(old).unwrap_or_else(|| cct.frame(old).clone());
        let parent = (up != NO_NODE).then_some(up);
        let n = if merge {
            let key = (up, frame.name.clone(), frame.kind.clone());
            match index.get(&key) {
                Some(&n) => n,
                None => {
                    let n = out.add_node(parent, frame);
                    index.insert(key, n);
                    origin.push(old);
                    members.push(Vec::new());
                    n
                }
            }
        } else {
            let n = out.add_node(parent, frame);
            origin.push(old);
            members.push(Vec::new());
            n
        };
        members[n as usize].push(old);
        new_of[old as usize] = n;
    }
    let metrics = aggregate(metrics, &out, &members, &origin, recompute);
    Rebuilt {
        cct: out,
        metrics,
        origin,
    }
}

/// The metric table of a rebuilt tree: `members[new]` are the old nodes merged into it.
pub fn aggregate(
    metrics: &MetricTable,
    out: &Cct,
    members: &[Vec<u32>],
    origin: &[u32],
    recompute: bool,
) -> MetricTable {
    let rows = out.len();
    let mut table = MetricTable::new(rows);
    let names = metrics.names();
    for name in &names {
        let Some(vals) = metrics.values(name) else {
            continue;
        };
        let unit = metrics.unit(name).to_string();
        let inclusive = base_of_inclusive(name).is_some();
        if recompute && inclusive && base_of_inclusive(name).is_some_and(|b| metrics.has(&b)) {
            continue; // recomputed below from the exclusive column
        }
        let col: Vec<f64> = if recompute && summable(name, metrics) {
            members
                .iter()
                .map(|ms| {
                    let mut s = f64::NAN;
                    for &m in ms {
                        let v = vals[m as usize];
                        if !v.is_nan() {
                            s = if s.is_nan() { v } else { s + v };
                        }
                    }
                    s
                })
                .collect()
        } else {
            origin.iter().map(|&o| vals[o as usize]).collect()
        };
        table.set(name, &unit, col);
    }
    if recompute {
        for name in &names {
            if let Some(base) = base_of_inclusive(name) {
                if let Some(exc) = table.values(&base).map(|v| v.to_vec()) {
                    let unit = metrics.unit(name).to_string();
                    table.set(name, &unit, subtree_sums(out, &exc));
                }
            }
        }
        // Keep the original column order.
        let order: Vec<String> = names.iter().filter(|n| table.has(n)).cloned().collect();
        table.reorder(&order);
    }
    table
}

/// Marks every ancestor of a marked node.
pub fn with_ancestors(cct: &Cct, marked: &[bool]) -> Vec<bool> {
    let mut keep = marked.to_vec();
    for n in 0..cct.len() as u32 {
        if marked[n as usize] {
            let mut p = cct.parent(n);
            while let Some(x) = p {
                if keep[x as usize] {
                    break;
                }
                keep[x as usize] = true;
                p = cct.parent(x);
            }
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Cct, MetricTable) {
        // main -> a -> x ; main -> b -> a -> x
        let mut c = Cct::default();
        let main = c.child(None, "main", "f");
        let a = c.child(Some(main), "a", "f");
        let _x = c.child(Some(a), "x", "f");
        let b = c.child(Some(main), "b", "f");
        let a2 = c.child(Some(b), "a", "f");
        let _x2 = c.child(Some(a2), "x", "f");
        let mut m = MetricTable::new(6);
        m.set("time", "ns", vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        m.derive_inclusive(&c, &["time"]);
        (c, m)
    }

    #[test]
    fn squash_reparents_and_merges() {
        let (c, m) = sample();
        // Keep main, a (both), x (both): b is dropped, so b's a merges with main's a.
        let keep = vec![true, true, true, false, true, true];
        let r = rebuild(&c, &m, &keep, &|_| None, true, true);
        assert_eq!(r.cct.len(), 3);
        assert_eq!(r.metrics.values("time").unwrap(), &[1.0, 7.0, 9.0]);
        assert_eq!(r.metrics.values("time (inc)").unwrap(), &[17.0, 16.0, 9.0]);
        assert_eq!(r.metrics.names(), vec!["time", "time (inc)"]);
    }

    #[test]
    fn filter_keeps_values() {
        let (c, m) = sample();
        let keep = with_ancestors(&c, &[false, false, false, false, false, true]);
        assert_eq!(keep, vec![true, false, false, true, true, true]);
        let r = rebuild(&c, &m, &keep, &|_| None, false, false);
        assert_eq!(r.cct.len(), 4);
        assert_eq!(
            r.metrics.values("time (inc)").unwrap(),
            &[21.0, 15.0, 11.0, 6.0]
        );
        assert_eq!(r.origin, vec![0, 3, 4, 5]);
    }
}
