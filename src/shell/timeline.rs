//! `grove timeline`: the timeline panel's stack chart as text, or the slices in its
//! window as CSV, drawn by the same code as the panel (`ui::panels::timeline`).

use grove::app::command::{format_time, quote};
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{Format, Look, TimelineArgs, Writes};
use grove::export::formats::refusal;
use grove::readers::select::{self, Part};

use super::{input, look, output};

pub fn run(args: TimelineArgs, window: Option<String>, lk: &Look) -> Result<(), String> {
    // `--window` here is the window shown, not a part to load: the whole trace loads,
    // so the window counts from the trace's own start.
    select::set(None);
    if window.is_some() && args.step.is_some() {
        return Err("--window and --step each choose the window; give one".into());
    }
    let file = args.files[0].display().to_string();
    let p = if args.files.len() == 1 && !args.files[0].is_dir() {
        input::load_warning(&args.files[0])?
    } else {
        input::load_warning_all(&args.files)?
    };
    if p.events.as_ref().is_some_and(|e| e.lod.is_some()) {
        return Err(format!(
            "{file}: low-memory mode keeps no single events to draw"
        ));
    }
    let mut app = App::with_categories(p, Keymap::default_map(), super::user_categories());
    let fail = |e: String| format!("{file}: {e}");
    app.run("panel timeline").map_err(fail)?;
    match args.lanes.as_deref().unwrap_or("gpu") {
        "gpu" => {}
        "all" => app.run("lanes all").map_err(fail)?,
        "cpu" => {
            app.run("lanes all").map_err(fail)?;
            app.keep_lanes(|_, gpu| !gpu).map_err(|e| fail(e.msg))?;
        }
        list => {
            let want: Vec<&str> = list.split(',').map(str::trim).collect();
            app.run("lanes all").map_err(fail)?;
            app.keep_lanes(|label, _| want.contains(&label))
                .map_err(|e| fail(e.msg))?;
        }
    }
    if let Some(w) = window {
        let Part::Window(a, b) = select::parse_window(&w)? else {
            return Err(format!("--window {w:?}: expected START-END"));
        };
        app.run(&format!("zoom {} {}", format_time(a), format_time(b)))
            .map_err(fail)?;
    }
    if let Some(n) = args.step {
        app.run(&format!("timeline step {n}")).map_err(fail)?;
    }
    if let Some(path) = &args.mark {
        app.run(&format!("timeline mark {}", quote(path)))
            .map_err(fail)?;
    }
    super::print_notes(&mut app);
    let g = look::glyphs_of(lk);
    let text = match args.format {
        Format::Csv => grove::ui::panels::timeline::csv(&app),
        Format::Text => grove::ui::panels::timeline::text(&app, args.width, &g),
        // Listed, not `_`: a new format is a compile error here until the timeline says
        // whether it writes it. `--format`'s parser refuses these already.
        f @ (Format::Json
        | Format::Parquet
        | Format::Hatchet
        | Format::Folded
        | Format::Thicket
        | Format::Svg) => return Err(refusal(f, Writes::Events)),
    };
    super::leave(app);
    output::text(&text)
}
