//! `grove DIR` on the directories runs leave behind: the profiles open, and the files
//! beside them (sources, logs) are passed over with a note, at the top level as in
//! sub-directories; the glob an error suggests reaches the files where they are; a
//! directory of cachegrind and callgrind outputs opens with a word that they differ.

use std::path::{Path, PathBuf};

mod common;
use common::{corpus, grove};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grove-dir-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn csv_stderr(d: &Path) -> (i32, String) {
    let (code, _, err) = grove(&["tree", d.to_str().unwrap(), "--format", "csv"]);
    (code, err)
}

#[test]
fn callgrind_outputs_and_a_log_open_with_a_note() {
    let d = dir("cg");
    for f in ["thr.callgrind.out-01", "thr.callgrind.out-02"] {
        std::fs::copy(testdata(&format!("callgrind/{f}")), d.join(f)).unwrap();
    }
    std::fs::write(
        d.join("run.stderr.txt"),
        "==12== Callgrind, a call-graph generating cache profiler\n",
    )
    .unwrap();
    let (code, err) = csv_stderr(&d);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped 1 file no reader claims (run.stderr.txt)"),
        "{err}"
    );
    let (code, out, err) = grove(&["info", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ensemble: 2 inputs"), "{out}");
    assert!(out.contains("run.stderr.txt"), "{out}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn pstats_files_and_their_sources_open_with_a_note() {
    let Some(pstats) =
        corpus("hatchet/hatchet/tests/data/cprofile-hatchet-pstats/cprofile-cycle.pstats")
    else {
        skip!()
    };
    let d = dir("py");
    std::fs::copy(&pstats, d.join("run1.pstats")).unwrap();
    std::fs::copy(&pstats, d.join("run2.pstats")).unwrap();
    std::fs::write(d.join("mod_a.py"), "def f():\n    pass\n").unwrap();
    std::fs::write(d.join("mod_b.py"), "def g():\n    pass\n").unwrap();
    let (code, err) = csv_stderr(&d);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped 2 files no reader claims (mod_a.py, mod_b.py)"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_suggested_glob_has_the_files_depth() {
    let d = dir("glob");
    std::fs::write(d.join("mod_a.py"), "x = 1\n").unwrap();
    let (code, err) = csv_stderr(&d);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("'{}/*.py'", d.display())), "{err}");
    let deep = d.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::remove_file(d.join("mod_a.py")).unwrap();
    std::fs::write(deep.join("notes.csv"), "x,y\n1,2\n").unwrap();
    let (_, err) = csv_stderr(&d);
    assert!(
        err.contains(&format!("'{}/*/*/*.csv'", d.display())),
        "{err}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn cachegrind_beside_callgrind_is_said() {
    let d = dir("mixed");
    for f in ["rec.cachegrind.out.gz", "rec.callgrind.out"] {
        std::fs::copy(testdata(&format!("callgrind/{f}")), d.join(f)).unwrap();
    }
    let (code, err) = csv_stderr(&d);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 kinds (1 cachegrind, 1 callgrind)"), "{err}");
    let (_, out, _) = grove(&["info", d.to_str().unwrap()]);
    assert!(out.contains("2 kinds"), "{out}");
    // One kind alone is not warned about.
    std::fs::remove_file(d.join("rec.cachegrind.out.gz")).unwrap();
    std::fs::copy(
        testdata("callgrind/thr.callgrind.out-01"),
        d.join("thr.callgrind.out-01"),
    )
    .unwrap();
    let (code, err) = csv_stderr(&d);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("kinds"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}
