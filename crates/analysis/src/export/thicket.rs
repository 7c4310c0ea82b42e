//! The tree as Thicket JSON, the form `Thicket.to_json` writes and `Thicket.from_json`
//! reads (the reader is `readers::thicket`): the graph once, then one dataframe row per
//! (node, profile). An ensemble's members are the profiles (their `metric@label`
//! columns, without grove's statistics columns); a single profile is one profile.

use std::collections::HashSet;
use std::io::Write;

use serde_json::{json, Map, Value};

use crate::ensemble::{split_column, STATS};
use crate::model::metrics::base_of_inclusive;
use crate::model::{PreOrder, Profile};

/// Metadata grove adds itself (the member's file) or writes as the profile's id.
const NOT_METADATA: &[&str] = &["file", "profile"];

/// A metadata value as Thicket had it: numbers as numbers, the rest as text.
fn meta_value(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        return json!(i);
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && !v.trim().is_empty() => json!(x),
        _ => json!(v),
    }
}

/// One Thicket profile: grove's label, its Thicket id, and its columns as
/// (metric name in Thicket, column name in grove).
struct Member {
    label: String,
    id: Value,
    cols: Vec<(String, String)>,
}

/// The profiles of `p`.
fn members(p: &Profile) -> Vec<Member> {
    let names = p.metrics.names();
    let mut labels: Vec<String> = Vec::new();
    for n in &names {
        if let Some((_, l)) = split_column(n) {
            if !STATS.contains(&l) && !labels.iter().any(|x| x == l) {
                labels.push(l.to_string());
            }
        }
    }
    if labels.is_empty() {
        // The file's stem, as Thicket's profile_mapping names a profile by its file.
        let stem = p.source.label.split('.').next().unwrap_or_default();
        let label = if stem.is_empty() {
            "0".to_string()
        } else {
            stem.to_string()
        };
        let id = p
            .meta_value("profile")
            .map(meta_value)
            .unwrap_or_else(|| json!(label));
        let cols = names.iter().map(|n| (n.clone(), n.clone())).collect();
        return vec![Member { label, id, cols }];
    }
    labels
        .into_iter()
        .map(|l| {
            // Thicket's own profile ids survive a round trip through grove.
            let id = p
                .meta_value(&format!("{l}.profile"))
                .map(meta_value)
                .unwrap_or_else(|| json!(l));
            let cols = names
                .iter()
                .filter_map(|n| match split_column(n) {
                    Some((m, ll)) if ll == l => Some((m.to_string(), n.clone())),
                    _ => None,
                })
                .collect();
            Member { label: l, id, cols }
        })
        .collect()
}

pub fn write<W: Write>(
    out: &mut W,
    p: &Profile,
    po: &PreOrder,
    positions: &[u32],
) -> std::io::Result<()> {
    let nodes: Vec<u32> = positions.iter().map(|&x| po.node[x as usize]).collect();
    let keep: HashSet<u32> = nodes.iter().copied().collect();
    // Hatchet numbers nodes in traversal order; so does this file.
    let id_of: std::collections::HashMap<u32, usize> =
        nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    // Written by hand in node order with `data` first: Hatchet makes roots in the
    // order of the keys, and readers recognise the form by `{"data":` (serde_json's
    // maps would sort both).
    let mut graph: Vec<u8> = b"{".to_vec();
    for (i, &n) in nodes.iter().enumerate() {
        let f = p.cct.frame(n);
        let mut data = Map::new();
        data.insert("name".into(), json!(f.name.to_string()));
        data.insert("type".into(), json!(f.kind.to_string()));
        for (k, v) in &f.attrs {
            data.insert(k.to_string(), json!(v.to_string()));
        }
        let children: Vec<usize> = po
            .child_positions(po.pos[n as usize])
            .map(|c| po.node[c as usize])
            .filter(|c| keep.contains(c))
            .map(|c| id_of[&c])
            .collect();
        let parents: Vec<usize> = p
            .cct
            .parent(n)
            .and_then(|q| id_of.get(&q).copied())
            .into_iter()
            .collect();
        if i > 0 {
            graph.push(b',');
        }
        graph.extend_from_slice(
            format!(
                "\"{i}\":{{\"data\":{},\"children\":{},\"parents\":{}}}",
                Value::Object(data),
                json!(children),
                json!(parents)
            )
            .as_bytes(),
        );
    }
    graph.push(b'}');
    let members = members(p);
    let mut rows = Vec::new();
    for (i, &n) in nodes.iter().enumerate() {
        for Member { id, cols, .. } in &members {
            let mut row = Map::new();
            row.insert("node".into(), json!(i));
            row.insert("profile".into(), id.clone());
            let mut any = false;
            for (m, col) in cols {
                let v = p.metrics.get(col, n);
                any |= v.is_finite();
                row.insert(
                    m.clone(),
                    if v.is_finite() { json!(v) } else { Value::Null },
                );
            }
            // A node a profile does not have gets no row, as in a Thicket union.
            if any {
                row.insert("name".into(), json!(p.cct.frame(n).name.to_string()));
                rows.push(Value::Object(row));
            }
        }
    }
    let mut metric_names: Vec<String> = Vec::new();
    for member in &members {
        for (m, _) in &member.cols {
            if !metric_names.contains(m) {
                metric_names.push(m.clone());
            }
        }
    }
    let (inc, exc): (Vec<String>, Vec<String>) = metric_names
        .into_iter()
        .partition(|m| base_of_inclusive(m).is_some());
    let metadata: Vec<Value> = members
        .iter()
        .map(|Member { label: l, id, .. }| {
            let mut row = Map::new();
            row.insert("profile".into(), id.clone());
            let single = members.len() == 1 && split_column_free(p);
            for (k, v) in &p.meta {
                let key = if single {
                    Some(k.as_str())
                } else {
                    k.strip_prefix(&format!("{l}."))
                };
                if let Some(key) = key.filter(|k| !NOT_METADATA.contains(k)) {
                    row.insert(key.to_string(), meta_value(v));
                }
            }
            Value::Object(row)
        })
        .collect();
    let profiles: Vec<Value> = members.iter().map(|m| m.id.clone()).collect();
    let mapping: Map<String, Value> = members
        .iter()
        .map(|Member { label: l, id, .. }| {
            let key = match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (key, json!(l))
        })
        .collect();
    // Keys in Thicket's order: readers (grove's among them) recognise the form by
    // `graph` coming first, and serde_json's maps would sort them.
    let fields: [(&str, Value); 9] = [
        ("graph", Value::Null),
        ("dataframe_indices", json!(["node", "profile"])),
        ("dataframe", Value::Array(rows)),
        ("metadata", Value::Array(metadata)),
        ("inclusive_metrics", json!(inc)),
        ("exclusive_metrics", json!(exc)),
        ("profile", Value::Array(profiles)),
        ("profile_idx_name", json!("profile")),
        ("profile_mapping", Value::Object(mapping)),
    ];
    out.write_all(b"{")?;
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, k)?;
        out.write_all(b":")?;
        if *k == "graph" {
            out.write_all(b"[")?;
            out.write_all(&graph)?;
            out.write_all(b"]")?;
        } else {
            serde_json::to_writer(&mut *out, v)?;
        }
    }
    out.write_all(b"}\n")
}

/// True when the profile is not an ensemble (no `metric@label` columns).
fn split_column_free(p: &Profile) -> bool {
    p.metrics.names().iter().all(|n| split_column(n).is_none())
}
