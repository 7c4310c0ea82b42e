//! The panels, one slice each: its state and commands here under its name, its view
//! under the same name in `ui::panels`. This file holds the list of panels, switching
//! between them, and the GPU facts the kernel, timeline and summary panels share.

pub mod gaps;
pub mod heatmap;
pub mod kernels;
pub mod memo;
pub mod summary;
pub mod timeline;
pub mod tree;

use super::command::{Command, PanelChoice};
use super::{App, CmdError};
use crate::gpu::classify::Categories;
use crate::gpu::gaps::Gap;
use crate::gpu::timeline::LaneIndex;
use crate::gpu::GpuModel;

pub use kernels::KernelsView;
pub use summary::SummaryView;
pub use timeline::{LaneRef, TimelineView};

pub const PANELS: [PanelChoice; 5] = [
    PanelChoice::Tree,
    PanelChoice::Heatmap,
    PanelChoice::Kernels,
    PanelChoice::Timeline,
    PanelChoice::Summary,
];

/// GPU facts of the loaded trace, built once.
pub struct GpuState {
    pub model: GpuModel,
    pub lanes: Vec<LaneIndex>,
    /// Start of the trace (all events): timeline times are shown from here.
    pub origin: i64,
    /// First start and last end of the GPU activities.
    pub span: (i64, i64),
    /// CPU threads (their slices), shown below the GPU lanes on request.
    pub cpu_lanes: Vec<(String, LaneIndex)>,
    /// The (pid, tid) of each CPU lane, to find the thread that launched a kernel.
    pub cpu_keys: Vec<(u32, u32)>,
    /// Idle gaps of every lane: the GPU lanes, then the CPU lanes, in `lanes()` order.
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
        let cpu_keys = threads.iter().map(|(k, _)| *k).collect();
        let cpu_lanes: Vec<(String, LaneIndex)> = threads
            .into_iter()
            .map(|((_, t), evs)| {
                (
                    format!("CPU t{}", ev.strings.resolve(t)),
                    LaneIndex::new(ev, &evs),
                )
            })
            .collect();
        // A trace without GPU activity (an OTF2 trace of an MPI code, a CPU-only Chrome
        // trace) still has a timeline: its CPU threads are the lanes, and the span is
        // theirs.
        let spans: Vec<(i64, i64)> = if model.activities.is_empty() {
            cpu_lanes.iter().filter_map(|(_, l)| l.span()).collect()
        } else {
            lanes.iter().filter_map(|l| l.span()).collect()
        };
        let start = spans.iter().map(|s| s.0).min()?;
        let end = spans.iter().map(|s| s.1).max()?;
        let origin = ev.ts.iter().copied().min().unwrap_or(start).min(start);
        let gaps = lanes
            .iter()
            .chain(cpu_lanes.iter().map(|(_, l)| l))
            .map(crate::gpu::gaps::of_lane)
            .collect();
        Some(GpuState {
            model,
            lanes,
            origin,
            span: (start, end.max(start + 1)),
            cpu_lanes,
            cpu_keys,
            gaps,
        })
    }
}

impl App {
    /// The GPU state of a trace with GPU activity (kernels, memcpy, memset): what the
    /// kernels table and the breakdowns need. A trace with CPU lanes only has a
    /// timeline (`need_timeline`) but no GPU activity.
    pub fn gpu_activity(&self) -> Option<&GpuState> {
        self.gpu.as_ref().filter(|g| !g.model.activities.is_empty())
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
            Command::Panel(choice) => {
                // Next/prev skip the GPU panels when the profile has no GPU activity.
                let usable: Vec<PanelChoice> = PANELS
                    .iter()
                    .copied()
                    .filter(|p| match p {
                        PanelChoice::Kernels => {
                            self.gpu_activity().is_some() || self.loading() || self.lod().is_some()
                        }
                        PanelChoice::Timeline => {
                            self.gpu.is_some() || self.loading() || self.lod().is_some()
                        }
                        _ => true,
                    })
                    .collect();
                let i = usable.iter().position(|p| *p == self.panel).unwrap_or(0);
                let next = match choice {
                    PanelChoice::Next => usable[(i + 1) % usable.len()],
                    PanelChoice::Prev => usable[(i + usable.len() - 1) % usable.len()],
                    p => p,
                };
                // Low-memory mode: both panels draw from the summary.
                if !self.loading() && self.lod().is_none() {
                    match next {
                        PanelChoice::Kernels => drop(self.need_gpu()?),
                        PanelChoice::Timeline => drop(self.need_timeline()?),
                        _ => {}
                    }
                }
                self.panel = next;
                if next == PanelChoice::Timeline {
                    self.initial_window();
                }
                Ok(Some(Command::Panel(next)))
            }
            c @ (Command::Kernels(_) | Command::SelectKernel(_)) => self.kernels_command(c),
            c @ (Command::Zoom(_)
            | Command::Pan(_)
            | Command::Lanes(_)
            | Command::NextKernel
            | Command::PrevKernel
            | Command::GotoLaunch) => self.timeline_command(c),
            c @ (Command::Gap(_) | Command::Gaps { .. }) => self.gap_command(c),
            other => Err(format!("{other} is not a panel command").into()),
        }
    }

    /// Cursor movement in the active panel; false when the tree should handle it.
    pub(super) fn panel_move(&mut self, delta: isize) -> bool {
        match self.panel {
            PanelChoice::Kernels => {
                let n = self.kernels.rows.len();
                if n > 0 {
                    self.kernels.cursor =
                        (self.kernels.cursor as isize + delta).clamp(0, n as isize - 1) as usize;
                }
                true
            }
            PanelChoice::Timeline => {
                let n = self.lanes().len();
                if n > 0 {
                    self.timeline.lane =
                        (self.timeline.lane as isize + delta).clamp(0, n as isize - 1) as usize;
                }
                true
            }
            PanelChoice::Summary => {
                self.summary.scroll = (self.summary.scroll as isize + delta).max(0) as usize;
                true
            }
            _ => false,
        }
    }
}
