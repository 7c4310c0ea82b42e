//! Training steps aligned for a diff. The PyTorch profiler names each step of a
//! training loop `ProfilerStep#N`, numbered from wherever its schedule started: two
//! runs profile different steps (`#2..#5` in one, `#11..#14` in the other), so on the
//! union tree every operator appears once under each step of each run, all "new" or
//! "gone", and the diff says nothing about the work itself.
//!
//! `align` merges the steps: siblings `ProfilerStep#N` under one parent become one
//! node `ProfilerStep#*` whose subtree is the union of theirs, every member's values
//! summed (NaN-aware: a member without the node keeps no value there). The merge is
//! chosen over renumbering by order (step k with step k): runs profile different
//! numbers of steps, and the first steps of a run (warm-up, a cold data loader) differ
//! from the later ones, so the totals over all steps are the fairer comparison. The
//! statistics columns are recomputed from the summed members.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ensemble::{restat, split_column, Stats, STATS};
use crate::model::{Cct, MetricTable, Profile, NO_NODE};

/// The name merged steps get.
pub const MERGED: &str = "ProfilerStep#*";

/// Whether a frame name is one numbered step: `ProfilerStep#12`.
pub fn is_step(name: &str) -> bool {
    name.strip_prefix("ProfilerStep#")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The profile with its steps merged, and how many step nodes were merged (0: the
/// profile is returned as it was).
pub fn align(mut p: Profile) -> (Profile, usize) {
    let steps = (0..p.cct.len() as u32)
        .filter(|&n| is_step(p.cct.name(n)))
        .count();
    if steps == 0 {
        return (p, 0);
    }
    let (cct, new_of) = merged_tree(&p.cct);
    p.metrics = summed(&p.metrics, &new_of, cct.len());
    p.cct = cct;
    // An ensemble's merged events (its timeline's) point into the tree: to the merged
    // nodes now.
    if let Some(ev) = p.events.as_mut() {
        for n in ev.node.iter_mut() {
            if let Some(&m) = new_of.get(*n as usize) {
                *n = m;
            }
        }
    }
    (p, steps)
}

/// The steps of two profiles opened together aligned as `grove diff` aligns them:
/// `grove A B` is the TUI's comparison (its diff markers are on from the start), so
/// its tree merges the steps the same way, through `align`. Anything else (one
/// profile, whose tree its events index; an ensemble of more members, ranks of
/// one run that share their step numbers) is returned as it was, with 0.
pub fn align_pair(p: Profile) -> (Profile, usize) {
    let mut members: Vec<&str> = Vec::new();
    for n in p.metrics.name_refs() {
        if let Some((_, l)) = split_column(n) {
            if !STATS.contains(&l) && !members.contains(&l) {
                members.push(l);
            }
        }
    }
    // One profile's events point into its own tree; an ensemble's merged events are
    // moved to the merged nodes by `align`.
    let own_events = p.events.as_ref().is_some_and(|e| e.members.len() < 2);
    if own_events || members.len() != 2 {
        return (p, 0);
    }
    align(p)
}

/// What the TUI's status line and `grove diff` say of `merged` step nodes.
pub fn merged_note(merged: usize) -> String {
    format!(
        "steps: {merged} ProfilerStep#N nodes merged into {MERGED} (--keep-steps keeps them apart)"
    )
}

/// The tree with steps renamed and equal siblings merged; `new_of[old]` is the node
/// each old node became.
fn merged_tree(cct: &Cct) -> (Cct, Vec<u32>) {
    let mut out = Cct::default();
    let mut new_of = vec![NO_NODE; cct.len()];
    let mut index: HashMap<(u32, Arc<str>, Arc<str>), u32> = HashMap::new();
    // Ids grow from parents to children: one pass in id order sees each parent first.
    for old in 0..cct.len() as u32 {
        let up = cct.parent(old).map_or(NO_NODE, |q| new_of[q as usize]);
        let f = cct.frame(old);
        let step = is_step(&f.name);
        let name: Arc<str> = if step { MERGED.into() } else { f.name.clone() };
        let key = (up, name, f.kind.clone());
        let n = match index.get(&key) {
            Some(&n) => n,
            None => {
                let mut frame = f.clone();
                if step {
                    frame.name = MERGED.into();
                }
                let n = out.add_node((up != NO_NODE).then_some(up), frame);
                index.insert(key, n);
                n
            }
        };
        new_of[old as usize] = n;
    }
    out.finish();
    (out, new_of)
}

/// Every member column summed over the merged nodes (a merged node's subtrees are
/// disjoint, so inclusive values add up too); the statistics recomputed.
fn summed(metrics: &MetricTable, new_of: &[u32], rows: usize) -> MetricTable {
    let mut table = MetricTable::new(rows);
    let mut members: Vec<String> = Vec::new();
    for name in metrics.names() {
        let unit = metrics.unit(&name).to_string();
        let stat = split_column(&name).is_some_and(|(_, l)| STATS.contains(&l));
        let mut col = vec![f64::NAN; rows];
        if !stat {
            if let Some((_, l)) = split_column(&name) {
                if !members.iter().any(|m| m == l) {
                    members.push(l.to_string());
                }
            }
            let vals = metrics.values(&name).unwrap_or(&[]);
            for (&n, &v) in new_of.iter().zip(vals) {
                if !v.is_nan() {
                    let s = &mut col[n as usize];
                    *s = if s.is_nan() { v } else { *s + v };
                }
            }
        }
        // Statistics keep their place, filled by `restat` below.
        table.set(&name, &unit, col);
    }
    restat(&mut table, &members, false, Stats::Zero);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_numbered_differently_meet() {
        let a = crate::model::profile_of_paths(
            &[
                ("main/ProfilerStep#2/load", 5.0),
                ("main/ProfilerStep#3/load", 7.0),
                ("main/ProfilerStep#3/conv", 1.0),
            ],
            "ms",
        );
        let b = crate::model::profile_of_paths(&[("main/ProfilerStep#11/load", 4.0)], "ms");
        let u = crate::ensemble::unify(&[a, b], &["a".into(), "b".into()]);
        let (m, n) = align(u);
        assert_eq!(n, 3);
        let load = crate::model::paths::resolve(&m.cct, "main/ProfilerStep#*/load").unwrap();
        assert_eq!(m.metrics.get("time@a", load), 12.0);
        assert_eq!(m.metrics.get("time@b", load), 4.0);
        assert_eq!(m.metrics.get("time@mean", load), 8.0);
        let step = m.cct.parent(load).unwrap();
        assert_eq!(m.metrics.get("time (inc)@a", step), 13.0);
        assert!(!is_step("ProfilerStep#"));
        assert!(!is_step("ProfilerStep#1a"));
        assert_eq!(align(m).1, 0);
    }
}
