//! `grove tree --format csv` read back: the header `path,name,type,depth`, then the
//! metric columns, then the attribute columns the export names (`ATTR_COLUMNS`), and
//! `estimated` when the tree was unfolded from a call graph.

use std::io::BufRead;

use super::Rows;
use crate::model::{Format, Frame, Profile, Source};

/// Node attributes that get a column when a written node has them: what an execution
/// trace attaches to operators and the framework ops of an XPlane, so a spreadsheet
/// can group by them. Other attributes stay out (the JSON export has them all).
pub const ATTR_COLUMNS: &[&str] = &[
    "op_schema",
    "input_shapes",
    "input_types",
    "input_strides",
    "output_shapes",
    "output_types",
    "tf_op",
    "hlo_op",
    "hlo_module",
];

const HEAD: &[u8] = b"path,name,type,depth";

/// A header that starts `path,name,type,depth` and ends its line there or with a comma.
pub fn claims(head: &[u8]) -> bool {
    head.starts_with(HEAD) && matches!(head.get(HEAD.len()), Some(b',' | b'\n' | b'\r') | None)
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    let table = crate::readers::rocprof::csv::parse(&text)?;
    let (head, body) = table.split_first().ok_or("no header")?;
    let mut metric_cols = Vec::new();
    let mut attr_cols = Vec::new();
    let mut estimated = false;
    for (i, h) in head.iter().enumerate().skip(4) {
        if ATTR_COLUMNS.contains(&h.as_str()) {
            attr_cols.push((i, h.as_str()));
        } else if h == "estimated" && i + 1 == head.len() {
            estimated = true;
        } else {
            metric_cols.push((i, h.as_str()));
        }
    }
    let mut rows = Rows {
        frames: Vec::with_capacity(body.len()),
        depth: Vec::with_capacity(body.len()),
        metrics: metric_cols
            .iter()
            .map(|(_, h)| (h.to_string(), String::new(), Vec::with_capacity(body.len())))
            .collect(),
    };
    let mut bad = 0usize;
    for (line, row) in body.iter().enumerate() {
        let field = |i: usize| row.get(i).map(String::as_str).unwrap_or("");
        let depth: usize = field(3)
            .parse()
            .map_err(|_| format!("row {}: depth {:?} is not a number", line + 2, field(3)))?;
        let mut f = Frame::new(field(1), field(2));
        for &(i, k) in &attr_cols {
            if !field(i).is_empty() {
                f.set_attr(k, field(i));
            }
        }
        for ((i, _), (_, _, col)) in metric_cols.iter().zip(rows.metrics.iter_mut()) {
            let s = field(*i);
            col.push(if s.is_empty() {
                f64::NAN
            } else {
                s.parse().unwrap_or_else(|_| {
                    bad += 1;
                    f64::NAN
                })
            });
        }
        rows.frames.push(f);
        rows.depth.push(depth);
    }
    let mut warnings = vec![
        "a grove CSV carries no units: its metrics are read as plain numbers (the JSON \
         and Parquet exports keep them)"
            .to_string(),
    ];
    if bad > 0 {
        warnings.push(format!("{bad} metric value(s) are not numbers: left empty"));
    }
    if estimated {
        warnings.push(format!(
            "as written: {}",
            crate::model::call_graph::ESTIMATED_NOTE
        ));
    }
    source.format = Format::GroveExport;
    Ok(super::profile(
        rows,
        source,
        "grove tree CSV",
        None,
        warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_form() {
        let t = b"path,name,type,depth,time,time (inc),op_schema\n\
            main,main,function,0,1,3,\n\
            \"main/a,b\",\"a,b\",function,1,2,,aten::x(Tensor)\n";
        assert!(claims(t));
        assert!(!claims(b"path,name,type,depthx"));
        let src = Source {
            path: None,
            format: Format::GroveExport,
            size: 0,
            gzip: false,
            label: "t".into(),
        };
        let p = read(&mut &t[..], src).unwrap();
        assert_eq!(p.cct.len(), 2);
        assert_eq!(p.cct.name(1), "a,b");
        assert_eq!(p.cct.frame(1).attr("op_schema"), Some("aten::x(Tensor)"));
        assert!(p.metrics.get("time (inc)", 1).is_nan());
        assert_eq!(p.default_metric, "time");
    }
}
