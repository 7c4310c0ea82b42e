//! The GPU panels' state and commands: the kernel table, the per-stream timeline and
//! the summary; plus panel switching and the links between them and the tree.

use super::command::{format_time, Command, KernelsSpec, PanelChoice, ZoomSpec};
use super::{paths, App, CmdError};
use crate::gpu::classify::Categories;
use crate::gpu::kernels::{self, KernelRow, KernelSort, TableOptions};
use crate::gpu::timeline::LaneIndex;
use crate::gpu::GpuModel;
use crate::model::events::NONE_U32;
use crate::model::NO_NODE;

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
}

#[derive(Debug, Clone)]
pub struct KernelsView {
    pub top: Option<usize>,
    pub sort: KernelSort,
    pub memory: bool,
    pub by_category: bool,
    pub cursor: usize,
    pub offset: usize,
    pub rows: Vec<KernelRow>,
    /// The kernel whose call paths and instances are marked.
    pub selected: Option<String>,
}

impl Default for KernelsView {
    fn default() -> Self {
        KernelsView {
            top: None,
            sort: KernelSort::Total,
            memory: false,
            by_category: false,
            cursor: 0,
            offset: 0,
            rows: Vec::new(),
            selected: None,
        }
    }
}

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
}

impl GpuState {
    pub fn new(ev: &crate::model::EventTable, categories: Categories) -> Option<GpuState> {
        let model = GpuModel::new(ev, categories);
        if model.activities.is_empty() {
            return None;
        }
        let lanes: Vec<LaneIndex> = model
            .lanes
            .iter()
            .map(|l| LaneIndex::new(ev, &l.events))
            .collect();
        let start = lanes.iter().filter_map(|l| l.span()).map(|s| s.0).min()?;
        let end = lanes.iter().filter_map(|l| l.span()).map(|s| s.1).max()?;
        let origin = ev.ts.iter().copied().min().unwrap_or(start).min(start);
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
        let cpu_lanes = threads
            .into_iter()
            .map(|((_, t), evs)| {
                (
                    format!("CPU t{}", ev.strings.resolve(t)),
                    LaneIndex::new(ev, &evs),
                )
            })
            .collect();
        Some(GpuState {
            model,
            lanes,
            origin,
            span: (start, end.max(start + 1)),
            cpu_lanes,
        })
    }
}

/// One timeline lane: its label, index, and whether it is a GPU stream.
pub struct LaneRef<'a> {
    pub label: String,
    pub index: &'a LaneIndex,
    pub gpu: bool,
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
            })
            .collect();
        if self.timeline.show_cpu {
            out.extend(g.cpu_lanes.iter().map(|(label, index)| LaneRef {
                label: label.clone(),
                index,
                gpu: false,
            }));
        }
        out
    }

    /// Recomputes the kernel rows for the current options.
    pub(super) fn refresh_kernels(&mut self) {
        let (Some(g), Some(ev)) = (self.gpu.as_ref(), self.profile.events.as_ref()) else {
            return;
        };
        let k = &mut self.kernels;
        k.rows = kernels::table(
            ev,
            &g.model,
            &TableOptions {
                all: k.memory,
                by_category: k.by_category,
                sort: k.sort,
            },
        );
        if let Some(top) = k.top {
            k.rows.truncate(top);
        }
        k.cursor = k.cursor.min(k.rows.len().saturating_sub(1));
    }

    /// Marks the nodes of the current tree that ran the selected kernel, and their
    /// call paths.
    pub(super) fn refresh_marks(&mut self) {
        let Some(name) = self.kernels.selected.clone() else {
            self.kernel_marks = None;
            return;
        };
        let cct = &self.profile.cct;
        let hits: Vec<bool> = (0..cct.len() as u32)
            .map(|n| {
                let f = cct.frame(n);
                &*f.name == name.as_str()
                    && matches!(&*f.kind, "kernel" | "gpu_memcpy" | "gpu_memset")
            })
            .collect();
        self.kernel_marks = Some(crate::transform::with_ancestors(cct, &hits));
    }

    fn need_gpu(&self) -> Result<&GpuState, CmdError> {
        self.gpu.as_ref().ok_or_else(|| {
            CmdError::plain("this profile has no GPU activity (kernels, memcpy, memset)")
        })
    }

    fn rel(&self, t: i64) -> i64 {
        t - self.gpu.as_ref().map(|g| g.origin).unwrap_or(0)
    }

    fn set_window(&mut self, a: i64, b: i64) -> Command {
        let (a, b) = (a.min(b - 1), b.max(a + 1));
        self.timeline.window = (a, b);
        if self.timeline.cursor_t < a || self.timeline.cursor_t >= b {
            self.timeline.cursor_t = a + (b - a) / 2;
        }
        Command::Zoom(ZoomSpec::Window(self.rel(a), self.rel(b)))
    }

    /// The selected kernel instance: on the timeline, or the first instance of the
    /// kernel row under the cursor.
    pub fn selected_instance(&self) -> Option<u32> {
        if self.panel == PanelChoice::Timeline {
            return self.timeline.selected;
        }
        self.kernels
            .rows
            .get(self.kernels.cursor)
            .and_then(|r| r.instances.first().copied())
            .or(self.timeline.selected)
    }

    pub(super) fn panel_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::Panel(choice) => {
                // Next/prev skip the GPU panels when the profile has no GPU activity.
                let usable: Vec<PanelChoice> = PANELS
                    .iter()
                    .copied()
                    .filter(|p| {
                        self.gpu.is_some()
                            || !matches!(p, PanelChoice::Kernels | PanelChoice::Timeline)
                    })
                    .collect();
                let i = usable.iter().position(|p| *p == self.panel).unwrap_or(0);
                let next = match choice {
                    PanelChoice::Next => usable[(i + 1) % usable.len()],
                    PanelChoice::Prev => usable[(i + usable.len() - 1) % usable.len()],
                    p => p,
                };
                if matches!(next, PanelChoice::Kernels | PanelChoice::Timeline) {
                    self.need_gpu()?;
                }
                self.panel = next;
                if next == PanelChoice::Timeline && self.timeline.window.1 <= self.timeline.window.0
                {
                    let (a, b) = self.need_gpu()?.span;
                    self.set_window(a, b);
                }
                Ok(Some(Command::Panel(next)))
            }
            Command::Kernels(spec) => {
                self.need_gpu()?;
                let k = &mut self.kernels;
                if let Some(t) = spec.top {
                    k.top = t;
                }
                if let Some(b) = &spec.by {
                    k.sort = match b.as_str() {
                        "next" => k.sort.next(),
                        b => KernelSort::parse(b).unwrap_or(k.sort),
                    };
                }
                if let Some(m) = spec.memory {
                    k.memory = m;
                }
                if let Some(c) = spec.by_category {
                    k.by_category = c;
                }
                self.refresh_kernels();
                let k = &self.kernels;
                Ok(Some(Command::Kernels(KernelsSpec {
                    top: Some(k.top),
                    by: Some(k.sort.name().to_string()),
                    memory: Some(k.memory),
                    by_category: Some(k.by_category),
                })))
            }
            Command::SelectKernel(name) => {
                let g = self.need_gpu()?;
                let name = match name {
                    Some(n) => n,
                    None => {
                        let ev = self.profile.events.as_ref().unwrap();
                        match self.panel {
                            PanelChoice::Timeline => self
                                .timeline
                                .selected
                                .map(|i| ev.name_of(i as usize).to_string())
                                .ok_or("no kernel is selected on the timeline")?,
                            _ => {
                                let r = self
                                    .kernels
                                    .rows
                                    .get(self.kernels.cursor)
                                    .ok_or("no kernel row")?;
                                if self.kernels.by_category {
                                    return Err(
                                        "select a kernel in the per-name table (group name)".into(),
                                    );
                                }
                                r.name.clone()
                            }
                        }
                    }
                };
                let ev = self.profile.events.as_ref().unwrap();
                if !g
                    .model
                    .activities
                    .iter()
                    .any(|&i| ev.name_of(i as usize) == name)
                {
                    return Err(format!("no GPU activity is named {name:?}").into());
                }
                self.kernels.selected = Some(name.clone());
                self.refresh_marks();
                Ok(Some(Command::SelectKernel(Some(name))))
            }
            Command::Zoom(spec) => {
                let span = self.need_gpu()?.span;
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
                let span = self.need_gpu()?.span;
                if self.timeline.window.1 <= self.timeline.window.0 {
                    self.set_window(span.0, span.1);
                }
                let (a, b) = self.timeline.window;
                let step = ((b - a) / 4).max(1) * if right { 1 } else { -1 };
                self.timeline.cursor_t += step;
                Ok(Some(self.set_window(a + step, b + step)))
            }
            Command::Lanes(all) => {
                self.need_gpu()?;
                self.timeline.show_cpu = all;
                let n = self.lanes().len();
                self.timeline.lane = self.timeline.lane.min(n.saturating_sub(1));
                Ok(Some(Command::Lanes(all)))
            }
            Command::NextKernel | Command::PrevKernel => {
                self.need_gpu()?;
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
                let ev = self.profile.events.as_ref().unwrap();
                let t = ev.ts[i as usize];
                self.timeline.selected = Some(i);
                self.timeline.cursor_t = t;
                let (a, b) = self.timeline.window;
                if t < a || t >= b {
                    let w = b - a;
                    self.timeline.window = (t - w / 2, t + w / 2);
                }
                Ok(None)
            }
            Command::GotoLaunch => {
                self.need_gpu()?;
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
                let path = paths::path_of(&self.original.0, target);
                let n = paths::resolve(&self.profile.cct, &path).map_err(|_| {
                    CmdError::plain(format!("{path} is not in the current tree (filtered out?)"))
                })?;
                self.panel = PanelChoice::Tree;
                self.tree.reveal(n);
                self.info(format!("launched from {path}"));
                Ok(Some(Command::Panel(PanelChoice::Tree)))
            }
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
                self.summary_scroll = (self.summary_scroll as isize + delta).max(0) as usize;
                true
            }
            _ => false,
        }
    }

    pub fn origin_label(&self, t: i64) -> String {
        format_time(self.rel(t))
    }
}
