//! `grove [FILES]`: the interactive explorer. Everything that can fail is loaded and
//! checked before the terminal is touched, so errors print normally.

use std::io::{self, IsTerminal};

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::Cli;
use grove::session;

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
    let mut app = match &replay {
        Some((path, script)) => replay::open(
            path,
            script,
            cli.files.first().map(|f| f.as_path()),
            &cli.replay_opts,
            keymap,
        )?,
        None => App::with_categories(
            input::load_inputs_et(&cli.files, cli.label.as_deref(), cli.et.as_deref())?,
            keymap,
            super::user_categories(),
        ),
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
            let w = session::Writer::create(&path, &app.session_header())
                .map_err(|e| format!("session file {}: {e}", path.display()))?;
            app.session = Some(w);
        }
    }
    if let Some((path, script)) = &replay {
        replay::replay_into(&mut app, path, script, &cli.replay_opts)?;
    }
    for c in &cli.cmds {
        app.run(c)?;
    }
    let opts = grove::tui::Options {
        sync_output: !cli.no_sync,
    };
    grove::tui::run(&mut app, &theme, &glyphs, &opts).map_err(|e| {
        grove::tui::emergency_restore();
        Failure::from(e.to_string())
    })
}
