//! Reading summaries back as profiles: the tree, its metrics and the metadata, without
//! the trace (no event table: the timeline and the GPU panels need the trace itself).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use super::{CCT_SUFFIX, SCHEMA_VERSION};
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// The summaries named by `paths` when they are all summaries: `NAME.cct.parquet`
/// files, or directories holding such files (their other files are ignored), in name
/// order. None when any path is something else, so other inputs take their usual way.
pub fn find(paths: &[PathBuf]) -> Option<Vec<PathBuf>> {
    if paths.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for p in paths {
        if is_summary(p) {
            out.push(p.clone());
        } else if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .ok()?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| is_summary(f))
                .collect();
            if found.is_empty() {
                return None;
            }
            found.sort();
            out.extend(found);
        } else {
            return None;
        }
    }
    Some(out)
}

fn is_summary(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(CCT_SUFFIX) && !n.starts_with('.'))
        && p.is_file()
}

fn frame(path: &Path) -> Result<DataFrame, String> {
    frame_without(path, &[])
}

/// The file's table without the `skip` columns (not even decompressed: the CCT's
/// `path` column is its largest, and reopening rebuilds paths from the tree).
fn frame_without(path: &Path, skip: &[&str]) -> Result<DataFrame, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let f = File::open(path).map_err(|e| err(&e))?;
    let mut r = ParquetReader::new(f);
    if !skip.is_empty() {
        let schema = r.schema().map_err(|e| err(&e))?;
        let keep: Vec<String> = schema
            .iter_names()
            .filter(|n| !skip.contains(&n.as_str()))
            .map(|n| n.to_string())
            .collect();
        r = r.with_columns(Some(keep));
    }
    r.finish().map_err(|e| err(&e))
}

fn strings(df: &DataFrame, col: &str, path: &Path) -> Result<Vec<String>, String> {
    let c = df
        .column(col)
        .and_then(|c| c.str().cloned())
        .map_err(|e| format!("{}: column {col:?}: {e}", path.display()))?;
    Ok(c.iter().map(|v| v.unwrap_or("").to_string()).collect())
}

fn str_column<'a>(df: &'a DataFrame, col: &str, path: &Path) -> Result<&'a StringChunked, String> {
    df.column(col)
        .and_then(|c| c.str())
        .map_err(|e| format!("{}: column {col:?}: {e}", path.display()))
}

/// Columns of the CCT table that are not metrics.
const FIXED: [&str; 8] = [
    "input", "node", "parent", "depth", "name", "type", "path", "attrs",
];

/// The strings of the summaries one thread reads, kept once: 10,000 summaries of the
/// same program name the same frames 10,000 times, and a text per frame (name, type,
/// every attribute) was most of the memory an ensemble of them took.
#[derive(Default)]
pub struct Strings(HashMap<Box<str>, Arc<str>>);

impl Strings {
    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.get(s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.0.insert(s.into(), a.clone());
        a
    }
}

/// One summary (its `NAME.cct.parquet`; `NAME.meta.parquet` beside it) as a profile.
pub fn read(cct_path: &Path) -> Result<Profile, String> {
    read_with(cct_path, &mut Strings::default())
}

/// `read`, sharing the strings of the summaries read before (`shared`).
pub fn read_with(cct_path: &Path, shared: &mut Strings) -> Result<Profile, String> {
    let file = cct_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let name = file.strip_suffix(CCT_SUFFIX).unwrap_or(file).to_string();
    let meta_path = cct_path.with_file_name(format!("{name}.meta.parquet"));
    let meta = frame(&meta_path)?;
    let (sec, key, val) = (
        strings(&meta, "section", &meta_path)?,
        strings(&meta, "key", &meta_path)?,
        strings(&meta, "value", &meta_path)?,
    );
    let get = |s: &str, k: &str| -> String {
        (0..sec.len())
            .find(|&i| sec[i] == s && key[i] == k)
            .map(|i| val[i].clone())
            .unwrap_or_default()
    };
    let version: u32 = get("summary", "version").parse().unwrap_or(0);
    if version == 0 || version > SCHEMA_VERSION {
        return Err(format!(
            "{}: summary schema version {version:?}; this grove reads 1 to {SCHEMA_VERSION}",
            meta_path.display()
        ));
    }
    let df = frame_without(cct_path, &["path", "input"])?;
    let n = df.height();
    let parents: Vec<Option<i64>> = df
        .column("parent")
        .and_then(|c| c.i64().cloned())
        .map_err(|e| format!("{}: column \"parent\": {e}", cct_path.display()))?
        .iter()
        .collect();
    // Borrowed from the table: a copy per string would be 30,000 allocations per
    // summary, which shows at 10,000 summaries.
    let names = str_column(&df, "name", cct_path)?;
    let kinds = str_column(&df, "type", cct_path)?;
    let attrs = str_column(&df, "attrs", cct_path)?;
    let (names, kinds, attrs): (Vec<&str>, Vec<&str>, Vec<&str>) = (
        names.iter().map(|v| v.unwrap_or("")).collect(),
        kinds.iter().map(|v| v.unwrap_or("")).collect(),
        attrs.iter().map(|v| v.unwrap_or("")).collect(),
    );
    let mut cct = Cct::default();
    for i in 0..n {
        let parent = match parents[i] {
            None => None,
            Some(q) if q >= 0 && (q as usize) < i => Some(q as u32),
            Some(q) => {
                return Err(format!(
                    "{}: row {i}: parent {q} does not come before it",
                    cct_path.display()
                ))
            }
        };
        let mut f = Frame {
            name: shared.get(names[i]),
            kind: shared.get(kinds[i]),
            attrs: Default::default(),
        };
        if !attrs[i].is_empty() {
            let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(attrs[i])
                .map_err(|e| format!("{}: row {i}: attrs: {e}", cct_path.display()))?;
            // A JSON object's keys are distinct: each attribute is pushed once.
            for (k, v) in m {
                let v = shared.get(v.as_str().unwrap_or_default());
                f.attrs.push((shared.get(&k), v));
            }
        }
        cct.add_node(parent, f);
    }
    cct.finish();
    let mut metrics = MetricTable::new(n);
    for c in df.columns() {
        let m = c.name().as_str();
        if FIXED.contains(&m) {
            continue;
        }
        let vals: Vec<f64> = c
            .f64()
            .map_err(|e| format!("{}: column {m:?}: {e}", cct_path.display()))?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect();
        metrics.set(m, &get("unit", m), vals);
    }
    let pairs = |s: &str| -> Vec<(String, String)> {
        (0..sec.len())
            .filter(|&i| sec[i] == s)
            .map(|i| (key[i].clone(), val[i].clone()))
            .collect()
    };
    let format = format_of(&get("source", "format"));
    let source_path = get("source", "path");
    Ok(Profile {
        source: Source {
            path: Some(cct_path.to_path_buf()),
            format,
            size: get("source", "size").parse().unwrap_or(0),
            gzip: get("source", "gzip") == "true",
            label: name,
        },
        dialect: format!("summary of {source_path}: {}", get("source", "dialect")),
        cct,
        events: None,
        counters: None,
        meta: pairs("meta"),
        warnings: pairs("warning").into_iter().map(|(_, w)| w).collect(),
        default_metric: match get("source", "default_metric") {
            m if metrics.has(&m) => m,
            _ => metrics.names().into_iter().next().unwrap_or_default(),
        },
        metrics,
    })
}

/// The model's format back from its label (a summary stores the label); summaries
/// written before a format existed fall back to Chrome, as they always did.
fn format_of(label: &str) -> Format {
    Format::from_label(label).unwrap_or(Format::ChromeTrace)
}
