//! Several profiles at once, headless: the union tree, per-profile columns, labels,
//! directories, derive and diff across profiles.

use std::path::{Path, PathBuf};

mod common;
use common::grove;

/// A corpus file's path as text, for argument lists.
fn corpus(rel: &str) -> Option<String> {
    common::corpus(rel).map(|p| p.display().to_string())
}

fn td(f: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(f)
        .display()
        .to_string()
}

#[test]
fn union_tree_with_per_profile_columns() {
    let (r0, r1) = (td("rank0.trace.json.gz"), td("rank1.trace.json.gz"));
    let (code, out, err) = grove(&[
        "tree",
        &r0,
        &r1,
        "--metric",
        "time (inc)@rank0,time (inc)@rank1,time (inc)@max",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let head = out.lines().next().unwrap();
    assert!(head.starts_with("path,name,type,depth,"), "{head}");
    assert!(
        head.contains("time (inc)@rank0")
            && head.contains("time (inc)@rank1")
            && head.contains("time@cv"),
        "{head}"
    );
    // Every node of each rank is in the union, and the max equals the larger value.
    let cols: Vec<&str> = head.split(',').collect();
    let at = |n: &str| cols.iter().position(|c| *c == n).unwrap();
    let (a, b, m) = (
        at("time (inc)@rank0"),
        at("time (inc)@rank1"),
        at("time (inc)@max"),
    );
    let mut rows = 0;
    for line in out.lines().skip(1).filter(|l| !l.contains('"')) {
        let f: Vec<&str> = line.split(',').collect();
        let val = |i: usize| f[i].parse::<f64>().ok();
        let want = match (val(a), val(b)) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        assert_eq!(val(m), want, "{line}");
        rows += 1;
    }
    assert!(rows > 50);
}

#[test]
fn labels_derive_and_diff() {
    let (r0, r1) = (td("rank0.trace.json.gz"), td("rank1.trace.json.gz"));
    let (code, out, err) = grove(&[
        "tree",
        &r0,
        &r1,
        "--label",
        "rank0=base,rank1=test",
        "--cmd",
        "derive speedup = time@base / time@test",
        "--cmd",
        "diff base test",
        "--metric",
        "speedup (inc),diff (inc)",
        "--depth",
        "1",
        "--no-legend",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("python (main thread)"), "{out}");
    let (code, _, err) = grove(&["tree", &r0, &r1, "--cmd", "diff rank0 nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a profile of this ensemble"), "{err}");
}

#[test]
fn a_directory_is_an_ensemble() {
    let dir = std::env::temp_dir().join(format!("grove-ens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["rank0.trace.json.gz", "rank1.trace.json.gz"] {
        std::fs::copy(td(f), dir.join(f)).unwrap();
    }
    // Notes that travel with the profiles are not profiles.
    std::fs::write(dir.join("README.md"), "# two ranks\n").unwrap();
    std::fs::write(dir.join("LICENSE"), "MIT\n").unwrap();
    let (code, out, err) = grove(&["info", dir.join("rank0.trace.json.gz").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rank:     0 of 2"), "{out}");
    let (code, out, err) = grove(&[
        "tree",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--depth",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<String> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names.contains(&"time@rank0".to_string()) && names.contains(&"time@rank1".to_string()),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .all(|n| !n.contains("README") && !n.contains("LICENSE")),
        "{names:?}"
    );
    let inclusive: Vec<bool> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "time (inc)@rank0")
        .map(|m| m["inclusive"].as_bool().unwrap())
        .collect();
    assert_eq!(inclusive, vec![true]);
    // A quoted glob is expanded by grove, in name order.
    let pattern = dir.join("rank?.trace.*");
    let (code, out, err) = grove(&["info", pattern.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("time@rank0") && out.contains("time@rank1"),
        "{out}"
    );
    let (code, _, err) = grove(&["info", dir.join("nothing*").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no file matches the pattern"), "{err}");
    let empty: PathBuf = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = grove(&["tree", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no files"), "{err}");
}

/// The corpus's two sampled ranks of one job: labels from distributedInfo, GPU time
/// per node and rank, and the ensemble's totals equal each rank's own.
#[test]
fn corpus_ranks_unify() {
    let (Some(r0), Some(r1)) = (
        corpus("hta/tests/data/trace_filter/sampled_rank-0.json.gz"),
        corpus("hta/tests/data/trace_filter/sampled_rank-1.json.gz"),
    ) else {
        skip!()
    };
    let (code, out, err) = grove(&[
        "tree",
        &r0,
        &r1,
        "--metric",
        "gpu_time (inc)@rank0,gpu_time (inc)@rank1",
        "--format",
        "csv",
        "--depth",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let total = |args: &[&str]| -> f64 {
        let (_, out, _) = grove(args);
        let head: Vec<String> = out
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        let i = head.iter().position(|c| c == "gpu_time (inc)").unwrap();
        out.lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(i).and_then(|x| x.parse::<f64>().ok()))
            .sum()
    };
    let one = total(&["tree", &r0, "--format", "csv", "--depth", "0"]);
    let head: Vec<&str> = out.lines().next().unwrap().split(',').collect();
    let i = head
        .iter()
        .position(|c| *c == "gpu_time (inc)@rank0")
        .unwrap();
    let ens: f64 = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(i).and_then(|x| x.parse::<f64>().ok()))
        .sum();
    assert_eq!(one, ens);
}

/// HTA's trace_compare pair: diff works across two runs and counts what one lacks as
/// zero there.
#[test]
fn corpus_compare_pair() {
    let (Some(a), Some(b)) = (
        corpus("hta/tests/data/trace_compare/base/base.json.gz"),
        corpus("hta/tests/data/trace_compare/test/test.json.gz"),
    ) else {
        skip!()
    };
    let (code, out, err) = grove(&[
        "tree",
        &a,
        &b,
        "--label",
        "base=base,test=test",
        "--cmd",
        "diff base test",
        "--metric",
        "diff (inc),time (inc)@base,time (inc)@test",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    // A node one run lacks counts as zero there: its difference is its whole value
    // (Hatchet's sub on unified trees), so it ranks by size.
    let one_sided: Vec<_> = nodes
        .iter()
        .filter(|n| n["metrics"]["time (inc)@test"].is_null())
        .filter(|n| n["metrics"]["time (inc)@base"].is_number())
        .collect();
    assert!(!one_sided.is_empty(), "no one-sided node");
    for n in one_sided {
        let m = &n["metrics"];
        assert_eq!(m["diff (inc)"], m["time (inc)@base"], "{n}");
    }
    assert!(nodes.iter().any(|n| n["metrics"]["diff (inc)"].is_number()));
}
