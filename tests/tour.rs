//! The snapshot tour (issue 28): every panel at 80×24, 100×30 and 200×50, in colour
//! and with `--ascii` glyphs, on four kinds of input — a Kineto trace, a callgrind
//! profile, a Caliper ensemble and an OTF2 trace. A panel that does not apply to an
//! input shows its one-line message on the status line (the tree stays on screen):
//! that is part of the tour. One snapshot per input and panel, under
//! `snapshots/tour/`, holds its six screens (text plus the grid of theme roles).
//!
//! Rendering is off-screen (`common::screen`), no process spawned.

mod common;

use grove::app::panels::PanelId;
use grove::app::App;

use common::screen::{app_after, load, render};

const SIZES: [(u16, u16); 3] = [(80, 24), (100, 30), (200, 50)];

/// Each panel of the registry and the key script that opens it; the idle-gap list
/// (`gaps`) lives on the timeline, so it is the timeline with `I`.
fn panels() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = PanelId::all()
        .map(|p| (p.name().to_string(), format!(":panel {}<ret>", p.name())))
        .collect();
    let at = out.iter().position(|(n, _)| n == "timeline").unwrap() + 1;
    out.insert(at, ("gaps".into(), ":panel timeline<ret>I".into()));
    out
}

/// Every panel's six screens of one input (`file`, loaded afresh for each panel and
/// size: a profile is not `Clone`), each compared with its snapshot.
fn tour(input: &str, file: &str) {
    tour_of(input, &panels(), |script, size| {
        app_after(load(file), script, size)
    });
}

/// The six screens of each of `panels` (name, key script) on the app `make` opens
/// after a script at a size, one snapshot per panel.
fn tour_of(input: &str, panels: &[(String, String)], make: impl Fn(&str, (u16, u16)) -> App) {
    for (panel, script) in panels {
        let mut shown = String::new();
        for size in SIZES {
            let app = make(script, size);
            for ascii in [false, true] {
                let look = if ascii { "--ascii" } else { "colour" };
                shown.push_str(&format!(
                    "=== {}x{} {look} ===\nlog: {:?}\n{}",
                    size.0,
                    size.1,
                    app.log,
                    render(&app, size, false, ascii)
                ));
            }
        }
        insta::with_settings!({
            snapshot_path => "../snapshots/tour",
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("{input}, panel {panel}: {script}"),
        }, {
            insta::assert_snapshot!(format!("{input}_{panel}"), shown);
        });
    }
}

/// A corpus input, or None when the shared corpus is missing (the test then says it
/// is skipped: `skip!`).
fn corpus_input(rel: &str) -> Option<String> {
    common::corpus(rel).map(|p| p.display().to_string())
}

#[test]
fn tour_kineto_trace() {
    tour("kineto", "testdata/small.trace.json");
}

#[test]
fn tour_callgrind_profile() {
    tour("callgrind", "testdata/callgrind/rec.callgrind.out");
}

#[test]
fn tour_caliper_ensemble() {
    let Some(dir) = corpus_input("thicket/thicket/tests/data/mpi_scaling_cali") else {
        skip!()
    };
    tour("caliper_ensemble", &dir);
}

#[test]
fn tour_otf2_trace() {
    let Some(dir) = corpus_input("pipit/pipit/tests/data/ping-pong-otf2") else {
        skip!()
    };
    tour("otf2", &dir);
}

/// Two traces opened together (issue 28): the kernel panel with both members' rows,
/// the summary panel with both members' breakdowns, once their traces are read.
#[test]
fn tour_two_traces() {
    let dir = "hta/tests/data/trace_compare";
    let (Some(base), Some(test)) = (
        corpus_input(&format!("{dir}/base/base.json.gz")),
        corpus_input(&format!("{dir}/test/test.json.gz")),
    ) else {
        skip!()
    };
    let files: Vec<std::path::PathBuf> = [&base, &test].iter().map(Into::into).collect();
    let panels: Vec<(String, String)> = ["kernels", "summary"]
        .iter()
        .map(|p| (p.to_string(), format!(":panel {p}<ret>")))
        .collect();
    tour_of("two_traces", &panels, |script, size| {
        let p = load(&format!("{base},{test}"));
        let labels = grove::app::compare::member_labels(&p.metrics);
        let cats = grove::gpu::classify::Categories::builtin();
        let members = grove::app::members::load(&files, &labels, &cats).unwrap();
        let mut app = app_after(p, "", size);
        app.set_members(members);
        for key in grove::app::keys::Key::parse_seq(script).unwrap() {
            app.on_key(key);
        }
        app
    });
}
