//! CSV of the current tree's metric table: one row per node in pre-order, with its
//! call path, so spreadsheets and pandas read it directly.

use std::io::Write;

use crate::model::paths::paths_for;
use crate::model::{PreOrder, Profile};

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The attribute columns (defined beside the reader, which tells them from metrics).
pub use crate::readers::grove_export::csv::ATTR_COLUMNS;

pub fn write<W: Write>(
    out: &mut W,
    p: &Profile,
    po: &PreOrder,
    positions: &[u32],
) -> std::io::Result<()> {
    let names = p.metrics.names();
    let mut head = vec![
        "path".to_string(),
        "name".into(),
        "type".into(),
        "depth".into(),
    ];
    head.extend(names.iter().map(|n| field(n)));
    let attrs: Vec<&str> = ATTR_COLUMNS
        .iter()
        .copied()
        .filter(|k| {
            positions
                .iter()
                .any(|&pos| p.cct.frame(po.node[pos as usize]).attr(k).is_some())
        })
        .collect();
    head.extend(attrs.iter().map(|k| k.to_string()));
    // A tree unfolded from a call graph: every row's figures are estimates.
    let estimated = p.estimated_paths();
    if estimated {
        head.push("estimated".into());
    }
    writeln!(out, "{}", head.join(","))?;
    let cols: Vec<&[f64]> = names
        .iter()
        .map(|n| p.metrics.values(n).unwrap_or(&[]))
        .collect();
    let nodes: Vec<u32> = positions.iter().map(|&q| po.node[q as usize]).collect();
    let mut paths = paths_for(&p.cct, &nodes).into_iter();
    for &pos in positions {
        let n = po.node[pos as usize];
        let f = p.cct.frame(n);
        let mut row = vec![
            field(&paths.next().unwrap_or_default()),
            field(&f.name),
            field(&f.kind),
            po.depth[pos as usize].to_string(),
        ];
        for c in &cols {
            let v = c.get(n as usize).copied().unwrap_or(f64::NAN);
            row.push(if v.is_finite() {
                format!("{v}")
            } else {
                String::new()
            });
        }
        for k in &attrs {
            row.push(field(f.attr(k).unwrap_or("")));
        }
        if estimated {
            row.push("true".into());
        }
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}
