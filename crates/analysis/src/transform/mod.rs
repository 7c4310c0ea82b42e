//! Tree transforms behind filter, squash, compose and group-by. Each builds a new CCT
//! and metric table from the current ones; the original profile is never changed, so
//! undo is a replay of the remaining commands from it.

pub mod derive;
pub mod functions;
pub mod groupby;
pub mod invert;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use crate::model::intern::FxBuild;
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
    let kept = keep[..cct.len()].iter().filter(|&&k| k).count();
    let mut out = Cct::default();
    // Room for every kept node (merging can only make fewer): the arrays do not grow
    // and copy themselves on the way; `finish` below gives back what merging saved.
    out.reserve(kept);
    let mut origin: Vec<u32> = Vec::with_capacity(kept);
    let mut new_of = vec![NO_NODE; cct.len()];
    // Hashed with Fx, sized once: with std's SipHash and growing, hashing the names
    // took half of a squash of 1M nodes.
    let mut index: HashMap<(u32, Arc<str>, Arc<str>), u32, FxBuild> = if merge {
        HashMap::with_capacity_and_hasher(kept, FxBuild::default())
    } else {
        HashMap::default()
    };
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
        let renamed = rename(old);
        let parent = (up != NO_NODE).then_some(up);
        let n = if merge {
            let f = renamed.as_ref().unwrap_or_else(|| cct.frame(old));
            match index.entry((up, f.name.clone(), f.kind.clone())) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    // The frame is copied only for a node that does not merge.
                    let frame = renamed.unwrap_or_else(|| cct.frame(old).clone());
                    let n = out.add_node(parent, frame);
                    e.insert(n);
                    origin.push(old);
                    n
                }
            }
        } else {
            let n = out.add_node(parent, renamed.unwrap_or_else(|| cct.frame(old).clone()));
            origin.push(old);
            n
        };
        new_of[old as usize] = n;
    }
    drop(index);
    out.finish();
    let metrics = aggregate(metrics, &out, &new_of, &origin, recompute);
    Rebuilt {
        cct: out,
        metrics,
        origin,
    }
}

/// Keeps the nodes with `keep[n]`, attaching each to its nearest kept ancestor, with
/// their metric values unchanged: `rebuild` without merging or renaming (a filter), in
/// one pass over arrays of the final size (`Cct::subset`).
pub fn subset(cct: &Cct, metrics: &MetricTable, keep: &[bool]) -> Rebuilt {
    let (out, origin) = cct.subset(keep);
    let metrics = aggregate(metrics, &out, &[], &origin, false);
    Rebuilt {
        cct: out,
        metrics,
        origin,
    }
}

/// The metric table of a rebuilt tree: `new_of[old]` is the new node each old node was
/// merged into (NO_NODE when dropped; only read with `recompute`), `origin[new]` the
/// first of them.
pub fn aggregate(
    metrics: &MetricTable,
    out: &Cct,
    new_of: &[u32],
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
            // Old nodes in id order: each new node adds its members' values in the
            // order they were merged (the sums do not depend on a list per node).
            let mut sums = vec![f64::NAN; rows];
            for (&n, &v) in new_of.iter().zip(vals) {
                if n != NO_NODE && !v.is_nan() {
                    let s = &mut sums[n as usize];
                    *s = if s.is_nan() { v } else { *s + v };
                }
            }
            sums
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

    /// Frames, links, roots and values of two trees compared node by node.
    fn same_tree(a: &Rebuilt, b: &Rebuilt) {
        assert_eq!(a.origin, b.origin);
        assert_eq!(a.cct.len(), b.cct.len());
        assert_eq!(a.cct.roots, b.cct.roots);
        for n in 0..a.cct.len() as u32 {
            assert_eq!(a.cct.frame(n), b.cct.frame(n));
            assert_eq!(a.cct.parent(n), b.cct.parent(n));
            let kids = |c: &Cct| c.children(n).collect::<Vec<_>>();
            assert_eq!(kids(&a.cct), kids(&b.cct));
        }
        assert_eq!(a.metrics.names(), b.metrics.names());
        for name in a.metrics.names() {
            let bits = |m: &MetricTable| -> Vec<u64> {
                m.values(&name)
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            };
            assert_eq!(bits(&a.metrics), bits(&b.metrics), "{name}");
            assert_eq!(a.metrics.unit(&name), b.metrics.unit(&name));
        }
        assert!(a.cct.check() && b.cct.check());
    }

    #[test]
    fn subset_is_rebuild_without_merging() {
        // A forest with shared frame slots, attributes, NaN values and dropped roots.
        let mut c = Cct::default();
        let k = c.shared_frame(Frame::new("kernel", "kernel"));
        let mut rnd = 7u64;
        let mut next = move || {
            rnd ^= rnd << 13;
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            rnd
        };
        for i in 0..400u32 {
            let parent = (i > 0 && next() % 8 != 0).then(|| (next() % i as u64) as u32);
            if next() % 3 == 0 {
                c.add_shared(parent, k);
            } else {
                let mut f = Frame::new(&format!("f{}", next() % 20), "function");
                if next() % 4 == 0 {
                    f.set_attr("line", &i.to_string());
                }
                c.add_node(parent, f);
            }
        }
        let mut m = MetricTable::new(c.len());
        let time: Vec<f64> = (0..c.len())
            .map(|i| {
                if i % 11 == 0 {
                    f64::NAN
                } else {
                    i as f64 * 0.1
                }
            })
            .collect();
        m.set("time", "ns", time);
        m.set("count", "", vec![1.0; c.len()]);
        m.derive_inclusive(&c, &["time"]);
        for seed in 0..20u64 {
            let keep: Vec<bool> = (0..c.len() as u64)
                .map(|i| (i * 2654435761 + seed * 97) % (seed + 2) != 0)
                .collect();
            let a = subset(&c, &m, &keep);
            let b = rebuild(&c, &m, &keep, &|_| None, false, false);
            same_tree(&a, &b);
            // Nodes that shared a slot still do, and a change to one reaches no other.
            let ks: Vec<u32> = (0..a.cct.len() as u32)
                .filter(|&n| a.cct.name(n) == "kernel")
                .collect();
            if let [x, y, ..] = ks[..] {
                assert!(std::ptr::eq(a.cct.frame(x), a.cct.frame(y)));
                let mut t = a.cct.clone();
                t.frame_mut(x).set_attr("grid", "1");
                assert_eq!(t.frame(y).attr("grid"), None);
                assert_eq!(c.frame(origin_of(&a, y)).attr("grid"), None);
            }
        }
        // Keeping nothing and keeping everything.
        same_tree(
            &subset(&c, &m, &vec![false; c.len()]),
            &rebuild(&c, &m, &vec![false; c.len()], &|_| None, false, false),
        );
        same_tree(
            &subset(&c, &m, &vec![true; c.len()]),
            &rebuild(&c, &m, &vec![true; c.len()], &|_| None, false, false),
        );
    }

    fn origin_of(r: &Rebuilt, n: u32) -> u32 {
        r.origin[n as usize]
    }
}
