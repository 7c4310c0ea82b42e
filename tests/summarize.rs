//! `grove summarize` and summaries reopened as an ensemble: the same tree as the traces,
//! tables any Parquet reader loads.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

mod common;
use common::grove;

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grove-summarize-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn parquet(p: &Path) -> DataFrame {
    ParquetReader::new(File::open(p).unwrap()).finish().unwrap()
}

/// The tree part of an output: JSON's `source` names the summary, not the trace.
fn nodes(out: &str) -> String {
    match out.find("\"nodes\":") {
        Some(i) => out[i..].to_string(),
        None => out.to_string(),
    }
}

#[test]
fn summaries_open_as_the_traces_do() {
    let (a, b) = (data("rank0.trace.json.gz"), data("rank1.trace.json.gz"));
    let dir = out_dir("ensemble");
    let d = dir.to_str().unwrap();
    let (code, _, err) = grove(&["summarize", &a, &b, "-o", d]);
    assert_eq!(code, 0, "{err}");
    for name in ["rank0", "rank1"] {
        for table in [
            "cct", "meta", "kernels", "temporal", "idle", "overlap", "launch", "queue", "memory",
            "overhead",
        ] {
            assert!(
                dir.join(format!("{name}.{table}.parquet")).is_file(),
                "{name}.{table}"
            );
        }
    }
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 20);
    for format in ["csv", "json"] {
        let (_, traces, _) = grove(&["tree", &a, &b, "--format", format]);
        let (code, sums, err) = grove(&["tree", d, "--format", format]);
        assert_eq!(code, 0, "{err}");
        assert!(nodes(&sums) == nodes(&traces), "{format}");
        let (_, trace, _) = grove(&["tree", &a, "--format", format]);
        let one = dir.join("rank0.cct.parquet");
        let (_, sum, _) = grove(&["tree", one.to_str().unwrap(), "--format", format]);
        assert!(nodes(&sum) == nodes(&trace), "{format}");
    }
}

#[test]
fn tables_hold_grove_numbers() {
    let a = data("rank0.trace.json.gz");
    let dir = out_dir("tables");
    let (code, _, err) = grove(&["summarize", &a, "-o", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The kernel table's total is the GPU time `grove info` counts.
    let k = parquet(&dir.join("rank0.kernels.parquet"));
    let total: i64 = k.column("total_ns").unwrap().i64().unwrap().sum().unwrap();
    let (_, info, _) = grove(&["info", &a, "--format", "json"]);
    let info: serde_json::Value = serde_json::from_str(info.trim()).unwrap();
    assert_eq!(total, info["gpu_time_ns"].as_i64().unwrap());
    // The CCT: parents before children, depth from the parent, grove's metric names.
    let c = parquet(&dir.join("rank0.cct.parquet"));
    assert_eq!(c.height() as u64, info["nodes"].as_u64().unwrap());
    let parent: Vec<Option<i64>> = c.column("parent").unwrap().i64().unwrap().iter().collect();
    let depth: Vec<Option<u32>> = c.column("depth").unwrap().u32().unwrap().iter().collect();
    for (i, p) in parent.iter().enumerate() {
        match p {
            None => assert_eq!(depth[i], Some(0)),
            Some(q) => {
                assert!((*q as usize) < i);
                assert_eq!(depth[i], depth[*q as usize].map(|d| d + 1));
            }
        }
    }
    assert!(c.column("gpu_time (inc)").is_ok());
    // The temporal breakdown as `grove summary --format csv` prints it, typed.
    let t = parquet(&dir.join("rank0.temporal.parquet"));
    let (_, csv, _) = grove(&["summary", &a, "--format", "csv"]);
    let first = csv.lines().nth(1).unwrap();
    let kernel_ns: i64 = first.split(',').nth(2).unwrap().parse().unwrap();
    let got = t.column("kernel_time_ns").unwrap().i64().unwrap().get(0);
    assert_eq!(got, Some(kernel_ns));
    // Metadata: the schema version and the trace's own keys.
    let m = parquet(&dir.join("rank0.meta.parquet"));
    let keys: Vec<&str> = m
        .column("key")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .flatten()
        .collect();
    assert!(keys.contains(&"version") && keys.contains(&"distributedInfo.rank"));
}

#[test]
fn bad_uses_are_one_line_errors() {
    let (a, b) = (data("rank0.trace.json.gz"), data("rank1.trace.json.gz"));
    let dir = out_dir("bad");
    let d = dir.to_str().unwrap();
    let (code, _, err) = grove(&["summarize", &a, &b, "-o", d, "--name", "x"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = grove(&["summarize", "/nonexistent.json", "-o", d]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    // A summary whose metadata is missing names the file.
    let (code, _, _) = grove(&["summarize", &a, "-o", d, "--name", "solo"]);
    assert_eq!(code, 0);
    std::fs::remove_file(dir.join("solo.meta.parquet")).unwrap();
    let one = dir.join("solo.cct.parquet");
    let (code, _, err) = grove(&["tree", one.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("solo.meta.parquet"), "{err}");
}
