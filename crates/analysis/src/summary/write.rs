//! Writing one input's summary (the schema is in the module doc of `summary`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use polars::io::parquet::write::KeyValueMetadata;
use polars::prelude::*;

use super::{CCT_SUFFIX, SCHEMA_VERSION};
use crate::gpu::{self, kernels, report};
use crate::model::paths::{paths_of_range, sibling_numbers};
use crate::model::Profile;

pub struct Options {
    pub breakdown: gpu::breakdown::Options,
    pub categories: gpu::classify::Categories,
}

/// What was written: the files and their total size.
pub struct Written {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
}

/// Writes `p`'s summary into `dir` as `name.*.parquet`. `index` is the input's position
/// (the rank when the trace names none, as `grove summary` counts). Each file is
/// written under a temporary name and renamed, so a reader never sees half a file.
pub fn write(
    p: &Profile,
    name: &str,
    index: usize,
    dir: &Path,
    opts: &Options,
) -> Result<Written, String> {
    let mut w = write_tree(p, name, dir)?;
    if let Some(ev) = p.events.as_ref() {
        let model = gpu::GpuModel::new(ev, opts.categories.clone());
        let rows = kernels::table(
            ev,
            &model,
            &kernels::TableOptions {
                all: true,
                by_category: false,
                sort: kernels::KernelSort::Total,
            },
        );
        save(
            &mut w,
            dir,
            &format!("{name}.kernels.parquet"),
            kernel_table(&rows, name)?,
            p,
            ParquetCompression::default(),
        )?;
        let rank = report::rank_of(p, index);
        let bopt = gpu::breakdown::Options {
            hta_base_ns: p
                .meta_value("baseTimeNanoseconds")
                .and_then(|b| b.parse().ok())
                .unwrap_or(0),
            ..opts.breakdown
        };
        for table in report::Table::ALL {
            let rows = report::table_rows(p, &model, rank, table, &bopt);
            let df = typed_table(name, table.header(), &rows)?;
            save(
                &mut w,
                dir,
                &format!("{name}.{}.parquet", table.name()),
                df,
                p,
                ParquetCompression::default(),
            )?;
        }
    }
    Ok(w)
}

/// The tree part of a summary alone (`name.cct.parquet` and `name.meta.parquet`): what
/// reopening a summary needs. (grove's cache keeps its own flat file,
/// `summary::tree_file`.)
pub fn write_tree(p: &Profile, name: &str, dir: &Path) -> Result<Written, String> {
    let codec = ParquetCompression::default();
    let mut w = Written {
        files: Vec::new(),
        bytes: 0,
    };
    let numbers = sibling_numbers(&p.cct);
    save_batched(
        &mut w,
        dir,
        &format!("{name}{CCT_SUFFIX}"),
        p,
        codec,
        |at| cct_rows(p, name, at, &numbers),
    )?;
    save(
        &mut w,
        dir,
        &format!("{name}.meta.parquet"),
        meta_table(p, name)?,
        p,
        codec,
    )?;
    Ok(w)
}

/// The file-level metadata of every summary file: the schema version and the units.
fn file_metadata(p: &Profile) -> KeyValueMetadata {
    let units: serde_json::Map<String, serde_json::Value> = p
        .metrics
        .names()
        .iter()
        .map(|n| (n.clone(), serde_json::Value::from(p.metrics.unit(n))))
        .collect();
    KeyValueMetadata::from_static(vec![
        (
            "grove.summary.version".to_string(),
            SCHEMA_VERSION.to_string(),
        ),
        (
            "grove.units".to_string(),
            serde_json::Value::Object(units).to_string(),
        ),
    ])
}

/// Writes under a temporary name, then renames: a reader never sees half a file.
fn write_renamed(
    w: &mut Written,
    dir: &Path,
    file: &str,
    write: impl FnOnce(File) -> PolarsResult<()>,
) -> Result<(), String> {
    let path = dir.join(file);
    let tmp = dir.join(format!(".{file}.tmp"));
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let f = File::create(&tmp).map_err(|e| err(&e))?;
    if let Err(e) = write(f) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(&e));
    }
    std::fs::rename(&tmp, &path).map_err(|e| err(&e))?;
    w.bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    w.files.push(path);
    Ok(())
}

fn save(
    w: &mut Written,
    dir: &Path,
    file: &str,
    mut df: DataFrame,
    p: &Profile,
    codec: ParquetCompression,
) -> Result<(), String> {
    let kv = file_metadata(p);
    write_renamed(w, dir, file, |f| {
        ParquetWriter::new(f)
            .with_compression(codec)
            .with_key_value_metadata(Some(kv))
            .finish(&mut df)
            .map(|_| ())
    })
}

/// Rows of the tree table made and written at a time, one row group each: its strings
/// (names, paths, attributes) exist for one batch, so writing a tree of millions of
/// nodes costs a batch's memory beside the tree, not a second copy of it.
const BATCH: u32 = 1 << 16;

/// `save` of a table made a batch of rows at a time by `batch` (rows `at`).
fn save_batched(
    w: &mut Written,
    dir: &Path,
    file: &str,
    p: &Profile,
    codec: ParquetCompression,
    mut batch: impl FnMut(std::ops::Range<u32>) -> Result<DataFrame, String>,
) -> Result<(), String> {
    let rows = p.cct.len() as u32;
    let kv = file_metadata(p);
    let first = batch(0..rows.min(BATCH))?;
    let mut failed = None;
    write_renamed(w, dir, file, |f| {
        let mut out = ParquetWriter::new(f)
            .with_compression(codec)
            .with_key_value_metadata(Some(kv))
            .batched(first.schema())?;
        out.write_batch(&first)?;
        let mut at = BATCH;
        while at < rows {
            match batch(at..rows.min(at.saturating_add(BATCH))) {
                Ok(df) => out.write_batch(&df)?,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            at = at.saturating_add(BATCH);
        }
        out.finish().map(|_| ())
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn input_col(name: &str, rows: usize) -> Column {
    Column::new("input".into(), vec![name; rows])
}

/// Rows `at` of the tree table; `numbers` are the paths' sibling numbers
/// (`sibling_numbers`, made once for all batches).
fn cct_rows(
    p: &Profile,
    name: &str,
    at: std::ops::Range<u32>,
    numbers: &[u32],
) -> Result<DataFrame, String> {
    let n = at.len();
    let paths = paths_of_range(&p.cct, at.clone(), numbers);
    let ids: Vec<u32> = at.collect();
    // Names, types and attributes borrowed from the frames, the attributes' JSON made
    // once per frame slot (nodes share slots: every launch of a kernel with one
    // configuration): no string made per node.
    let mut attrs_of: std::collections::HashMap<u32, String> = Default::default();
    for &i in &ids {
        let f = p.cct.frame(i);
        if !f.attrs.is_empty() {
            attrs_of
                .entry(p.cct.frame_slot(i))
                .or_insert_with(|| attrs_json(&f.attrs));
        }
    }
    let attrs: Vec<&str> = ids
        .iter()
        .map(|&i| {
            attrs_of
                .get(&p.cct.frame_slot(i))
                .map_or("", String::as_str)
        })
        .collect();
    let parent: Int64Chunked = ids
        .iter()
        .map(|&i| p.cct.parent(i).map(i64::from))
        .collect();
    let mut cols = vec![
        input_col(name, n),
        Column::new("node".into(), ids.clone()),
        parent.with_name("parent".into()).into_column(),
        Column::new(
            "depth".into(),
            ids.iter()
                .map(|&i| p.cct.depth(i) as u32)
                .collect::<Vec<u32>>(),
        ),
        Column::new(
            "name".into(),
            ids.iter()
                .map(|&i| &*p.cct.frame(i).name)
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "type".into(),
            ids.iter()
                .map(|&i| &*p.cct.frame(i).kind)
                .collect::<Vec<&str>>(),
        ),
        Column::new("path".into(), paths),
        Column::new("attrs".into(), attrs),
    ];
    for m in p.metrics.names() {
        let vals = p.metrics.values(&m).unwrap_or(&[]);
        let col: Float64Chunked = ids
            .iter()
            .map(|&i| vals.get(i as usize).copied().filter(|v| v.is_finite()))
            .collect();
        cols.push(col.with_name(m.as_str().into()).into_column());
    }
    DataFrame::new(n, cols).map_err(|e| e.to_string())
}

/// A node's attributes (a kernel's grid, a copy's bytes, ...) as a JSON object; empty
/// when it has none.
fn attrs_json(attrs: &[(std::sync::Arc<str>, std::sync::Arc<str>)]) -> String {
    if attrs.is_empty() {
        return String::new();
    }
    let m: serde_json::Map<String, serde_json::Value> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(v.to_string())))
        .collect();
    serde_json::Value::Object(m).to_string()
}

fn meta_table(p: &Profile, name: &str) -> Result<DataFrame, String> {
    let src = &p.source;
    let mtime = src
        .path
        .as_ref()
        .and_then(|f| std::fs::metadata(f).ok())
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs().to_string())
        .unwrap_or_default();
    let mut rows: Vec<(&str, String, String)> = vec![
        ("summary", "version".into(), SCHEMA_VERSION.to_string()),
        ("summary", "grove".into(), crate::VERSION.to_string()),
        (
            "source",
            "path".into(),
            src.path
                .as_ref()
                .map(|x| x.display().to_string())
                .unwrap_or_default(),
        ),
        ("source", "size".into(), src.size.to_string()),
        ("source", "mtime".into(), mtime),
        ("source", "format".into(), src.format.label().to_string()),
        ("source", "gzip".into(), src.gzip.to_string()),
        ("source", "dialect".into(), p.dialect.clone()),
        ("source", "default_metric".into(), p.default_metric.clone()),
    ];
    for m in p.metrics.names() {
        let u = p.metrics.unit(&m).to_string();
        rows.push(("unit", m, u));
    }
    for (k, v) in &p.meta {
        rows.push(("meta", k.clone(), v.clone()));
    }
    for w in &p.warnings {
        rows.push(("warning", String::new(), w.clone()));
    }
    let n = rows.len();
    let cols = vec![
        input_col(name, n),
        Column::new(
            "section".into(),
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        Column::new(
            "key".into(),
            rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "value".into(),
            rows.iter().map(|r| r.2.as_str()).collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(n, cols).map_err(|e| e.to_string())
}

fn kernel_table(rows: &[kernels::KernelRow], name: &str) -> Result<DataFrame, String> {
    let n = rows.len();
    let s =
        |f: &dyn Fn(&kernels::KernelRow) -> String| -> Vec<String> { rows.iter().map(f).collect() };
    let cols = vec![
        input_col(name, n),
        Column::new("name".into(), s(&|r| r.name.clone())),
        Column::new("category".into(), s(&|r| r.category.clone())),
        Column::new("kind".into(), s(&|r| r.kind.label().to_string())),
        Column::new(
            "count".into(),
            rows.iter().map(|r| r.count).collect::<Vec<u64>>(),
        ),
        Column::new(
            "total_ns".into(),
            rows.iter().map(|r| r.total_ns).collect::<Vec<i64>>(),
        ),
        Column::new(
            "mean_ns".into(),
            rows.iter().map(|r| r.mean_ns).collect::<Vec<f64>>(),
        ),
        Column::new(
            "median_ns".into(),
            rows.iter().map(|r| r.median_ns).collect::<Vec<f64>>(),
        ),
        Column::new(
            "min_ns".into(),
            rows.iter().map(|r| r.min_ns).collect::<Vec<i64>>(),
        ),
        Column::new(
            "max_ns".into(),
            rows.iter().map(|r| r.max_ns).collect::<Vec<i64>>(),
        ),
        Column::new(
            "std_ns".into(),
            rows.iter().map(|r| r.std_ns).collect::<Vec<f64>>(),
        ),
        Column::new(
            "pct".into(),
            rows.iter().map(|r| r.pct).collect::<Vec<f64>>(),
        ),
    ];
    DataFrame::new(n, cols).map_err(|e| e.to_string())
}

/// A breakdown table from its CSV fields, each column typed by what all its values
/// parse as (an empty field is null).
fn typed_table(name: &str, header: &str, rows: &[Vec<String>]) -> Result<DataFrame, String> {
    let n = rows.len();
    let mut cols = vec![input_col(name, n)];
    for (c, h) in header.split(',').enumerate() {
        let field = |r: &Vec<String>| r.get(c).cloned().unwrap_or_default();
        let vals: Vec<String> = rows.iter().map(field).collect();
        let present = || vals.iter().filter(|v| !v.is_empty());
        let col = if present().all(|v| v.parse::<i64>().is_ok()) {
            let x: Int64Chunked = vals.iter().map(|v| v.parse::<i64>().ok()).collect();
            x.with_name(h.into()).into_column()
        } else if present().all(|v| v.parse::<f64>().is_ok()) {
            let x: Float64Chunked = vals.iter().map(|v| v.parse::<f64>().ok()).collect();
            x.with_name(h.into()).into_column()
        } else {
            Column::new(h.into(), vals)
        };
        cols.push(col);
    }
    DataFrame::new(n, cols).map_err(|e| e.to_string())
}
