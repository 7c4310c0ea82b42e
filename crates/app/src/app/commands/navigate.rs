//! Cursor movement and search: down, up, the page moves, top, bottom, parent,
//! siblings, select, search.

use std::fmt;

use crate::app::command::{quote, Command, Input, ParseError};
use crate::app::{App, CmdError};

pub fn parse_down(i: &Input) -> Result<Command, ParseError> {
    Ok(Command::Down(i.count()?))
}

pub fn parse_up(i: &Input) -> Result<Command, ParseError> {
    Ok(Command::Up(i.count()?))
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Down(n) | Command::Up(n) if *n != 1 => write!(f, "{} {n}", c.name()),
        Command::Select(p) | Command::Search(p) => write!(f, "{} {}", c.name(), quote(p)),
        _ => f.write_str(c.name()),
    }
}

impl App {
    /// On the flame graph, a search also says what share of the total its matches
    /// hold (a match inside another counted once).
    fn say_flame_share(&mut self) {
        if !self.panel.is(&crate::app::panels::flame::Flame) {
            return;
        }
        if let (Some(share), Some(m)) = (self.flame_search_share(), self.message.as_mut()) {
            m.text = format!(
                "{}; the matches hold {:.1}% of the total",
                m.text,
                share * 100.0
            );
        }
    }

    pub(super) fn navigate(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let page = self.page.max(1) as isize;
        let delta = match &cmd {
            Command::Down(n) => Some(*n as isize),
            Command::Up(n) => Some(-(*n as isize)),
            Command::PageDown => Some(page),
            Command::PageUp => Some(-page),
            Command::HalfPageDown => Some(page / 2),
            Command::HalfPageUp => Some(-page / 2),
            Command::Top => Some(isize::MIN / 2),
            Command::Bottom => Some(isize::MAX / 2),
            _ => None,
        };
        // The active panel moves its own cursor when it has one.
        if let Some(d) = delta {
            if self.panel_move(d) {
                return Ok(self.log_nav.then_some(cmd));
            }
        }
        match &cmd {
            Command::Top => self.tree.cursor = 0,
            Command::Bottom => self.tree.cursor = self.tree.visible.len().saturating_sub(1),
            Command::Parent => {
                let n = self.target(&None)?;
                if let Some(p) = self.tree.parent(n) {
                    self.tree.reveal(p);
                }
            }
            Command::NextSibling | Command::PrevSibling => {
                let n = self.target(&None)?;
                let sibs = match self.tree.parent(n) {
                    Some(p) => self.tree.children(p),
                    None => self
                        .tree
                        .po
                        .root_positions()
                        .map(|p| self.tree.po.node[p as usize])
                        .collect(),
                };
                let i = sibs.iter().position(|&s| s == n).unwrap_or(0);
                let j = if cmd == Command::NextSibling {
                    (i + 1).min(sibs.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                self.tree.reveal(sibs[j]);
            }
            Command::Select(p) => {
                let n = self.target(&Some(p.clone()))?;
                self.tree.reveal(n);
            }
            Command::Search(text) => {
                self.search_for(text);
                if self.search.as_ref().is_some_and(|s| s.matches.is_empty()) {
                    return Err(format!("no node matches {text:?}").into());
                }
                self.jump_match(true, true);
                self.say_flame_share();
            }
            Command::SearchNext => self.jump_match(true, false),
            Command::SearchPrev => self.jump_match(false, false),
            _ => {
                if let Some(d) = delta {
                    self.tree.move_by(d);
                }
            }
        }
        Ok(Some(cmd))
    }
}
