//! `group-by ATTRIBUTE`: Hatchet's groupby_aggregate, kept a tree. Every node takes the
//! value of the attribute (module, file, type, name, ...) as its identity; a node whose
//! value equals its parent's folds into the parent, so call paths of modules remain
//! (`libA > libB > libA`). Hatchet builds a graph with one node per value instead, which
//! can have cycles; docs/commands.md explains the difference. Exclusive metrics add up,
//! inclusive ones are recomputed.

use std::collections::HashMap;

use super::{aggregate, Rebuilt};
use crate::model::{Cct, Frame, MetricTable, NO_NODE};

pub fn group_by(cct: &Cct, metrics: &MetricTable, key: &str) -> Rebuilt {
    let value = |n: u32| -> String {
        cct.frame(n)
            .attr(key)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("<no {key}>"))
    };
    let mut out = Cct::default();
    let mut origin = Vec::new();
    let mut new_of = vec![NO_NODE; cct.len()];
    let mut index: HashMap<(u32, String), u32> = HashMap::new();
    // Parents have smaller ids than their children: one pass in id order.
    for old in 0..cct.len() as u32 {
        let v = value(old);
        let parent_new = match cct.parent(old) {
            Some(par) => new_of[par as usize],
            None => NO_NODE,
        };
        let same_as_parent = parent_new != NO_NODE && &*out.frame(parent_new).name == v.as_str();
        let n = if same_as_parent {
            parent_new
        } else {
            let k = (parent_new, v.clone());
            match index.get(&k) {
                Some(&n) => n,
                None => {
                    let n = out.add_node(
                        (parent_new != NO_NODE).then_some(parent_new),
                        Frame::new(&v, key),
                    );
                    index.insert(k, n);
                    origin.push(old);
                    n
                }
            }
        };
        new_of[old as usize] = n;
    }
    let metrics = aggregate(metrics, &out, &new_of, &origin, true);
    Rebuilt {
        cct: out,
        metrics,
        origin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_fold() {
        let mut c = Cct::default();
        let main = c.child(None, "main", "f");
        let a = c.child(Some(main), "a", "f");
        let b = c.child(Some(a), "b", "f");
        let d = c.child(Some(main), "d", "f");
        for (n, m) in [(main, "app"), (a, "app"), (b, "libm"), (d, "libm")] {
            c.frame_mut(n).set_attr("module", m);
        }
        let mut t = MetricTable::new(4);
        t.set("time", "ns", vec![1.0, 2.0, 3.0, 4.0]);
        t.derive_inclusive(&c, &["time"]);
        let r = group_by(&c, &t, "module");
        assert_eq!(r.cct.len(), 2);
        assert_eq!(r.cct.name(0), "app");
        assert_eq!(r.cct.name(1), "libm");
        assert_eq!(r.metrics.values("time").unwrap(), &[3.0, 7.0]);
        assert_eq!(r.metrics.values("time (inc)").unwrap(), &[10.0, 7.0]);
    }
}
