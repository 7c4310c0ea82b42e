//! cProfile/profile statistics (`pstats` files: `cProfile.run(..., filename)`,
//! `Stats.dump_stats`), the Python `marshal` encoding of one dict
//! `{(file, line, function): (primitive calls, total calls, tt, ct, callers)}`, written
//! by Python 2 or 3 (decoded by `marshal.rs`).
//!
//! A pstats file is a call *graph*: one entry per function, with the callers that
//! called it and, per caller, those calls' count and cumulative time. It becomes the
//! profile's `call_graph` with the file's exact figures: one function per entry, keyed
//! as Hatchet keys it (name, file base name, line), self = `tottime`, inclusive =
//! `cumtime`, calls = all calls; one edge per (caller, callee) with its calls and
//! cumulative time. So the functions' count and figures equal Hatchet's graph and
//! pstats' own `print_stats`.
//!
//! The tree is unfolded from that graph by call path (`call_paths`): roots are the
//! functions no one called, recursion and cycles are cut where they close, and each
//! function's figures (`time` = tt, `numcalls` = primitive calls, `nativecalls` = all
//! calls, Hatchet's names) are split over its paths in proportion to the calls' cost:
//! estimates, which the profile says. Totals equal the file's.

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use super::call_paths::unfold;
use super::marshal::{self, Value};
use crate::model::call_graph::{CallGraph, Function};
use crate::model::{Cct, Format, Frame, MetricTable, Profile};

/// A function's totals, as the file holds them.
struct Func {
    file: String,
    line: i64,
    name: String,
    /// Primitive (non-recursive) calls, all calls, exclusive and inclusive seconds.
    stats: [f64; 4],
    /// (caller, calls from it, cumulative seconds of those calls).
    callers: Vec<(usize, f64, f64)>,
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
            let (count, ct) = match cv {
                Value::Seq(e) => (
                    e.first().and_then(Value::as_f64).unwrap_or(0.0),
                    e.get(3).and_then(Value::as_f64).unwrap_or(0.0),
                ),
                other => (other.as_f64().unwrap_or(0.0), 0.0),
            };
            if !funcs[dst].callers.iter().any(|c| c.0 == src) {
                funcs[dst].callers.push((src, count, ct));
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

/// The file's call graph: tt and ct per function, calls and ct per edge.
fn call_graph(funcs: &[Func]) -> CallGraph {
    let mut g = CallGraph::new(vec![("time".into(), "s".into())]);
    for func in funcs {
        let mut frame = Frame::new(&func.name, "function");
        frame.set_attr("file", &func.file);
        frame.set_attr("line", &func.line.to_string());
        g.add_function(Function {
            frame,
            self_cost: vec![func.stats[2]],
            inclusive: vec![func.stats[3]],
            calls: func.stats[1],
        });
    }
    for (dst, func) in funcs.iter().enumerate() {
        for &(src, count, ct) in &func.callers {
            g.add_call(NodeIndex::new(src), NodeIndex::new(dst), count, &[ct]);
        }
    }
    // Without calls (cachegrind) every function is a root with its own figures.
    g.estimated_paths = g.graph.edge_count() > 0;
    g
}

/// Reads a pstats file's bytes into a tree, its metrics, the call graph and warnings.
pub fn read_bytes(bytes: &[u8]) -> Result<(Cct, MetricTable, CallGraph, Vec<String>), String> {
    let v = marshal::decode(bytes)?;
    let mut warnings = Vec::new();
    let funcs = functions(&v, &mut warnings)?;
    if funcs.is_empty() {
        return Err("the pstats file holds no function".into());
    }
    let g = call_graph(&funcs);
    let paths = unfold(&g);
    let column = |i: usize| {
        let per_func: Vec<f64> = funcs.iter().map(|f| f.stats[i]).collect();
        paths.spread(&per_func, 0)
    };
    let mut m = MetricTable::new(paths.cct.len());
    m.set("time", "s", paths.exclusive(&g, 0));
    m.set("numcalls", "", column(0));
    m.set("nativecalls", "", column(1));
    super::call_paths::warn(&paths, &mut warnings);
    let mut cct = paths.cct;
    m.derive_inclusive(&cct, &["time"]);
    cct.finish();
    Ok((cct, m, g, warnings))
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
        let (bytes, source) = input.into_bytes()?;
        let (cct, metrics, graph, warnings) = read_bytes(&bytes)?;
        Ok(vec![Profile {
            call_graph: Some(graph),
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
    fn callers_become_call_paths_with_cycles_cut() {
        // main -> a, main -> b, b -> a, a -> a (recursion), cc <-> ddd (a cycle no
        // root reaches).
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
        let g = call_graph(&funcs);
        assert_eq!(g.function(1).inclusive, vec![7.0]);
        assert_eq!(g.call(2, 1).unwrap().cost, vec![1.0]);
        let p = unfold(&g);
        // main > a, main > b > a, then the cycle: ddd's caller pays 1 s of its 3 s
        // (its 1 s and its call of cc), so ddd starts a root of its own: ddd > cc.
        assert_eq!(p.func, vec![0, 1, 2, 1, 4, 3]);
        let time = p.exclusive(&g, 0);
        assert_eq!(time.iter().sum::<f64>(), 10.0);
        // a's 5 s split 5:1 by its callers' budgets (main's call carries 6 s, but a
        // path never gets more than a's own weight, 5 s).
        assert!((time[1] - 5.0 * 5.0 / 6.0).abs() < 1e-12, "{time:?}");
    }

    #[test]
    fn not_pstats() {
        assert!(read_bytes(b"i\x01\x00\x00\x00").is_err());
        assert!(read_bytes(b"{0").err().unwrap().contains("no function"));
        assert!(read_bytes(b"{)\x03").is_err());
        assert!(sniff(b"{(\x03\x00\x00\x00s"));
        assert!(!sniff(b"{\"a\": 1}"));
    }
}
