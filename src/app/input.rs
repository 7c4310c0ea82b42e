//! Key handling per mode: the keymap in normal mode, text editing in the prompts,
//! and the small overlays (help, metric picker).

use ratatui::crossterm::event::KeyCode;

use super::command::{self, Command, MetricChoice, PromptKind};
use super::keys::Key;
use super::{paths, App, Mode};

impl App {
    /// Handles one key press in the current mode.
    pub fn on_key(&mut self, key: Key) {
        if !matches!(self.mode, Mode::Prompt { .. }) {
            self.message = None;
        }
        match self.mode.clone() {
            Mode::Normal => {
                let Some(run) = self
                    .keymap
                    .lookup_in(self.panel.name(), &key)
                    .map(|s| s.to_string())
                else {
                    return;
                };
                // On an aggregate row, opening it shows the pruned siblings.
                if let Some(row) = self.tree.row() {
                    if !row.is_node()
                        && matches!(run.as_str(), "toggle" | "expand" | "expand-children")
                    {
                        if let Some(parent) = self.tree.parent(self.tree.po.node[row.pos as usize])
                        {
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

    /// Completions for the last word of a command line: command names first, then
    /// metric names or node paths depending on the command. Returns the text to keep,
    /// the word being completed, and the candidates (whole replacements of the word).
    fn complete(&self, input: &str) -> (String, String, Vec<String>) {
        let Some(space) = input.rfind(' ') else {
            let c = command::COMMANDS
                .iter()
                .map(|(n, _)| n.to_string())
                .filter(|n| n.starts_with(input))
                .collect();
            return (String::new(), input.to_string(), c);
        };
        let head = input.split_whitespace().next().unwrap_or("");
        let mut keep = input[..=space].to_string();
        let mut word = input[space + 1..].to_string();
        let takes_path = matches!(
            head,
            "expand"
                | "collapse"
                | "toggle"
                | "select"
                | "focus"
                | "hide"
                | "show"
                | "unprune"
                | "hot-path"
                | "expand-all"
                | "collapse-all"
                | "expand-children"
                | "collapse-children"
        );
        let cands = if takes_path {
            // A path is the whole argument (quoted when it has spaces).
            let after = input[head.len()..].trim_start();
            keep = input[..input.len() - after.len()].to_string();
            word = after.trim_start_matches('"').to_string();
            // Complete one path segment under the part already typed.
            let (dir, leaf) = match word.rfind('/') {
                Some(i) => (&word[..i], &word[i + 1..]),
                None => ("", word.as_str()),
            };
            let cct = &self.profile.cct;
            let level: Vec<u32> = if dir.is_empty() {
                cct.root_ids()
            } else {
                match paths::resolve(cct, dir) {
                    Ok(n) => cct.children(n).collect(),
                    Err(_) => Vec::new(),
                }
            };
            let quote = |p: String| {
                if p.contains([' ', '"']) {
                    format!("\"{p}")
                } else {
                    p
                }
            };
            let mut c: Vec<String> = level
                .into_iter()
                .map(|n| {
                    let p = paths::path_of(cct, n);
                    let seg = p.rsplit('/').next().unwrap_or(&p).to_string();
                    let slash = if cct.has_children(n) { "/" } else { "" };
                    let prefix = if dir.is_empty() {
                        String::new()
                    } else {
                        format!("{dir}/")
                    };
                    (seg.clone(), format!("{prefix}{seg}{slash}"))
                })
                .filter(|(seg, _)| seg.starts_with(leaf))
                .map(|(_, full)| quote(full))
                .collect();
            c.sort();
            c.dedup();
            c
        } else {
            self.profile
                .metrics
                .names()
                .into_iter()
                .chain(["name", "type", "depth", "leaf"].map(String::from))
                .filter(|m| m.starts_with(&word))
                .collect()
        };
        (keep, word, cands)
    }

    fn prompt_key(&mut self, key: Key, kind: PromptKind, input: &mut String, hist: Option<usize>) {
        if key.code != KeyCode::Tab {
            self.completions.clear();
        }
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
                let mut text = input.trim().to_string();
                // A path completed with Tab may leave its quote open: close it.
                let mut quotes = 0;
                let mut escaped = false;
                for ch in text.chars() {
                    match ch {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => quotes += 1,
                        _ => escaped = false,
                    }
                }
                if kind == PromptKind::Command && quotes % 2 == 1 {
                    text.push('"');
                }
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
            KeyCode::Tab if kind == PromptKind::Command => {
                let (keep, word, cands) = self.complete(input);
                if cands.len() == 1 {
                    *input = format!("{keep}{}", cands[0]);
                    if !cands[0].ends_with('/') {
                        if cands[0].starts_with('"') {
                            input.push('"');
                        }
                        input.push(' ');
                    }
                    self.completions.clear();
                } else if !cands.is_empty() {
                    // Extend to the longest common prefix, list the rest.
                    let common = cands.iter().skip(1).fold(cands[0].clone(), |acc, c| {
                        acc.chars()
                            .zip(c.chars())
                            .take_while(|(a, b)| a == b)
                            .map(|(a, _)| a)
                            .collect()
                    });
                    if common.len() > word.len() {
                        *input = format!("{keep}{common}");
                    }
                    self.completions = cands;
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
