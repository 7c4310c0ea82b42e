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
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::json::{JsonError, JsonReader, Kind};
use crate::model::metrics::{inclusive_name, INC_SUFFIX};
use crate::model::{Cct, Format, Frame, MetricTable, PreOrder, Profile, Source, NO_NODE};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
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
                hier |= kind == Kind::Str && !val.is_empty();
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

// ------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------

/// Reads every profile the input holds (one per rank or thread where it has several).
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut raw = BufReader::with_capacity(64 * 1024, file);
    let gzip = raw
        .fill_buf()
        .map_err(|e| format!("cannot read: {e}"))?
        .starts_with(&GZIP_MAGIC);
    let mut input: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            flate2::bufread::MultiGzDecoder::new(raw),
        ))
    } else {
        Box::new(raw)
    };
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
    fn expand<'a>(
        &'a self,
        rec: &'a CaliRec,
    ) -> Result<(Option<u64>, Vec<(u64, &'a str)>), String> {
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
    db.compute_attrs()?;
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
                if info.prop & PROP_GLOBAL != 0 && !global_meta.iter().any(|(k, _)| *k == info.name)
                {
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

fn meta_text(cell: Cell, raw_num: &str) -> String {
    match cell {
        Cell::Null => "null".into(),
        Cell::Num(_) => raw_num.to_string(),
        Cell::Str(s) => s,
    }
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
                let is_num = r.peek_kind()? == Kind::Num;
                let cell = read_cell(&mut r, &mut text)?;
                let raw = if is_num {
                    String::from_utf8_lossy(&text).into_owned()
                } else {
                    String::new()
                };
                meta.push((k, meta_text(cell, &raw)));
            }
        }
    }
    if !r.at_eof() {
        return Err(r.error("unexpected data after the top-level object"));
    }
    let end = r.error("").to_string();
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
    let _ = &s.end;
    let colmeta = match &s.colmeta {
        Some(m) if m.len() == ncols => m.clone(),
        Some(m) => {
            return Err(format!(
                "{} columns but {} column_metadata entries",
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
            format!("byte {offset}: data row {row}: {what} cell {cell:?} is not a node index")
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
    let integral: Vec<bool> = (0..keys.len())
        .map(|i| {
            records.iter().all(|rec| {
                rec.iter()
                    .all(|(k, c)| *k != i || !matches!(c, Cell::Num(v) if v.fract() != 0.0))
            })
        })
        .collect();
    let mut col_of_key: HashMap<usize, usize> = HashMap::new();
    for rec in &records {
        let Some(Cell::Str(p)) = rec.iter().find(|(k, _)| *k == hier).map(|(_, c)| c) else {
            continue;
        };
        let mut node = None;
        for seg in p.split('/').filter(|s| !s.is_empty()) {
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

