//! `grove tree`: the calling context tree as text, JSON, CSV, Hatchet, Parquet or
//! folded stacks.

use std::io::Write;

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{Format, Look, TreeArgs};
use grove::export;

use super::{input, look, output};

pub fn run(
    et: Option<std::path::PathBuf>,
    args: TreeArgs,
    labels: Option<&str>,
    lk: &Look,
    use_cache: bool,
) -> Result<(), String> {
    let file = args.files[0].clone();
    // Refused before loading: the answer does not depend on the input, and a load's
    // warnings would bury the one line that says what to do.
    output::binary_format_to_pipe(args.format)?;
    // The tree needs no event table, so a cached tree is all it reads.
    let mut p = input::load_inputs_cached(&args.files, labels, et.as_deref(), use_cache)?.profile;
    if args.inverted {
        p = grove::transform::invert::invert_profile(p)
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    // Hatchet prints children in data order; --cmd may re-sort. The GPU index is
    // built only for a command (`App::headless`).
    let mut app = App::headless(p, Keymap::default_map(), super::user_categories());
    for c in &args.cmds {
        app.run(c)?;
        super::print_notes(&mut app);
    }
    let asked: Vec<String> = match &args.metric {
        Some(m) => m.split(',').map(|s| s.trim().to_string()).collect(),
        // The bottom-up tree's figure is a node's inclusive value.
        None if args.inverted => vec![app
            .profile
            .metrics
            .inclusive_of(&app.profile.default_metric)],
        None => vec![app.profile.default_metric.clone()],
    };
    let mut metrics = Vec::new();
    for m in &asked {
        // Hatchet's names work too (`Avg time/rank`), with a note of grove's.
        let Some(col) = app.profile.metrics.resolve(m) else {
            let names = app.profile.metrics.names();
            let hint = grove::present::suggest::did_you_mean(m, names.iter().map(String::as_str));
            return Err(format!(
                "{}: unknown metric {m:?}{hint} (metrics: {})",
                file.display(),
                names.join(", ")
            ));
        };
        if let Some(note) = app.profile.metrics.alias_note(m) {
            eprintln!("grove: warning: {note}");
        }
        metrics.push(col);
    }
    let depth = args.depth;
    let r = output::to_stdout(|out| match args.format {
        // `--cmd gaps` opens the idle-gap list; print it as the TUI would show it.
        Format::Text if app.gaps_text().is_some() => {
            out.write_all(app.gaps_text().unwrap_or_default().as_bytes())
        }
        // `--cmd "panel flame"` shows the flame graph: print its rows as text.
        Format::Text if app.panel.is(&grove::app::panels::flame::Flame) => {
            let width = args.width.unwrap_or(80).max(1);
            if app.profile.estimated_paths() {
                writeln!(out, "({})", grove::model::call_graph::ESTIMATED_NOTE)?;
            }
            let text = grove::ui::panels::flame::text(&app, width, &look::glyphs_of(lk));
            out.write_all(text.as_bytes())
        }
        Format::Text => {
            let color = look::color_stdout(lk);
            let opts = export::text::TextOptions {
                metrics: &metrics,
                precision: args.precision.unwrap_or(3),
                legend: !args.no_legend,
                color,
                expand_names: args.expand_names,
                glyphs: look::glyphs_of(lk),
                sgr: look::sgr_of(lk),
                raw: args.raw || args.precision.is_some(),
            };
            let positions = app.export_positions_to(depth);
            if app.profile.estimated_paths() {
                writeln!(out, "({})", grove::model::call_graph::ESTIMATED_NOTE)?;
            }
            export::text::render_to(
                out,
                &app.profile.cct,
                &app.profile.metrics,
                &app.tree.po,
                &positions,
                &opts,
            )
        }
        // Every other format is the table's tree writer.
        other => app.export_to_depth(other, out, depth),
    });
    super::leave(app);
    r
}
