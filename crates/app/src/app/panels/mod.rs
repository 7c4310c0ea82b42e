//! The panels, one slice each: its state and commands here under its name, its view
//! under the same name in `ui::panels`. This file holds the one list of panels
//! (`registry!`), the `Panel` trait each implements, the view state they make up
//! (`ViewState`: what undo puts back), switching between them, and the GPU facts the
//! kernel, timeline and summary panels share.

pub mod flame;
pub mod functions;
pub mod gaps;
pub mod heatmap;
pub mod kernels;
pub mod memo;
pub mod sql;
pub mod summary;
pub mod timeline;
pub mod tree;

use super::command::{Command, PanelMove};
use super::{App, CmdError, Rules, Search, SortKey};
use crate::gpu::classify::Categories;
use crate::gpu::gaps::Gap;
use crate::gpu::timeline::LaneIndex;
use crate::gpu::GpuModel;
use crate::present::heat::HeatScale;

pub use kernels::KernelsView;
pub use summary::SummaryView;
pub use timeline::{LaneRef, TimelineView};

/// Every panel, in tab order (`1:tree 2:heatmap ...`; the first is the one a view
/// starts on): the one list. An entry `NAME: Panel, State;` is the panel's name —
/// what `panel NAME` takes, the tab shows and its keymap section `[[NAME]]` is called,
/// also the name of its modules `app/panels/NAME.rs` and `ui/panels/NAME.rs` and of
/// its field in `ViewState` — then its unit type, which implements `Panel` in the
/// first module and `ui::panels::View` in the second, then the type of its state,
/// defined in the first. `PANELS`, the names, `ViewState`'s panel fields, the `panel`
/// command's help line (`app::commands`) and the views' table (`ui::panels`) are all
/// built from this list, so a panel without a view, or a view without a panel, does
/// not compile. Exported (the views' crate builds its table from it too).
#[macro_export]
macro_rules! registry {
    ($then:ident) => {
        $then! {
            tree: Tree, TreeState;
            heatmap: Heatmap, HeatmapView;
            kernels: Kernels, KernelsView;
            timeline: Timeline, TimelineView;
            summary: Summary, SummaryView;
            flame: Flame, FlameView;
            functions: Functions, FunctionsView;
            sql: Sql, SqlView;
        }
    };
}
pub use crate::registry;

macro_rules! panel_list {
    ($($m:ident: $p:ident, $state:ident;)*) => {
        &[$(&$crate::app::panels::$m::$p as &dyn Panel),*]
    };
}

macro_rules! panel_names {
    ($($m:ident: $p:ident, $state:ident;)*) => {
        $(impl Named for $m::$p {
            fn name(&self) -> &'static str {
                stringify!($m)
            }
        })*
    };
}

/// The `panel` command's help line, with every panel's name.
macro_rules! panel_help {
    ($($m:ident: $p:ident, $state:ident;)*) => {
        concat!("switch the panel: ", $(stringify!($m), " | ",)* "next | prev")
    };
}
pub(crate) use panel_help;

/// `ViewState`, with a field for each panel's state.
macro_rules! view_state {
    ($($m:ident: $p:ident, $state:ident;)*) => {
        /// The view state: the tree's view (metrics, sort, reshaping rules) and each
        /// panel's state, one field per panel under its name in `registry!` (`tree`,
        /// `heatmap`, `kernels`, ...). What undo puts back is one of these, cloned
        /// whole; a replay from the loaded tree starts from a default one
        /// (`Panel::reset` says what survives). `App` derefs to it, so `app.tree`,
        /// `app.metric` or `app.kernels` read as fields of the app; code that borrows
        /// it beside another part of the app names `app.view`.
        #[derive(Clone, Default)]
        pub struct ViewState {
            pub metric: String,
            pub metric2: Option<String>,
            pub sort: SortKey,
            pub search: Option<Search>,
            /// Nodes the last filter matched (its kept ancestors are context), for
            /// `squash`.
            /// Shared, like the tree's flags: an undo checkpoint clones the view.
            pub matched: Option<std::sync::Arc<Vec<bool>>>,
            /// `derive` definitions, re-evaluated when the tree changes shape.
            pub derived: crate::app::derived::Derived,
            pub rules: Rules,
            /// The two members `diff` compares, and the metric it compared.
            pub diff: Option<(String, String)>,
            pub diff_base: Option<String>,
            /// Metadata filter on ensemble members (`meta KEY = VALUE`).
            pub meta_filter: Option<String>,
            /// The convention of the ensemble statistics in the metric table (`stats`).
            pub stats: crate::ensemble::Stats,
            pub heat: HeatScale,
            /// Sum of the primary inclusive metric over the roots (the 100 %).
            pub total: f64,
            /// Nodes of the current tree on the call paths of the selected kernel.
            pub kernel_marks: Option<std::sync::Arc<Vec<bool>>>,
            /// The panel on screen.
            pub panel: PanelId,
            $(pub $m: $m::$state,)*
        }
    };
}

/// The panels, in tab order (built from `registry!`).
pub static PANELS: &[&dyn Panel] = registry!(panel_list);

registry!(panel_names);

registry!(view_state);

/// A panel's name, given by its `registry!` entry: what `panel NAME` takes and the
/// tab shows; also its keymap section (`[[NAME]]`), whose keys come before
/// `[[normal]]` on this panel.
pub trait Named {
    fn name(&self) -> &'static str;
}

/// A panel: what `:panel NAME` switches to. Its state is its field of `ViewState`
/// (cloned whole by undo); derived data its view needs (tables, scales, ranges) is
/// kept in a `Memo` inside that state, computed on the first frame after a change.
pub trait Panel: Named + Sync {
    /// Whether `panel next|prev` stops here (a panel that cannot show this profile is
    /// skipped: the GPU panels without events).
    fn usable(&self, app: &App) -> bool;

    /// Runs before the switch to this panel: refuses with the reason it cannot show
    /// this profile, or sets its state up (the timeline's first window).
    fn open(&self, app: &mut App) -> Result<(), CmdError>;

    /// `up`/`down` on this panel: moves its cursor by `delta` rows and returns true, or
    /// false when the tree's cursor moves instead.
    fn move_cursor(&self, app: &mut App, delta: isize) -> bool;

    /// `scroll table N` on this panel: scrolls its own table sideways and returns true,
    /// or false when the summary/metadata table scrolls instead.
    fn scroll_table(&self, app: &mut App, by: i64) -> bool;

    /// A replay from the loaded tree (`reset`, undo past the kept checkpoints) starts
    /// from a default `ViewState`: this carries over what of the panel's state in
    /// `was` survives it into `now` (settings that are not view state).
    fn reset(&self, was: &mut ViewState, now: &mut ViewState);

    /// The status line's row counter: (the cursor's row, counting from 1; rows) of
    /// this panel's own list (the kernel table, the lanes), the tree's by default.
    fn position(&self, app: &App) -> (usize, usize) {
        let t = &app.tree;
        ((t.cursor + 1).min(t.visible.len()), t.visible.len())
    }
}

/// A panel, by its place in `PANELS`.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct PanelId(usize);

impl PanelId {
    /// The panel `p`. Every type that implements `Panel` is registered: its `Named`
    /// comes from its `registry!` entry.
    pub fn of(p: &dyn Panel) -> PanelId {
        let name = p.name();
        PanelId(
            PANELS
                .iter()
                .position(|q| q.name() == name)
                .unwrap_or_else(|| panic!("panel {name} is not in registry!")),
        )
    }

    /// The panel `panel WORD` names: its name, or its number on the tabs (from 1).
    pub fn parse(word: &str) -> Option<PanelId> {
        PANELS
            .iter()
            .enumerate()
            .position(|(i, p)| p.name() == word || (i + 1).to_string() == word)
            .map(PanelId)
    }

    pub fn all() -> impl Iterator<Item = PanelId> {
        (0..PANELS.len()).map(PanelId)
    }

    pub fn get(self) -> &'static dyn Panel {
        PANELS[self.0]
    }

    pub fn name(self) -> &'static str {
        self.get().name()
    }

    /// Its place in `PANELS` (and in the views' table, built from the same list).
    pub fn index(self) -> usize {
        self.0
    }

    pub fn is(self, p: &dyn Panel) -> bool {
        self.name() == p.name()
    }
}

impl std::fmt::Debug for PanelId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What `panel NAME` says of a word that names no panel.
pub fn expected_panel() -> String {
    let names: Vec<&str> = PANELS.iter().map(|p| p.name()).collect();
    format!("expected {}, next or prev", names.join(", "))
}

/// GPU facts of the loaded trace, built once.
pub struct GpuState {
    pub model: GpuModel,
    pub lanes: Vec<LaneIndex>,
    /// Start of the trace (all events): timeline times are shown from here.
    pub origin: i64,
    /// First start and last end of the GPU activities.
    pub span: (i64, i64),
    /// Idle gaps of the GPU lanes, in `lanes` order (the CPU lanes' are in `CpuLanes`).
    pub gaps: Vec<Vec<Gap>>,
    /// The CPU threads' lanes, built on the first read (`cpu`) when the trace has GPU
    /// lanes: they are shown on request only, and on a 1 GB trace they held 35 MB of
    /// the TUI's default path, about 16 bytes a CPU slice (issue 30). A trace without
    /// GPU lanes builds them with the rest, since they are its timeline.
    cpu: std::sync::OnceLock<CpuLanes>,
}

/// The CPU threads of a trace as timeline lanes, with their gaps.
pub struct CpuLanes {
    /// Each thread's label and slices.
    pub lanes: Vec<(String, LaneIndex)>,
    /// The (pid, tid) of each lane, to find the thread that launched a kernel.
    pub keys: Vec<(u32, u32)>,
    /// Idle gaps of each lane, in `lanes` order.
    pub gaps: Vec<Vec<Gap>>,
}

impl GpuState {
    pub fn new(ev: &crate::model::EventTable, categories: Categories) -> Option<GpuState> {
        let model = GpuModel::new(ev, categories);
        let lanes: Vec<LaneIndex> = model
            .lanes
            .iter()
            .map(|l| LaneIndex::new(ev, &l.events))
            .collect();
        let cpu = std::sync::OnceLock::new();
        // A trace without GPU activity (an OTF2 trace of an MPI code, a CPU-only Chrome
        // trace) still has a timeline: its CPU threads are the lanes, and the span is
        // theirs.
        let spans: Vec<(i64, i64)> = if model.activities.is_empty() {
            let c = cpu.get_or_init(|| CpuLanes::new(ev));
            c.lanes.iter().filter_map(|(_, l)| l.span()).collect()
        } else {
            lanes.iter().filter_map(|l| l.span()).collect()
        };
        let start = spans.iter().map(|s| s.0).min()?;
        let end = spans.iter().map(|s| s.1).max()?;
        let origin = ev.ts.iter().copied().min().unwrap_or(start).min(start);
        let gaps = lanes.iter().map(crate::gpu::gaps::of_lane).collect();
        Some(GpuState {
            model,
            lanes,
            origin,
            span: (start, end.max(start + 1)),
            gaps,
            cpu,
        })
    }

    /// The CPU threads' lanes of `ev` (the events this state was built from), built
    /// on the first call.
    pub fn cpu(&self, ev: &crate::model::EventTable) -> &CpuLanes {
        self.cpu.get_or_init(|| CpuLanes::new(ev))
    }

    /// Whether the CPU lanes are built yet (tests, and the memory they hold).
    pub fn cpu_built(&self) -> bool {
        self.cpu.get().is_some()
    }

    /// The gaps of lane `li` in `App::lanes()` order: the GPU lanes, then the CPU ones.
    pub fn gaps_of<'a>(&'a self, li: usize, ev: &'a crate::model::EventTable) -> &'a [Gap] {
        match self.gaps.get(li) {
            Some(g) => g,
            None => (self.cpu(ev).gaps.get(li - self.gaps.len()))
                .map(Vec::as_slice)
                .unwrap_or(&[]),
        }
    }
}

impl CpuLanes {
    fn new(ev: &crate::model::EventTable) -> CpuLanes {
        let mut threads: Vec<((u32, u32), Vec<u32>)> = Vec::new();
        let mut at: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
        for i in 0..ev.len() {
            if matches!(
                ev.kind[i],
                crate::model::EventKind::Cpu | crate::model::EventKind::Runtime
            ) {
                let key = (ev.pid[i], ev.tid[i]);
                let k = *at.entry(key).or_insert_with(|| {
                    threads.push((key, Vec::new()));
                    threads.len() - 1
                });
                threads[k].1.push(i as u32);
            }
        }
        let keys = threads.iter().map(|(k, _)| *k).collect();
        // Threads of several processes (ranks) are named by both: an OTF2 trace has a
        // `Master thread` on every rank.
        let many = threads.iter().any(|((p, _), _)| *p != threads[0].0 .0);
        // Ensemble members with threads of more than one process name them by both.
        let mut pid_of_member: std::collections::HashMap<u16, u32> = Default::default();
        let mut members_many: std::collections::HashSet<u16> = Default::default();
        for ((p, _), evs) in &threads {
            let m = ev.member_of(evs[0] as usize);
            if *pid_of_member.entry(m).or_insert(*p) != *p {
                members_many.insert(m);
            }
        }
        let lanes: Vec<(String, LaneIndex)> = threads
            .into_iter()
            .map(|((p, t), evs)| {
                let t = ev.strings.resolve(t);
                // An ensemble's member renamed its processes `LABEL:pid`.
                let mi = ev.member_of(evs[0] as usize);
                let label = if let Some(m) = ev.members.get(mi as usize) {
                    let pid = ev.strings.resolve(p);
                    let own = pid.strip_prefix(m.as_str()).unwrap_or(pid);
                    if members_many.contains(&mi) {
                        format!("{m} {} t{t}", process_short(own.trim_start_matches(':')))
                    } else {
                        format!("{m} CPU t{t}")
                    }
                } else if many {
                    format!("{} t{t}", process_short(ev.strings.resolve(p)))
                } else {
                    format!("CPU t{t}")
                };
                (label, LaneIndex::from_ids(ev, evs))
            })
            .collect();
        let gaps = lanes
            .iter()
            .map(|(_, l)| crate::gpu::gaps::of_lane(l))
            .collect();
        CpuLanes { lanes, keys, gaps }
    }
}

impl App {
    /// The GPU state of a trace with GPU activity (kernels, memcpy, memset): what the
    /// kernels table and the breakdowns need. A trace with CPU lanes only has a
    /// timeline (`need_timeline`) but no GPU activity.
    pub fn gpu_activity(&self) -> Option<&GpuState> {
        // An ensemble's events (kept for its timeline) are several traces': the kernel
        // table and the breakdowns read one trace's.
        let one = self.ensemble_events() < 2;
        self.gpu
            .as_ref()
            .filter(|g| one && !g.model.activities.is_empty())
    }

    /// The number of ensemble members whose events are merged (0 for one profile).
    pub(crate) fn ensemble_events(&self) -> usize {
        self.profile.events.as_ref().map_or(0, |e| e.members.len())
    }

    /// The timeline's lanes and span: GPU streams and CPU threads, whatever the trace.
    pub(crate) fn need_timeline(&self) -> Result<&GpuState, CmdError> {
        self.gpu
            .as_ref()
            .ok_or_else(|| self.no_events("this profile has no events to draw on a timeline"))
    }

    /// The level-of-detail summary that stands in for the events in low-memory mode.
    pub fn lod(&self) -> Option<&crate::model::lod::Lod> {
        self.profile
            .events
            .as_ref()
            .and_then(|ev| ev.lod.as_deref())
    }

    /// Why a command that needs the events cannot run: low-memory mode, a load still
    /// under way, or `none` (the profile has none).
    fn no_events(&self, none: &str) -> CmdError {
        if let Some(e) = self.not_loaded() {
            e
        } else if self.loading() {
            CmdError::plain(format!(
                "the trace's events are still loading ({})",
                self.loading_why()
            ))
        } else {
            CmdError::plain(none)
        }
    }

    /// What a command that needs single events says in low-memory mode.
    fn not_loaded(&self) -> Option<CmdError> {
        self.lod().map(|_| {
            CmdError::plain(
                "low-memory mode: single events are not loaded (the timeline shows a level of detail; reopen without --low-memory for them)",
            )
        })
    }

    pub(crate) fn need_gpu(&self) -> Result<&GpuState, CmdError> {
        self.gpu_activity().ok_or_else(|| {
            // An ensemble keeps its members' trees, not their events: saying it has
            // no GPU activity would be false of two traces full of kernels.
            let members = crate::app::compare::member_labels(self.original().1);
            // Several traces' events merged for the timeline are not one trace's: the
            // kernel table and the breakdowns read the members' traces side by side.
            let one_trace = self.profile.events.is_none() || self.ensemble_events() > 1;
            let format = self.profile.source.format;
            let traces = crate::app::members::records_devices(format);
            if one_trace && members.len() > 1 && traces {
                let list = crate::present::format::list_bounded(&members, 4);
                if members.len() > crate::app::members::MAX_MEMBERS {
                    return CmdError::plain(format!(
                        "the GPU panels read the traces of up to {} profiles: open fewer of these {} ({list})",
                        crate::app::members::MAX_MEMBERS,
                        members.len(),
                    ));
                }
                if self.member_traces.is_none() {
                    // Not read here (the TUI reads them behind the first frame).
                    return CmdError::plain(format!(
                        "the GPU panels of an ensemble of {} traces read their events, not read here: open one alone ({list})",
                        members.len(),
                    ));
                }
            }
            if one_trace && members.len() > 1 {
                return CmdError::plain(format!(
                    "no GPU activity (kernels, memcpy, memset) in these {} {} profiles",
                    members.len(),
                    format.label()
                ));
            }
            self.no_events("this profile has no GPU activity (kernels, memcpy, memset)")
        })
    }

    /// The timeline starts on the GPU activity's span (once the events are there).
    pub(crate) fn initial_window(&mut self) {
        if self.timeline.window.1 <= self.timeline.window.0 {
            if let Some((a, b)) = self.gpu.as_ref().map(|g| g.span) {
                self.set_window(a, b);
            }
        }
    }

    pub(super) fn panel_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::Panel(to) => {
                let next = match to {
                    PanelMove::To(p) => p,
                    PanelMove::Next | PanelMove::Prev => {
                        // Next/prev skip the panels that cannot show this profile.
                        let usable: Vec<PanelId> =
                            PanelId::all().filter(|p| p.get().usable(self)).collect();
                        let i = usable.iter().position(|p| *p == self.panel).unwrap_or(0);
                        let n = usable.len();
                        match to {
                            PanelMove::Next => usable[(i + 1) % n],
                            _ => usable[(i + n - 1) % n],
                        }
                    }
                };
                next.get().open(self)?;
                self.view.panel = next;
                Ok(Some(Command::Panel(PanelMove::To(next))))
            }
            c @ (Command::Kernels(_) | Command::SelectKernel(_)) => self.kernels_command(c),
            c @ (Command::Zoom(_)
            | Command::Pan(_)
            | Command::Lanes(_)
            | Command::NextKernel
            | Command::PrevKernel
            | Command::GotoLaunch
            | Command::Timeline(_)) => self.timeline_command(c),
            c @ (Command::Gap(_) | Command::Gaps { .. }) => self.gap_command(c),
            c @ Command::Flame(_) => self.flame_command(c),
            Command::Summary(t) => self.summary_command(t),
            c @ Command::Functions(_) => self.functions_command(c),
            c @ Command::Sql(_) => self.sql_command(c),
            other => Err(format!("{other} is not a panel command").into()),
        }
    }

    /// Cursor movement in the active panel; false when the tree should handle it.
    pub(super) fn panel_move(&mut self, delta: isize) -> bool {
        self.panel.get().move_cursor(self, delta)
    }

    /// Whether the GPU panels can open before their GPU state is there: the events
    /// are still loading, or low-memory mode draws them from the summary.
    pub(crate) fn events_pending(&self) -> bool {
        self.loading() || self.lod().is_some()
    }
}

/// A process's name made short for a lane label: `MPI Rank 3` -> `r3`, a number as is.
fn process_short(p: &str) -> String {
    let digits = p.len() - p.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    match digits {
        0 => p.to_string(),
        d if d == p.len() => format!("p{p}"),
        d => format!("r{}", &p[p.len() - d..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every panel is found by its name and its tab number, and `panel NAME` prints
    /// as it parses.
    #[test]
    fn panels_parse_by_name_and_number() {
        for (i, id) in PanelId::all().enumerate() {
            assert_eq!(PanelId::parse(id.name()), Some(id));
            assert_eq!(PanelId::parse(&(i + 1).to_string()), Some(id));
            assert_eq!(PanelId::of(id.get()), id);
            let text = format!("panel {}", id.name());
            assert_eq!(Command::parse(&text).unwrap().to_string(), text);
        }
        assert_eq!(PanelId::parse("0"), None);
        assert_eq!(PanelId::parse(&(PANELS.len() + 1).to_string()), None);
        let names: Vec<&str> = PANELS.iter().map(|p| p.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    /// The `panel` command's help, its error and the command table's panels follow
    /// the registry.
    #[test]
    fn the_command_table_follows_the_registry() {
        let spec = crate::app::commands::spec("panel").unwrap();
        let names: Vec<&str> = PANELS.iter().map(|p| p.name()).collect();
        let listed = format!("{} | next | prev", names.join(" | "));
        assert!(spec.help.ends_with(&listed), "{}", spec.help);
        for s in crate::app::commands::SPECS {
            if let Some(p) = s.panel {
                assert!(PanelId::parse(p).is_some(), "{}: no panel {p}", s.name);
            }
        }
        let e = Command::parse("panel nope").unwrap_err();
        assert_eq!(e.msg, expected_panel());
        assert!(e.msg.contains(PANELS[PANELS.len() - 1].name()));
    }
}
