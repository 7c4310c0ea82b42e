//! Key handling: a key press becomes messages (a command, a command text, or a change
//! to the UI state such as prompt editing or an overlay's cursor), and `send` applies
//! them in one place. Commands go through `update`; UI messages are not logged.

use crossterm::event::KeyCode;

use super::command::{Command, MetricChoice, PromptKind};
use super::commands::{self, Complete};
use super::keys::Key;
use super::{paths, App, Mode};

/// What a key asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// A parsed command (through `update`).
    Command(Command),
    /// A command text (through `run`, which parses and reports errors with a caret).
    Run(String),
    /// A change to the UI state only: never logged, never undone.
    Ui(UiMsg),
}

#[derive(Debug, Clone, PartialEq)]
pub enum UiMsg {
    ClearMessage,
    /// Back to normal mode (closes an overlay or the prompt).
    Close,
    HelpScroll(isize),
    PickerMove(isize),
    /// Runs `metric` with the picker's selection.
    PickerChoose,
    Prompt(PromptEdit),
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptEdit {
    Insert(char),
    Backspace,
    Clear,
    HistoryPrev,
    HistoryNext,
    Complete,
    Submit,
    /// A key that edits nothing: it still clears the completion list.
    Touch,
}

/// Lines a paging key scrolls an overlay by.
const PAGE: isize = 10;

impl App {
    /// Handles one key press in the current mode.
    pub fn on_key(&mut self, key: Key) {
        for m in self.messages_for(key) {
            self.send(m);
        }
    }

    /// The messages a key means in the current mode; reads the state, changes nothing.
    fn messages_for(&self, key: Key) -> Vec<Msg> {
        let mut out = Vec::new();
        if !matches!(self.mode, Mode::Prompt { .. }) {
            out.push(Msg::Ui(UiMsg::ClearMessage));
        }
        let down = matches!(key.code, KeyCode::Char('j') | KeyCode::Down);
        let up = matches!(key.code, KeyCode::Char('k') | KeyCode::Up);
        // Paging keys scroll an overlay (a reader paging through the help expects them
        // to), they do not close it: a page, or to the end or the top.
        let page = match key.code {
            KeyCode::PageDown | KeyCode::Char(' ') => Some(PAGE),
            KeyCode::Char('f' | 'd') if key.ctrl => Some(PAGE),
            KeyCode::PageUp => Some(-PAGE),
            KeyCode::Char('b' | 'u') if key.ctrl => Some(-PAGE),
            KeyCode::Char('G') | KeyCode::End => Some(isize::MAX / 2),
            KeyCode::Char('g') | KeyCode::Home => Some(isize::MIN / 2),
            _ => None,
        };
        match &self.mode {
            Mode::Normal => {
                if let Some(run) = self.keymap.lookup_in(self.panel.name(), &key) {
                    out.push(self.normal_key(run));
                }
            }
            Mode::Help { .. } if down => out.push(Msg::Ui(UiMsg::HelpScroll(1))),
            Mode::Help { .. } if up => out.push(Msg::Ui(UiMsg::HelpScroll(-1))),
            Mode::Help { .. } | Mode::Messages { .. } if page.is_some() => {
                out.push(Msg::Ui(UiMsg::HelpScroll(page.unwrap_or(0))))
            }
            Mode::Help { .. } => out.push(Msg::Ui(UiMsg::Close)),
            Mode::Messages { .. } if down => out.push(Msg::Ui(UiMsg::HelpScroll(1))),
            Mode::Messages { .. } if up => out.push(Msg::Ui(UiMsg::HelpScroll(-1))),
            Mode::Messages { .. } => out.push(Msg::Ui(UiMsg::Close)),
            Mode::MetricPicker { .. } if down => out.push(Msg::Ui(UiMsg::PickerMove(1))),
            Mode::MetricPicker { .. } if up => out.push(Msg::Ui(UiMsg::PickerMove(-1))),
            Mode::MetricPicker { .. } => out.push(Msg::Ui(
                if matches!(
                    key.code,
                    KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right
                ) {
                    UiMsg::PickerChoose
                } else {
                    UiMsg::Close
                },
            )),
            Mode::Gaps { .. } if down => out.push(Msg::Ui(UiMsg::PickerMove(1))),
            Mode::Gaps { .. } if up => out.push(Msg::Ui(UiMsg::PickerMove(-1))),
            Mode::Gaps { rows, selected } => {
                if matches!(
                    key.code,
                    KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right
                ) {
                    out.push(Msg::Ui(UiMsg::Close));
                    if let Some(r) = rows.get(*selected) {
                        out.push(Msg::Command(self.gap_row_command(r)));
                    }
                } else {
                    out.push(Msg::Ui(UiMsg::Close));
                }
            }
            Mode::Prompt { kind, input, .. } => {
                let edit = match key.code {
                    KeyCode::Esc => Some(UiMsg::Close),
                    KeyCode::Char('c') if key.ctrl => Some(UiMsg::Close),
                    KeyCode::Enter => Some(UiMsg::Prompt(PromptEdit::Submit)),
                    KeyCode::Backspace if input.is_empty() => Some(UiMsg::Close),
                    KeyCode::Backspace => Some(UiMsg::Prompt(PromptEdit::Backspace)),
                    KeyCode::Char('u') if key.ctrl => Some(UiMsg::Prompt(PromptEdit::Clear)),
                    KeyCode::Up if *kind == PromptKind::Command => {
                        Some(UiMsg::Prompt(PromptEdit::HistoryPrev))
                    }
                    KeyCode::Down if *kind == PromptKind::Command => {
                        Some(UiMsg::Prompt(PromptEdit::HistoryNext))
                    }
                    KeyCode::Tab if *kind == PromptKind::Command => {
                        Some(UiMsg::Prompt(PromptEdit::Complete))
                    }
                    KeyCode::Char(c) if !key.ctrl => Some(UiMsg::Prompt(PromptEdit::Insert(c))),
                    _ => None,
                };
                out.push(Msg::Ui(edit.unwrap_or(UiMsg::Prompt(PromptEdit::Touch))));
            }
        }
        out
    }

    /// A normal-mode binding: its command text, except that opening an aggregate row
    /// (pruned siblings) shows them.
    fn normal_key(&self, run: &str) -> Msg {
        if let Some(row) = self.tree.row() {
            if !row.is_node() && matches!(run, "toggle" | "expand" | "expand-children") {
                if let Some(parent) = self.tree.parent(self.tree.po.node[row.pos as usize]) {
                    return Msg::Command(Command::Unprune(self.path_of(parent)));
                }
            }
        }
        Msg::Run(run.to_string())
    }

    /// Applies one message: the one place key presses change state.
    pub fn send(&mut self, msg: Msg) {
        match msg {
            Msg::Command(c) => {
                let _ = self.update(c);
            }
            Msg::Run(text) => {
                let _ = self.run(&text);
            }
            Msg::Ui(m) => self.update_ui(m),
        }
    }

    fn update_ui(&mut self, msg: UiMsg) {
        match (msg, &mut self.mode) {
            (UiMsg::ClearMessage, _) => self.message = None,
            (UiMsg::Close, _) => {
                self.completions.clear();
                self.mode = Mode::Normal;
            }
            (UiMsg::HelpScroll(d), Mode::Help { scroll } | Mode::Messages { scroll }) => {
                // Not past the last line: `G` then `k` moves up at once.
                *scroll = scroll.saturating_add_signed(d).min(self.overlay_max.get());
            }
            (UiMsg::PickerMove(d), Mode::MetricPicker { selected }) => {
                let last = self
                    .profile
                    .metrics
                    .picker_metrics()
                    .len()
                    .saturating_sub(1);
                *selected = selected.saturating_add_signed(d).min(last);
            }
            (UiMsg::PickerMove(d), Mode::Gaps { rows, selected }) => {
                let last = rows.len().saturating_sub(1);
                *selected = selected.saturating_add_signed(d).min(last);
            }
            (UiMsg::PickerChoose, Mode::MetricPicker { selected }) => {
                let chosen = self
                    .profile
                    .metrics
                    .picker_metrics()
                    .get(*selected)
                    .cloned();
                self.mode = Mode::Normal;
                if let Some(m) = chosen {
                    let _ = self.update(Command::Metric(MetricChoice::Named(m)));
                }
            }
            (UiMsg::Prompt(e), Mode::Prompt { .. }) => self.prompt_edit(e),
            // A message for another mode (the mode changed in between): nothing to do.
            _ => {}
        }
    }

    fn prompt_edit(&mut self, edit: PromptEdit) {
        let Mode::Prompt {
            kind,
            mut input,
            mut history_pos,
        } = std::mem::replace(&mut self.mode, Mode::Normal)
        else {
            return;
        };
        if edit != PromptEdit::Complete {
            self.completions.clear();
        }
        match edit {
            PromptEdit::Submit => return self.submit(kind, &input),
            PromptEdit::Touch => {}
            PromptEdit::Insert(c) => input.push(c),
            PromptEdit::Backspace => {
                input.pop();
            }
            PromptEdit::Clear => input.clear(),
            PromptEdit::HistoryPrev if !self.history.is_empty() => {
                let i = history_pos
                    .map(|i| i.saturating_sub(1))
                    .unwrap_or(self.history.len() - 1);
                history_pos = Some(i);
                input = self.history[i].clone();
            }
            PromptEdit::HistoryPrev => {}
            PromptEdit::HistoryNext => {
                if let Some(i) = history_pos {
                    if i + 1 < self.history.len() {
                        history_pos = Some(i + 1);
                        input = self.history[i + 1].clone();
                    } else {
                        history_pos = None;
                        input.clear();
                    }
                }
            }
            PromptEdit::Complete => self.tab(&mut input),
        }
        if kind == PromptKind::Search {
            // Incremental search: highlight as the user types.
            if input.is_empty() {
                self.search = None;
            } else {
                self.search_for(&input);
            }
        }
        self.mode = Mode::Prompt {
            kind,
            input,
            history_pos,
        };
    }

    /// Enter in the prompt: runs the search or the command line.
    fn submit(&mut self, kind: PromptKind, input: &str) {
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
    }

    /// Tab: completes the word alone, or extends it to the candidates' common prefix
    /// and lists them.
    fn tab(&mut self, input: &mut String) {
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

    /// Completions for the last word of a command line: command names first, then
    /// what the command's table entry says it takes. Returns the text to keep, the word
    /// being completed, and the candidates (whole replacements of the word).
    fn complete(&self, input: &str) -> (String, String, Vec<String>) {
        let Some(space) = input.rfind(' ') else {
            let c = commands::names()
                .map(|(n, _)| n.to_string())
                .filter(|n| n.starts_with(input))
                .collect();
            return (String::new(), input.to_string(), c);
        };
        let head = input.split_whitespace().next().unwrap_or("");
        let keep = input[..=space].to_string();
        let word = input[space + 1..].to_string();
        let how = commands::lookup(head).map_or(Complete::Metric, |s| s.complete);
        let starting = |words: &mut dyn Iterator<Item = String>| -> Vec<String> {
            words.filter(|w| w.starts_with(&word)).collect()
        };
        let cands = match how {
            Complete::Path => return self.complete_path(input, head),
            Complete::None => Vec::new(),
            Complete::Words(ws) => starting(&mut ws.iter().map(|w| w.to_string())),
            Complete::Panels => starting(
                &mut super::panels::PANELS
                    .iter()
                    .map(|p| p.name())
                    .chain(["next", "prev"])
                    .map(String::from),
            ),
            Complete::Export if !keep.trim_end().contains(' ') => {
                starting(&mut crate::export::formats::exportable().map(|s| s.name.to_string()))
            }
            Complete::File | Complete::Export => {
                let mut files: Vec<String> = std::fs::read_dir(&self.cwd)
                    .map(|d| {
                        d.filter_map(|e| e.ok())
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                files.sort();
                starting(&mut files.into_iter())
            }
            Complete::Metric => return self.complete_metric(input),
        };
        (keep, word, cands)
    }

    /// A metric name in an expression: the word from an open quote (a name with spaces
    /// typed so far) or the last space; candidates that the expression language would
    /// not read as one name (`Avg time/rank (inc)@mean`) are offered quoted, so Enter
    /// parses what Tab wrote.
    fn complete_metric(&self, input: &str) -> (String, String, Vec<String>) {
        let start = open_quote(input)
            .or_else(|| input.rfind(' ').map(|i| i + 1))
            .unwrap_or(0);
        let keep = input[..start].to_string();
        let word = input[start..].to_string();
        let bare = word.strip_prefix('"').unwrap_or(&word);
        let mut cands: Vec<String> = self
            .profile
            .metrics
            .names()
            .into_iter()
            .chain(["name", "type", "depth", "leaf"].map(String::from))
            .filter(|n| n.starts_with(bare))
            .map(|n| quote_metric(&n))
            .collect();
        cands.dedup();
        (keep, word, cands)
    }

    /// A path is the whole argument (quoted when it has spaces): completes one segment
    /// under the part already typed.
    fn complete_path(&self, input: &str, head: &str) -> (String, String, Vec<String>) {
        let after = input[head.len()..].trim_start();
        let keep = input[..input.len() - after.len()].to_string();
        let word = after.trim_start_matches('"').to_string();
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
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut c: Vec<String> = level
            .into_iter()
            .map(|n| {
                let p = paths::path_of(cct, n);
                let seg = p.rsplit('/').next().unwrap_or(&p).to_string();
                let slash = if cct.has_children(n) { "/" } else { "" };
                (seg.clone(), format!("{prefix}{seg}{slash}"))
            })
            .filter(|(seg, _)| seg.starts_with(leaf))
            .map(|(_, full)| quote(full))
            .collect();
        c.sort();
        c.dedup();
        (keep, word, c)
    }
}

/// Where an unclosed `"` opens in `input`, if one does.
fn open_quote(input: &str) -> Option<usize> {
    let mut open = None;
    let mut escaped = false;
    for (i, ch) in input.char_indices() {
        match ch {
            '\\' if !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => open = if open.is_some() { None } else { Some(i) },
            _ => {}
        }
        escaped = false;
    }
    open
}

/// A metric name as an expression reads it: bare when it is a word (`time`,
/// `gpu_time@run1`) or a word and `(inc)`, else quoted with its quotes escaped; the
/// closing quote is left to Tab (one candidate) or to Enter.
pub(crate) fn quote_metric(name: &str) -> String {
    let word = |w: &str| {
        let mut c = w.chars();
        c.next().is_some_and(|f| f.is_alphabetic() || f == '_')
            && c.all(|x| x.is_alphanumeric() || x == '_' || x == '@')
    };
    let plain = match name.strip_suffix(" (inc)") {
        Some(base) => word(base),
        None => word(name),
    };
    if plain {
        name.to_string()
    } else {
        format!("\"{}", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
