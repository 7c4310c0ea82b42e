//! Application state and the one `update` that changes it. Keys resolve through the
//! keymap to commands; the views in `ui` are pure functions of this state.

pub mod background;
pub mod command;
pub mod commands;
pub mod compare;
pub mod derived;
mod input;
pub mod keymap;
pub mod keys;
pub mod members;
pub mod panels;
pub mod paths;
mod reshape;
pub mod tree_state;
mod undo;

use crate::model::{Cct, MetricTable, PreOrder, Profile};
use crate::present::heat::HeatScale;
use crate::session;
use command::{Command, PromptKind};
use commands::Log;
pub use input::{Msg, PromptEdit, UiMsg};
use keymap::Keymap;
use tree_state::TreeState;

#[derive(Debug, Clone, PartialEq, Default)]
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
    #[default]
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
    /// Every load warning, one per line (the `messages` command).
    Messages {
        scroll: usize,
    },
    MetricPicker {
        selected: usize,
    },
    /// The longest idle gaps per GPU stream (the `gaps` command); Enter jumps to one.
    Gaps {
        rows: Vec<panels::gaps::GapRow>,
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
    pub prune: Option<command::Parsed<crate::query::expr::Expr>>,
    pub unpruned: Vec<String>,
    pub focus: Option<String>,
    pub limit: Option<f64>,
}

impl Rules {
    /// Whether the rows read the inclusive column's row weights (`RowRules::weight`):
    /// only prune and limit make aggregate rows, so the column's copy waits for them.
    pub fn read_weights(&self) -> bool {
        self.prune.is_some() || self.limit.is_some()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub text: String,
    /// Matching node ids, sorted by id; shared, as an undo checkpoint clones the view.
    pub matches: std::sync::Arc<Vec<u32>>,
}

pub struct App {
    pub profile: Profile,
    /// What undo puts back: the tree's view and each panel's state (`app.tree`,
    /// `app.kernels`, ... read it through `Deref`).
    pub view: panels::ViewState,
    pub mode: Mode,
    pub message: Option<Message>,
    pub quit: bool,
    pub keymap: Keymap,
    /// Rows of the tree pane (set from the terminal size; paging needs it).
    pub page: usize,
    /// Commands that changed the view, in canonical form (the session log).
    pub log: Vec<String>,
    pub log_nav: bool,
    pub history: Vec<String>,
    /// The tree and metrics as loaded, once a command changed the profile's (every
    /// reshaping starts again from here); until then the profile's own are they
    /// (`original()`), so opening a big tree copies nothing.
    original: Option<std::sync::Arc<(Cct, MetricTable)>>,
    /// Commands in effect (what undo pops) and what undo popped (what redo re-applies),
    /// kept parsed so undo replays them without parsing.
    pub applied: Vec<Command>,
    pub redo: Vec<Command>,
    /// True while re-applying commands after undo: nothing is logged.
    replaying: bool,
    /// What undo puts back, one slot per `applied` command (None once the memory
    /// budget dropped it), the bytes they hold, and the budget.
    checkpoints: Vec<Option<undo::Checkpoint>>,
    undo_bytes: usize,
    pub undo_budget: usize,
    /// While a command runs under a checkpoint: the tree it replaced, kept for undo.
    keep_displaced: bool,
    displaced: Option<Cct>,
    pub session: Option<session::Writer>,
    /// Where `export` and `save` resolve relative paths, and `source` too.
    pub cwd: std::path::PathBuf,
    /// Terminal size (columns, rows), recorded in session headers.
    pub term: (u16, u16),
    /// Candidates of the last Tab in the command line (shown above it).
    pub completions: Vec<String>,
    /// GPU facts (None when the profile has no GPU activity).
    pub gpu: Option<panels::GpuState>,
    /// The categories of a GPU index not built yet (`App::headless`): built before the
    /// first command (`ensure_full`), never for a tree printed as loaded.
    gpu_later: Option<crate::gpu::classify::Categories>,
    /// The inclusive column's row weights, heat scale and total not made yet
    /// (`App::headless`; `ensure_full`): a tree printed as loaded reads none of them.
    metric_later: bool,
    /// The files being sourced, outermost first (canonical paths): a cycle is named
    /// once, not repeated at every level.
    sourcing: Vec<std::path::PathBuf>,
    /// Whether the error being returned already names its file and line.
    error_located: bool,
    /// The event table still loading behind a tree opened from the cache.
    pub background: Option<background::Pending>,
    /// An ensemble's member traces, for the kernel and summary panels (`members`):
    /// None until they are read.
    pub member_traces: Option<Vec<members::MemberTrace>>,
    /// Warnings and errors shown on the status line since start-up, oldest first (the
    /// messages view lists them after the load warnings; the status line cuts them).
    pub past_messages: Vec<String>,
    /// The details pane's scroll: (the node it was scrolled on, lines skipped); another
    /// node shows from the top.
    pub details_scroll: (u32, usize),
    /// `toggle details` / `toggle count`: the details pane and the tree's count column
    /// hidden, so a 100-column screen gives the names their width.
    pub hide_details: bool,
    pub hide_count: bool,
    /// The furthest an overlay (help, messages) can scroll, as last drawn: `G` goes
    /// there and `k` moves up from it at once.
    pub overlay_max: std::cell::Cell<usize>,
    /// Notes on Hatchet metric names that stood for grove's columns
    /// (`metric `Avg time/rank` is grove's `Avg time/rank (inc)``), for the headless
    /// shell to print on stderr; the status line shows them too.
    pub notes: Vec<String>,
}

/// The view state reads as the app's own fields (`app.tree`, `app.metric`,
/// `app.kernels.cursor`); code that borrows it beside another part of the app (the
/// profile, the GPU state) names `app.view`.
impl std::ops::Deref for App {
    type Target = panels::ViewState;

    fn deref(&self) -> &panels::ViewState {
        &self.view
    }
}

impl std::ops::DerefMut for App {
    fn deref_mut(&mut self) -> &mut panels::ViewState {
        &mut self.view
    }
}

/// The second metric at start: the first other metric that is not `count`; when that
/// is no time but the profile has another time metric, that one instead (a RAJAPerf
/// ensemble would otherwise show `BlockSize@1/Base_CUDA-block_128`), of the same
/// statistic as the primary metric when there is one (`Min time/rank (inc)@mean`
/// beside `Avg time/rank (inc)@mean`).
fn default_metric2(m: &MetricTable, metric: &str) -> Option<String> {
    use crate::model::metrics::is_time_metric;
    let first = m
        .base_metrics()
        .into_iter()
        .find(|x| x != metric && x != "count");
    if first
        .as_deref()
        .is_some_and(|x| is_time_metric(x, m.unit(x)))
    {
        return first;
    }
    let times: Vec<String> = m
        .picker_metrics()
        .into_iter()
        .filter(|x| x != metric && is_time_metric(x, m.unit(x)))
        .collect();
    let stat = crate::ensemble::split_column(metric)
        .map(|x| x.1)
        .filter(|l| crate::ensemble::STATS.contains(l));
    let same_stat = stat.and_then(|s| {
        times
            .iter()
            .find(|x| crate::ensemble::split_column(x).is_some_and(|y| y.1 == s))
    });
    same_stat.or(times.first()).cloned().or(first)
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
        App::build(profile, keymap, cats, false)
    }

    /// The app of a headless command that prints the tree (`grove tree`): children in
    /// data order from the start (Hatchet's; a metric order built first and replaced
    /// held two pre-orders at once, 90 MB on a 2.5M-node tree), and the GPU index and
    /// the inclusive column's row weights (a copy of the column) made only before a
    /// command runs (`ensure_full`): the tree as loaded needs neither.
    pub fn headless(
        profile: Profile,
        keymap: Keymap,
        cats: crate::gpu::classify::Categories,
    ) -> App {
        App::build(profile, keymap, cats, true)
    }

    fn build(
        profile: Profile,
        keymap: Keymap,
        cats: crate::gpu::classify::Categories,
        headless: bool,
    ) -> App {
        // Commands allocate and free arrays of a node each (memory::for_commands).
        crate::memory::for_commands();
        // `initial_view` below sets the metrics, the sort and the tree's view.
        let mut app = App {
            profile,
            view: panels::ViewState::default(),
            mode: Mode::Normal,
            message: None,
            quit: false,
            keymap,
            page: 20,
            log: Vec::new(),
            log_nav: false,
            history: Vec::new(),
            original: None,
            applied: Vec::new(),
            redo: Vec::new(),
            replaying: false,
            checkpoints: Vec::new(),
            undo_bytes: 0,
            undo_budget: undo::UNDO_BUDGET,
            keep_displaced: false,
            displaced: None,
            session: None,
            cwd: std::env::current_dir().unwrap_or_default(),
            term: (120, 40),
            completions: Vec::new(),
            gpu: None,
            gpu_later: None,
            metric_later: headless,
            sourcing: Vec::new(),
            error_located: false,
            background: None,
            member_traces: None,
            past_messages: Vec::new(),
            details_scroll: (0, 0),
            hide_details: false,
            hide_count: false,
            overlay_max: std::cell::Cell::new(usize::MAX),
            notes: Vec::new(),
        };
        if headless {
            app.kernels.categories = Some(cats.clone());
            app.gpu_later = Some(cats);
            app.sort = SortKey::Data;
        } else {
            app.set_categories(cats);
        }
        app.default_markers();
        app.initial_view_with(!headless, !headless);
        if let Some(text) = startup_message(&app.profile.warnings) {
            app.message = Some(Message {
                level: Level::Warning,
                text,
                caret: None,
            });
        }
        app
    }

    /// With two profiles, the markers column shows the nodes only one of them has, from
    /// the start: the second read as the newer (`diff SECOND FIRST`), as `grove diff
    /// FIRST SECOND` reads them.
    fn default_markers(&mut self) {
        let members = compare::member_labels(self.original().1);
        if let [a, b] = members.as_slice() {
            self.diff = Some((b.clone(), a.clone()));
        }
    }

    /// The tree and metrics as loaded.
    pub fn original(&self) -> (&Cct, &MetricTable) {
        match &self.original {
            Some(o) => (&o.0, &o.1),
            None => (&self.profile.cct, &self.profile.metrics),
        }
    }

    /// Keeps the loaded tree and metrics before the profile's first change: called
    /// wherever the profile's tree or table is replaced or changed.
    fn keep_original(&mut self) {
        if self.original.is_none() {
            let kept = (self.profile.cct.clone(), self.profile.metrics.clone());
            self.original = Some(std::sync::Arc::new(kept));
        }
    }

    /// Makes what `App::headless` left for the first command: the GPU index, the
    /// inclusive column's row weights and heat scale. A no-op after the first call.
    pub fn ensure_full(&mut self) {
        if let Some(cats) = self.gpu_later.take() {
            self.set_categories(cats);
        }
        if std::mem::take(&mut self.metric_later) {
            self.refresh_metric();
        }
    }

    /// Uses these kernel categories (rebuilds the GPU state).
    pub fn set_categories(&mut self, cats: crate::gpu::classify::Categories) {
        self.gpu_later = None;
        self.kernels.categories = Some(cats.clone());
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
        self.initial_view_by(true)
    }

    /// `initial_view`, sorted by the inclusive metric, descending, when `by_metric`,
    /// else by the sort already set.
    fn initial_view_by(&mut self, by_metric: bool) {
        self.initial_view_with(by_metric, false)
    }

    /// `initial_view_by`; with `first` (the TUI's app as it is made), a tree saved in
    /// the cache with this order (`SavedOrder`: a warm open) is shown in it without
    /// sorting or reading the column, and a tree sorted here records its order for the
    /// cache write that follows a cold open.
    fn initial_view_with(&mut self, by_metric: bool, first: bool) {
        let p = &self.profile;
        let v = &mut self.view;
        v.metric = p.shown_metric();
        v.metric2 = default_metric2(&p.metrics, &v.metric);
        if by_metric {
            v.sort = SortKey::Metric {
                column: p.metrics.inclusive_of(&v.metric),
                descending: true,
            };
        }
        v.search = None;
        let col = self.inclusive_column();
        let saved = match first && by_metric {
            true => self.profile.cct.saved_order().filter(|s| s.column == col),
            false => None,
        }
        .cloned();
        self.tree = TreeState::new(&self.profile.cct, PreOrder::default());
        match &saved {
            Some(s) => {
                self.tree.reorder_shared(s.po.clone());
                self.flame.clear();
                self.functions.clear();
                self.refresh_metric_with(Some(HeatScale {
                    min: s.min,
                    max: s.max,
                }));
            }
            None => {
                // The sort and the heat scale each read the inclusive column whole: one
                // read in place from the cache entry (`summary::tree_file`) is copied
                // once, here, so the file is read once.
                if by_metric {
                    let _ = self.profile.metrics.column(&col);
                }
                self.resort();
                self.refresh_metric();
                if first && by_metric {
                    self.profile.cct.save_order(crate::model::SavedOrder {
                        column: col,
                        min: self.view.heat.min,
                        max: self.view.heat.max,
                        po: self.tree.po.clone(),
                    });
                }
            }
        }
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

    /// Whether a share of the total means something for this column (the `%` column):
    /// measured metrics add up over nodes; a derived ratio or product, and the
    /// ensemble's spread statistics (`@std`, `@cv`, `@argmax`) do not.
    pub fn is_additive(&self, column: &str) -> bool {
        let base =
            crate::model::metrics::base_of_inclusive(column).unwrap_or_else(|| column.to_string());
        if let Some((_, stat)) = base.rsplit_once('@') {
            if matches!(stat, "std" | "cv" | "argmax") {
                return false;
            }
        }
        !self
            .derived
            .iter()
            .any(|(name, e)| name == base && !crate::transform::derive::additive(e))
    }

    fn refresh_metric(&mut self) {
        self.refresh_metric_with(None)
    }

    /// `refresh_metric`, with the heat scale given (a saved order's) rather than found
    /// in a pass over the column.
    fn refresh_metric_with(&mut self, heat: Option<HeatScale>) {
        // The heatmap's columns and scales derive from the metric table.
        self.heatmap.clear();
        self.flame.clear();
        self.functions.clear();
        if self.metric_later {
            return;
        }
        let col = self.inclusive_column();
        let m = &self.profile.metrics;
        // Row weights (a copy of the column: 20 MB on a 2.5M-node tree) only for the
        // rules that read them (`refresh_rules`).
        self.view.tree.rules.weight = match self.rules.read_weights() {
            true => m.column(&col).unwrap_or_default(),
            false => Default::default(),
        };
        if let Some(v) = m.values(&col) {
            self.view.heat = heat.unwrap_or_else(|| HeatScale::from_values(v.iter().copied()));
            self.view.total = self
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
        // The first order, kept for the cache write (`initial_view_with`), is not worth
        // its memory once the tree is shown in another.
        self.profile.cct.forget_order();
        let cct = &self.profile.cct;
        let po = match &self.sort {
            SortKey::Metric { column, descending } => {
                let vals = self.profile.metrics.values(column).unwrap_or(&[]);
                PreOrder::by_metric(cct, vals, *descending)
            }
            // Child lists are in id order already (a child is added after its older
            // siblings, with a larger id): checking costs less than sorting again.
            SortKey::Data => PreOrder::build(cct, |v| {
                if !v.is_sorted() {
                    v.sort_unstable()
                }
            }),
            SortKey::Name { descending } => {
                let d = *descending;
                // The first 8 bytes of every name, read once: most comparisons end
                // there instead of following two pointers into the frames' text.
                let head: Vec<u64> = (0..cct.len() as u32)
                    .map(|n| name_head(cct.name(n)))
                    .collect();
                PreOrder::build(cct, |v| {
                    // Ties are broken by id: the order is total, stability is moot.
                    v.sort_unstable_by(|&a, &b| {
                        let o = head[a as usize]
                            .cmp(&head[b as usize])
                            .then_with(|| cct.name(a).cmp(cct.name(b)))
                            .then(a.cmp(&b));
                        if d {
                            o.reverse()
                        } else {
                            o
                        }
                    })
                })
            }
        };
        self.tree.reorder(po);
        // The flame graph's layout is keyed by the pre-order's address, which a new
        // one may reuse once the old is freed: forget it here rather than trust it. So
        // is the functions table.
        self.flame.clear();
        self.functions.clear();
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
        let r = self.run_parsed(text);
        self.keep_message();
        r
    }

    /// Keeps the status line's warning or error for the messages view (once: a
    /// message left in place over several keys is one entry).
    fn keep_message(&mut self) {
        if let Some(m) = &self.message {
            let fresh = self.past_messages.last() != Some(&m.text)
                && Some(&m.text) != startup_message(&self.profile.warnings).as_ref();
            if m.level != Level::Info && fresh {
                // The latest ones are what a user scrolls back for; a bound keeps a
                // long session's memory flat.
                if self.past_messages.len() >= MAX_PAST_MESSAGES {
                    self.past_messages.remove(0);
                }
                self.past_messages.push(m.text.clone());
            }
        }
    }

    fn run_parsed(&mut self, text: &str) -> Result<(), String> {
        // A command may need the GPU index (`gaps`, `panel kernels`) or the row
        // weights (`limit`): they are there as on a full start.
        self.ensure_full();
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
        let r = self.update_inner(cmd);
        self.keep_message();
        r
    }

    fn update_inner(&mut self, cmd: Command) -> Result<(), String> {
        // The table says what is logged: never the UI commands, moves only with
        // --log-nav, and only view changes go on the undo stack (with a checkpoint).
        let class = cmd.log();
        let undoable = !self.replaying && matches!(class, Log::View);
        let said_before = self.message.clone();
        let applied = if undoable {
            self.apply_undoable(cmd.clone())
        } else {
            self.apply(cmd.clone())
        };
        let logged = match applied {
            Ok(l) => {
                self.note_aliases(&cmd, said_before);
                l
            }
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
        if !self.replaying && !matches!(class, Log::Ui) && (class.changes_view() || self.log_nav) {
            if let Some(l) = logged {
                self.record(&l.to_string());
                if undoable && matches!(l.log(), Log::View) {
                    self.redo.clear();
                }
            }
        }
        let page = self.page;
        self.tree.scroll_into_view(page);
        Ok(())
    }

    /// Says which grove column each Hatchet metric name in a command stood for, on the
    /// status line (before what the command said) and in `notes`.
    fn note_aliases(&mut self, cmd: &Command, said_before: Option<Message>) {
        use command::{MetricChoice, Selector, SortSpec};
        let names: Vec<&str> = match cmd {
            Command::Metric(MetricChoice::Named(m)) | Command::Metric2(MetricChoice::Named(m)) => {
                vec![m.as_str()]
            }
            Command::Sort(SortSpec::By { key, .. }) => vec![key.as_str()],
            Command::Filter { query, .. } => match &query.value {
                Selector::Expr(e) => crate::query::expr::fields(e),
                Selector::Hatchet(_) => Vec::new(),
            },
            Command::Prune(e) => crate::query::expr::fields(&e.value),
            _ => Vec::new(),
        };
        let mut notes: Vec<String> = Vec::new();
        for n in names {
            if let Some(note) = self.profile.metrics.alias_note(n) {
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
        if notes.is_empty() {
            return;
        }
        let mut text = notes.join("; ");
        if let Some(m) = self
            .message
            .as_ref()
            .filter(|m| Some(*m) != said_before.as_ref())
        {
            text = format!("{text}; {}", m.text);
        }
        self.info(text);
        self.notes.extend(notes);
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
            matches: std::sync::Arc::new(matches),
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

/// How many past warnings and errors the messages view keeps.
const MAX_PAST_MESSAGES: usize = 1000;

/// The status line at start-up: the load warnings on one line (the messages view
/// lists them one by one).
fn startup_message(w: &[String]) -> Option<String> {
    match w {
        [] => None,
        [one] => Some(one.clone()),
        _ => Some(format!("{} warnings: {}", w.len(), w.join("; "))),
    }
}

/// A name's first 8 bytes as a big-endian number (zero-padded): comparing two of these
/// orders names as comparing the text does, up to the 8th byte.
fn name_head(name: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = name.len().min(8);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    u64::from_be_bytes(b)
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
