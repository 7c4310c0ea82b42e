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
    app.background = Some(Pending {
        rx,
        what: pending.what.clone(),
        why: pending.why,
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
