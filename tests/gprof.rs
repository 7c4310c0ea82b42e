//! gprof's report against gprof itself: testdata/gprof/report.txt (`gprof -b`) and
//! flat.txt (`gprof -b -p`) were recorded by testdata/gprof/record.sh from gp.c
//! (gcc -pg, GNU gprof 2.40). Every function's self seconds and calls equal the flat
//! profile's; the call-path tree is estimated, says so, keeps the total and nests
//! within itself.

use std::path::Path;

use grove::load::load_path;

fn data(f: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/gprof")
        .join(f)
}

/// The flat profile's rows: name -> (self seconds, calls).
fn flat() -> Vec<(String, f64, f64)> {
    let text = std::fs::read_to_string(data("flat.txt")).unwrap();
    let mut rows = Vec::new();
    let mut table = false;
    for line in text.lines() {
        if line.trim_start().starts_with("time   seconds") {
            table = true;
            continue;
        }
        if !table || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        rows.push((
            cols[6..].join(" "),
            cols[2].parse().unwrap(),
            cols[3].parse().unwrap(),
        ));
    }
    rows
}

#[test]
fn functions_equal_the_flat_profile() {
    let p = load_path(&data("report.txt")).unwrap();
    assert_eq!(p.source.format, grove::model::Format::Gprof);
    let g = p.call_graph.as_ref().expect("a call graph");
    let rows = flat();
    assert!(rows.len() >= 6);
    for (name, own, calls) in &rows {
        let f = g.function(g.find(name).unwrap_or_else(|| panic!("{name}")));
        assert_eq!(f.self_cost[0], *own, "{name}: self seconds");
        assert_eq!(f.calls, *calls, "{name}: calls");
    }
    // The tree keeps every second of the flat profile, and says it is estimated.
    assert!(p.estimated_paths());
    let total: f64 = p.metrics.values("time").unwrap().iter().sum();
    let flat_total: f64 = rows.iter().map(|r| r.1).sum();
    assert!((total - flat_total).abs() < 1e-9, "{total} vs {flat_total}");
    let inc = p.metrics.values("time (inc)").unwrap();
    let calls = p.metrics.values("calls").unwrap();
    for n in 0..p.cct.len() as u32 {
        let kids: f64 = p.cct.children(n).map(|c| inc[c as usize]).sum();
        assert!(kids <= inc[n as usize] + 1e-9, "{}", p.cct.name(n));
        assert_eq!(calls[n as usize].fract(), 0.0, "{}", p.cct.name(n));
    }
    // The gprof cycle's members are functions of their own, joined by their calls.
    let (even, odd) = (g.find("is_even").unwrap(), g.find("is_odd").unwrap());
    assert_eq!(g.call(even, odd).map(|c| c.count), Some(15000.0));
}

#[test]
fn a_flat_profile_alone_opens() {
    let p = load_path(&data("flat.txt")).unwrap();
    let g = p.call_graph.as_ref().unwrap();
    assert_eq!(g.len(), flat().len());
    assert_eq!(p.dialect, "gprof (flat profile)");
}
