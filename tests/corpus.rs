//! Every real trace, Hatchet literal and folded-stacks file in ../shared/corpus loads,
//! and its totals equal the values `scripts/oracle_totals.py` computed independently from
//! the raw files (stored in testdata/corpus_totals.json).

mod common;

use std::path::{Path, PathBuf};

use grove::load::load_path;
use grove::model::{EventKind, Profile};

fn oracle() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus_totals.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn root_sum(p: &Profile, col: &str) -> f64 {
    let v = p.metrics.values(col).unwrap();
    p.cct
        .root_ids()
        .iter()
        .map(|&r| v[r as usize])
        .filter(|x| x.is_finite())
        .sum()
}

fn int(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn chrome_traces_match_the_oracle() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let o = oracle();
    let mut checked = 0;
    for (path, want) in o["chrome"].as_object().unwrap() {
        if want.get("error").is_some() {
            continue;
        }
        // A trace with no slice grove builds a tree from (async, counter or metadata
        // events only) is refused: an empty tree would look like a profile of nothing.
        let p = match load_path(&dir.join(path)) {
            Ok(p) => p,
            Err(e) if e.msg.contains("no call-tree node") && int(&want["x_valid"]) == 0 => {
                checked += 1;
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let ev = p.events.as_ref().unwrap();
        assert!(p.cct.check(), "{path}");
        // GPU activities: count and exact nanoseconds.
        let gpu: Vec<usize> = (0..ev.len())
            .filter(|&i| ev.kind[i].is_gpu_activity())
            .collect();
        let gpu_ns: i64 = gpu.iter().map(|&i| ev.dur[i]).sum();
        assert_eq!(
            gpu.len() as i64,
            int(&want["gpu"]["count"]),
            "{path}: GPU activities"
        );
        assert_eq!(gpu_ns, int(&want["gpu"]["ns"]), "{path}: GPU ns");
        // Nothing is lost: the roots' gpu_time (inc) is all GPU time in the file.
        assert_eq!(
            root_sum(&p, "gpu_time (inc)") as i64,
            gpu_ns,
            "{path}: gpu_time over roots"
        );
        // Every valid slice is in the table: X events, B/E pairs, B events never closed.
        let slices = ev.kind.iter().filter(|&&k| k != EventKind::Instant).count() as i64;
        let be = &want["be"];
        let want_slices = int(&want["x_valid"])
            + be.get("pairs").map(int).unwrap_or(0)
            + be.get("unmatched_b").map(int).unwrap_or(0);
        assert_eq!(slices, want_slices, "{path}: slices");
        // Launch links: GPU work whose launch is missing goes to <unattributed> roots.
        let unattributed: f64 = p
            .cct
            .root_ids()
            .iter()
            .filter(|&&r| p.cct.name(r).starts_with("<unattributed>"))
            .map(|&r| p.metrics.get("gpu_time (inc)", r))
            .sum();
        let unlinked = int(&want["launch"]["unlinked"]["ns"]) as f64;
        assert!(
            unattributed <= unlinked,
            "{path}: unattributed {unattributed} > {unlinked}"
        );
        if let Some(r) = want.get("rank").and_then(|r| r.as_i64()) {
            assert_eq!(
                p.meta_value("rank"),
                Some(r.to_string().as_str()),
                "{path}: rank"
            );
        }
        // Wall time is never negative, and inclusive covers exclusive.
        let t = p.metrics.values("time").unwrap();
        let ti = p.metrics.values("time (inc)").unwrap();
        assert!(
            t.iter().zip(ti).all(|(a, b)| *a >= 0.0 && b >= a),
            "{path}: time"
        );
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} traces checked");
}

#[test]
fn hatchet_literals_match_the_oracle() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let o = oracle();
    for (path, want) in o["hatchet_literal"].as_object().unwrap() {
        let p = load_path(&dir.join(path)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.cct.len() as i64, int(&want["nodes"]), "{path}: nodes");
        assert_eq!(
            p.cct.roots.len() as i64,
            int(&want["roots"]),
            "{path}: roots"
        );
        let roots = p.cct.root_ids();
        for (i, metrics) in want["root_metrics"].as_array().unwrap().iter().enumerate() {
            for (k, v) in metrics.as_object().unwrap() {
                if k == "_hatchet_nid" {
                    continue;
                }
                let got = p.metrics.get(k, roots[i]);
                let v = v.as_f64().unwrap();
                assert!(
                    (got - v).abs() <= 1e-9 * v.abs().max(1.0),
                    "{path}: root {i} {k}: {got} != {v}"
                );
            }
        }
    }
}

#[test]
fn folded_stacks_match_the_oracle() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let o = oracle();
    for (path, want) in o["folded"].as_object().unwrap() {
        if int(&want["valid"]) == 0 {
            continue;
        }
        let p = load_path(&dir.join(path)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.cct.len() as i64,
            int(&want["distinct_paths"]),
            "{path}: nodes"
        );
        let samples = root_sum(&p, "samples (inc)");
        assert_eq!(
            samples,
            want["samples"].as_f64().unwrap(),
            "{path}: samples"
        );
        assert_eq!(
            p.warnings.is_empty(),
            int(&want["invalid"]) == 0,
            "{path}: warnings"
        );
    }
}

/// Perfetto's equal-timestamp rules (docs/formats.md): each golden `*.expected.txt`
/// that lists `name, depth` of the slices must match grove's depths (below the lane root).
#[test]
fn equal_timestamp_nesting_follows_perfetto() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let base = dir.join("perfetto/inline_json/parser/parsing");
    let mut checked = 0;
    for entry in std::fs::read_dir(&base).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("SELECT name, depth FROM slice ORDER BY name") {
            continue;
        }
        let json = PathBuf::from(path.to_string_lossy().replace(".expected.txt", ".json"));
        let p = load_path(&json).unwrap();
        for line in text
            .lines()
            .skip_while(|l| !l.starts_with("\"name\""))
            .skip(1)
        {
            let (name, depth) = line.trim().rsplit_once(',').unwrap();
            let name = name.trim_matches('"');
            let depth: usize = depth.parse().unwrap();
            let node = (0..p.cct.len() as u32)
                .find(|&n| p.cct.name(n) == name)
                .unwrap();
            assert_eq!(p.cct.depth(node), depth + 1, "{}: {name}", json.display());
        }
        checked += 1;
    }
    assert_eq!(checked, 5);
}

#[test]
fn lenient_inputs_load_with_warnings() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let t = dir.join("speedscope/sample/profiles/trace-event");
    for f in [
        "simple-partial.json",
        "simple-partial-whitespace.json",
        "simple-partial-trailing-comma.json",
    ] {
        let p = load_path(&t.join(f)).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("without ']'") || w.contains("comma")),
            "{f}: {:?}",
            p.warnings
        );
        assert!(p.cct.len() > 1, "{f}");
    }
    // It holds only async events, so it is refused as empty; the refusal still names
    // the repair.
    let e = load_path(&dir.join("perfetto/inline_json/parser/json/test_json_pid_tid_zero.json"))
        .unwrap_err();
    assert!(e.msg.contains("control character"), "{e}");
}
