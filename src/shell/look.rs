//! How output looks: colour depth, theme and glyphs from the `--color`, `--theme` and
//! `--ascii` flags, and whether headless text is coloured.

use std::io::{self, IsTerminal};

use grove::cli::{ColorArg, Look};
use grove::ui::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};

pub fn depth_of(look: &Look) -> ColorDepth {
    match look.color {
        ColorArg::Auto => ColorDepth::detect(),
        ColorArg::Always => forced_depth(),
        ColorArg::Never => ColorDepth::Never,
        ColorArg::C8 => ColorDepth::Ansi8,
        ColorArg::C16 => ColorDepth::Ansi16,
        ColorArg::C256 => ColorDepth::Ansi256,
        ColorArg::Truecolor => ColorDepth::TrueColor,
    }
}

/// The depth for `--color always`: what the terminal says, NO_COLOR and TERM=dumb
/// notwithstanding (the user asked for colour).
fn forced_depth() -> ColorDepth {
    let var = |k: &str| std::env::var(k).ok();
    let term = var("TERM");
    // What the terminal can show, less NO_COLOR; a dumb one gets the 256 colours asked.
    match ColorDepth::detect_from(None, var("COLORTERM").as_deref(), term.as_deref(), None) {
        ColorDepth::Never => ColorDepth::Ansi256,
        d => d,
    }
}

/// Whether an explicit `--color` (always or a depth) asks for colour whatever the
/// environment says.
pub fn forced(look: &Look) -> bool {
    !matches!(look.color, ColorArg::Auto | ColorArg::Never)
}

/// Whether headless text on stdout gets colour: `--color never` no; `always` or a depth
/// yes; else NO_COLOR (set, not empty) no, CLICOLOR_FORCE (set, not 0) yes, else only
/// onto a terminal.
pub fn color_stdout(look: &Look) -> bool {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty());
    match look.color {
        ColorArg::Never => false,
        _ if forced(look) => true,
        _ if set("NO_COLOR") => false,
        _ if set("CLICOLOR_FORCE") && std::env::var("CLICOLOR_FORCE").as_deref() != Ok("0") => true,
        _ => io::stdout().is_terminal() && depth_of(look) != ColorDepth::Never,
    }
}

/// The heat colours of headless text for the depth in effect (`--color 16`, an
/// eight-colour TERM): SGR 30-37/90-97 there, not `38;5;N`.
pub fn sgr_of(look: &Look) -> grove::present::heat::Sgr {
    use grove::present::heat::Sgr;
    match depth_of(look) {
        ColorDepth::Ansi8 => Sgr::Ansi8,
        ColorDepth::Ansi16 => Sgr::Ansi16,
        _ => Sgr::Ansi256,
    }
}

pub fn theme_of(look: &Look) -> Result<Theme, String> {
    let depth = depth_of(look);
    let name = match (&look.theme, depth) {
        (Some(t), _) => t.clone(),
        (None, ColorDepth::Never) => "mono".to_string(),
        (None, _) => "default".to_string(),
    };
    Theme::load(&name, depth).map_err(|e| e.to_string())
}

pub fn glyphs_of(look: &Look) -> Glyphs {
    Glyphs::pick(look.ascii || !Glyphs::locale_is_utf8())
}
