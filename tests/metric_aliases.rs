//! Hatchet's and Thicket's metric names work where grove's do (`--metric`, `--cmd`,
//! sessions, filter expressions), with a note naming grove's column: on the status
//! line in the TUI, a warning line on stderr headless.

use std::path::Path;

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::load::load_path;

mod common;
use common::{corpus, grove};

const CALI: &str = "thicket/thicket/tests/data/mpi_scaling_cali/27_cores.cali";

#[test]
fn metric_flag_takes_hatchet_names() {
    let Some(f) = corpus(CALI) else { skip!() };
    let f = f.to_str().unwrap();
    let (code, via_alias, err) = grove(&[
        "tree",
        f,
        "--metric",
        "Avg time/rank",
        "--depth",
        "1",
        "--no-legend",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.trim(),
        "grove: warning: metric `Avg time/rank` is grove's `Avg time/rank (inc)`"
    );
    let (_, direct, err2) = grove(&[
        "tree",
        f,
        "--metric",
        "Avg time/rank (inc)",
        "--depth",
        "1",
        "--no-legend",
    ]);
    assert_eq!(via_alias, direct);
    assert!(err2.is_empty(), "{err2}");
    // Hatchet's cali-query reader names the column by its Caliper attribute.
    let (code, _, err) = grove(&["tree", f, "--metric", "avg#inclusive#sum#time.duration"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("is grove's `Avg time/rank (inc)`"), "{err}");
    let (code, _, err) = grove(&["tree", f, "--metric", "Avg time"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown metric \"Avg time\""), "{err}");
}

#[test]
fn commands_and_sessions_take_hatchet_names() {
    let Some(f) = corpus(CALI) else { skip!() };
    let f = f.to_str().unwrap();
    let (code, out, err) = grove(&[
        "tree",
        f,
        "--cmd",
        "filter \"Avg time/rank\" > 50%",
        "--cmd",
        "sort \"Total time\" desc",
        "--no-legend",
        "--raw",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("47.238 main\n└─ 47.221 lulesh.cycle\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 4, "{out}");
    let notes: Vec<&str> = err.lines().collect();
    assert_eq!(
        notes,
        [
            "grove: warning: metric `Avg time/rank` is grove's `Avg time/rank (inc)`",
            "grove: warning: metric `Total time` is grove's `Total time (inc)`",
        ]
    );
    // A session written with Thicket's names replays, with the same notes.
    let dir = std::env::temp_dir().join(format!("grove-aliases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("steps.txt");
    std::fs::write(
        &s,
        "metric \"Max time/rank\"\nprune \"Max time/rank\" < 1ms\n",
    )
    .unwrap();
    let (code, out, err) = grove(&[
        "replay",
        s.to_str().unwrap(),
        "--input",
        f,
        "--depth",
        "0",
        "--raw",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("47.2"), "{out}");
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("is grove's `Max time/rank (inc)`"))
            .count(),
        2,
        "{err}"
    );
}

#[test]
fn status_line_note_and_canonical_log() {
    let Some(f) = corpus(CALI) else { skip!() };
    let mut a = App::new(load_path(Path::new(&f)).unwrap(), Keymap::default_map());
    a.run("metric \"Avg time/rank\"").unwrap();
    assert_eq!(a.metric, "Avg time/rank (inc)");
    let msg = &a.message.as_ref().unwrap().text;
    assert_eq!(
        msg,
        "metric `Avg time/rank` is grove's `Avg time/rank (inc)`"
    );
    // The log names grove's column, so the session means the same in any tool.
    assert_eq!(a.log.last().unwrap(), "metric \"Avg time/rank (inc)\"");
    a.run("sort \"Min time/rank\" asc").unwrap();
    assert_eq!(a.log.last().unwrap(), "sort \"Min time/rank (inc)\" asc");
    let msg = &a.message.as_ref().unwrap().text;
    assert!(
        msg.starts_with("metric `Min time/rank` is grove's `Min time/rank (inc)`; sorted by"),
        "{msg}"
    );
    // A grove name gives no note.
    a.notes.clear();
    a.run("metric \"Total time (inc)\"").unwrap();
    assert!(a.notes.is_empty());
}

#[test]
fn hpctoolkit_time_is_cputime() {
    let Some(d) = corpus("hpctoolkit/tests/data/dbase/loops-cputime-t.nostruct.d") else {
        skip!()
    };
    let (code, out, err) = grove(&[
        "tree",
        d.to_str().unwrap(),
        "--metric",
        "time (inc)",
        "--depth",
        "0",
        "--no-legend",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("metric `time (inc)` is grove's `CPUTIME (sec) (inc)@summary`"),
        "{err}"
    );
    assert!(out.contains("main thread"), "{out}");
}

/// Hatchet's query dialects take Hatchet's names too: a notebook's query pasted as it
/// is selects what the same query on grove's column selects.
#[test]
fn hatchet_queries_take_hatchet_names() {
    let Some(f) = corpus(CALI) else { skip!() };
    let f = f.to_str().unwrap();
    let run = |q: &str| {
        let (code, out, err) = grove(&["tree", f, "--cmd", q, "--format", "csv"]);
        assert_eq!(code, 0, "{q}: {err}");
        out
    };
    let cypher = |m: &str| format!("filter MATCH (\".\", p) WHERE p.\"{m}\" > 0.1");
    let via_alias = run(&cypher("Avg time/rank"));
    assert_eq!(via_alias, run(&cypher("Avg time/rank (inc)")));
    assert!(via_alias.lines().count() > 1);
    let object = |m: &str| format!("filter [{{\"{m}\": \"> 0.1\"}}]");
    assert_eq!(
        run(&object("Avg time/rank")),
        run(&object("Avg time/rank (inc)"))
    );
}

/// `derive` takes Hatchet's names too.
#[test]
fn derive_takes_hatchet_names() {
    let Some(f) = corpus(CALI) else { skip!() };
    let f = f.to_str().unwrap();
    let run = |m: &str| {
        let (code, out, err) = grove(&[
            "tree",
            f,
            "--cmd",
            &format!("derive twice = 2 * \"{m}\""),
            "--metric",
            "twice",
            "--format",
            "csv",
        ]);
        assert_eq!(code, 0, "{m}: {err}");
        out
    };
    assert_eq!(run("Avg time/rank"), run("Avg time/rank (inc)"));
}
