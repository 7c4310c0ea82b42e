//! Ensembles on real data: directories of runs searched in depth,
//! labels from the parts of the paths that differ, a time metric first, and ensemble
//! statistics that keep the tree consistent (a child's inclusive mean never exceeds
//! its parent's).

use std::collections::HashMap;
use std::path::PathBuf;

use grove::ensemble::{restat, Stats};
use grove::model::{MetricTable, Profile};

mod common;
use common::grove;

const RAJAPERF: &str = "thicket/thicket/tests/data/rajaperf";

/// Every database and directory of runs in the corpus that opens as several profiles.
fn ensembles() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = common::corpus("hpctoolkit/tests/data/dbase") {
        let mut dbs: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dbs.sort();
        out.extend(dbs);
    }
    for rel in [
        "pipit/pipit/tests/data/ping-pong-hpctoolkit",
        "hatchet/hatchet/tests/data/hpctoolkit-allgather-database",
        "hatchet/hatchet/tests/data/hpctoolkit-cpi-database",
        RAJAPERF,
        "thicket/thicket/tests/data/mpi_scaling_cali",
    ] {
        out.extend(common::corpus(rel));
    }
    out
}

/// (column, child, parent mean, child mean) of each child whose inclusive mean
/// exceeds its parent's.
fn inconsistent(p: &Profile, metrics: &MetricTable) -> Vec<(String, String, f64, f64)> {
    let mut bad = Vec::new();
    for col in metrics.names() {
        if !col.ends_with(" (inc)@mean") {
            continue;
        }
        let v = metrics.values(&col).unwrap();
        for n in 0..p.cct.len() as u32 {
            let Some(par) = p.cct.parent(n) else { continue };
            let (c, q) = (v[n as usize], v[par as usize]);
            if c.is_nan() || q.is_nan() {
                continue;
            }
            if c > q + 1e-9 * q.abs().max(1.0) {
                bad.push((col.clone(), p.cct.name(n).to_string(), q, c));
            }
        }
    }
    bad
}

#[test]
fn inclusive_means_never_exceed_the_parents() {
    let mut checked = 0;
    let mut before = 0;
    for path in ensembles() {
        let p = grove::load::load_inputs(std::slice::from_ref(&path), &HashMap::new())
            .unwrap_or_else(|e| panic!("{e}"));
        if !p.metrics.names().iter().any(|c| c.ends_with("@mean")) {
            continue;
        }
        checked += 1;
        let bad = inconsistent(&p, &p.metrics);
        assert!(
            bad.is_empty(),
            "{}: {:?}",
            path.display(),
            &bad[..bad.len().min(5)]
        );
        // The old convention (over the members where a node is present) is still
        // there, and is what broke the tree.
        let mut present = p.metrics.clone();
        let members = grove::app::compare::member_labels(&p.metrics);
        let hpc = p.source.format == grove::model::Format::HpcToolkit;
        restat(&mut present, &members, hpc, Stats::Present);
        before += inconsistent(&p, &present).len();
    }
    eprintln!(
        "{checked} ensembles: 0 children above their parent's inclusive mean with stats zero, {before} with stats present"
    );
    if checked > 0 {
        assert!(
            before > 0,
            "no ensemble of the corpus showed the inconsistency of the old statistics"
        );
    }
}

/// The members (summary left out) that hold a value of `m` somewhere.
fn members_with(p: &Profile, m: &str) -> usize {
    grove::app::compare::member_labels(&p.metrics)
        .iter()
        .filter(|l| *l != "summary")
        .filter(|l| {
            p.metrics
                .values(&grove::ensemble::column(m, l))
                .is_some_and(|c| c.iter().any(|x| !x.is_nan()))
        })
        .count()
}

/// hpcprof's own statistic: the summary profile holds the sum over the profiles at
/// every node, so an inclusive `@mean` times the profiles that have the metric is it
/// (v4 to the last bits; experiment.xml prints 6 significant digits). And metrics
/// whose per-profile columns are equal get equal statistics: on the CUDA and HIP
/// databases `GPUOP (sec) (inc)@mean` was half of `GKER (sec) (inc)@mean`, as the GPU
/// stream profile, which holds no values, counted as a 0 for GPUOP.
#[test]
fn inclusive_means_times_the_profiles_are_hpcprofs_sums() {
    let mut checked = 0;
    for path in ensembles() {
        let p = grove::load::load_inputs(std::slice::from_ref(&path), &HashMap::new())
            .unwrap_or_else(|e| panic!("{e}"));
        if p.source.format != grove::model::Format::HpcToolkit {
            continue;
        }
        let old = path.join("experiment.xml").is_file();
        let slack = if old { 5e-6 } else { 1e-12 };
        for col in p.metrics.names() {
            let Some(m) = col.strip_suffix("@mean") else {
                continue;
            };
            let Some(sum) = p.metrics.values(&grove::ensemble::column(m, "summary")) else {
                continue;
            };
            if !m.ends_with(" (inc)") {
                continue;
            }
            let n = members_with(&p, m) as f64;
            let mean = p.metrics.values(&col).unwrap();
            for (i, (&s, &x)) in sum.iter().zip(mean).enumerate() {
                if s.is_nan() || n == 0.0 {
                    continue;
                }
                checked += 1;
                assert!(
                    (x * n - s).abs() <= slack * s.abs().max(1.0),
                    "{}: {m} at {}: mean {x} x {n} profiles vs hpcprof's sum {s}",
                    path.display(),
                    p.cct.name(i as u32)
                );
            }
        }
        let name = path.file_name().unwrap().to_string_lossy();
        if name.contains("cuda") || name.contains("hip") {
            let stat = |m: &str, s: &str| p.metrics.values(&format!("{m}@{s}")).unwrap().to_vec();
            for s in ["mean", "min", "max", "std"] {
                assert_eq!(
                    stat("GPUOP (sec) (inc)", s),
                    stat("GKER (sec) (inc)", s),
                    "{name}: @{s}"
                );
            }
            if name == "loops-cuda-nvidia-t.d" {
                // hpcprof's summary: 0.029794427999999984 s of GPU operations, all
                // of them kernels, in the one CPU thread's profile.
                let root = p.cct.roots[0] as usize;
                assert_eq!(
                    stat("GPUOP (sec) (inc)", "mean")[root],
                    0.029794427999999984
                );
                assert_eq!(
                    stat("GPUOP (sec) (inc)", "summary")[root],
                    0.029794427999999984
                );
            }
        }
    }
    eprintln!("{checked} node values: inclusive @mean x profiles = hpcprof's summary");
}

#[test]
fn a_directory_of_runs_is_read_in_depth() {
    let Some(dir) = common::corpus(RAJAPERF) else {
        skip!()
    };
    let dir = dir.join("lassen");
    let (code, out, err) = grove(&["info", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["inputs"], 6);
    // Labelled by what differs: the run directory and the tuning, not `#0..#4`.
    let dialect = last["dialect"].as_str().unwrap();
    for l in [
        "1/Base_CUDA-block_128",
        "1/Base_CUDA-block_256",
        "5/Base_CUDA-block_128",
    ] {
        assert!(dialect.contains(l), "{dialect}");
    }
    assert!(!dialect.contains('#'), "{dialect}");
}

#[test]
fn a_time_metric_is_the_default() {
    let Some(dir) = common::corpus(RAJAPERF) else {
        skip!()
    };
    let file = dir.join("lassen/clang10.0.1_nvcc10.2.89_1048576/1/Base_CUDA-block_128.cali");
    let p = grove::load::load_path(&file).unwrap();
    assert_eq!(p.default_metric, "Avg time/rank (inc)");
    let picker = p.metrics.picker_metrics();
    assert!(picker[..4].iter().all(|m| m.contains("time")), "{picker:?}");
    let e = grove::load::load_inputs(&[dir.join("lassen")], &HashMap::new()).unwrap();
    assert_eq!(e.default_metric, "Avg time/rank (inc)@mean");
}

#[test]
fn a_directory_without_profiles_says_what_it_found() {
    let dir = std::env::temp_dir().join(format!("grove-ens-empty-{}", std::process::id()));
    let deep = dir.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("notes.csv"), "x,y\n1,2\n").unwrap();
    let (code, _, err) = grove(&["info", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no profile found"), "{err}");
    assert!(err.contains("1 *.csv"), "{err}");
    assert!(err.contains("quoted glob"), "{err}");
}

/// `stats present` is the headless twin of the header's convention: it changes the
/// statistics columns, undo takes it back, and on one profile it is refused.
#[test]
fn stats_present_and_back() {
    let Some(dir) = common::corpus("hpctoolkit/tests/data/dbase/loops-cputime-t.d") else {
        skip!()
    };
    let dir = dir.to_str().unwrap();
    let tree = |cmds: &[&str]| {
        let mut args = vec![
            "tree",
            dir,
            "--metric",
            "CPUTIME (sec) (inc)@mean",
            "--format",
            "csv",
        ];
        for c in cmds {
            args.push("--cmd");
            args.push(c);
        }
        let (code, out, err) = grove(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let zero = tree(&[]);
    let present = tree(&["stats present"]);
    assert_ne!(zero, present);
    assert_eq!(tree(&["stats zero"]), zero);
    assert_eq!(tree(&["stats present", "undo"]), zero);
    let (code, _, err) = grove(&[
        "tree",
        "testdata/small.trace.json",
        "--cmd",
        "stats present",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not an ensemble"), "{err}");
}

/// `grove info DIR`: the inputs, then the ensemble with one line per member.
#[test]
fn info_lists_the_members() {
    let Some(dir) = common::corpus(RAJAPERF) else {
        skip!()
    };
    let (code, out, err) = grove(&["info", dir.join("lassen").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let ens = &out[out.find("ensemble: 6 inputs").expect(&out)..];
    let members: Vec<&str> = ens
        .lines()
        .skip_while(|l| *l != "members:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(members.len(), 6, "{ens}");
    assert!(
        members[0]
            .trim_start()
            .starts_with("1/Base_CUDA-block_128 "),
        "{ens}"
    );
    assert!(members[0].ends_with("/1/Base_CUDA-block_128.cali"), "{ens}");
    assert!(ens.contains("stats:    zero"), "{ens}");
}

/// `scroll` never overflows, and is navigation (not logged, the tree unchanged).
#[test]
fn scroll_is_saturating_navigation() {
    let (code, plain, err) = grove(&["tree", "testdata/small.trace.json"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = grove(&[
        "tree",
        "testdata/small.trace.json",
        "--cmd",
        "scroll details 9223372036854775807",
        "--cmd",
        "scroll details 5",
        "--cmd",
        "scroll table -9223372036854775808",
        "--cmd",
        "scroll table 9223372036854775807",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, plain);
    let (code, _, err) = grove(&[
        "tree",
        "testdata/small.trace.json",
        "--cmd",
        "scroll sideways 3",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("scroll details N | table N"), "{err}");
}
