//! Application state and the one `update` that changes it. Keys resolve through the
//! keymap to commands; the views in `ui` are pure functions of this state.

pub mod command;
pub mod keymap;
pub mod keys;
pub mod paths;
pub mod tree_state;

use ratatui::crossterm::event::KeyCode;

use crate::model::{PreOrder, Profile};
use crate::ui::heat::HeatScale;
use command::{Command, MetricChoice, PromptKind, SortSpec};
use keymap::Keymap;
use keys::Key;
use tree_state::TreeState;

#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    /// By a metric column.
    Metric {
        column: String,
        descending: bool,
    },
    Name {
        descending: bool,
    },
    /// File (data) order, as Hatchet prints.
    Data,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Normal,
    Prompt {
        kind: PromptKind,
        input: String,
        /// Index into history while browsing it with Up/Down.
        history_pos: Option<usize>,
    },
    Help {
        scroll: usize,
    },
    MetricPicker {
        selected: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub level: Level,
    pub text: String,
    /// For parse errors: where to draw the caret under the input echoed in `text`.
    pub caret: Option<(usize, usize)>,
}

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub text: String,
    /// Matching node ids, sorted by id.
    pub matches: Vec<u32>,
}

pub struct App {
    pub profile: Profile,
    pub tree: TreeState,
    pub metric: String,
    pub metric2: Option<String>,
    pub sort: SortKey,
    pub search: Option<Search>,
    pub mode: Mode,
    pub message: Option<Message>,
    pub quit: bool,
    pub keymap: Keymap,
    /// Rows of the tree pane (set from the terminal size; paging needs it).
    pub page: usize,
    pub heat: HeatScale,
    /// Sum of the primary inclusive metric over the roots (the 100 %).
    pub total: f64,
    /// Commands that changed the view, in canonical form (the session log).
    pub log: Vec<String>,
    pub log_nav: bool,
    pub history: Vec<String>,
}

impl App {
    pub fn new(profile: Profile, keymap: Keymap) -> App {
        let metric = if profile.metrics.has(&profile.default_metric) {
            profile.default_metric.clone()
        } else {
            profile
                .metrics
                .base_metrics()
                .first()
                .cloned()
                .unwrap_or_default()
        };
        let metric2 = profile
            .metrics
            .base_metrics()
            .into_iter()
            .find(|m| *m != metric && m != "count");
        let sort = SortKey::Metric {
            column: profile.metrics.inclusive_of(&metric),
            descending: true,
        };
        let po = PreOrder::build(&profile.cct, |_| {});
        let tree = TreeState::new(&profile.cct, po);
        let mut app = App {
            profile,
            tree,
            metric,
            metric2,
            sort,
            search: None,
            mode: Mode::Normal,
            message: None,
            quit: false,
            keymap,
            page: 20,
            heat: HeatScale::default(),
            total: 0.0,
            log: Vec::new(),
            log_nav: false,
            history: Vec::new(),
        };
        app.resort();
        app.refresh_metric();
        // Start with the roots open, and chains of single children below them, so the
        // first real branching level is on screen.
        for r in app.profile.cct.root_ids() {
            let mut n = r;
            for _ in 0..4 {
                app.tree.set_open(n, true);
                match app.profile.cct.children(n) {
                    [only] => n = *only,
                    _ => break,
                }
            }
        }
        app.tree.rebuild();
        for w in app.profile.warnings.clone() {
            app.message = Some(Message {
                level: Level::Warning,
                text: w,
                caret: None,
            });
        }
        app
    }

    pub fn inclusive_column(&self) -> String {
        self.profile.metrics.inclusive_of(&self.metric)
    }

    fn refresh_metric(&mut self) {
        let col = self.inclusive_column();
        let m = &self.profile.metrics;
        if let Some(v) = m.values(&col) {
            self.heat = HeatScale::from_values(v.iter().copied());
            self.total = self
                .profile
                .cct
                .root_ids()
                .iter()
                .map(|&r| v[r as usize])
                .filter(|x| x.is_finite())
                .sum();
        }
    }

    fn resort(&mut self) {
        let cct = &self.profile.cct;
        let po = match &self.sort {
            SortKey::Data => PreOrder::build(cct, |v| v.sort_unstable()),
            SortKey::Name { descending } => {
                let d = *descending;
                PreOrder::build(cct, |v| {
                    v.sort_by(|&a, &b| {
                        let o = cct.name(a).cmp(cct.name(b)).then(a.cmp(&b));
                        if d {
                            o.reverse()
                        } else {
                            o
                        }
                    })
                })
            }
            SortKey::Metric { column, descending } => {
                let vals = self.profile.metrics.values(column).unwrap_or(&[]);
                let d = *descending;
                let key = |n: u32| {
                    let v = vals.get(n as usize).copied().unwrap_or(f64::NAN);
                    if v.is_nan() {
                        f64::NEG_INFINITY
                    } else {
                        v
                    }
                };
                PreOrder::build(cct, |v| {
                    v.sort_by(|&a, &b| {
                        let o = key(a).total_cmp(&key(b));
                        let o = if d { o.reverse() } else { o };
                        o.then(a.cmp(&b))
                    })
                })
            }
        };
        self.tree.reorder(po);
    }

    pub fn sort_label(&self) -> String {
        match &self.sort {
            SortKey::Data => "data order".into(),
            SortKey::Name { descending } => {
                format!("name {}", if *descending { "desc" } else { "asc" })
            }
            SortKey::Metric { column, descending } => {
                format!("{column} {}", if *descending { "desc" } else { "asc" })
            }
        }
    }

    fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            level: Level::Info,
            text: text.into(),
            caret: None,
        });
    }

    fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            level: Level::Error,
            text: text.into(),
            caret: None,
        });
    }

    /// The node a command acts on: its path, or the cursor.
    fn target(&self, path: &Option<String>) -> Result<u32, String> {
        match path {
            Some(p) => paths::resolve(&self.profile.cct, p),
            None => self
                .tree
                .selected()
                .ok_or_else(|| "the tree is empty".into()),
        }
    }

    pub fn path_of(&self, node: u32) -> String {
        paths::path_of(&self.profile.cct, node)
    }

    /// Runs a command text (from a key, the `:` line, `--cmd` or a session file).
    pub fn run(&mut self, text: &str) -> Result<(), String> {
        match Command::parse(text) {
            Ok(c) => self.update(c),
            Err(e) => {
                let msg = format!("{text}: {e}");
                self.message = Some(Message {
                    level: Level::Error,
                    text: msg.clone(),
                    caret: Some((e.pos, e.len.max(1))),
                });
                Err(msg)
            }
        }
    }

    /// The one place state changes. View-changing commands are logged in canonical form
    /// with explicit node paths, so replaying the log needs no cursor.
    pub fn update(&mut self, cmd: Command) -> Result<(), String> {
        let logged = match self.apply(cmd.clone()) {
            Ok(l) => l,
            Err(e) => {
                self.error(e.clone());
                return Err(e);
            }
        };
        if cmd.changes_view() || self.log_nav {
            if let Some(l) = logged {
                self.log.push(l.to_string());
            }
        }
        self.tree.scroll_into_view(self.page);
        Ok(())
    }

    fn apply(&mut self, cmd: Command) -> Result<Option<Command>, String> {
        let page = self.page.max(1) as isize;
        let logged = cmd.clone();
        match cmd {
            Command::Down(n) => self.tree.move_by(n as isize),
            Command::Up(n) => self.tree.move_by(-(n as isize)),
            Command::PageDown => self.tree.move_by(page),
            Command::PageUp => self.tree.move_by(-page),
            Command::HalfPageDown => self.tree.move_by(page / 2),
            Command::HalfPageUp => self.tree.move_by(-page / 2),
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
                let n = self.target(&Some(p))?;
                self.tree.reveal(n);
            }
            Command::Toggle(p) => {
                let n = self.target(&p)?;
                let open = !self.tree.is_open(n);
                return self.fold(n, open, |n| Command::Toggle(Some(n)));
            }
            Command::Expand(p) => {
                let n = self.target(&p)?;
                return self.fold(n, true, |n| Command::Expand(Some(n)));
            }
            Command::Collapse(p) => {
                let n = self.target(&p)?;
                return self.fold(n, false, |n| Command::Collapse(Some(n)));
            }
            Command::CollapseOrParent => {
                let n = self.target(&None)?;
                let has_kids = !self.profile.cct.children(n).is_empty();
                if self.tree.is_open(n) && has_kids {
                    return self.fold(n, false, |n| Command::Collapse(Some(n)));
                }
                if let Some(p) = self.tree.parent(n) {
                    self.tree.reveal(p);
                }
                return Ok(self.log_nav.then_some(Command::Parent));
            }
            Command::ExpandChildren(p) | Command::CollapseChildren(p) => {
                let n = self.target(&p)?;
                let open = matches!(logged, Command::ExpandChildren(_));
                if open {
                    self.tree.set_open(n, true);
                }
                for c in self.tree.children(n) {
                    self.tree.set_open(c, open);
                }
                self.tree.rebuild();
                let path = Some(self.path_of(n));
                return Ok(Some(if open {
                    Command::ExpandChildren(path)
                } else {
                    Command::CollapseChildren(path)
                }));
            }
            Command::ExpandAll(p) | Command::CollapseAll(p) => {
                let n = self.target(&p)?;
                let open = matches!(logged, Command::ExpandAll(_));
                self.tree.set_subtree(n, open);
                self.tree.rebuild();
                let path = Some(self.path_of(n));
                return Ok(Some(if open {
                    Command::ExpandAll(path)
                } else {
                    Command::CollapseAll(path)
                }));
            }
            Command::HotPath(p) => {
                let start = self.target(&p)?;
                let col = self.inclusive_column();
                let vals = self.profile.metrics.values(&col).unwrap_or(&[]).to_vec();
                let mut n = start;
                loop {
                    let kids = self.tree.children(n);
                    let best = kids.into_iter().max_by(|&a, &b| {
                        let va = vals.get(a as usize).copied().unwrap_or(f64::NAN);
                        let vb = vals.get(b as usize).copied().unwrap_or(f64::NAN);
                        va.total_cmp(&vb).then(b.cmp(&a))
                    });
                    match best {
                        Some(c) => {
                            self.tree.set_open(n, true);
                            n = c;
                        }
                        None => break,
                    }
                }
                self.tree.rebuild();
                self.tree.reveal(n);
                return Ok(Some(Command::HotPath(Some(self.path_of(start)))));
            }
            Command::Search(text) => {
                self.search_for(&text);
                self.jump_match(true, true);
            }
            Command::SearchNext => self.jump_match(true, false),
            Command::SearchPrev => self.jump_match(false, false),
            Command::Sort(spec) => {
                self.sort = match spec {
                    SortSpec::Next => self.next_sort(),
                    SortSpec::By { key, descending } => match key.as_str() {
                        "name" => SortKey::Name { descending },
                        "data" => SortKey::Data,
                        k => {
                            let column = if self.profile.metrics.has(k) {
                                k.to_string()
                            } else {
                                return Err(self.unknown_metric(k));
                            };
                            SortKey::Metric { column, descending }
                        }
                    },
                };
                self.resort();
                let label = self.sort_label();
                self.info(format!("sorted by {label}"));
                return Ok(Some(Command::Sort(self.sort_spec())));
            }
            Command::Metric(choice) => {
                let m = self.choose_metric(&choice, Some(&self.metric.clone()))?;
                let Some(m) = m else {
                    return Err("the primary metric cannot be off".into());
                };
                let followed = matches!(&self.sort, SortKey::Metric { column, .. } if *column == self.inclusive_column());
                self.metric = m.clone();
                self.refresh_metric();
                if followed {
                    self.sort = SortKey::Metric {
                        column: self.inclusive_column(),
                        descending: true,
                    };
                    self.resort();
                }
                self.mode = Mode::Normal;
                return Ok(Some(Command::Metric(MetricChoice::Named(m))));
            }
            Command::Metric2(choice) => {
                let cur = self.metric2.clone();
                self.metric2 = self.choose_metric(&choice, cur.as_ref())?;
                return Ok(Some(Command::Metric2(match &self.metric2 {
                    Some(m) => MetricChoice::Named(m.clone()),
                    None => MetricChoice::Off,
                })));
            }
            Command::PickMetric => {
                let names = self.profile.metrics.base_metrics();
                let selected = names.iter().position(|m| *m == self.metric).unwrap_or(0);
                self.mode = Mode::MetricPicker { selected };
            }
            Command::Prompt(kind) => {
                self.mode = Mode::Prompt {
                    kind,
                    input: String::new(),
                    history_pos: None,
                };
            }
            Command::Help => self.mode = Mode::Help { scroll: 0 },
            Command::Quit => self.quit = true,
        }
        Ok(Some(logged))
    }

    fn fold(
        &mut self,
        n: u32,
        open: bool,
        canonical: fn(String) -> Command,
    ) -> Result<Option<Command>, String> {
        self.tree.set_open(n, open);
        self.tree.rebuild();
        Ok(Some(canonical(self.path_of(n))))
    }

    fn unknown_metric(&self, m: &str) -> String {
        format!(
            "unknown metric {m:?} (metrics: {})",
            self.profile.metrics.names().join(", ")
        )
    }

    fn choose_metric(
        &self,
        choice: &MetricChoice,
        current: Option<&String>,
    ) -> Result<Option<String>, String> {
        let names = self.profile.metrics.base_metrics();
        match choice {
            MetricChoice::Off => Ok(None),
            MetricChoice::Named(m) => {
                if self.profile.metrics.has(m) {
                    Ok(Some(m.clone()))
                } else {
                    Err(self.unknown_metric(m))
                }
            }
            MetricChoice::Next => {
                if names.is_empty() {
                    return Err("this profile has no metrics".into());
                }
                let i = current
                    .and_then(|c| names.iter().position(|m| m == c))
                    .map(|i| (i + 1) % names.len())
                    .unwrap_or(0);
                Ok(Some(names[i].clone()))
            }
        }
    }

    /// s cycles: primary inclusive, primary exclusive, name, data order.
    fn next_sort(&self) -> SortKey {
        let inc = self.inclusive_column();
        let exc = self.metric.clone();
        match &self.sort {
            SortKey::Metric { column, .. } if *column == inc && inc != exc => SortKey::Metric {
                column: exc,
                descending: true,
            },
            SortKey::Metric { .. } => SortKey::Name { descending: false },
            SortKey::Name { .. } => SortKey::Data,
            SortKey::Data => SortKey::Metric {
                column: inc,
                descending: true,
            },
        }
    }

    fn sort_spec(&self) -> SortSpec {
        match &self.sort {
            SortKey::Data => SortSpec::By {
                key: "data".into(),
                descending: false,
            },
            SortKey::Name { descending } => SortSpec::By {
                key: "name".into(),
                descending: *descending,
            },
            SortKey::Metric { column, descending } => SortSpec::By {
                key: column.clone(),
                descending: *descending,
            },
        }
    }

    fn search_for(&mut self, text: &str) {
        // Smart case: an upper-case letter makes the search case-sensitive.
        let sensitive = text.chars().any(|c| c.is_uppercase());
        let needle = if sensitive {
            text.to_string()
        } else {
            text.to_lowercase()
        };
        let cct = &self.profile.cct;
        let po = &self.tree.po;
        let mut matches: Vec<u32> = po
            .node
            .iter()
            .copied()
            .filter(|&n| {
                let name = cct.name(n);
                if sensitive {
                    name.contains(&needle)
                } else {
                    name.to_lowercase().contains(&needle)
                }
            })
            .collect();
        matches.sort_unstable();
        self.search = Some(Search {
            text: text.to_string(),
            matches,
        });
    }

    fn jump_match(&mut self, forward: bool, include_current: bool) {
        let Some(s) = &self.search else {
            self.error("no search yet: press / to search");
            return;
        };
        if s.matches.is_empty() {
            let t = s.text.clone();
            self.error(format!("no node matches {t:?}"));
            return;
        }
        let po = &self.tree.po;
        let cur = self.tree.selected_pos().unwrap_or(0);
        let mut positions: Vec<u32> = s.matches.iter().map(|&n| po.pos[n as usize]).collect();
        positions.sort_unstable();
        let idx = if forward {
            positions
                .iter()
                .position(|&p| if include_current { p >= cur } else { p > cur })
                .unwrap_or(0)
        } else {
            positions
                .iter()
                .rposition(|&p| p < cur)
                .unwrap_or(positions.len() - 1)
        };
        let node = po.node[positions[idx] as usize];
        let total = s.matches.len();
        self.tree.reveal(node);
        self.info(format!("match {}/{}", idx + 1, total));
    }

    /// Handles one key press in the current mode.
    pub fn on_key(&mut self, key: Key) {
        if !matches!(self.mode, Mode::Prompt { .. }) {
            self.message = None;
        }
        match self.mode.clone() {
            Mode::Normal => {
                if let Some(run) = self.keymap.lookup(&key).map(|s| s.to_string()) {
                    let _ = self.run(&run);
                }
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
