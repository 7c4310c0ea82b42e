//! Sessions: `grove replay` (headless) and the shared part of `grove --replay` (reopen
//! a session's inputs, warn when they changed, run its commands).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{Format, Look, ReplayArgs, ReplayOpts};
use grove::export;
use grove::session;

use super::{input, look, output, Failure};

pub fn run(args: ReplayArgs, lk: &Look) -> Result<(), Failure> {
    let path = &args.session;
    let script = session::read(path)?;
    let mut app = open(
        path,
        &script,
        args.input.as_deref(),
        &args.opts,
        Keymap::default_map(),
    )?;
    replay_into(&mut app, path, &script, &args.opts)?;
    super::print_notes(&mut app);
    for c in &args.cmds {
        app.run(c)?;
        super::print_notes(&mut app);
    }
    let r = print_view(&app, args.format(), args.depth, args.raw, lk);
    super::leave(app);
    Ok(r?)
}

/// Opens the input a session names (or `input`), warning when it changed since.
pub fn open(
    path: &Path,
    script: &session::Script,
    input: Option<&Path>,
    opts: &ReplayOpts,
    keymap: Keymap,
) -> Result<App, Failure> {
    let all: Vec<session::Input> = script
        .header
        .as_ref()
        .map(|h| h.inputs.clone())
        .unwrap_or_default();
    if input.is_none() && all.len() > 1 {
        return open_ensemble(path, &all, opts, keymap);
    }
    let recorded = all.first().cloned();
    let file: Option<PathBuf> = match (input, &recorded) {
        (Some(i), _) => Some(i.to_path_buf()),
        (None, Some(r)) => Some(PathBuf::from(&r.path)),
        (None, None) => None,
    };
    let Some(file) = file else {
        // Sessions recorded on the embedded demo name no input.
        let mut app = App::with_categories(input::load(None)?, keymap, super::user_categories());
        if let Some(h) = &script.header {
            app.term = (h.term.cols, h.term.rows);
        }
        return Ok(app);
    };
    let mut warnings = Vec::new();
    if let Some(r) = &recorded {
        check_unchanged(path, &file, r, opts, &mut warnings)?;
    }
    let mut app = App::with_categories(input::load(Some(&file))?, keymap, super::user_categories());
    for w in warnings {
        eprintln!("grove: warning: {w}");
        app.message = Some(grove::app::Message {
            level: grove::app::Level::Warning,
            text: w.clone(),
            caret: None,
        });
        app.profile.warnings.push(w);
    }
    Ok(app)
}

/// Re-opens the several inputs a comparison session names, with their labels.
fn open_ensemble(
    path: &Path,
    inputs: &[session::Input],
    opts: &ReplayOpts,
    keymap: Keymap,
) -> Result<App, Failure> {
    let mut warnings = Vec::new();
    for r in inputs {
        check_unchanged(path, Path::new(&r.path), r, opts, &mut warnings)?;
    }
    let files: Vec<PathBuf> = inputs.iter().map(|i| (&i.path).into()).collect();
    // Labels go by position; a file of several profiles shifts the positions after
    // it, so then they go by file stem.
    let by_position = inputs.iter().all(|i| i.label.is_some());
    let given: HashMap<String, String> = inputs
        .iter()
        .enumerate()
        .filter_map(|(k, i)| {
            let key = if by_position {
                k.to_string()
            } else {
                let name = Path::new(&i.path).file_name()?.to_string_lossy();
                name.split('.').next().unwrap_or(&name).to_string()
            };
            Some((key, i.label.clone()?))
        })
        .collect();
    let mut p = input::load_ensemble(&files, &given)?;
    // Two profiles reopen as the TUI opened them: their steps aligned.
    if !opts.keep_steps {
        p = grove::diff::steps::align_pair(p).0;
    }
    let mut app = App::with_categories(p, keymap, super::user_categories());
    for w in warnings {
        eprintln!("grove: warning: {w}");
        app.profile.warnings.push(w);
    }
    Ok(app)
}

/// The "input changed" check: a finding (exit status 1) under `--strict`, else a
/// warning for later.
/// An input that cannot be hashed now is left to the loader to report.
fn check_unchanged(
    session_path: &Path,
    file: &Path,
    recorded: &session::Input,
    opts: &ReplayOpts,
    warnings: &mut Vec<String>,
) -> Result<(), Failure> {
    let Ok(now) = session::input_of(file) else {
        return Ok(());
    };
    if now.hash == recorded.hash {
        return Ok(());
    }
    let msg = format!(
        "{}: {} changed since the session was recorded (hash {} now {})",
        session_path.display(),
        file.display(),
        recorded.hash,
        now.hash
    );
    if opts.strict {
        return Err(Failure::finding(msg));
    }
    warnings.push(msg);
    Ok(())
}

/// Runs a session's commands, after printing the warnings its file raised.
pub fn replay_into(
    app: &mut App,
    path: &Path,
    script: &session::Script,
    opts: &ReplayOpts,
) -> Result<(), String> {
    for w in &script.warnings {
        eprintln!("grove: warning: {}: {w}", path.display());
    }
    app.run_script(script, &path.display().to_string(), opts.until)
        .map_err(|e| e.msg)
}

/// Prints the current view of an app (headless replay).
fn print_view(
    app: &App,
    format: Format,
    depth: Option<usize>,
    raw: bool,
    lk: &Look,
) -> Result<(), String> {
    output::binary_format_to_pipe(format)?;
    output::to_stdout(|out| match format {
        // An open `gaps` list is what the screen shows: print it instead of the tree.
        Format::Text if app.gaps_text().is_some() => {
            out.write_all(app.gaps_text().unwrap_or_default().as_bytes())
        }
        // A session that ends on the flame graph prints its rows, as wide as the panel
        // was on the recorded terminal.
        Format::Text if app.panel.is(&grove::app::panels::flame::Flame) => {
            let width = grove::ui::layout::panel_width(app, app.term.0).max(1);
            let text = grove::ui::panels::flame::text(app, width, &look::glyphs_of(lk));
            out.write_all(text.as_bytes())
        }
        Format::Text => {
            let positions = app.export_positions_to(depth);
            let inc = app.inclusive_column();
            let mut metrics = vec![inc.clone()];
            if inc != app.metric {
                metrics.push(app.metric.clone());
            }
            let opts = export::text::TextOptions {
                metrics: &metrics,
                precision: 3,
                legend: false,
                color: look::color_stdout(lk),
                expand_names: false,
                glyphs: look::glyphs_of(lk),
                sgr: look::sgr_of(lk),
                raw,
            };
            let text = export::text::render(
                &app.profile.cct,
                &app.profile.metrics,
                &app.tree.po,
                &positions,
                &opts,
            );
            out.write_all(text.as_bytes())
        }
        // Every other format is the table's tree writer.
        other => app.export_to_depth(other, out, depth),
    })
}
