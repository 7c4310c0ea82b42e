//! Key handling per mode: the keymap in normal mode, text editing in the prompts,
//! and the small overlays (help, metric picker).

use ratatui::crossterm::event::KeyCode;

use super::command::{self, Command, MetricChoice, PromptKind};
use super::keys::Key;
use super::{App, Mode};

impl App {
    /// Handles one key press in the current mode.
    pub fn on_key(&mut self, key: Key) {
        if !matches!(self.mode, Mode::Prompt { .. }) {
            self.message = None;
        }
        match self.mode.clone() {
            Mode::Normal => {
                let Some(run) = self.keymap.lookup(&key).map(|s| s.to_string()) else {
                    return;
                };
                // On an aggregate row, opening it shows the pruned siblings.
                if let Some(row) = self.tree.row() {
                    if !row.is_node() && matches!(run.as_str(), "toggle" | "expand" | "expand-children") {
                        if let Some(parent) = self.tree.parent(self.tree.po.node[row.pos as usize]) {
                            let _ = self.update(Command::Unprune(self.path_of(parent)));
                            return;
                        }
                    }
                }
                let _ = self.run(&run);
            }
            Mode::Help { scroll } => match key.code {
                KeyCode::Char('j') | KeyCode::Down => self.mode = Mode::Help { scroll: scroll + 1 },
                KeyCode::Char('k') | KeyCode::Up => {
                    self.mode = Mode::Help {
                        scroll: scroll.saturating_sub(1),
                    }
                }
                _ => self.mode = Mode::Normal,
            },
            Mode::MetricPicker { selected } => {
                let names = self.profile.metrics.base_metrics();
                match key.code {
                    KeyCode::Char('j') | KeyCode::Down => {
                        self.mode = Mode::MetricPicker {
                            selected: (selected + 1).min(names.len().saturating_sub(1)),
                        }
                    }
                    KeyCode::Char('k') | KeyCode::Up => {
                        self.mode = Mode::MetricPicker {
                            selected: selected.saturating_sub(1),
                        }
                    }
                    KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right => {
                        self.mode = Mode::Normal;
                        if let Some(m) = names.get(selected) {
                            let _ = self.update(Command::Metric(MetricChoice::Named(m.clone())));
                        }
                    }
                    _ => self.mode = Mode::Normal,
                }
            }
            Mode::Prompt {
                kind,
                mut input,
                history_pos,
            } => self.prompt_key(key, kind, &mut input, history_pos),
        }
    }

    fn prompt_key(&mut self, key: Key, kind: PromptKind, input: &mut String, hist: Option<usize>) {
        let mut history_pos = hist;
        match key.code {
            KeyCode::Esc => {
                self.mode = Mode::Normal;
                return;
            }
            KeyCode::Char('c') if key.ctrl => {
                self.mode = Mode::Normal;
                return;
            }
            KeyCode::Enter => {
                self.mode = Mode::Normal;
                let text = input.trim().to_string();
                if text.is_empty() {
                    return;
                }
                match kind {
                    PromptKind::Search => {
                        let _ = self.update(Command::Search(text));
                    }
                    PromptKind::Command => {
                        self.history.push(text.clone());
                        let _ = self.run(&text);
                    }
                }
                return;
            }
            KeyCode::Backspace if input.pop().is_none() => {
                self.mode = Mode::Normal;
                return;
            }
            KeyCode::Backspace => {}
            KeyCode::Char('u') if key.ctrl => input.clear(),
            KeyCode::Up if kind == PromptKind::Command && !self.history.is_empty() => {
                let i = history_pos
                    .map(|i| i.saturating_sub(1))
                    .unwrap_or(self.history.len() - 1);
                history_pos = Some(i);
                *input = self.history[i].clone();
            }
            KeyCode::Down if kind == PromptKind::Command => {
                if let Some(i) = history_pos {
                    if i + 1 < self.history.len() {
                        history_pos = Some(i + 1);
                        *input = self.history[i + 1].clone();
                    } else {
                        history_pos = None;
                        input.clear();
                    }
                }
            }
            KeyCode::Tab if kind == PromptKind::Command && !input.contains(' ') => {
                let cands: Vec<&str> = command::COMMANDS
                    .iter()
                    .map(|(n, _)| *n)
                    .filter(|n| n.starts_with(input.as_str()))
                    .collect();
                if cands.len() == 1 {
                    *input = format!("{} ", cands[0]);
                } else if !cands.is_empty() {
                    self.info(cands.join("  "));
                }
            }
            KeyCode::Char(c) if !key.ctrl => input.push(c),
            _ => {}
        }
        self.mode = Mode::Prompt {
            kind,
            input: input.clone(),
            history_pos,
        };
        if kind == PromptKind::Search {
            // Incremental search: highlight as the user types.
            if input.is_empty() {
                self.search = None;
            } else {
                let t = input.clone();
                self.search_for(&t);
            }
        }
    }
}
