//! An execution trace attached to the Kineto trace of the same run.
//!
//! Each ET node carries the id of its record function (`rf_id`). Kineto writes that id
//! on CPU ops as `Record function id` since PyTorch 2.2; before, and in the traces HTA
//! 0.5.0 was built against, `External id` of a CPU op equals it. So the key is
//! `Record function id` when any event of the trace has one, else `External id` —
//! HTA's `correlate_execution_trace` (which uses `External id` only) gives the same
//! pairs on older traces. Only `cpu_op` and `user_annotation` events take part, as in
//! HTA: GPU rows carry the launching op's External id, not their own.
//!
//! Matched ET fields become attributes of the CPU op's CCT node (distinct values of the
//! instances that node stands for joined with ` | `) and metric columns summed over them.

use std::collections::{BTreeSet, HashMap};

use super::{is_observer_root, node_attrs, node_metrics, ExecutionTrace, METRICS};
use crate::model::events::{EventKind, NONE_I64};
use crate::model::Profile;

/// What the correlation found, HTA's overlap report included.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// "Record function id" or "External id".
    pub key: &'static str,
    /// rf_id range of the ET (observer roots left out) and id range of the trace.
    pub et_range: Option<(i64, i64)>,
    pub trace_range: Option<(i64, i64)>,
    /// HTA's test: the trace's id range covers the ET's.
    pub overlap: bool,
    /// ET nodes with an rf_id (observer roots left out) and how many found a CPU op.
    pub et_nodes: usize,
    pub matched: usize,
    /// (event index, ET node id) for each matched event.
    pub pairs: Vec<(usize, i64)>,
}

impl Report {
    pub fn summary(&self) -> String {
        let r = |x: Option<(i64, i64)>| match x {
            Some((a, b)) => format!("{a}..{b}"),
            None => "none".into(),
        };
        format!(
            "{} of {} ET node(s) matched a CPU op by {} (ET rf_id {}, trace ids {}, overlap {})",
            self.matched,
            self.et_nodes,
            self.key,
            r(self.et_range),
            r(self.trace_range),
            if self.overlap { "yes" } else { "no" }
        )
    }
}

/// Attaches `et` to the trace profile `p` (its events and the CCT built from them).
/// Errors when `p` has no event table; what does not match becomes a warning.
pub fn attach(p: &mut Profile, et: &ExecutionTrace, label: &str) -> Result<Report, String> {
    let Some(ev) = p.events.as_ref() else {
        return Err(
            "an execution trace attaches to a Kineto trace, and this input has no events".into(),
        );
    };
    let use_rf = ev.record_function_id.iter().any(|&x| x != NONE_I64);
    let ids = || -> Box<dyn Iterator<Item = &i64> + '_> {
        if use_rf {
            Box::new(ev.record_function_id.iter())
        } else {
            Box::new(ev.external_id.iter())
        }
    };
    let mut rep = Report {
        key: if use_rf {
            "Record function id"
        } else {
            "External id"
        },
        ..Report::default()
    };
    let range = |it: &mut dyn Iterator<Item = i64>| {
        it.fold(None, |acc: Option<(i64, i64)>, x| match acc {
            None => Some((x, x)),
            Some((a, b)) => Some((a.min(x), b.max(x))),
        })
    };
    rep.trace_range = range(&mut ids().copied().filter(|&x| x != NONE_I64));
    let ops: Vec<&super::EtNode> = et
        .nodes
        .iter()
        .filter(|n| n.rf_id.is_some() && !is_observer_root(&n.name))
        .collect();
    rep.et_nodes = ops.len();
    rep.et_range = range(&mut ops.iter().filter_map(|n| n.rf_id));
    rep.overlap = match (rep.et_range, rep.trace_range) {
        (Some((e0, e1)), Some((t0, t1))) => t0 <= e0 && t1 >= e1,
        _ => false,
    };
    let by_rf: HashMap<i64, &super::EtNode> = ops.iter().map(|n| (n.rf_id.unwrap(), *n)).collect();
    let cats = ["cpu_op", "user_annotation"];
    let n_nodes = p.cct.len();
    let mut attrs: HashMap<u32, Vec<(&'static str, BTreeSet<String>)>> = HashMap::new();
    let mut mets = vec![[f64::NAN; 4]; n_nodes];
    let mut ops_col = vec![f64::NAN; n_nodes];
    let mut used = BTreeSet::new();
    for (i, &id) in ids().enumerate() {
        if ev.kind[i] != EventKind::Cpu || id == NONE_I64 {
            continue;
        }
        let cat = ev.strings.resolve(ev.cat[i]);
        if !cats.iter().any(|c| cat.split(',').any(|x| x.trim() == *c)) {
            continue;
        }
        let Some(n) = by_rf.get(&id) else {
            continue;
        };
        rep.pairs.push((i, n.id));
        used.insert(n.id);
        let node = ev.node.get(i).copied().unwrap_or(crate::model::NO_NODE);
        if node == crate::model::NO_NODE || node as usize >= n_nodes {
            continue;
        }
        let slot = attrs.entry(node).or_default();
        for (k, v) in node_attrs(n) {
            match slot.iter_mut().find(|(kk, _)| *kk == k) {
                Some((_, set)) => {
                    set.insert(v);
                }
                None => slot.push((k, BTreeSet::from([v]))),
            }
        }
        let m = node_metrics(n);
        let acc = &mut mets[node as usize];
        for j in 0..4 {
            acc[j] = if acc[j].is_nan() { m[j] } else { acc[j] + m[j] };
        }
        let c = &mut ops_col[node as usize];
        *c = if c.is_nan() { 1.0 } else { *c + 1.0 };
    }
    rep.matched = used.len();
    for (node, kv) in attrs {
        let f = p.cct.frame_mut(node);
        for (k, set) in kv {
            let v: Vec<String> = set.into_iter().collect();
            f.set_attr(k, &v.join(" | "));
        }
    }
    p.metrics.set("et ops", "", ops_col);
    for (j, (name, unit)) in METRICS.iter().enumerate() {
        p.metrics
            .set(name, unit, mets.iter().map(|m| m[j]).collect());
    }
    p.meta.push(("et.file".into(), label.into()));
    p.meta.push(("et.schema".into(), et.schema.clone()));
    p.meta.push(("et.correlation".into(), rep.summary()));
    p.warnings
        .extend(et.warnings.iter().map(|w| format!("{label}: {w}")));
    if !rep.overlap {
        p.warnings.push(format!(
            "{label}: the execution trace and the trace do not overlap ({}); correlation is by id and may be wrong",
            rep.summary()
        ));
    }
    if rep.matched < rep.et_nodes {
        p.warnings.push(format!(
            "{label}: {} of {} ET node(s) have no CPU op in the trace ({} key)",
            rep.et_nodes - rep.matched,
            rep.et_nodes,
            rep.key
        ));
    }
    Ok(rep)
}
