//! The functions table and the bottom-up tree (issue 26) against the reference tools:
//! callgrind_annotate `--inclusive=yes|no` (every function, every one of 13 events),
//! pstats' tottime/cumtime, `go tool pprof -top`'s flat and cum; on a Kineto trace
//! (call paths only) the table's self costs add up to the tree's total and the root
//! function's inclusive cost is the root's. The inverted tree's roots are the table's
//! self costs and add up to the total. `perf report --no-children`/`--children` per
//! symbol on a `perf record -g` run (testdata/perf/report/). Reference outputs: testdata/functions/record.sh
//! (callgrind, pprof) and testdata/callgraph/record.sh (pstats).

use std::collections::{BTreeMap, BTreeSet, HashMap};

mod common;

use grove::load::load_path;
use grove::model::demangle::RAW_NAME;
use grove::model::Profile;
use grove::transform::functions::{Column, Functions};
use grove::transform::invert::invert;

use common::{gunzip, repo};

/// Equal maps, or a panic naming the keys that differ (the first 10). `tol` is a
/// relative tolerance (0 for exact).
fn same(ours: &BTreeMap<String, f64>, theirs: &BTreeMap<String, f64>, tol: f64, what: &str) {
    let keys: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    let diff: Vec<String> = keys
        .into_iter()
        .filter(|k| {
            let (a, b) = (ours.get(*k).copied(), theirs.get(*k).copied());
            match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() > tol * a.abs().max(b.abs()),
                _ => true,
            }
        })
        .map(|k| {
            format!(
                "{k}: grove {:?}, reference {:?}",
                ours.get(k),
                theirs.get(k)
            )
        })
        .collect();
    assert!(
        diff.is_empty(),
        "{what}: {} of {} differ: {:#?}",
        diff.len(),
        ours.len().max(theirs.len()),
        &diff[..diff.len().min(10)]
    );
}

/// The inverted tree's roots are the table's self costs (every metric, every
/// function with self cost) and add up to the total.
fn check_inverted(p: &Profile, t: &Functions, what: &str) {
    let (inv, table) = invert(&p.cct, &p.metrics).unwrap();
    let path = Functions::of_paths(&p.cct, &p.metrics);
    for (m, metric) in path.metrics.iter().enumerate() {
        let inc_name = if metric.name.ends_with(" (inc)") {
            metric.name.clone()
        } else {
            format!("{} (inc)", metric.name)
        };
        let inc = table.values(&inc_name).unwrap();
        let mut roots: BTreeMap<String, f64> = BTreeMap::new();
        for &r in &inv.roots {
            let f = grove::transform::functions::identity(inv.frame(r));
            assert!(
                roots
                    .insert(f.label() + "|" + &f.kind, inc[r as usize])
                    .is_none(),
                "{what}: {} is a root twice",
                f.label()
            );
        }
        let selfs: BTreeMap<String, f64> = (0..path.len())
            .filter(|&f| path.self_cost[m][f] != 0.0)
            .map(|f| {
                let func = &path.functions[f];
                (func.label() + "|" + &func.kind, path.self_cost[m][f])
            })
            .collect();
        // A root has self cost in some metric, maybe not in this one.
        let roots: BTreeMap<String, f64> = roots.into_iter().filter(|(_, v)| *v != 0.0).collect();
        same(
            &roots,
            &selfs,
            0.0,
            &format!("{what}: inverted roots, {}", metric.name),
        );
        let sum: f64 = inv.roots.iter().map(|&r| inc[r as usize]).sum();
        let total = path.totals[m];
        assert!(
            (sum - total).abs() <= 1e-9 * total.abs(),
            "{what}: inverted roots add up to {sum}, the total is {total}"
        );
        // Children never exceed their parent, where no cost is negative (a delta
        // profile's are).
        let exc = table.values(&inc_name.replace(" (inc)", "")).unwrap();
        let signed = exc.iter().any(|v| *v < 0.0);
        for n in (0..inv.len() as u32).filter(|_| !signed) {
            if let Some(par) = inv.parent(n) {
                assert!(inc[n as usize] <= inc[par as usize] * (1.0 + 1e-12));
            }
        }
    }
    // A profile from a call graph: its table's self costs are the graph's, and the
    // tree unfolded from it keeps every function's self cost, so the roots are those.
    if t.from_graph() {
        for (m, metric) in t.metrics.iter().enumerate() {
            let total: f64 = t.totals[m];
            assert!(
                (path.totals[m] - total).abs() <= 1e-9 * total.abs(),
                "{what}: {} tree total {} vs graph {}",
                metric.name,
                path.totals[m],
                total
            );
        }
    }
}

// ------------------------------------------------------------------- callgrind

/// callgrind_annotate's function lines (no `--tree`): per `file:function [object]`, one
/// figure per event (`.` is zero).
fn annotate(rel: &str) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let text = gunzip(rel);
    let events: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("Events shown:"))
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let value = regex::Regex::new(r"^\s*([\d,]+|\.)(?: \(\s*[\d.]+%\))?").unwrap();
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.trim_end().ends_with("file:function") {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("---") || line.trim().is_empty() {
            continue;
        }
        let mut rest = line;
        let mut vals = Vec::new();
        for _ in 0..events.len() {
            let c = value.captures(rest).unwrap_or_else(|| panic!("{line}"));
            let v = &c[1];
            vals.push(if v == "." {
                0.0
            } else {
                v.replace(',', "").parse().unwrap()
            });
            rest = &rest[c.get(0).unwrap().end()..];
        }
        rows.push((rest.trim().to_string(), vals));
    }
    (events, rows)
}

fn raw_name(f: &grove::transform::functions::Function, frame: &grove::model::Frame) -> String {
    frame.attr(RAW_NAME).unwrap_or(&f.name).to_string()
}

/// Every function's self and inclusive cost of every event equals
/// callgrind_annotate's, with its quirks (read from its Perl; see tests/call_graph.rs):
/// it lists an inline part of a function (`fi=`/`fe=`) apart under the part's file, so
/// self costs are compared per function name; it merges functions of one file and name
/// in different objects, so inclusive costs are compared per `file:function`; and it
/// adds a recursive function's calls to itself to its inclusive cost again.
#[test]
fn callgrind_functions_equal_callgrind_annotate() {
    let p = load_path(&repo("testdata/functions/cg-cache.callgrind.out.gz")).unwrap();
    let t = Functions::of_profile(&p);
    assert!(t.from_graph());
    let g = p.call_graph.as_ref().unwrap();
    let (events, no) = annotate("testdata/functions/cg-cache.annotate-inclusive-no.txt.gz");
    let (_, yes) = annotate("testdata/functions/cg-cache.annotate-inclusive-yes.txt.gz");
    assert_eq!(events.len(), 13);
    let names: Vec<&str> = t.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, events.iter().map(String::as_str).collect::<Vec<_>>());
    let short = |k: &str| {
        let k = k.rsplit_once(" [").map_or(k, |x| x.0);
        k.rsplit_once(':').map_or(k, |x| x.1).to_string()
    };
    let key = |f: usize| {
        let frame = &g.function(f).frame;
        let file = frame.attr("file").unwrap_or("???");
        format!("{file}:{}", raw_name(&t.functions[f], frame))
    };
    for (m, event) in events.iter().enumerate() {
        let mut ours: BTreeMap<String, f64> = BTreeMap::new();
        for f in 0..t.len() {
            let frame = &g.function(f).frame;
            *ours.entry(raw_name(&t.functions[f], frame)).or_default() += t.self_cost[m][f];
        }
        ours.retain(|_, v| *v != 0.0);
        let mut theirs: BTreeMap<String, f64> = BTreeMap::new();
        for (name, v) in &no {
            *theirs.entry(short(name)).or_default() += v[m];
        }
        theirs.retain(|_, v| *v != 0.0);
        same(&ours, &theirs, 0.0, &format!("self {event}"));

        let mut ours: BTreeMap<String, f64> = BTreeMap::new();
        let mut again: HashMap<String, f64> = HashMap::new();
        for f in 0..t.len() {
            *ours.entry(key(f)).or_default() += t.inclusive[m][f];
            if let Some(c) = g.call(f, f) {
                *again.entry(key(f)).or_default() += c.cost[m];
            }
        }
        ours.retain(|_, v| *v != 0.0);
        let mut theirs: BTreeMap<String, f64> = BTreeMap::new();
        for (name, v) in &yes {
            // Only a function's own line names its object; an inline part does not.
            if let Some((k, _)) = name.rsplit_once(" [") {
                let v = v[m] - again.get(k).copied().unwrap_or(0.0);
                *theirs.entry(k.to_string()).or_default() += v;
            }
        }
        theirs.retain(|_, v| *v != 0.0);
        same(&ours, &theirs, 0.0, &format!("inclusive {event}"));
    }
    // The file's `totals:` line (annotate's PROGRAM TOTALS is its `summary:` line,
    // 12 Ir more: cost callgrind counted outside any function), and the hot functions
    // where the walkthrough finds them.
    let ir = t.metric("Ir").unwrap();
    assert_eq!(t.totals[ir], 1_740_575.0);
    let top = t.order(ir, Column::Self_, false);
    assert_eq!(&*t.functions[top[0] as usize].name, "qsort_rec'2");
    let top = t.order(ir, Column::Inclusive, false);
    assert!(
        t.functions[top[0] as usize]
            .name
            .starts_with("(below main)")
            || t.inclusive[ir][top[0] as usize] > 1_500_000.0
    );
    check_inverted(&p, &t, "cg-cache");
}

/// Callers and callees of a call-graph function are the file's edges.
#[test]
fn callgrind_edges_are_the_files() {
    let p = load_path(&repo("testdata/functions/cg-cache.callgrind.out.gz")).unwrap();
    let t = Functions::of_profile(&p);
    let g = p.call_graph.as_ref().unwrap();
    let f = t.find("qsort_rec")[0];
    let callers = t.callers(f);
    assert_eq!(callers.len(), 1);
    assert_eq!(&*t.functions[callers[0].function as usize].name, "sortwork");
    let call = g.call(callers[0].function as usize, f as usize).unwrap();
    assert_eq!(callers[0].value, call.cost);
    assert_eq!(callers[0].calls, call.count);
    let callees = t.callees(f);
    assert_eq!(callees.len(), g.callees(f as usize).count());
}

// ---------------------------------------------------------------------- pstats

#[test]
fn pstats_functions_equal_pstats() {
    let p = load_path(&repo("testdata/callgraph/work.pstats")).unwrap();
    let t = Functions::of_profile(&p);
    assert!(t.from_graph());
    let text = std::fs::read_to_string(repo("testdata/callgraph/work.pstats.json")).unwrap();
    let want: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want = want["functions"].as_object().unwrap();
    let num = |x: &serde_json::Value| match x.as_str() {
        Some(s) => s.parse::<f64>().unwrap(),
        None => x.as_f64().unwrap(),
    };
    let g = p.call_graph.as_ref().unwrap();
    let key = |f: usize| {
        let fr = &g.function(f).frame;
        format!(
            "{}:{}({})",
            fr.attr("file").unwrap(),
            fr.attr("line").unwrap(),
            fr.name
        )
    };
    let m = t.metric("time").unwrap();
    let mut tottime = BTreeMap::new();
    let mut cumtime = BTreeMap::new();
    let mut calls = BTreeMap::new();
    for f in 0..t.len() {
        tottime.insert(key(f), t.self_cost[m][f]);
        cumtime.insert(key(f), t.inclusive[m][f]);
        calls.insert(key(f), t.calls.as_ref().unwrap()[f]);
    }
    let field = |name: &str| -> BTreeMap<String, f64> {
        want.iter()
            .map(|(k, w)| (k.clone(), num(&w[name])))
            .collect()
    };
    same(&tottime, &field("tottime"), 0.0, "tottime");
    same(&cumtime, &field("cumtime"), 0.0, "cumtime");
    same(&calls, &field("calls"), 0.0, "calls");
    assert_eq!(t.calls_name.as_deref(), Some("calls"));
    check_inverted(&p, &t, "work.pstats");
}

// ----------------------------------------------------------------------- pprof

/// pprof prints a generic function's type arguments as `[...]` and marks a function
/// seen inlined `(inline)`, or `(partial-inline)` when seen both ways.
fn pprof_name(name: &str) -> String {
    let name = name.strip_suffix(" (inline)").unwrap_or(name);
    let name = name.strip_suffix(" (partial-inline)").unwrap_or(name);
    let re = regex::Regex::new(r"\[[^\]]*\]").unwrap();
    re.replace_all(name, "[...]").into_owned()
}

/// (flat, cum) per function name of a `go tool pprof -top` listing.
fn pprof_top(rel: &str) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
    let text = std::fs::read_to_string(repo(rel)).unwrap();
    let re = regex::Regex::new(
        r"^\s*(\d+)(?:ns|B)?\s+[\d.e+-]+%\s+[\d.e+-]+%\s+(\d+)(?:ns|B)?\s+[\d.e+-]+%\s+(.+)$",
    )
    .unwrap();
    let (mut flat, mut cum) = (BTreeMap::new(), BTreeMap::new());
    for c in text.lines().filter_map(|l| re.captures(l)) {
        let name = pprof_name(&c[3]);
        assert!(
            flat.insert(name.clone(), c[1].parse::<f64>().unwrap())
                .is_none(),
            "{rel}: {name} twice"
        );
        cum.insert(name, c[2].parse::<f64>().unwrap());
    }
    assert!(!flat.is_empty(), "{rel}: nothing read");
    (flat, cum)
}

#[test]
fn pprof_functions_equal_go_tool_pprof_top() {
    let corpus = repo("../shared/corpus");
    if !corpus.is_dir() {
        skip!()
    }
    let cases: &[(&str, &str, &str)] = &[
        ("parca/pkg/query/testdata/fib.pb.gz", "fib.0.top", "samples"),
        ("parca/pkg/query/testdata/fib.pb.gz", "fib.1.top", "cpu"),
        (
            "parca/pkg/query/testdata/profile1.pb.gz",
            "profile1.0.top",
            "samples",
        ),
        (
            "parca/pkg/query/testdata/profile1.pb.gz",
            "profile1.1.top",
            "cpu",
        ),
        (
            "parca/pkg/query/testdata/fgprof.pb.gz",
            "fgprof.1.top",
            "time",
        ),
        (
            "parca/pkg/query/testdata/alloc_space_delta.pb.gz",
            "alloc_space_delta.0.top",
            "alloc_objects",
        ),
        (
            "parca/pkg/query/testdata/alloc_space_delta.pb.gz",
            "alloc_space_delta.1.top",
            "alloc_space",
        ),
    ];
    let mut checked = 0;
    for (file, top, metric) in cases {
        let p = load_path(&corpus.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let t = Functions::of_profile(&p);
        let m = t
            .metric(metric)
            .unwrap_or_else(|| panic!("{file}: no {metric} in {:?}", t.metrics));
        // pprof names a function by its name alone.
        let (mut flat, mut cum) = (BTreeMap::new(), BTreeMap::new());
        for f in 0..t.len() {
            let name = pprof_name(&t.functions[f].name);
            *flat.entry(name.clone()).or_insert(0.0) += t.self_cost[m][f];
            *cum.entry(name).or_insert(0.0) += t.inclusive[m][f];
        }
        let (want_flat, want_cum) = pprof_top(&format!("testdata/functions/pprof/{top}"));
        flat.retain(|k, v| *v != 0.0 || want_flat.contains_key(k));
        cum.retain(|k, v| *v != 0.0 || want_cum.contains_key(k));
        same(&flat, &want_flat, 0.0, &format!("{top}: flat"));
        same(&cum, &want_cum, 0.0, &format!("{top}: cum"));
        check_inverted(&p, &t, top);
        checked += want_flat.len();
    }
    assert!(checked > 500, "{checked} functions compared");
}

// ------------------------------------------------------------------------ perf

/// Per symbol of a `perf report --stdio -g none` listing: the numeric columns before
/// the `[.]`/`[k]` marker, keyed by the symbol name.
fn perf_report(rel: &str) -> BTreeMap<String, Vec<f64>> {
    let text = std::fs::read_to_string(repo(rel)).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find(" [.] ").or_else(|| line.find(" [k] ")) else {
            continue;
        };
        let nums = line[..at]
            .split_whitespace()
            .map(|w| w.trim_end_matches('%').parse::<f64>().unwrap())
            .collect();
        // The symbol, then perf's IPC columns (`-  -`).
        let name = line[at + 5..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        assert!(out.insert(name, nums).is_none(), "{rel}: a symbol twice");
    }
    assert!(!out.is_empty(), "{rel}: nothing read");
    out
}

/// `perf report --no-children --sort symbol` gives each symbol's own period exactly;
/// `--children` gives its inclusive share (each sample counted once per symbol, however
/// often the symbol recurs on its stack) to perf's printed 0.01%. The recording has a
/// callee shared by two paths and a recursion (testdata/perf/src/calls.c,
/// scripts/perf_report_goldens.sh).
#[test]
fn perf_functions_equal_perf_report() {
    let p = load_path(&repo("testdata/perf/report/calls.perf.txt.gz")).unwrap();
    let t = Functions::of_profile(&p);
    let m = t.metric("cpu-clock").expect("a cpu-clock column");
    let total = t.totals[m];
    let (mut own, mut inc) = (BTreeMap::new(), BTreeMap::new());
    for f in 0..t.len() {
        // grove roots each process's stacks at a node named for it; perf sorts by
        // symbol alone.
        if &*t.functions[f].kind == "process" {
            continue;
        }
        let name = t.functions[f].name.to_string();
        *own.entry(name.clone()).or_insert(0.0) += t.self_cost[m][f];
        *inc.entry(name).or_insert(0.0) += t.inclusive[m][f];
    }
    let self_report = perf_report("testdata/perf/report/self.txt");
    let want_own: BTreeMap<String, f64> =
        self_report.iter().map(|(k, v)| (k.clone(), v[0])).collect();
    own.retain(|k, v| *v != 0.0 || want_own.contains_key(k));
    same(&own, &want_own, 0.0, "perf report --no-children: period");
    let want_total: f64 = want_own.values().sum();
    assert_eq!(total, want_total, "total period");

    let children = perf_report("testdata/perf/report/children.txt");
    let mut differ = Vec::new();
    for (name, v) in &children {
        let ours = 100.0 * inc.get(name).copied().unwrap_or(0.0) / total;
        let ours_self = 100.0 * own.get(name).copied().unwrap_or(0.0) / total;
        // perf rounds to two decimals.
        if (ours - v[0]).abs() > 0.005 + 1e-9 || (ours_self - v[1]).abs() > 0.005 + 1e-9 {
            differ.push(format!(
                "{name}: grove {ours:.4}%/{ours_self:.4}%, perf {v:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "perf report --children: {differ:#?}");
    let extra: Vec<&String> = inc.keys().filter(|k| !children.contains_key(*k)).collect();
    assert!(extra.is_empty(), "grove lists {extra:?}, perf does not");
    // leaf_a is a tail call at -O1 (a jump to work), so no stack holds it.
    for f in ["main", "left", "right", "recurse", "leaf_b", "work"] {
        assert!(children.contains_key(f), "{f} in perf's listing");
    }
    check_inverted(&p, &t, "calls.perf.txt");
}

// ------------------------------------------------------------------ call paths

/// A Kineto trace has call paths only: its self costs add up to the tree's total, and
/// the root function's inclusive cost is the root's (every metric).
#[test]
fn kineto_functions_add_up_to_the_tree() {
    let p = load_path(&repo("testdata/torch/train_stack.json.gz")).unwrap();
    let t = Functions::of_profile(&p);
    assert!(!t.from_graph());
    for (m, metric) in t.metrics.iter().enumerate() {
        let exc = p.metrics.values(&metric.name).unwrap();
        let total: f64 = exc.iter().filter(|v| !v.is_nan()).sum();
        let selfs: f64 = t.self_cost[m].iter().sum();
        assert!(
            (selfs - total).abs() <= 1e-9 * total.abs(),
            "{}: self costs add up to {selfs}, the tree's total is {total}",
            metric.name
        );
        assert_eq!(t.totals[m], selfs);
        let inc = p.metrics.values(&format!("{} (inc)", metric.name)).unwrap();
        for &r in &p.cct.roots {
            let f = t.find(p.cct.name(r));
            let f = f
                .iter()
                .find(|&&f| t.functions[f as usize].kind == p.cct.frame(r).kind)
                .copied()
                .unwrap();
            // A function that is a root is never under itself there, so its inclusive
            // cost holds the root's whole (and its nodes elsewhere).
            assert!(t.inclusive[m][f as usize] >= inc[r as usize]);
        }
        // The roots that are their function's only outermost node: equal.
        let roots: Vec<u32> = p.cct.roots.clone();
        let mut by_fn: HashMap<String, Vec<u32>> = HashMap::new();
        for &r in &roots {
            by_fn.entry(p.cct.name(r).to_string()).or_default().push(r);
        }
        let single = roots
            .iter()
            .filter(|&&r| {
                let name = p.cct.name(r);
                by_fn[name].len() == 1
                    && (0..p.cct.len() as u32)
                        .filter(|&n| p.cct.name(n) == name)
                        .count()
                        == 1
            })
            .count();
        assert!(single > 0, "no root function appears once");
        for &r in &roots {
            let name = p.cct.name(r);
            if (0..p.cct.len() as u32)
                .filter(|&n| p.cct.name(n) == name)
                .count()
                == 1
            {
                let f = t.find(name)[0] as usize;
                assert_eq!(t.inclusive[m][f], inc[r as usize], "{name}");
                assert_eq!(t.self_cost[m][f], exc[r as usize], "{name}");
            }
        }
    }
    check_inverted(&p, &t, "train_stack");
}

// ---------------------------------------------------------------- the commands

fn grove(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "grove {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `grove functions` prints the table's numbers in every format, `--callers` and
/// `--callees` the edges, and `grove tree --inverted` the inverted tree.
#[test]
fn headless_twins_print_the_same_numbers() {
    let cg = repo("testdata/callgraph/cg.callgrind.out.gz");
    let cg = cg.to_str().unwrap();
    let csv = grove(&["functions", cg, "--top", "3", "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], grove::export::functions::TABLE_HEADER);
    assert_eq!(rows.len(), 4);
    assert!(
        rows[1].starts_with("qsort_rec'2,/tmp/grove-callgraph/cg,function,Ir,1396684,1396684,"),
        "{}",
        rows[1]
    );
    let json: serde_json::Value = serde_json::from_str(&grove(&[
        "functions",
        cg,
        "--sort",
        "inclusive",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(json["total"], 1_739_856.0);
    assert_eq!(json["source"], "the file's call graph");
    assert_eq!(json["functions"][1]["name"], "sortwork");
    assert_eq!(json["functions"][1]["inclusive"], 1_597_186.0);
    let callees: serde_json::Value = serde_json::from_str(&grove(&[
        "functions",
        cg,
        "--callees",
        "sortwork",
        "--format",
        "json",
    ]))
    .unwrap();
    let first = &callees["functions"][0]["callees"][0];
    assert_eq!(
        (
            first["name"].as_str(),
            first["value"].as_f64(),
            first["calls"].as_f64()
        ),
        (Some("qsort_rec"), Some(1_469_242.0), Some(2.0))
    );
    let text = grove(&["functions", cg, "--callers", "qsort_rec"]);
    assert!(text.contains("1469242    100%      2  sortwork"), "{text}");
    // The inverted tree: its roots add up to the total, the largest first.
    let tree = grove(&["tree", cg, "--inverted", "--format", "csv", "--depth", "0"]);
    let mut lines = tree.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "Ir (inc)").unwrap();
    let vals: Vec<f64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    assert_eq!(vals.iter().sum::<f64>(), 1_739_856.0);
    assert_eq!(vals[0], 1_396_684.0);
    // The flame graph SVG (inferno) of the tree, and of the inverted tree, whose
    // folded stacks count each path once (the exclusive column at the chain's end).
    let svg = grove(&["tree", cg, "--format", "svg"]);
    assert!(
        svg.starts_with("<?xml") && svg.contains("<svg"),
        "{}",
        &svg[..200.min(svg.len())]
    );
    assert!(svg.contains("<title>all (1,739,856 samples, 100%)</title>"));
    let folded = grove(&["tree", cg, "--inverted", "--format", "folded"]);
    let sum: f64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
        .sum();
    assert_eq!(sum, 1_739_856.0);
    let svg = grove(&["tree", cg, "--inverted", "--format", "svg"]);
    assert!(svg.contains("<title>qsort_rec&apos;2 (1,396,684 samples, 80.28%)</title>"));
    // A trace: a thread's node is called from `(root)`, its step from the thread.
    let trace = repo("testdata/small.trace.json");
    let trace = trace.to_str().unwrap();
    let csv = grove(&[
        "functions",
        trace,
        "--callers",
        "python (main thread)",
        "--format",
        "csv",
    ]);
    assert!(csv.contains(",callers,(root),"), "{csv}");
    let csv = grove(&[
        "functions",
        trace,
        "--callers",
        "ProfilerStep#2",
        "--format",
        "csv",
    ]);
    assert!(csv.contains(",callers,python (main thread),"), "{csv}");
}

/// `:invert` in the explorer is the tree `grove tree --inverted` prints, and undo puts
/// the call tree back.
#[test]
fn the_invert_command_is_the_inverted_tree() {
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/rank0.trace.json.gz");
    let a = grove(&["tree", f, "--cmd", "invert", "--format", "csv"]);
    let b = grove(&["tree", f, "--inverted", "--format", "csv"]);
    assert!(!a.is_empty() && a == b);
    let mut app = common::open_app("testdata/rank0.trace.json.gz");
    let before = app.profile.cct.len();
    app.run("invert").unwrap();
    assert_ne!(app.profile.cct.len(), before);
    app.run("undo").unwrap();
    assert_eq!(app.profile.cct.len(), before);
}
