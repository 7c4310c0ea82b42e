//! The `functions` table (the functions panel's) and `profiles` (the inputs).

use polars::prelude::*;

use super::Member;
use crate::model::metrics::inclusive_name;
use crate::model::{Cct, MetricTable, Profile};
use crate::transform::functions::Functions;

/// Every function once, as the functions panel lists it: name, kind, place (module,
/// else file), then per metric its self cost under the metric's name and its
/// inclusive cost (counted once per path) under the inclusive name, then calls.
pub fn functions(p: &Profile, (cct, metrics): (&Cct, &MetricTable)) -> PolarsResult<DataFrame> {
    // The file's call graph when it has one (`Functions::of_profile`), else the tree.
    let t = match &p.call_graph {
        Some(g) if !g.is_empty() => Functions::of_graph(g),
        _ => Functions::of_paths(cct, metrics),
    };
    let n = t.len();
    let f = &t.functions;
    let finite = |v: &[f64]| -> Float64Chunked {
        v.iter()
            .map(|x| Some(*x).filter(|x| x.is_finite()))
            .collect()
    };
    let mut cols = vec![
        Column::new("id".into(), (0..n as u32).collect::<Vec<u32>>()),
        Column::new(
            "name".into(),
            f.iter().map(|x| &*x.name).collect::<Vec<_>>(),
        ),
        Column::new(
            "kind".into(),
            f.iter().map(|x| &*x.kind).collect::<Vec<_>>(),
        ),
        Column::new(
            "place".into(),
            f.iter().map(|x| x.place.as_deref()).collect::<Vec<_>>(),
        ),
    ];
    for (m, metric) in t.metrics.iter().enumerate() {
        cols.push(
            finite(&t.self_cost[m])
                .with_name(metric.name.as_str().into())
                .into_column(),
        );
        cols.push(
            finite(&t.inclusive[m])
                .with_name(inclusive_name(&metric.name).into())
                .into_column(),
        );
    }
    if let Some(calls) = &t.calls {
        cols.push(finite(calls).with_name("calls".into()).into_column());
    }
    DataFrame::new(n, cols)
}

/// One row per input: its place among the inputs, label, path, format, dialect, size,
/// node and event counts, then its metadata, one column per key (a key that repeats
/// or names a fixed column is left out).
pub fn profiles(m: &Member<'_>, index: usize) -> PolarsResult<DataFrame> {
    let p = m.profile;
    let mut cols = vec![
        Column::new("profile".into(), [m.label.as_str()]),
        Column::new("index".into(), [index as u32]),
        Column::new(
            "path".into(),
            [p.source.path.as_ref().map(|x| x.display().to_string())],
        ),
        Column::new("format".into(), [p.source.format.label()]),
        Column::new("dialect".into(), [p.dialect.as_str()]),
        Column::new("size".into(), [p.source.size]),
        Column::new("nodes".into(), [p.cct.len() as u64]),
        Column::new(
            "events".into(),
            [p.events.as_ref().map_or(0, |e| e.len()) as u64],
        ),
        Column::new("warnings".into(), [p.warnings.len() as u64]),
    ];
    for (k, v) in &p.meta {
        if cols.iter().any(|c| c.name().as_str() == k) {
            continue;
        }
        cols.push(Column::new(k.as_str().into(), [v.as_str()]));
    }
    DataFrame::new(1, cols)
}
