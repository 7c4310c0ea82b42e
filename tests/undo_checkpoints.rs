//! Undo and pop-filter step back from checkpoints instead of replaying from the
//! loaded tree: the view they give is the one before the command, the same as the
//! replay gives once the memory budget has dropped the checkpoints.

use std::path::Path;

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::export::formats::Format;
use grove::load::load_path;

fn app(budget: usize) -> App {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo.trace.json.gz");
    let mut a = App::new(load_path(&p).unwrap(), Keymap::default_map());
    a.undo_budget = budget;
    a
}

/// What the user sees and what an export writes.
fn view(a: &App) -> (String, Vec<(u32, u32)>, String, String) {
    let mut csv = Vec::new();
    a.export_to(Format::Csv, &mut csv).unwrap();
    let rows = a.tree.visible.iter().map(|r| (r.pos, r.more)).collect();
    (
        String::from_utf8(csv).unwrap(),
        rows,
        a.metric.clone(),
        a.sort_label(),
    )
}

const STEPS: &[&str] = &[
    "filter time (inc) > 0",
    "sort name asc",
    "expand-all",
    "derive twice = time * 2",
    "filter --squash name =~ \"aten\"",
    "limit 1%",
    "metric twice",
    "group-by type",
    "collapse-all",
];

#[test]
fn undo_gives_back_each_view_in_turn() {
    for budget in [usize::MAX, 0] {
        let mut a = app(budget);
        let mut before = Vec::new();
        for s in STEPS {
            before.push(view(&a));
            // A step this profile cannot take is simply not on the stack.
            let _ = a.run(s);
        }
        let applied = a.applied.len();
        for _ in 0..applied {
            a.run("undo").unwrap();
        }
        assert!(a.applied.is_empty());
        if budget == usize::MAX {
            // From checkpoints: folds, rows and cursor as they were.
            assert_eq!(view(&a), before[0]);
        } else {
            // Replayed: the same tree (the folds are the loaded view's).
            assert_eq!(view(&a).0, before[0].0);
        }
        // Redo all, then undo one by one against a fresh replay of the prefix.
        for _ in 0..applied {
            a.run("redo").unwrap();
        }
        let cmds: Vec<String> = a.applied.iter().map(|c| c.to_string()).collect();
        for k in (0..applied).rev() {
            a.run("undo").unwrap();
            let mut fresh = app(budget);
            for c in &cmds[..k] {
                fresh.run(c).unwrap();
            }
            assert_eq!(
                view(&a).0,
                view(&fresh).0,
                "budget {budget}, after undoing {}",
                cmds[k]
            );
        }
    }
}

#[test]
fn pop_filter_keeps_the_commands_after_it() {
    let mut views = Vec::new();
    for budget in [usize::MAX, 0] {
        let mut a = app(budget);
        a.run("sort name asc").unwrap();
        a.run("filter name =~ \"aten\"").unwrap();
        a.run("derive twice = time * 2").unwrap();
        a.run("metric twice").unwrap();
        a.run("pop-filter").unwrap();
        let cmds: Vec<String> = a.applied.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            cmds,
            ["sort name asc", "derive twice = time * 2", "metric twice"]
        );
        let mut fresh = app(budget);
        for c in &cmds {
            fresh.run(c).unwrap();
        }
        assert_eq!(view(&a).0, view(&fresh).0, "budget {budget}");
        assert_eq!(a.metric, "twice");
        // Undo after the pop steps back over the re-applied commands.
        a.run("undo").unwrap();
        assert_eq!(a.applied.len(), 2);
        views.push(view(&a).0);
    }
    assert_eq!(views[0], views[1]);
}

#[test]
fn a_small_budget_keeps_the_latest_checkpoint_and_still_undoes_all() {
    let mut a = app(1);
    let start = view(&a);
    a.run("filter time (inc) > 0").unwrap();
    a.run("sort name asc").unwrap();
    a.run("filter name =~ \"aten\"").unwrap();
    let filtered = a.profile.cct.len();
    a.run("undo").unwrap();
    a.run("undo").unwrap();
    a.run("undo").unwrap();
    assert_eq!(view(&a).0, start.0);
    a.run("redo").unwrap();
    a.run("redo").unwrap();
    a.run("redo").unwrap();
    assert_eq!(a.profile.cct.len(), filtered);
    a.run("reset").unwrap();
    assert_eq!(view(&a), start);
}
