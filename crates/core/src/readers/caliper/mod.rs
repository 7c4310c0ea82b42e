//! Caliper (LLNL) profiles in their three text forms:
//!
//! * the `.cali` stream Caliper writes: one `__rec=` record per line. `node` records build
//!   the context tree (and the attribute metadata tree), `ctx` records are snapshots that
//!   reference context nodes and carry immediate `attr=data` values, `globals` is the run
//!   metadata. The region hierarchy of a snapshot is the chain of nodes on its references
//!   whose attribute has the NESTED property, as in Caliper's own python reader
//!   (`caliperreader`) and Hatchet's `from_caliperreader`;
//! * json-split (`cali-query ... format json-split`, the default of `hatchet-region-profile`):
//!   `data` rows aligned with `columns`, non-value cells indexing `nodes`; read as Hatchet's
//!   `from_caliper` does;
//! * cali-json (`format json`): a list of flat records whose hierarchy is one `/`-joined
//!   string (`"path": "main/foo"`).
//!
//! Metric names follow Hatchet: `attribute.alias` when the file gives one, then Hatchet's
//! renames (`sum#time.duration` -> `time`, `inclusive#sum#time.duration` -> `time (inc)`, ...).
//! Unlike Hatchet, inclusive metrics are recognised by their Caliper name (`inclusive#...`) and
//! named `<name> (inc)` (SPOT's `Avg time/rank` is `avg#inclusive#sum#time.duration`, so grove
//! calls it `Avg time/rank (inc)`), and exclusive sums without an inclusive partner get one
//! (`time (inc)`) as subtree sums: region-profile values are exclusive. One profile per
//! `mpi.rank` when the file holds several ranks; a (node, rank) pair without data has NaN.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::json::{JsonError, JsonReader, Kind};
use crate::model::metrics::{inclusive_name, INC_SUFFIX};
use crate::model::{Cct, Format, Frame, MetricTable, PreOrder, Profile, Source, NO_NODE};

// The parts, along the reader's own seams; each sees the others through `super::*`.
mod builder;
mod cali;
mod json;

use super::GZIP_MAGIC;
use builder::*;
use cali::*;
use json::*;
const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Record keys that hold the region or call-path hierarchy in cali-json, by preference.
const HIERARCHY_KEYS: [&str; 6] = [
    "source.function#callpath.address",
    "path",
    "function",
    "annotation",
    "region",
    "loop",
];

const CALLPATH: &str = "source.function#callpath.address";

// ------------------------------------------------------------------------------------
// Sniffing
// ------------------------------------------------------------------------------------

/// True when the file (or directory) is in this reader's format.
pub fn sniff(path: &Path, head: &[u8]) -> bool {
    if head.starts_with(&GZIP_MAGIC) {
        // The head is not decompressed: trust the name (`x.cali.gz`, `x.cali`).
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        return name.ends_with(".cali") || name.ends_with(".cali.gz");
    }
    let text = head.strip_prefix(BOM).unwrap_or(head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..];
    if text.starts_with(b"__rec=") {
        return true;
    }
    match text.first() {
        Some(b'{') => sniff_json_split(text),
        Some(b'[') => sniff_cali_json(text),
        _ => false,
    }
}

/// A JSON object with `columns` and `nodes` (or `column_metadata`), or one whose first key
/// is `data` holding a list of row lists (cali-query writes `data` first, so the other keys
/// may lie beyond the head).
fn sniff_json_split(text: &[u8]) -> bool {
    let mut r = JsonReader::new(text);
    if r.begin_object().is_err() {
        return false;
    }
    let mut key = Vec::new();
    let (mut columns, mut nodes) = (false, false);
    let mut first = true;
    while let Ok(true) = r.next_key(first, &mut key) {
        let was_first = first;
        first = false;
        match &key[..] {
            b"column_metadata" => return true,
            b"columns" => columns = true,
            b"nodes" => nodes = true,
            b"data" if was_first => {
                if r.peek_kind().ok() != Some(Kind::Array) || r.begin_array().is_err() {
                    return false;
                }
                match r.next_element(true) {
                    Ok(true) => return r.peek_kind().ok() == Some(Kind::Array),
                    Ok(false) => continue, // `"data": []`: decide on the other keys
                    Err(_) => return false,
                }
            }
            _ => {}
        }
        if columns && nodes {
            return true;
        }
        if r.skip_value().is_err() {
            break;
        }
    }
    columns && nodes
}

fn metric_like(key: &str) -> bool {
    key.contains('#')
        || matches!(
            key,
            "time" | "count" | "time.duration" | "time.inclusive.duration" | "time.duration.ns"
        )
        || key.ends_with(INC_SUFFIX)
}

/// A list of flat objects with a hierarchy key holding a string and a Caliper-style metric
/// key; Chrome events (`ph`) and Hatchet literal nodes (`frame`, `children`) are refused.
fn sniff_cali_json(text: &[u8]) -> bool {
    let mut r = JsonReader::new(text);
    if r.begin_array().is_err() {
        return false;
    }
    let (mut key, mut val) = (Vec::new(), Vec::new());
    let (mut hier, mut metric) = (false, false);
    let mut first = true;
    for _ in 0..256 {
        match r.next_element(first) {
            Ok(true) => {}
            _ => break,
        }
        first = false;
        if r.peek_kind().ok() != Some(Kind::Object) || r.begin_object().is_err() {
            return false;
        }
        let mut fk = true;
        loop {
            match r.next_key(fk, &mut key) {
                Ok(true) => {}
                Ok(false) => break,
                Err(_) => return hier && metric,
            }
            fk = false;
            if matches!(
                &key[..],
                b"ph" | b"frame" | b"children" | b"traceEvents" | b"metrics"
            ) {
                return false;
            }
            let kind = match r.read_scalar(&mut val) {
                Ok(k) => k,
                Err(_) => return hier && metric,
            };
            let k = String::from_utf8_lossy(&key);
            if HIERARCHY_KEYS.contains(&k.as_ref()) {
                hier |= (kind == Kind::Str && !val.is_empty()) || kind == Kind::Array;
            } else if metric_like(&k) {
                metric |= kind == Kind::Num || (kind == Kind::Str && parse_f64(&val).is_some());
            }
        }
    }
    hier && metric
}

fn parse_f64(text: &[u8]) -> Option<f64> {
    crate::json::number::text_f64(text)
}

/// The Caliper reader (.cali streams, json-split and cali-json), by the first 4 KiB; a
/// gzip-compressed file by its name (`x.cali`, `x.cali.gz`).
pub struct Caliper;

impl super::Reader for Caliper {
    fn name(&self) -> &'static str {
        "Caliper .cali/JSON"
    }

    fn format(&self) -> Format {
        Format::Caliper
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        if probe.is_dir || probe.utf16 {
            return false;
        }
        let name = Path::new(&probe.name);
        if probe.gzip {
            return sniff(name, &GZIP_MAGIC);
        }
        sniff(name, &probe.head[..probe.head.len().min(4096)])
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        read(&input.into_path()?)
    }
}

// ------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------

/// Reads every profile the input holds (one per rank or thread where it has several).
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let (mut input, gzip) = super::decompressed(file)?;
    // Find the first meaningful byte; whitespace-only buffers are consumed (their lines
    // counted so `.cali` errors keep true line numbers).
    let mut lines_skipped = 0u64;
    let mut at_start = true;
    let first = loop {
        let buf = input.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
        if buf.is_empty() {
            return Err("the file is empty".into());
        }
        let body = if at_start {
            buf.strip_prefix(BOM).unwrap_or(buf)
        } else {
            buf
        };
        if let Some(&b) = body.iter().find(|b| !b.is_ascii_whitespace()) {
            break b;
        }
        at_start = false;
        lines_skipped += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = buf.len();
        input.consume(n);
    };
    let (builder, dialect) = match first {
        b'_' => (read_cali(input, lines_skipped)?, "Caliper .cali"),
        b'{' => (read_json_split(input)?, "Caliper json-split"),
        b'[' => (read_cali_json(input)?, "Caliper cali-json"),
        b => {
            return Err(format!(
                "not a Caliper file: expected `__rec=` records or JSON, found {:?}",
                b as char
            ))
        }
    };
    builder.into_profiles(path, size, gzip, dialect)
}

#[cfg(test)]
mod tests;
