//! Numbers you can trust (issue 24): every real trace and profile in ../shared/corpus
//! (each row of its MANIFEST.md) and every file in testdata/ that grove opens must
//! satisfy four invariants:
//!
//! - **a** (traces) a node's `time (inc)` never exceeds the summed durations of the
//!   events merged into it;
//! - **b** children's inclusive values add up to at most their parent's (0.1% slack),
//!   for every additive inclusive column `X (inc)` (see [`additive`]);
//! - **c** (traces) a thread root's `time (inc)` never exceeds the thread's busy span
//!   (last end − first start of its CPU-lane events);
//! - **d** count-like columns (instructions, samples, calls, visits, counts) hold
//!   integers (see [`count_like`]);
//! - **e** (traces) each instant of a thread counts once: a thread root's `time (inc)`
//!   never exceeds the time its CPU-lane slices cover (the union of their intervals).
//!
//! A file that fails a check today is listed in [`KNOWN`] with the reason; an entry
//! that no longer fails fails the test, so the list cannot go stale. docs/testing.md
//! lists the same exceptions.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use grove::model::events::NONE_U32;
use grove::model::metrics::base_of_inclusive;
use grove::model::{EventKind, Profile};

/// (file, check, reason): files that fail a check today, each with why. A file is
/// `corpus/<MANIFEST path>` or `testdata/<path>`.
const KNOWN: &[(&str, char, &str)] = &[
    // speedscope's hand-written callgrind example carries a negative cost (-300): with
    // it a parent can hold less than its children.
    (
        "corpus/speedscope/sample/profiles/callgrind/callgrind.subposition-compression.log",
        'b',
        NEGATIVE,
    ),
    // PlaidML: `vertexai::AllocBuffer` activities are buffer lifetimes that overlap
    // one another on the one host lane (141 of them add up to 9.04 s in a 7.52 s
    // log): the log's own data, not nested calls, so their sum exceeds the lane's span.
    (
        "corpus/plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz",
        'a',
        PLAIDML,
    ),
    (
        "corpus/plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz",
        'c',
        PLAIDML,
    ),
    (
        "corpus/plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz",
        'e',
        PLAIDML,
    ),
    // CUBE: a TAU_ATOMIC metric shows its mean per call (sum / count, as Cube shows
    // it), which does not add up over children.
    ("testdata/cube/small.cubex", 'b', CUBE_MEAN),
    // pycubexr's value-type test file: one arbitrary value per call path and location
    // for every data type, not a measurement, so no metric nests.
    (
        "corpus/pycubexr/data/test_only_files/cube-values_example.cubex",
        'b',
        CUBE_TEST,
    ),
];

const CUBE_MEAN: &str = "a CUBE TAU_ATOMIC metric is shown as its mean per call (Cube's default view), which children do not add up to";
const CUBE_TEST: &str =
    "pycubexr's value-type test file holds arbitrary values per call path, not nested measurements";
const NEGATIVE: &str = "a hand-written callgrind example with a negative cost (-300): children cannot stay under their parent";
const PLAIDML: &str = "PlaidML buffer lifetimes (vertexai::AllocBuffer) overlap one another on the host lane: their sum exceeds the lane's span (the log's own data, docs/formats.md)";

/// Relative slack of checks a, b and c.
const SLACK: f64 = 1e-3;

/// One failed check: which, and the first offending node or column.
struct Failure {
    check: char,
    what: String,
}

#[test]
fn every_file_that_opens_meets_the_invariants() {
    let mut inputs: Vec<(String, PathBuf)> = testdata_files();
    match common::corpus_dir() {
        Some(dir) => inputs.extend(
            common::manifest_rows(&dir)
                .into_iter()
                .map(|(p, _)| (format!("corpus/{p}"), dir.join(p))),
        ),
        None => common::skipped_because(
            concat!(
                module_path!(),
                "::every_file_that_opens_meets_the_invariants"
            ),
            "its corpus files: ../shared/corpus missing (testdata/ is checked)",
        ),
    }
    let mut opened = 0;
    let mut passed = 0;
    let mut known_hit: Vec<(&str, char)> = Vec::new();
    let mut unexpected: Vec<String> = Vec::new();
    for (name, path) in &inputs {
        let Ok(p) = grove::load::load_inputs(std::slice::from_ref(path), &HashMap::new()) else {
            continue;
        };
        opened += 1;
        let failures = check(&p);
        let mut line = String::new();
        for f in &failures {
            match KNOWN.iter().find(|k| k.0 == name && k.1 == f.check) {
                // A check that fails on many nodes is one known exception: said once.
                Some(k) if known_hit.contains(&(k.0, k.1)) => {}
                Some(k) => {
                    known_hit.push((k.0, k.1));
                    line.push_str(&format!(" [{}: known: {}]", f.check, k.2));
                }
                None => {
                    unexpected.push(format!("{name}: ({}) {}", f.check, f.what));
                    line.push_str(&format!(" [{} FAILS: {}]", f.check, f.what));
                }
            }
        }
        if failures.is_empty() {
            passed += 1;
        }
        let status = if failures.is_empty() { "ok  " } else { "FAIL" };
        let checks = if traced(&p).is_some() { "abcde" } else { "bd" };
        eprintln!(
            "{status} {name} ({} nodes, checks {checks}){line}",
            p.cct.len()
        );
    }
    known_hit.sort();
    known_hit.dedup();
    let stale: Vec<String> = KNOWN
        .iter()
        .filter(|k| !known_hit.contains(&(k.0, k.1)))
        .filter(|k| k.0.starts_with("testdata/") || common::corpus_dir().is_some())
        .map(|k| format!("{} ({}): {}", k.0, k.1, k.2))
        .collect();
    eprintln!(
        "invariants: {} inputs, {opened} opened, {passed} passed, {} known exception(s) (file, check) in {} file(s), {} unexpected failure(s), {} stale exception(s)",
        inputs.len(),
        known_hit.len(),
        opened - passed,
        unexpected.len(),
        stale.len()
    );
    assert!(
        unexpected.is_empty(),
        "invariants broken (fix, or list in KNOWN with the reason):\n{}",
        unexpected.join("\n")
    );
    assert!(
        stale.is_empty(),
        "these known exceptions no longer fail: remove them from KNOWN and docs/testing.md:\n{}",
        stale.join("\n")
    );
}

/// Every file under testdata/, sorted (those no reader opens are passed over).
fn testdata_files() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(&root).unwrap().display().to_string();
                out.push((format!("testdata/{rel}"), p));
            }
        }
    }
    out.sort();
    out
}

/// Whether checks a, c and e apply: an event table mapped onto the tree, and a
/// `time (inc)` column with a time unit.
fn traced(p: &Profile) -> Option<(&grove::model::EventTable, &[f64], f64)> {
    let ev = p
        .events
        .as_ref()
        .filter(|e| !e.is_empty() && e.lod.is_none() && e.node.len() == e.len())?;
    let inc = p.metrics.values("time (inc)")?;
    Some((ev, inc, ns_per_unit(p)?))
}

/// All the checks on one profile.
fn check(p: &Profile) -> Vec<Failure> {
    let mut out = Vec::new();
    if let Some((ev, inc, scale)) = traced(p) {
        out.extend(events_cover_nodes(p, ev, inc, scale));
        out.extend(roots_within_busy_span(p, ev, inc, scale));
        out.extend(roots_count_each_instant_once(p, ev, inc, scale));
    }
    out.extend(children_within_parent(p));
    out.extend(counts_are_integers(p));
    out
}

/// Nanoseconds per unit of the `time` column; None when it has no time unit.
fn ns_per_unit(p: &Profile) -> Option<f64> {
    match p.metrics.unit("time") {
        "ns" | "nsec" => Some(1.0),
        "us" | "µs" | "usec" => Some(1e3),
        "ms" | "msec" => Some(1e6),
        "s" | "sec" => Some(1e9),
        _ => None,
    }
}

/// Events that count toward a thread's time: slices on CPU lanes.
fn cpu_slice(k: EventKind) -> bool {
    !k.on_gpu_lane() && !matches!(k, EventKind::Instant | EventKind::Span)
}

/// (a) `time (inc)` of a node ≤ the summed durations of its own events.
fn events_cover_nodes(
    p: &Profile,
    ev: &grove::model::EventTable,
    inc: &[f64],
    scale: f64,
) -> Option<Failure> {
    let mut dur = vec![0f64; p.cct.len()];
    let mut has = vec![false; p.cct.len()];
    for i in 0..ev.len() {
        let n = ev.node[i];
        if n == NONE_U32 || n as usize >= dur.len() || ev.kind[i] == EventKind::Instant {
            continue;
        }
        dur[n as usize] += ev.dur[i].max(0) as f64;
        has[n as usize] = true;
    }
    let mut worst: Option<(u32, f64)> = None;
    for n in 0..p.cct.len() {
        let got = inc[n] * scale;
        if !has[n] || !got.is_finite() || got <= dur[n] * (1.0 + SLACK) + 1.0 {
            continue;
        }
        let ratio = got / dur[n].max(1.0);
        if worst.is_none_or(|(_, r)| ratio > r) {
            worst = Some((n as u32, ratio));
        }
    }
    worst.map(|(n, _)| Failure {
        check: 'a',
        what: format!(
            "{}: time (inc) {} ns > its events' {} ns",
            p.cct.name(n),
            inc[n as usize] * scale,
            dur[n as usize]
        ),
    })
}

/// Each node's root.
fn roots_of(p: &Profile) -> Vec<u32> {
    let mut root = vec![u32::MAX; p.cct.len()];
    for n in 0..p.cct.len() as u32 {
        let mut path = vec![n];
        let mut r = n;
        while let Some(up) = p.cct.parent(r) {
            if root[up as usize] != u32::MAX {
                r = root[up as usize];
                break;
            }
            path.push(up);
            r = up;
        }
        for m in path {
            root[m as usize] = r;
        }
    }
    root
}

/// (c) a thread root's `time (inc)` ≤ its busy span (CPU-lane events only).
fn roots_within_busy_span(
    p: &Profile,
    ev: &grove::model::EventTable,
    inc: &[f64],
    scale: f64,
) -> Option<Failure> {
    let root = roots_of(p);
    let mut span: HashMap<u32, (i64, i64)> = HashMap::new();
    for i in 0..ev.len() {
        let n = ev.node[i];
        if n == NONE_U32 || n as usize >= root.len() || !cpu_slice(ev.kind[i]) {
            continue;
        }
        let s = span.entry(root[n as usize]).or_insert((i64::MAX, i64::MIN));
        s.0 = s.0.min(ev.ts[i]);
        s.1 = s.1.max(ev.ts[i].saturating_add(ev.dur[i].max(0)));
    }
    let mut bad: Vec<(u32, f64, i64)> = span
        .into_iter()
        .map(|(r, (lo, hi))| (r, inc[r as usize] * scale, hi.saturating_sub(lo)))
        .filter(|&(_, got, busy)| got.is_finite() && got > busy as f64 * (1.0 + SLACK) + 1.0)
        .collect();
    bad.sort_by(|a, b| (b.1 / b.2.max(1) as f64).total_cmp(&(a.1 / a.2.max(1) as f64)));
    bad.first().map(|&(r, got, busy)| Failure {
        check: 'c',
        what: format!(
            "root {}: time (inc) {got} ns > busy span {busy} ns ({} of {} roots over)",
            p.cct.name(r),
            bad.len(),
            p.cct.roots.len()
        ),
    })
}

/// (e) each instant of a thread counts once: a thread root's `time (inc)` never exceeds
/// the time covered by its CPU-lane slices (the union of their intervals), so no
/// slice's duration is counted twice in the thread's total.
fn roots_count_each_instant_once(
    p: &Profile,
    ev: &grove::model::EventTable,
    inc: &[f64],
    scale: f64,
) -> Option<Failure> {
    let root = roots_of(p);
    let mut spans: HashMap<u32, Vec<(i64, i64)>> = HashMap::new();
    for i in 0..ev.len() {
        let n = ev.node[i];
        if n == NONE_U32 || n as usize >= root.len() || !cpu_slice(ev.kind[i]) {
            continue;
        }
        let end = ev.ts[i].saturating_add(ev.dur[i].max(0));
        spans
            .entry(root[n as usize])
            .or_default()
            .push((ev.ts[i], end));
    }
    let mut bad: Vec<(u32, f64, i64)> = spans
        .into_iter()
        .map(|(r, mut iv)| {
            iv.sort_unstable();
            let (mut covered, mut reach) = (0i64, i64::MIN);
            for (lo, hi) in iv {
                let lo = lo.max(reach);
                if hi > lo {
                    covered += hi - lo;
                }
                reach = reach.max(hi);
            }
            (r, inc[r as usize] * scale, covered)
        })
        .filter(|&(_, got, covered)| got.is_finite() && got > covered as f64 * (1.0 + SLACK) + 1.0)
        .collect();
    bad.sort_by(|a, b| (b.1 / b.2.max(1) as f64).total_cmp(&(a.1 / a.2.max(1) as f64)));
    bad.first().map(|&(r, got, covered)| Failure {
        check: 'e',
        what: format!(
            "root {}: time (inc) {got} ns > the {covered} ns its slices cover ({} of {} roots over)",
            p.cct.name(r),
            bad.len(),
            p.cct.roots.len()
        ),
    })
}

/// Statistic words: a column named with one is not a sum over its subtree.
const STATISTICS: &[&str] = &[
    "avg",
    "average",
    "mean",
    "median",
    "min",
    "max",
    "minimum",
    "maximum",
    "std",
    "stddev",
    "var",
    "variance",
    "cv",
    "argmax",
    "argmin",
    "rate",
    "ratio",
    "percent",
    "pct",
    "per",
    "imbalance",
    "util",
    "utilization",
    "efficiency",
    "ipc",
    "cpi",
    "bandwidth",
    "throughput",
];

/// Whether `X (inc)` is a sum over the subtree: no statistic word in its name (split at
/// anything not a letter or digit, `@` labels included: `time (inc)@mean`), and no
/// `/` or `%` (a per-something ratio: `Avg time/rank (inc)`).
fn additive(col: &str) -> bool {
    if col.contains('/') || col.contains('%') {
        return false;
    }
    let lower = col.to_ascii_lowercase();
    !lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| STATISTICS.contains(&w))
}

/// (b) the children's inclusive values add up to at most the parent's.
fn children_within_parent(p: &Profile) -> Vec<Failure> {
    let mut out = Vec::new();
    for col in p.metrics.names() {
        if base_of_inclusive(&col).is_none() || !additive(&col) {
            continue;
        }
        let v = p.metrics.values(&col).unwrap();
        // A column with negative values (a delta profile) is a sum, but a parent whose
        // own change is negative has children that add up to more than it.
        if v.iter().any(|x| *x < 0.0) {
            continue;
        }
        let noise = 1e-9
            * v.iter()
                .filter(|x| x.is_finite())
                .fold(0f64, |m, x| m.max(x.abs()));
        let mut sum = vec![0f64; v.len()];
        for n in 0..v.len() as u32 {
            if let Some(par) = p.cct.parent(n) {
                if v[n as usize].is_finite() {
                    sum[par as usize] += v[n as usize];
                }
            }
        }
        let over: Vec<usize> = (0..v.len())
            .filter(|&n| {
                v[n].is_finite()
                    && p.cct.has_children(n as u32)
                    && sum[n] > v[n] + SLACK * v[n].abs() + noise
            })
            .collect();
        if let Some(&n) = over.iter().max_by(|&&a, &&b| {
            (sum[a] / v[a].abs().max(1e-300)).total_cmp(&(sum[b] / v[b].abs().max(1e-300)))
        }) {
            out.push(Failure {
                check: 'b',
                what: format!(
                    "{col}: children of {} add up to {} > {} ({} node(s) over)",
                    p.cct.name(n as u32),
                    sum[n],
                    v[n],
                    over.len()
                ),
            });
        }
    }
    out
}

/// Names (the base, lowercased, without `@label`) of count-like metrics: calls, visits,
/// samples, counts, and instruction or event counts (callgrind's event names, PAPI
/// counters).
fn count_like(col: &str) -> bool {
    if !additive(col) {
        return false;
    }
    let base = base_of_inclusive(col).unwrap_or_else(|| col.to_string());
    let base = base.rsplit_once('@').map(|x| x.0).unwrap_or(&base);
    let b = base.trim().to_ascii_lowercase();
    const NAMES: &[&str] = &[
        "count",
        "calls",
        "ncalls",
        "visits",
        "samples",
        "sample",
        "instructions",
        "ir",
        "dr",
        "dw",
        "i1mr",
        "d1mr",
        "d1mw",
        "ilmr",
        "dlmr",
        "dlmw",
        "i2mr",
        "d2mr",
        "d2mw",
        "bc",
        "bcm",
        "bi",
        "bim",
    ];
    NAMES.contains(&b.as_str()) || b.starts_with("papi_")
}

/// (d) count-like columns hold integers.
fn counts_are_integers(p: &Profile) -> Vec<Failure> {
    let mut out = Vec::new();
    let mut cols: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for col in p.metrics.names() {
        if !count_like(&col) {
            continue;
        }
        let v = p.metrics.values(&col).unwrap();
        let bad: Vec<f64> = v
            .iter()
            .copied()
            .filter(|x| x.is_finite() && *x != x.round())
            .collect();
        if let Some(&first) = bad.first() {
            cols.insert(col, (bad.len(), first));
        }
    }
    for (col, (n, first)) in cols {
        out.push(Failure {
            check: 'd',
            what: format!("{col}: {n} value(s) not integers, e.g. {first}"),
        });
    }
    out
}

#[test]
fn the_column_rules() {
    for c in [
        "time (inc)",
        "gpu_time (inc)",
        "Ir (inc)",
        "time (inc)@gcc",
        "samples (inc)",
    ] {
        assert!(additive(c), "{c}");
    }
    for c in [
        "time (inc)@mean",
        "Avg time/rank (inc)",
        "time (inc)@std",
        "max#time (inc)",
        "GPUOP (sec) (inc)@min",
    ] {
        assert!(!additive(c), "{c}");
    }
    for c in [
        "count",
        "Ir",
        "Ir (inc)",
        "calls",
        "samples (inc)",
        "PAPI_TOT_INS",
        "count@gcc",
    ] {
        assert!(count_like(c), "{c}");
    }
    for c in ["time", "count@mean", "Calls/rank", "bytes"] {
        assert!(!count_like(c), "{c}");
    }
}
