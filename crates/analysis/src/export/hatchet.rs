//! The tree as a Hatchet literal (the reader is `readers::hatchet`).

use std::io::Write;

use crate::model::{Cct, MetricTable};

/// Writes the tree as a Hatchet literal that `GraphFrame.from_literal` loads: every
/// node has `frame.name` and `frame.type`, and the metrics it has a value for (finite
/// numbers only; a missing key is NaN to Hatchet).
/// `keep` limits the nodes written (children of a dropped node are dropped too).
pub fn write<W: Write>(
    out: &mut W,
    cct: &Cct,
    metrics: &MetricTable,
    roots: &[u32],
    children: &dyn Fn(u32) -> Vec<u32>,
) -> std::io::Result<()> {
    let cols: Vec<(String, &[f64])> = metrics
        .names()
        .into_iter()
        .filter_map(|n| metrics.values(&n).map(|v| (n, v)))
        .collect();
    let node_json = |n: u32| -> String {
        let f = cct.frame(n);
        let mut frame = serde_json::Map::new();
        frame.insert("name".into(), f.name.to_string().into());
        frame.insert("type".into(), f.kind.to_string().into());
        for (k, v) in &f.attrs {
            frame.insert(k.to_string(), v.to_string().into());
        }
        let mut m = serde_json::Map::new();
        for (name, vals) in &cols {
            // A value the node does not have (an ensemble member without the node)
            // is left out, not written as 0: Hatchet's `from_literal` reads a missing
            // key as NaN, and so does grove, so the file reopens with the same gaps.
            let v = vals[n as usize];
            if v.is_finite() {
                m.insert(name.clone(), serde_json::json!(v));
            }
        }
        format!(
            "{{\"name\":{},\"frame\":{},\"metrics\":{}",
            serde_json::Value::String(f.name.to_string()),
            serde_json::Value::Object(frame),
            serde_json::Value::Object(m)
        )
    };
    out.write_all(b"[")?;
    // Stack of remaining sibling lists.
    let mut stack: Vec<(Vec<u32>, usize)> = vec![(roots.to_vec(), 0)];
    while let Some((list, i)) = stack.last_mut() {
        if *i >= list.len() {
            stack.pop();
            if stack.is_empty() {
                break;
            }
            out.write_all(b"]}")?;
            continue;
        }
        let n = list[*i];
        if *i > 0 {
            out.write_all(b",")?;
        }
        *i += 1;
        out.write_all(node_json(n).as_bytes())?;
        let kids = children(n);
        if kids.is_empty() {
            out.write_all(b"}")?;
        } else {
            out.write_all(b",\"children\":[")?;
            stack.push((kids, 0));
        }
    }
    out.write_all(b"]\n")?;
    Ok(())
}

/// The current tree's rows as a Hatchet literal; with a focus, the focused node is the
/// only root.
pub fn write_tree(t: &super::formats::Tree<'_>, mut out: &mut dyn Write) -> std::io::Result<()> {
    let po = t.po;
    let keep: std::collections::HashSet<u32> =
        t.positions.iter().map(|&x| po.node[x as usize]).collect();
    let roots: Vec<u32> = match t.focus {
        Some(f) => vec![f],
        None => po
            .root_positions()
            .map(|r| po.node[r as usize])
            .filter(|n| keep.contains(n))
            .collect(),
    };
    let kids = |n: u32| -> Vec<u32> {
        po.child_positions(po.pos[n as usize])
            .map(|c| po.node[c as usize])
            .filter(|c| keep.contains(c))
            .collect()
    };
    write(&mut out, &t.profile.cct, &t.profile.metrics, &roots, &kids)
}
