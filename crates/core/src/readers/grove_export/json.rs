//! `grove tree --format json` read back: the `grove-tree` object (docs/formats.md),
//! nodes in pre-order with their parent's id, metrics with their units, attributes.

use std::collections::HashMap;
use std::io::BufRead;

use serde_json::Value;

use super::Rows;
use crate::model::{Format, Frame, Profile, Source};

/// An object with the top-level key `"format"` valued `"grove-tree"` before its
/// `nodes` (the keys are written sorted: `default_metric`, `estimated`, `format`, ...).
pub fn claims(head: &[u8]) -> bool {
    let squeezed: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    const KEY: &[u8] = b"\"format\":\"grove-tree\"";
    let before_nodes = squeezed
        .windows(8)
        .position(|w| w == b"\"nodes\":")
        .unwrap_or(squeezed.len());
    squeezed.starts_with(b"{")
        && squeezed[..before_nodes]
            .windows(KEY.len())
            .any(|w| w == KEY)
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let v: Value = crate::json::from_reader(input).map_err(|e| e.to_string())?;
    let version = v.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version != 1 {
        return Err(format!(
            "a grove-tree JSON of version {version}; this grove reads version 1"
        ));
    }
    let metrics: Vec<(String, String)> = v
        .get("metrics")
        .and_then(Value::as_array)
        .ok_or("no 'metrics' list")?
        .iter()
        .map(|m| (text(m.get("name")), text(m.get("unit"))))
        .collect();
    let nodes = v
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or("no 'nodes' list")?;
    let mut warnings = Vec::new();
    let mut depth_of: HashMap<i64, usize> = HashMap::new();
    let mut rows = Rows {
        frames: Vec::with_capacity(nodes.len()),
        depth: Vec::with_capacity(nodes.len()),
        metrics: metrics
            .iter()
            .map(|(n, u)| (n.clone(), u.clone(), Vec::with_capacity(nodes.len())))
            .collect(),
    };
    let mut orphans = 0usize;
    for node in nodes {
        let mut f = Frame::new(&text(node.get("name")), &text(node.get("type")));
        if let Some(attrs) = node.get("attrs").and_then(Value::as_object) {
            for (k, a) in attrs {
                f.set_attr(k, &text(Some(a)));
            }
        }
        // The depth below the parent written, so the tree is the file's even where a
        // filtered export left out levels; a parent not in the file makes a root.
        let d = match node.get("parent").and_then(Value::as_i64) {
            None => 0,
            Some(p) => match depth_of.get(&p) {
                Some(&pd) => pd + 1,
                None => {
                    orphans += 1;
                    0
                }
            },
        };
        if let Some(id) = node.get("id").and_then(Value::as_i64) {
            depth_of.insert(id, d);
        }
        let vals = node.get("metrics");
        for (name, _, col) in rows.metrics.iter_mut() {
            col.push(
                vals.and_then(|m| m.get(name.as_str()))
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::NAN),
            );
        }
        rows.frames.push(f);
        rows.depth.push(d);
    }
    if orphans > 0 {
        warnings.push(format!(
            "{orphans} node(s) name a parent that is not in the file: they are roots"
        ));
    }
    if let Some(note) = v.get("estimated").and_then(Value::as_str) {
        warnings.push(format!("as written: {note}"));
    }
    source.format = Format::GroveExport;
    let written = v.get("source");
    let mut p = super::profile(
        rows,
        source,
        "grove tree JSON",
        v.get("default_metric").and_then(Value::as_str),
        warnings,
    );
    for key in ["path", "format", "dialect"] {
        let val = text(written.and_then(|s| s.get(key)));
        if !val.is_empty() {
            p.meta.push((format!("written from.{key}"), val));
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_form() {
        let j = br#"{"default_metric":"time","format":"grove-tree","version":1,"source":{"path":"x","format":"f","dialect":""},"metrics":[{"name":"time","unit":"ns","inclusive":false},
            {"name":"time (inc)","unit":"ns","inclusive":true}],"nodes":[
            {"id":0,"parent":null,"depth":0,"name":"main","type":"function","path":"main","attrs":{"file":"a.c"},"metrics":{"time":1,"time (inc)":3}},
            {"id":4,"parent":0,"depth":1,"name":"f","type":"function","path":"main/f","attrs":{},"metrics":{"time":2,"time (inc)":null}}
            ]}"#;
        assert!(claims(j));
        let src = Source {
            path: None,
            format: Format::GroveExport,
            size: 0,
            gzip: false,
            label: "t".into(),
        };
        let p = read(&mut &j[..], src).unwrap();
        assert_eq!(p.cct.len(), 2);
        assert_eq!(p.cct.parent(1), Some(0));
        assert_eq!(p.metrics.unit("time"), "ns");
        assert!(p.metrics.get("time (inc)", 1).is_nan());
        assert_eq!(p.cct.frame(0).attr("file"), Some("a.c"));
        assert_eq!(p.default_metric, "time");
    }
}
