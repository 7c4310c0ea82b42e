//! Thicket write-back (`--format thicket`, `export thicket FILE`): Thicket's own
//! `Thicket.from_json` loads what grove writes (scripts/thicket_roundtrip.py, skipped
//! when python3 or llnl-thicket is missing) and sees the nodes, profiles, metric
//! totals and metadata of testdata/thicket/goldens.json; grove reads its output back
//! to the same tree.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{corpus, grove};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    common::scratch("thicket").join(name)
}

/// What Thicket sees in a file, or None when python3 or thicket is not installed.
fn thicket_view(file: &Path) -> Option<serde_json::Value> {
    let out = Command::new("python3")
        .arg(root().join("scripts/thicket_roundtrip.py"))
        .arg(file)
        .output()
        .ok()?;
    if out.status.code() == Some(3) {
        return None;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn golden() -> serde_json::Value {
    let g: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("testdata/thicket/goldens.json")).unwrap(),
    )
    .unwrap();
    g["testdata/thicket/mpi_scaling.thicket.json"].clone()
}

fn write_thicket(inputs: &[&str], out: &Path) {
    let mut args = vec!["tree"];
    args.extend_from_slice(inputs);
    args.extend_from_slice(&["--format", "thicket"]);
    let (code, text, err) = grove(&args);
    assert_eq!(code, 0, "{err}");
    std::fs::write(out, text).unwrap();
}

#[test]
fn a_thicket_survives_the_round_trip() {
    let input = root().join("testdata/thicket/mpi_scaling.thicket.json");
    let out = tmp("roundtrip.thicket.json");
    write_thicket(&[input.to_str().unwrap()], &out);
    // grove reads its own output to the same tree and values.
    for m in ["Total time@27_cores", "Avg time/rank@125_cores"] {
        let a = grove(&[
            "tree",
            input.to_str().unwrap(),
            "--metric",
            m,
            "--format",
            "csv",
        ]);
        let b = grove(&[
            "tree",
            out.to_str().unwrap(),
            "--metric",
            m,
            "--format",
            "csv",
        ]);
        assert_eq!(a.1, b.1, "{m}");
    }
    let Some(seen) = thicket_view(&out) else {
        skip!("python3 or llnl-thicket is not installed")
    };
    let g = golden();
    assert_eq!(seen["nodes"], g["nodes"]);
    assert_eq!(seen["profiles"], g["profiles"]);
    assert_eq!(seen["totals"], g["totals"]);
    assert_eq!(seen["mpi.world.size"], g["mpi.world.size"]);
    assert_eq!(
        seen["labels"],
        serde_json::json!(["125_cores", "27_cores", "64_cores"])
    );
}

#[test]
fn an_ensemble_of_caliper_files_loads_in_thicket() {
    let Some(dir) = corpus("thicket/thicket/tests/data/mpi_scaling_cali") else {
        skip!()
    };
    let files: Vec<String> = ["27_cores", "64_cores", "125_cores"]
        .iter()
        .map(|f| dir.join(format!("{f}.cali")).display().to_string())
        .collect();
    let refs: Vec<&str> = files.iter().map(|s| s.as_str()).collect();
    let out = tmp("cali.thicket.json");
    write_thicket(&refs, &out);
    let Some(seen) = thicket_view(&out) else {
        skip!("python3 or llnl-thicket is not installed")
    };
    let g = golden();
    assert_eq!(seen["nodes"], g["nodes"]);
    assert_eq!(seen["profiles"], 3);
    assert_eq!(seen["mpi.world.size"], g["mpi.world.size"]);
    // grove knows the spot metrics are inclusive and says so in Thicket's lists.
    for (m, v) in g["totals"].as_object().unwrap() {
        assert_eq!(seen["totals"][format!("{m} (inc)")], *v, "{m}");
    }
    assert_eq!(seen["exclusive_metrics"], serde_json::json!([]));
}

/// The writer's bytes, on a small input (testdata/README.md says how it was made).
#[test]
fn golden_of_the_roots() {
    let input = root().join("testdata/thicket/mpi_scaling.thicket.json");
    let (code, out, err) = grove(&[
        "tree",
        input.to_str().unwrap(),
        "--format",
        "thicket",
        "--depth",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let want =
        std::fs::read_to_string(root().join("testdata/thicket/roots.grove.thicket.json")).unwrap();
    assert!(
        out == want,
        "output differs from testdata/thicket/roots.grove.thicket.json"
    );
}

#[test]
fn export_command_writes_the_same_file() {
    let input = root().join("testdata/thicket/mpi_scaling.thicket.json");
    let by_format = tmp("format.thicket.json");
    write_thicket(&[input.to_str().unwrap()], &by_format);
    let by_export = tmp("export.thicket.json");
    let cmd = format!("export thicket {}", by_export.display());
    let (code, _, err) = grove(&["tree", input.to_str().unwrap(), "--cmd", &cmd]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&by_format).unwrap(),
        std::fs::read(&by_export).unwrap()
    );
    // A single profile is one Thicket profile, named by its file's stem.
    let single = tmp("single.thicket.json");
    write_thicket(
        &[root().join("testdata/small.trace.json").to_str().unwrap()],
        &single,
    );
    if let Some(seen) = thicket_view(&single) {
        assert_eq!(seen["profiles"], 1);
        assert_eq!(seen["labels"], serde_json::json!(["small"]));
        assert_eq!(seen["nodes"], 142);
    }
    let (code, _, err) = grove(&["tree", input.to_str().unwrap(), "--cmd", "export thicket"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("usage: export csv|json|parquet|hatchet|folded|thicket|svg FILE"),
        "{err}"
    );
}
