//! gprof2dot's DOT call graphs (`gprof2dot -f callgrind|prof|perf … > graph.dot`), as
//! Hatchet's `from_gprof_dot` reads them: one node per DOT node, labelled
//! `module\nname\nINC%\n(EXC%)\nCALLS×`, and `caller -> callee` edges labelled
//! `EDGE%\nCALLS×`. The graph is the profile's `call_graph` with gprof2dot's own
//! figures (a node's inclusive and self percent and calls, an edge's percent and
//! calls); the tree is unfolded from it by call path (`call_paths`), each function's
//! self percent and calls split over its paths in proportion to the calls' percents:
//! estimates, which the profile says.
//!
//! Only the DOT that gprof2dot writes is parsed: node and edge statements with
//! attribute lists, and the `graph`/`node`/`edge` defaults (skipped). Subgraphs and
//! edge chains are not something it writes.

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use super::call_paths::{unfold, warn};
use crate::model::call_graph::{CallGraph, Function};
use crate::model::{Cct, Format, Frame, MetricTable, Profile};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Id(String),
    Punct(u8),
    Arrow,
}

/// DOT tokens with the line each starts on; `//`, `/* */` and `#` comments skipped.
fn tokens(text: &str) -> Result<Vec<(Tok, usize)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            _ if c.is_ascii_whitespace() => i += 1,
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .ok_or(format!("line {line}: unterminated comment"))?;
                line += text[i..i + 2 + end].matches('\n').count();
                i += end + 4;
            }
            b'-' if b.get(i + 1) == Some(&b'>') => {
                out.push((Tok::Arrow, line));
                i += 2;
            }
            b'[' | b']' | b'{' | b'}' | b'=' | b',' | b';' | b':' => {
                out.push((Tok::Punct(c), line));
                i += 1;
            }
            b'"' => {
                let start = line;
                let mut s = Vec::new();
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(format!("line {start}: unterminated string")),
                        Some(b'"') => break,
                        // `\"` is a quote; other escapes (`\n`) stay as written, as in DOT.
                        Some(b'\\') if b.get(i + 1) == Some(&b'"') => {
                            s.push(b'"');
                            i += 2;
                        }
                        Some(&x) => {
                            if x == b'\n' {
                                line += 1;
                            }
                            s.push(x);
                            i += 1;
                        }
                    }
                }
                i += 1;
                out.push((Tok::Id(String::from_utf8_lossy(&s).into_owned()), start));
            }
            _ => {
                let start = i;
                let ends = |i: usize| {
                    b[i].is_ascii_whitespace()
                        || b"[]{}=,;:\"".contains(&b[i])
                        || (b[i] == b'-' && b.get(i + 1) == Some(&b'>'))
                };
                while i < b.len() && !ends(i) {
                    i += 1;
                }
                out.push((Tok::Id(text[start..i].to_string()), line));
            }
        }
    }
    Ok(out)
}

/// A statement's attributes: `[k=v, k=v]`, possibly several lists.
fn attrs(toks: &[(Tok, usize)], i: &mut usize) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    while let Some((Tok::Punct(b'['), line)) = toks.get(*i) {
        let line = *line;
        *i += 1;
        loop {
            match toks.get(*i) {
                Some((Tok::Punct(b']'), _)) => {
                    *i += 1;
                    break;
                }
                Some((Tok::Punct(b',' | b';'), _)) => *i += 1,
                Some((Tok::Id(k), _)) => {
                    let k = k.clone();
                    *i += 1;
                    let mut v = String::new();
                    if let Some((Tok::Punct(b'='), _)) = toks.get(*i) {
                        match toks.get(*i + 1) {
                            Some((Tok::Id(x), _)) => v = x.clone(),
                            _ => return Err(format!("line {line}: '=' without a value")),
                        }
                        *i += 2;
                    }
                    out.push((k, v));
                }
                _ => return Err(format!("line {line}: unterminated attribute list")),
            }
        }
    }
    Ok(out)
}

#[derive(Default)]
struct Graph {
    names: Vec<String>,
    index: HashMap<String, usize>,
    /// (module, inc %, exc %, calls) from a node's label.
    label: Vec<Option<(String, f64, f64, f64)>>,
    /// (caller, percent, calls) of each node's incoming edges.
    callers: Vec<Vec<(usize, f64, f64)>>,
}

impl Graph {
    fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.index.insert(name.to_string(), self.names.len());
        self.names.push(name.to_string());
        self.label.push(None);
        self.callers.push(Vec::new());
        self.names.len() - 1
    }
}

fn percent(s: &str) -> Option<f64> {
    s.trim_matches(['(', ')', '%', ' ']).parse().ok()
}

/// `module\nname\n97.94%\n(53.77%)\n1×` -> (module, 97.94, 53.77, 1).
fn node_label(l: &str) -> Option<(String, f64, f64, f64)> {
    let parts: Vec<&str> = l.split("\\n").collect();
    if parts.len() < 4 {
        return None;
    }
    let calls = parts
        .get(4)
        .and_then(|c| c.trim_end_matches('×').parse().ok())
        .unwrap_or(f64::NAN);
    Some((
        parts[0].to_string(),
        percent(parts[2])?,
        percent(parts[3])?,
        calls,
    ))
}

fn parse(text: &str) -> Result<Graph, String> {
    let toks = tokens(text)?;
    let mut i = 0;
    // [strict] digraph [name] {
    if matches!(toks.get(i), Some((Tok::Id(s), _)) if s.eq_ignore_ascii_case("strict")) {
        i += 1;
    }
    match toks.get(i) {
        Some((Tok::Id(s), _)) if s == "digraph" => i += 1,
        _ => return Err("line 1: expected 'digraph {'".into()),
    }
    if let Some((Tok::Id(_), _)) = toks.get(i) {
        i += 1;
    }
    match toks.get(i) {
        Some((Tok::Punct(b'{'), _)) => i += 1,
        _ => return Err("line 1: expected 'digraph {'".into()),
    }
    let mut g = Graph::default();
    let mut closed = false;
    while i < toks.len() {
        let (tok, line) = toks[i].clone();
        match tok {
            Tok::Punct(b';') => i += 1,
            Tok::Punct(b'}') => {
                closed = true;
                break;
            }
            Tok::Id(id) if matches!(id.as_str(), "graph" | "node" | "edge") => {
                i += 1;
                attrs(&toks, &mut i)?;
            }
            Tok::Id(id) => {
                i += 1;
                if let Some((Tok::Punct(b'='), _)) = toks.get(i) {
                    i += 2; // a graph attribute: name = value
                    continue;
                }
                let mut chain = vec![id];
                while let Some((Tok::Arrow, _)) = toks.get(i) {
                    match toks.get(i + 1) {
                        Some((Tok::Id(x), _)) => chain.push(x.clone()),
                        _ => return Err(format!("line {line}: '->' without a target")),
                    }
                    i += 2;
                }
                let a = attrs(&toks, &mut i)?;
                let label = a
                    .iter()
                    .find(|(k, _)| k == "label")
                    .map(|(_, v)| v.as_str());
                if chain.len() == 1 {
                    let n = g.node(&chain[0]);
                    if let Some(l) = label {
                        g.label[n] =
                            Some(node_label(l).ok_or(format!(
                                "line {line}: a node label that is not gprof2dot's"
                            ))?);
                    }
                } else {
                    // An edge's share of the total time and its calls (`3.01%\n300015×`).
                    let mut parts = label.map(|l| l.split("\\n")).into_iter().flatten();
                    let w = parts.next().and_then(percent).unwrap_or(0.0);
                    let calls = parts
                        .next()
                        .and_then(|c| c.trim_end_matches('×').parse().ok())
                        .unwrap_or(f64::NAN);
                    for pair in chain.windows(2) {
                        let (s, d) = (g.node(&pair[0]), g.node(&pair[1]));
                        if !g.callers[d].iter().any(|c| c.0 == s) {
                            g.callers[d].push((s, w, calls));
                        }
                    }
                }
            }
            _ => return Err(format!("line {line}: unexpected {tok:?}")),
        }
    }
    if !closed {
        return Err("the graph ends without '}' (truncated?)".into());
    }
    if g.names.is_empty() {
        return Err("the graph has no node".into());
    }
    Ok(g)
}

/// The DOT graph as the profile's call graph, with gprof2dot's figures.
fn call_graph(g: &Graph) -> CallGraph {
    let mut cg = CallGraph::new(vec![("time".into(), "%".into())]);
    for (name, label) in g.names.iter().zip(&g.label) {
        let mut frame = Frame::new(name, "function");
        let (inc, exc, calls) = match label {
            Some(l) => {
                frame.set_attr("module", &l.0);
                (l.1, l.2, l.3)
            }
            None => (0.0, 0.0, f64::NAN),
        };
        cg.add_function(Function {
            frame,
            self_cost: vec![exc],
            inclusive: vec![inc],
            calls,
        });
    }
    for (dst, cs) in g.callers.iter().enumerate() {
        for &(src, w, calls) in cs {
            // A count gprof2dot did not print adds nothing.
            let count = if calls.is_finite() { calls } else { 0.0 };
            cg.add_call(NodeIndex::new(src), NodeIndex::new(dst), count, &[w]);
        }
    }
    // Without calls (cachegrind) every function is a root with its own figures.
    cg.estimated_paths = cg.graph.edge_count() > 0;
    cg
}

pub fn read_text(text: &str) -> Result<(Cct, MetricTable, CallGraph, Vec<String>), String> {
    let g = parse(text)?;
    let mut warnings = Vec::new();
    let cg = call_graph(&g);
    let paths = unfold(&cg);
    let calls: Vec<f64> = (0..cg.len()).map(|f| cg.function(f).calls).collect();
    let mut m = MetricTable::new(paths.cct.len());
    m.set("time", "%", paths.exclusive(&cg, 0));
    m.set("calls", "", paths.spread(&calls, 0));
    warn(&paths, &mut warnings);
    let unlabelled = g.label.iter().filter(|l| l.is_none()).count();
    if unlabelled > 0 {
        warnings.push(format!("{unlabelled} node(s) have no label and no values"));
    }
    let mut cct = paths.cct;
    m.derive_inclusive(&cct, &["time"]);
    cct.finish();
    Ok((cct, m, cg, warnings))
}

/// gprof2dot's output: `digraph` first, and a node label with its `INC%\n(EXC%)`.
pub fn sniff(text: &[u8]) -> bool {
    let has = |pat: &[u8]| text.windows(pat.len()).any(|w| w == pat);
    (text.starts_with(b"digraph") || text.starts_with(b"strict digraph"))
        && has(b"%\\n(")
        && has(b"->")
}

pub struct Gprof2Dot;

impl super::Reader for Gprof2Dot {
    fn name(&self) -> &'static str {
        "gprof2dot DOT"
    }

    fn format(&self) -> Format {
        Format::Gprof2Dot
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        probe.text().is_some_and(sniff)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (bytes, source) = input.into_bytes()?;
        let (cct, metrics, graph, warnings) = read_text(&String::from_utf8_lossy(&bytes))?;
        Ok(vec![Profile {
            call_graph: Some(graph),
            source,
            dialect: "gprof2dot".into(),
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

    const DOT: &str = r#"digraph {
	graph [fontname=Arial];
	main [label="cpi\nmain\n90.00%\n(50.00%)\n1×"];
	main -> "a b" [label="30.00%\n2×"];
	main -> c [label="10.00%\n1×"];
	"a b" [label="m\na b\n40.00%\n(30.00%)\n3×"];
	"a b" -> c [label="10.00%\n1×"];
	c -> "a b" [label="1.00%\n1×"];
	c [label="m\nc\n20.00%\n(20.00%)\n2×"];
}
"#;

    #[test]
    fn graph_and_call_paths() {
        let (cct, m, g, w) = read_text(DOT).unwrap();
        assert!(w.is_empty(), "{w:?}");
        // The graph keeps gprof2dot's figures.
        assert_eq!(g.len(), 3);
        assert_eq!(g.function(1).inclusive, vec![40.0]);
        assert_eq!(g.function(1).self_cost, vec![30.0]);
        assert_eq!(
            g.call(0, 1).map(|c| (c.count, c.cost[0])),
            Some((2.0, 30.0))
        );
        assert!(g.estimated_paths);
        // main > "a b" > c, main > c > "a b": the c -> "a b" and "a b" -> c calls
        // close a cycle where the callee is already on the path.
        let names: Vec<&str> = (0..cct.len() as u32).map(|n| cct.name(n)).collect();
        assert_eq!(names, ["main", "a b", "c", "c", "a b"]);
        assert_eq!(cct.parent(3), Some(0));
        let time = m.values("time").unwrap();
        assert!((time.iter().sum::<f64>() - 100.0).abs() < 1e-9, "{time:?}");
        let inc = m.values("time (inc)").unwrap();
        for n in 1..cct.len() as u32 {
            assert!(inc[n as usize] <= inc[cct.parent(n).unwrap() as usize]);
        }
        // Calls stay whole: "a b"'s 3 split over its two paths.
        let calls = m.values("calls").unwrap();
        assert_eq!(calls[1] + calls[4], 3.0);
        assert!(calls.iter().all(|c| c.fract() == 0.0), "{calls:?}");
        assert!(sniff(DOT.as_bytes()));
    }

    #[test]
    fn bad_graphs() {
        assert!(read_text("graph {}").is_err());
        assert!(read_text("digraph {").unwrap_err().contains("truncated"));
        assert!(read_text("digraph { a -> }").is_err());
        assert!(read_text("digraph { a [label=\"x\"] }")
            .unwrap_err()
            .contains("line 1"));
        assert!(read_text("digraph { a [label=\"x }").is_err());
        assert!(read_text("digraph { }").unwrap_err().contains("no node"));
    }
}
