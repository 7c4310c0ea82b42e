//! The JSON of `Thicket.to_json()` and of Hatchet's `GraphFrame.to_json()`: one object
//! with `graph` (a list of `{id: {data: frame, children: [ids], parents: [ids]}}`
//! maps), `dataframe_indices`, `dataframe` (one row per node, or per (node, profile)
//! for Thicket), `exclusive_metrics`, `inclusive_metrics`, and for Thicket `metadata`
//! (one row per profile), `profile` and `profile_mapping` (profile -> file).
//!
//! A Thicket opens as an ensemble: one profile per Thicket profile on the shared tree,
//! with that profile's dataframe rows as metrics and its metadata row as metadata,
//! labelled by its file's stem in `profile_mapping` (else the profile id). A Hatchet
//! GraphFrame is one profile.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// Columns that index or name rows rather than measure them.
const NOT_METRICS: &[&str] = &["node", "profile", "name", "nid", "rank", "thread"];

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The shared tree: node id in the file -> node. Nodes with several parents (a DAG)
/// hang under their first; ids come in file order, parents placed first.
fn tree(graph: &Value) -> Result<(Cct, HashMap<i64, u32>), String> {
    let mut nodes: Vec<(i64, &Value)> = Vec::new();
    for part in graph.as_array().ok_or("'graph' is not a list")? {
        let obj = part.as_object().ok_or("a 'graph' entry is not an object")?;
        for (id, n) in obj {
            let id: i64 = id
                .parse()
                .map_err(|_| format!("graph node id {id:?} is not a number"))?;
            nodes.push((id, n));
        }
    }
    let ids = |v: Option<&Value>| -> Vec<i64> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default()
    };
    let mut parent: HashMap<i64, i64> = HashMap::new();
    for (id, n) in &nodes {
        for c in ids(n.get("children")) {
            parent.entry(c).or_insert(*id);
        }
    }
    let by_id: HashMap<i64, &Value> = nodes.iter().copied().collect();
    let mut cct = Cct::default();
    let mut map: HashMap<i64, u32> = HashMap::new();
    // Depth-first from the roots in file order, children in their listed order.
    let mut stack: Vec<(i64, Option<u32>)> = nodes
        .iter()
        .rev()
        .filter(|(id, _)| !parent.contains_key(id))
        .map(|(id, _)| (*id, None))
        .collect();
    while let Some((id, p)) = stack.pop() {
        if map.contains_key(&id) {
            continue;
        }
        let n = by_id
            .get(&id)
            .ok_or(format!("graph node {id} is a child but has no entry"))?;
        let data = n.get("data").and_then(Value::as_object);
        let name = data
            .and_then(|d| d.get("name"))
            .map(text)
            .unwrap_or_default();
        let kind = data
            .and_then(|d| d.get("type"))
            .map(text)
            .unwrap_or_else(|| "function".into());
        let mut frame = Frame::new(&name, &kind);
        for (k, v) in data.into_iter().flatten() {
            if k != "name" && k != "type" {
                frame.set_attr(k, &text(v));
            }
        }
        let node = cct.add_node(p, frame);
        map.insert(id, node);
        for c in ids(n.get("children")).into_iter().rev() {
            if parent.get(&c) == Some(&id) {
                stack.push((c, Some(node)));
            }
        }
    }
    if map.len() < nodes.len() {
        return Err(format!(
            "{} graph node(s) sit on a cycle no root reaches",
            nodes.len() - map.len()
        ));
    }
    Ok((cct, map))
}

fn stem(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.split('.').next().unwrap_or(base).to_string()
}

/// The labels of the profiles whose files `mapping` names: the files' stems, or when
/// stems repeat (RAJAPerf's `<size>/<reps>/Base_CUDA-block_128.cali`; grove's own
/// Thicket export, which writes each member's label there) the parts of the paths that
/// differ: the leading directories all share dropped, and the file's extension.
fn labels_of(files: &[String]) -> Vec<String> {
    let stems: Vec<String> = files.iter().map(|f| stem(f)).collect();
    let mut seen = std::collections::HashSet::new();
    if stems.iter().all(|s| seen.insert(s.as_str())) {
        return stems;
    }
    let parts: Vec<Vec<&str>> = files.iter().map(|f| f.split('/').collect()).collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(0);
    let shared = (0..shortest.saturating_sub(1))
        .take_while(|&i| parts.iter().all(|p| p[i] == parts[0][i]))
        .count();
    parts
        .iter()
        .map(|p| {
            let mut p: Vec<&str> = p[shared..].to_vec();
            if let Some(last) = p.last_mut() {
                // `run.cali` -> `run`; a label's own dots (`r1.5`) are not an extension.
                if let Some((b, ext)) = last.rsplit_once('.') {
                    if !b.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic()) {
                        *last = b;
                    }
                }
            }
            p.join("/")
        })
        .collect()
}

pub fn read_value(v: &Value, source: &Source) -> Result<Vec<Profile>, String> {
    let graph = v.get("graph").ok_or("no 'graph'")?;
    let rows = v
        .get("dataframe")
        .and_then(Value::as_array)
        .ok_or("no 'dataframe' list")?;
    let (mut cct, map) = tree(graph)?;
    cct.finish();
    let n = cct.len();
    let thicket = v.get("profile").is_some() || v.get("metadata").is_some();
    // Profile ids in the Thicket's order (rows name them too).
    let mut profiles: Vec<String> = v
        .get("profile")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    let mut cols: BTreeMap<String, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for row in rows {
        let obj = row.as_object().ok_or("a dataframe row is not an object")?;
        let node = obj
            .get("node")
            .and_then(Value::as_i64)
            .and_then(|id| map.get(&id).copied())
            .ok_or("a dataframe row names no graph node")?;
        let prof = if thicket {
            obj.get("profile").map(text).unwrap_or_default()
        } else {
            String::new()
        };
        if !profiles.contains(&prof) {
            profiles.push(prof.clone());
        }
        let per = cols.entry(prof).or_default();
        for (k, x) in obj {
            let Some(x) = x.as_f64() else { continue };
            if NOT_METRICS.contains(&k.as_str()) {
                continue;
            }
            if !order.contains(k) {
                order.push(k.clone());
            }
            per.entry(k.clone()).or_insert_with(|| vec![f64::NAN; n])[node as usize] = x;
        }
    }
    if profiles.is_empty() {
        return Err("the dataframe has no row".into());
    }
    let names = |key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(text).collect())
            .unwrap_or_default()
    };
    let exc = names("exclusive_metrics");
    let default = exc
        .iter()
        .find(|m| order.contains(m))
        .or(order.first())
        .cloned()
        .unwrap_or_default();
    let meta_rows: HashMap<String, Vec<(String, String)>> = v
        .get("metadata")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_object)
                .map(|o| {
                    let p = o.get("profile").map(text).unwrap_or_default();
                    let kv = o
                        .iter()
                        .filter(|(k, _)| *k != "profile")
                        .map(|(k, x)| (k.clone(), text(x)))
                        .collect();
                    (p, kv)
                })
                .collect()
        })
        .unwrap_or_default();
    let mapping = v.get("profile_mapping").and_then(Value::as_object);
    let files: Vec<String> = profiles
        .iter()
        .map(|prof| match mapping.and_then(|m| m.get(prof)) {
            Some(p) => text(p),
            None => prof.clone(),
        })
        .collect();
    let labels = labels_of(&files);
    let mut out = Vec::new();
    for (prof, label) in profiles.iter().zip(labels) {
        let mut metrics = MetricTable::new(n);
        let per = cols.get(prof);
        for k in &order {
            let col = per
                .and_then(|p| p.get(k).cloned())
                .unwrap_or_else(|| vec![f64::NAN; n]);
            metrics.set(k, "", col);
        }
        let mut source = source.clone();
        let mut meta = Vec::new();
        if thicket {
            source.label = if mapping.and_then(|m| m.get(prof)).is_some() {
                label
            } else {
                prof.clone()
            };
            meta.push(("profile".to_string(), prof.clone()));
            meta.extend(meta_rows.get(prof).cloned().unwrap_or_default());
        }
        out.push(Profile {
            call_graph: None,
            source,
            dialect: if thicket {
                "Thicket"
            } else {
                "Hatchet GraphFrame"
            }
            .into(),
            cct: cct.clone(),
            metrics,
            events: None,
            counters: None,
            meta,
            warnings: Vec::new(),
            default_metric: default.clone(),
        });
    }
    Ok(out)
}

pub struct ThicketJson;

impl super::Reader for ThicketJson {
    fn name(&self) -> &'static str {
        "Thicket/Hatchet to_json"
    }

    fn format(&self) -> Format {
        Format::ThicketJson
    }

    /// A JSON object whose first key is `"graph"`, holding a list of `{"ID": {"data":`.
    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(t) = probe.json().filter(|t| t[0] == b'{') else {
            return false;
        };
        let squeezed: Vec<u8> = t
            .iter()
            .take(256)
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        squeezed.starts_with(b"{\"graph\":[{\"") && squeezed.windows(9).any(|w| w == b"{\"data\":{")
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (bytes, source) = input.into_bytes()?;
        let v: Value = crate::json::from_slice(&bytes).map_err(|e| e.to_string())?;
        read_value(&v, &source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::ThicketJson,
            size: 0,
            gzip: false,
            label: "x".into(),
        }
    }

    #[test]
    fn thicket_profiles_become_an_ensemble() {
        let j = r#"{"graph":[{"0":{"data":{"name":"main","type":"function"},"children":[1],"parents":[]},
            "1":{"data":{"name":"a","type":"function"},"children":[],"parents":[0]}}],
            "dataframe_indices":["node","profile"],
            "dataframe":[{"node":0,"profile":7,"time":1.5,"name":"main"},{"node":1,"profile":7,"time":2},
                         {"node":0,"profile":9,"time":3}],
            "metadata":[{"profile":7,"user":"ted"},{"profile":9,"user":"ann"}],
            "exclusive_metrics":["time"],"inclusive_metrics":[],"profile":[7,9],
            "profile_mapping":{"7":"/d/run_a.cali","9":"/d/run_b.cali"}}"#;
        let ps = read_value(&serde_json::from_str(j).unwrap(), &src()).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].source.label, "run_a");
        assert_eq!(ps[1].meta_value("user"), Some("ann"));
        assert_eq!(ps[0].metrics.values("time").unwrap(), &[1.5, 2.0]);
        assert!(ps[1].metrics.values("time").unwrap()[1].is_nan());
        assert_eq!(ps[0].cct.parent(1), Some(0));
    }

    #[test]
    fn bad_input() {
        let r = |j: &str| read_value(&serde_json::from_str(j).unwrap(), &src());
        assert!(r("{}").is_err());
        assert!(r(r#"{"graph":[{"x":{}}],"dataframe":[]}"#)
            .unwrap_err()
            .contains("not a number"));
        assert!(r(r#"{"graph":[{"0":{"children":[5]}}],"dataframe":[]}"#)
            .unwrap_err()
            .contains("no entry"));
        assert!(
            r(r#"{"graph":[{"0":{"children":[1]},"1":{"children":[0]}}],"dataframe":[]}"#)
                .unwrap_err()
                .contains("cycle")
        );
        assert!(r(r#"{"graph":[{"0":{}}],"dataframe":[{"node":3}]}"#).is_err());
        assert!(r(r#"{"graph":[{"0":{}}],"dataframe":[]}"#)
            .unwrap_err()
            .contains("no row"));
    }
}
