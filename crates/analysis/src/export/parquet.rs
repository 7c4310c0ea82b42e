//! Parquet of the current tree's metric table: the CSV's rows and columns, typed, so
//! pandas, polars and DuckDB read it without parsing. Missing values are nulls; units
//! travel in the file's key-value metadata (`grove.units`, a JSON object), with the
//! default metric (`grove.default_metric`). grove reopens it
//! (`readers::grove_export::parquet`).

use std::io::Write;

use polars::io::parquet::write::KeyValueMetadata;
use polars::prelude::*;

use crate::model::paths::paths_for;
use crate::model::{PreOrder, Profile};

pub fn write<W: Write>(
    out: &mut W,
    p: &Profile,
    po: &PreOrder,
    positions: &[u32],
) -> Result<(), String> {
    let nodes: Vec<u32> = positions.iter().map(|&q| po.node[q as usize]).collect();
    let text = |f: &dyn Fn(u32) -> String| -> Vec<String> { nodes.iter().map(|&n| f(n)).collect() };
    let mut cols = vec![
        Column::new("path".into(), paths_for(&p.cct, &nodes)),
        Column::new("name".into(), text(&|n| p.cct.frame(n).name.to_string())),
        Column::new("type".into(), text(&|n| p.cct.frame(n).kind.to_string())),
        Column::new(
            "depth".into(),
            positions
                .iter()
                .map(|&q| po.depth[q as usize] as u32)
                .collect::<Vec<u32>>(),
        ),
    ];
    let names = p.metrics.names();
    for name in &names {
        let vals = p.metrics.values(name).unwrap_or(&[]);
        let col: Float64Chunked = nodes
            .iter()
            .map(|&n| vals.get(n as usize).copied().filter(|v| v.is_finite()))
            .collect();
        cols.push(col.with_name(name.as_str().into()).into_column());
    }
    let mut df = DataFrame::new(nodes.len(), cols).map_err(|e| e.to_string())?;
    let units: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|n| (n.clone(), serde_json::Value::from(p.metrics.unit(n))))
        .collect();
    // The units and the default metric let grove read the file back
    // (`readers::grove_export::parquet`) as the tree it was written from.
    let meta = KeyValueMetadata::from_static(vec![
        (
            "grove.units".to_string(),
            serde_json::Value::Object(units).to_string(),
        ),
        ("grove.default_metric".to_string(), p.default_metric.clone()),
    ]);
    // Written whole first: polars turns the writer's I/O errors into text, and a reader
    // that closes the pipe early (`| head`) must end the write quietly, as every other
    // format does, not as "File out of specification". The file is the size of the
    // tree's table, which is held already.
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf)
        .with_key_value_metadata(Some(meta))
        .finish(&mut df)
        .map_err(|e| e.to_string())?;
    match out.write_all(&buf).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}
