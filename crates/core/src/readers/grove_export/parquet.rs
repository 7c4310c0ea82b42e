//! `grove tree --format parquet` (and `:export parquet`) read back: the CSV's columns,
//! typed, with the units (`grove.units`) and the default metric (`grove.default_metric`)
//! in the file's key-value metadata. Told from any other Parquet file by its magic,
//! that metadata and its first four columns; a summary (`NAME.cct.parquet`, which has
//! `node` and `parent` columns) is not one.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use super::Rows;
use crate::model::{Format, Frame, Profile, Source};

const FIXED: [&str; 4] = ["path", "name", "type", "depth"];

/// A file's key-value metadata (key, value) and its column names.
type Footer = (Vec<(String, String)>, Vec<String>);

/// The file's key-value metadata and column names, when it is a Parquet file. polars
/// may panic on a damaged file: that is None, quietly (`summary::cache::quietly`).
fn footer(path: &Path) -> Option<Footer> {
    crate::memory::quietly(|| footer_of(path))
}

fn footer_of(path: &Path) -> Option<Footer> {
    let mut r = ParquetReader::new(File::open(path).ok()?);
    let kv = r
        .get_metadata()
        .ok()?
        .key_value_metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|kv| (kv.key, kv.value.unwrap_or_default()))
        .collect();
    let cols = r
        .schema()
        .ok()?
        .iter_names()
        .map(|n| n.to_string())
        .collect();
    Some((kv, cols))
}

fn is_export(kv: &[(String, String)], cols: &[String]) -> bool {
    kv.iter().any(|(k, _)| k == "grove.units")
        && cols.len() >= 4
        && cols[..4].iter().zip(FIXED).all(|(c, f)| c == f)
        && !cols.iter().any(|c| c == "node")
}

pub struct GroveParquet;

impl crate::readers::Reader for GroveParquet {
    fn name(&self) -> &'static str {
        "grove Parquet export"
    }

    fn format(&self) -> Format {
        Format::GroveExport
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &crate::readers::Probe) -> bool {
        if probe.is_dir || !probe.head.starts_with(b"PAR1") {
            return false;
        }
        probe
            .path
            .and_then(footer)
            .is_some_and(|(kv, cols)| is_export(&kv, &cols))
    }

    fn read(&self, input: crate::readers::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let (kv, _) = footer(&path).ok_or("not a Parquet file")?;
        let meta = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        let units: serde_json::Map<String, serde_json::Value> = meta("grove.units")
            .and_then(|u| crate::json::from_slice_as(u.as_bytes()).ok())
            .unwrap_or_default();
        let file = File::open(&path).map_err(|e| e.to_string())?;
        // A damaged file is an error, not a panic of polars' decoder.
        let df = crate::memory::quietly(|| Some(ParquetReader::new(file).finish()))
            .ok_or("a damaged Parquet file: its pages do not decode")?
            .map_err(|e| e.to_string())?;
        let strings = |c: &str| -> Result<Vec<String>, String> {
            let col = df.column(c).map_err(|e| e.to_string())?;
            let s = col.str().map_err(|e| format!("column {c:?}: {e}"))?;
            Ok(s.iter().map(|v| v.unwrap_or("").to_string()).collect())
        };
        let (names, kinds) = (strings("name")?, strings("type")?);
        let depth_col = df
            .column("depth")
            .and_then(|c| c.cast(&DataType::UInt64))
            .map_err(|e| format!("column \"depth\": {e}"))?;
        let depth: Vec<usize> = depth_col
            .u64()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|d| d.unwrap_or(0) as usize)
            .collect();
        let mut metrics = Vec::new();
        for c in df.columns().iter().skip(FIXED.len()) {
            let name = c.name().to_string();
            let vals = c
                .cast(&DataType::Float64)
                .map_err(|e| format!("column {name:?}: {e}"))?;
            let vals: Vec<f64> = vals
                .f64()
                .map_err(|e| e.to_string())?
                .iter()
                .map(|v| v.unwrap_or(f64::NAN))
                .collect();
            let unit = units
                .get(&name)
                .and_then(|u| u.as_str())
                .unwrap_or_default()
                .to_string();
            metrics.push((name, unit, vals));
        }
        let rows = Rows {
            frames: names
                .iter()
                .zip(&kinds)
                .map(|(n, k)| Frame::new(n, k))
                .collect(),
            depth,
            metrics,
        };
        let source = Source::of_file(&path, Format::GroveExport);
        let default = meta("grove.default_metric");
        let p = super::profile(
            rows,
            source,
            "grove tree Parquet",
            default.as_deref(),
            Vec::new(),
        );
        Ok(vec![p])
    }
}
