//! HPCToolkit databases, both forms hpcprof has written:
//!
//! * **v4** (hpcprof ≥ 2022.10): a directory with `meta.db` (metric descriptions and the
//!   context tree), `profile.db` (sparse values per thread / GPU stream, the first profile
//!   being the summary), `cct.db` (the same values context-major; not needed here) and
//!   optionally `trace.db` (per-profile sample timelines, see [`read_traces`]). Binary,
//!   little-endian, absolute offsets, possibly unaligned fields: everything is read
//!   bytewise and bounds-checked, and every array is strided by the element size stored
//!   in the file (layout: HPCToolkit's `doc/FORMATS.md`).
//! * **old** (≤ 2022): `experiment.xml` (tables and the calling context tree, with
//!   summed metric values) and one big-endian `*.metric-db` per rank/thread (dense
//!   `[node][metric]` f64 values). The XML is read by a small tokenizer below.
//!
//! Both give one [`Profile`] per profile in the database: the summary first, then one per
//! thread / rank / GPU stream, all with the same tree (so node ids agree across them).
//! Each frame carries the database's context id (`ctx_id` in v4, `nid` in the old form).
//!
//! Metric columns use HPCToolkit's metric names: `CPUTIME (sec)` is the exclusive
//! (v4 "function" scope) value and `CPUTIME (sec) (inc)` the inclusive ("execution"
//! scope) value. Summary statistics other than the sum get a suffix (`:min`, `:max`,
//! `:count`, ...). A value missing from the sparse data is NaN.

// The parts, along the formats' own seams; each sees the others through `super::*`.
mod bytes;
mod columns;
mod experiment_xml;
mod meta_db;
mod profile_db;
pub mod timeline;
mod trace_db;
mod xml;

use std::collections::HashMap;
use std::fmt::Display;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::metrics::inclusive_name;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

use bytes::*;
use columns::*;
use experiment_xml::*;
use meta_db::*;
use profile_db::*;
use trace_db::*;
use xml::*;

const MAGIC: &[u8; 10] = b"HPCTOOLKIT";

/// True when `path` is an HPCToolkit database directory: it holds a `meta.db` with the
/// `HPCTOOLKIT` magic and format `meta`, or an `experiment.xml`. (`head` is unused.)
pub fn sniff(path: &Path, _head: &[u8]) -> bool {
    if !path.is_dir() {
        return false;
    }
    let mut head = [0u8; 14];
    if let Ok(mut f) = File::open(path.join("meta.db")) {
        if f.read_exact(&mut head).is_ok() && &head[..10] == MAGIC && &head[10..] == b"meta" {
            return true;
        }
    }
    path.join("experiment.xml").is_file()
}

/// The HPCToolkit reader: a database directory, or its `meta.db` or `experiment.xml`
/// named as the input.
pub struct HpcToolkit;

/// The database a probed input stands for, if it is one.
fn database_of(probe: &super::Probe) -> Option<PathBuf> {
    let path = probe.path?;
    if probe.is_dir {
        return Some(path.to_path_buf());
    }
    if probe.name != "meta.db" && probe.name != "experiment.xml" {
        return None;
    }
    Some(match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

impl super::Reader for HpcToolkit {
    fn name(&self) -> &'static str {
        "HPCToolkit databases"
    }

    fn format(&self) -> Format {
        Format::HpcToolkit
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        database_of(probe).is_some_and(|dir| sniff(&dir, &[]))
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let probe = if path.is_dir() {
            super::Probe::dir(&path)
        } else {
            super::Probe {
                path: Some(&path),
                name: super::probe::file_name(&path),
                ..super::Probe::bytes(&[])
            }
        };
        let dir = database_of(&probe).ok_or("not an HPCToolkit database")?;
        read(&dir)
    }
}

/// Reads every profile of the database: the summary first, then one per thread, rank or
/// GPU stream. `path` is the database directory (or its `meta.db` / `experiment.xml`).
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    let dir = database_dir(path);
    if dir.join("meta.db").is_file() {
        read_v4(&dir)
    } else if dir.join("experiment.xml").is_file() {
        read_old(&dir)
    } else {
        Err("not an HPCToolkit database: no meta.db or experiment.xml".into())
    }
}

/// One profile's trace: (index of the profile in [`read`]'s `Vec`, samples as
/// (timestamp in ns since the epoch, ctx id)).
pub type Trace = (usize, Vec<(u64, u32)>);

/// The sample timelines of trace.db, one per traced profile: (index of the profile in
/// the `Vec` that [`read`] returns, samples as (timestamp in ns since the epoch, ctx id)).
/// A sample holds until the next one; ctx id 0 means the thread was idle. Map ctx ids to
/// nodes with [`ctx_nodes`]. Databases without trace.db (and old-format ones) give none.
pub fn read_traces(path: &Path) -> Result<Vec<Trace>, String> {
    let dir = database_dir(path);
    let file = dir.join("trace.db");
    if !dir.join("meta.db").is_file() || !file.is_file() {
        return Ok(Vec::new());
    }
    let kinds = meta_id_names(&read_file(&dir.join("meta.db"), "meta.db")?)?;
    let prof = read_file(&dir.join("profile.db"), "profile.db")?;
    let order = profile_order(&parse_profile_db(&prof)?, &kinds);
    let mut position = vec![usize::MAX; order.len()];
    for (pos, &i) in order.iter().enumerate() {
        position[i] = pos;
    }
    let data = read_file(&file, "trace.db")?;
    let mut traces = parse_traces(&data)?.traces;
    for (prof, _) in traces.iter_mut() {
        *prof = *position.get(*prof).ok_or_else(|| {
            format!(
                "trace.db: a trace belongs to profile {prof}, but profile.db has {}",
                order.len()
            )
        })?;
    }
    traces.sort_by_key(|t| t.0);
    Ok(traces)
}

/// Context id -> node of a tree read by [`read`] (from the frames' `ctx_id` / `nid`).
pub fn ctx_nodes(cct: &Cct) -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for n in 0..cct.len() as u32 {
        let f = cct.frame(n);
        if let Some(id) = f.attr("ctx_id").or_else(|| f.attr("nid")) {
            if let Ok(id) = id.parse() {
                out.insert(id, n);
            }
        }
    }
    out
}

fn database_dir(path: &Path) -> PathBuf {
    let is_member = path
        .file_name()
        .is_some_and(|n| n == "meta.db" || n == "experiment.xml");
    if is_member && path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    }
}

fn read_file(path: &Path, name: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The unit in a metric name's parentheses: `CPUTIME (sec)` -> `s`,
/// `CPUTIME (usec) (I)` -> `us`; "" when none is recognised.
fn unit_of(name: &str) -> &'static str {
    for group in name.split('(').skip(1) {
        let inner = group.split(')').next().unwrap_or("").trim();
        let unit = match inner {
            "sec" | "s" | "seconds" => "s",
            "ms" | "msec" => "ms",
            "us" | "usec" | "µs" => "us",
            "ns" | "nsec" => "ns",
            "B" | "bytes" => "B",
            _ => continue,
        };
        return unit;
    }
    ""
}

#[cfg(test)]
mod tests;
