//! Score-P / Scalasca CUBE4 profiles (`.cubex`): a tar archive of `anchor.xml` (metrics,
//! regions, the call tree of `cnode`s, the system tree down to locations) and, per
//! metric `N`, `N.index` and `N.data` (binary rows of one value per location).
//!
//! The call tree becomes the CCT (a node per cnode, named for the region it calls).
//! Every metric stored in the archive becomes a column pair, exclusive `name` and
//! inclusive `name (inc)`, converted from what its `type` says the rows hold
//! (`metric.rs`). The result is an ensemble: the summary (values aggregated over all
//! locations, as Cube shows the system tree's root) first, labelled `summary` and
//! left out of the ensemble statistics as HPCToolkit's is, then one profile per
//! location (`rank R thread T`). With a single location the summary alone.
//!
//! Skipped, each with a warning: derived metrics (a CubePL expression, no rows),
//! value types grove does not reduce to one figure (HISTOGRAM, NDOUBLES, SCALE_FUNC),
//! metrics whose files are missing or unreadable, `remapping.spec` (cube_remap2's rules),
//! the system tree's Cartesian topologies.

mod anchor;
pub mod cube3;
mod metric;
pub mod tar;
mod values;
mod xml;

use std::collections::HashMap;
use std::io::Read;

use crate::model::metrics::inclusive_name;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

use anchor::Anchor;

/// Above this many cells (call paths × locations × columns) the per-location profiles
/// are not built and the summary stands alone (with a warning): an ensemble member is a
/// full copy of the tree's table.
const MAX_ENSEMBLE_CELLS: usize = 16 << 20;

pub struct Cube;

/// Whether the head is a tar whose first member is one of a `.cubex`'s files.
pub fn claims_head(head: &[u8]) -> bool {
    let Some(name) = tar::first_name(head) else {
        return false;
    };
    let numbered = |suffix: &str| {
        name.strip_suffix(suffix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    name == "anchor.xml" || name == "remapping.spec" || numbered(".index") || numbered(".data")
}

impl super::Reader for Cube {
    fn name(&self) -> &'static str {
        "Score-P CUBE4 (.cubex)"
    }

    fn format(&self) -> Format {
        Format::Cube
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        !probe.is_dir && claims_head(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (bytes, source) = input.into_bytes()?;
        read_bytes(&bytes, source)
    }
}

/// The anchor's text, gunzipped when the archive stores it compressed.
fn anchor_text(data: &[u8]) -> Result<Vec<u8>, String> {
    if data.starts_with(&super::GZIP_MAGIC) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(data)
            .read_to_end(&mut out)
            .map_err(|e| format!("anchor.xml: {e}"))?;
        Ok(out)
    } else {
        Ok(data.to_vec())
    }
}

/// The call tree: node i is cnode i (`Anchor::cnodes` lists parents first).
fn tree(a: &Anchor, warnings: &mut Vec<String>) -> Cct {
    let mut cct = Cct::default();
    let mut unknown = 0;
    for c in &a.cnodes {
        let r = a.regions.get(&c.region);
        if r.is_none() {
            unknown += 1;
        }
        let name = match r {
            Some(r) if !r.name.is_empty() => r.name.clone(),
            _ => format!("region {}", c.region),
        };
        let mut f = Frame::new(&name, "function");
        if let Some(r) = r {
            let file = c.module.as_deref().unwrap_or(&r.module);
            if !file.is_empty() {
                f.set_attr("file", file);
            }
            let line = c.line.as_deref().unwrap_or(&r.begin);
            if !line.is_empty() && line != "-1" {
                f.set_attr("line", line);
            }
            for (k, v) in [("paradigm", &r.paradigm), ("role", &r.role)] {
                if !v.is_empty() {
                    f.set_attr(k, v);
                }
            }
            if !r.mangled.is_empty() && r.mangled != r.name {
                f.set_attr("mangled", &r.mangled);
            }
        }
        for (k, v) in &c.params {
            f.set_attr(&format!("param {k}"), v);
        }
        f.set_attr("cnode", &c.id.to_string());
        cct.add_node(c.parent.map(|p| p as u32), f);
    }
    if unknown > 0 {
        warnings.push(format!(
            "{unknown} call path(s) call a region anchor.xml does not define (named \"region N\")"
        ));
    }
    cct.finish();
    cct
}

/// Grove's unit for a Cube `uom`.
fn unit(uom: &str) -> &'static str {
    match uom.trim() {
        "sec" | "s" | "seconds" => "s",
        "msec" | "ms" => "ms",
        "usec" | "us" => "us",
        "nsec" | "ns" => "ns",
        "bytes" | "byte" | "B" => "B",
        _ => "",
    }
}

/// A location's label: `rank R` (a process of one thread), `rank R thread T` (or the
/// location's kind for other than threads: `rank R accelerator T`), else its names.
fn location_label(l: &anchor::Location, threaded: bool) -> String {
    if !l.group_rank.is_empty() && !l.rank.is_empty() {
        let kind = match l.kind.as_str() {
            "" | "thread" => "thread",
            other => other,
        };
        if threaded || kind != "thread" {
            format!("rank {} {kind} {}", l.group_rank, l.rank)
        } else {
            format!("rank {}", l.group_rank)
        }
    } else if l.group_name.is_empty() {
        l.name.clone()
    } else {
        format!("{} {}", l.group_name, l.name)
    }
}

/// Data columns follow location ids; the anchor's order when the ids are not 0..n.
fn location_order(a: &mut Anchor, warnings: &mut Vec<String>) {
    let n = a.locations.len() as i64;
    let mut ids: Vec<i64> = a.locations.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    if ids.iter().copied().eq(0..n) {
        a.locations.sort_by_key(|l| l.id);
    } else {
        warnings.push(
            "location ids are not 0..n: data columns are taken in the system tree's order".into(),
        );
    }
}

/// Checks the anchor has a tree and locations, puts the locations in data order and
/// builds the CCT.
fn prepare(a: &mut Anchor, warnings: &mut Vec<String>) -> Result<Cct, String> {
    if a.cnodes.is_empty() {
        return Err("anchor.xml has no call path (cnode)".into());
    }
    if a.locations.is_empty() {
        return Err("anchor.xml has no location in its system tree".into());
    }
    location_order(a, warnings);
    if !a.topologies.is_empty() {
        warnings.push(format!(
            "not shown: the Cartesian topolog(ies) {} (locations' grid coordinates)",
            a.topologies.join(", ")
        ));
    }
    Ok(tree(a, warnings))
}

/// Takes a metric's planes, turning what they counted into warnings.
fn accept<'a>(
    m: &'a anchor::Metric,
    p: metric::Planes,
    warnings: &mut Vec<String>,
    read: &mut Vec<(&'a anchor::Metric, metric::Planes)>,
) {
    for n in &p.notes {
        warnings.push(format!("metric {}: {n}", m.uniq_name));
    }
    if p.nan > 0 {
        warnings.push(format!(
            "metric {}: {} value(s) are NaN (shown as no value)",
            m.uniq_name, p.nan
        ));
    }
    if p.huge > 0 {
        warnings.push(format!(
            "metric {}: {} UINT64 value(s) above 2^64-1025 read as 0, as cubelib does",
            m.uniq_name, p.huge
        ));
    }
    read.push((m, p));
}

pub fn read_bytes(bytes: &[u8], source: Source) -> Result<Vec<Profile>, String> {
    let archive = tar::walk(bytes)?;
    let mut warnings = Vec::new();
    if archive.bad_checksums > 0 {
        warnings.push(format!(
            "{} tar header(s) fail their checksum (read anyway, as pycubexr does)",
            archive.bad_checksums
        ));
    }
    let files: HashMap<&str, &[u8]> = archive
        .entries
        .iter()
        .map(|e| (e.name.trim_start_matches("./"), e.data))
        .collect();
    let anchor_bytes = files
        .get("anchor.xml")
        .ok_or("not an archive grove reads as CUBE4: no anchor.xml in the tar")?;
    let doc = xml::parse(&anchor_text(anchor_bytes)?)?;
    let mut a = anchor::parse(&doc)?;
    drop(doc);
    let cct = prepare(&mut a, &mut warnings)?;
    if files.contains_key("remapping.spec") {
        warnings.push(
            "remapping.spec (cube_remap2's rules for derived metrics) is not applied: only the stored metrics are shown"
                .into(),
        );
    }
    let mut read = Vec::new();
    let mut no_files: Vec<&str> = Vec::new();
    for m in &a.metrics {
        let Some(kind) = m.kind else {
            warnings.push(format!(
                "metric {} is {} (computed by Cube from an expression), not stored: skipped",
                m.uniq_name, m.type_attr
            ));
            continue;
        };
        let (Some(index), Some(data)) = (
            files.get(format!("{}.index", m.id).as_str()),
            files.get(format!("{}.data", m.id).as_str()),
        ) else {
            // Score-P leaves out the files of a metric without a value anywhere.
            no_files.push(m.uniq_name.as_str());
            continue;
        };
        match metric::read(&a, m, kind, index, data) {
            Ok(p) => accept(m, p, &mut warnings, &mut read),
            Err(e) => warnings.push(format!("metric {}: {e}: skipped", m.uniq_name)),
        }
    }
    if !no_files.is_empty() {
        warnings.push(format!(
            "{} metric(s) have no .index/.data in the archive (no value anywhere; Cube shows 0): {}: skipped",
            no_files.len(),
            no_files.join(", ")
        ));
    }
    Ok(profiles(&a, cct, &read, source, warnings))
}

/// The summary and, when the ensemble is not too large, one profile per location.
fn profiles(
    a: &Anchor,
    cct: Cct,
    read: &[(&anchor::Metric, metric::Planes)],
    source: Source,
    mut warnings: Vec<String>,
) -> Vec<Profile> {
    let nloc = a.locations.len();
    let ncols: usize = read.iter().map(|(_, p)| 2 * p.layout.fields.len()).sum();
    let cells = cct.len().saturating_mul(nloc).saturating_mul(ncols);
    let per_location = nloc > 1 && cells <= MAX_ENSEMBLE_CELLS;
    if nloc > 1 && !per_location {
        warnings.push(format!(
            "{nloc} locations × {} call paths × {ncols} columns is too large an ensemble: only the summary over locations is loaded",
            cct.len()
        ));
    }
    let default = read
        .iter()
        .map(|(m, _)| m.uniq_name.clone())
        .find(|n| n == "time")
        .or_else(|| read.first().map(|(m, _)| m.uniq_name.clone()))
        .unwrap_or_default();
    let mut meta: Vec<(String, String)> = a.attrs.clone();
    meta.push(("cube version".into(), a.version.clone()));
    meta.push(("locations".into(), nloc.to_string()));
    for (m, _) in read {
        if !m.disp_name.is_empty() && m.disp_name != m.uniq_name {
            meta.push((format!("metric {}", m.uniq_name), m.disp_name.clone()));
        }
    }
    let one = |loc: Option<usize>, label: String, warnings: Vec<String>| {
        let mut metrics = MetricTable::new(cct.len());
        for (m, p) in read {
            let u = unit(&m.unit);
            for (suffix, excl, incl) in metric::columns(p, nloc, loc) {
                let name = format!("{}{suffix}", m.uniq_name);
                let u = if suffix == ":count" { "" } else { u };
                metrics.set(&name, u, excl);
                metrics.set(&inclusive_name(&name), u, incl);
            }
        }
        let mut meta = meta.clone();
        if let Some(k) = loc {
            let l = &a.locations[k];
            meta.push(("location id".into(), l.id.to_string()));
            meta.push(("location".into(), l.name.clone()));
            meta.push(("location group".into(), l.group_name.clone()));
        }
        let mut source = source.clone();
        if per_location {
            source.label = label;
        }
        Profile {
            source,
            dialect: a
                .attrs
                .iter()
                .find(|(k, _)| k == "Creator")
                .map(|(_, v)| format!("CUBE {} by {v}", a.version))
                .unwrap_or_else(|| format!("CUBE {}", a.version)),
            cct: cct.clone(),
            metrics,
            events: None,
            counters: None,
            meta,
            warnings,
            default_metric: default.clone(),
            call_graph: None,
        }
    };
    let mut out = vec![one(None, "summary".into(), warnings)];
    if per_location {
        let mut per_group: HashMap<(&str, &str), usize> = HashMap::new();
        for l in &a.locations {
            *per_group.entry((&l.group_name, &l.group_rank)).or_default() += 1;
        }
        let threaded = per_group.values().any(|&n| n > 1);
        for (k, l) in a.locations.iter().enumerate() {
            let mut p = one(Some(k), location_label(l, threaded), Vec::new());
            // The file's size is counted once, on the summary.
            p.source.size = 0;
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests;
