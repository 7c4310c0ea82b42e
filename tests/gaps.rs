//! Idle gaps on the timeline (`gap next|prev`, `gaps`, `gap at`): the longest gaps of a
//! real Kineto trace against scripts/gaps_check.py's independent computation from the
//! raw JSON, the headless list, stepping and jumping, and bad arguments.

use std::path::Path;
use std::process::Command;

use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::{App, Mode};
use grove::load::load_path;

mod common;
use common::corpus;

const ALEXNET: &str =
    "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz";

fn app(path: &Path) -> App {
    App::new(load_path(path).unwrap(), Keymap::default_map())
}

fn small() -> App {
    app(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json"))
}

/// (lane, absolute start ns, length ns) of the rows of the open `gaps` list.
fn rows(a: &App) -> Vec<(String, i64, i64)> {
    match &a.mode {
        Mode::Gaps { rows, .. } => rows
            .iter()
            .map(|r| (r.lane.clone(), r.start, r.len))
            .collect(),
        other => panic!("the gaps list is not open: {other:?}"),
    }
}

/// (lane, absolute start ns, length ns) of the `n` longest gaps per stream, as
/// scripts/gaps_check.py computes them from the raw JSON; None without python3.
fn script_gaps(f: &Path, n: usize) -> Option<Vec<(String, i64, i64)>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gaps_check.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(f)
        .arg(n.to_string())
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Vec<&str> = l.split('\t').collect();
                (
                    v[0].to_string(),
                    v[1].parse().unwrap(),
                    v[2].parse().unwrap(),
                )
            })
            .collect(),
    )
}

#[test]
fn longest_gaps_match_an_independent_computation() {
    let Some(f) = corpus(ALEXNET) else { skip!() };
    let Some(want) = script_gaps(&f, 4) else {
        skip!("python3 is not installed")
    };
    assert!(want.len() >= 4, "{want:?}");
    let mut a = app(&f);
    a.run("gaps 4").unwrap();
    assert_eq!(rows(&a), want);
    // The longest gap of stream 7 is 10.857887 s, and the CPU was inside the
    // `[param|cuda]` annotation of the main thread when it began.
    let Mode::Gaps { rows: list, .. } = &a.mode else {
        unreachable!()
    };
    assert_eq!(list[0].len, 10_857_887_000);
    assert_eq!(list[0].cpu, "python3.10 (main thread)/[param|cuda]");
    assert!(
        list[1].cpu.ends_with("aten::conv2d/aten::convolution"),
        "{}",
        list[1].cpu
    );
}

#[test]
fn longest_gaps_of_a_resnet_training_trace() {
    let Some(f) = corpus("kineto/plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz")
    else {
        skip!()
    };
    let Some(want) = script_gaps(&f, 5) else {
        return;
    };
    let mut a = app(&f);
    a.run("gaps 5").unwrap();
    assert_eq!(rows(&a), want);
    // Each of the longest gaps falls in the optimizer step of a profiler step.
    let Mode::Gaps { rows: list, .. } = &a.mode else {
        unreachable!()
    };
    assert_eq!(list[0].len, 60_001_000);
    for r in list {
        assert!(
            r.cpu.contains("/Optimizer.step#SGD.step/aten::add_"),
            "{}",
            r.cpu
        );
    }
}

#[test]
fn headless_list_on_a_real_trace() {
    let Some(f) = corpus(ALEXNET) else { skip!() };
    let (code, out, err) =
        common::grove(&["tree", f.to_str().unwrap(), "--cmd", "gaps 2 --min 1s"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "lane\tstart\tlength\tcpu call path");
    // Stream 7 has two gaps of a second or more, stream 20 one.
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[1].starts_with("GPU0 s7\t") && lines[1].contains("\t10857.887ms\t"));
    assert!(lines[2].starts_with("GPU0 s7\t") && lines[2].contains("\t1043.841ms\t"));
    assert!(lines[3].starts_with("GPU0 s20\t") && lines[3].contains("\t11903.747ms\t"));
}

#[test]
fn step_and_jump_on_a_tiny_trace() {
    let mut a = small();
    a.run("panel timeline").unwrap();
    let origin = a.gpu.as_ref().unwrap().origin;
    // From the start of the window: the first gap of 30us or more.
    a.run("zoom fit").unwrap();
    a.timeline.cursor_t = a.timeline.window.0;
    a.run("gap next").unwrap();
    assert_eq!(a.timeline.cursor_t - origin, 357_892);
    let msg = a.message.as_ref().unwrap().text.clone();
    assert!(
        msg.starts_with("idle 1532.948us on GPU0 s7 at 357.892us"),
        "{msg}"
    );
    // The window shows the gap with a quarter of its length either side.
    let (w0, w1) = a.timeline.window;
    assert_eq!(
        (w0 - origin, w1 - origin),
        (357_892 - 383_237, 1_890_840 + 383_237)
    );
    a.run("gap next").unwrap();
    assert_eq!(a.timeline.cursor_t - origin, 1_895_366);
    // A longer minimum is remembered by later steps.
    assert!(a.run("gap next 1ms").is_err());
    a.run("gap prev 1ms").unwrap();
    assert_eq!(a.timeline.cursor_t - origin, 357_892);
    assert_eq!(a.timeline.gap_min, Some(1_000_000));
    let e = a.run("gap next").unwrap_err();
    assert!(
        e.contains("no idle gap of at least 1ms after the cursor on GPU0 s7"),
        "{e}"
    );
    // `gap at` names the lane and a time inside the gap; the log names its start.
    a.run("gap at \"GPU0 s7\" 1.9ms").unwrap();
    assert_eq!(a.timeline.cursor_t - origin, 1_895_366);
    assert_eq!(a.log.last().unwrap(), "gap at \"GPU0 s7\" 1895.366us");
    assert!(a.run("gap at \"GPU9 s1\" 1ms").is_err());
    assert!(a.run("gap at \"GPU0 s7\" 1.99ms").is_err());
}

#[test]
fn keys_open_the_list_and_jump() {
    let mut a = small();
    for k in Key::parse_seq("4Ij<ret>").unwrap() {
        a.on_key(k);
    }
    assert_eq!(a.mode, Mode::Normal);
    let origin = a.gpu.as_ref().unwrap().origin;
    assert_eq!(a.timeline.cursor_t - origin, 1_895_366);
    assert_eq!(a.log.last().unwrap(), "gap at \"GPU0 s7\" 1895.366us");
    // ] and [ step on the lane under the cursor.
    for k in Key::parse_seq("[").unwrap() {
        a.on_key(k);
    }
    assert_eq!(a.timeline.cursor_t - origin, 357_892);
    for k in Key::parse_seq("]").unwrap() {
        a.on_key(k);
    }
    assert_eq!(a.timeline.cursor_t - origin, 1_895_366);
}

#[test]
fn bad_arguments_are_one_line() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    for cmd in [
        "gaps x",
        "gaps 3 --min",
        "gaps 0",
        "gap",
        "gap sideways",
        "gap next 1ms 2ms",
        "gap at x",
    ] {
        let (code, out, err) = common::grove(&["tree", f.to_str().unwrap(), "--cmd", cmd]);
        assert_eq!(code, 2, "{cmd}: {out}");
        let last = err.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("grove: {cmd}: column")),
            "{cmd}: {err}"
        );
    }
    // A profile without GPU activity says so.
    let cpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hatchet_tree_small.txt");
    if let Ok(p) = load_path(&cpu) {
        let mut a = App::new(p, Keymap::default_map());
        assert!(a.run("gaps").unwrap_err().contains("no GPU activity"));
    }
}
