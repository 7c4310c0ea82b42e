//! The CUBE4 reader (issue 29) against pycubexr on the corpus's four `.cubex` files:
//! every metric pycubexr reduces to a number, every call path, exclusive and
//! inclusive, summed over locations and at two locations (by id), equal to the
//! goldens in testdata/cube/ (written by testdata/cube/pycubexr_dump.py); the same for
//! testdata/cube/small.cubex. The corpus files are skipped, with a line on stderr, when
//! ../shared/corpus is missing.

mod common;

use std::collections::HashMap;
use std::path::Path;

use grove::model::{Format, Profile};

const FILES: &[(&str, &str)] = &[
    // Hand-made (testdata/cube/make_small.py): compressed and big-endian data, threads.
    ("testdata/cube/small.cubex", "small"),
    (
        "pycubexr/data/call_tree_test/call_tree_test.cubex",
        "call_tree_test",
    ),
    (
        "pycubexr/data/kripke.p8.d2.g32.r1/profile.cubex",
        "kripke.p8.d2.g32.r1",
    ),
    (
        "pycubexr/data/time.p4.n2000.x1.r0/profile.cubex",
        "time.p4.n2000.x1.r0",
    ),
    (
        "pycubexr/data/test_only_files/cube-values_example.cubex",
        "test_only_files",
    ),
];

/// A corpus file, or one of testdata/ (`testdata/...`, always there).
fn corpus(rel: &str) -> Option<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = if rel.starts_with("testdata/") {
        root.join(rel)
    } else {
        root.join("../shared/corpus").join(rel)
    };
    p.is_file().then_some(p)
}

/// The call path of node n: region names joined by "/", then `#cnode id`.
fn path_of(p: &Profile, n: u32) -> String {
    let names: Vec<&str> = p.cct.path(n).iter().map(|&k| p.cct.name(k)).collect();
    format!(
        "{}#{}",
        names.join("/"),
        p.cct.frame(n).attr("cnode").unwrap_or("?")
    )
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || a.is_nan() && b.is_nan()
}

#[test]
fn figures_equal_pycubexr_per_metric_call_path_and_location() {
    let mut compared = 0;
    for (rel, golden) in FILES {
        let Some(path) = corpus(rel) else { continue };
        let profiles = grove::readers::load_all(&path).unwrap();
        assert!(profiles.iter().all(|p| p.source.format == Format::Cube));
        let by_scope: HashMap<String, &Profile> = profiles
            .iter()
            .map(|p| match p.meta_value("location id") {
                Some(id) => (format!("loc{id}"), p),
                None => ("sum".to_string(), p),
            })
            .collect();
        let nodes: HashMap<String, u32> = (0..profiles[0].cct.len() as u32)
            .map(|n| (path_of(&profiles[0], n), n))
            .collect();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/cube")
                .join(format!("{golden}.golden")),
        )
        .unwrap();
        let mut bad = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f[1] == "unsupported" {
                continue;
            }
            let (metric, scope, cpath) = (f[0], f[1], f[2]);
            let want: (f64, f64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
            let p = by_scope
                .get(scope)
                .unwrap_or_else(|| panic!("{golden}: no profile for {scope}"));
            let n = *nodes
                .get(cpath)
                .unwrap_or_else(|| panic!("{golden}: no node {cpath}"));
            let get = |name: &str| {
                p.metrics
                    .values(name)
                    .map(|v| v[n as usize])
                    .unwrap_or(f64::NAN)
            };
            let got = (get(metric), get(&format!("{metric} (inc)")));
            if !close(got.0, want.0) || !close(got.1, want.1) {
                bad.push(format!(
                    "{golden} {metric} {scope} {cpath}: grove {got:?}, pycubexr {want:?}"
                ));
            }
            compared += 1;
        }
        assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
    }
    eprintln!("{compared} figures compared with pycubexr");
}

/// TAU_ATOMIC, which pycubexr does not reduce to a number: count, min, max and sum
/// aggregate over locations and the subtree; the figure is sum / count.
#[test]
fn tau_atomic_values_aggregate_field_by_field() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cube/small.cubex");
    let ps = grove::readers::load_all(&path).unwrap();
    let s = &ps[0];
    let v = |m: &str, n: usize| s.metrics.values(m).unwrap()[n];
    // Rows for MPI_Allreduce under solve (node 2): counts 1..4, sums 100 per count.
    assert_eq!(v("sizes:count", 2), 10.0);
    assert_eq!(v("sizes:sum", 2), 1000.0);
    assert_eq!(v("sizes", 2), 100.0);
    assert_eq!((v("sizes:min", 2), v("sizes:max", 2)), (8.0, 256.0));
    // main, inclusive: both rows (counts 1..8).
    assert_eq!(v("sizes:count (inc)", 0), 36.0);
    assert_eq!(
        (v("sizes:min (inc)", 0), v("sizes:max (inc)", 0)),
        (8.0, 512.0)
    );
    assert_eq!(v("sizes (inc)", 0), 100.0);
    // A node without rows has no average (count 0).
    assert!(v("sizes", 0).is_nan());
    // Location 3 (rank 1, thread 1): counts 4 and 8.
    let l3 = ps
        .iter()
        .find(|p| p.meta_value("location id") == Some("3"))
        .unwrap();
    assert_eq!(l3.source.label, "rank 1 thread 1");
    assert_eq!(l3.metrics.values("sizes:count (inc)").unwrap()[0], 12.0);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

/// Opened as one input, a `.cubex` is an ensemble whose default column is the
/// summary, and whose statistics leave the summary out (mean × ranks = summary).
#[test]
fn opens_on_the_summary_with_statistics_over_locations() {
    let Some(path) = corpus("pycubexr/data/kripke.p8.d2.g32.r1/profile.cubex") else {
        skip!()
    };
    let p = grove::load::load_inputs(&[path], &HashMap::new()).unwrap();
    assert_eq!(p.default_metric, "time@summary");
    let col = |m: &str| p.metrics.values(m).unwrap()[0];
    let (sum, mean) = (col("time (inc)@summary"), col("time (inc)@mean"));
    assert!((mean * 8.0 - sum).abs() < 1e-9 * sum, "{mean} × 8 vs {sum}");
    assert!(col("time (inc)@rank_7") > 0.0);
    // Two files together: each summary is relabelled (summary#0, summary#1), so the
    // ensemble opens on the mean over all ranks.
    let other = corpus("pycubexr/data/time.p4.n2000.x1.r0/profile.cubex").unwrap();
    let both = grove::load::load_inputs(&[path_again(), other], &HashMap::new()).unwrap();
    assert_eq!(both.default_metric, "time@mean");
    assert!(both.metrics.has("time@summary#1"));
}

fn path_again() -> std::path::PathBuf {
    corpus("pycubexr/data/kripke.p8.d2.g32.r1/profile.cubex").unwrap()
}
