//! `grove tree`: the calling context tree as text, JSON, CSV, Hatchet or Parquet.

use std::io::{self, IsTerminal, Write};

use grove::app::command::ExportFormat;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{Look, TreeArgs, TreeFormat};
use grove::export;
use grove::ui::theme::ColorDepth;

use super::{input, look, output};

pub fn run(args: TreeArgs, labels: Option<&str>, lk: &Look) -> Result<(), String> {
    let file = args.files[0].clone();
    let p = input::load_inputs(&args.files, labels)?;
    let mut app = App::with_categories(p, Keymap::default_map(), super::user_categories());
    // Hatchet prints children in data order; --cmd may re-sort.
    app.use_data_order();
    for c in &args.cmds {
        app.run(c)?;
    }
    let metrics: Vec<String> = match &args.metric {
        Some(m) => m.split(',').map(|s| s.trim().to_string()).collect(),
        None => vec![app.profile.default_metric.clone()],
    };
    for m in &metrics {
        if !app.profile.metrics.has(m) {
            return Err(format!(
                "{}: unknown metric {m:?} (metrics: {})",
                file.display(),
                app.profile.metrics.names().join(", ")
            ));
        }
    }
    let depth = args.depth;
    if args.format == TreeFormat::Parquet {
        output::binary_to_pipe()?;
    }
    let r = output::to_stdout(|out| match args.format {
        TreeFormat::Text => {
            let color = io::stdout().is_terminal() && look::depth_of(lk) != ColorDepth::Never;
            let opts = export::text::TextOptions {
                metrics: &metrics,
                precision: args.precision,
                legend: !args.no_legend,
                color,
                expand_names: args.expand_names,
                glyphs: look::glyphs_of(lk),
            };
            let positions = app.export_positions_to(depth);
            let text = export::text::render(
                &app.profile.cct,
                &app.profile.metrics,
                &app.tree.po,
                &positions,
                &opts,
            );
            out.write_all(text.as_bytes())
        }
        TreeFormat::Json => app.export_to_depth(ExportFormat::Json, out, depth),
        TreeFormat::Csv => app.export_to_depth(ExportFormat::Csv, out, depth),
        TreeFormat::Hatchet => app.export_to_depth(ExportFormat::Hatchet, out, depth),
        TreeFormat::Parquet => app.export_to_depth(ExportFormat::Parquet, out, depth),
    });
    super::leave(app);
    r
}
