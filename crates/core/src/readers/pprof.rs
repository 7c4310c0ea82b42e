//! pprof's protobuf profile (`profile.proto` of google/pprof), gzipped or not: what Go's
//! runtime/pprof, parca, Node's pprof and many others write. The messages are declared
//! here by hand with prost's derive (no build script, no protoc), field numbers as in
//! profile.proto.
//!
//! CCT: each sample's locations (leaf first) are expanded into their lines — a location's
//! first line is the innermost inlined function, its last the function it is inlined
//! into — and merged by call path, root first. Every sample type is a metric named by its
//! type with its unit (`samples` [count], `cpu` [nanoseconds], `alloc_space` [bytes]);
//! the default metric is `default_sample_type`, else the last type, as pprof chooses.
//! Sample labels become `label.<key>` attributes of the sample's leaf node.

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;

use prost::Message;

use crate::model::demangle::{demangle, RAW_NAME};
use crate::model::{Cct, Format, MetricTable, Profile, Source};

#[derive(Clone, PartialEq, Message)]
pub struct PProfile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
}

/// Strict probe on the (decompressed) first bytes: they are not text, and their first
/// top-level fields (up to 6) are Profile fields with profile.proto's wire types
/// (messages and strings length-delimited, numbers varints), one of them a sample type,
/// sample, string or period type.
/// Whether bytes are a ValueType message: its fields `type` (1) and `unit` (2), both
/// varints (string-table indices). Bytes cut by the probe's end pass.
fn value_type(mut b: &[u8]) -> bool {
    while !b.is_empty() {
        let Some((key, used)) = varint(b) else {
            return true;
        };
        b = &b[used..];
        if !matches!(key, 8 | 16) {
            return false;
        }
        let Some((_, used)) = varint(b) else {
            return true;
        };
        b = &b[used..];
    }
    true
}

pub fn claims(head: &[u8]) -> bool {
    if head
        .iter()
        .take(64)
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        return false;
    }
    let (mut i, mut seen, mut core) = (0usize, 0, false);
    while i < head.len() && seen < 6 {
        let Some((key, used)) = varint(&head[i..]) else {
            return false;
        };
        i += used;
        let (num, wt) = (key >> 3, key & 7);
        let ok = match num {
            1..=6 | 11 | 15 => wt == 2,
            7..=10 | 12 | 14 => wt == 0,
            13 => wt == 0 || wt == 2,
            _ => false,
        };
        if !ok {
            return false;
        }
        core |= matches!(num, 1 | 2 | 6 | 11);
        let Some((v, used)) = varint(&head[i..]) else {
            // The field runs past the probe's bytes.
            return seen > 0 && core;
        };
        i += used;
        if wt == 2 {
            if v > 1 << 30 {
                return false;
            }
            let end = i.saturating_add(v as usize);
            // A sample type is a ValueType: varint `type` and `unit` only. Other
            // protobufs (TensorFlow's XSpace) also open with a field 1 of bytes.
            if num == 1 && !value_type(&head[i.min(head.len())..end.min(head.len())]) {
                return false;
            }
            i = end;
        }
        seen += 1;
    }
    seen > 0 && core
}

fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate().take(10) {
        v |= ((x & 0x7f) as u64) << (7 * i);
        if x & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let mut bytes = Vec::new();
    let mut warnings = Vec::new();
    if let Err(e) = input.read_to_end(&mut bytes) {
        if bytes.is_empty() {
            return Err(format!("cannot read: {e}"));
        }
        warnings.push(format!(
            "the input ends early ({e}); the profile may be partial"
        ));
    }
    let p =
        PProfile::decode(&bytes[..]).map_err(|e| format!("not a pprof protobuf profile: {e}"))?;
    let ix = Index::new(&p);
    let s = |i: i64| ix.s(i);
    if p.sample_type.is_empty() {
        return Err("the profile declares no sample type".into());
    }
    if p.string_table.first().is_some_and(|f| !f.is_empty()) {
        return Err("string_table[0] is not empty: not a pprof profile".into());
    }
    let nt = p.sample_type.len();
    let mut cct = Cct::default();
    let mut vals: Vec<Vec<f64>> = vec![Vec::new(); nt];
    let mut labels: HashMap<(u32, String), BTreeSet<String>> = HashMap::new();
    let (mut missing_loc, mut short_values) = (0u64, 0u64);
    let mut frames: Vec<StackFrame> = Vec::new();
    for smp in &p.sample {
        missing_loc += ix.frames(smp, &mut frames);
        let leaf = add_stack(&mut cct, &frames);
        if smp.value.len() != nt {
            short_values += 1;
        }
        let len = cct.len();
        for (t, col) in vals.iter_mut().enumerate() {
            if col.len() < len {
                col.resize(len, 0.0);
            }
            col[leaf as usize] += smp.value.get(t).copied().unwrap_or(0) as f64;
        }
        for l in smp.label.iter().take(16) {
            let v = if l.str != 0 {
                s(l.str).to_string()
            } else if l.num_unit != 0 {
                format!("{} {}", l.num, s(l.num_unit))
            } else {
                l.num.to_string()
            };
            let set = labels.entry((leaf, s(l.key).to_string())).or_default();
            if set.len() < 8 {
                set.insert(v);
            }
        }
    }
    if cct.is_empty() {
        return Err("the profile holds no sample".into());
    }
    for ((node, key), set) in &labels {
        let v: Vec<&str> = set.iter().map(String::as_str).collect();
        cct.frame_mut(*node)
            .set_attr(&format!("label.{key}"), &v.join(", "));
    }
    let (metrics, names) = metric_columns(&ix, &cct, vals);
    let default = if p.default_sample_type != 0 {
        let want = s(p.default_sample_type);
        names.iter().find(|n| *n == want).cloned()
    } else {
        None
    }
    .unwrap_or_else(|| names[nt - 1].clone());
    if missing_loc > 0 {
        warnings.push(format!(
            "{missing_loc} sample location id(s) name no location and were skipped"
        ));
    }
    if short_values > 0 {
        warnings.push(format!(
            "{short_values} sample(s) do not have one value per sample type"
        ));
    }
    let meta = profile_meta(&ix);
    source.format = Format::Pprof;
    Ok(Profile {
        call_graph: None,
        source,
        dialect: "pprof".into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric: default,
    })
}

/// A frame of a sample's stack: name, file, line, module.
type StackFrame = (String, String, i64, String);

/// A decoded profile's tables by id.
struct Index<'a> {
    p: &'a PProfile,
    funcs: HashMap<u64, &'a Function>,
    maps: HashMap<u64, &'a Mapping>,
    locs: HashMap<u64, &'a Location>,
}

impl<'a> Index<'a> {
    fn new(p: &'a PProfile) -> Index<'a> {
        Index {
            p,
            funcs: p.function.iter().map(|f| (f.id, f)).collect(),
            maps: p.mapping.iter().map(|m| (m.id, m)).collect(),
            locs: p.location.iter().map(|l| (l.id, l)).collect(),
        }
    }

    /// String `i` of the string table ("" when there is none).
    fn s(&self, i: i64) -> &'a str {
        self.p
            .string_table
            .get(i as usize)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// A sample's stack into `frames`, leaf first; the number of location ids that name
    /// no location (skipped).
    fn frames(&self, smp: &Sample, frames: &mut Vec<StackFrame>) -> u64 {
        let mut missing_loc = 0;
        frames.clear();
        for id in &smp.location_id {
            let Some(loc) = self.locs.get(id) else {
                missing_loc += 1;
                continue;
            };
            let module = self
                .maps
                .get(&loc.mapping_id)
                .map(|m| self.s(m.filename).to_string())
                .unwrap_or_default();
            if loc.line.is_empty() {
                frames.push((format!("0x{:x}", loc.address), String::new(), 0, module));
                continue;
            }
            // Leaf first: a location's lines run from the innermost inlined function out.
            for ln in &loc.line {
                let (name, file) = match self.funcs.get(&ln.function_id) {
                    Some(f) => (self.s(f.name), self.s(f.filename)),
                    None => ("", ""),
                };
                let name = if name.is_empty() {
                    format!("0x{:x}", loc.address)
                } else {
                    name.to_string()
                };
                frames.push((name, file.to_string(), ln.line, module.clone()));
            }
        }
        missing_loc
    }
}

/// The nodes of a stack (leaf first in `frames`), made as needed; its leaf.
fn add_stack(cct: &mut Cct, frames: &[StackFrame]) -> u32 {
    let mut node: Option<u32> = None;
    for (name, file, line, module) in frames.iter().rev() {
        let before = cct.len();
        let shown = demangle(name);
        let n = cct.child(node, shown.as_deref().unwrap_or(name), "function");
        if cct.len() > before {
            let f = cct.frame_mut(n);
            if shown.is_some() {
                f.set_attr(RAW_NAME, name);
            }
            if !file.is_empty() {
                f.set_attr("file", file);
            }
            if *line > 0 {
                f.set_attr("line", &line.to_string());
            }
            if !module.is_empty() {
                f.set_attr("module", module);
            }
        }
        node = Some(n);
    }
    match node {
        Some(n) => n,
        None => cct.child(None, "(no stack)", "function"),
    }
}

/// One metric per sample type (named by its type, made unique), with its inclusive
/// twin; the metric names.
fn metric_columns(ix: &Index, cct: &Cct, mut vals: Vec<Vec<f64>>) -> (MetricTable, Vec<String>) {
    let len = cct.len();
    let mut metrics = MetricTable::new(len);
    let mut names: Vec<String> = Vec::new();
    for (t, vt) in ix.p.sample_type.iter().enumerate() {
        let mut name = ix.s(vt.r#type).to_string();
        if name.is_empty() {
            name = format!("value{t}");
        }
        while names.contains(&name) {
            name.push('\'');
        }
        let mut col = std::mem::take(&mut vals[t]);
        col.resize(len, 0.0);
        metrics.set(&name, ix.s(vt.unit), col);
        names.push(name);
    }
    let bases: Vec<&str> = names.iter().map(String::as_str).collect();
    metrics.derive_inclusive(cct, &bases);
    (metrics, names)
}

/// The run metadata: sample count and types, period, duration, comments.
fn profile_meta(ix: &Index) -> Vec<(String, String)> {
    let (p, s) = (ix.p, |i: i64| ix.s(i));
    let mut meta = vec![
        ("samples".to_string(), p.sample.len().to_string()),
        (
            "sample types".to_string(),
            p.sample_type
                .iter()
                .map(|v| format!("{}/{}", s(v.r#type), s(v.unit)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    if let Some(pt) = &p.period_type {
        meta.push((
            "period".into(),
            format!("{} {}/{}", p.period, s(pt.r#type), s(pt.unit)),
        ));
    }
    if p.duration_nanos > 0 {
        meta.push(("duration (ns)".into(), p.duration_nanos.to_string()));
    }
    for c in &p.comment {
        meta.push(("comment".into(), s(*c).to_string()));
    }
    meta
}
