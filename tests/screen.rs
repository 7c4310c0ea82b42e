//! Issue 13, "the screen" and "headless output": cut names end in an ellipsis and
//! kernel names stay distinct, an ASCII screen is ASCII to the last byte, the help
//! overlay uses the width it has, H and the second metric follow the primary metric,
//! `%` only for additive metrics, messages are never lost, typos get a suggestion, and
//! `grove tree` prints units and a header (with `--raw` for Hatchet's exact numbers).

mod common;

use std::path::Path;

use common::grove;
use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::App;
use grove::load::load_path;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme};

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
        .display()
        .to_string()
}

fn app_for(file: &str) -> App {
    let paths: Vec<std::path::PathBuf> = file.split(',').map(|f| data(f).into()).collect();
    let p = if paths.len() > 1 {
        grove::load::load_ensemble(&paths, &Default::default()).unwrap()
    } else {
        load_path(&paths[0]).unwrap()
    };
    App::new(p, Keymap::default_map())
}

fn keys(app: &mut App, script: &str) {
    for k in Key::parse_seq(script).unwrap() {
        app.on_key(k);
    }
}

/// The screen's text, lines trimmed at the right.
fn render(app: &App, size: (u16, u16), ascii: bool) -> String {
    let theme = Theme::builtin("mono", ColorDepth::Never).unwrap();
    common::screen_text(&common::draw(app, size, &theme, &Glyphs::pick(ascii)))
}

fn screen(file: &str, script: &str, size: (u16, u16), ascii: bool) -> String {
    let mut app = app_for(file);
    app.page = tree_rows(size.0, size.1);
    keys(&mut app, script);
    format!(
        "script: {script}\nlog: {:?}\n{}",
        app.log,
        render(&app, size, ascii)
    )
}

fn check(name: &str, s: String) {
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, s);
    });
}

/// Every panel, overlay and prompt under `--ascii`: not one byte above 127, at two
/// sizes, single profile and ensemble, with a load warning on the status line.
#[test]
fn ascii_screens_are_ascii_to_the_last_byte() {
    let scripts = [
        "",
        "E",
        "1E",
        "2",
        "3",
        "3jj<ret>",
        "3c",
        "4",
        "4+n",
        "4c",
        "5",
        "?",
        "?jjjj",
        "m",
        "!",
        ":so",
        ":frobnicate<ret>",
        "/aten<ret>",
        "H",
        ":prune time (inc) < 50us<ret>E",
    ];
    for file in [
        "small.trace.json",
        "unknown_category.trace.json",
        "rank0.trace.json.gz,rank1.trace.json.gz",
    ] {
        for size in [(120, 36), (220, 40), (60, 14)] {
            for script in scripts {
                let text = screen(file, script, size, true);
                if let Some((i, c)) = text.char_indices().find(|(_, c)| !c.is_ascii()) {
                    let line = text[..i].lines().count();
                    panic!("{file} {script:?} {size:?}: {c:?} on line {line}:\n{text}");
                }
            }
        }
    }
}

#[test]
fn cut_names_end_in_an_ellipsis() {
    // Cut in the middle, like `grove tree` (issue 28): the start and the end stay.
    let text = screen("small.trace.json", "E", (120, 30), false);
    assert!(text.contains("nn.Module…rBlock_0│"), "{text}");
    let text = screen("small.trace.json", "E", (120, 30), true);
    assert!(text.contains("nn.Module~rBlock_0|"), "{text}");
}

/// The kernel panel at 220 columns: the two `vectorized_elementwise_kernel` rows
/// keep the template arguments that tell them apart.
#[test]
fn kernel_names_stay_distinct() {
    let s = screen("small.trace.json", "3", (220, 24), false);
    let rows: Vec<String> = s
        .lines()
        .filter(|l| l.starts_with("vectori"))
        // The name column: a third of the width.
        .map(|l| l.chars().take(73).collect::<String>())
        .collect();
    assert!(rows.len() >= 2, "{s}");
    let mut distinct = rows.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), rows.len(), "{rows:?}");
    check("screen_kernels_wide", s);
    // At the default width the distinguishing part comes before the cut.
    check(
        "screen_kernels_narrow",
        screen("small.trace.json", "3", (100, 24), false),
    );
}

#[test]
fn help_uses_the_width_and_scrolls() {
    let wide = screen("small.trace.json", "?", (200, 30), false);
    // Wider than the old fixed 78 columns: the frame spans the screen.
    let top = wide.lines().nth(3).unwrap();
    assert!(top.chars().count() > 150, "{top}");
    check("screen_help_wide", wide);
    let narrow = screen("small.trace.json", "?jjjjjjjjjj", (70, 20), false);
    check("screen_help_scrolled", narrow);
}

#[test]
fn hot_path_from_a_root_follows_the_hottest_root() {
    let mut app = app_for("small.trace.json");
    app.run("metric gpu_time").unwrap();
    // The second metric was gpu_time: it is never the primary.
    assert_ne!(app.metric2.as_deref(), Some("gpu_time"));
    // Onto the second root (the cooler one), then H.
    keys(&mut app, "]H");
    let hot = app.log.last().unwrap().clone();
    assert_eq!(hot, "hot-path \"python (main thread)\"", "{:?}", app.log);
    // A root named explicitly is followed as named.
    app.run("hot-path \"<unattributed> stream 7\"").unwrap();
    assert!(app.log.last().unwrap().contains("stream 7"));
    // Naming the primary as second metric is refused; cycling steps over it.
    assert!(app.run("metric2 gpu_time").is_err());
    for _ in 0..5 {
        app.run("metric2 next").unwrap();
        assert_ne!(app.metric2.as_deref(), Some("gpu_time"));
    }
    check(
        "screen_metric_then_hot_path",
        screen(
            "small.trace.json",
            ":metric gpu_time<ret>]H",
            (120, 30),
            false,
        ),
    );
}

#[test]
fn percent_only_for_additive_metrics() {
    let mut app = app_for("small.trace.json");
    assert!(app.is_additive("time (inc)"));
    app.run("derive share = gpu_time / (time + 1)").unwrap();
    app.run("derive both = gpu_time + time").unwrap();
    assert!(!app.is_additive("share (inc)"));
    assert!(!app.is_additive("share"));
    assert!(app.is_additive("both (inc)"));
    app.run("metric share").unwrap();
    let text = render(&app, (120, 20), false);
    let root = text
        .lines()
        .find(|l| l.contains("python (main thread)"))
        .unwrap();
    assert!(!root.contains('%'), "{root}");
}

#[test]
fn messages_are_listed_in_full_and_cut_ones_say_so() {
    // A load warning too long for 80 columns: cut, with the key that lists it.
    let s = screen("unknown_category.trace.json", "", (80, 20), false);
    let status = s.lines().nth(21).unwrap();
    assert!(status.contains("… (!: all messages)"), "{status}");
    check("screen_status_cut", s);
    let s = screen("unknown_category.trace.json", "!", (80, 20), false);
    assert!(s.contains("mtia_insight"), "{s}");
    check("screen_messages", s);
    // A command error after start-up is listed too.
    let mut app = app_for("small.trace.json");
    keys(&mut app, ":difff<ret>");
    assert_eq!(app.past_messages.len(), 1);
    keys(&mut app, "!");
    let text = render(&app, (100, 20), false);
    assert!(text.contains("did you mean \"diff\"?"), "{text}");
}

#[test]
fn typos_get_a_suggestion() {
    let mut app = app_for("small.trace.json");
    let e = app.run("difff").unwrap_err();
    assert!(
        e.contains("unknown command \"difff\"; did you mean \"diff\"?"),
        "{e}"
    );
    let e = app.run("metric gpu_tme").unwrap_err();
    assert!(e.contains("did you mean \"gpu_time\"?"), "{e}");
    let e = app.run("sotr name").unwrap_err();
    assert!(e.contains("did you mean \"sort\"?"), "{e}");
    check(
        "screen_did_you_mean",
        screen("small.trace.json", ":difff<ret>", (100, 16), false),
    );
    let (code, _, err) = grove(&["tree", &data("small.trace.json"), "--metric", "gpu_tme"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean \"gpu_time\"?"), "{err}");
}

#[test]
fn headless_tree_has_units_and_a_header() {
    let f = data("small.trace.json");
    let (code, out, err) = grove(&["tree", &f, "--depth", "1", "--ascii"]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap();
    assert_eq!(first, "time  name");
    assert!(out.contains("us  ProfilerStep#2"), "{out}");
    assert!(!out.contains(".000"), "{out}");
    check("screen_tree_human", out);
    // --raw is Hatchet's text as before: raw numbers, no header.
    let (code, raw, _) = grove(&["tree", &f, "--depth", "1", "--ascii", "--raw"]);
    assert_eq!(code, 0);
    assert!(
        raw.lines()
            .next()
            .unwrap()
            .ends_with(".000 python (main thread)"),
        "{raw}"
    );
    // --precision implies raw.
    let (_, p2, _) = grove(&["tree", &f, "--depth", "1", "--ascii", "--precision", "2"]);
    assert!(p2.lines().next().unwrap().contains(".00 python"), "{p2}");
}

#[test]
fn replay_prints_units_and_raw_on_request() {
    let dir = std::env::temp_dir().join(format!("grove-screen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("s.grove");
    std::fs::write(&s, "metric gpu_time\n").unwrap();
    let f = data("small.trace.json");
    let args = ["replay", s.to_str().unwrap(), "--input", &f, "--depth", "0"];
    let (code, out, err) = grove(&[&args[..], &["--print", "tree"]].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().next().unwrap(),
        "gpu_time (inc)  gpu_time  name"
    );
    assert!(out.contains(" ms  "), "{out}");
    let (code, raw, err) = grove(&[&args[..], &["--print", "tree", "--raw"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(!raw.contains("name"), "{raw}");
    assert!(raw.contains(".000 "), "{raw}");
}

/// Where `H` stops: at a node whose self value exceeds its heaviest child (issue 24),
/// and the status line says so.
fn hot_path_stop(app: &mut App) -> (u32, String) {
    keys(app, "H");
    let n = app.tree.selected().unwrap();
    (n, app.message.as_ref().unwrap().text.clone())
}

#[test]
fn hot_path_stops_where_the_self_value_outweighs_the_heaviest_child() {
    // A callgrind run: `H` used to end on `malloc` (3.2%) under `leaf`, whose own
    // instructions are 93% of it.
    let mut app = app_for("callgrind/rec.callgrind.out");
    let (n, msg) = hot_path_stop(&mut app);
    let m = &app.profile.metrics;
    let inc = m.values(&app.inclusive_column()).unwrap();
    let exc = m.values(&app.metric).unwrap();
    let heaviest = app
        .tree
        .children(n)
        .into_iter()
        .map(|c| inc[c as usize])
        .fold(0f64, f64::max);
    let name = app.profile.cct.name(n).to_string();
    assert!(
        msg.starts_with(&format!("hot path: stopped at {name}: ")),
        "{msg}"
    );
    assert!(!app.tree.children(n).is_empty(), "{msg}");
    assert!(exc[n as usize] > heaviest, "{msg}");
    assert!(msg.contains("> heaviest child"), "{msg}");
    assert_eq!(name, "leaf");
    // Every node on the way had a child that outweighed its self value.
    let mut up = app.tree.parent(n);
    while let Some(p) = up {
        let best = app
            .tree
            .children(p)
            .into_iter()
            .map(|c| inc[c as usize])
            .fold(0f64, f64::max);
        assert!(exc[p as usize] <= best, "{}", app.profile.cct.name(p));
        up = app.tree.parent(p);
    }
}

#[test]
fn hot_path_on_a_pytorch_trace_stops_at_the_op_that_spends_the_time() {
    let Some(f) =
        common::corpus("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
    else {
        skip!()
    };
    let mut app = App::new(load_path(&f).unwrap(), Keymap::default_map());
    let (n, msg) = hot_path_stop(&mut app);
    assert!(msg.contains("self") || msg.ends_with("a leaf"), "{msg}");
    eprintln!("{msg} ({})", app.path_of(n));
}

/// A load warning that hides more than 10% of the file's data stays in the header
/// (issue 24), at every width, not only on the first status line.
#[test]
fn the_header_shows_a_warning_that_hides_data() {
    let dir = std::env::temp_dir().join(format!("grove-hidden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("half.txt");
    std::fs::write(
        &f,
        "main;a 3\nmain;b 2\nmain;c 1\nstray line\nmain;d 1\nmain;e 1\n",
    )
    .unwrap();
    let mut app = App::new(load_path(&f).unwrap(), Keymap::default_map());
    for (w, h) in [(120, 20), (50, 20)] {
        app.page = tree_rows(w, h);
        let text = render(&app, (w, h), false);
        let header = text.lines().next().unwrap();
        assert!(header.contains("16.7% of data hidden (!)"), "{w}: {header}");
    }
    // A file whose warnings hide nothing has no such mark.
    let app = app_for("small.trace.json");
    assert!(!render(&app, (120, 20), false)
        .lines()
        .next()
        .unwrap()
        .contains("hidden"));
}
