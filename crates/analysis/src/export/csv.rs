//! CSV of the current tree's metric table: one row per node in pre-order, with its
//! call path, so spreadsheets and pandas read it directly.
//!
//! Rows are written as they are made: a path is built from the one before it (the
//! nodes in common kept), never all at once, and a path deeper than [`PATH_LEVELS`]
//! keeps its root and its last levels around `…N levels…`. Holding every path made a
//! 100,000-deep chain need memory by the square of its depth, and so would its output.

use std::collections::HashMap;
use std::io::Write;

use crate::model::paths::{push_segment, sibling_numbers};
use crate::model::{Cct, PreOrder, Profile};

/// The most levels a row's `path` shows whole.
pub const PATH_LEVELS: usize = 256;

/// The path of the node of the last row, as segments, and where each node sits in it.
struct Paths<'a> {
    cct: &'a Cct,
    numbers: Vec<u32>,
    chain: Vec<(u32, String)>,
    at: HashMap<u32, usize>,
}

impl<'a> Paths<'a> {
    fn new(cct: &'a Cct) -> Paths<'a> {
        Paths {
            cct,
            numbers: sibling_numbers(cct),
            chain: Vec::new(),
            at: HashMap::new(),
        }
    }

    /// `n`'s path (`model::paths::path_of`'s text, bounded to `PATH_LEVELS`).
    fn of(&mut self, n: u32) -> String {
        // Up from `n` to the first ancestor already on the chain: one step for a row
        // that follows its parent in pre-order.
        let mut up = Vec::new();
        let mut x = Some(n);
        let keep = loop {
            match x {
                None => break 0,
                Some(v) => match self.at.get(&v) {
                    Some(&i) => break i + 1,
                    None => {
                        up.push(v);
                        x = self.cct.parent(v);
                    }
                },
            }
        };
        for (v, _) in self.chain.drain(keep..) {
            self.at.remove(&v);
        }
        for v in up.into_iter().rev() {
            let mut s = String::new();
            push_segment(&mut s, self.cct, v, &self.numbers);
            self.at.insert(v, self.chain.len());
            self.chain.push((v, s));
        }
        let len = self.chain.len();
        // Only the levels shown are visited: a row costs at most PATH_LEVELS.
        let join = |from: usize| -> String {
            let segs: Vec<&str> = self.chain[from..].iter().map(|(_, s)| s.as_str()).collect();
            segs.join("/")
        };
        if len <= PATH_LEVELS {
            return join(0);
        }
        let skipped = len - PATH_LEVELS;
        format!(
            "{}/…{skipped} levels…/{}",
            self.chain[0].1,
            join(len - (PATH_LEVELS - 1))
        )
    }
}

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
    let mut paths = Paths::new(&p.cct);
    for &pos in positions {
        let n = po.node[pos as usize];
        let f = p.cct.frame(n);
        let mut row = vec![
            field(&paths.of(n)),
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
