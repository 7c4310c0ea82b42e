//! Application state and the one `update` that changes it. Keys resolve through the
//! keymap to commands; the views in `ui` are pure functions of this state.

pub mod command;
pub mod compare;
mod input;
pub mod keymap;
pub mod keys;
pub mod panels;
pub mod paths;
mod reshape;
pub mod tree_state;

use crate::model::{Cct, MetricTable, PreOrder, Profile};
use crate::present::heat::HeatScale;
use crate::session;
use command::{Command, MetricChoice, PanelChoice, PromptKind, SortSpec};
use keymap::Keymap;
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
    /// For command errors: the command text, and the byte span to underline in it.
    pub caret: Option<(String, usize, usize)>,
}

/// View rules kept as text, so they survive rebuilds of the tree (node ids change).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    pub hidden: Vec<String>,
    pub prune: Option<String>,
    pub unpruned: Vec<String>,
    pub focus: Option<String>,
    pub limit: Option<f64>,
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
    /// The tree and metrics as loaded: every reshaping starts again from here.
    pub original: (Cct, MetricTable),
    /// Nodes the last filter matched (its kept ancestors are context), for `squash`.
    pub matched: Option<Vec<bool>>,
    /// `derive` definitions, re-evaluated when the tree changes shape.
    pub derived: Vec<(String, crate::transform::derive::Arith)>,
    pub rules: Rules,
    /// Commands in effect (what undo pops) and what undo popped (what redo re-applies).
    pub applied: Vec<String>,
    pub redo: Vec<String>,
    /// True while re-applying commands after undo: nothing is logged.
    replaying: bool,
    pub session: Option<session::Writer>,
    /// Where `export` and `save` resolve relative paths, and `source` too.
    pub cwd: std::path::PathBuf,
    /// Terminal size (columns, rows), recorded in session headers.
    pub term: (u16, u16),
    /// Candidates of the last Tab in the command line (shown above it).
    pub completions: Vec<String>,
    pub panel: PanelChoice,
    /// GPU facts (None when the profile has no GPU activity).
    pub gpu: Option<panels::GpuState>,
    pub kernels: panels::KernelsView,
    pub timeline: panels::TimelineView,
    pub summary: panels::SummaryView,
    /// Nodes of the current tree on the call paths of the selected kernel.
    pub kernel_marks: Option<Vec<bool>>,
    source_depth: usize,
    pub heatmap: panels::heatmap::HeatmapView,
    /// The two members `diff` compares, and the metric it compared.
    pub diff: Option<(String, String)>,
    pub diff_base: Option<String>,
    /// Metadata filter on ensemble members (`meta KEY = VALUE`).
    pub meta_filter: Option<String>,
}

impl App {
    /// An app with the built-in kernel categories: it reads nothing from the user's
    /// config folder (the shell passes the user's categories to `with_categories`).
    pub fn new(profile: Profile, keymap: Keymap) -> App {
        App::with_categories(profile, keymap, crate::gpu::classify::Categories::builtin())
    }

    pub fn with_categories(
        profile: Profile,
        keymap: Keymap,
        cats: crate::gpu::classify::Categories,
    ) -> App {
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
        let tree = TreeState::default();
        let original = (profile.cct.clone(), profile.metrics.clone());
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
            original,
            matched: None,
            derived: Vec::new(),
            rules: Rules::default(),
            applied: Vec::new(),
            redo: Vec::new(),
            replaying: false,
            session: None,
            cwd: std::env::current_dir().unwrap_or_default(),
            term: (120, 40),
            completions: Vec::new(),
            panel: PanelChoice::Tree,
            gpu: None,
            kernels: panels::KernelsView::default(),
            timeline: panels::TimelineView::default(),
            summary: panels::SummaryView::default(),
            kernel_marks: None,
            source_depth: 0,
            heatmap: panels::heatmap::HeatmapView::default(),
            diff: None,
            diff_base: None,
            meta_filter: None,
        };
        app.set_categories(cats);
        app.default_markers();
        app.initial_view();
        let w = &app.profile.warnings;
        if !w.is_empty() {
            let text = if w.len() == 1 {
                w[0].clone()
            } else {
                format!("{} warnings: {}", w.len(), w.join("; "))
            };
            app.message = Some(Message {
                level: Level::Warning,
                text,
                caret: None,
            });
        }
        app
    }

    /// With two profiles, ◀ ▶ mark the nodes only one of them has, from the start.
    fn default_markers(&mut self) {
        let members = compare::member_labels(&self.original.1);
        if let [a, b] = members.as_slice() {
            self.diff = Some((a.clone(), b.clone()));
        }
    }

    /// Uses these kernel categories (rebuilds the GPU state).
    pub fn set_categories(&mut self, cats: crate::gpu::classify::Categories) {
        self.gpu = self
            .profile
            .events
            .as_ref()
            .and_then(|ev| panels::GpuState::new(ev, cats));
        self.summary.clear();
        self.refresh_kernels();
    }

    /// The view as loaded: default metrics and sort, roots (and single-child chains
    /// below them) open.
    fn initial_view(&mut self) {
        let p = &self.profile;
        self.metric = if p.metrics.has(&p.default_metric) {
            p.default_metric.clone()
        } else {
            p.metrics
                .base_metrics()
                .first()
                .cloned()
                .unwrap_or_default()
        };
        self.metric2 = p
            .metrics
            .base_metrics()
            .into_iter()
            .find(|m| *m != self.metric && m != "count");
        self.sort = SortKey::Metric {
            column: p.metrics.inclusive_of(&self.metric),
            descending: true,
        };
        self.search = None;
        // resort() below builds the pre-order index.
        self.tree = TreeState::new(&self.profile.cct, PreOrder::default());
        self.resort();
        self.refresh_metric();
        // Start with the roots open, and chains of single children below them, so the
        // first real branching level is on screen.
        for r in self.profile.cct.root_ids() {
            let mut n = r;
            for _ in 0..4 {
                self.tree.set_open(n, true);
                let mut kids = self.profile.cct.children(n);
                match (kids.next(), kids.next()) {
                    (Some(only), None) => n = only,
                    _ => break,
                }
            }
        }
        self.tree.cursor = 0;
        self.tree.offset = 0;
        self.refresh_rules();
    }

    /// Children in data order, as Hatchet prints them, without logging a command (the
    /// headless `tree` starts from it).
    pub fn use_data_order(&mut self) {
        self.sort = SortKey::Data;
        self.resort();
    }

    pub fn inclusive_column(&self) -> String {
        self.profile.metrics.inclusive_of(&self.metric)
    }

    fn refresh_metric(&mut self) {
        // The heatmap's columns and scales derive from the metric table.
        self.heatmap.clear();
        let col = self.inclusive_column();
        let m = &self.profile.metrics;
        self.tree.rules.weight = m.values(&col).map(|v| v.to_vec()).unwrap_or_default();
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
        if self.rules.limit.is_some() {
            self.refresh_rules();
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
    fn target(&self, path: &Option<String>) -> Result<u32, CmdError> {
        match path {
            Some(p) => paths::resolve(&self.profile.cct, p).map_err(CmdError::plain),
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
                self.message = Some(Message {
                    level: Level::Error,
                    text: e.msg.clone(),
                    caret: Some((text.to_string(), e.pos, e.len.max(1))),
                });
                Err(format!("{text}: {e}"))
            }
        }
    }

    /// The one place state changes. View-changing commands are logged in canonical form
    /// with explicit node paths, so replaying the log needs no cursor.
    pub fn update(&mut self, cmd: Command) -> Result<(), String> {
        let logged = match self.apply(cmd.clone()) {
            Ok(l) => l,
            Err(e) => {
                if let Some(caret) = e.caret {
                    let col = caret
                        .0
                        .get(..caret.1)
                        .map(|s| s.chars().count())
                        .unwrap_or(caret.1)
                        + 1;
                    self.message = Some(Message {
                        level: Level::Error,
                        text: e.msg.clone(),
                        caret: Some(caret),
                    });
                    return Err(format!("column {col}: {}", e.msg));
                }
                self.error(e.msg.clone());
                return Err(e.msg);
            }
        };
        let ui_only = matches!(
            cmd,
            Command::Quit
                | Command::Prompt(_)
                | Command::Help
                | Command::PickMetric
                | Command::Export { .. }
                | Command::Save(_)
        );
        if !self.replaying && !ui_only && (cmd.changes_view() || self.log_nav) {
            if let Some(l) = logged {
                let text = l.to_string();
                if l.changes_view()
                    && !matches!(
                        l,
                        Command::Undo | Command::Redo | Command::Reset | Command::PopFilter
                    )
                {
                    self.applied.push(text.clone());
                    if !matches!(cmd, Command::Redo) {
                        self.redo.clear();
                    }
                }
                self.record(&text);
            }
        }
        self.tree.scroll_into_view(self.page);
        Ok(())
    }

    /// Appends to the session log, and to the session file when there is one.
    fn record(&mut self, text: &str) {
        self.log.push(text.to_string());
        if let Some(w) = self.session.as_mut() {
            if let Err(e) = w.append(text) {
                let path = w.path.display().to_string();
                self.session = None;
                self.error(format!("session file {path}: {e}; logging stopped"));
            }
        }
    }

    /// Rebuilds the view from the loaded tree by re-applying `applied` (undo, reset).
    fn replay_applied(&mut self) -> Result<(), CmdError> {
        let keep = self.tree.selected().map(|n| self.path_of(n));
        let (cct, metrics) = self.original.clone();
        self.profile.cct = cct;
        self.profile.metrics = metrics;
        self.matched = None;
        self.derived.clear();
        self.rules = Rules::default();
        self.panel = PanelChoice::Tree;
        self.heatmap = panels::heatmap::HeatmapView::default();
        self.diff = None;
        self.diff_base = None;
        self.meta_filter = None;
        self.default_markers();
        self.kernels = panels::KernelsView::default();
        self.timeline = panels::TimelineView::default();
        self.kernel_marks = None;
        self.refresh_kernels();
        self.initial_view();
        self.replaying = true;
        let cmds = self.applied.clone();
        let mut result = Ok(());
        for c in &cmds {
            if let Err(e) = Command::parse(c)
                .map_err(|e| e.msg)
                .and_then(|c| self.apply(c).map_err(|e| e.msg))
            {
                result = Err(CmdError::plain(format!("replaying {c:?}: {e}")));
                break;
            }
        }
        self.replaying = false;
        if let Some(p) = keep {
            if let Ok(n) = paths::resolve(&self.profile.cct, &p) {
                self.tree.reveal(n);
            }
        }
        result
    }

    fn apply(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let page = self.page.max(1) as isize;
        let logged = cmd.clone();
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
        if let Some(d) = delta {
            if self.panel_move(d) {
                return Ok(self.log_nav.then_some(logged));
            }
        }
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
                let has_kids = self.profile.cct.has_children(n);
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
                    // A node without a value is never the heaviest.
                    let value = |n: u32| {
                        let v = vals.get(n as usize).copied().unwrap_or(f64::NAN);
                        if v.is_nan() {
                            f64::NEG_INFINITY
                        } else {
                            v
                        }
                    };
                    let best = kids
                        .into_iter()
                        .max_by(|&a, &b| value(a).total_cmp(&value(b)).then(b.cmp(&a)));
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
                if self.search.as_ref().is_some_and(|s| s.matches.is_empty()) {
                    return Err(format!("no node matches {text:?}").into());
                }
                self.jump_match(true, true);
            }
            Command::SearchNext => self.jump_match(true, false),
            Command::SearchPrev => self.jump_match(false, false),
            Command::Sort(SortSpec::Next) if self.panel == PanelChoice::Kernels => {
                return self.panel_command(Command::Kernels(command::KernelsSpec {
                    by: Some("next".into()),
                    ..Default::default()
                }));
            }
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
                                return Err(self.unknown_metric(k).into());
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
            Command::Undo => {
                let Some(last) = self.applied.pop() else {
                    return Err("nothing to undo".into());
                };
                self.redo.push(last.clone());
                self.replay_applied()?;
                self.info(format!("undid: {last}"));
            }
            Command::Redo => {
                let Some(next) = self.redo.pop() else {
                    return Err("nothing to redo".into());
                };
                let c = Command::parse(&next).map_err(|e| CmdError::plain(e.msg))?;
                let logged = self.apply(c)?;
                if let Some(l) = &logged {
                    if !self.replaying {
                        self.applied.push(l.to_string());
                    }
                }
                self.info(format!("redid: {next}"));
                return Ok(Some(Command::Redo));
            }
            Command::Reset => {
                self.applied.clear();
                self.redo.clear();
                self.replay_applied()?;
                self.info("back to the tree as loaded");
            }
            Command::PopFilter => {
                let Some(i) = self
                    .applied
                    .iter()
                    .rposition(|c| reshape::is_filter_like(c))
                else {
                    return Err("no filter to pop".into());
                };
                let popped = self.applied.remove(i);
                self.replay_applied()?;
                self.info(format!("popped: {popped}"));
            }
            c @ (Command::Panel(_)
            | Command::Kernels(_)
            | Command::SelectKernel(_)
            | Command::Zoom(_)
            | Command::Pan(_)
            | Command::NextKernel
            | Command::PrevKernel
            | Command::Lanes(_)
            | Command::GotoLaunch) => return self.panel_command(c),
            c @ (Command::HeatmapNorm(_)
            | Command::HeatmapSort
            | Command::HeatmapColumn(_)
            | Command::Diff(..)
            | Command::MetaFilter(_)) => return self.compare_command(c),
            other => return self.reshape(other),
        }
        Ok(Some(logged))
    }

    fn fold(
        &mut self,
        n: u32,
        open: bool,
        canonical: fn(String) -> Command,
    ) -> Result<Option<Command>, CmdError> {
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
    ) -> Result<Option<String>, CmdError> {
        let names = self.profile.metrics.base_metrics();
        match choice {
            MetricChoice::Off => Ok(None),
            MetricChoice::Named(m) => {
                if self.profile.metrics.has(m) {
                    Ok(Some(m.clone()))
                } else {
                    Err(self.unknown_metric(m).into())
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
}

/// A command that failed: a message, and for expression errors the text and span to
/// underline.
#[derive(Debug, Clone)]
pub struct CmdError {
    pub msg: String,
    pub caret: Option<(String, usize, usize)>,
}

impl CmdError {
    pub fn plain(msg: impl Into<String>) -> CmdError {
        CmdError {
            msg: msg.into(),
            caret: None,
        }
    }
}

impl From<String> for CmdError {
    fn from(msg: String) -> CmdError {
        CmdError::plain(msg)
    }
}

impl From<&str> for CmdError {
    fn from(msg: &str) -> CmdError {
        CmdError::plain(msg)
    }
}
