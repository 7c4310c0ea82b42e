//! Loading big traces (issue #16): a part of a trace (`--steps`, `--window`) gives the
//! same numbers as the full load for what it holds; bad ranges are one-line errors;
//! the headless progress line never reaches a stderr that is not a terminal.

mod common;

use common::{grove, grove_env};

const TRACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/steps4.trace.json.gz");

/// `grove tree --format csv` rows (path first) of the nodes under the given steps.
fn step_rows(csv: &str, steps: &[u32]) -> Vec<String> {
    csv.lines()
        .filter(|l| {
            steps.iter().any(|s| {
                l.contains(&format!("/ProfilerStep#{s}/"))
                    || l.contains(&format!("/ProfilerStep#{s},"))
            })
        })
        .map(str::to_string)
        .collect()
}

fn tree_csv(extra: &[&str]) -> String {
    let mut args = vec!["tree", "--no-cache", "--format", "csv"];
    args.extend_from_slice(extra);
    args.push(TRACE);
    let (code, out, err) = grove(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn steps_equal_the_full_load_of_those_steps() {
    let full = tree_csv(&[]);
    let part = tree_csv(&["--steps", "3-4"]);
    let want = step_rows(&full, &[3, 4]);
    assert!(want.len() > 50, "the generated trace has steps 3 and 4");
    // Every node under the selected steps, with every metric (CPU and GPU time,
    // inclusive and exclusive, counts), as in the full load.
    assert_eq!(step_rows(&part, &[3, 4]), want);
    // The other steps are not loaded.
    assert!(step_rows(&part, &[2, 5]).is_empty());
    let (code, out, _) = grove(&["info", "--steps", "3-4", TRACE]);
    assert_eq!(code, 0);
    assert!(out.contains("part: steps 3-4: "), "{out}");
}

/// A file is read twice (find the part, then stream past the rest); standard input
/// once, whole, then cut: the two give the same tree, above the steps too.
#[test]
fn the_streamed_part_equals_the_part_cut_from_a_whole_read() {
    for sel in [&["--steps", "3-4"][..], &["--window", "20ms-45ms"][..]] {
        let from_file = tree_csv(sel);
        let mut args = vec!["tree", "--no-cache", "--format", "csv"];
        args.extend_from_slice(sel);
        args.push("-");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
            .args(&args)
            .stdin(std::fs::File::open(TRACE).unwrap())
            .output()
            .unwrap();
        assert!(out.status.success(), "{sel:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), from_file, "{sel:?}");
    }
}

#[test]
fn a_window_around_a_step_equals_that_step() {
    // The step's bounds, relative to the trace's first event, from the full load.
    let p = grove::load::load_path(std::path::Path::new(TRACE)).unwrap();
    let ev = p.events.as_ref().unwrap();
    let origin = ev.ts.iter().copied().min().unwrap();
    let i = (0..ev.len())
        .find(|&i| ev.name_of(i) == "ProfilerStep#4")
        .unwrap();
    let (a, b) = (ev.ts[i] - origin, ev.ts[i] + ev.dur[i] - origin);
    let window = format!("{a}ns-{b}ns");
    let by_window = tree_csv(&["--window", &window]);
    let by_step = tree_csv(&["--steps", "4"]);
    assert_eq!(step_rows(&by_window, &[4]), step_rows(&by_step, &[4]));
    assert!(!step_rows(&by_window, &[4]).is_empty());
}

#[test]
fn bad_ranges_are_one_line_errors() {
    for (args, says) in [
        (&["--steps", "5-2"][..], "ends before it starts"),
        (&["--steps", "two"][..], "expected A-B"),
        (&["--window", "3s-1s"][..], "ends before it starts"),
        (&["--window", "1-2"][..], "units"),
        (
            &["--steps", "1", "--window", "0-1s"][..],
            "cannot be used with",
        ),
        (&["--steps", "40-41"][..], "the trace has steps 2-5"),
        (
            &["--window", "100s-200s"][..],
            "starts after the trace ends",
        ),
    ] {
        let mut a = vec!["tree", "--no-cache"];
        a.extend_from_slice(args);
        a.push(TRACE);
        let (code, out, err) = grove(&a);
        assert_eq!(code, 2, "{a:?}: {err}");
        assert!(out.is_empty(), "{a:?}");
        assert!(err.contains(says), "{a:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.contains("warning:")).collect();
        assert!(
            lines.len() == 1 || says == "cannot be used with",
            "{a:?}: {err}"
        );
    }
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    // The load is held back past the half second after which a terminal gets the line.
    let (code, _, err) = grove_env(
        &["tree", "--no-cache", TRACE],
        &[("GROVE_TEST_LOAD_DELAY_MS", "800")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains('\r') && !err.contains("loading"), "{err:?}");
}

/// A trace refused in advance for its size opens a part at a time: the check
/// estimates the whole file, and a part is streamed.
#[test]
fn a_part_opens_under_a_limit_the_whole_trace_does_not_fit() {
    let (code, _, err) = grove(&["tree", "--no-cache", "--max-memory", "100K", TRACE]);
    assert_eq!(code, 2, "{err}");
    // Not even one step fits in 100K (a larger limit loads the leading steps that
    // fit: tests/low.rs).
    assert!(err.contains("not even ProfilerStep#2 fits"), "{err}");
    let limited = tree_csv(&["--max-memory", "100K", "--steps", "3"]);
    assert_eq!(step_rows(&limited, &[3]), step_rows(&tree_csv(&[]), &[3]));
}

/// Readers other than Chrome/Kineto do not cut a part: the whole profile loads, with a
/// warning (an error under --strict), never passed off as the part.
#[test]
fn a_part_of_another_format_is_a_warning() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/callgrind/rec.callgrind.out"
    );
    let (code, _, err) = grove(&["tree", "--steps", "1", f]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("apply to Chrome/Kineto traces"), "{err}");
    let (code, _, _) = grove(&["tree", "--strict", "--steps", "1", f]);
    assert_eq!(code, 2);
}

/// A `B` without its `E` holds what ran after it but counts no time of its own (issue
/// 24: an open event never gets a duration it does not have).
#[test]
fn a_slice_without_an_end_counts_no_time() {
    let dir = std::env::temp_dir().join(format!("grove-unended-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("t.json");
    std::fs::write(
        &f,
        r#"[{"ph":"X","name":"before","pid":1,"tid":1,"ts":0,"dur":4},
            {"ph":"B","name":"outer","pid":1,"tid":1,"ts":5},
            {"ph":"X","name":"op","pid":1,"tid":1,"ts":10,"dur":5},
            {"ph":"X","name":"op2","pid":1,"tid":1,"ts":20,"dur":5},
            {"ph":"i","name":"mark","pid":1,"tid":1,"ts":100}]"#,
    )
    .unwrap();
    let p = grove::load::load_path(&f).unwrap();
    let at = |name: &str| {
        (0..p.cct.len() as u32)
            .find(|&n| p.cct.name(n) == name)
            .unwrap()
    };
    let (time, inc) = (
        p.metrics.values("time").unwrap(),
        p.metrics.values("time (inc)").unwrap(),
    );
    let outer = at("outer");
    assert_eq!(time[outer as usize], 0.0);
    assert_eq!(inc[outer as usize], 10_000.0);
    assert_eq!(p.cct.parent(at("op")), Some(outer));
    let root = p.cct.parent(outer).unwrap();
    assert_eq!(inc[root as usize], 14_000.0);
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("1 B event(s) never ended")));
    let _ = std::fs::remove_dir_all(&dir);
}
