//! The flame graph panel: the first row's widths add up to the panel's width for the
//! focused (or zoomed) subtree, the selection is the tree's, filters and the metric
//! apply as to the tree, the headless text has the panel's widths, and after `diff`
//! the colours agree with the sign of the tree's `diff` column.

use std::path::Path;

use grove::app::keys::Key;
use grove::app::panels::flame::Layout;
use grove::app::App;
use grove::present::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

mod common;

fn open(files: &str) -> App {
    common::open_app(files)
}

fn keys(app: &mut App, script: &str) {
    for key in Key::parse_seq(script).unwrap() {
        app.on_key(key);
    }
}

fn run(app: &mut App, cmd: &str) {
    app.run(cmd).unwrap();
}

fn row_width(l: &Layout, row: usize) -> u32 {
    l.rows[row].iter().map(|f| f.w as u32).sum()
}

/// Frames of a row never overlap and stay inside the width.
fn check_rows(l: &Layout) {
    for row in &l.rows {
        let mut x = 0;
        for f in row {
            assert!(f.x >= x, "{row:?}");
            x = f.x + f.w;
            assert!(x <= l.width, "{row:?}");
        }
    }
}

#[test]
fn root_row_adds_up_to_the_width() {
    for file in [
        "testdata/rank0.trace.json.gz",
        "testdata/callgrind/rec.callgrind.out",
    ] {
        let mut app = open(file);
        run(&mut app, "panel flame");
        for w in [10u16, 80, 137, 200] {
            let l = app.flame_layout(w);
            assert_eq!(row_width(&l, 0), w as u32, "{file} at {w}");
            check_rows(&l);
        }
        // The focused subtree, then a zoom inside it.
        keys(&mut app, "j");
        let path = app.path_of(app.tree.selected().unwrap());
        run(
            &mut app,
            &format!("focus {}", grove::app::command::quote(&path)),
        );
        let l = app.flame_layout(80);
        assert_eq!(row_width(&l, 0), 80, "{file} focused");
        assert_eq!(l.rows[0].len(), 1);
        keys(&mut app, "j<Enter>");
        let l = app.flame_layout(80);
        assert_eq!(row_width(&l, 0), 80, "{file} zoomed");
        assert_eq!(l.rows[0][0].node, app.tree.selected().unwrap());
        assert!(!l.crumbs.is_empty());
        keys(&mut app, "<Esc>");
        assert!(app.flame_layout(80).crumbs.is_empty());
    }
}

#[test]
fn selection_is_the_tree_cursor() {
    let mut app = open("testdata/rank0.trace.json.gz");
    keys(&mut app, "6jjj");
    let on_flame = app.tree.selected().unwrap();
    let po = app.tree.po.clone();
    // Three steps down from a root: depth 3, the heaviest path.
    assert_eq!(po.depth[po.pos[on_flame as usize] as usize], 3);
    keys(&mut app, "l");
    let right = app.tree.selected().unwrap();
    assert_eq!(
        po.parent(po.pos[right as usize]),
        po.parent(po.pos[on_flame as usize])
    );
    // The tree shows the same node; moving there moves the flame graph's selection.
    keys(&mut app, "1");
    assert_eq!(app.tree.selected(), Some(right));
    keys(&mut app, "u6");
    let parent = app.tree.selected().unwrap();
    assert_eq!(po.node[po.parent(po.pos[right as usize]) as usize], parent);
    let l = app.flame_layout(120);
    let (d, i) = l.locate(&app.tree.po, parent).unwrap();
    assert_eq!(l.rows[d][i].node, parent);
    // Up goes to the parent on the icicle, to the child on the flipped graph.
    keys(&mut app, "k");
    assert_eq!(
        app.tree.selected(),
        Some(po.node[po.parent(po.pos[parent as usize]) as usize])
    );
    keys(&mut app, "fk");
    assert_eq!(app.tree.selected(), Some(parent));
}

#[test]
fn filters_and_metric_apply_as_to_the_tree() {
    let mut app = open("testdata/rank0.trace.json.gz");
    run(&mut app, "panel flame");
    let before = app.flame_layout(100).total;
    keys(&mut app, "j");
    let first = app.tree.selected().unwrap();
    let path = app.path_of(first);
    run(
        &mut app,
        &format!("hide {}", grove::app::command::quote(&path)),
    );
    let l = app.flame_layout(100);
    assert!(l.find(&app.tree.po, first).is_none());
    assert_eq!(row_width(&l, 0), 100);
    run(&mut app, "undo");
    assert!(app.flame_layout(100).find(&app.tree.po, first).is_some());
    run(&mut app, "metric gpu_time");
    let l = app.flame_layout(100);
    assert!(l.total != before);
    assert_eq!(l.total, app.total);
}

/// The headless text has the panel's frames: a frame of two cells or more ends in `|`
/// at its last cell, a shaded run is `:`s.
#[test]
fn text_has_the_panels_widths() {
    let mut app = open("testdata/rank0.trace.json.gz");
    run(&mut app, "panel flame");
    let g = Glyphs::pick(true);
    for w in [80u16, 200] {
        let text = grove::ui::panels::flame::text(&app, w, &g);
        let l = app.flame_layout(w);
        let lines: Vec<Vec<char>> = text.lines().map(|s| s.chars().collect()).collect();
        assert_eq!(lines.len(), l.rows.len());
        for (line, row) in lines.iter().zip(&l.rows) {
            let at = |x: u16| line.get(x as usize).copied().unwrap_or(' ');
            for f in row {
                if f.merged() {
                    assert_eq!(at(f.x), ':');
                } else if f.w > 1 {
                    assert_eq!(at(f.x + f.w - 1), '|', "{f:?} in {line:?}");
                    assert!((f.x..f.x + f.w - 1).all(|x| at(x) != '|'));
                }
            }
        }
    }
}

/// After `diff`, widths come from the newer run and a frame is hot exactly where the
/// tree's `diff (inc)` is positive, cool where it is negative.
#[test]
fn diff_colours_follow_the_diff_sign() {
    let mut app = open("testdata/rank0.trace.json.gz,testdata/rank1.trace.json.gz");
    run(&mut app, "diff rank1 rank0");
    run(&mut app, "panel flame");
    assert!(app.flame_is_diff());
    assert_eq!(app.flame_width_column(), "time (inc)@rank1");
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let hot: Vec<Color> = (0..3).filter_map(|b| theme.heat(b).fg).collect();
    let cool: Vec<Color> = (3..6).filter_map(|b| theme.heat(b).fg).collect();
    // Narrower than the details pane needs: the panel has the whole width.
    let mut term = Terminal::new(TestBackend::new(90, 50)).unwrap();
    term.draw(|f| grove::ui::draw(f, &app, &theme, &Glyphs::pick(false)))
        .unwrap();
    let buf = term.backend().buffer().clone();
    let l = app.flame_layout(90);
    let diff = app.profile.metrics.values("diff (inc)").unwrap().to_vec();
    let (mut nh, mut nc) = (0, 0);
    // The rows start under the header line (no zoom, so no breadcrumb).
    for (k, row) in l.rows.iter().enumerate().take(40) {
        let y = 3 + k as u16;
        for f in row.iter().filter(|f| !f.merged() && f.w > 1) {
            if app.tree.selected() == Some(f.node) {
                continue;
            }
            let fg = buf[(f.x, y)].fg;
            let d = diff[f.node as usize];
            if d > 0.0 {
                assert!(
                    hot.contains(&fg),
                    "{} {d} {fg:?}",
                    app.profile.cct.name(f.node)
                );
                nh += 1;
            } else if d < 0.0 {
                assert!(
                    cool.contains(&fg),
                    "{} {d} {fg:?}",
                    app.profile.cct.name(f.node)
                );
                nc += 1;
            }
        }
    }
    assert!(nh > 0 && nc > 0, "{nh} hot, {nc} cool");
}

/// `grove tree FILE --cmd "panel flame" --width N` prints the panel's rows.
#[test]
fn headless_tree_prints_the_flame_graph() {
    let file = "testdata/rank0.trace.json.gz";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["--ascii", "tree"])
        .arg(&path)
        .args([
            "--cmd",
            "panel flame",
            "--cmd",
            "flame zoom \"python (main thread)/ProfilerStep#2\"",
            "--width",
            "90",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut app = open(file);
    app.use_data_order();
    run(&mut app, "panel flame");
    run(
        &mut app,
        "flame zoom \"python (main thread)/ProfilerStep#2\"",
    );
    let want = grove::ui::panels::flame::text(&app, 90, &Glyphs::pick(true));
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert!(
        want.starts_with("python (main thread)\nProfilerStep#2---"),
        "{want}"
    );
}

/// A replayed session that ends on the flame panel prints its rows at the width the
/// panel had on the recorded terminal (120 columns, less the details pane).
#[test]
fn replay_prints_the_flame_graph_at_the_panels_width() {
    let file = "testdata/rank0.trace.json.gz";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let dir = std::env::temp_dir().join(format!("grove-flame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let session = dir.join("s.jsonl");
    let header = serde_json::json!({
        "format": "grove-session", "version": 1, "tool_version": "0.1.0",
        "created": "2026-11-27T12:00:00Z",
        "inputs": [{
            "path": path.to_str().unwrap(),
            "size": std::fs::metadata(&path).unwrap().len(),
            "hash": "fnv64w:c311a85233ce9c04",
        }],
        "term": {"cols": 120, "rows": 40},
    });
    let body = format!(
        "{header}\n{{\"seq\":1,\"t_ms\":0,\"cmd\":\"panel flame\"}}\n{{\"seq\":2,\"t_ms\":0,\"cmd\":\"flame zoom \\\"python (main thread)/ProfilerStep#2\\\"\"}}\n"
    );
    std::fs::write(&session, body).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
        .arg("replay")
        .arg(&session)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut app = open(file);
    run(&mut app, "panel flame");
    run(
        &mut app,
        "flame zoom \"python (main thread)/ProfilerStep#2\"",
    );
    let width = grove::ui::layout::panel_width(&app, 120);
    assert!(width < 120);
    let want = grove::ui::panels::flame::text(&app, width, &Glyphs::pick(false));
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// In an ensemble the widths are the primary metric's: a member's or a statistic's.
#[test]
fn ensemble_member_or_mean() {
    let mut app = open("testdata/rank0.trace.json.gz,testdata/rank1.trace.json.gz");
    run(&mut app, "panel flame");
    for m in ["time@rank0", "time@mean"] {
        run(&mut app, &format!("metric {m}"));
        let col = app.flame_width_column();
        assert_eq!(col, app.inclusive_column());
        assert!(col.ends_with(&m[4..]), "{col}");
        let v = app.profile.metrics.values(&col).unwrap();
        let po = &app.tree.po;
        let want: f64 = po
            .root_positions()
            .map(|p| v[po.node[p as usize] as usize])
            .filter(|x| x.is_finite() && *x > 0.0)
            .sum();
        let l = app.flame_layout(100);
        assert!(
            (l.total - want).abs() <= 1e-9 * want,
            "{m}: {} {want}",
            l.total
        );
        assert_eq!(row_width(&l, 0), 100);
    }
}
