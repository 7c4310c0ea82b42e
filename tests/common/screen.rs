//! Rendering the explorer off-screen for snapshot tests (tests/snapshots.rs, tests/tour.rs):
//! a key script goes through the real keymap and `update`, the frame is drawn into a
//! fixed-size TestBackend, and the result is its text plus a grid of theme roles, so
//! colour and selection regressions show as well as text ones.

use std::path::{Path, PathBuf};

use grove::app::keymap::Keymap;
use grove::app::keys::Key;
use grove::app::App;
use grove::model::Profile;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme, ROLES};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// One letter per role; the test theme gives role i the colour 100 + i.
const LETTERS: &str = ".dHTbsm|SEWkcgup012345";
const SELECTION_BG: u8 = 99;

fn test_theme() -> Theme {
    let mut toml = String::from("[roles]\n");
    for (i, role) in ROLES.iter().enumerate() {
        if *role == "ui.selection" {
            toml.push_str(&format!("\"{role}\" = {{ bg = \"{SELECTION_BG}\" }}\n"));
        } else {
            toml.push_str(&format!("\"{role}\" = {{ fg = \"{}\" }}\n", 100 + i));
        }
    }
    Theme::parse("test", &toml, ColorDepth::Ansi256).unwrap()
}

fn role_grid(buf: &Buffer, by_colour: bool) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            let c = &buf[(x, y)];
            let ch = if by_colour {
                let mut ch = match c.fg {
                    Color::Indexed(i) if (100..100 + LETTERS.len() as u8).contains(&i) => {
                        LETTERS.as_bytes()[(i - 100) as usize] as char
                    }
                    _ => '.',
                };
                if c.bg == Color::Indexed(SELECTION_BG) && !ch.is_ascii_digit() {
                    ch = 's';
                }
                ch
            } else if c.modifier.contains(Modifier::REVERSED) {
                'r'
            } else if c.modifier.contains(Modifier::BOLD) {
                'b'
            } else if c.modifier.contains(Modifier::UNDERLINED) {
                'u'
            } else if c.modifier.contains(Modifier::DIM) {
                'd'
            } else {
                '.'
            };
            out.push(ch);
        }
        out.push('\n');
    }
    out
}

/// The profile a test opens: one file, several (comma-separated) as an ensemble, or a
/// directory of runs as `grove DIR` opens it. `file` is relative to the repository
/// unless absolute (a corpus path).
pub fn load(file: &str) -> Profile {
    let paths: Vec<PathBuf> = file
        .split(',')
        .map(|f| Path::new(env!("CARGO_MANIFEST_DIR")).join(f))
        .collect();
    if paths.len() > 1 {
        grove::load::load_ensemble(&paths, &Default::default()).unwrap()
    } else if paths[0].is_dir() {
        grove::load::load_inputs(&paths, &Default::default()).unwrap()
    } else {
        grove::load::load_path(&paths[0]).unwrap()
    }
}

/// An explorer on `profile` sized for a `size` screen, after the key `script`.
pub fn app_after(profile: Profile, script: &str, size: (u16, u16)) -> App {
    let mut app = App::new(profile, Keymap::default_map());
    app.page = tree_rows(size.0, size.1);
    for key in Key::parse_seq(script).unwrap() {
        app.on_key(key);
    }
    app
}

/// The screen of `app` off-screen (a TestBackend): the text, then a grid of theme roles
/// (colour: one letter per role of the test theme; `mono`: the modifiers).
pub fn render(app: &App, size: (u16, u16), mono: bool, ascii: bool) -> String {
    let theme = if mono {
        Theme::builtin("mono", ColorDepth::Never).unwrap()
    } else {
        test_theme()
    };
    let glyphs = Glyphs::pick(ascii);
    let buf = super::draw(app, size, &theme, &glyphs);
    let text = super::screen_text(&buf);
    format!("{text}--- roles ---\n{}", role_grid(&buf, !mono))
}

/// Runs a key script and renders the screen, as text plus role grid.
pub fn screen(file: &str, script: &str, size: (u16, u16), mono: bool, ascii: bool) -> String {
    let app = app_after(load(file), script, size);
    let shown = render(&app, size, mono, ascii);
    format!("script: {script}\nlog: {:?}\n{shown}", app.log)
}
