//! Hatchet literal JSON: a list of root nodes `{frame, metrics, children}`, read by
//! `GraphFrame.from_literal` and written by `to_literal`. Read and written iteratively,
//! because real CCTs are thousands of levels deep.

use std::collections::HashMap;
use std::io::Read;

use crate::json::{parse_decimal_scaled, JsonError, JsonReader, Kind};
use crate::model::metrics::{base_of_inclusive, inclusive_name};
use crate::model::{Cct, Frame, MetricTable};

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

pub fn read<R: Read>(src: R) -> Result<Literal, JsonError> {
    let mut r = JsonReader::new(src);
    r.skip_bom();
    let mut cct = Cct::default();
    let mut keys: Vec<String> = Vec::new();
    let mut key_ids: HashMap<String, usize> = HashMap::new();
    let mut values: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut key = Vec::new();
    let mut text = Vec::new();
    let mut warnings = Vec::new();
    let mut nid_metric = false;
    let mut nids: Vec<Option<f64>> = Vec::new();
    // `frame`, `metrics` or `children` of the wrong JSON type: skipped, and counted.
    let mut wrong_type = 0u64;

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
                let node = cct.add_node(parent, Frame::new("", "None"));
                values.push(Vec::new());
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
                    let f = cct.frame_mut(node);
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
                        read_frame(&mut r, cct.frame_mut(node), &mut key, &mut text)?
                    }
                    b"metrics" if r.peek_kind()? != Kind::Object => {
                        wrong_type += 1;
                        r.skip_value()?;
                    }
                    b"metrics" => {
                        r.begin_object()?;
                        let mut f = true;
                        while r.next_key(f, &mut key)? {
                            f = false;
                            if std::str::from_utf8(&key).is_err() {
                                r.repairs.invalid_utf8 += 1;
                            }
                            let k = String::from_utf8_lossy(&key).into_owned();
                            let kind = r.read_scalar(&mut text)?;
                            if k == "_hatchet_nid" {
                                nid_metric = true;
                                nids[node as usize] =
                                    std::str::from_utf8(&text).ok().and_then(|t| t.parse().ok());
                                continue;
                            }
                            let v = match kind {
                                Kind::Num | Kind::Str => number(&text),
                                _ => f64::NAN,
                            };
                            let id = *key_ids.entry(k.clone()).or_insert_with(|| {
                                keys.push(k);
                                keys.len() - 1
                            });
                            values[node as usize].push((id, v));
                        }
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
    // Hatchet's data order: by `_hatchet_nid` when the file has it, otherwise by frame
    // (from_literal numbers nodes in sorted-frame order). Rebuild the tree in that order
    // so node ids, "data order" and the text layout agree with Hatchet.
    let (cct, values) = hatchet_order(&cct, values, &nids);
    let rows = cct.len();
    let mut metrics = MetricTable::new(rows);
    for (id, k) in keys.iter().enumerate() {
        let mut col = vec![f64::NAN; rows];
        for (row, vals) in values.iter().enumerate() {
            if let Some(&(_, v)) = vals.iter().find(|(i, _)| *i == id) {
                col[row] = v;
            }
        }
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
    let default_metric = if keys.iter().any(|k| k == "time") {
        "time".to_string()
    } else {
        keys.iter()
            .find(|k| base_of_inclusive(k).is_none())
            .or(keys.first())
            .cloned()
            .unwrap_or_default()
    };
    Ok(Literal {
        cct,
        metrics,
        default_metric,
        warnings,
    })
}

/// Hatchet compares frames as sorted (attribute, value) tuples.
fn frame_key(f: &Frame) -> Vec<(String, String)> {
    let mut k: Vec<(String, String)> = f
        .attrs
        .iter()
        .map(|(a, v)| (a.to_string(), v.to_string()))
        .chain([
            ("name".to_string(), f.name.to_string()),
            ("type".to_string(), f.kind.to_string()),
        ])
        .collect();
    k.sort();
    k
}

type Values = Vec<Vec<(usize, f64)>>;

fn hatchet_order(cct: &Cct, values: Values, nids: &[Option<f64>]) -> (Cct, Values) {
    let by_nid = nids.iter().all(|n| n.is_some()) && !nids.is_empty();
    let keys: Vec<Vec<(String, String)>> = if by_nid {
        Vec::new()
    } else {
        (0..cct.len() as u32)
            .map(|n| frame_key(cct.frame(n)))
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
            v.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
        }
    };
    let po = crate::model::PreOrder::build(cct, order);
    let mut out = Cct::default();
    let mut new_of = vec![0u32; cct.len()];
    let mut vals = Vec::with_capacity(values.len());
    let mut values = values;
    for (p, &old) in po.node.iter().enumerate() {
        let parent = match po.parent[p] {
            crate::model::NO_NODE => None,
            q => Some(new_of[po.node[q as usize] as usize]),
        };
        new_of[old as usize] = out.add_node(parent, cct.frame(old).clone());
        vals.push(std::mem::take(&mut values[old as usize]));
    }
    (out, vals)
}

fn number(text: &[u8]) -> f64 {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .or_else(|| parse_decimal_scaled(text, 0).map(|v| v as f64))
        .unwrap_or(f64::NAN)
}

fn read_frame<R: Read>(
    r: &mut JsonReader<R>,
    frame: &mut Frame,
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
        let k = String::from_utf8_lossy(key).into_owned();
        let kind = r.read_scalar(text)?;
        let v = match kind {
            Kind::Str | Kind::Num => String::from_utf8_lossy(text).into_owned(),
            Kind::True => "true".into(),
            Kind::False => "false".into(),
            _ => continue,
        };
        match k.as_str() {
            "name" => frame.name = v.into(),
            "type" => frame.kind = v.into(),
            _ => frame.set_attr(&k, &v),
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

    #[test]
    fn write_then_read_back() {
        let l = read(SAMPLE.as_bytes()).unwrap();
        let mut buf = Vec::new();
        let kids = |n: u32| l.cct.children(n).collect();
        crate::export::hatchet::write(&mut buf, &l.cct, &l.metrics, &l.cct.root_ids(), &kids)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v[0]["children"][0]["frame"]["file"], "a.c");
        let back = read(&buf[..]).unwrap();
        assert_eq!(back.cct.len(), 3);
        assert_eq!(back.metrics.values("time (inc)").unwrap(), &[6.0, 5.0, 2.0]);
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
    fn errors_have_positions() {
        let e = read(&b"[{\"frame\": {\"name\": \"x\"}, \"children\": [}]"[..]).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.column > 30);
    }
}
