//! cProfile/profile statistics (`pstats` files: `cProfile.run(..., filename)`,
//! `Stats.dump_stats`), the Python `marshal` encoding of one dict
//! `{(file, line, function): (primitive calls, total calls, tt, ct, callers)}`, written
//! by Python 2 or 3 (decoded by `marshal.rs`).
//!
//! A pstats file is a call *graph*: one entry per function, with the callers that
//! called it. Hatchet (`from_cprofile`) keeps that graph, a node per function with
//! several parents. grove's tree gives each node one parent, so the graph becomes a
//! spanning tree with the same nodes and values:
//! - one node per function, keyed as Hatchet keys it (name, file base name, line);
//!   metrics are the function's totals from the file (`time` = tt, `time (inc)` = ct,
//!   `numcalls` = primitive calls, `nativecalls` = all calls, Hatchet's names), so
//!   node count and per-metric totals equal Hatchet's;
//! - the roots are the functions no one called (Hatchet's roots);
//! - every other function hangs under its heaviest caller (the caller edge with the
//!   most cumulative time), chosen greedily from the roots outwards, so the tree has
//!   no cycle: recursion (a function calling itself, or a cycle of functions) is cut
//!   where it would close, and the other callers are listed in the node's `callers`
//!   attribute. A cycle no root reaches becomes a root of its own (with a warning).

use std::collections::HashMap;
use std::io::Read;

use super::call_graph::spanning_tree;
use super::marshal::{self, Value};
use crate::model::{Cct, Format, Frame, MetricTable, Profile};

/// A function's totals, as the file holds them.
struct Func {
    file: String,
    line: i64,
    name: String,
    /// Primitive (non-recursive) calls, all calls, exclusive and inclusive seconds.
    stats: [f64; 4],
    /// (caller, cumulative seconds of this function's calls from it).
    callers: Vec<(usize, f64)>,
}

/// The functions of a pstats dict, in file order, with Hatchet's merging key.
fn functions(v: &Value, warnings: &mut Vec<String>) -> Result<Vec<Func>, String> {
    let Value::Dict(items) = v else {
        return Err("not a pstats file: the marshal data is not a dict".into());
    };
    let key_of = |k: &Value| -> Option<(String, i64, String)> {
        let Value::Seq(t) = k else { return None };
        match &t[..] {
            [f, l, n] => Some((
                f.as_str()?.to_string(),
                l.as_f64()? as i64,
                n.as_str()?.to_string(),
            )),
            _ => None,
        }
    };
    // Hatchet's node key: the function name, the file's base name and the line.
    let hkey = |(f, l, n): &(String, i64, String)| {
        format!("{n}:{}:{l}", f.rsplit('/').next().unwrap_or(f))
    };
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut funcs = Vec::new();
    let mut raw_callers = Vec::new();
    let mut merged = 0;
    for (k, val) in items {
        let key = key_of(k).ok_or("not a pstats file: a key is not (file, line, function)")?;
        let Value::Seq(s) = val else {
            return Err(format!(
                "not a pstats file: the entry of {} is not a tuple",
                key.2
            ));
        };
        if s.len() < 5 {
            return Err(format!(
                "not a pstats file: the entry of {} is short",
                key.2
            ));
        }
        let mut stats = [0.0; 4];
        for (i, x) in stats.iter_mut().enumerate() {
            *x = s[i].as_f64().ok_or_else(|| {
                format!("not a pstats file: a value of {} is not a number", key.2)
            })?;
        }
        let h = hkey(&key);
        if index.contains_key(&h) {
            // Hatchet keeps the first entry's values for a repeated key; so does grove.
            merged += 1;
            raw_callers.push(None);
            continue;
        }
        index.insert(h, funcs.len());
        raw_callers.push(Some((funcs.len(), &s[4])));
        let (file, line, name) = key;
        funcs.push(Func {
            file,
            line,
            name,
            stats,
            callers: Vec::new(),
        });
    }
    let mut unknown = 0;
    for (dst, callers) in raw_callers.into_iter().flatten() {
        let Value::Dict(cs) = callers else {
            return Err(format!(
                "not a pstats file: the callers of {} are not a dict",
                funcs[dst].name
            ));
        };
        for (ck, cv) in cs {
            let Some(src) = key_of(ck).and_then(|k| index.get(&hkey(&k)).copied()) else {
                unknown += 1;
                continue;
            };
            // cProfile: (calls, primitive calls, tt, ct); the old `profile` module: a count.
            let weight = match cv {
                Value::Seq(e) => e.get(3).and_then(Value::as_f64).unwrap_or(0.0),
                other => other.as_f64().unwrap_or(0.0),
            };
            if !funcs[dst].callers.iter().any(|c| c.0 == src) {
                funcs[dst].callers.push((src, weight));
            }
        }
    }
    if merged > 0 {
        warnings.push(format!(
            "{merged} function(s) share a name, file name and line with another and were merged (as Hatchet does)"
        ));
    }
    if unknown > 0 {
        warnings.push(format!(
            "{unknown} caller(s) have no entry of their own and were left out"
        ));
    }
    Ok(funcs)
}

/// Reads a pstats file's bytes into one profile.
pub fn read_bytes(bytes: &[u8]) -> Result<(Cct, MetricTable, Vec<String>), String> {
    let v = marshal::decode(bytes)?;
    let mut warnings = Vec::new();
    let funcs = functions(&v, &mut warnings)?;
    if funcs.is_empty() {
        return Err("the pstats file holds no function".into());
    }
    let callers: Vec<Vec<(usize, f64)>> = funcs.iter().map(|f| f.callers.clone()).collect();
    let weight: Vec<f64> = funcs.iter().map(|f| f.stats[3]).collect();
    let (parent, order) = spanning_tree(&callers, &weight, &mut warnings);
    let mut cct = Cct::default();
    let mut node = vec![0u32; funcs.len()];
    for &f in &order {
        let func = &funcs[f];
        let mut frame = Frame::new(&func.name, "function");
        frame.set_attr("file", &func.file);
        frame.set_attr("line", &func.line.to_string());
        let others: Vec<&str> = func
            .callers
            .iter()
            .filter(|c| Some(c.0) != parent[f])
            .map(|c| funcs[c.0].name.as_str())
            .collect();
        if !others.is_empty() {
            frame.set_attr("callers", &others.join(", "));
        }
        node[f] = cct.add_node(parent[f].map(|p| node[p]), frame);
    }
    let column = |i: usize| {
        let mut v = vec![0.0; funcs.len()];
        for (f, func) in funcs.iter().enumerate() {
            v[node[f] as usize] = func.stats[i];
        }
        v
    };
    let mut m = MetricTable::new(cct.len());
    m.set("time", "s", column(2));
    m.set("time (inc)", "s", column(3));
    m.set("numcalls", "", column(0));
    m.set("nativecalls", "", column(1));
    cct.finish();
    Ok((cct, m, warnings))
}

/// Whether the bytes start like a marshalled pstats dict: `{` (maybe flagged), then a
/// tuple of three.
pub fn sniff(head: &[u8]) -> bool {
    match head {
        [0x7b | 0xfb, t, 3, 0, 0, 0, ..] if t & 0x7f == b'(' => true,
        [0x7b | 0xfb, t, 3, ..] if t & 0x7f == b')' => true,
        _ => false,
    }
}

pub struct CProfile;

impl super::Reader for CProfile {
    fn name(&self) -> &'static str {
        "cProfile/pstats"
    }

    fn format(&self) -> Format {
        Format::CProfile
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        !probe.utf16 && sniff(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (mut input, source) = input.into_stream()?;
        let mut bytes = Vec::new();
        input
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read: {e}"))?;
        let (cct, metrics, warnings) = read_bytes(&bytes)?;
        Ok(vec![Profile {
            source,
            dialect: "Python cProfile (pstats)".into(),
            cct,
            metrics,
            events: None,
            counters: None,
            meta: Vec::new(),
            warnings,
            default_metric: "time".into(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }
    fn key(n: &str) -> Value {
        Value::Seq(vec![s("m.py"), Value::Int(n.len() as i64), s(n)])
    }
    fn entry(tt: f64, ct: f64, callers: Vec<(&str, f64)>) -> Value {
        let cs = callers
            .into_iter()
            .map(|(c, w)| {
                let e = Value::Seq(vec![
                    Value::Int(1),
                    Value::Int(1),
                    Value::Float(0.0),
                    Value::Float(w),
                ]);
                (key(c), e)
            })
            .collect();
        Value::Seq(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Float(tt),
            Value::Float(ct),
            Value::Dict(cs),
        ])
    }

    #[test]
    fn callers_become_a_spanning_tree_with_cycles_cut() {
        // main -> a (heavy), main -> b, b -> a (light), a -> a (recursion), c <-> d (a
        // cycle no root reaches).
        let v = Value::Dict(vec![
            (key("main"), entry(1.0, 10.0, vec![])),
            (
                key("a"),
                entry(5.0, 7.0, vec![("main", 6.0), ("b", 1.0), ("a", 3.0)]),
            ),
            (key("b"), entry(2.0, 3.0, vec![("main", 3.0)])),
            (key("cc"), entry(1.0, 2.0, vec![("ddd", 2.0)])),
            (key("ddd"), entry(1.0, 1.5, vec![("cc", 1.0)])),
        ]);
        let mut w = Vec::new();
        let funcs = functions(&v, &mut w).unwrap();
        let callers: Vec<_> = funcs.iter().map(|f| f.callers.clone()).collect();
        let weight: Vec<f64> = funcs.iter().map(|f| f.stats[3]).collect();
        let (parent, _) = spanning_tree(&callers, &weight, &mut w);
        assert_eq!(parent, vec![None, Some(0), Some(0), None, Some(3)]);
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn not_pstats() {
        assert!(read_bytes(b"i\x01\x00\x00\x00").is_err());
        assert!(read_bytes(b"{0").unwrap_err().contains("no function"));
        assert!(read_bytes(b"{)\x03").is_err());
        assert!(sniff(b"{(\x03\x00\x00\x00s"));
        assert!(!sniff(b"{\"a\": 1}"));
    }
}
