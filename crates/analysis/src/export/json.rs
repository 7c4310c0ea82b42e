//! grove's own JSON tree schema (docs/formats.md, "grove tree --format json"): a flat
//! list of nodes in pre-order with parent ids, so scripts need no recursion.

use std::io::Write;

use crate::model::paths::paths_for;
use crate::model::{PreOrder, Profile, NO_NODE};

pub fn write<W: Write>(
    out: &mut W,
    p: &Profile,
    po: &PreOrder,
    positions: &[u32],
) -> std::io::Result<()> {
    let m = &p.metrics;
    let names = m.names();
    let metrics: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"name": n, "unit": m.unit(n), "inclusive": crate::model::metrics::base_of_inclusive(n).is_some()}))
        .collect();
    let head = serde_json::json!({
        "format": "grove-tree",
        "version": 1,
        "source": {
            "path": p.source.path.as_ref().map(|x| x.display().to_string()),
            "format": p.source.format.label(),
            "dialect": p.dialect,
        },
        "default_metric": p.default_metric,
        "metrics": metrics,
    });
    let mut head = head;
    // A tree unfolded from a call graph: every figure is an estimate.
    if p.estimated_paths() {
        head["estimated"] = crate::model::call_graph::ESTIMATED_NOTE.into();
    }
    let head = head.to_string();
    out.write_all(&head.as_bytes()[..head.len() - 1])?;
    out.write_all(b",\"nodes\":[\n")?;
    let cols: Vec<(&String, &[f64])> = names
        .iter()
        .filter_map(|n| m.values(n).map(|v| (n, v)))
        .collect();
    let nodes: Vec<u32> = positions.iter().map(|&q| po.node[q as usize]).collect();
    let mut paths = paths_for(&p.cct, &nodes).into_iter();
    for (i, &pos) in positions.iter().enumerate() {
        let n = po.node[pos as usize];
        let parent = po.parent(pos);
        let f = p.cct.frame(n);
        let mut vals = serde_json::Map::new();
        for (name, v) in &cols {
            let x = v[n as usize];
            vals.insert(
                (*name).clone(),
                if x.is_finite() {
                    serde_json::json!(x)
                } else {
                    serde_json::Value::Null
                },
            );
        }
        let attrs: serde_json::Map<String, serde_json::Value> = f
            .attrs
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
            .collect();
        let node = serde_json::json!({
            "id": n,
            "parent": if parent == NO_NODE { serde_json::Value::Null } else { serde_json::json!(po.node[parent as usize]) },
            "depth": po.depth[pos as usize],
            "name": &*f.name,
            "type": &*f.kind,
            "path": paths.next().unwrap_or_default(),
            "attrs": attrs,
            "metrics": vals,
        });
        if i > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(node.to_string().as_bytes())?;
    }
    out.write_all(b"\n]}\n")?;
    Ok(())
}
