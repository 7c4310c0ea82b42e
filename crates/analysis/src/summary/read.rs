//! Reading summaries back as profiles: the tree, its metrics and the metadata, without
//! the trace (no event table: the timeline and the GPU panels need the trace itself).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use super::{CCT_SUFFIX, SCHEMA_VERSION};
use crate::model::intern::FxBuild;
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
            found.sort_by(|a, b| crate::present::format::natural_path_cmp(a, b));
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

/// The file's table without the `skip` columns (not even decompressed: the CCT's
/// `path` column is its largest, and reopening rebuilds paths from the tree).
fn frame_without(path: &Path, skip: &[&str], serial: bool) -> Result<DataFrame, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let f = File::open(path).map_err(|e| err(&e))?;
    let mut r = ParquetReader::new(f);
    if serial {
        r = r.read_parallel(ParallelStrategy::None);
    }
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

/// The strings of a column ("" for null), array by array: the per-value iterator of
/// a chunked column cost more than the decoding.
fn str_iter(c: &StringChunked) -> impl Iterator<Item = &str> {
    c.downcast_iter()
        .flat_map(|a| a.iter().map(|v| v.unwrap_or("")))
}

/// A text's place in the table it was read from: decoded dictionary pages point every
/// row of one value at the same bytes, so that place finds a long kernel name's shared
/// string without hashing and comparing its text (only while the table lives).
fn place(s: &str) -> Option<u128> {
    // Short strings sit inline in each row's view: their places never repeat.
    (s.len() > 12).then_some((s.as_ptr() as usize as u128) << 64 | s.len() as u128)
}

/// The values of a metric column, NaN for null (no value), array by array.
fn f64_values(c: &Float64Chunked) -> Vec<f64> {
    let mut out = Vec::with_capacity(c.len());
    for a in c.downcast_iter() {
        match a.validity().filter(|v| v.unset_bits() > 0) {
            None => out.extend_from_slice(a.values()),
            Some(valid) => {
                out.extend(
                    a.values()
                        .iter()
                        .zip(valid.iter())
                        .map(|(&x, ok)| if ok { x } else { f64::NAN }),
                )
            }
        }
    }
    out
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
/// every attribute) was most of the memory an ensemble of them took. A node's
/// attributes are kept by their JSON text too: parsing the same object again for every
/// summary was a tenth of the time.
#[derive(Default)]
pub struct Strings {
    text: HashMap<Box<str>, Arc<str>, FxBuild>,
    attrs: HashMap<Box<str>, Attrs, FxBuild>,
    /// Decode on the reading thread: for callers that read many summaries on threads
    /// of their own, where handing each small file's columns to polars' pool and back
    /// cost more than it shared.
    serial: bool,
}

use crate::model::attrs::Attrs;

impl Strings {
    /// Strings for a thread that reads summaries one after another, decoding them on
    /// that thread (see `serial`).
    pub fn serial() -> Strings {
        Strings {
            serial: true,
            ..Default::default()
        }
    }

    fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.text.get(s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.text.insert(s.into(), a.clone());
        a
    }

    /// The attributes written as the JSON object `json` (`Err`: why it is not one).
    fn attrs(&mut self, json: &str) -> Result<Attrs, serde_json::Error> {
        if let Some(a) = self.attrs.get(json) {
            return Ok(a.clone());
        }
        let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)?;
        // A JSON object's keys are distinct: each attribute is pushed once.
        let a: Attrs = m
            .into_iter()
            .map(|(k, v)| (self.get(&k), self.get(v.as_str().unwrap_or_default())))
            .collect::<Vec<_>>()
            .into();
        self.attrs.insert(json.into(), a.clone());
        Ok(a)
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
    let meta = frame_without(&meta_path, &["input"], shared.serial)?;
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
    // Columns the tree is rebuilt without: its id order is the node order, and depths
    // and paths follow from the parents.
    let df = frame_without(cct_path, &["path", "input", "node", "depth"], shared.serial)?;
    let n = df.height();
    let col_err = |col: &str, e: &dyn std::fmt::Display| {
        format!("{}: column {col:?}: {e}", cct_path.display())
    };
    let parents = df
        .column("parent")
        .and_then(|c| c.i64().cloned())
        .map_err(|e| col_err("parent", &e))?;
    // Borrowed from the table: a copy per string would be 30,000 allocations per
    // summary, which shows at 10,000 summaries.
    let names = str_iter(str_column(&df, "name", cct_path)?);
    let kinds = str_iter(str_column(&df, "type", cct_path)?);
    let attrs = str_iter(str_column(&df, "attrs", cct_path)?);
    let mut cct = Cct::default();
    // Grown once: doubling a 759,485-node tree copied it (and faulted its pages in)
    // over and over, a fifth of a warm reopen.
    cct.reserve(n);
    let mut texts: HashMap<u128, Arc<str>, FxBuild> = HashMap::default();
    let mut text = |s: &str, shared: &mut Strings| match place(s) {
        Some(at) => texts.entry(at).or_insert_with(|| shared.get(s)).clone(),
        None => shared.get(s),
    };
    let mut by_place: HashMap<u128, Attrs, FxBuild> = HashMap::default();
    let parents = parents
        .downcast_iter()
        .flat_map(|a| a.iter().map(|v| v.copied()));
    let rows = names.zip(kinds).zip(attrs).zip(parents);
    for (i, (((name, kind), attrs), parent)) in rows.enumerate() {
        let parent = match parent {
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
            name: text(name, shared),
            kind: text(kind, shared),
            attrs: Default::default(),
        };
        if !attrs.is_empty() {
            let known = place(attrs).and_then(|at| by_place.get(&at));
            f.attrs = match known {
                Some(a) => a.clone(),
                None => {
                    let a = shared
                        .attrs(attrs)
                        .map_err(|e| format!("{}: row {i}: attrs: {e}", cct_path.display()))?;
                    if let Some(at) = place(attrs) {
                        by_place.insert(at, a.clone());
                    }
                    a
                }
            };
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
        let vals = f64_values(c.f64().map_err(|e| col_err(m, &e))?);
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
        call_graph: None,
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
