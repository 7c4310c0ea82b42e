//! A callgrind/cachegrind file as a profile: its call graph with the file's exact
//! figures (`Profile::call_graph`, each function's self and inclusive cost as
//! callgrind_annotate `--inclusive=yes` gives them, each call edge's cost and count),
//! and a CCT unfolded from it by call path (`call_paths`), as KCachegrind's call tree
//! does, whose figures are estimates: the file does not say how a function's cost
//! divides among the paths that reach it. The tree's totals equal the sum of the
//! file's cost lines (callgrind_annotate's PROGRAM TOTALS) and every function keeps
//! exactly its own self cost.

use crate::model::demangle::{demangle, RAW_NAME};
use petgraph::graph::NodeIndex;

use crate::model::call_graph::{CallGraph, Function};
use crate::model::{Format, Frame, MetricTable, Profile, Source};

use super::call_paths::{unfold, MAX_NODES};
use super::callgrind::{Func, Graph};

/// `cpu(ms)` -> ("cpu(ms)", "ms"); units come from a parenthesised suffix when there is one.
fn unit_of(event: &str) -> &str {
    match (event.rfind('('), event.ends_with(')')) {
        (Some(i), true) => &event[i + 1..event.len() - 1],
        _ => "",
    }
}

/// The file's call graph with callgrind_annotate's figures: a function's inclusive
/// cost is the cost of its calls from other functions, or, for a function no other
/// function calls, its self cost plus the cost of its calls to others. Calls to itself
/// are inside those already: callgrind_annotate adds them again (a recursive function
/// above 100%), grove counts recursion once.
fn call_graph(g: &Graph) -> CallGraph {
    let ne = g.events.len();
    let metrics = g
        .events
        .iter()
        .map(|e| (e.clone(), unit_of(e).to_string()))
        .collect();
    let mut cg = CallGraph::new(metrics);
    for func in &g.funcs {
        let mut self_cost = func.exclusive.clone();
        self_cost.resize(ne, 0.0);
        cg.add_function(Function {
            frame: frame_of(func),
            inclusive: vec![0.0; ne],
            self_cost,
            calls: 0.0,
        });
    }
    let mut edges: Vec<_> = g.edges.iter().collect();
    edges.sort_by_key(|((a, b), _)| (*a, *b));
    let nf = g.funcs.len();
    let mut called_in = vec![vec![0.0; ne]; nf];
    let mut called_out = vec![vec![0.0; ne]; nf];
    let mut called = vec![false; nf];
    for (&(a, b), e) in edges {
        let (ai, bi) = (NodeIndex::new(a as usize), NodeIndex::new(b as usize));
        cg.add_call(ai, bi, e.calls, &e.inclusive);
        cg.graph[bi].calls += e.calls;
        if a != b {
            called[b as usize] = true;
            for (x, c) in called_in[b as usize].iter_mut().zip(&e.inclusive) {
                *x += c;
            }
            for (x, c) in called_out[a as usize].iter_mut().zip(&e.inclusive) {
                *x += c;
            }
        }
    }
    for f in 0..nf {
        let node = &mut cg.graph[NodeIndex::new(f)];
        node.inclusive = if called[f] {
            std::mem::take(&mut called_in[f])
        } else {
            node.self_cost
                .iter()
                .zip(&called_out[f])
                .map(|(s, c)| s + c)
                .collect()
        };
    }
    // Without calls (cachegrind) every function is a root with its own figures.
    cg.estimated_paths = cg.graph.edge_count() > 0;
    cg
}

fn frame_of(func: &Func) -> Frame {
    let mut fr = match demangle(&func.name) {
        Some(d) => {
            let mut fr = Frame::new(&d, "function");
            fr.set_attr(RAW_NAME, &func.name);
            fr
        }
        None => Frame::new(&func.name, "function"),
    };
    if !func.file.is_empty() {
        fr.set_attr("file", &func.file);
    }
    if func.line > 0 {
        fr.set_attr("line", &func.line.to_string());
    }
    if !func.object.is_empty() {
        fr.set_attr("module", &func.object);
    }
    fr
}

pub fn profile(g: Graph, mut source: Source) -> Result<Profile, String> {
    let ne = g.events.len();
    let nf = g.funcs.len();
    if nf == 0 {
        return Err("no function in the file ('fn=' lines)".into());
    }
    let cg = call_graph(&g);
    let paths = unfold(&cg);
    let n = paths.cct.len();
    let mut metrics = MetricTable::new(n);
    let names: Vec<String> = g.events.clone();
    for (e, name) in names.iter().enumerate() {
        metrics.set(name, unit_of(name), paths.exclusive(&cg, e));
    }
    let bases: Vec<&str> = names.iter().map(String::as_str).collect();
    let (capped, cut) = (paths.capped, paths.cut);
    let cct = paths.cct;
    metrics.derive_inclusive(&cct, &bases);

    let mut warnings = g.warnings;
    let totals: Vec<f64> = (0..ne)
        .map(|e| g.funcs.iter().map(|f| f.exclusive[e]).sum())
        .collect();
    if let Some(s) = &g.summary {
        let differ: Vec<String> = names
            .iter()
            .zip(&totals)
            .zip(s.iter().chain(std::iter::repeat(&0.0)))
            .filter(|((_, t), s)| (*t - *s).abs() > 1e-6 * s.abs().max(1.0))
            .map(|((n, t), s)| format!("{n} {t} vs {s}"))
            .collect();
        if !differ.is_empty() {
            warnings.push(format!(
                "the cost lines do not add up to the file's summary/totals ({}): truncated?",
                differ.join(", ")
            ));
        }
    }
    if capped {
        warnings.push(format!(
            "the call graph unfolds into more than {MAX_NODES} call paths; deeper paths were cut"
        ));
    }
    let cachegrind = !g.has_calls && !g.callgrind_magic;
    let mut meta = g.meta;
    meta.push(("events".into(), names.join(" ")));
    meta.push(("functions".into(), nf.to_string()));
    if cut > 0 {
        meta.push(("recursive calls cut".into(), cut.to_string()));
    }
    source.format = Format::Callgrind;
    Ok(Profile {
        call_graph: Some(cg),
        source,
        dialect: if cachegrind {
            "cachegrind"
        } else {
            "callgrind"
        }
        .into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric: names[0].clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::callgrind::parse;
    use super::*;
    use std::path::PathBuf;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Callgrind,
            size: 0,
            gzip: false,
            label: "t".into(),
        }
    }

    #[test]
    fn recursion_is_cut_and_totals_hold() {
        // main -> a (inclusive 60) ; a -> b (40) ; b -> a (30, a cycle) ; a -> a (self).
        let text = "events: Ir\nfn=main\n1 10\ncfn=a\ncalls=1 1\n1 60\n\
                    fn=a\n1 20\ncfn=b\ncalls=1 1\n1 40\ncfn=a\ncalls=3 1\n1 25\n\
                    fn=b\n1 10\ncfn=a\ncalls=1 1\n1 30\n";
        let g = parse(&mut text.as_bytes()).unwrap();
        let p = profile(g, src()).unwrap();
        let ir = p.metrics.values("Ir").unwrap();
        assert_eq!(ir.iter().sum::<f64>(), 40.0);
        let inc = p.metrics.values("Ir (inc)").unwrap();
        assert_eq!(inc[0], 40.0);
        assert_eq!(p.cct.len(), 3, "main > a > b, the b -> a edge is cut");
        let _ = PathBuf::new();
    }

    #[test]
    fn units_from_names() {
        assert_eq!(unit_of("cpu(ms)"), "ms");
        assert_eq!(unit_of("Ir"), "");
    }
}
