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

use super::GZIP_MAGIC;
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
    std::str::from_utf8(text).ok()?.trim().parse::<f64>().ok()
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

// ------------------------------------------------------------------------------------
// Metric columns and the common builder
// ------------------------------------------------------------------------------------

/// How several values of one column at one (node, rank) combine (Caliper's aggregation
/// operator, the first `op#` of the attribute name).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Agg {
    Sum,
    Min,
    Max,
    Avg,
}

#[derive(Debug, Clone)]
struct Col {
    name: String,
    unit: String,
    inclusive: bool,
    agg: Agg,
    /// An exclusive sum: `<name> (inc)` is derived as subtree sums when missing.
    summable: bool,
}

/// The name grove shows for a Caliper attribute: the alias, Hatchet's renames, and the
/// `(inc)` suffix for inclusive metrics (` (exc)` is dropped from exclusive ones).
fn display_name(native: &str, alias: Option<&str>) -> (String, bool) {
    let base = alias.filter(|a| !a.trim().is_empty()).unwrap_or(native);
    let renamed = match base {
        "sum#time.duration" | "sum#avg#sum#time.duration" => "time",
        "inclusive#sum#time.duration" | "sum#avg#inclusive#sum#time.duration" => "time (inc)",
        other => other,
    };
    let inclusive = native.contains("inclusive") || renamed.ends_with("(inc)");
    let name = if inclusive && !renamed.ends_with("(inc)") {
        format!("{}{INC_SUFFIX}", renamed.replacen("inclusive#", "", 1))
    } else if !inclusive && renamed.ends_with(" (exc)") {
        renamed.trim_end_matches(" (exc)").to_string()
    } else {
        renamed.to_string()
    };
    (name, inclusive)
}

fn agg_of(native: &str) -> Agg {
    match native.split('#').next().unwrap_or("") {
        "min" => Agg::Min,
        "max" => Agg::Max,
        "avg" => Agg::Avg,
        _ => Agg::Sum,
    }
}

fn summable(native: &str, name: &str) -> bool {
    if native.contains('#') {
        return matches!(
            native.split('#').next().unwrap_or(""),
            "sum" | "scsum" | "scale" | "count"
        );
    }
    name == "time"
        || native == "count"
        || ((native.ends_with(".duration") || native.ends_with(".duration.ns"))
            && !native.starts_with("timeseries."))
}

/// The major Caliper version from `cali.caliper.version` ("2.10.0-dev" -> 2).
fn major_version(meta: &[(String, String)]) -> Option<u32> {
    let v = meta.iter().find(|(k, _)| k == "cali.caliper.version")?;
    let digits: String =
        v.1.trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
    digits.parse().ok()
}

/// Unit strings grove formats: "s", "ns", "us", "ms"; other declared units pass through.
fn unit_of(native: &str, declared: Option<&str>, major: Option<u32>, integral: bool) -> String {
    if let Some(u) = declared.map(str::trim).filter(|u| !u.is_empty()) {
        return match u {
            "sec" | "s" | "seconds" | "second" => "s",
            "nsec" | "ns" | "nanoseconds" => "ns",
            "usec" | "us" | "µs" | "microseconds" => "us",
            "msec" | "ms" | "milliseconds" => "ms",
            other => other,
        }
        .to_string();
    }
    let base = native.rsplit('#').next().unwrap_or(native);
    if base.contains('/') {
        return String::new(); // a rate such as loop.iterations/time.duration
    }
    if base.ends_with(".ns") {
        return "ns".into();
    }
    if matches!(
        base,
        "time.duration" | "time.inclusive.duration" | "time" | "time (inc)"
    ) {
        // Caliper 1.x measured time.duration in integer microseconds; 2.x in seconds.
        return match major {
            Some(1) => "us",
            Some(_) => "s",
            None if integral => "us",
            None => "s",
        }
        .into();
    }
    if (base.starts_with("cupti.") || base.starts_with("rocm.")) && base.ends_with("duration") {
        return if native.contains("scale#") { "s" } else { "ns" }.into();
    }
    String::new()
}

fn is_order_column(native: &str, alias: Option<&str>) -> bool {
    alias == Some("Node order")
        || native == "Node order"
        || native == "aggregate.slot"
        || native.ends_with("#aggregate.slot")
}

#[derive(Default)]
struct Acc {
    vals: Vec<f64>,
    counts: Vec<u32>,
}

/// The tree, metric values per rank and metadata every dialect produces.
#[derive(Default)]
struct Builder {
    cct: Cct,
    cols: Vec<Col>,
    col_of: HashMap<String, usize>,
    /// rank (None: no `mpi.rank`) -> per column accumulated values.
    data: BTreeMap<Option<i64>, Vec<Acc>>,
    /// Caliper's node order (`min#min#aggregate.slot`, "Node order") per node.
    order: Vec<f64>,
    meta: Vec<(String, String)>,
    warnings: Vec<String>,
}

impl Builder {
    fn column(&mut self, col: Col) -> usize {
        if let Some(&i) = self.col_of.get(&col.name) {
            return i;
        }
        self.col_of.insert(col.name.clone(), self.cols.len());
        self.cols.push(col);
        self.cols.len() - 1
    }

    /// Notes that a rank has data rows (even without values).
    fn touch(&mut self, rank: Option<i64>) {
        self.data.entry(rank).or_default();
    }

    fn add(&mut self, rank: Option<i64>, node: u32, col: usize, v: f64) {
        if v.is_nan() {
            return;
        }
        let agg = self.cols[col].agg;
        let per = self.data.entry(rank).or_default();
        if per.len() <= col {
            per.resize_with(col + 1, Acc::default);
        }
        let acc = &mut per[col];
        let n = node as usize;
        if acc.vals.len() <= n {
            acc.vals.resize(n + 1, f64::NAN);
            acc.counts.resize(n + 1, 0);
        }
        let cur = &mut acc.vals[n];
        *cur = if cur.is_nan() {
            v
        } else {
            match agg {
                Agg::Sum | Agg::Avg => *cur + v,
                Agg::Min => cur.min(v),
                Agg::Max => cur.max(v),
            }
        };
        acc.counts[n] += 1;
    }

    fn set_order(&mut self, node: u32, v: f64) {
        if v.is_nan() {
            return;
        }
        let n = node as usize;
        if self.order.len() <= n {
            self.order.resize(n + 1, f64::NAN);
        }
        let o = &mut self.order[n];
        if o.is_nan() || v < *o {
            *o = v;
        }
    }

    /// The tree with siblings in Caliper's node order when the file gives one; and the
    /// new id of every old node.
    fn ordered_tree(&mut self) -> (Cct, Vec<u32>) {
        let cct = std::mem::take(&mut self.cct);
        if !self.order.iter().any(|v| !v.is_nan()) {
            let ids = (0..cct.len() as u32).collect();
            return (cct, ids);
        }
        let order = &self.order;
        let key = |n: u32| {
            order
                .get(n as usize)
                .copied()
                .filter(|v| !v.is_nan())
                .unwrap_or(f64::INFINITY)
        };
        let po = PreOrder::build(&cct, |v| {
            v.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)))
        });
        let mut out = Cct::default();
        let mut new_of = vec![0u32; cct.len()];
        for (p, &old) in po.node.iter().enumerate() {
            let parent = match po.parent[p] {
                NO_NODE => None,
                q => Some(new_of[po.node[q as usize] as usize]),
            };
            new_of[old as usize] = out.add_node(parent, cct.frame(old).clone());
        }
        (out, new_of)
    }

    fn into_profiles(
        mut self,
        path: &Path,
        size: u64,
        gzip: bool,
        dialect: &str,
    ) -> Result<Vec<Profile>, String> {
        if self.cct.is_empty() {
            return Err(
                "no snapshot record has a region or call path (nothing to build a tree from)"
                    .into(),
            );
        }
        let (cct, new_of) = self.ordered_tree();
        let n = cct.len();
        let mut ranks: Vec<Option<i64>> = self.data.keys().copied().collect();
        if ranks.is_empty() {
            ranks.push(None);
        }
        // Rows without a rank in a file with ranks: counted in the lowest rank.
        if ranks.len() > 1 && ranks[0].is_none() {
            ranks.remove(0);
            let target = ranks[0];
            let lost = self.data.remove(&None).unwrap_or_default();
            for (ci, acc) in lost.iter().enumerate() {
                for (node, &v) in acc.vals.iter().enumerate() {
                    self.add(target, node as u32, ci, v);
                }
            }
            self.warnings.push(format!(
                "records without mpi.rank were counted in rank {}",
                target.unwrap_or(0)
            ));
        }
        let several = ranks.len() > 1;
        let file_name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let default_metric = if self.col_of.contains_key("time") {
            "time".to_string()
        } else {
            self.cols
                .iter()
                .find(|c| !c.inclusive)
                .or(self.cols.first())
                .map(|c| c.name.clone())
                .unwrap_or_default()
        };
        let derive: Vec<String> = self
            .cols
            .iter()
            .filter(|c| {
                !c.inclusive && c.summable && !self.col_of.contains_key(&inclusive_name(&c.name))
            })
            .map(|c| c.name.clone())
            .collect();
        let derive: Vec<&str> = derive.iter().map(|s| s.as_str()).collect();
        let mut out = Vec::with_capacity(ranks.len());
        for r in ranks {
            let accs = self.data.remove(&r).unwrap_or_default();
            let mut metrics = MetricTable::new(n);
            for (ci, col) in self.cols.iter().enumerate() {
                let mut vals = vec![f64::NAN; n];
                if let Some(acc) = accs.get(ci) {
                    for (old, &v) in acc.vals.iter().enumerate() {
                        let Some(&new) = new_of.get(old) else {
                            continue;
                        };
                        if v.is_nan() {
                            continue;
                        }
                        let c = acc.counts.get(old).copied().unwrap_or(1).max(1);
                        vals[new as usize] = if col.agg == Agg::Avg { v / c as f64 } else { v };
                    }
                }
                metrics.set(&col.name, &col.unit, vals);
            }
            metrics.derive_inclusive(&cct, &derive);
            let mut meta = self.meta.clone();
            if let Some(r) = r {
                meta.push(("mpi.rank".into(), r.to_string()));
            }
            let label = match (several, r) {
                (true, Some(r)) => format!("{file_name} rank {r}"),
                _ => file_name.clone(),
            };
            let mut tree = cct.clone();
            tree.finish();
            out.push(Profile {
                source: Source {
                    path: Some(path.to_path_buf()),
                    format: Format::Caliper,
                    size,
                    gzip,
                    label,
                },
                dialect: dialect.to_string(),
                cct: tree,
                metrics,
                events: None,
                counters: None,
                meta,
                warnings: self.warnings.clone(),
                default_metric: default_metric.clone(),
            });
        }
        Ok(out)
    }
}

// ------------------------------------------------------------------------------------
// The .cali stream
// ------------------------------------------------------------------------------------

const ATTR_NAME: u64 = 8;
const ATTR_TYPE: u64 = 9;
const ATTR_PROP: u64 = 10;

const PROP_ASVALUE: u64 = 1;
const PROP_SCOPE_MASK: u64 = 60;
const PROP_SCOPE_PROCESS: u64 = 12;
const PROP_SKIP_EVENTS: u64 = 64;
const PROP_HIDDEN: u64 = 128;
const PROP_NESTED: u64 = 256;
const PROP_GLOBAL: u64 = 512;

struct CNode {
    attr: u64,
    data: String,
    parent: Option<u64>,
}

#[derive(Debug, Clone, Default)]
struct AttrInfo {
    name: String,
    prop: u64,
    ty: String,
    alias: Option<String>,
    unit: Option<String>,
}

impl AttrInfo {
    fn hidden(&self) -> bool {
        self.prop & PROP_HIDDEN != 0
    }
}

/// A record's hierarchy leaf (the deepest hierarchy node of its references) and its
/// visible (attribute, value) pairs.
type Expanded<'a> = (Option<u64>, Vec<(u64, &'a str)>);

/// A `ctx` or `globals` record: referenced nodes and immediate (attribute, value) pairs.
struct CaliRec {
    line: u64,
    refs: Vec<u64>,
    attrs: Vec<u64>,
    data: Vec<String>,
}

struct CaliDb {
    nodes: HashMap<u64, CNode>,
    attrs: HashMap<u64, AttrInfo>,
    /// Hierarchy attributes: NESTED ones, or (Caliper 1.x, which had no NESTED property)
    /// the thread-scope reference attributes.
    hier: HashSet<u64>,
}

impl CaliDb {
    fn bootstrap() -> CaliDb {
        let mut nodes = HashMap::new();
        let types = [
            (0, "usr"),
            (1, "int"),
            (2, "uint"),
            (3, "string"),
            (4, "addr"),
            (5, "double"),
            (6, "bool"),
            (7, "type"),
            (11, "ptr"),
        ];
        for (id, t) in types {
            nodes.insert(
                id,
                CNode {
                    attr: ATTR_TYPE,
                    data: t.into(),
                    parent: None,
                },
            );
        }
        for (id, name, parent) in [
            (ATTR_NAME, "cali.attribute.name", 3),
            (ATTR_TYPE, "cali.attribute.type", 7),
            (ATTR_PROP, "cali.attribute.prop", 1),
        ] {
            nodes.insert(
                id,
                CNode {
                    attr: ATTR_NAME,
                    data: name.into(),
                    parent: Some(parent),
                },
            );
        }
        CaliDb {
            nodes,
            attrs: HashMap::new(),
            hier: HashSet::new(),
        }
    }

    /// Walks from `id` to the root, calling `f` on each node; bounded so a corrupt file
    /// with a parent cycle cannot loop forever.
    fn walk<'a>(&'a self, id: u64, mut f: impl FnMut(u64, &'a CNode)) -> Result<(), String> {
        let mut cur = Some(id);
        let mut steps = 0usize;
        while let Some(i) = cur {
            let Some(node) = self.nodes.get(&i) else {
                break;
            };
            steps += 1;
            if steps > self.nodes.len() + 1 {
                return Err(format!("the context tree has a cycle through node {i}"));
            }
            f(i, node);
            cur = node.parent;
        }
        Ok(())
    }

    /// Reads every attribute's name, type, properties, alias and unit from its node's
    /// ancestors, then picks the hierarchy attributes.
    fn compute_attrs(&mut self) -> Result<(), String> {
        let by_name: HashMap<&str, u64> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.attr == ATTR_NAME)
            .map(|(&id, n)| (n.data.as_str(), id))
            .collect();
        let alias_id = by_name.get("attribute.alias").copied();
        let unit_ids: Vec<u64> = ["attribute.unit", "time.unit"]
            .iter()
            .filter_map(|n| by_name.get(n).copied())
            .collect();
        let mut attrs = HashMap::new();
        for (&id, node) in &self.nodes {
            if node.attr != ATTR_NAME {
                continue;
            }
            let mut info = AttrInfo {
                name: node.data.clone(),
                ..Default::default()
            };
            let (mut prop, mut ty) = (None, None);
            if let Some(p) = node.parent {
                self.walk(p, |_, a| {
                    if a.attr == ATTR_PROP && prop.is_none() {
                        prop = Some(a.data.trim().parse::<u64>().unwrap_or(0));
                    } else if a.attr == ATTR_TYPE && ty.is_none() {
                        ty = Some(a.data.clone());
                    } else if Some(a.attr) == alias_id && info.alias.is_none() {
                        info.alias = Some(a.data.clone());
                    } else if unit_ids.contains(&a.attr) && info.unit.is_none() {
                        info.unit = Some(a.data.clone());
                    }
                })?;
            }
            info.prop = prop.unwrap_or(0);
            info.ty = ty.unwrap_or_default();
            attrs.insert(id, info);
        }
        self.attrs = attrs;
        let nested: HashSet<u64> = self
            .attrs
            .iter()
            .filter(|(_, a)| a.prop & PROP_NESTED != 0 && !a.hidden())
            .map(|(&id, _)| id)
            .collect();
        self.hier = if nested.is_empty() {
            self.attrs
                .iter()
                .filter(|(_, a)| {
                    a.prop & (PROP_ASVALUE | PROP_HIDDEN | PROP_GLOBAL | PROP_SKIP_EVENTS | 2) == 0
                        && a.prop & PROP_SCOPE_MASK != PROP_SCOPE_PROCESS
                        && !a.name.starts_with("cali.")
                        && a.ty != "type"
                })
                .map(|(&id, _)| id)
                .collect()
        } else {
            nested
        };
        Ok(())
    }

    fn attr(&self, id: u64, line: u64) -> Result<&AttrInfo, String> {
        self.attrs
            .get(&id)
            .ok_or_else(|| format!("line {line}: {id} is not an attribute"))
    }

    /// The deepest hierarchy node of the last reference that has one, and every visible
    /// (attribute, value) pair: reference chains root first, then immediate values.
    fn expand<'a>(&'a self, rec: &'a CaliRec) -> Result<Expanded<'a>, String> {
        let line = rec.line;
        let mut leaf = None;
        let mut entries: Vec<(u64, &str)> = Vec::new();
        for &r in &rec.refs {
            if !self.nodes.contains_key(&r) {
                return Err(format!("line {line}: reference to undefined node {r}"));
            }
            let start = entries.len();
            let mut chain_leaf = None;
            let mut bad = None;
            self.walk(r, |id, node| match self.attrs.get(&node.attr) {
                None => {
                    if bad.is_none() {
                        bad = Some((id, node.attr));
                    }
                }
                Some(a) if !a.hidden() => {
                    if chain_leaf.is_none() && self.hier.contains(&node.attr) {
                        chain_leaf = Some(id);
                    }
                    entries.push((node.attr, node.data.as_str()));
                }
                Some(_) => {}
            })
            .map_err(|e| format!("line {line}: {e}"))?;
            if let Some((id, a)) = bad {
                return Err(format!(
                    "line {line}: node {id} has attribute {a}, which is not an attribute"
                ));
            }
            entries[start..].reverse();
            if chain_leaf.is_some() {
                leaf = chain_leaf;
            }
        }
        for (&a, d) in rec.attrs.iter().zip(&rec.data) {
            if !self.attr(a, line)?.hidden() {
                entries.push((a, d.as_str()));
            }
        }
        Ok((leaf, entries))
    }

    /// The nearest hierarchy node above `id` (exclusive).
    fn hier_parent(&self, id: u64) -> Result<Option<u64>, String> {
        let mut found = None;
        let mut first = true;
        self.walk(id, |i, n| {
            if first {
                first = false;
            } else if found.is_none() && self.hier.contains(&n.attr) {
                found = Some(i);
            }
        })?;
        Ok(found)
    }
}

/// Splits a record into `key=value=value` fields; `\` escapes the next character
/// (`\n` is a newline, as in Caliper's python reader).
fn parse_fields(line: &[u8]) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out = Vec::new();
    let mut entry: Vec<String> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut i = 0;
    let text = |b: &mut Vec<u8>| String::from_utf8_lossy(&std::mem::take(b)).into_owned();
    while i < line.len() {
        match line[i] {
            b'\\' => {
                i += 1;
                match line.get(i) {
                    None => return Err("the record ends inside an escape ('\\')".into()),
                    Some(b'n') => cur.push(b'\n'),
                    Some(&b) => cur.push(b),
                }
            }
            b',' => {
                entry.push(text(&mut cur));
                let key = entry.remove(0);
                out.push((key, std::mem::take(&mut entry)));
            }
            b'=' => entry.push(text(&mut cur)),
            b => cur.push(b),
        }
        i += 1;
    }
    if !cur.is_empty() || !entry.is_empty() {
        entry.push(text(&mut cur));
        let key = entry.remove(0);
        out.push((key, entry));
    }
    Ok(out)
}

fn field<'a>(fields: &'a [(String, Vec<String>)], key: &str) -> Option<&'a [String]> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_slice())
}

fn ids(fields: &[(String, Vec<String>)], key: &str, line: u64) -> Result<Vec<u64>, String> {
    field(fields, key)
        .unwrap_or(&[])
        .iter()
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("line {line}: {key} value {v:?} is not a node id"))
        })
        .collect()
}

fn one_id(fields: &[(String, Vec<String>)], key: &str, line: u64) -> Result<Option<u64>, String> {
    match field(fields, key) {
        None => Ok(None),
        Some([v, ..]) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("line {line}: {key}={v:?} is not a node id")),
        Some([]) => Err(format!("line {line}: {key} has no value")),
    }
}

/// Reads one record: up to a newline that is not escaped. Returns false at end of input.
fn next_record(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    lines: &mut u64,
) -> Result<bool, String> {
    buf.clear();
    loop {
        let n = input
            .read_until(b'\n', buf)
            .map_err(|e| format!("line {}: cannot read: {e}", *lines + 1))?;
        if n == 0 {
            return Ok(!buf.is_empty());
        }
        if buf.last() != Some(&b'\n') {
            return Ok(true);
        }
        *lines += 1;
        // An odd run of backslashes before the newline escapes it: the record goes on.
        let slashes = buf[..buf.len() - 1]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 0 {
            return Ok(true);
        }
    }
}

fn read_cali(mut input: Box<dyn BufRead>, lines_skipped: u64) -> Result<Builder, String> {
    let mut db = CaliDb::bootstrap();
    let mut records: Vec<CaliRec> = Vec::new();
    let mut globals: Option<CaliRec> = None;
    let mut buf = Vec::new();
    let mut lines = lines_skipped;
    let mut warnings = Vec::new();
    let mut orphans = 0u64;
    let mut first = true;
    loop {
        let line = lines + 1;
        if !next_record(&mut *input, &mut buf, &mut lines)? {
            break;
        }
        let complete = buf.last() == Some(&b'\n');
        let mut rec: &[u8] = &buf;
        if first {
            rec = rec.strip_prefix(BOM).unwrap_or(rec);
            first = false;
        }
        let rec = rec.trim_ascii();
        if rec.is_empty() {
            continue;
        }
        let parsed = parse_fields(rec)
            .map_err(|e| format!("line {line}: {e}"))
            .and_then(|fields| {
                cali_record(
                    &fields,
                    line,
                    &mut db,
                    &mut records,
                    &mut globals,
                    &mut orphans,
                )
            });
        match parsed {
            Ok(()) if !complete => warnings.push(format!(
                "line {line}: the last record has no newline (truncated file?)"
            )),
            Ok(()) => {}
            Err(e) if !complete => {
                return Err(format!(
                    "{e} (the last record has no newline: truncated file?)"
                ))
            }
            Err(e) => return Err(e),
        }
    }
    if orphans > 0 {
        warnings.push(format!(
            "{orphans} context node(s) name an undefined parent and were read as roots"
        ));
    }
    db.compute_attrs()
        .map_err(|e| format!("line {lines} (end of the stream): {e}"))?;
    let mut b = Builder {
        warnings,
        ..Default::default()
    };
    if let Some(g) = &globals {
        let (_, entries) = db.expand(g)?;
        for (a, v) in entries {
            push_meta(&mut b.meta, &db.attrs[&a].name, v);
        }
    }
    let major = major_version(&b.meta);
    let id_of = |name: &str| {
        db.attrs
            .iter()
            .filter(|(_, a)| a.name == name)
            .map(|(&id, _)| id)
            .min()
    };
    let spot_channel = id_of("spot.channel");
    let rank_attr = id_of("mpi.rank");
    let cupti_kind = id_of("cupti.activity.kind");
    let cupti_kernel = id_of("cupti.kernel.name");
    let rocm_activity = id_of("rocm.activity");
    let rocm_kernel = id_of("rocm.kernel.name");
    let rocm_api = id_of("rocm.api");
    let sampler_module = id_of("module#cali.sampler.pc");
    let sampler_function = id_of("source.function#cali.sampler.pc");
    let mut grove_of: HashMap<u64, u32> = HashMap::new();
    let mut col_of_attr: HashMap<u64, Option<usize>> = HashMap::new();
    let mut global_meta: Vec<(String, String)> = Vec::new();
    for rec in &records {
        let (leaf, entries) = db.expand(rec)?;
        if globals.is_none() {
            for &(a, v) in &entries {
                let info = &db.attrs[&a];
                let wanted = info.prop & PROP_GLOBAL != 0 || info.name == "cali.caliper.version";
                if wanted && !global_meta.iter().any(|(k, _)| *k == info.name) {
                    global_meta.push((info.name.clone(), v.to_string()));
                }
            }
        }
        let Some(leaf) = leaf else {
            continue;
        };
        let get = |id: Option<u64>| {
            let id = id?;
            entries
                .iter()
                .rev()
                .find(|(a, _)| *a == id)
                .map(|(_, v)| *v)
        };
        if get(spot_channel).is_some_and(|c| c != "regionprofile") {
            continue;
        }
        let line = rec.line;
        let mut path_node = |cct: &mut Cct, id: Option<u64>| -> Result<Option<u32>, String> {
            match id {
                None => Ok(None),
                Some(id) => grove_node(&db, cct, &mut grove_of, id)
                    .map(Some)
                    .map_err(|e| format!("line {line}: {e}")),
            }
        };
        let node = if let Some(kind) = get(cupti_kind) {
            let parent = path_node(&mut b.cct, Some(leaf))?;
            match kind {
                "kernel" => b.cct.child(
                    parent,
                    get(cupti_kernel).unwrap_or("<unknown kernel>"),
                    "kernel",
                ),
                "memcpy" => b.cct.child(parent, "memcpy", "memcpy"),
                other => b.cct.child(parent, other, other),
            }
        } else if let Some(act) = get(rocm_activity) {
            if act == "KERNEL_DISPATCH_COMPLETE" {
                let parent = path_node(&mut b.cct, Some(leaf))?;
                b.cct.child(
                    parent,
                    get(rocm_kernel).unwrap_or("<unknown kernel>"),
                    "kernel",
                )
            } else if get(rocm_api).is_some_and(|a| a.contains("hipMemcpy")) {
                // Hatchet drops the last region (the API call) for copies.
                let up = db
                    .hier_parent(leaf)
                    .map_err(|e| format!("line {line}: {e}"))?;
                let parent = path_node(&mut b.cct, up)?;
                b.cct.child(parent, act, "memcpy")
            } else {
                let parent = path_node(&mut b.cct, Some(leaf))?;
                b.cct.child(parent, act, act)
            }
        } else if let (Some(_), Some(f)) = (get(sampler_module), get(sampler_function)) {
            // Sampled PC: its function replaces the innermost region.
            let up = db
                .hier_parent(leaf)
                .map_err(|e| format!("line {line}: {e}"))?;
            let parent = path_node(&mut b.cct, up)?;
            b.cct.child(parent, f, "function")
        } else {
            match path_node(&mut b.cct, Some(leaf))? {
                Some(n) => n,
                None => continue,
            }
        };
        let rank = get(rank_attr).and_then(|v| {
            let v = v.trim();
            v.parse::<i64>().ok().or_else(|| {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            })
        });
        b.touch(rank);
        // An attribute given twice in one record keeps its last value (a record is a map).
        let last: Vec<(u64, &str)> = entries
            .iter()
            .enumerate()
            .filter(|(i, (a, _))| !entries[i + 1..].iter().any(|(b, _)| b == a))
            .map(|(_, &e)| e)
            .collect();
        for &(a, v) in &last {
            let info = &db.attrs[&a];
            if info.prop & PROP_ASVALUE == 0 || Some(a) == rank_attr || db.hier.contains(&a) {
                continue;
            }
            let Ok(x) = v.trim().parse::<f64>() else {
                continue;
            };
            if is_order_column(&info.name, info.alias.as_deref()) {
                b.set_order(node, x);
                continue;
            }
            let col = match col_of_attr.get(&a) {
                Some(&c) => c,
                None => {
                    let numeric = matches!(info.ty.as_str(), "int" | "uint" | "double" | "");
                    let c = if numeric && info.name != "mpi.rank" {
                        let (name, inclusive) = display_name(&info.name, info.alias.as_deref());
                        let integral = matches!(info.ty.as_str(), "int" | "uint");
                        let unit = unit_of(&info.name, info.unit.as_deref(), major, integral);
                        let summable = summable(&info.name, &name);
                        Some(b.column(Col {
                            agg: agg_of(&info.name),
                            name,
                            unit,
                            inclusive,
                            summable,
                        }))
                    } else {
                        None
                    };
                    col_of_attr.insert(a, c);
                    c
                }
            };
            if let Some(c) = col {
                b.add(rank, node, c, x);
            }
        }
    }
    if globals.is_none() {
        b.meta = global_meta;
    }
    Ok(b)
}

fn push_meta(meta: &mut Vec<(String, String)>, key: &str, value: &str) {
    match meta.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => {
            v.push(',');
            v.push_str(value);
        }
        None => meta.push((key.to_string(), value.to_string())),
    }
}

/// The grove node of a hierarchy context node: its hierarchy ancestors' names are the call
/// path (created on first use, merged by path like Hatchet's callpath tuples).
fn grove_node(
    db: &CaliDb,
    cct: &mut Cct,
    memo: &mut HashMap<u64, u32>,
    id: u64,
) -> Result<u32, String> {
    if let Some(&g) = memo.get(&id) {
        return Ok(g);
    }
    let mut chain = Vec::new();
    let mut base = None;
    let mut cur = Some(id);
    let mut steps = 0usize;
    while let Some(i) = cur {
        if let Some(&g) = memo.get(&i) {
            base = Some(g);
            break;
        }
        let Some(node) = db.nodes.get(&i) else {
            break;
        };
        steps += 1;
        if steps > db.nodes.len() + 1 {
            return Err(format!("the context tree has a cycle through node {i}"));
        }
        if db.hier.contains(&node.attr) {
            chain.push(i);
        }
        cur = node.parent;
    }
    let mut parent = base;
    for &i in chain.iter().rev() {
        let name = db.nodes.get(&i).map(|n| n.data.as_str()).unwrap_or("");
        let g = cct.child(parent, name, "region");
        memo.insert(i, g);
        parent = Some(g);
    }
    parent.ok_or_else(|| format!("node {id} is not in the region hierarchy"))
}

fn cali_record(
    fields: &[(String, Vec<String>)],
    line: u64,
    db: &mut CaliDb,
    records: &mut Vec<CaliRec>,
    globals: &mut Option<CaliRec>,
    orphans: &mut u64,
) -> Result<(), String> {
    let kind = match field(fields, "__rec") {
        Some([k, ..]) => k.as_str(),
        Some([]) => return Err(format!("line {line}: __rec has no value")),
        None => return Err(format!("line {line}: a record without __rec")),
    };
    match kind {
        "node" => {
            let id = one_id(fields, "id", line)?
                .ok_or_else(|| format!("line {line}: a node record without id"))?;
            let attr = one_id(fields, "attr", line)?
                .ok_or_else(|| format!("line {line}: a node record without attr"))?;
            let data = field(fields, "data")
                .and_then(|d| d.first())
                .cloned()
                .unwrap_or_default();
            let mut parent = one_id(fields, "parent", line)?;
            if let Some(p) = parent {
                if !db.nodes.contains_key(&p) || p == id {
                    *orphans += 1;
                    parent = None;
                }
            }
            db.nodes.insert(id, CNode { attr, data, parent });
        }
        "ctx" | "globals" => {
            let refs = ids(fields, "ref", line)?;
            let attrs = ids(fields, "attr", line)?;
            let data: Vec<String> = field(fields, "data").unwrap_or(&[]).to_vec();
            if attrs.len() != data.len() {
                return Err(format!(
                    "line {line}: {} attribute id(s) but {} data value(s)",
                    attrs.len(),
                    data.len()
                ));
            }
            for &r in &refs {
                if !db.nodes.contains_key(&r) {
                    return Err(format!("line {line}: reference to undefined node {r}"));
                }
            }
            for &a in &attrs {
                match db.nodes.get(&a) {
                    Some(n) if n.attr == ATTR_NAME => {}
                    _ => return Err(format!("line {line}: {a} is not an attribute")),
                }
            }
            let rec = CaliRec {
                line,
                refs,
                attrs,
                data,
            };
            if kind == "ctx" {
                records.push(rec);
            } else {
                *globals = Some(rec);
            }
        }
        _ => {} // other record kinds carry nothing grove shows
    }
    Ok(())
}

// ------------------------------------------------------------------------------------
// JSON: json-split and cali-json
// ------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Cell {
    Null,
    Num(f64),
    Str(String),
}

impl Cell {
    fn num(&self) -> Option<f64> {
        match self {
            Cell::Num(v) => Some(*v),
            Cell::Str(s) => s.trim().parse().ok(),
            Cell::Null => None,
        }
    }

    fn index(&self) -> Option<usize> {
        match self {
            Cell::Num(v) if *v >= 0.0 && v.fract() == 0.0 && *v < 1e15 => Some(*v as usize),
            _ => None,
        }
    }
}

fn read_cell<R: Read>(r: &mut JsonReader<R>, text: &mut Vec<u8>) -> Result<Cell, JsonError> {
    Ok(match r.peek_kind()? {
        Kind::Num => {
            r.read_num(text)?;
            Cell::Num(parse_f64(text).ok_or_else(|| {
                r.error(format!(
                    "invalid number {:?}",
                    String::from_utf8_lossy(text)
                ))
            })?)
        }
        Kind::Str => {
            r.read_str(text)?;
            Cell::Str(String::from_utf8_lossy(text).into_owned())
        }
        Kind::True => {
            r.skip_value()?;
            Cell::Num(1.0)
        }
        Kind::False => {
            r.skip_value()?;
            Cell::Num(0.0)
        }
        Kind::Null => {
            r.skip_value()?;
            Cell::Null
        }
        Kind::Object | Kind::Array => {
            let mut raw = Vec::new();
            r.capture_value(&mut raw)?;
            Cell::Str(String::from_utf8_lossy(&raw).trim().to_string())
        }
    })
}

/// A run-metadata value as text: strings unquoted, numbers and literals as written,
/// objects and lists as their JSON text.
fn meta_value<R: Read>(r: &mut JsonReader<R>, text: &mut Vec<u8>) -> Result<String, JsonError> {
    Ok(match r.peek_kind()? {
        Kind::Object | Kind::Array => {
            let mut raw = Vec::new();
            r.capture_value(&mut raw)?;
            String::from_utf8_lossy(&raw).trim().to_string()
        }
        Kind::True => {
            r.skip_value()?;
            "true".into()
        }
        Kind::False => {
            r.skip_value()?;
            "false".into()
        }
        Kind::Null => {
            r.skip_value()?;
            "null".into()
        }
        Kind::Str | Kind::Num => {
            r.read_scalar(text)?;
            String::from_utf8_lossy(text).into_owned()
        }
    })
}

#[derive(Default, Clone)]
struct ColMeta {
    is_value: Option<bool>,
    alias: Option<String>,
    unit: Option<String>,
}

struct JNode {
    offset: u64,
    label: String,
    column: String,
    parent: Option<f64>,
}

struct Split {
    rows: Vec<(u64, Vec<Cell>)>,
    columns: Vec<String>,
    colmeta: Option<Vec<ColMeta>>,
    nodes: Vec<JNode>,
    meta: Vec<(String, String)>,
    end: String,
}

fn parse_split<R: Read>(mut r: JsonReader<R>) -> Result<Split, JsonError> {
    r.skip_bom();
    r.begin_object()?;
    let (mut key, mut text) = (Vec::new(), Vec::new());
    let mut rows = None;
    let mut columns = None;
    let mut colmeta = None;
    let mut nodes = None;
    let mut meta = Vec::new();
    let mut first = true;
    while r.next_key(first, &mut key)? {
        first = false;
        match &key[..] {
            b"data" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"data\" must be a list of rows"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Array {
                        return Err(r.error("a data row must be a list"));
                    }
                    let offset = r.offset();
                    r.begin_array()?;
                    let mut cells = Vec::new();
                    let mut fc = true;
                    while r.next_element(fc)? {
                        fc = false;
                        cells.push(read_cell(&mut r, &mut text)?);
                    }
                    out.push((offset, cells));
                }
                rows = Some(out);
            }
            b"columns" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"columns\" must be a list of names"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Str {
                        return Err(r.error("a column name must be a string"));
                    }
                    r.read_str(&mut text)?;
                    out.push(String::from_utf8_lossy(&text).into_owned());
                }
                columns = Some(out);
            }
            b"column_metadata" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"column_metadata\" must be a list"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    let v = r.read_value()?;
                    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
                    out.push(ColMeta {
                        is_value: v
                            .get("is_value")
                            .and_then(|x| x.as_bool().or_else(|| x.as_str().map(|s| s == "true"))),
                        alias: s("attribute.alias"),
                        unit: s("attribute.unit"),
                    });
                }
                colmeta = Some(out);
            }
            b"nodes" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"nodes\" must be a list"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Object {
                        return Err(r.error("a node must be an object"));
                    }
                    let offset = r.offset();
                    r.begin_object()?;
                    let mut node = JNode {
                        offset,
                        label: String::new(),
                        column: String::new(),
                        parent: None,
                    };
                    let mut fk = true;
                    while r.next_key(fk, &mut key)? {
                        fk = false;
                        match &key[..] {
                            b"label" | b"column" => {
                                r.read_scalar(&mut text)?;
                                let s = String::from_utf8_lossy(&text).into_owned();
                                if key == b"label" {
                                    node.label = s;
                                } else {
                                    node.column = s;
                                }
                            }
                            b"parent" => {
                                let k = r.read_scalar(&mut text)?;
                                node.parent = match k {
                                    Kind::Num | Kind::Str => {
                                        Some(parse_f64(&text).ok_or_else(|| {
                                            r.error("a node's parent must be a node index")
                                        })?)
                                    }
                                    _ => None,
                                };
                            }
                            _ => r.skip_value()?,
                        }
                    }
                    out.push(node);
                }
                nodes = Some(out);
            }
            _ => {
                let k = String::from_utf8_lossy(&key).into_owned();
                meta.push((k, meta_value(&mut r, &mut text)?));
            }
        }
    }
    if !r.at_eof() {
        return Err(r.error("unexpected data after the top-level object"));
    }
    let at = r.error("");
    let end = format!(
        "line {}, column {} (byte {})",
        at.line, at.column, at.offset
    );
    let missing = |what: &str| r.error(format!("json-split without \"{what}\""));
    Ok(Split {
        rows: rows.ok_or_else(|| missing("data"))?,
        columns: columns.ok_or_else(|| missing("columns"))?,
        colmeta,
        nodes: nodes.ok_or_else(|| missing("nodes"))?,
        meta,
        end,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Role {
    Hier,
    Rank,
    Order,
    Metric(usize),
    Attr(String),
    SourceLoc,
    Ignore,
}

/// `file:line` of a `sourceloc#cali.sampler.pc` label.
fn split_sourceloc(label: &str) -> (String, String) {
    match label.rsplit_once(':') {
        Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (f.to_string(), l.to_string())
        }
        _ => (label.to_string(), String::new()),
    }
}

fn read_json_split(input: Box<dyn BufRead>) -> Result<Builder, String> {
    let s = parse_split(JsonReader::new(input)).map_err(|e| e.to_string())?;
    let ncols = s.columns.len();
    let colmeta = match &s.colmeta {
        Some(m) if m.len() == ncols => m.clone(),
        Some(m) => {
            return Err(format!(
                "{}: {} columns but {} column_metadata entries",
                s.end,
                ncols,
                m.len()
            ))
        }
        None => vec![ColMeta::default(); ncols],
    };
    let node_columns: HashSet<&str> = s.nodes.iter().map(|n| n.column.as_str()).collect();
    let is_value = |j: usize| {
        colmeta[j]
            .is_value
            .unwrap_or(!node_columns.contains(s.columns[j].as_str()))
    };
    // The hierarchy: call paths, else region paths, else the first non-value column whose
    // nodes have parents.
    let hier = if let Some(j) = s.columns.iter().position(|c| c == CALLPATH) {
        j
    } else if let Some(j) = s.columns.iter().position(|c| c == "path") {
        j
    } else if let Some(j) = (0..ncols).find(|&j| {
        !is_value(j)
            && s.nodes
                .iter()
                .any(|n| n.column == s.columns[j] && n.parent.is_some())
    }) {
        j
    } else {
        return Err(format!(
            "{}: no hierarchy column (\"path\" or \"{CALLPATH}\")",
            s.end
        ));
    };
    let hier_name = s.columns[hier].clone();
    let kind = if hier_name == CALLPATH {
        "function"
    } else {
        "region"
    };
    let mut b = Builder {
        meta: s.meta.clone(),
        ..Default::default()
    };
    // Tree: every node of the hierarchy column, parents first.
    let mut tree_of: Vec<Option<u32>> = vec![None; s.nodes.len()];
    let mut unknown = 0usize;
    for (i, n) in s.nodes.iter().enumerate() {
        if n.column != hier_name {
            continue;
        }
        let parent = match n.parent {
            None => None,
            Some(p) => {
                let pi = Cell::Num(p).index().filter(|&pi| pi < i);
                match pi.and_then(|pi| tree_of[pi]) {
                    Some(g) => Some(g),
                    None => {
                        return Err(format!(
                            "byte {}: nodes[{i}] has parent {p}, which is not an earlier \
                             node of column {hier_name:?}",
                            n.offset
                        ))
                    }
                }
            }
        };
        let label = if n.label.is_empty() {
            unknown += 1;
            format!("UNKNOWN {}", unknown - 1)
        } else {
            n.label.clone()
        };
        tree_of[i] = Some(b.cct.add_node(parent, Frame::new(&label, kind)));
    }
    let node_at = |cell: &Cell, row: usize, offset: u64, what: &str| -> Result<usize, String> {
        cell.index().filter(|&k| k < s.nodes.len()).ok_or_else(|| {
            let shown = match cell {
                Cell::Null => "null".to_string(),
                Cell::Num(v) => v.to_string(),
                Cell::Str(t) => format!("{t:?}"),
            };
            format!(
                "byte {offset}: data row {row}: the {what} cell {shown} is not an index into \
                 the {} nodes",
                s.nodes.len()
            )
        })
    };
    // Whether each column holds integers only (old Caliper wrote microseconds as integers).
    let integral: Vec<bool> = (0..ncols)
        .map(|j| {
            s.rows.iter().all(|(_, cells)| match cells.get(j) {
                Some(Cell::Num(v)) => v.fract() == 0.0,
                _ => true,
            })
        })
        .collect();
    let major = major_version(&s.meta);
    let mut roles = Vec::with_capacity(ncols);
    for j in 0..ncols {
        let name = s.columns[j].as_str();
        let m = &colmeta[j];
        let role = if j == hier {
            Role::Hier
        } else if name == "mpi.rank" {
            Role::Rank
        } else if is_value(j) {
            if is_order_column(name, m.alias.as_deref()) {
                Role::Order
            } else if name.is_empty() {
                Role::Ignore
            } else {
                let (display, inclusive) = display_name(name, None);
                let col = Col {
                    agg: agg_of(name),
                    unit: unit_of(name, m.unit.as_deref(), major, integral[j]),
                    summable: summable(name, &display),
                    name: display,
                    inclusive,
                };
                Role::Metric(b.column(col))
            }
        } else {
            match name {
                "module#cali.sampler.pc" => Role::Attr("module".into()),
                "sourceloc#cali.sampler.pc" => Role::SourceLoc,
                "path" => Role::Ignore, // the secondary hierarchy next to call paths
                other => Role::Attr(other.to_string()),
            }
        };
        roles.push(role);
    }
    // Rows: (row, tree node); rows whose hierarchy cell is null are not tree rows.
    let mut tree_rows: Vec<(usize, u32)> = Vec::new();
    for (ri, (offset, cells)) in s.rows.iter().enumerate() {
        if cells.len() != ncols {
            return Err(format!(
                "byte {offset}: data row {ri} has {} cells for {ncols} columns",
                cells.len()
            ));
        }
        if matches!(cells[hier], Cell::Null) {
            continue;
        }
        let k = node_at(&cells[hier], ri, *offset, "hierarchy")?;
        let node = tree_of[k].ok_or_else(|| {
            format!("byte {offset}: data row {ri}: node {k} is not a {hier_name:?} node")
        })?;
        tree_rows.push((ri, node));
    }
    // Sampled source locations: a node with several lines gets one statement child per
    // line (Hatchet's reader); a node with one keeps file and line as attributes.
    let mut row_node: Vec<u32> = tree_rows.iter().map(|&(_, n)| n).collect();
    if let Some(sl) = roles.iter().position(|r| *r == Role::SourceLoc) {
        let mut locs: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
        let mut row_loc = Vec::with_capacity(tree_rows.len());
        for &(ri, node) in &tree_rows {
            let (offset, cells) = &s.rows[ri];
            let loc = match &cells[sl] {
                Cell::Null => None,
                c => {
                    let k = node_at(c, ri, *offset, "source location")?;
                    Some(split_sourceloc(&s.nodes[k].label))
                }
            };
            if let Some(l) = &loc {
                let v = locs.entry(node).or_default();
                if !v.contains(l) {
                    v.push(l.clone());
                }
            }
            row_loc.push(loc);
        }
        let mut child_of: HashMap<(u32, (String, String)), u32> = HashMap::new();
        for (node, mut ls) in locs {
            if ls.len() == 1 {
                let (file, line) = &ls[0];
                let f = b.cct.frame_mut(node);
                f.set_attr("file", file);
                f.set_attr("line", line);
                continue;
            }
            ls.sort_by(|a, b| {
                let num = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
                num(&a.1).cmp(&num(&b.1)).then_with(|| a.cmp(b))
            });
            for (file, line) in ls {
                let base = file.rsplit('/').next().unwrap_or(&file);
                let mut frame = Frame::new(&format!("{base}:{line}"), "statement");
                frame.set_attr("file", &file);
                frame.set_attr("line", &line);
                let c = b.cct.add_node(Some(node), frame);
                child_of.insert((node, (file, line)), c);
            }
        }
        for (i, loc) in row_loc.into_iter().enumerate() {
            if let Some(l) = loc {
                if let Some(&c) = child_of.get(&(row_node[i], l)) {
                    row_node[i] = c;
                }
            }
        }
    }
    for (i, &(ri, _)) in tree_rows.iter().enumerate() {
        let node = row_node[i];
        let cells = &s.rows[ri].1;
        let rank = roles
            .iter()
            .position(|r| *r == Role::Rank)
            .and_then(|j| cells[j].num())
            .filter(|v| v.fract() == 0.0)
            .map(|v| v as i64);
        b.touch(rank);
        for (j, role) in roles.iter().enumerate() {
            match role {
                Role::Metric(c) => {
                    if let Some(v) = cells[j].num() {
                        b.add(rank, node, *c, v);
                    }
                }
                Role::Order => {
                    if let Some(v) = cells[j].num() {
                        b.set_order(node, v);
                    }
                }
                Role::Attr(name) => {
                    let label = match &cells[j] {
                        Cell::Null => continue,
                        Cell::Str(s) => s.clone(),
                        c => match c.index().and_then(|k| s.nodes.get(k)) {
                            Some(n) => n.label.clone(),
                            None => continue,
                        },
                    };
                    let f = b.cct.frame_mut(node);
                    if f.attr(name).is_none() {
                        f.set_attr(name, &label);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(b)
}

fn read_cali_json(input: Box<dyn BufRead>) -> Result<Builder, String> {
    let mut r = JsonReader::new(input);
    let e = |e: JsonError| e.to_string();
    r.skip_bom();
    r.begin_array().map_err(e)?;
    let mut keys: Vec<String> = Vec::new();
    let mut key_ids: HashMap<String, usize> = HashMap::new();
    let mut records: Vec<Vec<(usize, Cell)>> = Vec::new();
    let (mut key, mut text) = (Vec::new(), Vec::new());
    let mut first = true;
    while r.next_element(first).map_err(e)? {
        first = false;
        if r.peek_kind().map_err(e)? != Kind::Object {
            return Err(r.error("a cali-json record must be an object").to_string());
        }
        r.begin_object().map_err(e)?;
        let mut rec = Vec::new();
        let mut fk = true;
        while r.next_key(fk, &mut key).map_err(e)? {
            fk = false;
            let k = String::from_utf8_lossy(&key).into_owned();
            let id = match key_ids.get(&k) {
                Some(&i) => i,
                None => {
                    key_ids.insert(k.clone(), keys.len());
                    keys.push(k);
                    keys.len() - 1
                }
            };
            rec.push((id, read_cell(&mut r, &mut text).map_err(e)?));
        }
        records.push(rec);
    }
    if !r.at_eof() {
        return Err(r
            .error("unexpected data after the list of records")
            .to_string());
    }
    let Some(hier) = HIERARCHY_KEYS.iter().find_map(|h| {
        let id = *key_ids.get(*h)?;
        records
            .iter()
            .any(|rec| {
                rec.iter()
                    .any(|(k, c)| *k == id && matches!(c, Cell::Str(_)))
            })
            .then_some(id)
    }) else {
        return Err(r
            .error(format!(
                "no record has a hierarchy attribute ({})",
                HIERARCHY_KEYS.join(", ")
            ))
            .to_string());
    };
    let kind = if keys[hier] == CALLPATH || keys[hier] == "function" {
        "function"
    } else {
        "region"
    };
    let mut b = Builder::default();
    let mut roles: Vec<Option<Role>> = vec![None; keys.len()];
    for (i, k) in keys.iter().enumerate() {
        roles[i] = Some(if i == hier {
            Role::Hier
        } else if k == "mpi.rank" {
            Role::Rank
        } else if is_order_column(k, None) {
            Role::Order
        } else if HIERARCHY_KEYS.contains(&k.as_str()) {
            Role::Ignore
        } else {
            Role::Attr(k.clone()) // decided per value below
        });
    }
    let mut integral = vec![true; keys.len()];
    for (k, c) in records.iter().flatten() {
        if matches!(c, Cell::Num(v) if v.fract() != 0.0) {
            integral[*k] = false;
        }
    }
    let mut col_of_key: HashMap<usize, usize> = HashMap::new();
    for rec in &records {
        let Some(Cell::Str(p)) = rec.iter().find(|(k, _)| *k == hier).map(|(_, c)| c) else {
            continue;
        };
        // "main/foo", or a list of names when the writer kept the nested values apart.
        let segs: Vec<String> = match serde_json::from_str::<Vec<String>>(p) {
            Ok(list) if p.starts_with('[') => list,
            _ => p.split('/').map(str::to_string).collect(),
        };
        let mut node = None;
        for seg in segs.iter().filter(|s| !s.is_empty()) {
            node = Some(b.cct.child(node, seg, kind));
        }
        let Some(node) = node else {
            continue;
        };
        let rank = rec
            .iter()
            .find(|(k, _)| roles[*k] == Some(Role::Rank))
            .and_then(|(_, c)| c.num())
            .filter(|v| v.fract() == 0.0)
            .map(|v| v as i64);
        b.touch(rank);
        for (k, c) in rec {
            match &roles[*k] {
                Some(Role::Order) => {
                    if let Some(v) = c.num() {
                        b.set_order(node, v);
                    }
                }
                Some(Role::Attr(name)) => {
                    let v = match c {
                        Cell::Num(v) => Some(*v),
                        Cell::Str(s) if metric_like(name) => s.trim().parse::<f64>().ok(),
                        _ => None,
                    };
                    let Some(v) = v else {
                        continue;
                    };
                    let col = *col_of_key.entry(*k).or_insert_with(|| {
                        let (display, inclusive) = display_name(name, None);
                        b.column(Col {
                            agg: agg_of(name),
                            unit: unit_of(name, None, None, integral[*k]),
                            summable: summable(name, &display),
                            name: display,
                            inclusive,
                        })
                    });
                    b.add(rank, node, col, v);
                }
                _ => {}
            }
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn corpus() -> Option<PathBuf> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        p.is_dir().then_some(p)
    }

    fn goldens() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/caliper")
    }

    /// Writes bytes to a fresh temporary file with the given name suffix.
    fn temp(suffix: &str, bytes: &[u8]) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("grove-caliper-{}-{n}{suffix}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn read_bytes(suffix: &str, bytes: &[u8]) -> Result<Vec<Profile>, String> {
        let p = temp(suffix, bytes);
        let r = read(&p);
        let _ = std::fs::remove_file(&p);
        r
    }

    fn node(p: &Profile, path: &[&str]) -> u32 {
        (0..p.cct.len() as u32)
            .find(|&n| {
                let names: Vec<&str> = p.cct.path(n).iter().map(|&x| p.cct.name(x)).collect();
                names == path
            })
            .unwrap_or_else(|| panic!("no node {path:?}"))
    }

    fn get(p: &Profile, col: &str, path: &[&str]) -> f64 {
        p.metrics.get(col, node(p, path))
    }

    const CALI: &str = "\
__rec=node,id=12,attr=10,data=268,parent=3
__rec=node,id=13,attr=8,data=region,parent=12
__rec=node,id=14,attr=10,data=64,parent=3
__rec=node,id=15,attr=8,data=attribute.alias,parent=14
__rec=node,id=16,attr=8,data=attribute.unit,parent=14
__rec=node,id=17,attr=10,data=65,parent=5
__rec=node,id=18,attr=16,data=sec,parent=17
__rec=node,id=19,attr=8,data=sum#time.duration,parent=18
__rec=node,id=20,attr=15,data=Total time,parent=18
__rec=node,id=21,attr=8,data=sum#inclusive#sum#time.duration,parent=20
__rec=node,id=22,attr=10,data=77,parent=1
__rec=node,id=23,attr=8,data=mpi.rank,parent=22
__rec=node,id=24,attr=10,data=1612,parent=3
__rec=node,id=25,attr=8,data=cali.caliper.version,parent=24
__rec=node,id=26,attr=8,data=cluster,parent=24
__rec=node,id=30,attr=13,data=main
__rec=node,id=31,attr=13,data=a\\,b,parent=30
__rec=node,id=32,attr=13,data=c,parent=30
__rec=ctx,ref=30,attr=23=19=21,data=0=1.5=10
__rec=ctx,ref=31,attr=23=19=21,data=0=2=2
__rec=ctx,ref=30,attr=23=19,data=1=3
__rec=ctx,ref=32,attr=23=19=21,data=1=4=4
__rec=ctx,attr=23=19,data=0=100
__rec=globals,attr=25=26,data=2.9.0=quartz\\=1
";

    #[test]
    fn cali_stream() {
        let ps = read_bytes(".cali", CALI.as_bytes()).unwrap();
        assert_eq!(ps.len(), 2);
        let p = &ps[0];
        assert_eq!(p.cct.len(), 3);
        assert_eq!(p.dialect, "Caliper .cali");
        assert_eq!(p.source.format, Format::Caliper);
        assert!(
            p.source.label.ends_with(".cali rank 0"),
            "{}",
            p.source.label
        );
        assert_eq!(
            p.cct.frame(node(p, &["main", "a,b"])).kind.as_ref(),
            "region"
        );
        assert_eq!(get(p, "time", &["main"]), 1.5);
        assert_eq!(get(p, "time", &["main", "a,b"]), 2.0);
        assert!(get(p, "time", &["main", "c"]).is_nan());
        assert_eq!(get(p, "time (inc)", &["main"]), 3.5);
        assert_eq!(get(p, "Total time (inc)", &["main"]), 10.0);
        assert_eq!(p.metrics.unit("time"), "s");
        assert_eq!(p.metrics.unit("time (inc)"), "s");
        assert_eq!(p.metrics.unit("Total time (inc)"), "s");
        assert!(!p.metrics.has("Total time (inc) (inc)"));
        assert_eq!(p.default_metric, "time");
        assert_eq!(p.meta_value("cali.caliper.version"), Some("2.9.0"));
        assert_eq!(p.meta_value("cluster"), Some("quartz=1"));
        assert_eq!(p.meta_value("mpi.rank"), Some("0"));
        let q = &ps[1];
        assert_eq!(q.cct.len(), 3);
        assert_eq!(get(q, "time", &["main"]), 3.0);
        assert!(get(q, "time", &["main", "a,b"]).is_nan());
        assert_eq!(get(q, "time (inc)", &["main"]), 7.0);
        assert_eq!(q.meta_value("mpi.rank"), Some("1"));
    }

    const SPLIT: &str = r#"{
 "data": [[1, 0, 0.5, null], [2, 0, 1.5, 1], [3, 0, 2.0, 2], [2, 1, 1.0, 1]],
 "columns": ["Node order", "mpi.rank", "time", "path"],
 "column_metadata": [{"is_value": true, "attribute.alias": "Node order"}, {"is_value": true},
                     {"is_value": true, "attribute.unit": "sec"}, {"is_value": false}],
 "nodes": [{"label": "other", "column": "path"}, {"label": "main", "column": "path"},
           {"label": "solve", "column": "path", "parent": 1}],
 "cluster": "quartz", "mpi.world.size": 2, "obj": {"a": [1, 2]}, "flag": true
}"#;

    #[test]
    fn json_split() {
        let ps = read_bytes(".json", SPLIT.as_bytes()).unwrap();
        assert_eq!(ps.len(), 2);
        let p = &ps[0];
        assert_eq!(p.dialect, "Caliper json-split");
        // "Node order" puts main (2) before other (no order), whatever the nodes order.
        let roots: Vec<&str> = p.cct.root_ids().iter().map(|&r| p.cct.name(r)).collect();
        assert_eq!(roots, ["main", "other"]);
        assert_eq!(get(p, "time", &["main"]), 1.5);
        assert_eq!(get(p, "time (inc)", &["main"]), 3.5);
        assert!(get(p, "time", &["other"]).is_nan());
        assert!(!p.metrics.has("Node order"));
        assert_eq!(p.metrics.unit("time"), "s");
        assert_eq!(p.meta_value("cluster"), Some("quartz"));
        assert_eq!(p.meta_value("mpi.world.size"), Some("2"));
        assert_eq!(p.meta_value("obj"), Some(r#"{"a": [1, 2]}"#));
        assert_eq!(p.meta_value("flag"), Some("true"));
        let q = &ps[1];
        assert_eq!(get(q, "time", &["main"]), 1.0);
        assert!(get(q, "time", &["main", "solve"]).is_nan());
        assert_eq!(get(q, "time (inc)", &["main"]), 1.0);
    }

    const CALI_JSON: &str = r#"[
 {"sum#time.duration": 0.5},
 {"path": "main", "sum#time.duration": 1.0, "count": 1},
 {"path": "main/foo", "sum#time.duration": 2.0, "count": "3", "function": "x"},
 {"path": "main/foo", "sum#time.duration": 0.5, "avg#inclusive#sum#time.duration": 4},
 {"path": ["main", "a/b"], "sum#time.duration": 1}
]"#;

    #[test]
    fn cali_json() {
        let ps = read_bytes(".json", CALI_JSON.as_bytes()).unwrap();
        assert_eq!(ps.len(), 1);
        let p = &ps[0];
        assert_eq!(p.dialect, "Caliper cali-json");
        assert_eq!(p.cct.len(), 3);
        assert_eq!(get(p, "time", &["main", "foo"]), 2.5);
        assert_eq!(get(p, "time", &["main", "a/b"]), 1.0);
        assert_eq!(get(p, "time (inc)", &["main"]), 4.5);
        assert_eq!(get(p, "count", &["main", "foo"]), 3.0);
        assert_eq!(get(p, "count (inc)", &["main"]), 4.0);
        assert_eq!(get(p, "avg#sum#time.duration (inc)", &["main", "foo"]), 4.0);
        assert_eq!(p.cct.frame(0).kind.as_ref(), "region");
    }

    #[test]
    fn sniffing() {
        let s = |t: &str| sniff(Path::new("x.json"), t.as_bytes());
        assert!(s(CALI));
        assert!(s(&format!("\u{feff}\n  {CALI}")));
        assert!(s(SPLIT));
        assert!(s(CALI_JSON));
        // Heads cut inside the data: still recognised.
        assert!(s("{\n \"data\": [\n  [ 21948.0, 0, 2"));
        assert!(s(r#"[{"path": "main", "sum#time.duration": 1"#));
        assert!(s(r#"{"columns": ["a"], "nodes": [], "data": []}"#));
        for no in [
            r#"{"traceEvents": [{"ph": "X", "name": "a"}]}"#,
            r#"[{"name": "a", "ph": "X", "ts": 1, "dur": 2, "path": "a", "time": 1}]"#,
            r#"[{"path": "a", "time": 1, "ph": "X"}]"#,
            r#"[{"frame": {"name": "a"}, "metrics": {"time": 1}, "path": "a"}]"#,
            r#"[{"name": "main", "metrics": {"time": 1}}]"#,
            r#"{"graph": [], "dataframe": [], "inclusive_metrics": []}"#,
            r#"{"data": {"x": 1}}"#,
            r#"{"data": [1, 2]}"#,
            r#"[{"path": "main", "label": "x"}]"#,
            "[]",
            "main;a;b 3\n",
            "",
        ] {
            assert!(!s(no), "claimed {no}");
        }
        assert!(sniff(Path::new("x.cali.gz"), &[0x1f, 0x8b, 8, 0]));
        assert!(!sniff(Path::new("x.json.gz"), &[0x1f, 0x8b, 8, 0]));
    }

    #[test]
    fn gzip_cali() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(CALI.as_bytes()).unwrap();
        let ps = read_bytes(".cali.gz", &enc.finish().unwrap()).unwrap();
        assert_eq!(ps.len(), 2);
        assert!(ps[0].source.gzip);
    }

    #[test]
    fn errors_are_one_line_with_a_position() {
        let cases: Vec<(&str, String, &str)> = vec![
            (
                ".cali",
                "__rec=node,id=40,attr=8,data=x\n__rec=ctx,ref=99\n".into(),
                "line 2",
            ),
            (
                ".cali",
                "__rec=node,id=40,attr=8,data=x\nid=3\n".into(),
                "line 2",
            ),
            (".cali", "__rec=node,attr=8,data=x\n".into(), "line 1"),
            (".cali", "__rec=ctx,attr=40,data=1\n".into(), "line 1"),
            (".cali", "__rec=node,id=x,attr=8\n".into(), "line 1"),
            (".cali", "\n\n__rec=ctx,attr=8=9,data=1\n".into(), "line 3"),
            (".json", SPLIT[..200].to_string(), "line"),
            (
                ".json",
                SPLIT.replace("\"parent\": 1", "\"parent\": 7"),
                "byte",
            ),
            (
                ".json",
                SPLIT.replace("[3, 0, 2.0, 2]", "[3, 0, 2.0]"),
                "byte",
            ),
            (
                ".json",
                SPLIT.replace("[3, 0, 2.0, 2]", "[3, 0, 2.0, 9]"),
                "byte",
            ),
            (".json", SPLIT.replace("\"columns\"", "\"kolumns\""), "line"),
            (
                ".json",
                SPLIT.replace("\"path\"]", "\"where\"]"),
                "no hierarchy column",
            ),
            (
                ".json",
                SPLIT.replace("{\"is_value\": true},", ""),
                "column_metadata",
            ),
            (
                ".json",
                CALI_JSON[..CALI_JSON.len() - 3].to_string(),
                "line",
            ),
            (".json", format!("{CALI_JSON} x"), "line"),
        ];
        for (suffix, text, want) in cases {
            let e = read_bytes(suffix, text.as_bytes()).expect_err(&text);
            assert!(e.contains(want), "{e:?} lacks {want:?} for {text:?}");
            assert!(!e.contains('\n'), "{e:?}");
        }
        assert!(read_bytes(".cali", b"").unwrap_err().contains("empty"));
        assert!(read_bytes(".cali", b"hello\n").is_err());
    }

    /// Deterministic pseudo-random numbers (no dependency).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    fn robustness_inputs() -> Vec<(String, Vec<u8>)> {
        let mut v = vec![
            (".cali".to_string(), CALI.as_bytes().to_vec()),
            (".json".to_string(), SPLIT.as_bytes().to_vec()),
            (".json".to_string(), CALI_JSON.as_bytes().to_vec()),
        ];
        if let Some(c) = corpus() {
            for rel in [
                "hatchet/hatchet/tests/data/caliper-lulesh-cali/lulesh-annotation-profile.cali",
                "hatchet/hatchet/tests/data/caliper-lulesh-json/lulesh-annotation-profile.json",
                "hatchet/hatchet/tests/data/caliper-cpi-json/cpi-callpath-profile.json",
                "hatchet/hatchet/tests/data/spotdb/2.cali",
                "caliper/doc/sphinx/examples/160809-094411_72298_fuu1NeAHT2US.cali",
            ] {
                if let Ok(b) = std::fs::read(c.join(rel)) {
                    let ext = if rel.ends_with(".cali") {
                        ".cali"
                    } else {
                        ".json"
                    };
                    v.push((ext.to_string(), b));
                }
            }
        }
        v
    }

    #[test]
    fn truncated_inputs_fail_cleanly() {
        for (suffix, bytes) in robustness_inputs() {
            let step = (bytes.len() / 40).max(1);
            let mut cut = 1;
            while cut < bytes.len() {
                let part = &bytes[..cut];
                let r = read_bytes(&suffix, part);
                let mid_line = part.last() != Some(&b'\n');
                if suffix == ".json" {
                    assert!(
                        r.is_err(),
                        "{suffix} cut at {cut} of {} loaded",
                        bytes.len()
                    );
                } else if mid_line {
                    // A record cut short is an error, or (when what is left still parses)
                    // a warning about the missing newline.
                    if let Ok(ps) = &r {
                        assert!(
                            ps[0].warnings.iter().any(|w| w.contains("truncated")),
                            "cut at {cut}: no warning"
                        );
                    }
                }
                if let Err(e) = &r {
                    assert!(!e.contains('\n'), "{e:?}");
                }
                cut += step;
            }
        }
    }

    #[test]
    fn corrupted_inputs_never_panic() {
        let mut rng = Lcg(42);
        let junk: &[u8] = b",=\\\n{}[]\":0-9.e#_ax";
        for (suffix, bytes) in robustness_inputs() {
            for _ in 0..60 {
                let mut b = bytes.clone();
                for _ in 0..1 + rng.next() % 4 {
                    let i = (rng.next() as usize) % b.len();
                    match rng.next() % 3 {
                        0 => b[i] = junk[(rng.next() as usize) % junk.len()],
                        1 => {
                            b.remove(i);
                        }
                        _ => b.insert(i, junk[(rng.next() as usize) % junk.len()]),
                    }
                }
                if let Ok(ps) = read_bytes(&suffix, &b) {
                    for p in &ps {
                        assert!(p.cct.check());
                        assert_eq!(p.metrics.rows(), p.cct.len());
                    }
                }
            }
        }
        // Hand-made nasties: parent cycles, self-parents, huge ids, lone escapes.
        for text in [
            "__rec=node,id=40,attr=8,data=x,parent=40\n__rec=ctx,ref=40\n",
            "__rec=node,id=40,attr=41,data=x\n__rec=node,id=41,attr=8,data=y,parent=40\n__rec=ctx,ref=40\n",
            "__rec=node,id=18446744073709551615,attr=8,data=x\n__rec=ctx,attr=18446744073709551615,data=1\n",
            "__rec=node,id=40,attr=8,data=x\\",
            "__rec=ctx\n__rec=globals\n__rec=\n__rec=node,id=1,attr=8\n",
            "__rec=node,id=12,attr=10,data=256,parent=3\n__rec=node,id=13,attr=8,data=r,parent=12\n__rec=node,id=14,attr=13,data=a,parent=14\n__rec=ctx,ref=14\n",
        ] {
            let _ = read_bytes(".cali", text.as_bytes());
        }
    }

    /// grove's column for a Hatchet metric column: Hatchet calls SPOT's inclusive
    /// metrics by their alias ("Avg time/rank"), grove adds " (inc)"; exclusive partners
    /// aliased "... (exc)" are grove's plain names.
    fn grove_column(p: &Profile, m: &str, hatchet_cols: &[String]) -> Option<String> {
        let mut c = Vec::new();
        if let Some(x) = m.strip_suffix(" (exc)") {
            c.push(x.to_string());
        } else if hatchet_cols.iter().any(|h| *h == format!("{m} (exc)")) {
            c.push(format!("{m}{INC_SUFFIX}"));
        }
        c.push(m.to_string());
        c.push(format!("{m}{INC_SUFFIX}"));
        if m.contains("inclusive#") {
            c.push(format!("{}{INC_SUFFIX}", m.replacen("inclusive#", "", 1)));
        }
        c.into_iter().find(|n| p.metrics.has(n))
    }

    fn value0(v: f64) -> f64 {
        if v.is_nan() {
            0.0
        } else {
            v
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a - b).abs() < 1e-12
    }

    fn json_file(p: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// Node counts, call paths and metric values against Hatchet's (testdata/caliper,
    /// written by scripts/caliper_goldens.py).
    #[test]
    fn corpus_matches_hatchet() {
        let Some(root) = corpus() else {
            eprintln!("../shared/corpus is missing: skipped");
            return;
        };
        let index = json_file(&goldens().join("index.json"));
        let mut compared = 0;
        for entry in index.as_array().unwrap() {
            let rel = entry["file"].as_str().unwrap();
            let path = root.join(rel);
            if !path.exists() {
                continue;
            }
            let g = json_file(&goldens().join(entry["golden"].as_str().unwrap()));
            let ps = read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert!(!ps.is_empty() && !ps[0].cct.is_empty(), "{rel}");
            if g.get("error").is_some() {
                continue; // Hatchet cannot read it: grove only has to
            }
            compared += 1;
            let p = &ps[0];
            assert_eq!(
                p.cct.len() as u64,
                g["nodes"].as_u64().unwrap(),
                "{rel}: nodes"
            );
            if let Some(r) = g["ranks"].as_array().filter(|r| r.len() > 1) {
                assert_eq!(ps.len(), r.len(), "{rel}: one profile per rank");
            }
            for q in &ps {
                assert_eq!(q.cct.len(), p.cct.len());
            }
            // The same call paths.
            let mut by_path: HashMap<Vec<String>, u32> = HashMap::new();
            let mut mine: Vec<Vec<String>> = Vec::new();
            for n in 0..p.cct.len() as u32 {
                let names: Vec<String> = p
                    .cct
                    .path(n)
                    .iter()
                    .map(|&x| p.cct.name(x).to_string())
                    .collect();
                by_path.insert(names.clone(), n);
                mine.push(names);
            }
            let rows = g["paths"].as_array().unwrap();
            let mut theirs: Vec<Vec<String>> = rows
                .iter()
                .map(|e| serde_json::from_value(e["path"].clone()).unwrap())
                .collect();
            mine.sort();
            theirs.sort();
            assert_eq!(mine, theirs, "{rel}: call paths");
            // Values: every Hatchet metric grove also has, at every node. Means over ranks
            // with absent (node, rank) rows as 0, as Hatchet zero-fills them.
            let nranks = g["ranks"].as_array().map(|r| r.len()).unwrap_or(1);
            let hatchet_cols: Vec<String> = g["exc_metrics"]
                .as_array()
                .unwrap()
                .iter()
                .chain(g["inc_metrics"].as_array().unwrap())
                .map(|m| m.as_str().unwrap().to_string())
                .collect();
            let mut root_inc_checked = 0;
            let mut values_checked = 0;
            for e in rows {
                let path: Vec<String> = serde_json::from_value(e["path"].clone()).unwrap();
                let n = by_path[&path];
                // Hatchet keeps two rows for (root, rank) when it made the root as an
                // implicit parent (its duplicated root entry); checked per rank below.
                let doubled = e["rows"].as_u64().is_some_and(|r| r as usize > nranks);
                for (m, v) in e["metrics"].as_object().unwrap() {
                    let Some(v) = v.as_f64() else { continue };
                    // Caliper min/max/avg combine by min/max/mean in grove where Hatchet
                    // adds them up (several snapshots of one region in timeseries files);
                    // Hatchet's "(inc)" of them is a sum of minima.
                    if ["min#", "max#", "avg#"].iter().any(|p| m.starts_with(p)) {
                        continue;
                    }
                    let Some(col) = grove_column(p, m, &hatchet_cols) else {
                        continue; // derived by Hatchet's update_inclusive_columns only
                    };
                    if doubled {
                        continue; // Hatchet's mean counted a zero row per rank
                    }
                    let mine = ps
                        .iter()
                        .map(|q| value0(q.metrics.get(&col, n)))
                        .sum::<f64>()
                        / ps.len() as f64;
                    assert!(
                        close(mine, v),
                        "{rel}: {path:?} {m} ({col}): grove {mine}, Hatchet {v}"
                    );
                    values_checked += 1;
                    if path.len() == 1 && col.ends_with(INC_SUFFIX) {
                        root_inc_checked += 1;
                    }
                }
            }
            // Per (root, rank) sums, and the root's inclusive time rebuilt from them where
            // Hatchet doubled the root row.
            for rr in g["root_ranks"].as_array().into_iter().flatten() {
                let rank = rr["rank"].as_i64().unwrap();
                let q = ps
                    .iter()
                    .find(|q| q.meta_value("mpi.rank") == Some(&rank.to_string()))
                    .unwrap_or_else(|| panic!("{rel}: no profile for rank {rank}"));
                let n = by_path[&vec![rr["root"].as_str().unwrap().to_string()]];
                for (m, v) in rr["metrics"].as_object().unwrap() {
                    let (Some(v), Some(col)) = (v.as_f64(), grove_column(q, m, &hatchet_cols))
                    else {
                        continue;
                    };
                    let mine = value0(q.metrics.get(&col, n));
                    assert!(
                        close(mine, v),
                        "{rel}: rank {rank} root {m}: grove {mine}, Hatchet {v}"
                    );
                    if col.ends_with(INC_SUFFIX) {
                        root_inc_checked += 1;
                    }
                }
            }
            for e in rows
                .iter()
                .filter(|e| e["path"].as_array().unwrap().len() == 1)
            {
                let doubled = e["rows"].as_u64().is_some_and(|r| r as usize > nranks);
                let (Some(inc), Some(exc)) = (
                    e["metrics"]["time (inc)"].as_f64(),
                    e["metrics"]["time"].as_f64(),
                ) else {
                    continue;
                };
                if !doubled {
                    continue;
                }
                let name = e["path"][0].as_str().unwrap();
                let n = by_path[&vec![name.to_string()]];
                let rank_exc: Vec<f64> = g["root_ranks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["root"] == name)
                    .map(|r| r["metrics"]["time"].as_f64().unwrap())
                    .collect();
                let want = inc - exc + rank_exc.iter().sum::<f64>() / rank_exc.len() as f64;
                let mine = ps
                    .iter()
                    .map(|q| value0(q.metrics.get("time (inc)", n)))
                    .sum::<f64>()
                    / ps.len() as f64;
                assert!(
                    close(mine, want),
                    "{rel}: root {name} time (inc): grove {mine}, Hatchet {want}"
                );
                root_inc_checked += 1;
            }
            // Inclusive columns grove derives where Hatchet has only the exclusive one:
            // each root's value is the sum of Hatchet's exclusive values in its subtree.
            let mut hatchet_nan = 0;
            for m in &hatchet_cols {
                let Some(exc) = grove_column(p, m, &hatchet_cols) else {
                    continue;
                };
                let inc = inclusive_name(&exc);
                let inc_from_file = hatchet_cols
                    .iter()
                    .any(|h| grove_column(p, h, &hatchet_cols).as_deref() == Some(inc.as_str()));
                if exc.ends_with(INC_SUFFIX) || inc_from_file || !p.metrics.has(&inc) {
                    continue;
                }
                for root_row in rows
                    .iter()
                    .filter(|e| e["path"].as_array().unwrap().len() == 1)
                {
                    if root_row["rows"]
                        .as_u64()
                        .is_some_and(|r| r as usize > nranks)
                    {
                        continue;
                    }
                    let root_name = &root_row["path"][0];
                    let subtree: Vec<&serde_json::Value> = rows
                        .iter()
                        .filter(|e| e["path"][0] == *root_name)
                        .map(|e| &e["metrics"][m.as_str()])
                        .collect();
                    // Hatchet adds several records of one node with skipna=False: a node
                    // where some record lacks the metric is NaN there (timeseries files).
                    if subtree.iter().any(|v| v.is_null()) {
                        hatchet_nan += 1;
                        continue;
                    }
                    let want: f64 = subtree.iter().filter_map(|v| v.as_f64()).sum();
                    let n = by_path[&vec![root_name.as_str().unwrap().to_string()]];
                    let mine = ps
                        .iter()
                        .map(|q| value0(q.metrics.get(&inc, n)))
                        .sum::<f64>()
                        / ps.len() as f64;
                    assert!(
                        close(mine, want),
                        "{rel}: root {root_name} {inc}: grove {mine}, Hatchet subtree sum {want}"
                    );
                    root_inc_checked += 1;
                }
            }
            assert!(
                root_inc_checked > 0 || hatchet_nan > 0,
                "{rel}: no inclusive root value compared"
            );
            eprintln!(
                "{rel}: {} nodes, {values_checked} values and {root_inc_checked} root \
                 inclusive values equal to Hatchet's",
                p.cct.len()
            );
        }
        assert!(compared >= 30, "only {compared} files compared");
    }

    fn caliper_files(root: &Path) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.push(p);
                }
            }
        }
        let mut all = Vec::new();
        walk(root, &mut all);
        all.sort();
        all
    }

    fn is_caliper_file(rel: &str) -> bool {
        rel.ends_with(".cali")
            || (rel.ends_with(".json")
                && rel.contains("/caliper-")
                && rel.starts_with("hatchet/hatchet/tests/data/"))
    }

    /// Every Caliper file of the corpus loads; sniffing claims exactly those files.
    #[test]
    fn whole_corpus_sniff_and_load() {
        let Some(root) = corpus() else {
            eprintln!("../shared/corpus is missing: skipped");
            return;
        };
        let mut loaded = 0;
        for p in caliper_files(&root) {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut head = vec![0u8; 4096];
            let n = File::open(&p)
                .and_then(|mut f| f.read(&mut head))
                .unwrap_or(0);
            head.truncate(n);
            let claimed = sniff(&p, &head);
            assert_eq!(
                claimed,
                is_caliper_file(&rel),
                "{rel}: sniff says {claimed}"
            );
            if claimed {
                let ps = read(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
                assert!(
                    ps.iter().all(|q| !q.cct.is_empty() && q.cct.check()),
                    "{rel}"
                );
                loaded += 1;
            }
        }
        eprintln!("{loaded} Caliper files of the corpus load");
        assert!(loaded >= 38, "{loaded}");
    }

    #[test]
    fn corpus_details() {
        let Some(root) = corpus() else {
            return;
        };
        let load = |rel: &str| read(&root.join(rel)).unwrap();
        // json-split, 8 ranks, microsecond integers from an old Caliper.
        let ps =
            load("hatchet/hatchet/tests/data/caliper-lulesh-json/lulesh-annotation-profile.json");
        assert_eq!(ps.len(), 8);
        assert_eq!(ps[3].source.label, "lulesh-annotation-profile.json rank 3");
        assert_eq!(ps[0].metrics.unit("time"), "us");
        assert_eq!(get(&ps[0], "time (inc)", &["main"]), 5882425.0);
        assert_eq!(ps[0].cct.frame(0).kind.as_ref(), "region");
        // Sampled call paths: functions, statement children, module attribute.
        let ps = load("hatchet/hatchet/tests/data/caliper-cpi-json/cpi-callpath-profile.json");
        assert_eq!(ps.len(), 4);
        let p = &ps[0];
        assert_eq!(p.cct.frame(0).kind.as_ref(), "function");
        let stmts = (0..p.cct.len() as u32)
            .filter(|&n| p.cct.frame(n).kind.as_ref() == "statement")
            .count();
        assert_eq!(stmts, 42);
        assert!((0..p.cct.len() as u32).any(|n| p.cct.frame(n).attr("module").is_some()));
        // SPOT region profile: aliases, seconds, Adiak metadata.
        let p = &load("thicket/thicket/tests/data/rajaperf/quartz/gcc10.3.1_1048576/O3/1/Base_Seq-default.cali")[0];
        assert_eq!(p.metrics.unit("Avg time/rank (inc)"), "s");
        assert!(p.meta_value("cluster").is_some());
        assert!(p.meta_value("launchdate").is_some());
        assert_eq!(p.dialect, "Caliper .cali");
        // Node order: main's children in Caliper's order.
        let p = &load("hatchet/hatchet/tests/data/caliper-ordered-cali/230525-151052_1930517_eWbGeyrlBOPT.cali")[0];
        let main = p.cct.root_ids()[0];
        let kids: Vec<&str> = p.cct.children(main).map(|c| p.cct.name(c)).collect();
        assert_eq!(kids.first(), Some(&"lulesh.cycle"), "{kids:?}");
        // CUDA activity: kernels under their launch regions, 4 ranks.
        let ps = load("hatchet/hatchet/tests/data/caliper-sw4-cuda-activity-cali/caliper_cuda_activity_profile.cali");
        assert_eq!(ps.len(), 4);
        assert!((0..ps[0].cct.len() as u32).any(|n| ps[0].cct.frame(n).kind.as_ref() == "kernel"));
        assert_eq!(ps[0].metrics.unit("time (gpu)"), "s");
        // Timeseries: nanoseconds; Caliper 1.x: microseconds from time.unit.
        let p = &load("hatchet/hatchet/tests/data/caliper-timeseries-cali/timeseries.cali")[0];
        assert_eq!(p.metrics.unit("sum#time.duration.ns"), "ns");
        let p = &load("caliper/doc/sphinx/examples/160809-094411_72298_fuu1NeAHT2US.cali")[0];
        assert_eq!(p.metrics.unit("time.inclusive.duration (inc)"), "us");
        assert!(p.cct.root_ids().iter().any(|&r| p.cct.name(r) == "body"));
    }
}
