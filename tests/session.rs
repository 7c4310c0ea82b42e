//! Session files: a keyboard workflow writes one; replaying it headless gives the same
//! tree, and replaying it into the TestBackend gives the same screen. Bad sessions fail
//! with their line number.

use std::path::{Path, PathBuf};

use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::App;
use grove::export::formats::Format;
use grove::load::load_path;
use grove::session;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme};

mod common;
use common::grove;

const SMALL: &str = "testdata/small.trace.json";
const W: u16 = 120;
const H: u16 = 36;

fn input() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(SMALL)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = common::scratch("session-test").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn app() -> App {
    let mut a = App::new(load_path(&input()).unwrap(), Keymap::default_map());
    a.page = tree_rows(W, H);
    a.term = (W, H);
    a
}

fn screen(a: &App) -> String {
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let buf = common::draw(a, (W, H), &theme, &Glyphs::pick(false));
    // The rows above the status and prompt lines.
    common::screen_text(&buf)
        .lines()
        .take(usize::from(H - 2))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn keys(a: &mut App, script: &str) {
    for k in Key::parse_seq(script).unwrap() {
        a.on_key(k);
    }
}

/// The workflow of the round-trip tests: filter, derive, sort, folding, prune, focus.
const WORKFLOW: &str =
    ":filter time (inc) > 1% or type == kernel<ret>:derive share = gpu_time / (time + 1)<ret>\
:sort share (inc) desc<ret>jjl:prune count < 1<ret>Hjz";

#[test]
fn keyboard_session_replays_to_the_same_tree_and_screen() {
    let dir = tmpdir("roundtrip");
    let path = dir.join("s.jsonl");
    let mut a = app();
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    let mut lines_seen = 1;
    for k in Key::parse_seq(WORKFLOW).unwrap() {
        a.on_key(k);
        // Flushed as each command takes effect: the file always holds the whole log.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1 + a.log.len());
        lines_seen = lines_seen.max(text.lines().count());
    }
    assert!(lines_seen >= 7, "{lines_seen}");
    let script = session::read(&path).unwrap();
    let header = script.header.clone().unwrap();
    assert_eq!(header.format, "grove-session");
    assert_eq!(
        header.inputs[0].size,
        std::fs::metadata(input()).unwrap().len()
    );
    assert_eq!((header.term.cols, header.term.rows), (W, H));

    // Headless: the binary prints the same tree as the interactive app.
    let mut want = Vec::new();
    a.export_to(Format::Json, &mut want).unwrap();
    let (code, got, err) = grove(&["replay", path.to_str().unwrap(), "--print", "json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(got, String::from_utf8(want).unwrap());
    let mut csv = Vec::new();
    a.export_to(Format::Csv, &mut csv).unwrap();
    let (_, got, _) = grove(&["replay", path.to_str().unwrap(), "--print", "csv"]);
    assert_eq!(got, String::from_utf8(csv).unwrap());

    // Into a fresh app and the TestBackend: the same screen.
    let mut b = app();
    b.run_script(&script, "s.jsonl", None).unwrap();
    assert_eq!(screen(&b), screen(&a));
    assert_eq!(b.log, a.log);
}

#[test]
fn undo_redo_and_reset_replay() {
    let dir = tmpdir("undo");
    let path = dir.join("s.jsonl");
    let mut a = app();
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    keys(&mut a, ":filter leaf<ret>:filter type == kernel<ret>U");
    let after_undo = a.profile.cct.len();
    keys(&mut a, "<C-r>");
    let after_redo = a.profile.cct.len();
    assert!(after_redo < after_undo);
    keys(&mut a, "<Esc>");
    assert_eq!(a.profile.cct.len(), after_undo);
    let script = session::read(&path).unwrap();
    let mut b = app();
    b.run_script(&script, "s", None).unwrap();
    assert_eq!(b.profile.cct.len(), a.profile.cct.len());
    assert_eq!(screen(&b), screen(&a));
    keys(&mut a, ":reset<ret>");
    assert_eq!(a.profile.cct.len(), app().profile.cct.len());
}

#[test]
fn truncated_last_line_replays_the_rest() {
    let dir = tmpdir("trunc");
    let path = dir.join("s.jsonl");
    let mut a = app();
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    keys(&mut a, ":filter leaf<ret>:sort name asc<ret>");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"seq\":3,\"t_ms\":5,\"cmd\":\"sort na");
    std::fs::write(&path, text).unwrap();
    let (code, out, err) = grove(&["replay", path.to_str().unwrap(), "--print", "tree"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("truncated last line"), "{err}");
    assert!(!out.is_empty());
}

#[test]
fn unknown_command_stops_with_its_line() {
    let dir = tmpdir("unknown");
    let path = dir.join("s.jsonl");
    let mut a = app();
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    keys(&mut a, ":filter leaf<ret>");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"seq\":2,\"t_ms\":5,\"cmd\":\"frobnicate\"}\n");
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = grove(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("frobnicate"), "{err}");
}

#[test]
fn changed_input_warns_and_strict_refuses() {
    let dir = tmpdir("changed");
    let copy = dir.join("trace.json");
    std::fs::copy(input(), &copy).unwrap();
    let path = dir.join("s.jsonl");
    let mut a = App::new(load_path(&copy).unwrap(), Keymap::default_map());
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    keys(&mut a, ":sort name asc<ret>:filter leaf<ret>");
    let (code, _, err) = grove(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Only the input's own load warnings (issue 10: they reach stderr in every
    // headless command); nothing about the session.
    assert!(
        err.lines()
            .all(|l| l.starts_with("grove: warning: trace.json: ")),
        "{err}"
    );
    // Same size, one byte different.
    let mut bytes = std::fs::read(&copy).unwrap();
    let i = bytes.iter().position(|&b| b == b'6').unwrap();
    bytes[i] = b'7';
    std::fs::write(&copy, bytes).unwrap();
    let (code, _, err) = grove(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        err.contains("changed since the session was recorded"),
        "{err}"
    );
    let (code, _, err) = grove(&["replay", path.to_str().unwrap(), "--strict"]);
    assert_eq!(code, 1, "a --strict finding exits 1");
    assert!(err.contains("changed"), "{err}");
}

#[test]
fn until_stops_early() {
    let dir = tmpdir("until");
    let path = dir.join("s.jsonl");
    let mut a = app();
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    keys(&mut a, ":filter leaf<ret>:filter type == kernel<ret>");
    let (_, one, _) = grove(&[
        "replay",
        path.to_str().unwrap(),
        "--until",
        "1",
        "--print",
        "csv",
    ]);
    let (_, two, _) = grove(&["replay", path.to_str().unwrap(), "--print", "csv"]);
    assert!(one.lines().count() > two.lines().count());
}

#[test]
fn source_export_and_save() {
    let dir = tmpdir("source");
    let cmds = dir.join("setup.cmds");
    std::fs::write(
        &cmds,
        "# a hand-written script\nfilter type == kernel\n\nsort name asc\n",
    )
    .unwrap();
    let mut a = app();
    a.cwd = dir.clone();
    a.run("source setup.cmds").unwrap();
    assert_eq!(a.log, vec!["filter type == kernel", "sort name asc"]);
    for (fmt, file) in [
        ("csv", "t.csv"),
        ("json", "t.json"),
        ("hatchet", "t.hatchet.json"),
        ("folded", "t.folded"),
    ] {
        a.run(&format!("export {fmt} {file}")).unwrap();
        assert!(
            std::fs::metadata(dir.join(file)).unwrap().len() > 0,
            "{fmt}"
        );
    }
    // The exported literal loads back with the same nodes.
    let back = load_path(&dir.join("t.hatchet.json")).unwrap();
    assert_eq!(back.cct.len(), a.profile.cct.len());
    a.run("save saved.jsonl").unwrap();
    let s = session::read(&dir.join("saved.jsonl")).unwrap();
    assert_eq!(s.commands.len(), 2);
    // A bad line in a sourced file names the file and line.
    std::fs::write(&cmds, "sort name asc\nfilter nope > 3\n").unwrap();
    let e = a.run("source setup.cmds").unwrap_err();
    assert!(e.contains("line 2"), "{e}");
}

#[test]
fn tree_cmd_matches_replay() {
    let f = input();
    let (_, a, _) = grove(&[
        "tree",
        f.to_str().unwrap(),
        "--cmd",
        "filter type == kernel",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["type"] == "kernel"));
}

/// A comparison session names every input with its label, and replays onto them.
#[test]
fn ensemble_session_replays_with_its_labels() {
    let td = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let files = vec![
        td.join("rank0.trace.json.gz"),
        td.join("rank1.trace.json.gz"),
    ];
    let given = [
        ("0".to_string(), "base".to_string()),
        ("1".into(), "new".into()),
    ]
    .into_iter()
    .collect();
    let p = grove::load::load_ensemble(&files, &given).unwrap();
    // As `grove A B` opens two traces (and replay reopens them): steps aligned.
    let (p, _) = grove::diff::steps::align_pair(p);
    let mut a = App::new(p, Keymap::default_map());
    a.term = (W, H);
    let dir = tmpdir("ensemble");
    let path = dir.join("s.jsonl");
    let header = a.session_header();
    let labels: Vec<Option<String>> = header.inputs.iter().map(|i| i.label.clone()).collect();
    assert_eq!(labels, vec![Some("base".into()), Some("new".into())]);
    assert!(header.inputs.iter().all(|i| i.hash.starts_with("fnv64w:")));
    a.session = Some(session::Writer::create(&path, &header).unwrap());
    keys(&mut a, ":diff base new<ret>");
    assert_eq!(a.metric, "diff");
    let mut want = Vec::new();
    a.export_to(Format::Csv, &mut want).unwrap();
    let (code, out, err) = grove(&["replay", path.to_str().unwrap(), "--print", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, String::from_utf8(want).unwrap());
}

/// A database directory is an input too: its hash covers every file in it.
#[test]
fn directory_inputs_have_a_hash() {
    let dir = tmpdir("dirhash");
    std::fs::write(dir.join("a"), b"one").unwrap();
    let before = session::input_of(&dir).unwrap();
    assert!(before.hash.starts_with("fnv64d:"), "{}", before.hash);
    assert_eq!(before.size, 3);
    std::fs::write(dir.join("b"), b"two").unwrap();
    let after = session::input_of(&dir).unwrap();
    assert_ne!(before.hash, after.hash);
    assert_eq!(after.size, 6);
}

/// A file that sources itself, directly or through another, stops at once with one
/// line naming the cycle (it repeated the path 16 times); an error inside a sourced
/// file says its own file and line once.
#[test]
fn a_source_cycle_is_named_once() {
    let dir = tmpdir("source-cycle");
    let (a, b, c) = (
        dir.join("a.grove"),
        dir.join("b.grove"),
        dir.join("c.grove"),
    );
    std::fs::write(&a, format!("sort name\nsource {}\n", b.display())).unwrap();
    std::fs::write(&b, format!("source {}\n", a.display())).unwrap();
    std::fs::write(&c, "sort name\nbogus\n").unwrap();
    let mut app = app();
    let e = app.run(&format!("source {}", a.display())).unwrap_err();
    let want = format!(
        "sources itself ({} > {} > {})",
        a.display(),
        b.display(),
        a.display()
    );
    assert!(e.contains(&want), "{e}");
    assert_eq!(e.matches(": line ").count(), 0, "{e}");
    let e = app.run(&format!("source {}", c.display())).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: line 2: bogus: column 1: unknown command \"bogus\"",
            c.display()
        )
    );
}
