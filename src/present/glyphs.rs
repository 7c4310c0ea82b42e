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
    density: [" ", "░", "▒", "▓", "█", "█"],
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
