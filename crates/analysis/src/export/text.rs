//! Hatchet's `tree()` text layout:
//! `{indent}{value} [{value2} ...] {name}` with `├─ │  └─` guides, roots unguided,
//! children in data order, names over 39 characters shortened, then a legend.
//!
//! Two number styles: human (the default of `grove tree`): a header row naming the
//! columns, values with units (`1.24 s`, `4.14 µs`), the legend likewise; raw
//! (`--raw`, or `--precision N`): Hatchet's exact output, every value with N decimals
//! and no header, for scripts and for comparing with Hatchet.

use std::fmt::Write;

use crate::model::{Cct, MetricTable, PreOrder};
use crate::present::glyphs::Glyphs;
use crate::present::heat::{HeatScale, Sgr};

pub struct TextOptions<'a> {
    pub metrics: &'a [String],
    pub precision: usize,
    pub legend: bool,
    /// ANSI colours for the first metric (Hatchet colours only on a terminal).
    pub color: bool,
    /// The heat colours' escapes for the terminal's depth.
    pub sgr: Sgr,
    pub expand_names: bool,
    pub glyphs: Glyphs,
    /// Hatchet's raw numbers (`precision` decimals, no header) instead of units.
    pub raw: bool,
}

/// Hatchet shortens long names to their first and last 18 characters.
pub fn shorten_name(name: &str, expand: bool) -> String {
    let chars: Vec<char> = name.chars().collect();
    if expand || chars.len() <= 39 {
        return name.to_string();
    }
    let head: String = chars[..18].iter().collect();
    let tail: String = chars[chars.len() - 18..].iter().collect();
    format!("{head}...{tail}")
}

pub fn format_value(v: f64, precision: usize) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else {
        format!("{v:.precision$}")
    }
}

pub fn render(
    cct: &Cct,
    metrics: &MetricTable,
    po: &PreOrder,
    positions: &[u32],
    opt: &TextOptions,
) -> String {
    let mut out = Vec::new();
    render_to(&mut out, cct, metrics, po, positions, opt).expect("writing to memory");
    String::from_utf8(out).expect("the tree's text is UTF-8")
}

/// `render`, written line by line: `grove tree` of a million-node trace streams its
/// tens of megabytes instead of holding them (issue 16: memory).
pub fn render_to(
    out: &mut dyn std::io::Write,
    cct: &Cct,
    metrics: &MetricTable,
    po: &PreOrder,
    positions: &[u32],
    opt: &TextOptions,
) -> std::io::Result<()> {
    // Columns are read node by node, the heat scale's too: an exclusive column kept as
    // a residual is not made whole for the lines printed.
    let cols: Vec<Option<crate::model::metrics::At>> =
        opt.metrics.iter().map(|m| metrics.at(m, cct)).collect();
    let scale = match cols.first() {
        Some(c) if opt.color || opt.legend => {
            let rows = if c.is_some() { metrics.rows() } else { 0 };
            HeatScale::from_values((0..rows).map(|n| c.as_ref().map_or(f64::NAN, |c| c.get(n))))
        }
        _ => HeatScale::default(),
    };
    let g = &opt.glyphs;
    let units: Vec<&str> = opt.metrics.iter().map(|m| metrics.unit(m)).collect();
    let show = |i: usize, v: f64| -> String {
        if opt.raw {
            format_value(v, opt.precision)
        } else {
            crate::present::format::value(v, units[i], g.micro)
        }
    };
    if !opt.raw && !positions.is_empty() {
        // The columns in the order each line prints them.
        let mut head: Vec<&str> = opt.metrics.iter().map(String::as_str).collect();
        head.push("name");
        out.write_all(head.join("  ").as_bytes())?;
        out.write_all(b"\n")?;
    }
    // prefix[d] = the guide text contributed by the ancestor at depth d.
    let mut prefix: Vec<&str> = Vec::new();
    // The shallowest printed nodes are the roots of the output (a focused subtree).
    let base = positions
        .iter()
        .map(|&p| po.depth[p as usize])
        .min()
        .unwrap_or(0) as usize;
    for &p in positions {
        let pi = p as usize;
        let depth = po.depth[pi] as usize - base;
        let node = po.node[pi];
        let last = depth == 0 || is_last_child(po, p, positions);
        prefix.truncate(depth.saturating_sub(1));
        let mut line = String::new();
        for s in &prefix {
            line.push_str(s);
        }
        if depth > 0 {
            line.push_str(if last { g.tree_last } else { g.tree_branch });
            prefix.push(if last { g.tree_space } else { g.tree_pipe });
        }
        for (i, col) in cols.iter().enumerate() {
            let v = col.as_ref().map_or(f64::NAN, |c| c.get(node as usize));
            let text = show(i, v);
            if i == 0 && opt.color {
                match scale.bin(v) {
                    Some(b) => {
                        let _ = write!(line, "{}{text}\x1b[0m", opt.sgr.heat(b));
                    }
                    None => {
                        let _ = write!(line, "\x1b[34m{text}\x1b[0m");
                    }
                }
            } else if i > 0 && opt.color {
                let _ = write!(line, "\x1b[2m{text}\x1b[0m");
            } else {
                line.push_str(&text);
            }
            // Values with units hold a space themselves: two set them apart.
            line.push_str(if opt.raw { " " } else { "  " });
        }
        line.push_str(&shorten_name(cct.name(node), opt.expand_names));
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    if opt.legend {
        if let Some(m) = opt.metrics.first() {
            out.write_all(b"\n")?;
            let unit = if opt.raw { None } else { Some(units[0]) };
            out.write_all(legend(m, &scale, opt.color.then_some(opt.sgr), g, unit).as_bytes())?;
        }
    }
    Ok(())
}

/// Last among the siblings that are printed (hidden ones do not count).
fn is_last_child(po: &PreOrder, p: u32, positions: &[u32]) -> bool {
    let parent = po.parent(p);
    let end = if parent == crate::model::NO_NODE {
        po.len() as u32
    } else {
        po.end[parent as usize]
    };
    let next = po.end[p as usize];
    let i = positions.partition_point(|&q| q < next);
    positions
        .get(i)
        .is_none_or(|&q| q >= end || po.parent(q) != parent)
}

/// Hatchet's legend: the metric's range, then the six bins from the top down.
/// Hatchet prints the legend's numbers with two decimals whatever the tree's precision;
/// with a unit (human output) they are shown with it instead.
pub fn legend(
    metric: &str,
    scale: &HeatScale,
    color: Option<Sgr>,
    g: &Glyphs,
    unit: Option<&str>,
) -> String {
    let num = |v: f64| match unit {
        Some(u) => crate::present::format::value(v, u, g.micro),
        None => format_value(v, 2),
    };
    let mut s = String::new();
    if color.is_some() {
        s.push_str("\x1b[4mLegend\x1b[0m");
    } else {
        s.push_str("Legend");
    }
    let _ = writeln!(
        s,
        " (Metric: {metric} Min: {} Max: {})",
        num(scale.min),
        num(scale.max)
    );
    for (b, (lo, hi)) in scale.ranges().iter().enumerate() {
        let block = if let Some(sgr) = color {
            format!("{}{}\x1b[0m", sgr.heat(b), g.block)
        } else {
            g.block.to_string()
        };
        let _ = match unit {
            Some(_) => writeln!(s, "{block} {} - {}", num(*lo), num(*hi)),
            None => writeln!(s, "{block} {lo:.2} - {hi:.2}"),
        };
    }
    s
}
