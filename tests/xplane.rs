//! TensorFlow/JAX XPlane (`*.xplane.pb`, issue 11): the corpus's multi-GPU worker
//! against scripts/xplane_totals.py's own wire-format decoding
//! (testdata/xplane/gpu_multi_worker_totals.json), and damaged files as one line with
//! exit code 2.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use grove::load::load_path;
use grove::model::{EventKind, Format};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

const WORKER: &str = "../shared/corpus/tensorflow-profiler/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb";

fn worker() -> Option<PathBuf> {
    let p = repo(WORKER);
    p.is_file().then_some(p)
}

#[test]
fn planes_lines_and_totals_match_an_independent_decoder() {
    let Some(f) = worker() else { skip!() };
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo("testdata/xplane/gpu_multi_worker_totals.json")).unwrap(),
    )
    .unwrap();
    let p = load_path(&f).unwrap();
    assert_eq!(p.source.format, Format::XPlane);
    let ev = p.events.as_ref().unwrap();
    for (plane, w) in want["planes"].as_object().unwrap() {
        let device: Option<i64> = plane
            .strip_prefix("/device:GPU:")
            .map(|d| d.parse().unwrap());
        let mine: Vec<usize> = (0..ev.len())
            .filter(|&i| match device {
                Some(d) => ev.device[i] == d && ev.kind[i] != EventKind::GpuAnnotation,
                None => ev.strings.resolve(ev.pid[i]) == plane.as_str(),
            })
            .collect();
        let count = |k: EventKind| mine.iter().filter(|&&i| ev.kind[i] == k).count() as i64;
        assert_eq!(
            count(EventKind::Kernel),
            w["kernel"].as_i64().unwrap(),
            "{plane}"
        );
        assert_eq!(
            count(EventKind::Memcpy),
            w["memcpy"].as_i64().unwrap(),
            "{plane}"
        );
        assert_eq!(
            count(EventKind::Memset),
            w["memset"].as_i64().unwrap(),
            "{plane}"
        );
        assert_eq!(count(EventKind::Cpu), w["cpu"].as_i64().unwrap(), "{plane}");
        let dur: i64 = mine.iter().map(|&i| ev.dur[i]).sum();
        assert_eq!(dur, w["dur_ns"].as_i64().unwrap(), "{plane}");
        if let Some(d) = device {
            let derived = (0..ev.len())
                .filter(|&i| ev.device[i] == d && ev.kind[i] == EventKind::GpuAnnotation)
                .count() as i64;
            assert_eq!(derived, w["derived"].as_i64().unwrap(), "{plane}");
        }
    }
    // The tree holds every device activity once: its gpu_time total is theirs.
    let gpu: f64 = p
        .metrics
        .values("gpu_time")
        .unwrap()
        .iter()
        .filter(|v| v.is_finite())
        .sum();
    let want_gpu: i64 = want["planes"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("/device:"))
        .map(|(_, w)| w["dur_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(gpu, want_gpu as f64);
    // Kernels without a launch are grouped by their framework op; the warning says so.
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("have no launch in the file")));
    let k = (0..ev.len())
        .find(|&i| ev.kind[i] == EventKind::Kernel && ev.device[i] == 4)
        .unwrap();
    let parent = p.cct.parent(ev.node[k]).unwrap();
    assert_eq!(&*p.cct.frame(parent).kind, "tf_op");
    assert!(
        p.cct.name(parent).starts_with("replica_4/"),
        "{}",
        p.cct.name(parent)
    );
    assert_eq!(
        p.cct.frame(ev.node[k]).attr("tf_op"),
        Some(p.cct.name(parent))
    );
    assert!(p
        .meta_value("derived lines (timeline only)")
        .is_some_and(|v| v.contains("XLA Ops") || v.contains("TensorFlow Ops")));
}

fn grove(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_kernel_table_and_group_by_read_it() {
    let Some(f) = worker() else { skip!() };
    let out = grove(&["kernels", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FillPhiloxRandomKernelLaunch"), "{text}");
    let out = grove(&[
        "tree",
        f.to_str().unwrap(),
        "--cmd",
        "group-by tf_op",
        "--format",
        "csv",
        "--metric",
        "gpu_time",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.contains("RandomUniform"), "{csv}");
}

#[test]
fn damaged_xplanes_are_one_line_and_exit_2() {
    let Some(f) = worker() else { skip!() };
    let good = std::fs::read(&f).unwrap();
    let dir = std::env::temp_dir().join(format!("grove-xplane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("empty.xplane.pb".into(), Vec::new()),
        ("cut.xplane.pb".into(), good[..good.len() / 3].to_vec()),
        ("head.xplane.pb".into(), good[..40].to_vec()),
    ];
    for k in 0..12 {
        let mut b = good.clone();
        let at = (k * 250_007 + 13) % b.len();
        b[at] ^= 0xff;
        cases.push((format!("flip{k}.xplane.pb"), b));
    }
    for (name, bytes) in &cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = grove(&["info", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        if !out.status.success() {
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
            assert!(err.contains(name.as_str()), "{name}: {err}");
        }
    }
    for name in ["empty.xplane.pb", "cut.xplane.pb", "head.xplane.pb"] {
        let out = grove(&["info", dir.join(name).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Without the corpus: one plane of the worker (testdata/xplane/gpu1.xplane.pb, bytes
/// unchanged): 19 host-to-device copies on one stream, 33,792 ns in all (the corpus
/// totals' `/device:GPU:1` row), grouped under their `level 0` op.
#[test]
fn one_plane_in_testdata() {
    let p = load_path(&repo("testdata/xplane/gpu1.xplane.pb")).unwrap();
    assert_eq!(p.source.format, Format::XPlane);
    let ev = p.events.as_ref().unwrap();
    let copies: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Memcpy)
        .collect();
    assert_eq!(copies.len(), 19);
    assert_eq!(copies.iter().map(|&i| ev.dur[i]).sum::<i64>(), 33_792);
    assert!(copies.iter().all(|&i| ev.device[i] == 1));
    let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
    assert_eq!(
        names,
        [
            "<unattributed> stream 123",
            "MakeTensorFromProto",
            "MemcpyH2D"
        ]
    );
    assert_eq!(p.meta_value("hostname"), Some("34.83.195.179:6003"));
}
