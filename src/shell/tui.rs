//! `grove [FILES]`: the interactive explorer. Everything that can fail is loaded and
//! checked before the terminal is touched, so errors print normally.

use std::io::{self, IsTerminal};

use grove::app::background::Pending;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::Cli;
use grove::load::Cached;
use grove::readers::progress::Progress;
use grove::session;
use grove::tui::Waited;
use ratatui::crossterm::event::KeyEvent;

use super::{input, look, replay, Failure};

pub fn run(cli: Cli) -> Result<(), Failure> {
    // Configuration the TUI reads (theme, glyphs, keymap) is resolved here, once.
    let theme = look::theme_of(&cli.look)?;
    // crossterm silently drops every colour under NO_COLOR; an explicit --color
    // overrides that, as the user asked for colour.
    if look::forced(&cli.look) {
        ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
    }
    let glyphs = look::glyphs_of(&cli.look);
    let keymap = Keymap::load(cli.keymap.as_deref())?;
    let replay = match &cli.replay {
        Some(p) => Some((p.clone(), session::read(p)?)),
        None => None,
    };
    // Keys typed on the loading screen, run once the tree is up.
    let mut typed = Vec::new();
    let mut app = match &replay {
        Some((path, script)) => replay::open(
            path,
            script,
            cli.files.first().map(|f| f.as_path()),
            &cli.replay_opts,
            keymap,
        )?,
        None => {
            let (mut c, keys) = load_with_screen(&cli, &theme)?;
            typed = keys;
            // Two runs side by side: their steps aligned as `grove diff` aligns them.
            let mut merged = 0;
            if !cli.keep_steps {
                (c.profile, merged) = grove::diff::steps::align_pair(c.profile);
            }
            // The tree shows as soon as it is built: the GPU index of a cold load's
            // events is built behind it, and a warm one's events load behind it.
            // An ensemble of a few traces reads its members' own traces behind the tree
            // too (its merged events are the timeline's), for the kernel and summary
            // panels.
            let plan = grove::app::members::Plan::of(cli.files.clone(), &c.profile);
            let behind = match (c.warm, c.store.take()) {
                (Some(path), _) => Some(Pending::full_load(path, super::user_categories())),
                (None, Some(f)) => {
                    let store = grove::load::store_later(f, &c.profile);
                    Pending::index_and_members(
                        &mut c.profile,
                        super::user_categories(),
                        store,
                        plan,
                    )
                }
                (None, None) if c.profile.events.is_some() => Pending::index_and_members(
                    &mut c.profile,
                    super::user_categories(),
                    || None,
                    plan,
                ),
                (None, None) => {
                    Pending::members(cli.files.clone(), &c.profile, super::user_categories())
                }
            };
            let mut app = App::with_categories(c.profile, keymap, super::user_categories());
            app.background = behind;
            if merged > 0 {
                let text = grove::diff::steps::merged_note(merged);
                if app.message.is_none() {
                    app.message = Some(grove::app::Message {
                        level: grove::app::Level::Info,
                        text,
                        caret: None,
                    });
                } else {
                    // A load warning keeps the status line; the note waits under `!`.
                    app.past_messages.push(text);
                }
            }
            if let Some(w) = c.cache_warning {
                if app.message.is_none() {
                    app.message = Some(grove::app::Message {
                        level: grove::app::Level::Warning,
                        text: w,
                        caret: None,
                    });
                }
            }
            app
        }
    };
    if !io::stdout().is_terminal() {
        return Err(
            "the TUI needs a terminal; use `grove tree FILE` or `grove replay` for text output"
                .into(),
        );
    }
    if let Ok((cols, rows)) = ratatui::crossterm::terminal::size() {
        app.term = (cols, rows);
    }
    app.log_nav = cli.log_nav;
    if !cli.no_session {
        let path = match &cli.session {
            Some(p) => Some(p.clone()),
            None => session::default_path(&app.profile.source.label),
        };
        if let Some(path) = path {
            // The file is created with the first logged command: a run that changes
            // nothing leaves none behind. A file another grove holds is refused now.
            session::Writer::check_free(&path)
                .map_err(|e| format!("session file {}: {e}", path.display()))?;
            app.session = Some(session::Writer::lazy(&path, &app.session_header()));
        }
    }
    if let Some((path, script)) = &replay {
        replay::replay_into(&mut app, path, script, &cli.replay_opts)?;
    }
    // Start-up commands run as they would on a full load (`--cmd "kernels by mean"`
    // needs the GPU index): they wait for what loads behind the tree.
    if !cli.cmds.is_empty() {
        while app.loading() {
            if !app.poll_background() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
    for c in &cli.cmds {
        app.run(c)?;
    }
    let opts = grove::tui::Options {
        sync_output: !cli.no_sync,
        typed,
    };
    grove::tui::run(&mut app, &theme, &glyphs, &opts).map_err(|e| {
        grove::tui::emergency_restore();
        Failure::from(e.to_string())
    })
}

/// The inputs, loaded on a thread while the terminal shows the loading screen
/// (`grove::tui::wait_for_load`); without a terminal, loaded here (the TUI then
/// refuses to start). `q` or Esc cancels with exit status 0, Ctrl-C with 130.
fn load_with_screen(
    cli: &Cli,
    theme: &grove::ui::theme::Theme,
) -> Result<(Cached, Vec<KeyEvent>), Failure> {
    let load = {
        let (files, label, et) = (cli.files.clone(), cli.label.clone(), cli.et.clone());
        let use_cache = !cli.no_cache;
        move || input::load_inputs_cached(&files, label.as_deref(), et.as_deref(), use_cache)
    };
    if !io::stdout().is_terminal() {
        return Ok((load()?, Vec::new()));
    }
    // The cache entry of a cold load is written behind the first frame.
    grove::load::defer_cache_store(true);
    let progress = Progress::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let attached = progress.clone();
    std::thread::Builder::new()
        .name("load".into())
        // As much stack as the main thread has, which loads did not outgrow.
        .stack_size(8 << 20)
        .spawn(move || {
            let _a = grove::readers::progress::attach(attached);
            // After a cancel nobody listens any more.
            let _ = tx.send(load());
        })
        .map_err(|e| Failure::from(format!("cannot start loading: {e}")))?;
    let file = match &cli.files[..] {
        [] => "the demo".to_string(),
        [f] => f.display().to_string(),
        fs => format!("{} inputs", fs.len()),
    };
    let opts = grove::tui::Options {
        sync_output: !cli.no_sync,
        typed: Vec::new(),
    };
    match grove::tui::wait_for_load(&rx, &progress, &file, theme, &opts) {
        Ok(Waited::Done(r, typed)) => Ok((r?, typed)),
        Ok(Waited::Cancelled { interrupt }) => Err(Failure {
            message: format!("loading {file} cancelled"),
            status: if interrupt { 130 } else { 0 },
        }),
        Err(e) => {
            grove::tui::emergency_restore();
            Err(Failure::from(e.to_string()))
        }
    }
}
