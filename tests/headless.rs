//! The headless twins: `grove tree` and `grove info`, and how bad input fails.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::corpus;

/// Runs grove in a UTF-8 locale, so the text layouts use their Unicode glyphs.
fn grove(args: &[&str]) -> (i32, String, String) {
    common::grove_env(args, &[("LANG", "C.UTF-8")])
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = common::scratch("test").join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The oracle text is Hatchet's own `tree()` output (docs: analyses.md §1).
#[test]
fn text_tree_matches_hatchet() {
    let Some(f) = corpus("hatchet-exports/graph-literal.literal.json") else {
        skip!()
    };
    let (code, out, err) = grove(&[
        "tree",
        f.to_str().unwrap(),
        "--metric",
        "time (inc),time",
        "--precision",
        "2",
        "--no-legend",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = "135.00 0.00 foo
├─ 20.00 5.00 bar
│  ├─ 5.00 5.00 baz
│  └─ 10.00 10.00 grault
├─ 60.00 0.00 qux
│  └─ 60.00 5.00 quux
│     └─ 55.00 10.00 corge
│        ├─ 20.00 5.00 bar
│        │  ├─ 5.00 5.00 baz
│        │  └─ 10.00 10.00 grault
│        ├─ 15.00 15.00 garply
│        └─ 10.00 10.00 grault
└─ 55.00 0.00 waldo
   ├─ 40.00 5.00 fred
   │  ├─ 5.00 5.00 plugh
   │  └─ 30.00 5.00 xyzzy
   │     └─ 25.00 5.00 thud
   │        ├─ 5.00 5.00 baz
   │        └─ 15.00 15.00 garply
   └─ 15.00 15.00 garply
30.00 10.00 waldo
└─ 20.00 5.00 bar
   ├─ 5.00 5.00 baz
   └─ 10.00 10.00 grault
";
    assert_eq!(out, want);
}

/// grove's export of a generated trace, loaded by Hatchet 2026.2.0 and printed with
/// `tree(metric_column=["time (inc)", "time"], precision=2, render_header=False)`, is
/// testdata/hatchet_tree_small.txt; grove prints the same export identically.
#[test]
fn export_prints_like_hatchet() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    let (code, literal, err) = grove(&["tree", f.to_str().unwrap(), "--format", "hatchet"]);
    assert_eq!(code, 0, "{err}");
    let exported = tmp("small.literal.json", literal.as_bytes());
    let (code, out, err) = grove(&[
        "tree",
        exported.to_str().unwrap(),
        "--metric",
        "time (inc),time",
        "--precision",
        "2",
        "--no-legend",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hatchet_tree_small.txt"),
    )
    .unwrap();
    assert_eq!(out, want);
}

#[test]
fn text_tree_legend_and_depth() {
    let Some(f) = corpus("hatchet-exports/graph-literal.literal.json") else {
        skip!()
    };
    // Hatchet's legend is compared, so Hatchet's raw numbers (the default text has
    // units and a header row).
    let (code, out, _) = grove(&[
        "tree",
        f.to_str().unwrap(),
        "--depth",
        "1",
        "--ascii",
        "--raw",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Legend (Metric: time Min: 0.00 Max: 15.00)"),
        "{out}"
    );
    assert!(out.contains("# 13.50 - 15.00"), "{out}");
    assert!(!out.contains("baz"), "depth 1 stops above baz:\n{out}");
    assert!(out.contains("|- "), "{out}");
}

#[test]
fn hatchet_export_reads_back() {
    let Some(f) = corpus("hatchet-exports/pyinstrument.literal.json") else {
        skip!()
    };
    let (code, out, err) = grove(&["tree", f.to_str().unwrap(), "--format", "hatchet"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let root = &v[0];
    assert!(root["frame"]["name"].is_string() && root["frame"]["type"].is_string());
    assert!(root["metrics"]["time (inc)"].is_number());
    let back = tmp("back.json", out.as_bytes());
    let (code, again, _) = grove(&["tree", back.to_str().unwrap(), "--format", "hatchet"]);
    assert_eq!(code, 0);
    assert_eq!(again, out);
}

/// Parquet holds the same rows as the JSON export, typed, with units in its metadata.
#[test]
fn parquet_export_matches_json() {
    use polars::prelude::*;
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    let f = f.to_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["tree", f, "--format", "parquet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.starts_with(b"PAR1"));
    let mut reader = ParquetReader::new(std::io::Cursor::new(out.stdout.clone()));
    let units = reader
        .get_metadata()
        .unwrap()
        .key_value_metadata()
        .as_ref()
        .and_then(|kv| kv.iter().find(|k| k.key == "grove.units"))
        .and_then(|k| k.value.clone())
        .expect("units in the metadata");
    let units: serde_json::Value = serde_json::from_str(&units).unwrap();
    assert_eq!(units["time (inc)"], "ns");
    let df = reader.finish().unwrap();
    let (code, json, err) = grove(&["tree", f, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(df.height(), nodes.len());
    let names = df.column("name").unwrap().str().unwrap().clone();
    let inc = df.column("time (inc)").unwrap().f64().unwrap().clone();
    let depth = df.column("depth").unwrap().u32().unwrap().clone();
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(names.get(i), n["name"].as_str(), "row {i}");
        assert_eq!(depth.get(i), n["depth"].as_u64().map(|d| d as u32));
        assert_eq!(inc.get(i), n["metrics"]["time (inc)"].as_f64(), "row {i}");
    }
}

#[test]
fn json_export_of_a_trace() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    let (code, out, err) = grove(&[
        "tree",
        f.to_str().unwrap(),
        "--format",
        "json",
        "--depth",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "grove-tree");
    let nodes = v["nodes"].as_array().unwrap();
    assert!(!nodes.is_empty());
    assert!(nodes.iter().all(|n| n["depth"].as_u64().unwrap() <= 2));
    assert!(nodes[0]["parent"].is_null());
    assert!(nodes[0]["metrics"]["time (inc)"].is_number());
}

#[test]
fn info_counts() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    let (code, out, _) = grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("PyTorch profiler (Kineto)"), "{out}");
    assert!(out.contains("gpu_time (inc) [ns]"), "{out}");
    assert!(out.contains("streams:"), "{out}");
}

#[test]
fn bad_input_is_one_clear_line() {
    let cases: Vec<(PathBuf, &str)> = vec![
        (PathBuf::from("/nonexistent/trace.json"), "No such file"),
        (
            tmp("garbage.bin", b"\x00\x01\x02hello"),
            "unrecognised format",
        ),
        (tmp("empty.json", b""), "empty"),
        (
            tmp(
                "bad.json",
                b"{\"traceEvents\": [{\"ph\": \"X\", \"ts\": }]}",
            ),
            "line 1, column",
        ),
        (tmp("noevents.json", b"{\"other\": 1}"), "traceEvents"),
        (
            tmp("trunc.json.gz", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2]),
            "",
        ),
        (
            tmp(
                "badliteral.json",
                b"[{\"frame\": {\"name\": \"a\"}, \"metrics\": {\"time\": x}}]",
            ),
            "line 1",
        ),
    ];
    for (path, needle) in cases {
        let (code, out, err) = grove(&["tree", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{}: {err}", path.display());
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("grove: "), "{err}");
        assert!(
            err.contains(path.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn unknown_metric_is_an_error() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    let (code, _, err) = grove(&["tree", f.to_str().unwrap(), "--metric", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown metric"), "{err}");
}
