//! `scroll details N` and `scroll table N`: the details pane (a node of an ensemble
//! has hundreds of columns), the summary/metadata table (wider than the screen once
//! members have long labels and many metadata keys) and the kernel table's names (a
//! templated kernel's full name is hundreds of characters) scroll without moving the
//! tree's cursor.

use std::fmt;

use crate::app::command::{Command, Input, ParseError};
use crate::app::App;

pub fn parse(i: &Input) -> Result<Command, ParseError> {
    const USAGE: &str = "usage: scroll details N | table N (N < 0 scrolls back)";
    match i.args {
        [t, n] if t.text == "details" || t.text == "table" => {
            let by: i64 = n
                .text
                .parse()
                .map_err(|_| Input::at(n, "expected a whole number of lines or columns"))?;
            Ok(Command::Scroll(t.text == "details", by))
        }
        [_, _, t, ..] => Err(Input::too_many(t)),
        [t, ..] => Err(Input::at(t, USAGE)),
        [] => Err(i.missing(USAGE)),
    }
}

pub fn parse_toggle(i: &Input) -> Result<Command, ParseError> {
    let w = i.word(&["details", "count"], "expected 'details' or 'count'")?;
    Ok(Command::TogglePane(w == "details"))
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::TogglePane(details) => write!(
            f,
            "toggle-pane {}",
            if *details { "details" } else { "count" }
        ),
        Command::Scroll(details, n) => write!(
            f,
            "scroll {} {n}",
            if *details { "details" } else { "table" }
        ),
        _ => f.write_str(c.name()),
    }
}

/// `at` moved by `by`, not below 0. Saturating: a scroll of i64::MAX from the command
/// line is no overflow.
pub(crate) fn shifted(at: usize, by: i64) -> usize {
    (at as i64).saturating_add(by).max(0) as usize
}

impl App {
    pub(in crate::app) fn scroll(&mut self, details: bool, by: i64) {
        if details {
            let node = self.tree.selected().unwrap_or(0);
            let (at, off) = self.details_scroll;
            let from = if at == node { off } else { 0 };
            self.details_scroll = (node, shifted(from, by));
        } else if !self.panel.get().scroll_table(self, by) {
            // No further than the widest line (its last columns stay in view).
            let widest = self
                .summary_lines()
                .iter()
                .map(|(l, _)| l.chars().count())
                .max()
                .unwrap_or(0);
            let s = &mut self.view.summary;
            s.hscroll = shifted(s.hscroll, by).min(widest.saturating_sub(8));
        }
    }
}
