//! Issue 28: names and labels told apart on screen, typing, the terminal's colours and
//! the command line. Screens are rendered into a TestBackend from the real keymap;
//! corpus cases skip when ../shared/corpus is missing.

mod common;

use std::path::{Path, PathBuf};

use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::App;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme};

use common::{corpus, grove, grove_env};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn app_of(paths: &[PathBuf]) -> App {
    let profile = grove::load::load_inputs(paths, &Default::default()).unwrap();
    App::new(profile, Keymap::default_map())
}

fn pair() -> App {
    app_of(&[
        repo("testdata/rank0.trace.json.gz"),
        repo("testdata/rank1.trace.json.gz"),
    ])
}

/// The screen after `script`, as text lines.
fn screen(app: &mut App, script: &str, size: (u16, u16), mono: bool) -> Vec<String> {
    app.page = tree_rows(size.0, size.1);
    for key in Key::parse_seq(script).unwrap() {
        app.on_key(key);
    }
    let theme = if mono {
        Theme::builtin("mono", ColorDepth::Never).unwrap()
    } else {
        Theme::builtin("default", ColorDepth::Ansi256).unwrap()
    };
    let buf = common::draw(app, size, &theme, &Glyphs::pick(false));
    common::screen_text(&buf)
        .lines()
        .map(String::from)
        .collect()
}

/// The status line after `script`.
fn status(app: &mut App, script: &str, size: (u16, u16)) -> String {
    screen(app, script, size, false)
        .last()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn otf2_lanes_name_their_rank() {
    // Two ranks, each a `Master thread`: the lanes read `CPU tMaster` twice before.
    let mut app = app_of(&[repo("testdata/otf2-async")]);
    let lines = screen(&mut app, ":lanes all<ret>4", (100, 14), false);
    // A lane's first row carries its label; its deeper rows are numbered.
    let lanes: Vec<String> = lines[3..]
        .iter()
        .map(|l| l.chars().take(11).collect::<String>())
        .filter(|l| l.starts_with('r'))
        .collect();
    assert_eq!(lanes, ["r0 tMaster ", "r1 tMaster "], "{lines:#?}");
}

#[test]
fn hpctoolkit_statistic_columns_differ() {
    let Some(db) = corpus("hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.d") else {
        skip!()
    };
    let mut app = app_of(&[db]);
    for width in [100, 200] {
        let lines = screen(&mut app, "", (width, 20), false);
        let header = &lines[2];
        // Inclusive and exclusive GPUOP@mean both read `GPUOP (se…@mean` before.
        assert!(header.matches("GPUOP (se…@mean").count() <= 1, "{header}");
    }
}

#[test]
fn two_traces_are_named_by_their_paths() {
    let (Some(a), Some(b)) = (
        corpus("hta/tests/data/trace_compare/base/base.json.gz"),
        corpus("hta/tests/data/trace_compare/test/test.json.gz"),
    ) else {
        skip!()
    };
    let mut app = app_of(&[a, b]);
    let members = grove::app::compare::member_labels(&app.profile.metrics);
    assert_eq!(members, ["base", "test"]);
    // `3` must not claim the pair has no GPU activity: both have kernels.
    let line = status(&mut app, "3", (160, 14));
    assert!(!line.contains("no GPU activity"), "{line}");
    assert!(line.contains("ensemble of 2"), "{line}");
}

#[test]
fn tab_quotes_a_metric_the_expression_would_not_read() {
    let mut app = pair();
    // `time (inc)@mean` has a space and an `@` after `(inc)`: quoted, it parses.
    let _ = screen(
        &mut app,
        ":derive s = \"time (inc)@me<Tab><ret>",
        (100, 20),
        false,
    );
    assert!(app.profile.metrics.has("s"), "{:?}", app.message);
    // Typed bare, Tab writes the quote itself.
    let _ = screen(
        &mut app,
        ":derive u = time (inc)@me<Tab><ret>",
        (100, 20),
        false,
    );
    let _ = screen(
        &mut app,
        ":derive v = Xtime<C-u>derive v = tim<Tab>",
        (100, 20),
        false,
    );
    // Tab extends the candidates' common prefix, then completes.
    let _ = screen(
        &mut app,
        "<Esc>:derive t = gpu_time@r<Tab>0<Tab><ret>",
        (100, 20),
        false,
    );
    assert!(app.profile.metrics.has("t"), "{:?}", app.message);
}

#[test]
fn names_are_cut_in_the_middle_like_grove_tree() {
    let mut app = pair();
    let lines = screen(&mut app, "", (100, 30), false);
    let names: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("▶ autograd:"))
        .map(|l| l.split('▶').nth(1).unwrap().split('│').next().unwrap())
        .collect();
    assert!(names.len() > 3, "{lines:#?}");
    let mut distinct = names.clone();
    distinct.sort_unstable();
    distinct.dedup();
    // At 100 columns every `autograd::engine::evaluat…` row read the same.
    assert!(distinct.len() > 3, "{names:#?}");
}

#[test]
fn keys_hide_the_details_pane_and_the_count_column() {
    let mut app = app_of(&[repo("testdata/small.trace.json")]);
    let before = screen(&mut app, "", (140, 20), false);
    assert!(before[2].contains("count"), "{}", before[2]);
    assert!(before[3].contains('│'));
    let after = screen(&mut app, "v#", (140, 20), false);
    assert!(!after[2].contains("count"), "{}", after[2]);
    assert!(!after[3].contains('│'), "{}", after[3]);
    let log: Vec<String> = app.log.iter().map(|c| c.to_string()).collect();
    assert_eq!(log, ["toggle-pane details", "toggle-pane count"]);
}

#[test]
fn help_pages_instead_of_closing() {
    let mut app = app_of(&[repo("testdata/small.trace.json")]);
    let top = screen(&mut app, "?", (80, 24), false);
    let paged = screen(&mut app, "<PageDown>", (80, 24), false);
    assert!(
        paged.iter().any(|l| l.contains("keys")),
        "the help closed: {paged:#?}"
    );
    assert_ne!(top, paged);
    let end = screen(&mut app, "G", (80, 24), false);
    assert!(end.iter().any(|l| l.contains("keys")), "{end:#?}");
    // `k` from the end moves up at once.
    let up = screen(&mut app, "k", (80, 24), false);
    assert_ne!(end, up);
}

#[test]
fn the_row_counter_is_the_panels_own() {
    let mut app = app_of(&[repo("testdata/small.trace.json")]);
    let tree = status(&mut app, "", (100, 20));
    let kernels = status(&mut app, "3jj", (100, 20));
    let n = app.kernels.rows.len();
    assert!(kernels.ends_with(&format!(" 3/{n}")), "{kernels}");
    assert_ne!(tree.rsplit(' ').next(), kernels.rsplit(' ').next());
}

#[test]
fn the_zscore_legend_says_so() {
    let mut app = pair();
    let lines = screen(&mut app, "2:heatmap norm zscore<ret>", (100, 20), false);
    let legend = &lines[lines.len() - 2];
    assert!(legend.contains("z-score"), "{legend}");
    assert!(legend.contains("≥2σ"), "{legend}");
}

#[test]
fn mono_heat_bins_are_told_apart_by_glyph() {
    let g = Glyphs::pick(false);
    let mut d = g.density.to_vec();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), 6);
}

#[test]
fn colour_depth_follows_the_terminal() {
    use ColorDepth::*;
    let d = ColorDepth::detect_from;
    assert_eq!(d(None, None, Some("screen"), Some(8)), Ansi8);
    assert_eq!(d(None, None, Some("screen"), None), Ansi8);
    assert_eq!(d(None, None, Some("xterm-256color"), None), Ansi256);
    assert_eq!(d(None, None, Some("linux"), Some(8)), Ansi8);
    assert_eq!(
        d(None, Some("truecolor"), Some("screen"), Some(8)),
        TrueColor
    );
    assert_eq!(d(Some("1"), None, Some("xterm-256color"), None), Never);
    let f = repo("testdata/small.trace.json");
    let f = f.to_str().unwrap();
    let tree = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["tree", f, "--depth", "2"];
        all.extend_from_slice(args);
        let (code, out, err) = grove_env(&all, env);
        assert_eq!(code, 0, "{err}");
        out
    };
    let sixteen = tree(&["--color", "16"], &[("NO_COLOR", "")]);
    assert!(
        sixteen.contains('\x1b') && !sixteen.contains("38;5;"),
        "{sixteen}"
    );
    let env = [
        ("NO_COLOR", ""),
        ("CLICOLOR_FORCE", "1"),
        ("TERM", "screen"),
        ("COLORTERM", ""),
    ];
    let eight = tree(&[], &env);
    assert!(
        eight.contains("\x1b[31m") && !eight.contains("38;5;"),
        "{eight}"
    );
    assert!(!eight.contains("\x1b[9"), "bright colours on 8: {eight}");
}

#[test]
fn subcommand_help_lists_only_what_it_accepts() {
    for sub in ["info", "kernels", "diff", "functions", "summary"] {
        let (_, out, _) = grove(&[sub, "--help"]);
        assert!(
            !out.contains("--et"),
            "grove {sub} --help lists --et:\n{out}"
        );
    }
    let (_, out, _) = grove(&["tree", "--help"]);
    assert!(out.contains("--et"), "{out}");
}

#[test]
fn an_et_beside_a_kineto_trace_is_attached() {
    let dir = std::env::temp_dir().join(format!("grove-labels-et-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("run.kineto.json");
    std::fs::copy(repo("testdata/et/chakra_small_trace.json"), &trace).unwrap();
    std::fs::copy(
        repo("testdata/et/chakra_small_et.json"),
        dir.join("run.et.json"),
    )
    .unwrap();
    let p = grove::load::load_inputs(&[trace], &Default::default()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(p.meta_value("et.file"), Some("run.et.json"));
}

#[test]
fn inputs_are_named_for_what_they_are() {
    let dir = std::env::temp_dir().join(format!("grove-labels-what-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nsys = dir.join("empty.sqlite");
    let c = rusqlite::Connection::open(&nsys).unwrap();
    c.execute_batch(
        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT); CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT);",
    )
    .unwrap();
    drop(c);
    let perf = dir.join("perf.data");
    std::fs::write(
        &perf,
        b"PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02",
    )
    .unwrap();
    let info = |p: &Path| grove(&["info", p.to_str().unwrap()]).2;
    let e = info(&nsys);
    assert!(
        e.contains("an Nsight Systems export without event tables"),
        "{e}"
    );
    let e = info(&perf);
    // With perf on PATH grove runs `perf script` on it and passes perf's refusal on.
    assert!(
        e.contains("a perf.data recording") || e.contains("perf script"),
        "{e}"
    );
    if let Some(y) = corpus("hpctoolkit/tests/data/dbase/small.d/metrics/default.yaml") {
        let e = info(&y);
        assert!(e.contains("HPCToolkit metrics description"), "{e}");
    }
    // `grove kernels` says the same of every input without kernels, and exits 0.
    let cg = repo("testdata/callgrind/rec.callgrind.out");
    let (code, _, err) = grove(&["kernels", cg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no GPU kernels"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_members_sort_naturally_and_info_stays_bounded() {
    let dir = std::env::temp_dir().join(format!("grove-labels-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let small = repo("testdata/small.trace.json");
    let (code, _, err) = grove(&[
        "summarize",
        small.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--name",
        "r1",
    ]);
    assert_eq!(code, 0, "{err}");
    // A summary is several files (`r1.cct.parquet`, `r1.meta.parquet`, ...).
    let parts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("r1."))
        .collect();
    for i in 2..=30 {
        for p in &parts {
            let to = format!("r{i}.{}", &p[3..]);
            std::fs::copy(dir.join(p), dir.join(to)).unwrap();
        }
    }
    let (code, out, err) = grove(&["info", dir.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{err}");
    let members: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "members:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    // r1, r2, ..., r10: not r1, r10, r11, ...; the middle elided.
    assert_eq!(&members[..4], ["r1", "r2", "r3", "r4"], "{out}");
    assert!(members.len() <= 21, "{out}");
    assert!(out.contains("… 10 more"), "{out}");
    assert!(out.lines().all(|l| l.len() < 400), "{out}");
}

#[test]
fn an_ensembles_base_metric_is_its_mean() {
    let r0 = repo("testdata/rank0.trace.json.gz");
    let r1 = repo("testdata/rank1.trace.json.gz");
    let (code, out, err) = grove(&[
        "tree",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        "--metric",
        "gpu_time",
        "--depth",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gpu_time@mean"), "{out}");
    assert!(err.contains("`gpu_time@mean`"), "{err}");
}
