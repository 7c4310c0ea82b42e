//! Tables of a directory of `grove summarize` summaries read straight from their
//! Parquet files, without rebuilding any tree: `kernels` is every summary's
//! `NAME.kernels.parquet` (one row per kernel name per input, as `grove kernels`
//! counts them) with a `profile` column first (docs/sql.md). 10,000 summaries are
//! 10,000 small files: each reading thread decodes its files itself.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::need::Need;
use crate::summary::CCT_SUFFIX;

/// The tables read from the summaries' own files.
pub const TABLES: [&str; 1] = ["kernels"];

/// A summary's label (its NAME) and the file of `table` beside its `NAME.cct.parquet`.
fn file_of(cct: &Path, table: &str) -> (String, PathBuf) {
    let file = cct.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let name = file.strip_suffix(CCT_SUFFIX).unwrap_or(file).to_string();
    let path = cct.with_file_name(format!("{name}.{table}.parquet"));
    (name, path)
}

fn read_one(cct: &Path, table: &str, need: &Need) -> Result<Option<DataFrame>, String> {
    let (name, path) = file_of(cct, table);
    let f = match File::open(&path) {
        Ok(f) => f,
        // A summary of a profile without a kernel table (a CPU profile) has none.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let err = |e: PolarsError| format!("{}: {e}", path.display());
    let mut r = ParquetReader::new(f).read_parallel(ParallelStrategy::None);
    // Only the columns the query names are decoded (most of the time is decoding).
    let schema = r.schema().map_err(err)?;
    let keep: Vec<String> = schema
        .iter_names()
        .filter(|n| n.as_str() != "input" && need.wants(n))
        .map(|n| n.to_string())
        .collect();
    let h = r.num_rows().map_err(err)?;
    if keep.is_empty() {
        // `select count(*) from kernels`: the rows, and whose they are.
        return DataFrame::new(h, vec![profile_column(&name, h)])
            .map(Some)
            .map_err(err);
    }
    let mut df = r.with_columns(Some(keep)).finish().map_err(err)?;
    let _ = df.drop_in_place("input");
    let h = df.height();
    df.insert_column(
        0,
        Column::new_scalar(
            "profile".into(),
            Scalar::from(PlSmallStr::from(name.as_str())),
            h,
        ),
    )
    .map_err(err)?;
    Ok(Some(df))
}

fn profile_column(name: &str, h: usize) -> Column {
    Column::new_scalar("profile".into(), Scalar::from(PlSmallStr::from(name)), h)
}

/// `table` over every summary (`cct` are their `NAME.cct.parquet` files), in their
/// order, read on every core: only the columns `query` names.
pub fn read_table(cct: &[PathBuf], table: &str, query: &str) -> Result<DataFrame, String> {
    let need = &Need::of(query);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(cct.len().max(1));
    let chunk = cct.len().div_ceil(workers).max(1);
    let parts: Vec<Result<Vec<DataFrame>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = cct
            .chunks(chunk)
            .map(|files| {
                s.spawn(move || {
                    let mut out = Vec::new();
                    for f in files {
                        out.extend(read_one(f, table, need)?);
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a reading thread failed".into()))
            })
            .collect()
    });
    let mut frames = Vec::with_capacity(cct.len());
    for p in parts {
        frames.extend(p?);
    }
    super::stack(frames).map_err(|e| format!("{table}: {e}"))
}
