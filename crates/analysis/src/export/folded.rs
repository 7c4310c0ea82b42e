//! The tree as folded stacks (the reader is `readers::folded`).

use crate::model::Cct;

/// Writes the tree as folded stacks: one line per node with exclusive samples.
pub fn write<W: std::io::Write>(
    out: &mut W,
    cct: &Cct,
    exclusive: &[f64],
    nodes: impl Iterator<Item = u32>,
) -> std::io::Result<()> {
    for n in nodes {
        let v = exclusive[n as usize];
        if !(v.is_finite() && v > 0.0) {
            continue;
        }
        let path: Vec<&str> = cct.path(n).iter().map(|&p| cct.name(p)).collect();
        if v.fract() == 0.0 {
            writeln!(out, "{} {}", path.join(";"), v as i64)?;
        } else {
            writeln!(out, "{} {}", path.join(";"), v)?;
        }
    }
    Ok(())
}

/// The current tree's rows as folded stacks of the primary metric's exclusive column.
pub fn write_tree(
    t: &super::formats::Tree<'_>,
    mut out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let exc = t.profile.metrics.values(t.metric).unwrap_or(&[]);
    write(
        &mut out,
        &t.profile.cct,
        exc,
        t.positions.iter().map(|&x| t.po.node[x as usize]),
    )
}
