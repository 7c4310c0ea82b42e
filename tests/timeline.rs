//! The timeline's stack chart (issue 27): named kernel boxes on a real H100 trace,
//! `grove timeline` (text and CSV), and the cursor's moves, fits and links.

mod common;

use common::{corpus, grove, open_app};
use grove::app::panels::timeline::ScreenRow::{Group, Lane};
use grove::app::App;
use grove::present::glyphs::Glyphs;
use grove::ui::panels::timeline::{box_label, text, LABEL_W};

const H100: &str = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";

fn app_on(path: &std::path::Path) -> App {
    let p = grove::load::load_path(path).unwrap();
    let mut app = App::new(p, grove::app::keymap::Keymap::default_map());
    app.run("panel timeline").unwrap();
    app
}

/// Every kernel at least 10 cells wide shows its name (the first 7 characters of its
/// box label at least), in windows of 100 µs swept over the whole trace.
#[test]
fn kernels_ten_cells_wide_are_named_on_an_h100_trace() {
    let Some(path) = corpus(H100) else { skip!() };
    let mut app = app_on(&path);
    let width: u16 = 200;
    let cols = (width - LABEL_W) as f64;
    let g = Glyphs::pick(false);
    let (origin, (a, b)) = {
        let gs = app.gpu.as_ref().unwrap();
        (gs.origin, gs.span)
    };
    let step = 100_000i64;
    let mut checked = 0;
    let mut t = a;
    while t < b {
        let (wa, wb) = (t, t + step);
        app.run(&format!("zoom {}ns {}ns", wa - origin, wb - origin))
            .unwrap();
        let chart = text(&app, width, &g);
        let ev = app.profile.events.as_ref().unwrap();
        let gs = app.gpu.as_ref().unwrap();
        for lane in &gs.lanes {
            for (k, &i) in lane.events.iter().enumerate() {
                let (s, e) = (lane.times.start(k), lane.times.end(k));
                let cells = (e - s) as f64 / (step as f64 / cols);
                if s < wa || e > wb || cells < 10.0 {
                    continue;
                }
                let label = box_label(ev, i as usize);
                let want: String = label.chars().take(7).collect();
                assert!(
                    chart.contains(&format!("▏{want}")),
                    "{label} ({cells:.1} cells) not named in\n{chart}"
                );
                checked += 1;
            }
        }
        t += step;
    }
    assert!(checked >= 20, "only {checked} kernels were 10 cells wide");
}

#[test]
fn grove_timeline_prints_the_chart_and_the_slices() {
    let Some(path) = corpus(H100) else { skip!() };
    let f = path.to_str().unwrap();
    let (code, out, err) = grove(&["timeline", f, "--window", "4.75ms-4.9ms", "--width", "160"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("|4.750000 ms") && lines[0].contains("|+20 µs"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("GPU0 s7") && lines[1].contains("▏cutlass_80_tensorop"),
        "{out}"
    );
    let (code, csv, _) = grove(&["timeline", f, "--window", "4.75ms-4.9ms", "--format", "csv"]);
    assert_eq!(code, 0);
    assert!(
        csv.starts_with("lane,row,start_us,dur_us,kind,category,name\n"),
        "{csv}"
    );
    assert!(
        csv.contains("\"GPU0 s7\",0,4796.710,41.280,kernel,\"gemm\",\"void cutlass::Kernel2<"),
        "{csv}"
    );
}

#[test]
fn grove_timeline_steps_lanes_and_errors() {
    let f = "testdata/small.trace.json";
    let (code, out, err) = grove(&[
        "timeline", f, "--step", "2", "--lanes", "all", "--width", "100",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("CPU t3774487") && out.contains("▏ProfilerStep#2"),
        "{out}"
    );
    let (code, out, _) = grove(&["timeline", f, "--lanes", "CPU t3774487", "--step", "2"]);
    assert_eq!(code, 0);
    assert!(
        !out.contains("GPU0 s7") && out.contains("CPU t3774487"),
        "{out}"
    );
    let (code, _, err) = grove(&["timeline", f, "--lanes", "GPU9 s1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no lane left to draw (lanes: GPU0 s7, CPU t3774487)"),
        "{err}"
    );
    let (code, _, err) = grove(&["timeline", f, "--step", "2", "--window", "1ms-2ms"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--window and --step each choose the window"),
        "{err}"
    );
    let (code, _, err) = grove(&["timeline", f, "--step", "9"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no slice named ProfilerStep#9 in this trace"),
        "{err}"
    );
}

fn small() -> App {
    let mut app = open_app("testdata/small.trace.json");
    app.run("panel timeline").unwrap();
    app.run("lanes all").unwrap();
    app
}

fn selected_name(app: &App) -> String {
    let ev = app.profile.events.as_ref().unwrap();
    ev.name_of(app.timeline.selected.unwrap() as usize)
        .to_string()
}

#[test]
fn the_cursor_moves_along_a_row_and_down_the_depths() {
    let mut app = small();
    app.run("zoom 2.55ms 2.9ms").unwrap();
    // Along the GPU row: each step starts later, and back again.
    app.run("timeline next").unwrap();
    let first = app.timeline.cursor_t;
    app.run("timeline next").unwrap();
    assert!(app.timeline.cursor_t > first);
    app.run("timeline prev").unwrap();
    assert_eq!(app.timeline.cursor_t, first);
    // Down: the CPU thread's outermost slice, then one depth further in.
    app.run("down").unwrap();
    assert_eq!((app.timeline.lane, app.timeline.row), (1, 0));
    assert_eq!(selected_name(&app), "ProfilerStep#2");
    app.run("down").unwrap();
    assert_eq!((app.timeline.lane, app.timeline.row), (1, 1));
    let ev = app.profile.events.as_ref().unwrap();
    let i = app.timeline.selected.unwrap() as usize;
    let t = app.timeline.cursor_t;
    assert!(ev.ts[i] <= t + 200_000 && ev.name_of(i) != "ProfilerStep#2");
    app.run("up 2").unwrap();
    assert_eq!((app.timeline.lane, app.timeline.row), (0, 0));
}

#[test]
fn zoom_keeps_the_cursor_time_and_fits_a_step() {
    let mut app = small();
    app.run("timeline next").unwrap();
    app.run("timeline next").unwrap();
    let t = app.timeline.cursor_t;
    let frac = |app: &App| {
        let (a, b) = app.timeline.window;
        (app.timeline.cursor_t - a) as f64 / (b - a) as f64
    };
    let f0 = frac(&app);
    app.run("zoom in").unwrap();
    assert_eq!(app.timeline.cursor_t, t);
    assert!((frac(&app) - f0).abs() < 0.01);
    app.run("zoom out").unwrap();
    assert_eq!(app.timeline.cursor_t, t);
    app.run("timeline step 2").unwrap();
    let (a, b) = app.timeline.window;
    let ev = app.profile.events.as_ref().unwrap();
    let step = (0..ev.len())
        .find(|&i| ev.name_of(i) == "ProfilerStep#2")
        .unwrap();
    assert!(a <= ev.ts[step] && b >= ev.ts[step] + ev.dur[step]);
    assert!((b - a) < ev.dur[step] * 11 / 10);
    // The selected slice fills the window.
    app.run("zoom kernel").unwrap();
    assert!(app.log.last().unwrap().starts_with("zoom "));
}

/// A zoom or pan step costs what the screen shows, whatever the trace (issue 30): the
/// undo checkpoint each takes shares the tree's arrays of a flag per node, its rows and
/// the kernel table's rows (every GPU activity's index) instead of copying them (about
/// 100 MB a step on a 10 GB trace). A fold copies the flags once, and undo still gives
/// back the folds and the window before.
#[test]
fn zoom_and_pan_checkpoints_share_the_trees_flags() {
    use std::sync::Arc;
    let mut app = small();
    let (open, rows, hidden) = (
        app.tree.open.clone(),
        app.tree.visible.clone(),
        app.tree.rules.hidden.clone(),
    );
    let kernels = app.kernels.rows.clone();
    assert!(!kernels.is_empty());
    let window = app.timeline.window;
    let holders = Arc::strong_count(&open);
    app.run("zoom in").unwrap();
    app.run("pan right").unwrap();
    assert!(Arc::ptr_eq(&open, &app.tree.open));
    assert!(Arc::ptr_eq(&rows, &app.tree.visible));
    assert!(Arc::ptr_eq(&hidden, &app.tree.rules.hidden));
    assert!(Arc::ptr_eq(&kernels, &app.kernels.rows));
    // Held by the two new checkpoints too.
    assert_eq!(Arc::strong_count(&open), holders + 2);
    // The loaded view opens the roots; closing them all copies the flags once.
    let root = app.profile.cct.root_ids()[0];
    assert!(app.tree.is_open(root));
    app.run("collapse-all").unwrap();
    assert!(!Arc::ptr_eq(&open, &app.tree.open));
    assert!(!app.tree.is_open(root) && open[root as usize]);
    for _ in 0..3 {
        app.run("undo").unwrap();
    }
    assert_eq!(*app.tree.open, *open);
    assert_eq!(*app.tree.visible, *rows);
    assert_eq!(app.timeline.window, window);
}

#[test]
fn a_kernel_links_to_its_launch_and_back() {
    let mut app = small();
    app.run("zoom 2.55ms 2.9ms").unwrap();
    app.run("timeline next").unwrap();
    let kernel = app.timeline.selected.unwrap();
    let ev = app.profile.events.as_ref().unwrap();
    assert!(ev.kind[kernel as usize].is_gpu_activity());
    let launch = app.timeline.linked[0];
    assert_eq!(ev.name_of(launch as usize), "cudaLaunchKernel");
    app.run("timeline link").unwrap();
    assert_eq!(app.timeline.selected, Some(launch));
    assert_eq!(app.timeline.lane, 1);
    assert!(app.timeline.linked.contains(&kernel));
    // The launch is drawn where the cursor is: its box's edge or, narrower than a
    // cell, a marker.
    let chart = text(&app, 200, &Glyphs::pick(false));
    let rows = app.timeline_rows();
    let y = 1 + app.timeline_cursor_row(&rows);
    let (a, b) = app.timeline.window;
    let col = LABEL_W as usize
        + ((app.timeline.cursor_t - a) as f64 / (b - a) as f64 * (200 - LABEL_W) as f64) as usize;
    let at = chart.lines().nth(y).unwrap().chars().nth(col);
    assert!(matches!(at, Some('▏' | '▼')), "{at:?} at {col} in\n{chart}");
    app.run("timeline link").unwrap();
    assert_eq!(app.timeline.selected, Some(kernel));
    // Enter on a CPU slice opens its node in the tree.
    app.run("timeline link").unwrap();
    app.run("goto-launch").unwrap();
    assert_eq!(app.panel.name(), "tree");
    let cct = &app.profile.cct;
    assert_eq!(cct.name(app.tree.selected().unwrap()), "cudaLaunchKernel");
}

#[test]
fn lanes_collapse_hide_and_restore() {
    let mut app = small();
    let n = app.timeline_rows().len();
    assert!(n > 3, "{n}");
    app.run("down").unwrap();
    app.run("timeline collapse").unwrap();
    assert_eq!(app.timeline_rows(), vec![Lane(0, Some(0)), Lane(1, None)]);
    assert_eq!(
        app.log.last().unwrap(),
        "timeline collapse \"CPU t3774487\""
    );
    app.run("timeline collapse \"GPU0 s7\"").unwrap();
    assert_eq!(app.timeline_rows(), vec![Lane(0, None), Lane(1, None)]);
    app.run("timeline collapse \"GPU0 s7\"").unwrap();
    assert!(app
        .run("timeline hide \"GPU9 s1\"")
        .unwrap_err()
        .contains("no lane \"GPU9 s1\" (lanes: GPU0 s7, CPU t3774487)"));
    app.run("timeline hide").unwrap();
    assert_eq!(app.timeline_rows(), vec![Lane(0, Some(0))]);
    assert!(app.run("timeline hide").is_err());
    app.run("timeline restore").unwrap();
    assert_eq!(app.timeline_rows().len(), n);
    // Undo takes a lane change back.
    app.run("timeline collapse").unwrap();
    app.run("undo").unwrap();
    assert_eq!(app.timeline_rows().len(), n);
}

/// The CPU threads' lanes are built on their first use, not with the GPU index
/// behind the first frame (issue 30: about 16 bytes a CPU slice), and read the same
/// once built.
#[test]
fn cpu_lanes_are_built_when_first_shown() {
    let mut app = open_app("testdata/small.trace.json");
    app.run("panel timeline").unwrap();
    let gpu_lanes = app.lanes().len();
    assert!(!app.gpu.as_ref().unwrap().cpu_built());
    app.run("lanes all").unwrap();
    assert!(app.gpu.as_ref().unwrap().cpu_built());
    let labels: Vec<String> = app.lanes().into_iter().map(|l| l.label).collect();
    assert_eq!(labels.len(), gpu_lanes + 1);
    assert_eq!(labels.last().unwrap(), "CPU t3774487");
    // Gaps and the launching thread's call path read the same lanes.
    assert_eq!(app.run("gaps").is_ok(), app.gaps_text().is_some());
}

/// Counter samples (`ph: C`) become sparkline lanes under the streams: the small
/// trace with a queue-length counter added that rises to 8 in the middle of it.
#[test]
fn counters_are_sparkline_lanes() {
    let text = std::fs::read_to_string(common::repo("testdata/small.trace.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let evs = v["traceEvents"].as_array_mut().unwrap();
    let t0 = evs
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::INFINITY, f64::min);
    for k in 0..=64 {
        let q = if (24..40).contains(&k) { 8 } else { 1 };
        evs.push(serde_json::json!({
            "ph": "C", "name": "queue_length", "pid": 0, "tid": 0,
            "ts": t0 + k as f64 * 100.0, "args": {"stream 7": q}
        }));
    }
    let dir = std::env::temp_dir().join(format!("grove-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("counters.trace.json");
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    let (code, out, err) = grove(&[
        "timeline",
        f.to_str().unwrap(),
        "--width",
        "80",
        "--window",
        "0ms-6.4ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("queue_leng"))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<char> = line.chars().skip(LABEL_W as usize).collect();
    // 6.4 ms over 68 columns: samples 24..40 (2.4 ms to 4 ms) are full height.
    assert_eq!(cells[30], '█', "{line}");
    assert_eq!(cells[5], '▁', "{line}");
    // With the CPU lanes shown, the track stays under its stream (pid 0, `stream 7`),
    // above the threads.
    let (code, out, err) = grove(&[
        "timeline",
        f.to_str().unwrap(),
        "--lanes",
        "all",
        "--width",
        "80",
    ]);
    assert_eq!(code, 0, "{err}");
    let at = |p: &str| out.lines().position(|l| l.starts_with(p));
    let (gpu, queue, cpu) = (at("GPU0 s7"), at("queue_leng"), at("CPU t"));
    std::fs::remove_dir_all(&dir).ok();
    assert!(gpu < queue && queue < cpu && gpu.is_some(), "{out}");
}

/// `timeline mark`: every instance of the tree's selection marked on its lanes (a
/// box's edge, a glyph over narrower slices and over the collapsed lane), logged by
/// path, cleared by the same toggle.
#[test]
fn the_trees_selection_is_marked_on_the_timeline() {
    let mut app = small();
    app.run("zoom 2.55ms 2.9ms").unwrap();
    app.run("timeline next").unwrap();
    app.run("timeline link").unwrap();
    app.run("goto-launch").unwrap();
    assert_eq!(app.panel.name(), "tree");
    app.run("timeline mark").unwrap();
    let marks = app.timeline.marks.clone().unwrap();
    let ev = app.profile.events.as_ref().unwrap();
    let want = (0..ev.len())
        .filter(|&i| ev.node[i] == marks.node && ev.kind[i].label() == "runtime")
        .count();
    assert!(marks.count >= want && want > 1, "{} of {want}", marks.count);
    let logged = app.log.last().unwrap().clone();
    assert!(
        logged.starts_with("timeline mark ") && logged.contains("cudaLaunchKernel"),
        "{logged}"
    );
    app.run("panel timeline").unwrap();
    let g = Glyphs::pick(false);
    let chart = text(&app, 200, &g);
    let cpu = chart.lines().filter(|l| l.contains('◆')).count();
    assert!(cpu >= 1, "{chart}");
    let ascii = text(&app, 200, &Glyphs::pick(true));
    assert!(ascii
        .lines()
        .any(|l| l.starts_with("CPU") || l.contains('*')));
    // Collapsed, the lane still shows them.
    app.run("timeline collapse \"CPU t3774487\"").unwrap();
    let chart = text(&app, 200, &g);
    let lane = chart.lines().find(|l| l.starts_with("CPU t")).unwrap();
    assert!(lane.contains('◆'), "{chart}");
    // The same toggle on the same selection clears them; a replay of the log marks
    // the same node.
    app.run("timeline mark").unwrap();
    assert!(app.timeline.marks.is_none());
    assert_eq!(app.log.last().unwrap(), "timeline mark off");
    app.run(&logged).unwrap();
    assert_eq!(app.timeline.marks.as_ref().unwrap().count, marks.count);
    assert!(app
        .run("timeline mark \"nowhere/at all\"")
        .unwrap_err()
        .contains("is not in the loaded tree"));
    // Headless: `--mark PATH`.
    let path = logged
        .trim_start_matches("timeline mark ")
        .trim_matches('"');
    let (code, out, err) = grove(&[
        "timeline",
        "testdata/small.trace.json",
        "--lanes",
        "all",
        "--step",
        "2",
        "--mark",
        path,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains('◆'), "{out}");
}

const BASE: &str = "hta/tests/data/trace_compare/base/base.json.gz";
const TEST: &str = "hta/tests/data/trace_compare/test/test.json.gz";

/// Two traces opened together: each one's lanes under a header with its label,
/// collapsible like a lane; `grove timeline A B` draws the same.
#[test]
fn an_ensembles_lanes_are_grouped_by_member() {
    let (Some(base), Some(test)) = (corpus(BASE), corpus(TEST)) else {
        skip!()
    };
    let p = grove::load::load_inputs(&[base.clone(), test.clone()], &Default::default()).unwrap();
    let mut app = App::new(p, grove::app::keymap::Keymap::default_map());
    app.run("panel timeline").unwrap();
    let groups = app.timeline_groups().to_vec();
    assert_eq!(groups.len(), 2, "{groups:?}");
    let rows = app.timeline_rows();
    assert_eq!(rows[0], Group(0));
    let second = rows.iter().position(|r| *r == Group(1)).unwrap();
    assert!(second > 1 && rows.len() > second + 1, "{rows:?}");
    let lanes = app.lanes();
    let member = |r: &grove::app::panels::timeline::ScreenRow| match r {
        Lane(l, _) => Some(lanes[*l].member),
        Group(_) => None,
    };
    assert!(rows[1..second].iter().all(|r| member(r) == Some(0)));
    assert!(rows[second + 1..].iter().all(|r| member(r) == Some(1)));
    drop(lanes);
    // The cursor on the first header, `z` folds that member.
    app.run("up 1000").unwrap();
    app.run("timeline collapse").unwrap();
    assert_eq!(app.timeline_rows()[1], Group(1));
    assert_eq!(
        app.log.last().unwrap(),
        &format!("timeline collapse {}", groups[0])
    );
    app.run("timeline restore").unwrap();
    let (code, out, err) = grove(&[
        "timeline",
        base.to_str().unwrap(),
        test.to_str().unwrap(),
        "--width",
        "100",
    ]);
    assert_eq!(code, 0, "{err}");
    let heads: Vec<&str> = out.lines().filter(|l| l.contains(" lane")).collect();
    assert_eq!(heads.len(), 2, "{out}");
    assert!(
        heads[0].contains(&groups[0]) && heads[1].contains(&groups[1]),
        "{out}"
    );
}
