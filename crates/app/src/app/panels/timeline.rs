//! The timeline panel: the visible window, the lane and time under the cursor, the
//! selected instance; zoom, pan and the jump to a kernel's launch. The stack chart's
//! cursor, lanes and links are in `nav`.

mod mark;
mod nav;
pub use nav::{log, parse, print, MarkArg, ScreenRow, TimelineCmd};

use super::super::command::{format_time, Command, PanelMove, ZoomSpec};
use super::super::{paths, App, CmdError};
use super::PanelId;
use crate::gpu::timeline::LaneIndex;
use crate::model::events::NONE_U32;
use crate::model::NO_NODE;

#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// Visible window, absolute ns.
    pub window: (i64, i64),
    pub lane: usize,
    /// The time under the cursor column, absolute ns.
    pub cursor_t: i64,
    /// The kernel instance selected on the timeline (event index).
    pub selected: Option<u32>,
    pub lane_offset: usize,
    /// Show CPU threads below the GPU lanes.
    pub show_cpu: bool,
    /// The shortest gap `gap next|prev` stops at, as last given.
    pub gap_min: Option<i64>,
    /// The cursor's stack row in its lane (0: the outermost slices).
    pub row: usize,
    /// Lanes (indices into `lanes()`) drawn as one row, and lanes not drawn.
    pub collapsed: Vec<usize>,
    pub hidden: Vec<usize>,
    /// The slices linked with the selection: a kernel's launch, a runtime call's
    /// kernels; both lanes mark them.
    pub linked: Vec<u32>,
    /// The counter tracks (`gpu::counters`), keyed by the number of samples.
    pub counters: super::memo::Memo<usize, Vec<crate::gpu::counters::Track>>,
    /// Every instance of one tree node (`timeline mark`), found when the mark is set.
    pub marks: Option<std::sync::Arc<crate::gpu::marks::Marks>>,
    /// An ensemble's members (`EventTable::members`) drawn as their header alone, and
    /// the member whose header the cursor is on.
    pub collapsed_groups: Vec<u16>,
    pub group: Option<u16>,
    /// (launching runtime call, GPU activity) pairs sorted, built on the first
    /// selection of a runtime call: its kernels by a binary search, not a pass over
    /// every activity per selection. Keyed by the number of activities.
    pub launched: super::memo::Memo<usize, Vec<(u32, u32)>>,
}

/// One timeline lane: its label, index, and whether it is a GPU stream.
pub struct LaneRef<'a> {
    pub label: String,
    pub index: &'a LaneIndex,
    pub gpu: bool,
    /// The ensemble member it belongs to (0 for one profile).
    pub member: u16,
}

impl App {
    /// The timeline's lanes: GPU streams, then CPU threads when shown.
    pub fn lanes(&self) -> Vec<LaneRef<'_>> {
        let Some(g) = &self.gpu else {
            return Vec::new();
        };
        let mut out: Vec<LaneRef<'_>> = g
            .lanes
            .iter()
            .zip(&g.model.lanes)
            .map(|(index, l)| LaneRef {
                label: l.label(),
                index,
                gpu: true,
                member: l.member,
            })
            .collect();
        // Without GPU lanes the CPU threads are the timeline.
        if let (true, Some(ev)) = (
            self.timeline.show_cpu || g.lanes.is_empty(),
            self.profile.events.as_ref(),
        ) {
            out.extend(g.cpu(ev).lanes.iter().map(|(label, index)| {
                LaneRef {
                    label: label.clone(),
                    index,
                    gpu: false,
                    member: index
                        .events
                        .first()
                        .map_or(0, |&i| ev.member_of(i as usize)),
                }
            }));
        }
        out
    }

    /// The trace's counter tracks, sorted once on the first frame that shows them.
    pub fn counter_tracks(&self) -> std::sync::Arc<Vec<crate::gpu::counters::Track>> {
        let (Some(c), Some(ev)) = (self.profile.counters.as_ref(), self.profile.events.as_ref())
        else {
            return Default::default();
        };
        self.timeline
            .counters
            .get(&c.ts.len(), || crate::gpu::counters::tracks(c, &ev.strings))
    }

    /// A time relative to the trace's origin (what the ruler and `zoom A-B` count from).
    pub fn rel(&self, t: i64) -> i64 {
        t - self.gpu.as_ref().map(|g| g.origin).unwrap_or(0)
    }

    pub(super) fn set_window(&mut self, a: i64, b: i64) -> Command {
        let (a, b) = (a.min(b - 1), b.max(a + 1));
        self.timeline.window = (a, b);
        if self.timeline.cursor_t < a || self.timeline.cursor_t >= b {
            self.timeline.cursor_t = a + (b - a) / 2;
        }
        Command::Zoom(ZoomSpec::Window(self.rel(a), self.rel(b)))
    }

    /// The ensemble members' labels when the events are an ensemble's (two or more).
    pub fn timeline_groups(&self) -> &[String] {
        match self.profile.events.as_ref() {
            Some(ev) if ev.members.len() > 1 => &ev.members,
            _ => &[],
        }
    }

    pub fn origin_label(&self, t: i64) -> String {
        format_time(self.rel(t))
    }

    pub(super) fn timeline_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::Zoom(spec) => {
                let span = self.need_timeline()?.span;
                if self.timeline.window.1 <= self.timeline.window.0 {
                    self.set_window(span.0, span.1);
                }
                let origin = self.gpu.as_ref().unwrap().origin;
                let (a, b) = self.timeline.window;
                let c = self.timeline.cursor_t.clamp(a, b);
                let logged = match spec {
                    ZoomSpec::Window(x, y) => self.set_window(origin + x, origin + y),
                    ZoomSpec::Fit => self.set_window(span.0, span.1),
                    ZoomSpec::In => {
                        let (na, nb) = (c - (c - a) / 2, c + (b - c) / 2);
                        self.set_window(na, nb.max(na + 2))
                    }
                    ZoomSpec::Out => self.set_window(c - (c - a) * 2, c + (b - c) * 2),
                    ZoomSpec::Kernel => {
                        let i = self
                            .selected_instance()
                            .ok_or("select a kernel first (n/N on a lane)")?;
                        let ev = self.profile.events.as_ref().unwrap();
                        let (s, d) = (ev.ts[i as usize], ev.dur[i as usize].max(1));
                        self.timeline.cursor_t = s;
                        self.set_window(s - d / 10 - 1, s + d + d / 10 + 1)
                    }
                };
                Ok(Some(logged))
            }
            Command::Pan(right) => {
                let span = self.need_timeline()?.span;
                if self.timeline.window.1 <= self.timeline.window.0 {
                    self.set_window(span.0, span.1);
                }
                let (a, b) = self.timeline.window;
                let step = ((b - a) / 4).max(1) * if right { 1 } else { -1 };
                self.timeline.cursor_t += step;
                Ok(Some(self.set_window(a + step, b + step)))
            }
            Command::Lanes(all) => {
                self.need_timeline()?;
                self.timeline.show_cpu = all;
                let n = self.lanes().len();
                self.timeline.lane = self.timeline.lane.min(n.saturating_sub(1));
                Ok(Some(Command::Lanes(all)))
            }
            Command::NextKernel | Command::PrevKernel => {
                self.need_timeline()?;
                let lanes = self.lanes();
                let lane = lanes.get(self.timeline.lane).ok_or("no lane")?.index;
                let forward = cmd == Command::NextKernel;
                let Some(i) = lane.neighbour(self.timeline.cursor_t, forward) else {
                    return Err(if forward {
                        "no kernel after the cursor"
                    } else {
                        "no kernel before the cursor"
                    }
                    .into());
                };
                self.go_to_slice(i);
                Ok(None)
            }
            Command::GotoLaunch => {
                self.need_timeline()?;
                let i = self.selected_instance().ok_or("select a kernel first")?;
                let ev = self.profile.events.as_ref().unwrap();
                let r = ev.launch.get(i as usize).copied().unwrap_or(NONE_U32);
                // The launch's node in the loaded tree, found again by path in the current one.
                let node = if r == NONE_U32 {
                    NO_NODE
                } else {
                    ev.node.get(r as usize).copied().unwrap_or(NO_NODE)
                };
                let target = if node == NO_NODE {
                    ev.node.get(i as usize).copied().unwrap_or(NO_NODE)
                } else {
                    node
                };
                if target == NO_NODE {
                    return Err("this kernel's launch is not in the trace".into());
                }
                // A CPU slice goes to its own node; an activity to its launch (or, without
                // one, its own node, which HPCToolkit puts under the launching context).
                let launched = ev.kind[i as usize].is_gpu_activity();
                let path = paths::path_of(self.original().0, target);
                let n = paths::resolve(&self.profile.cct, &path).map_err(|_| {
                    CmdError::plain(format!("{path} is not in the current tree (filtered out?)"))
                })?;
                self.view.panel = PanelId::of(&super::tree::Tree);
                self.tree.reveal(n);
                self.info(if launched {
                    format!("launched from {path}")
                } else {
                    format!("at {path}")
                });
                Ok(Some(Command::Panel(PanelMove::To(self.panel))))
            }
            Command::Timeline(t) => self.timeline_nav(t),
            other => Err(format!("{other} is not a timeline command").into()),
        }
    }
}

/// The timeline panel: GPU streams and CPU threads over time, its state
/// `ViewState::timeline`.
pub struct Timeline;

impl super::Panel for Timeline {
    fn usable(&self, app: &App) -> bool {
        app.gpu.is_some() || app.events_pending()
    }

    /// The first time, the window is the GPU activity's span.
    fn open(&self, app: &mut App) -> Result<(), CmdError> {
        // Low-memory mode: the timeline is drawn from the summary.
        if !app.events_pending() {
            app.need_timeline()?;
        }
        app.initial_window();
        Ok(())
    }

    /// Up and down move between stack rows (a lane's depths, then the next lane).
    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        app.timeline_move_rows(delta);
        true
    }

    fn scroll_table(&self, _: &mut App, _: i64) -> bool {
        false
    }

    /// The window, lanes and selection start afresh.
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}

    fn position(&self, app: &App) -> (usize, usize) {
        let n = app.lanes().len();
        ((app.timeline.lane + 1).min(n), n)
    }
}
