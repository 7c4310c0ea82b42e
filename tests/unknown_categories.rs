//! Issue 11, the silent zero: a Kineto trace whose device activity has a category
//! grove does not know (here `mtia_insight`, a Kineto category grove does not read) must say so, naming the
//! category and its count, in `grove info` and on stderr of `grove kernels` and `grove summary`. A plain Chrome trace
//! with its own categories stays quiet.

mod common;

use common::grove;

#[test]
fn unknown_device_category_is_reported() {
    // `info` lists warnings in its report; `kernels` and `summary` print them on stderr.
    for cmd in ["info", "kernels", "summary"] {
        let (code, out, err) = grove(&[cmd, "testdata/unknown_category.trace.json"]);
        assert_eq!(code, 0, "{cmd}: {err}");
        let text = if cmd == "info" { &out } else { &err };
        let line = text
            .lines()
            .find(|l| l.contains("categories grove does not know"))
            .unwrap_or_else(|| panic!("{cmd}: no warning in {text:?}"));
        assert!(line.contains("3 event(s)"), "{line}");
        assert!(line.contains("mtia_insight (3)"), "{line}");
        // Host categories grove reads as CPU slices on purpose are not named.
        assert!(
            !line.contains("overhead") && !line.contains("python_function"),
            "{line}"
        );
    }
}

#[test]
fn plain_chrome_categories_stay_quiet() {
    let dir = std::env::temp_dir().join(format!("grove-unknown-cat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("plain.json");
    std::fs::write(
        &f,
        r#"{"traceEvents": [
          {"ph": "X", "cat": "blink", "name": "Layout", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
          {"ph": "X", "cat": "v8,devtools", "name": "Compile", "pid": 1, "tid": 1, "ts": 6, "dur": 2}
        ]}"#,
    )
    .unwrap();
    let (code, out, err) = grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("does not know") && !err.contains("does not know"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// MTIA's device activity (`mtia_ccp_events`) is read as kernels on their streams.
/// The expected figures are HTA 0.5.0's (`holistictraceanalysis` from PyPI) on the
/// same file: `get_gpu_kernel_breakdown` gives addmm_kernel 2 x (40, 35) us, relu_kernel
/// 10 us, dma_h2d 20 us (MEMORY), COMPUTATION 85 us; `get_temporal_breakdown` gives
/// idle 35, compute 85, non-compute 20, kernel time 140 us (25.0 / 60.71 / 14.29 %).
#[test]
fn mtia_device_activity_matches_hta() {
    let f = "testdata/mtia.trace.json";
    let (code, out, err) = grove(&["kernels", f]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("does not know"), "{err}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.trim_end().ends_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // time%, total, unit, count, mean, unit, ...
    let addmm = row("addmm_kernel");
    assert_eq!(
        (&addmm[1][..], &addmm[3][..], &addmm[4][..]),
        ("75.0", "2", "37.5")
    );
    assert_eq!(row("relu_kernel")[1], "10.0");
    assert_eq!(row("dma_h2d")[1], "20.0");
    let (code, out, err) = grove(&["summary", f]);
    assert_eq!(code, 0, "{err}");
    let all: Vec<&str> = out
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("all"))
        .unwrap_or_else(|| panic!("{out}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        all[2..],
        ["140000", "85000", "20000", "35000", "60.71", "14.29", "25.00"]
    );
}
