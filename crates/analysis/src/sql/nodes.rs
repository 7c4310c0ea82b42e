//! The `nodes` table: one row per node of the tree, with every metric column.

use polars::prelude::*;

use crate::model::paths::all_paths;
use crate::model::{Cct, MetricTable};

/// Node id, parent id (null at a root), depth, name, type, path (as `grove tree`
/// writes it), file, line and module where the frame says, then every metric column
/// under its own name (`time`, `time (inc)`), null where the node has no value.
pub fn table((cct, metrics): (&Cct, &MetricTable)) -> PolarsResult<DataFrame> {
    let n = cct.len();
    let ids: Vec<u32> = (0..n as u32).collect();
    let parent: Vec<Option<u32>> = ids.iter().map(|&i| cct.parent(i)).collect();
    let line: Vec<Option<i64>> = ids
        .iter()
        .map(|&i| {
            cct.frame(i)
                .attr("line")
                .and_then(|l| l.trim().parse().ok())
        })
        .collect();
    let mut cols = vec![
        Column::new("id".into(), &ids),
        Column::new("parent".into(), parent),
        Column::new("depth".into(), cct.depths()),
        Column::new(
            "name".into(),
            ids.iter()
                .map(|&i| &*cct.frame(i).name)
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "type".into(),
            ids.iter()
                .map(|&i| &*cct.frame(i).kind)
                .collect::<Vec<&str>>(),
        ),
        Column::new("path".into(), all_paths(cct)),
        Column::new("file".into(), attr(cct, "file")),
        Column::new("line".into(), line),
        Column::new("module".into(), attr(cct, "module")),
    ];
    for m in metrics.name_refs() {
        let vals = metrics.values(m).unwrap_or(&[]);
        let col: Float64Chunked = (0..n)
            .map(|i| vals.get(i).copied().filter(|v| v.is_finite()))
            .collect();
        cols.push(col.with_name(m.into()).into_column());
    }
    DataFrame::new(n, cols)
}

/// A frame attribute of every node, null where the frame has none.
fn attr<'a>(cct: &'a Cct, key: &str) -> Vec<Option<&'a str>> {
    (0..cct.len() as u32)
        .map(|i| cct.frame(i).attr(key))
        .collect()
}
