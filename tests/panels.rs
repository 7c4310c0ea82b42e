//! Panels keep derived data (summary tables, heatmap columns and ranges, the members a
//! metadata filter shows) between frames. A frame drawn after every key must look the
//! same as one drawn only at the end: anything kept must follow the commands that
//! change its inputs.

use std::sync::Arc;

use grove::app::keys::Key;
use grove::app::App;
use grove::ui::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

mod common;

const ENSEMBLE: &str = "testdata/rank0.trace.json.gz,testdata/rank1.trace.json.gz";
const TRACE: &str = "testdata/demo.trace.json.gz";

fn open(files: &str) -> App {
    common::open_app(files)
}

fn draw(term: &mut Terminal<TestBackend>, app: &App) -> String {
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let buf = common::draw_on(term, app, &theme, &glyphs);
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            out.push_str(c.symbol());
            out.push_str(&format!("{:?}", c.fg));
        }
        out.push('\n');
    }
    out
}

/// The screen after `script`, drawing after every key (warm) or only at the end (cold).
fn screen(files: &str, script: &str, warm: bool) -> String {
    let mut app = open(files);
    let mut term = Terminal::new(TestBackend::new(140, 24)).unwrap();
    for key in Key::parse_seq(script).unwrap() {
        app.on_key(key);
        if warm {
            draw(&mut term, &app);
        }
    }
    draw(&mut term, &app)
}

fn same_warm_and_cold(files: &str, script: &str) {
    let cold = screen(files, script, false);
    let warm = screen(files, script, true);
    assert!(cold == warm, "a kept value went stale after {script:?}");
}

#[test]
fn heatmap_follows_metric_derive_and_filters() {
    for script in [
        "2jjlnj",
        "2:derive speedup = time@rank0 / time@rank1<ret>:metric speedup<ret>j",
        "2:diff rank0 rank1<ret>nn",
        "2:meta distributedInfo.rank = 1<ret>2:meta<ret>j",
        "2:filter time (inc) > 1000<ret>jj:undo<ret>j",
        "2j:filter --squash time (inc)@mean < 20000<ret>jj",
        "2lL<Right>s:reset<ret>",
        "5:meta distributedInfo.rank = 0<ret>5",
    ] {
        same_warm_and_cold(ENSEMBLE, script);
    }
}

/// The flame graph's layout is kept between frames: zoom, filters, prune, hide, focus,
/// the metric, sorting and undo all change what it shows.
#[test]
fn flame_follows_zoom_filters_and_metric() {
    for script in [
        "6jj<Enter>jl<Esc>k",
        "6j:metric gpu_time<ret>jj",
        "6jj:prune time (inc) < 100us<ret>j",
        "6j:limit 5%<ret>:limit off<ret>j",
        "6jj:hide \"python (main thread)/ProfilerStep#2\"<ret>U",
        "6j:focus<ret>jj<Enter>:unfocus<ret>",
        "6:filter time (inc) > 1000<ret>jj:undo<ret>j",
        "6jjsssf:compose aten::to aten::copy_ as copy<ret>",
        "6/aten<ret>n",
    ] {
        same_warm_and_cold(TRACE, script);
    }
    for script in [
        "6:diff rank0 rank1<ret>jj",
        "6jj:diff rank1 rank0<ret>:undo<ret>",
    ] {
        same_warm_and_cold(ENSEMBLE, script);
    }
}

#[test]
fn summary_follows_its_scroll() {
    same_warm_and_cold(TRACE, "5jjjjkk");
    same_warm_and_cold(TRACE, "5jj:filter time (inc) > 1000<ret>5j");
}

#[test]
fn summary_is_derived_once() {
    let mut app = open(TRACE);
    app.run("panel summary").unwrap();
    let first = app.summary_lines();
    app.run("down").unwrap();
    assert!(Arc::ptr_eq(&first, &app.summary_lines()));
    // New categories rebuild the GPU state: the tables are derived again.
    app.set_categories(grove::gpu::classify::Categories::builtin());
    let again = app.summary_lines();
    assert!(!Arc::ptr_eq(&first, &again));
    assert_eq!(*first, *again);
}

#[test]
fn heatmap_columns_are_kept_until_the_metrics_change() {
    let mut app = open(ENSEMBLE);
    app.run("panel heatmap").unwrap();
    let a = app.heatmap_columns();
    app.run("down").unwrap();
    assert!(Arc::ptr_eq(&a, &app.heatmap_columns()));
    ranges_are_fresh(&app);
    app.run("derive double = time@rank0 * 2").unwrap();
    assert!(!Arc::ptr_eq(&a, &app.heatmap_columns()));
    // Reshaping the tree keeps the metric but changes the columns' values.
    app.run("filter --squash time@rank0 < 20000").unwrap();
    ranges_are_fresh(&app);
}

/// Each kept range is the column's min and max over every node of the current tree.
fn ranges_are_fresh(app: &App) {
    let b = app.heatmap_columns();
    assert!(!b.is_empty());
    let m = &app.profile.metrics;
    for (name, range) in b.names.iter().zip(&b.ranges) {
        let v = m.values(name).unwrap();
        let fin: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        let want = (!fin.is_empty()).then(|| {
            (
                fin.iter().copied().fold(f64::INFINITY, f64::min),
                fin.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        });
        assert_eq!(*range, want, "{name}");
    }
}

/// The kernel table scrolls sideways (`}` / `{`, `scroll table N`): the full names
/// come into view from the scrolled column, and scrolling back shows the short names.
#[test]
fn kernel_names_scroll_sideways() {
    let mut app = open("testdata/rank0.trace.json.gz");
    app.run("panel kernels").unwrap();
    let mut term = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let before = draw(&mut term, &app);
    app.run("scroll table 16").unwrap();
    assert_eq!(app.kernels.hscroll, 16);
    let after = draw(&mut term, &app);
    assert_ne!(before, after);
    let longest = app.kernels.rows.iter().map(|r| r.name.len()).max().unwrap();
    app.run(&format!("scroll table {}", longest * 2)).unwrap();
    assert!(app.kernels.hscroll <= longest);
    app.run("scroll table -100000").unwrap();
    assert_eq!(app.kernels.hscroll, 0);
    assert_eq!(draw(&mut term, &app), before);
}

/// Each registered panel draws its own view (none falls back on another's, as the
/// tree once drew for a panel whose arm was missing), with its tab marked.
#[test]
fn every_panel_draws_its_own_view() {
    let mut app = open(TRACE);
    let mut term = Terminal::new(TestBackend::new(140, 24)).unwrap();
    let mut seen: Vec<(String, String)> = Vec::new();
    for p in grove::app::panels::PANELS {
        app.run(&format!("panel {}", p.name())).unwrap();
        assert_eq!(app.panel.name(), p.name());
        let s = draw(&mut term, &app);
        // The rows under the header and the tabs.
        let body: String = s.lines().skip(2).collect();
        for (other, b) in &seen {
            assert!(*b != body, "{} draws what {other} draws", p.name());
        }
        seen.push((p.name().to_string(), body));
    }
}

/// `panel next` and `panel prev` go round the panels in tab order, skipping those
/// that cannot show the profile, and are logged as the panel they reached.
#[test]
fn next_and_prev_go_round_the_usable_panels() {
    let names: Vec<&str> = grove::app::panels::PANELS
        .iter()
        .map(|p| p.name())
        .collect();
    let mut app = open(TRACE);
    for want in names.iter().skip(1).chain(names.first()) {
        app.run("panel next").unwrap();
        assert_eq!(app.panel.name(), *want);
    }
    app.run("panel prev").unwrap();
    assert_eq!(app.panel.name(), *names.last().unwrap());
    let last = format!("panel {}", names.last().unwrap());
    assert_eq!(app.log.last(), Some(&last));
    // A profile without events has neither kernels nor a timeline.
    let mut cpu = open("testdata/callgrind/rec.callgrind.out");
    let want: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !matches!(*n, "kernels" | "timeline"))
        .collect();
    let mut went = Vec::new();
    for _ in 0..want.len() {
        cpu.run("panel next").unwrap();
        went.push(cpu.panel.name());
    }
    went.rotate_right(1);
    assert_eq!(went, want);
    assert!(cpu.run("panel kernels").is_err());
    assert!(cpu.run("panel 4").is_err());
    assert_eq!(cpu.panel.name(), "tree");
}

/// Undo puts the whole view back — the panel on screen and every panel's state, the
/// summary's sideways scroll included — and a panel's derived data comes back with
/// it instead of being derived again.
#[test]
fn undo_puts_the_whole_view_back() {
    let mut app = open(TRACE);
    app.run("panel summary").unwrap();
    app.run("down 3").unwrap();
    app.run("scroll table 4").unwrap();
    let lines = app.summary_lines();
    app.run("filter time (inc) > 1000").unwrap();
    app.run("down 5").unwrap();
    app.run("scroll table 2").unwrap();
    assert_eq!((app.summary.scroll, app.summary.hscroll), (8, 6));
    app.run("undo").unwrap();
    assert_eq!(app.panel.name(), "summary");
    assert_eq!((app.summary.scroll, app.summary.hscroll), (3, 4));
    assert!(Arc::ptr_eq(&lines, &app.summary_lines()));
    // The kernel table's cursor too (`panel` is undoable).
    app.run("panel kernels").unwrap();
    app.run("down 2").unwrap();
    app.run("panel tree").unwrap();
    app.run("undo").unwrap();
    assert_eq!((app.panel.name(), app.kernels.cursor), ("kernels", 2));
}

const CALLGRIND: &str = "testdata/callgrind/rec.callgrind.out";

/// The functions table, its order and the selection's edges are kept between frames:
/// sorting, moving along the edges, the metric, filters, undo and `functions tree`
/// change what it shows.
#[test]
fn functions_follow_sort_edges_filters_and_metric() {
    for script in [
        "7jjsjs",
        "7jjh<Enter>l<Enter>j<Esc>j",
        "7jjt7j",
        "7j:filter time (inc) > 1000<ret>7jj:undo<ret>j",
        "7j:metric gpu_time<ret>jj",
    ] {
        same_warm_and_cold(TRACE, script);
    }
    for script in [
        "7jjhj<Enter>",
        "7jjjsssslj<Enter>t7",
        "7jt:undo<ret>7j",
        "7jjj/fi<ret>jh<Enter>",
        "7/fib<ret>j/<BS><Esc>j",
    ] {
        same_warm_and_cold(CALLGRIND, script);
    }
}

/// The panel's self and inclusive cost of every function, for every metric, are what
/// `grove functions --format json` prints, row by row in the same order (by self).
#[test]
fn functions_panel_equals_grove_functions() {
    for file in [CALLGRIND, "testdata/rank0.trace.json.gz"] {
        let mut app = open(file);
        app.run("panel functions").unwrap();
        let t = app.functions_table();
        assert!(!t.fns.is_empty(), "{file}");
        for (m, metric) in t.fns.metrics.iter().enumerate() {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let (rc, out, err) = common::grove(&[
                "functions",
                path.to_str().unwrap(),
                "--metric",
                &metric.name,
                "--format",
                "json",
            ]);
            assert_eq!(rc, 0, "{err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let rows = v["functions"].as_array().unwrap();
            assert_eq!(rows.len(), t.fns.len(), "{file} {}", metric.name);
            let order = t
                .fns
                .order(m, grove::transform::functions::Column::Self_, false);
            for (row, &f) in rows.iter().zip(order.iter()) {
                let func = &t.fns.functions[f as usize];
                let what = format!("{file} {} {}", metric.name, func.label());
                assert_eq!(row["name"].as_str(), Some(&*func.name), "{what}");
                let num = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
                assert_eq!(num("self"), t.fns.self_cost[m][f as usize], "{what}");
                assert_eq!(num("inclusive"), t.fns.inclusive[m][f as usize], "{what}");
            }
        }
        // What the panel shows is the default metric's order.
        assert_eq!(
            *app.functions_order(),
            t.fns
                .order(t.metric, grove::transform::functions::Column::Self_, false)
        );
    }
}

/// Enter on a caller selects it in the table; `functions tree` opens the tree filtered
/// to the function's call paths, logged as the filter and the panel switch.
#[test]
fn enter_on_a_caller_selects_it() {
    let mut app = open(CALLGRIND);
    app.run("panel functions").unwrap();
    let t = app.functions_table();
    let find = |name: &str| {
        (0..t.fns.len() as u32)
            .find(|&f| &*t.fns.functions[f as usize].name == name)
            .unwrap()
    };
    let (fib, fib2) = (find("fib"), find("fib'2"));
    let row = app
        .functions_order()
        .iter()
        .position(|&f| f == fib2)
        .unwrap();
    app.run(&format!("down {row}")).unwrap();
    assert_eq!(app.functions_selected(), Some(fib2));
    app.run("functions focus callers").unwrap();
    let callers = app.functions_edges().unwrap();
    let k = callers
        .callers
        .iter()
        .position(|e| e.function == fib)
        .unwrap();
    if k > 0 {
        app.run(&format!("down {k}")).unwrap();
    }
    app.run("functions enter").unwrap();
    assert_eq!(app.functions_selected(), Some(fib));
    // Its only caller is main; Enter there selects main.
    app.run("functions focus callers").unwrap();
    app.run("functions enter").unwrap();
    assert_eq!(app.functions_selected(), Some(find("main")));
    app.run("functions tree").unwrap();
    assert_eq!(app.panel.name(), "tree");
    let n = app.log.len();
    assert_eq!(
        app.log[n - 2..],
        [
            "filter name == \"main\"".to_string(),
            "panel tree".to_string()
        ]
    );
    assert!(app.run("functions sort nope").is_err());
    // A search keeps the functions whose name holds its text; Enter on a caller it
    // hides says so.
    app.run("pop-filter").unwrap();
    app.run("panel functions").unwrap();
    app.run("search fib").unwrap();
    let order = app.functions_order();
    assert!(!order.is_empty() && order.len() < t.fns.len());
    for &f in order.iter() {
        assert!(t.fns.functions[f as usize].name.contains("fib"));
    }
    let row = order.iter().position(|&f| f == fib).unwrap();
    app.run("top").unwrap();
    if row > 0 {
        app.run(&format!("down {row}")).unwrap();
    }
    assert_eq!(app.functions_selected(), Some(fib));
    app.run("functions focus callers").unwrap();
    let e = app.run("functions enter").unwrap_err();
    assert!(e.contains("the search hides it"), "{e}");
}
