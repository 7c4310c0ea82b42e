//! Hatchet literal JSON: a list of root nodes `{frame, metrics, children}`, read by
//! `GraphFrame.from_literal` and written by `to_literal`. Read and written iteratively,
//! because real CCTs are thousands of levels deep.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::Arc;

use crate::json::number::text_f64;
use crate::json::{JsonError, JsonReader, Kind};
use crate::model::intern::FxBuild;
use crate::model::metrics::{base_of_inclusive, inclusive_name};
use crate::model::{Cct, Frame, MetricTable, NO_NODE};

#[derive(Debug)]
pub struct Literal {
    pub cct: Cct,
    pub metrics: MetricTable,
    pub default_metric: String,
    pub warnings: Vec<String>,
}

enum Ctx {
    List {
        parent: Option<u32>,
        first: bool,
    },
    Node {
        node: u32,
        first: bool,
        name: Option<String>,
    },
}

/// The nodes as read, in file order: frames and child links only. The tree is built
/// once, in Hatchet's order, from here (frames are moved into it, not cloned).
#[derive(Default)]
struct Nodes {
    frames: Vec<Frame>,
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
    parent: Vec<u32>,
    roots: Vec<u32>,
}

impl Nodes {
    fn add(&mut self, parent: Option<u32>, frame: Frame) -> u32 {
        let id = self.frames.len() as u32;
        self.frames.push(frame);
        self.first_child.push(NO_NODE);
        self.last_child.push(NO_NODE);
        self.next_sibling.push(NO_NODE);
        self.parent.push(parent.unwrap_or(NO_NODE));
        match parent {
            Some(p) => {
                let p = p as usize;
                match self.last_child[p] {
                    NO_NODE => self.first_child[p] = id,
                    last => self.next_sibling[last as usize] = id,
                }
                self.last_child[p] = id;
            }
            None => self.roots.push(id),
        }
        id
    }

    fn children(&self, n: u32, out: &mut Vec<u32>) {
        out.clear();
        let mut c = self.first_child[n as usize];
        while c != NO_NODE {
            out.push(c);
            c = self.next_sibling[c as usize];
        }
    }
}

/// Shares the text of repeated names, kinds and attributes (a big literal names a
/// few thousand functions a million times).
#[derive(Default)]
struct Strings(HashSet<Arc<str>, FxBuild>);

impl Strings {
    fn get(&mut self, b: &[u8]) -> Arc<str> {
        // Valid UTF-8 (nearly always) is checked by the vectorised `from_utf8`; the
        // lossy path walks the bytes chunk by chunk, a few percent of a 1M-node load.
        let s = match std::str::from_utf8(b) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(b),
        };
        if let Some(a) = self.0.get(&*s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(&*s);
        self.0.insert(a.clone());
        a
    }
}

/// One metric column as read: a value per node id (NaN where absent), and which
/// nodes have one (the first value of a key in a node wins, as before).
#[derive(Default)]
struct Column {
    values: Vec<f64>,
    set: Vec<bool>,
}

impl Column {
    fn put(&mut self, node: u32, v: f64) {
        let i = node as usize;
        if self.values.len() <= i {
            self.values.resize(i + 1, f64::NAN);
            self.set.resize(i + 1, false);
        }
        if !self.set[i] {
            self.set[i] = true;
            self.values[i] = v;
        }
    }
}

pub fn read<R: Read>(src: R) -> Result<Literal, JsonError> {
    let mut r = JsonReader::new(src);
    r.skip_bom();
    let mut nodes = Nodes::default();
    let mut strings = Strings::default();
    let mut cols = Columns::default();
    let mut key = Vec::new();
    let mut text = Vec::new();
    let mut warnings = Vec::new();
    let mut nid_metric = false;
    let mut nids: Vec<Option<f64>> = Vec::new();
    // `frame`, `metrics` or `children` of the wrong JSON type: skipped, and counted.
    let mut wrong_type = 0u64;
    let empty = strings.get(b"");
    let none = strings.get(b"None");

    if r.peek_kind()? != Kind::Array {
        return Err(r.error("a Hatchet literal is a JSON list of root nodes"));
    }
    r.begin_array()?;
    let mut stack = vec![Ctx::List {
        parent: None,
        first: true,
    }];
    while let Some(top) = stack.last_mut() {
        match top {
            Ctx::List { parent, first } => {
                let parent = *parent;
                if !r.next_element(*first)? {
                    stack.pop();
                    continue;
                }
                *first = false;
                if r.peek_kind()? != Kind::Object {
                    return Err(r.error("a node must be a JSON object"));
                }
                r.begin_object()?;
                let frame = Frame {
                    name: empty.clone(),
                    kind: none.clone(),
                    attrs: Default::default(),
                };
                let node = nodes.add(parent, frame);
                nids.push(None);
                stack.push(Ctx::Node {
                    node,
                    first: true,
                    name: None,
                });
            }
            Ctx::Node { node, first, name } => {
                let node = *node;
                if !r.next_key(*first, &mut key)? {
                    let fallback = name.take();
                    let f = &mut nodes.frames[node as usize];
                    if f.name.is_empty() {
                        f.name = fallback.unwrap_or_default().into();
                    }
                    stack.pop();
                    continue;
                }
                *first = false;
                if std::str::from_utf8(&key).is_err() {
                    r.repairs.invalid_utf8 += 1;
                }
                match &key[..] {
                    b"name" => {
                        r.read_scalar(&mut text)?;
                        *name = Some(String::from_utf8_lossy(&text).into_owned());
                    }
                    b"frame" => {
                        if r.peek_kind()? != Kind::Object {
                            wrong_type += 1;
                        }
                        read_frame(
                            &mut r,
                            &mut nodes.frames[node as usize],
                            &mut strings,
                            &mut key,
                            &mut text,
                        )?
                    }
                    b"metrics" if r.peek_kind()? != Kind::Object => {
                        wrong_type += 1;
                        r.skip_value()?;
                    }
                    b"metrics" => {
                        nid_metric |= cols.read(&mut r, node, &mut key, &mut text, &mut nids)?
                    }
                    b"children" => {
                        if r.peek_kind()? == Kind::Array {
                            r.begin_array()?;
                            stack.push(Ctx::List {
                                parent: Some(node),
                                first: true,
                            });
                        } else {
                            wrong_type += 1;
                            r.skip_value()?;
                        }
                    }
                    _ => r.skip_value()?,
                }
            }
        }
    }
    if !r.at_eof() {
        return Err(r.error("unexpected data after the list of roots"));
    }
    drop(strings);
    // Lossy decoding, objects where a name or metric belongs, and the like: the
    // same repairs the Chrome reader reports.
    warnings.extend(r.repairs.warnings());
    if wrong_type > 0 {
        warnings.push(format!(
            "{wrong_type} frame, metrics or children field(s) of the wrong JSON type were ignored"
        ));
    }
    if nid_metric {
        warnings.push("_hatchet_nid values were read as node identities, not metrics".into());
    }
    Ok(literal(nodes, nids, cols, warnings))
}

/// The metric columns as read, by key in the order of first sight.
#[derive(Default)]
struct Columns {
    keys: Vec<String>,
    key_ids: HashMap<String, usize>,
    cols: Vec<Column>,
}

impl Columns {
    /// The column of metric `key`, made on first sight.
    fn id(&mut self, key: &[u8]) -> usize {
        // A literal has a few metric keys, repeated on every node: comparing their
        // bytes beats converting and hashing.
        let known = (self.keys.len() <= 8)
            .then(|| self.keys.iter().position(|k| k.as_bytes() == key))
            .flatten();
        if let Some(id) = known {
            return id;
        }
        let k = String::from_utf8_lossy(key);
        match self.key_ids.get(&*k) {
            Some(&id) => id,
            None => {
                self.keys.push(k.clone().into_owned());
                self.cols.push(Column::default());
                self.key_ids.insert(k.into_owned(), self.keys.len() - 1);
                self.keys.len() - 1
            }
        }
    }

    /// A node's `metrics` object (the reader is at its start); whether it held a
    /// `_hatchet_nid` (the node's identity, kept in `nids`, not a metric).
    fn read<R: Read>(
        &mut self,
        r: &mut JsonReader<R>,
        node: u32,
        key: &mut Vec<u8>,
        text: &mut Vec<u8>,
        nids: &mut [Option<f64>],
    ) -> Result<bool, JsonError> {
        let mut nid_metric = false;
        r.begin_object()?;
        let mut f = true;
        while r.next_key(f, key)? {
            f = false;
            if std::str::from_utf8(key).is_err() {
                r.repairs.invalid_utf8 += 1;
            }
            let kind = r.read_scalar(text)?;
            if key == b"_hatchet_nid" {
                nid_metric = true;
                nids[node as usize] = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok());
                continue;
            }
            let v = match kind {
                Kind::Num | Kind::Str => number(text),
                _ => f64::NAN,
            };
            let id = self.id(key);
            self.cols[id].put(node, v);
        }
        Ok(nid_metric)
    }
}

/// The literal of what was read: the tree in Hatchet's order, its metrics (with the
/// inclusive ones Hatchet derives) and the default metric.
fn literal(nodes: Nodes, nids: Vec<Option<f64>>, cols: Columns, warnings: Vec<String>) -> Literal {
    // Hatchet's data order: by `_hatchet_nid` when the file has it, otherwise by frame
    // (from_literal numbers nodes in sorted-frame order). Build the tree in that order
    // so node ids, "data order" and the text layout agree with Hatchet.
    let order = hatchet_order(&nodes, &nids);
    drop(nids);
    let rows = order.len();
    let cct = build(nodes, &order);
    let mut metrics = MetricTable::new(rows);
    let keys = cols.keys;
    for (k, c) in keys.iter().zip(cols.cols) {
        let col: Vec<f64> = order
            .iter()
            .map(|&o| c.values.get(o as usize).copied().unwrap_or(f64::NAN))
            .collect();
        metrics.set(k, "", col);
    }
    // Exclusive metrics without an inclusive partner get one, as Hatchet computes it.
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| base_of_inclusive(k).is_none() && !keys.contains(&inclusive_name(k)))
        .cloned()
        .collect();
    let refs: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    metrics.derive_inclusive(&cct, &refs);
    let default_metric = if keys.iter().any(|k| k == "time") {
        "time".to_string()
    } else {
        keys.iter()
            .find(|k| base_of_inclusive(k).is_none())
            .or(keys.first())
            .cloned()
            .unwrap_or_default()
    };
    Literal {
        cct,
        metrics,
        default_metric,
        warnings,
    }
}

/// A frame's (attribute, value) pairs, sorted: Hatchet compares frames as these tuples.
fn frame_pairs(f: &Frame) -> Vec<(&str, &str)> {
    let mut k: Vec<(&str, &str)> = f
        .attrs
        .iter()
        .map(|(a, v)| (&**a, &**v))
        .chain([("name", &*f.name), ("type", &*f.kind)])
        .collect();
    k.sort();
    k
}

/// Hatchet's order of two frames. Without other attributes the sorted pairs are
/// (name, type): compare those without building them.
fn frame_cmp<'a>(
    a: &'a Frame,
    b: &'a Frame,
    pa: Option<&'a [(&'a str, &'a str)]>,
    pb: Option<&'a [(&'a str, &'a str)]>,
) -> Ordering {
    match (pa, pb) {
        (None, None) => a.name.cmp(&b.name).then_with(|| a.kind.cmp(&b.kind)),
        _ => {
            let xa = [("name", &*a.name), ("type", &*a.kind)];
            let xb = [("name", &*b.name), ("type", &*b.kind)];
            pa.unwrap_or(&xa).cmp(pb.unwrap_or(&xb))
        }
    }
}

/// Node ids in Hatchet's pre-order: siblings sorted by `_hatchet_nid` when every node
/// has one, else by frame (stable: equal frames keep file order).
fn hatchet_order(nodes: &Nodes, nids: &[Option<f64>]) -> Vec<u32> {
    let by_nid = nids.iter().all(|n| n.is_some()) && !nids.is_empty();
    // Sorted pairs only for frames with attributes besides name and type (none, in
    // most literals: then there is no table at all).
    let any_attrs = nodes.frames.iter().any(|f| !f.attrs.is_empty());
    let pairs: Vec<Option<Vec<(&str, &str)>>> = if by_nid || !any_attrs {
        Vec::new()
    } else {
        nodes
            .frames
            .iter()
            .map(|f| (!f.attrs.is_empty()).then(|| frame_pairs(f)))
            .collect()
    };
    let order = |v: &mut Vec<u32>| {
        if by_nid {
            v.sort_by(|&a, &b| {
                nids[a as usize]
                    .unwrap_or(0.0)
                    .total_cmp(&nids[b as usize].unwrap_or(0.0))
            });
        } else {
            let f = &nodes.frames;
            v.sort_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                let pair = |x: usize| pairs.get(x).and_then(|p| p.as_deref());
                frame_cmp(&f[a], &f[b], pair(a), pair(b))
            });
        }
    };
    let mut out = Vec::with_capacity(nodes.frames.len());
    let mut roots = nodes.roots.clone();
    order(&mut roots);
    // Explicit stack: literals can be thousands of levels deep.
    let mut stack: Vec<u32> = roots.into_iter().rev().collect();
    let mut kids = Vec::new();
    while let Some(n) = stack.pop() {
        out.push(n);
        nodes.children(n, &mut kids);
        order(&mut kids);
        stack.extend(kids.iter().rev());
    }
    out
}

/// The tree with node ids in `order` (a pre-order: parents come first).
fn build(mut nodes: Nodes, order: &[u32]) -> Cct {
    let mut cct = Cct::default();
    cct.reserve(order.len());
    let mut new_of = vec![NO_NODE; nodes.frames.len()];
    let blank = Frame {
        name: Arc::from(""),
        kind: Arc::from(""),
        attrs: Default::default(),
    };
    for &old in order {
        let parent = match nodes.parent[old as usize] {
            NO_NODE => None,
            p => Some(new_of[p as usize]),
        };
        let frame = std::mem::replace(&mut nodes.frames[old as usize], blank.clone());
        new_of[old as usize] = cct.add_node(parent, frame);
    }
    cct
}

fn number(text: &[u8]) -> f64 {
    text_f64(text).unwrap_or(f64::NAN)
}

fn read_frame<R: Read>(
    r: &mut JsonReader<R>,
    frame: &mut Frame,
    strings: &mut Strings,
    key: &mut Vec<u8>,
    text: &mut Vec<u8>,
) -> Result<(), JsonError> {
    if r.peek_kind()? != Kind::Object {
        return r.skip_value();
    }
    r.begin_object()?;
    let mut first = true;
    while r.next_key(first, key)? {
        first = false;
        let kind = r.read_scalar(text)?;
        let v = match kind {
            Kind::Str | Kind::Num => strings.get(text),
            Kind::True => strings.get(b"true"),
            Kind::False => strings.get(b"false"),
            _ => continue,
        };
        match &key[..] {
            b"name" => frame.name = v,
            b"type" => frame.kind = v,
            _ => {
                let k = String::from_utf8_lossy(key);
                match frame.attrs.iter_mut().find(|(a, _)| **a == *k) {
                    Some((_, old)) => *old = v,
                    None => frame.attrs.push((strings.get(k.as_bytes()), v)),
                }
            }
        }
    }
    Ok(())
}

/// The Hatchet literal reader: a JSON list of nodes with frames. A list of events
/// (`"ph"` before any `"frame"`) is left to the Chrome reader.
pub struct Hatchet;

impl super::Reader for Hatchet {
    fn name(&self) -> &'static str {
        "Hatchet literal JSON"
    }

    fn format(&self) -> crate::model::Format {
        crate::model::Format::HatchetLiteral
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(text) = probe.json().filter(|t| t[0] == b'[') else {
            return false;
        };
        let find = |pat: &[u8]| text.windows(pat.len()).position(|w| w == pat);
        match (find(b"\"frame\""), find(b"\"ph\"")) {
            (Some(f), Some(p)) => f < p,
            (Some(_), None) => true,
            _ => false,
        }
    }

    fn read(&self, input: super::Input) -> Result<Vec<crate::model::Profile>, String> {
        let (input, source) = input.into_stream()?;
        let l = read(input).map_err(|e| e.to_string())?;
        let mut p = crate::model::Profile {
            call_graph: None,
            source,
            dialect: "Hatchet literal".into(),
            cct: l.cct,
            metrics: l.metrics,
            events: None,
            counters: None,
            meta: Vec::new(),
            warnings: l.warnings,
            default_metric: l.default_metric,
        };
        p.cct.finish();
        Ok(vec![p])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"[
      {"frame": {"name": "main", "type": "function"}, "metrics": {"time": 1.0, "time (inc)": 6.0, "_hatchet_nid": 0},
       "children": [
         {"frame": {"name": "a", "type": "function", "file": "a.c"}, "metrics": {"time (inc)": 5.0, "time": 5.0}}
       ]},
      {"name": "second", "frame": {"type": "loop"}, "metrics": {"time": 2, "time (inc)": 2}}
    ]"#;

    #[test]
    fn read_literal() {
        let l = read(SAMPLE.as_bytes()).unwrap();
        assert_eq!(l.cct.len(), 3);
        assert_eq!(l.cct.roots.len(), 2);
        assert_eq!(l.cct.name(2), "second");
        assert_eq!(l.cct.frame(2).kind.as_ref(), "loop");
        assert_eq!(l.cct.frame(1).attr("file"), Some("a.c"));
        assert_eq!(l.metrics.values("time").unwrap(), &[1.0, 5.0, 2.0]);
        assert_eq!(l.metrics.values("time (inc)").unwrap(), &[6.0, 5.0, 2.0]);
        assert_eq!(l.default_metric, "time");
    }

    /// Issue 14 item 9: lossy UTF-8 and fields of the wrong type warn.
    #[test]
    fn damage_warns() {
        let clean = read(SAMPLE.as_bytes()).unwrap();
        assert_eq!(clean.warnings.len(), 1, "{:?}", clean.warnings); // the _hatchet_nid note
        let bad: &[u8] = b"[{\"frame\": {\"name\": \"m\xffain\", \"type\": {\"x\": 1}}, \"metrics\": {\"time\": [1, 2]}, \"children\": 5}, {\"frame\": 3, \"metrics\": {\"t\xfe\": 1}}]";
        let l = read(bad).unwrap();
        let w = l.warnings.join(" | ");
        assert!(w.contains("2 string(s) with invalid UTF-8"), "{w}");
        assert!(w.contains("2 field(s) held an object or array"), "{w}");
        assert!(
            w.contains("2 frame, metrics or children field(s) of the wrong JSON type"),
            "{w}"
        );
    }

    #[test]
    fn siblings_follow_hatchet_frame_order_and_first_metric_wins() {
        let text = r#"[{"frame": {"name": "root"}, "metrics": {"time": 1}, "children": [
            {"frame": {"name": "b", "type": "function"}, "metrics": {"time": 3}},
            {"frame": {"name": "a", "type": "function", "file": "z.c"}, "metrics": {"time": 4}},
            {"frame": {"name": "a", "type": "function"}, "metrics": {"time": 5, "time": 6}}
        ]}]"#;
        let l = read(text.as_bytes()).unwrap();
        // Sorted (attribute, value) pairs: ("file", ..) sorts before ("name", ..).
        let with_file: Vec<_> = (1..4)
            .map(|n| l.cct.frame(n).attr("file").is_some())
            .collect();
        assert_eq!(with_file, [true, false, false]);
        assert_eq!(l.cct.name(3), "b");
        assert_eq!(l.metrics.values("time").unwrap(), &[1.0, 4.0, 5.0, 3.0]);
    }

    #[test]
    fn errors_have_positions() {
        let e = read(&b"[{\"frame\": {\"name\": \"x\"}, \"children\": [}]"[..]).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.column > 30);
    }
}
