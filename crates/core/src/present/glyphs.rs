//! Every glyph goes through one UTF-8-or-ASCII switch: login nodes often run `LANG=C`,
//! where box drawing turns into garbage.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyphs {
    pub ascii: bool,
    pub tree_branch: &'static str,
    pub tree_last: &'static str,
    pub tree_pipe: &'static str,
    pub tree_space: &'static str,
    pub open: &'static str,
    pub closed: &'static str,
    pub leaf: &'static str,
    pub block: &'static str,
    pub crumb_sep: &'static str,
    pub ellipsis: &'static str,
    pub micro: &'static str,
    pub sep: &'static str,
    pub cursor: &'static str,
    /// Heat as glyph density for the mono theme, from the coolest bin to the hottest.
    pub density: [&'static str; 6],
}

pub const UNICODE: Glyphs = Glyphs {
    ascii: false,
    tree_branch: "├─ ",
    tree_last: "└─ ",
    tree_pipe: "│  ",
    tree_space: "   ",
    open: "▼ ",
    closed: "▶ ",
    leaf: "  ",
    block: "█",
    crumb_sep: " › ",
    ellipsis: "…",
    micro: "µs",
    sep: " · ",
    cursor: "█",
    // Six bins, six glyphs: the two hottest shared `█` before (issue 28).
    density: [" ", "·", "░", "▒", "▓", "█"],
};

pub const ASCII: Glyphs = Glyphs {
    ascii: true,
    tree_branch: "|- ",
    tree_last: "`- ",
    tree_pipe: "|  ",
    tree_space: "   ",
    open: "- ",
    closed: "+ ",
    leaf: "  ",
    block: "#",
    crumb_sep: " > ",
    ellipsis: "~",
    micro: "us",
    sep: " | ",
    cursor: "_",
    density: [" ", ".", ":", "+", "*", "#"],
};

impl Glyphs {
    pub fn pick(ascii: bool) -> Glyphs {
        if ascii {
            ASCII
        } else {
            UNICODE
        }
    }

    /// One character's stand-in when only ASCII may be shown: dashes, arrows,
    /// box drawing and block shades get a look-alike, anything else (names from the
    /// data included) a `?`. One character for one, so columns stay aligned.
    pub fn ascii_char(c: char) -> char {
        match c {
            c if c.is_ascii() => c,
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '─' | '━' | '┄' | '┈' => '-',
            '×' | '✕' => 'x',
            '·' | '•' | '∙' | '⋅' => '.',
            '…' | '~' => '~',
            '→' | '▶' | '▸' | '►' | '›' | '»' => '>',
            '←' | '◀' | '◂' | '◄' | '‹' | '«' => '<',
            '▼' | '▾' | '↓' => 'v',
            '▲' | '▴' | '↑' => '^',
            '│' | '┃' | '┆' | '┊' | '▏' | '▕' => '|',
            '├' | '┤' | '┬' | '┴' | '┼' | '┌' | '┐' | '└' | '┘' | '╭' | '╮' | '╰' | '╯' => {
                '+'
            }
            '░' | '▁' | '▂' => '.',
            '▒' | '▃' | '▄' => ':',
            '▓' | '▅' | '▆' => '+',
            '█' | '▇' | '▉' | '▊' | '▋' | '▌' | '▍' | '▎' => '#',
            'µ' | 'μ' => 'u',
            'σ' => 's',
            '‘' | '’' | '′' => '\'',
            '“' | '”' | '″' => '"',
            '\u{a0}' => ' ',
            _ => '?',
        }
    }

    /// `s` with every character folded by `ascii_char`.
    pub fn to_ascii(s: &str) -> String {
        s.chars().map(Glyphs::ascii_char).collect()
    }

    /// True when the locale promises UTF-8 (LC_ALL, then LC_CTYPE, then LANG).
    pub fn locale_is_utf8() -> bool {
        for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let Ok(v) = std::env::var(var) {
                if !v.is_empty() {
                    let v = v.to_ascii_lowercase();
                    return v.contains("utf-8") || v.contains("utf8");
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_glyphs_are_ascii() {
        let g = ASCII;
        for s in [
            g.tree_branch,
            g.tree_last,
            g.tree_pipe,
            g.open,
            g.closed,
            g.block,
            g.crumb_sep,
            g.ellipsis,
            g.micro,
            g.sep,
            g.cursor,
        ]
        .into_iter()
        .chain(g.density)
        {
            assert!(s.is_ascii(), "{s:?}");
        }
        assert_eq!(
            Glyphs::to_ascii("a — b × 3 – σ µs ▶ 名"),
            "a - b x 3 - s us > ?"
        );
    }

    #[test]
    fn every_heat_bin_has_its_own_glyph() {
        for g in [UNICODE, ASCII] {
            let mut d = g.density.to_vec();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), 6, "{:?}", g.density);
        }
    }
}
