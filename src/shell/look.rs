//! How output looks: colour depth, theme and glyphs from the `--color`, `--theme` and
//! `--ascii` flags.

use grove::cli::{ColorArg, Look};
use grove::ui::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};

pub fn depth_of(look: &Look) -> ColorDepth {
    match look.color {
        ColorArg::Auto => ColorDepth::detect(),
        ColorArg::Never => ColorDepth::Never,
        ColorArg::C16 => ColorDepth::Ansi16,
        ColorArg::C256 => ColorDepth::Ansi256,
        ColorArg::Truecolor => ColorDepth::TrueColor,
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
