//! Unfolds a callgrind call graph into a CCT by call path, as KCachegrind's call tree does.
//!
//! * Roots are the functions no other function calls (`(below main)`, `_start`, ...);
//!   a function never reached from them (only inside an uncalled cycle) becomes a root too.
//! * A node for function F reached with an inclusive "budget" B (the inclusive cost of the
//!   call edge that leads to it, scaled along the path) hands each callee G the edge's
//!   inclusive cost times B / incl(F), where incl(F) = self(F) + the costs of F's calls
//!   to other functions (callgrind's inclusive cost of F).
//! * Recursion and cycles are cut where they close: a callee already on the path is not
//!   expanded again (its cost stays inside the instance above it, as KCachegrind's cycle
//!   detection folds a cycle into one node); direct recursion (F calls F) is not an edge.
//! * Each function's exclusive cost is then split over its tree nodes in proportion to
//!   their budgets, per event, so every function keeps exactly its own cost: the tree's
//!   totals equal the sum of the file's cost lines (callgrind_annotate's PROGRAM TOTALS).

use crate::model::demangle::{demangle, RAW_NAME};
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

use super::callgrind::Graph;

/// A guard against call-path explosion on huge graphs: past it, paths stop growing.
const MAX_NODES: usize = 2_000_000;

/// `cpu(ms)` -> ("cpu(ms)", "ms"); units come from a parenthesised suffix when there is one.
fn unit_of(event: &str) -> &str {
    match (event.rfind('('), event.ends_with(')')) {
        (Some(i), true) => &event[i + 1..event.len() - 1],
        _ => "",
    }
}

pub fn profile(g: Graph, mut source: Source) -> Result<Profile, String> {
    let ne = g.events.len();
    let nf = g.funcs.len();
    if nf == 0 {
        return Err("no function in the file ('fn=' lines)".into());
    }
    // Out-edges without self-recursion; incl(F) per event.
    let mut out: Vec<Vec<(u32, Vec<f64>)>> = vec![Vec::new(); nf];
    let mut called = vec![false; nf];
    let mut edges: Vec<_> = g.edges.iter().collect();
    edges.sort_by_key(|((a, b), _)| (*a, *b));
    for (&(a, b), e) in edges {
        if a == b {
            continue;
        }
        called[b as usize] = true;
        let mut c = e.inclusive.clone();
        c.resize(ne, 0.0);
        out[a as usize].push((b, c));
    }
    let incl: Vec<Vec<f64>> = (0..nf)
        .map(|f| {
            let mut v = g.funcs[f].exclusive.clone();
            for (_, c) in &out[f] {
                for (a, x) in v.iter_mut().zip(c) {
                    *a += x;
                }
            }
            v
        })
        .collect();

    let mut cct = Cct::default();
    let mut node_func: Vec<u32> = Vec::new();
    let mut budget: Vec<Vec<f64>> = Vec::new();
    let mut on_path = vec![false; nf];
    let mut seen = vec![false; nf];
    let mut capped = false;
    let mut cut = 0u64;

    let frame_of = |f: usize| {
        let func = &g.funcs[f];
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
    };

    // Roots first in file order of the uncalled functions, then leftovers by cost.
    let mut roots: Vec<u32> = (0..nf as u32).filter(|&f| !called[f as usize]).collect();
    let mut leftovers_added = false;
    loop {
        for &r in &roots {
            if seen[r as usize] {
                continue;
            }
            // Explicit stack (deep call chains): Enter(func, parent, budget) / Exit(func).
            enum Step {
                Enter(u32, Option<u32>, Vec<f64>),
                Exit(u32),
            }
            let mut stack = vec![Step::Enter(r, None, incl[r as usize].clone())];
            while let Some(step) = stack.pop() {
                match step {
                    Step::Exit(f) => on_path[f as usize] = false,
                    Step::Enter(f, parent, b) => {
                        let fu = f as usize;
                        let node = cct.add_node(parent, frame_of(fu));
                        node_func.push(f);
                        seen[fu] = true;
                        on_path[fu] = true;
                        stack.push(Step::Exit(f));
                        if cct.len() >= MAX_NODES {
                            capped = true;
                            budget.push(b);
                            continue;
                        }
                        let scale: Vec<f64> = b
                            .iter()
                            .zip(&incl[fu])
                            .map(|(x, i)| if *i != 0.0 { x / i } else { 0.0 })
                            .collect();
                        for (callee, c) in out[fu].iter().rev() {
                            if on_path[*callee as usize] {
                                cut += 1;
                                continue;
                            }
                            let cb: Vec<f64> = c.iter().zip(&scale).map(|(x, s)| x * s).collect();
                            stack.push(Step::Enter(*callee, Some(node), cb));
                        }
                        budget.push(b);
                    }
                }
            }
        }
        if leftovers_added {
            break;
        }
        leftovers_added = true;
        let mut rest: Vec<u32> = (0..nf as u32).filter(|&f| !seen[f as usize]).collect();
        if rest.is_empty() {
            break;
        }
        rest.sort_by(|a, b| {
            let (x, y) = (incl[*a as usize][0], incl[*b as usize][0]);
            y.total_cmp(&x).then(a.cmp(b))
        });
        roots = rest;
    }

    // Split each function's exclusive cost over its nodes in proportion to their budgets.
    let n = cct.len();
    let mut sums = vec![vec![0.0f64; ne]; nf];
    let mut count = vec![0u32; nf];
    for (node, &f) in node_func.iter().enumerate() {
        count[f as usize] += 1;
        for (s, b) in sums[f as usize].iter_mut().zip(&budget[node]) {
            *s += b;
        }
    }
    let mut metrics = MetricTable::new(n);
    let names: Vec<String> = g.events.clone();
    for (e, name) in names.iter().enumerate() {
        let vals: Vec<f64> = node_func
            .iter()
            .enumerate()
            .map(|(node, &f)| {
                let fu = f as usize;
                let own = g.funcs[fu].exclusive[e];
                if own == 0.0 {
                    0.0
                } else if sums[fu][e] > 0.0 {
                    own * budget[node][e] / sums[fu][e]
                } else {
                    own / count[fu] as f64
                }
            })
            .collect();
        metrics.set(name, unit_of(name), vals);
    }
    let bases: Vec<&str> = names.iter().map(String::as_str).collect();
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
