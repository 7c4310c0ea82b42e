//! Themes: TOML files of roles (`ui.selection`, `heat.0`, ...) with a palette, resolved
//! once at load time to concrete colours for the terminal's colour depth, so the render
//! path never branches on depth.

use ratatui::style::{Color, Modifier, Style};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    Never,
    /// Eight colours (`TERM=screen`, `tput colors` 8): SGR 30-37 only.
    Ansi8,
    Ansi16,
    Ansi256,
    TrueColor,
}

impl ColorDepth {
    pub fn parse(s: &str) -> Option<ColorDepth> {
        match s {
            "never" | "none" | "mono" => Some(ColorDepth::Never),
            "8" => Some(ColorDepth::Ansi8),
            "16" => Some(ColorDepth::Ansi16),
            "256" => Some(ColorDepth::Ansi256),
            "truecolor" | "24bit" => Some(ColorDepth::TrueColor),
            _ => None,
        }
    }

    /// NO_COLOR, then COLORTERM, then what `tput colors` says of TERM, then TERM's
    /// name: truecolor only when COLORTERM says so; `screen` or `xterm` without
    /// `-256color` is an eight-colour terminal, and gets SGR 30-37, not `38;5;N`.
    pub fn detect() -> ColorDepth {
        let var = |k: &str| std::env::var(k).ok();
        let term = var("TERM");
        let colors = term.as_deref().and_then(tput_colors);
        ColorDepth::detect_from(
            var("NO_COLOR").as_deref(),
            var("COLORTERM").as_deref(),
            term.as_deref(),
            colors,
        )
    }

    /// [`detect`](Self::detect) from the variables and `tput colors` given.
    pub fn detect_from(
        no_color: Option<&str>,
        colorterm: Option<&str>,
        term: Option<&str>,
        tput: Option<u32>,
    ) -> ColorDepth {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return ColorDepth::Never;
        }
        if matches!(colorterm, Some("truecolor" | "24bit")) {
            return ColorDepth::TrueColor;
        }
        let term = term.unwrap_or("");
        if term == "dumb" {
            return ColorDepth::Never;
        }
        match tput {
            Some(n) if n >= 256 => return ColorDepth::Ansi256,
            Some(n) if n >= 16 => return ColorDepth::Ansi16,
            Some(n) if n >= 8 => return ColorDepth::Ansi8,
            Some(_) => return ColorDepth::Never,
            None => {}
        }
        // No terminfo answer: the name says what it can.
        if term.contains("256color") || term.contains("direct") || term.is_empty() {
            ColorDepth::Ansi256
        } else if term.starts_with("linux") || term.contains("16color") {
            ColorDepth::Ansi16
        } else if [
            "screen", "tmux", "vt100", "vt220", "ansi", "xterm", "rxvt", "cons25",
        ]
        .iter()
        .any(|t| term == *t || term.starts_with(&format!("{t}-")) && !term.contains("color"))
        {
            ColorDepth::Ansi8
        } else {
            ColorDepth::Ansi256
        }
    }
}

/// What `tput colors` says of `term` (None when tput or terminfo does not answer).
fn tput_colors(term: &str) -> Option<u32> {
    let out = std::process::Command::new("tput")
        .args(["-T", term, "colors"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let n: i64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(n.max(0) as u32)
}

pub const BUILTIN: [(&str, &str); 3] = [
    ("default", include_str!("../../../../themes/default.toml")),
    ("light", include_str!("../../../../themes/light.toml")),
    ("mono", include_str!("../../../../themes/mono.toml")),
];

/// Every role a view asks for; a theme may leave any of them out (dotted fallback).
pub const ROLES: [&str; 35] = [
    "ui.text",
    "ui.dim",
    "ui.header",
    "ui.title",
    "ui.breadcrumb",
    "ui.selection",
    "ui.match",
    "ui.border",
    "ui.status",
    "ui.status.error",
    "ui.status.warning",
    "ui.help.key",
    "ui.column.header",
    "ui.tree.guide",
    "ui.unattributed",
    "ui.popup",
    "heat.0",
    "heat.1",
    "heat.2",
    "heat.3",
    "heat.4",
    "heat.5",
    "ui.tab",
    "ui.tab.active",
    "ui.cursor",
    "cat.0",
    "cat.1",
    "cat.2",
    "cat.3",
    "cat.4",
    "cat.5",
    "cat.6",
    "cat.7",
    "cat.8",
    "cat.9",
];

#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    styles: HashMap<String, Style>,
    /// Show heat as glyph density (mono theme, or no colour at all).
    pub heat_glyphs: bool,
    pub depth: ColorDepth,
}

#[derive(Debug)]
pub struct ThemeError(pub String);

impl std::fmt::Display for ThemeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Theme {
    pub fn builtin(name: &str, depth: ColorDepth) -> Option<Theme> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Theme::parse(n, text, depth).expect("built-in themes are valid"))
    }

    /// Loads a built-in name or a TOML file path.
    pub fn load(spec: &str, depth: ColorDepth) -> Result<Theme, ThemeError> {
        if let Some(t) = Theme::builtin(spec, depth) {
            return Ok(t);
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            ThemeError(format!(
                "theme {spec}: {e} (built-in themes: default, light, mono)"
            ))
        })?;
        Theme::parse(spec, &text, depth).map_err(|e| ThemeError(format!("{spec}: {}", e.0)))
    }

    pub fn parse(name: &str, text: &str, depth: ColorDepth) -> Result<Theme, ThemeError> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ThemeError(
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("invalid TOML")
                    .to_string(),
            )
        })?;
        let mut palette: HashMap<String, String> = HashMap::new();
        if let Some(p) = doc.get("palette").and_then(|v| v.as_table()) {
            for (k, v) in p {
                if let Some(s) = v.as_str() {
                    palette.insert(k.clone(), s.to_string());
                }
            }
        }
        let mut heat_glyphs = depth == ColorDepth::Never;
        if let Some(o) = doc.get("options").and_then(|v| v.as_table()) {
            if o.get("heat_glyphs").and_then(|v| v.as_bool()) == Some(true) {
                heat_glyphs = true;
            }
        }
        let mut styles = HashMap::new();
        if let Some(roles) = doc.get("roles").and_then(|v| v.as_table()) {
            for (role, spec) in roles {
                let style = parse_style(spec, &palette, depth)
                    .map_err(|e| ThemeError(format!("role {role}: {e}")))?;
                styles.insert(role.clone(), style);
            }
        }
        Ok(Theme {
            name: name.to_string(),
            styles,
            heat_glyphs,
            depth,
        })
    }

    /// The style of a role, falling back along its dots (`ui.status.error` -> `ui.status`).
    pub fn style(&self, role: &str) -> Style {
        let mut r = role;
        loop {
            if let Some(s) = self.styles.get(r) {
                return *s;
            }
            match r.rfind('.') {
                Some(i) => r = &r[..i],
                None => return Style::default(),
            }
        }
    }

    pub fn heat(&self, bin: usize) -> Style {
        self.style(HEAT_ROLES[bin.min(5)])
    }

    /// The colour of a kernel category slot (0-9).
    pub fn category(&self, slot: u8) -> Style {
        self.style(CATEGORY_ROLES[(slot as usize).min(9)])
    }
}

pub const HEAT_ROLES: [&str; 6] = ["heat.0", "heat.1", "heat.2", "heat.3", "heat.4", "heat.5"];

pub const CATEGORY_ROLES: [&str; 10] = [
    "cat.0", "cat.1", "cat.2", "cat.3", "cat.4", "cat.5", "cat.6", "cat.7", "cat.8", "cat.9",
];

fn parse_style(
    spec: &toml::Value,
    palette: &HashMap<String, String>,
    depth: ColorDepth,
) -> Result<Style, String> {
    let mut style = Style::default();
    let t = match spec {
        toml::Value::String(s) => {
            return Ok(style.fg_opt(parse_color(s, palette, depth)?));
        }
        toml::Value::Table(t) => t,
        _ => return Err("expected a colour string or a table".into()),
    };
    for (k, v) in t {
        match k.as_str() {
            "fg" | "bg" => {
                let c = match v {
                    toml::Value::String(s) => parse_color(s, palette, depth)?,
                    toml::Value::Integer(i) if (0..=255).contains(i) => {
                        resolve(Color::Indexed(*i as u8), depth)
                    }
                    _ => return Err(format!("bad colour for {k}")),
                };
                if let Some(c) = c {
                    style = if k == "fg" { style.fg(c) } else { style.bg(c) };
                }
            }
            "modifiers" => {
                for m in v.as_array().ok_or("modifiers must be a list")? {
                    let m = m.as_str().ok_or("modifiers are strings")?;
                    style = style.add_modifier(match m {
                        "bold" => Modifier::BOLD,
                        "dim" => Modifier::DIM,
                        "italic" => Modifier::ITALIC,
                        "underlined" => Modifier::UNDERLINED,
                        "reversed" => Modifier::REVERSED,
                        other => return Err(format!("unknown modifier {other}")),
                    });
                }
            }
            other => return Err(format!("unknown key {other}")),
        }
    }
    Ok(style)
}

trait FgOpt {
    fn fg_opt(self, c: Option<Color>) -> Self;
}

impl FgOpt for Style {
    fn fg_opt(self, c: Option<Color>) -> Style {
        match c {
            Some(c) => self.fg(c),
            None => self,
        }
    }
}

fn parse_color(
    s: &str,
    palette: &HashMap<String, String>,
    depth: ColorDepth,
) -> Result<Option<Color>, String> {
    let s = palette.get(s).map(|x| x.as_str()).unwrap_or(s);
    let c = if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 {
            return Err(format!("bad colour {s}"));
        }
        let v = u32::from_str_radix(hex, 16).map_err(|_| format!("bad colour {s}"))?;
        Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8)
    } else if let Ok(i) = s.parse::<u8>() {
        Color::Indexed(i)
    } else {
        match s {
            "reset" | "default" => Color::Reset,
            "black" => Color::Black,
            "red" => Color::Red,
            "green" => Color::Green,
            "yellow" => Color::Yellow,
            "blue" => Color::Blue,
            "magenta" => Color::Magenta,
            "cyan" => Color::Cyan,
            "gray" | "grey" => Color::Gray,
            "darkgray" | "darkgrey" => Color::DarkGray,
            "lightred" => Color::LightRed,
            "lightgreen" => Color::LightGreen,
            "lightyellow" => Color::LightYellow,
            "lightblue" => Color::LightBlue,
            "lightmagenta" => Color::LightMagenta,
            "lightcyan" => Color::LightCyan,
            "white" => Color::White,
            other => return Err(format!("unknown colour {other}")),
        }
    };
    Ok(resolve(c, depth))
}

/// Quantises a colour to what the terminal can show.
pub fn resolve(c: Color, depth: ColorDepth) -> Option<Color> {
    match (depth, c) {
        (ColorDepth::Never, _) => None,
        (ColorDepth::TrueColor, c) => Some(c),
        (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Some(Color::Indexed(rgb_to_256(r, g, b))),
        (ColorDepth::Ansi256, c) => Some(c),
        (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => Some(nearest16(r, g, b)),
        (ColorDepth::Ansi16, Color::Indexed(i)) => {
            let (r, g, b) = indexed_rgb(i);
            Some(nearest16(r, g, b))
        }
        (ColorDepth::Ansi16, c) => Some(c),
        (ColorDepth::Ansi8, c) => {
            let (r, g, b) = match c {
                Color::Rgb(r, g, b) => (r, g, b),
                Color::Indexed(i) => indexed_rgb(i),
                Color::Reset => return Some(Color::Reset),
                other => indexed_rgb(named_index(other)?),
            };
            Some(nearest8(r, g, b))
        }
    }
}

/// The sixteen named colours in SGR order (30-37, then 90-97): index i is the colour
/// `indexed_rgb(i)` gives the RGB of.
const ANSI16: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// The 16-colour index of a named colour.
fn named_index(c: Color) -> Option<u8> {
    ANSI16.iter().position(|n| *n == c).map(|i| i as u8)
}

/// The nearest of the eight base colours (SGR 30-37): a bright colour becomes its
/// base (light red -> red), greys go to black or grey by lightness.
fn nearest8(r: u8, g: u8, b: u8) -> Color {
    let c = nearest16(r, g, b);
    match c {
        Color::DarkGray => Color::Black,
        Color::LightRed => Color::Red,
        Color::LightGreen => Color::Green,
        Color::LightYellow => Color::Yellow,
        Color::LightBlue => Color::Blue,
        Color::LightMagenta => Color::Magenta,
        Color::LightCyan => Color::Cyan,
        Color::White => Color::Gray,
        c => c,
    }
}

fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let q = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    16 + 36 * q(r) + 6 * q(g) + q(b)
}

fn indexed_rgb(i: u8) -> (u8, u8, u8) {
    const BASE: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (128, 0, 0),
        (0, 128, 0),
        (128, 128, 0),
        (0, 0, 128),
        (128, 0, 128),
        (0, 128, 128),
        (192, 192, 192),
        (128, 128, 128),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (0, 0, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match i {
        0..=15 => BASE[i as usize],
        16..=231 => {
            let i = i - 16;
            let lv = |x: u8| if x == 0 { 0 } else { 55 + 40 * x };
            (lv(i / 36), lv((i / 6) % 6), lv(i % 6))
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

fn nearest16(r: u8, g: u8, b: u8) -> Color {
    let mut best = 0;
    let mut best_d = u32::MAX;
    for i in 0..16u8 {
        let (cr, cg, cb) = indexed_rgb(i);
        let d = (cr as i32 - r as i32).pow(2)
            + (cg as i32 - g as i32).pow(2)
            + (cb as i32 - b as i32).pow(2);
        if (d as u32) < best_d {
            best_d = d as u32;
            best = i;
        }
    }
    ANSI16[best as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_at_every_depth() {
        for (name, _) in BUILTIN {
            for d in [
                ColorDepth::Never,
                ColorDepth::Ansi16,
                ColorDepth::Ansi256,
                ColorDepth::TrueColor,
            ] {
                let t = Theme::builtin(name, d).unwrap();
                if d == ColorDepth::Never {
                    assert_eq!(t.style("heat.0").fg, None);
                    assert!(t.heat_glyphs);
                }
            }
        }
        let t = Theme::builtin("mono", ColorDepth::Ansi256).unwrap();
        assert!(t.heat_glyphs);
        assert!(t
            .style("ui.selection")
            .add_modifier
            .contains(Modifier::REVERSED));
    }

    #[test]
    fn quantise() {
        assert_eq!(
            resolve(Color::Rgb(255, 0, 0), ColorDepth::Ansi256),
            Some(Color::Indexed(196))
        );
        assert_eq!(
            resolve(Color::Indexed(196), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(resolve(Color::Red, ColorDepth::Never), None);
    }

    #[test]
    fn bad_theme_is_an_error() {
        assert!(Theme::parse(
            "x",
            "[roles]\n\"ui.text\" = { fg = \"nocolour\" }",
            ColorDepth::Ansi256
        )
        .is_err());
    }
}
