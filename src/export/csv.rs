//! CSV of the current tree's metric table: one row per node in pre-order, with its
//! call path, so spreadsheets and pandas read it directly.

use std::io::Write;

use crate::model::paths::path_of;
use crate::model::{PreOrder, Profile};

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

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
    writeln!(out, "{}", head.join(","))?;
    let cols: Vec<&[f64]> = names
        .iter()
        .map(|n| p.metrics.values(n).unwrap_or(&[]))
        .collect();
    for &pos in positions {
        let n = po.node[pos as usize];
        let f = p.cct.frame(n);
        let mut row = vec![
            field(&path_of(&p.cct, n)),
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
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}
