//! gprof's text report (`gprof [-b] [-p] [-q] prog gmon.out > report.txt`): the flat
//! profile (each function's self seconds and calls) and the call graph (each
//! function's self and children seconds, and per caller/callee line the time gprof
//! propagates along that call and the call count). The graph is the profile's
//! `call_graph` with gprof's own figures; the tree is unfolded from it by call path
//! (`call_paths`), estimated, which the profile says.
//!
//! Which figure comes from where: a function's self seconds and calls from the flat
//! profile when the report has one (what `gprof -p` prints, to the hundredth), else
//! from the call graph's primary line; its inclusive seconds (self + children) from
//! the primary line; an edge's seconds (self + children of the callee line) and count
//! from the caller's entry. gprof's own cycles: a member `f <cycle 1>` is the function
//! `f`; the `<cycle 1 as a whole>` entries are not functions and are left out (counted
//! in a warning); a recursive call (`1+2692536` calls, a line with a count only) is not
//! an edge, as for the other call-graph formats.

use std::collections::HashMap;
use std::io::BufRead;

use petgraph::graph::NodeIndex;

use super::call_paths::{unfold, warn};
use crate::model::call_graph::{CallGraph, Function};
use crate::model::{Frame, MetricTable, Profile, Source};

/// What the report says of one function.
#[derive(Default, Clone)]
struct Fun {
    name: String,
    flat_self: Option<f64>,
    flat_calls: Option<f64>,
    graph_self: Option<f64>,
    children: Option<f64>,
    graph_calls: Option<f64>,
}

#[derive(Default)]
struct Report {
    funs: Vec<Fun>,
    at: HashMap<String, usize>,
    /// (caller, callee, count, seconds) from the callee lines of each entry.
    edges: Vec<(usize, usize, f64, f64)>,
    cycles: usize,
    flat: bool,
    graph: bool,
}

impl Report {
    fn fun(&mut self, name: &str) -> usize {
        if let Some(&i) = self.at.get(name) {
            return i;
        }
        self.funs.push(Fun {
            name: name.to_string(),
            ..Fun::default()
        });
        self.at.insert(name.to_string(), self.funs.len() - 1);
        self.funs.len() - 1
    }
}

/// `f <cycle 1>` is `f`; None for a cycle as a whole.
fn function_name(name: &str) -> Option<&str> {
    if name.contains(" as a whole>") {
        return None;
    }
    let name = match name.rfind(" <cycle ") {
        Some(i) if name.ends_with('>') => &name[..i],
        _ => name,
    };
    Some(name.trim())
}

/// Splits a table line into its leading numeric fields (at most `max`) and the name
/// after them; `numeric` says what a field may look like.
fn fields(line: &str, max: usize, numeric: fn(&str) -> bool) -> (Vec<&str>, &str) {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while out.len() < max {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        if tok.is_empty() || !numeric(tok) {
            break;
        }
        out.push(tok);
        rest = rest[end..].trim_start();
    }
    (out, rest.trim_end())
}

fn number(t: &str) -> bool {
    t.parse::<f64>().is_ok()
}

/// `12`, `12/40`, `1+2692536`.
fn calls_field(t: &str) -> bool {
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '/' || c == '+')
        && t.starts_with(|c: char| c.is_ascii_digit())
}

fn number_or_calls(t: &str) -> bool {
    number(t) || calls_field(t)
}

/// The name and the trailing ` [N]` index of a call-graph line.
fn strip_index(s: &str) -> (&str, Option<usize>) {
    let s = s.trim_end();
    if let Some(open) = s.rfind(" [") {
        if let Some(n) = s[open + 2..].strip_suffix(']').and_then(|n| n.parse().ok()) {
            return (s[..open].trim_end(), Some(n));
        }
    }
    (s, None)
}

/// The first number of a calls field: `200/1000` -> 200, `1+2692536` -> 1.
fn first_count(t: &str) -> f64 {
    t.split(['/', '+'])
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or(f64::NAN)
}

fn flat_line(r: &mut Report, line: &str) {
    // %time cumulative self [calls self/call total/call] name
    let (f, name) = fields(line, 6, number);
    if f.len() < 3 || name.is_empty() {
        return;
    }
    let Some(name) = function_name(name) else {
        return;
    };
    let i = r.fun(name);
    r.funs[i].flat_self = f[2].parse().ok();
    if f.len() >= 4 {
        r.funs[i].flat_calls = f[3].parse().ok();
    }
}

/// One entry of the call graph: its lines between two `-----` separators.
fn graph_entry(r: &mut Report, lines: &[&str]) {
    let Some(k) = lines.iter().position(|l| l.trim_start().starts_with('[')) else {
        return;
    };
    let primary = lines[k].trim_start();
    let close = primary.find(']').unwrap_or(0);
    let (f, rest) = fields(&primary[close + 1..], 4, number_or_calls);
    let (name, _) = strip_index(rest);
    let Some(name) = function_name(name) else {
        r.cycles += 1;
        return;
    };
    let me = r.fun(name);
    if f.len() >= 3 {
        r.funs[me].graph_self = f[1].parse().ok();
        r.funs[me].children = f[2].parse().ok();
    }
    if f.len() >= 4 {
        r.funs[me].graph_calls = Some(first_count(f[3]));
    }
    for line in &lines[k + 1..] {
        // self children called/total name [N]; a recursive call has its count only.
        let (f, rest) = fields(line, 3, number_or_calls);
        let (callee, _) = strip_index(rest);
        let Some(callee) = function_name(callee) else {
            continue;
        };
        // A count alone: a call inside a gprof cycle (or a recursive one), along which
        // gprof propagates no time.
        let (count, secs) = match f.len() {
            3 => (
                first_count(f[2]),
                f[0].parse::<f64>().unwrap_or(0.0) + f[1].parse::<f64>().unwrap_or(0.0),
            ),
            1 if calls_field(f[0]) => (first_count(f[0]), 0.0),
            _ => continue,
        };
        if callee.is_empty() {
            continue;
        }
        let to = r.fun(callee);
        if to != me {
            r.edges.push((me, to, count, secs));
        }
    }
}

fn parse(input: &mut dyn BufRead) -> Result<Report, String> {
    let mut r = Report::default();
    #[derive(PartialEq)]
    enum At {
        Nothing,
        Flat,
        Graph,
    }
    let mut at = At::Nothing;
    let mut entry: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut n = 0usize;
    loop {
        line.clear();
        let got = input
            .read_line(&mut line)
            .map_err(|e| format!("line {}: cannot read: {e}", n + 1))?;
        if got == 0 {
            break;
        }
        n += 1;
        let l = line.trim_end_matches(['\n', '\r']);
        let t = l.trim();
        if t.starts_with("time   seconds   seconds") {
            at = At::Flat;
            r.flat = true;
            continue;
        }
        if t.starts_with("index % time") {
            at = At::Graph;
            r.graph = true;
            continue;
        }
        match at {
            At::Flat if t.is_empty() || t.starts_with("Call graph") || t.starts_with('%') => {
                at = At::Nothing
            }
            At::Flat => flat_line(&mut r, l),
            At::Graph if t.starts_with("-----") => {
                let lines: Vec<&str> = entry.iter().map(String::as_str).collect();
                graph_entry(&mut r, &lines);
                entry.clear();
            }
            // The index by function name, or gprof's explanation, ends the graph.
            At::Graph if t.starts_with("Index by function name") || t.starts_with('\u{c}') => {
                at = At::Nothing
            }
            At::Graph if !t.is_empty() && !t.starts_with("<spontaneous>") => {
                entry.push(l.to_string())
            }
            _ => {}
        }
    }
    if !r.flat && !r.graph {
        return Err("no flat profile and no call graph (gprof's table headers)".into());
    }
    if r.funs.is_empty() {
        return Err("a gprof report with no function".into());
    }
    Ok(r)
}

/// The call graph of the report: gprof's figures per function and per call.
fn call_graph(r: &Report) -> CallGraph {
    let mut g = CallGraph::new(vec![("time".into(), "s".into())]);
    g.estimated_paths = true;
    for f in &r.funs {
        let own = f.flat_self.or(f.graph_self).unwrap_or(0.0);
        let inc = match (f.graph_self, f.children) {
            (Some(s), Some(c)) => s + c,
            _ => own,
        };
        g.add_function(Function {
            frame: Frame::new(&f.name, "function"),
            self_cost: vec![own],
            // gprof rounds to the hundredth; never less than self.
            inclusive: vec![inc.max(own)],
            calls: f.flat_calls.or(f.graph_calls).unwrap_or(f64::NAN),
        });
    }
    for &(a, b, count, secs) in &r.edges {
        g.add_call(NodeIndex::new(a), NodeIndex::new(b), count, &[secs]);
    }
    g
}

pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let r = parse(input)?;
    let cg = call_graph(&r);
    let paths = unfold(&cg);
    let mut warnings = Vec::new();
    warn(&paths, &mut warnings);
    if r.cycles > 0 {
        warnings.push(format!(
            "{} gprof cycle entr(ies) (\"<cycle N as a whole>\") are not functions; their members are read as themselves",
            r.cycles
        ));
    }
    let calls: Vec<f64> = (0..cg.len())
        .map(|f| {
            let c = cg.function(f).calls;
            if c.is_nan() {
                0.0
            } else {
                c
            }
        })
        .collect();
    let mut m = MetricTable::new(paths.cct.len());
    m.set("time", "s", paths.exclusive(&cg, 0));
    m.set("calls", "", paths.spread(&calls, 0));
    let mut cct = paths.cct;
    m.derive_inclusive(&cct, &["time"]);
    cct.finish();
    let dialect = match (r.flat, r.graph) {
        (true, true) => "gprof (flat profile and call graph)",
        (true, false) => "gprof (flat profile)",
        _ => "gprof (call graph)",
    };
    Ok(Profile {
        call_graph: Some(cg),
        source,
        dialect: dialect.into(),
        cct,
        metrics: m,
        events: None,
        counters: None,
        meta: Vec::new(),
        warnings,
        default_metric: "time".into(),
    })
}

/// gprof's report: its flat-profile header or its call-graph header.
pub fn claims(head: &[u8]) -> bool {
    let has = |pat: &[u8]| head.windows(pat.len()).any(|w| w == pat);
    (has(b"Flat profile:") && has(b"Each sample counts as"))
        || (has(b"index % time    self  children    called     name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    const REPORT: &str = "Flat profile:

Each sample counts as 0.01 seconds.
  %   cumulative   self              self     total
 time   seconds   seconds    calls  ms/call  ms/call  name
100.16      0.77     0.77     1000     0.77     0.77  leaf
  0.00      0.77     0.00      200     0.00     3.08  mid
  0.00      0.77     0.00      200     0.00     0.77  other
  0.00      0.77     0.00        1     0.00     0.00  fib

\t\t\tCall graph


granularity: each sample hit covers 2 byte(s) for 1.30% of 0.77 seconds

index % time    self  children    called     name
                0.15    0.00     200/1000        other [4]
                0.62    0.00     800/1000        mid [3]
[1]    100.0    0.77    0.00    1000         leaf [1]
-----------------------------------------------
                                                 <spontaneous>
[2]    100.0    0.00    0.77                 main [2]
                0.00    0.62     200/200         mid [3]
                0.00    0.15     200/200         other [4]
                0.00    0.00       1/1           fib [5]
-----------------------------------------------
                0.00    0.62     200/200         main [2]
[3]     80.0    0.00    0.62     200         mid [3]
                0.62    0.00     800/1000        leaf [1]
-----------------------------------------------
                0.00    0.15     200/200         main [2]
[4]     20.0    0.00    0.15     200         other [4]
                0.15    0.00     200/1000        leaf [1]
-----------------------------------------------
                             2692536             fib [5]
                0.00    0.00       1/1           main [2]
[5]      0.0    0.00    0.00       1+2692536 fib [5]
                             2692536             fib [5]
-----------------------------------------------

Index by function name

   [5] fib                     [3] mid
";

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Gprof,
            size: 0,
            gzip: false,
            label: String::new(),
        }
    }

    #[test]
    fn flat_and_graph() {
        assert!(claims(REPORT.as_bytes()));
        assert!(!claims(b"digraph {"));
        let p = read(&mut REPORT.as_bytes(), src()).unwrap();
        let g = p.call_graph.as_ref().unwrap();
        let f = |name: &str| g.find(name).map(|i| g.function(i)).unwrap();
        assert_eq!(f("leaf").self_cost, vec![0.77]);
        assert_eq!(f("leaf").calls, 1000.0);
        assert_eq!(f("mid").inclusive, vec![0.62]);
        assert_eq!(f("fib").calls, 1.0);
        // main has no flat row: its figures come from the call graph.
        assert_eq!(f("main").inclusive, vec![0.77]);
        let (mid, leaf) = (g.find("mid").unwrap(), g.find("leaf").unwrap());
        let c = g.call(mid, leaf).unwrap();
        assert_eq!((c.count, c.cost[0]), (800.0, 0.62));
        // No self edge for fib's recursion.
        let fib = g.find("fib").unwrap();
        assert!(g.call(fib, fib).is_none());
        // The tree: main > mid > leaf, main > other > leaf, main > fib.
        let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
        assert_eq!(names[0], "main");
        let t = p.metrics.values("time").unwrap();
        let total: f64 = t.iter().sum();
        assert!((total - 0.77).abs() < 1e-9, "{total}");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn cycles_and_odd_lines() {
        assert_eq!(function_name("f <cycle 1>"), Some("f"));
        assert_eq!(function_name("<cycle 1 as a whole>"), None);
        assert_eq!(
            strip_index("  foo(int, char) [12]"),
            ("  foo(int, char)", Some(12))
        );
        let (f, name) = fields(
            "  1.00   0.50   3/4   std::vector<int> (a) [3]",
            3,
            number_or_calls,
        );
        assert_eq!(f, ["1.00", "0.50", "3/4"]);
        assert_eq!(name, "std::vector<int> (a) [3]");
        assert!(read(&mut "Flat profile:\nnothing\n".as_bytes(), src()).is_err());
        assert!(read(&mut "".as_bytes(), src()).is_err());
    }
}
