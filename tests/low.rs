//! Issue 16, big traces: a cold open shows the tree before the GPU index is built (the
//! panels that need single events say they are loading, then fill), and a trace
//! larger than the memory grove may use loads what fits.

mod common;

use std::path::{Path, PathBuf};

use grove::app::background::Pending;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::gpu::classify::Categories;
use grove::ui::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// The screen's text, lines trimmed at the right.
fn render(app: &App) -> String {
    let (w, h) = (120u16, 30u16);
    let theme = Theme::builtin("mono", ColorDepth::Never).unwrap();
    let g = Glyphs::pick(true);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| grove::ui::draw(f, app, &theme, &g)).unwrap();
    let buf = term.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Polls until the background work has arrived (at most 60 s).
fn wait(app: &mut App) {
    let start = std::time::Instant::now();
    while app.loading() {
        if !app.poll_background() {
            assert!(start.elapsed().as_secs() < 60, "the index never arrived");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

#[test]
fn a_cold_open_shows_the_tree_while_the_gpu_index_is_built() {
    let file = data("rank0.trace.json.gz");
    let full = App::new(
        grove::load::load_path(&file).unwrap(),
        Keymap::default_map(),
    );
    let mut p = grove::load::load_path(&file).unwrap();
    // What the TUI does with a cold load: the events go behind the tree.
    let behind = Pending::index(&mut p, Categories::builtin());
    assert!(behind.is_some() && p.events.is_none());
    let mut app = App::new(p, Keymap::default_map());
    app.background = behind;
    // Hold the result back to see the screen while the index is being built.
    let pending = app.background.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut pending = pending;
    (pending.start.take().unwrap())();
    app.background = Some(Pending {
        rx,
        what: pending.what.clone(),
        why: pending.why,
        start: None,
    });
    let tree = render(&app);
    assert!(tree.contains("ProfilerStep#"), "{tree}");
    assert_eq!(render(&full), tree, "the tree is the one of a full open");
    app.run("panel kernels").unwrap();
    let screen = render(&app);
    assert!(
        screen.contains("loading the events (indexing the events)"),
        "{screen}"
    );
    app.run("panel summary").unwrap();
    let screen = render(&app);
    assert!(
        screen.contains("breakdowns: loading the events"),
        "{screen}"
    );
    app.run("panel kernels").unwrap();
    // The index arrives: the kernel table fills with the numbers of a full open.
    tx.send(pending.rx.recv().unwrap()).unwrap();
    wait(&mut app);
    assert!(app.gpu.is_some() && app.profile.events.is_some());
    let screen = render(&app);
    assert!(!screen.contains("loading the events"), "{screen}");
    let mut full = full;
    full.run("panel kernels").unwrap();
    assert_eq!(render(&full), screen);
    app.run("panel summary").unwrap();
    full.run("panel summary").unwrap();
    assert_eq!(render(&full), render(&app));
}

#[test]
fn a_profile_without_events_has_nothing_to_wait_for() {
    let mut p = grove::readers::load_demo();
    p.events = None;
    assert!(Pending::index(&mut p, Categories::builtin()).is_none());
}

/// `grove tree --format csv` of `file` with `extra`: (stdout, stderr).
fn tree_csv(file: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["tree", "--no-cache", "--format", "csv"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    let (code, out, err) = common::grove(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    (out, err)
}

/// A trace that does not fit loads its longest leading range of steps that does, with
/// the numbers of `--steps` of that range (which tests/load.rs checks against the
/// full load), and says so: on stderr, and as the `--strict` error.
#[test]
fn a_trace_too_big_loads_the_leading_steps_that_fit() {
    let file = data("steps4.trace.json.gz");
    // A part needs a fixed share of the whole estimate plus its share of the span,
    // within 90% of the limit (`readers::fit`).
    let (fitted, err) = tree_csv(&file, &["--max-memory", "180K"]);
    assert!(
        err.contains("loaded steps 2-3 of 4 (ProfilerStep#2 to #5): the whole trace needs ~278 KiB, grove may use 180 KiB (--max-memory); --steps, --window or --low-memory choose another part"),
        "{err}"
    );
    let (steps, _) = tree_csv(&file, &["--steps", "2-3"]);
    assert_eq!(fitted, steps);
    // Less memory, fewer steps.
    let (fitted, err) = tree_csv(&file, &["--max-memory", "133K"]);
    assert!(err.contains("loaded step 2 of 4"), "{err}");
    assert_eq!(fitted, tree_csv(&file, &["--steps", "2"]).0);
    // Under the limit, but too close to it for the whole load.
    let (_, err) = tree_csv(&file, &["--max-memory", "300K"]);
    assert!(
        err.contains("loaded steps 2-4 of 4") && err.contains("too close to the limit"),
        "{err}"
    );
    let f = file.to_str().unwrap();
    let (code, _, err) = common::grove(&["tree", "--strict", "--max-memory", "180K", f]);
    assert_eq!(code, 2);
    assert!(
        err.contains("loaded steps 2-3 of 4") && err.contains("(--strict)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Not even one step fits: refused, in one line.
    let (code, _, err) = common::grove(&["tree", "--max-memory", "33K", f]);
    assert_eq!(code, 2);
    assert!(err.contains("not even ProfilerStep#2 fits"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Without steps, the leading window that fits; its numbers are `--window`'s.
#[test]
fn a_trace_without_steps_loads_a_leading_window() {
    let mut text = String::new();
    let gz = std::fs::File::open(data("steps4.trace.json.gz")).unwrap();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text).unwrap();
    // The same trace with its steps renamed (same length: the estimate holds).
    let dir = std::env::temp_dir().join(format!("grove-low-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nosteps.trace.json");
    std::fs::write(&file, text.replace("ProfilerStep#", "ProfilerStap#")).unwrap();
    let (fitted, err) = tree_csv(&file, &["--max-memory", "100K"]);
    let window = err
        .split("loaded the window ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("{err}"));
    let (cut, _) = tree_csv(&file, &["--window", window]);
    assert_eq!(fitted, cut);
    let (whole, _) = tree_csv(&file, &[]);
    assert_ne!(fitted, whole, "a part, not the whole: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--low-memory` (and `GROVE_LOW_MEMORY=1`) keeps the tree and the kernel table's
/// numbers of a full load, whatever the table's options.
#[test]
fn low_memory_keeps_the_tree_and_the_kernel_numbers() {
    let f = data("steps4.trace.json.gz");
    let f = f.to_str().unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--no-cache", "--format", "csv", f]);
        let (code, out, err) = common::grove_env(&all, env);
        assert_eq!(code, 0, "{all:?}: {err}");
        out
    };
    for cmd in [
        &["tree"][..],
        &["kernels"],
        &["kernels", "--all"],
        &["kernels", "--by-category"],
        &["kernels", "--by", "mean"],
    ] {
        let full = run(cmd, &[]);
        let mut low = cmd.to_vec();
        low.push("--low-memory");
        assert_eq!(run(&low, &[]), full, "{cmd:?}");
        assert_eq!(run(cmd, &[("GROVE_LOW_MEMORY", "1")]), full, "{cmd:?}");
    }
    let (code, out, _) = common::grove(&["info", "--low-memory", "--no-cache", f]);
    assert_eq!(code, 0);
    assert!(
        out.contains("low-memory: level of detail: 1978 event rows reduced to 2 GPU lane(s)"),
        "{out}"
    );
}

/// A trace that does not fit loads whole in low-memory mode, not its leading steps.
#[test]
fn low_memory_loads_the_whole_trace_instead_of_a_part() {
    let f = data("steps4.trace.json.gz");
    let f = f.to_str().unwrap();
    let (code, limited, err) = common::grove(&[
        "tree",
        "--no-cache",
        "--format",
        "csv",
        "--max-memory",
        "133K",
        "--low-memory",
        f,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("loaded steps"), "{err}");
    let (_, full, _) = common::grove(&["tree", "--no-cache", "--format", "csv", f]);
    assert_eq!(limited, full);
}

/// In the explorer: the kernel table of the summary is the full one, the timeline
/// draws the level of detail and says so, and what needs single events says they are
/// not loaded.
#[test]
fn low_memory_timeline_draws_the_level_of_detail() {
    let file = data("steps4.trace.json.gz");
    let full = App::new(
        grove::load::load_path(&file).unwrap(),
        Keymap::default_map(),
    );
    let mut p = grove::load::load_path(&file).unwrap();
    grove::load::to_low_memory(&mut p);
    assert_eq!(p.events.as_ref().map(|e| e.len()), Some(0));
    let mut app = App::new(p, Keymap::default_map());
    let rows = |a: &App| -> Vec<String> {
        a.kernels
            .rows
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {} {} {} {}",
                    r.name, r.category, r.count, r.total_ns, r.mean_ns, r.min_ns, r.max_ns
                )
            })
            .collect()
    };
    assert!(!full.kernels.rows.is_empty());
    assert_eq!(rows(&app), rows(&full));
    app.run("kernels by count").unwrap();
    let mut full = full;
    full.run("kernels by count").unwrap();
    assert_eq!(rows(&app), rows(&full));
    app.run("panel timeline").unwrap();
    let screen = render(&app);
    assert!(screen.contains("low-memory: level of detail"), "{screen}");
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("low_memory_timeline", screen);
    });
    app.run("panel summary").unwrap();
    let screen = render(&app);
    assert!(
        screen.contains("breakdowns: low-memory mode, single events are not loaded"),
        "{screen}"
    );
    app.run("panel timeline").unwrap();
    let e = app.run("zoom 1ms 2ms").unwrap_err().to_string();
    assert!(e.contains("single events are not loaded"), "{e}");
    // `reset` replays from a fresh view; the kernel categories are the app's, not the
    // view's, and stay (once they went with the view, and the table came back empty).
    app.run("reset").unwrap();
    full.run("reset").unwrap();
    assert!(!app.kernels.rows.is_empty());
    assert_eq!(rows(&app), rows(&full));
}

/// The cache write of a cold open runs behind the first frame too; its failure is a
/// warning on the status line when the events arrive.
#[test]
fn the_cache_write_behind_the_tree_is_never_silent() {
    let mut p = grove::load::load_path(&data("rank0.trace.json.gz")).unwrap();
    let behind = Pending::index_then(&mut p, Categories::builtin(), || {
        Some("cache /x: read-only file system".to_string())
    });
    let mut app = App::new(p, Keymap::default_map());
    app.background = behind;
    wait(&mut app);
    assert!(app.gpu.is_some());
    let m = app.message.as_ref().map(|m| m.text.as_str());
    assert_eq!(m, Some("cache /x: read-only file system"));
}

/// Low-memory mode is for traces: another format that does not fit is still refused
/// in one line, not loaded whole.
#[test]
fn low_memory_does_not_let_other_formats_past_the_check() {
    let dir = std::env::temp_dir().join(format!("grove-low-lit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tree.json");
    std::fs::write(
        &file,
        r#"[{"frame": {"name": "main", "type": "function"}, "metrics": {"time": 1.0}, "children": []}]"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    for extra in [&[][..], &["--low-memory"]] {
        let mut args = vec!["tree", "--no-cache", "--max-memory", "10"];
        args.extend_from_slice(extra);
        args.push(f);
        let (code, _, err) = common::grove(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("Hatchet literal"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
