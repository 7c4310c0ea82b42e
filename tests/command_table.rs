//! The command table end to end: keys become messages applied in one place, and the
//! undo stack keeps parsed commands that replay without parsing.

use std::path::Path;

use grove::app::command::{Command, Selector};
use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::{App, Mode, Msg, PromptEdit, UiMsg};
use grove::load::load_path;

fn app() -> App {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/small.trace.json");
    App::new(load_path(&p).unwrap(), Keymap::default_map())
}

fn keys(a: &mut App, script: &str) {
    for k in Key::parse_seq(script).unwrap() {
        a.on_key(k);
    }
}

#[test]
fn overlays_and_prompt_change_through_messages() {
    let mut a = app();
    keys(&mut a, "?jjk");
    assert_eq!(a.mode, Mode::Help { scroll: 1 });
    keys(&mut a, "x");
    assert_eq!(a.mode, Mode::Normal);
    keys(&mut a, "mj");
    assert!(matches!(a.mode, Mode::MetricPicker { .. }));
    keys(&mut a, "<Esc>");
    assert_eq!(a.mode, Mode::Normal);
    // The same edits sent as messages, without keys.
    a.send(Msg::Command(Command::parse("prompt command").unwrap()));
    for c in "sort name".chars() {
        a.send(Msg::Ui(UiMsg::Prompt(PromptEdit::Insert(c))));
    }
    a.send(Msg::Ui(UiMsg::Prompt(PromptEdit::Backspace)));
    match &a.mode {
        Mode::Prompt { input, .. } => assert_eq!(input, "sort nam"),
        m => panic!("{m:?}"),
    }
    a.send(Msg::Ui(UiMsg::Prompt(PromptEdit::Insert('e'))));
    a.send(Msg::Ui(UiMsg::Prompt(PromptEdit::Submit)));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.log.last().map(String::as_str), Some("sort name asc"));
    // Nothing the UI messages did is logged or undoable.
    assert_eq!(a.log.len(), 1);
    assert_eq!(a.applied.len(), 1);
}

#[test]
fn undo_and_redo_keep_parsed_commands() {
    let mut a = app();
    let whole = a.profile.cct.len();
    a.run("filter type == kernel").unwrap();
    let filtered = a.profile.cct.len();
    assert!(filtered < whole);
    a.run("derive share = gpu_time / (time + 1)").unwrap();
    match &a.applied[0] {
        Command::Filter { query, .. } => assert!(matches!(query.value, Selector::Expr(_))),
        c => panic!("{c:?}"),
    }
    assert!(matches!(a.applied[1], Command::Derive(_)));
    a.run("undo").unwrap();
    a.run("undo").unwrap();
    assert_eq!(a.profile.cct.len(), whole);
    assert_eq!(a.redo.len(), 2);
    a.run("redo").unwrap();
    assert_eq!(a.profile.cct.len(), filtered);
    a.run("pop-filter").unwrap();
    assert_eq!(a.profile.cct.len(), whole);
    assert_eq!(
        a.log,
        vec![
            "filter type == kernel",
            "derive share = gpu_time / (time + 1)",
            "undo",
            "undo",
            "redo",
            "pop-filter"
        ]
    );
}
