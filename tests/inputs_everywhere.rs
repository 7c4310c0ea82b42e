//! Every subcommand takes the same inputs: a directory of rank traces (or a quoted
//! glob) reads as its files, for `summary` and `kernels` as for `tree` and `info`.

mod common;

use std::path::{Path, PathBuf};

use common::grove;

/// A fresh directory holding the two rank traces of testdata.
fn rank_dir(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let dir = std::env::temp_dir().join(format!("grove-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for r in ["rank0.trace.json.gz", "rank1.trace.json.gz"] {
        std::fs::copy(d.join(r), dir.join(r)).unwrap();
    }
    (
        dir.clone(),
        dir.join("rank0.trace.json.gz"),
        dir.join("rank1.trace.json.gz"),
    )
}

#[test]
fn summary_of_a_directory_is_the_summary_of_its_files() {
    let (dir, r0, r1) = rank_dir("summary-dir");
    let (code, files, err) = grove(&[
        "summary",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, of_dir, err) = grove(&["summary", dir.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(of_dir, files);
    assert!(
        of_dir.contains("\n0,all,") && of_dir.contains("\n1,all,"),
        "{of_dir}"
    );
    // A quoted glob too.
    let glob = dir.join("rank*.trace.json.gz");
    let (code, of_glob, err) = grove(&["summary", glob.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(of_glob, files);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernels_of_a_directory_are_the_kernels_of_its_files() {
    let (dir, r0, r1) = rank_dir("kernels-dir");
    let (code, files, err) = grove(&[
        "kernels",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, of_dir, err) = grove(&["kernels", dir.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(of_dir, files);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_directory_is_a_one_line_error() {
    let dir = std::env::temp_dir().join(format!("grove-empty-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (code, _, err) = grove(&["summary", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
