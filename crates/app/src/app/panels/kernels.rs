//! The kernels panel: the kernel table (rows computed when its options change), the
//! selected kernel and its marks on the tree.

use std::sync::Arc;

use super::super::command::{Command, KernelsSpec};
use super::super::{App, CmdError};
use super::memo::Memo;
use crate::gpu::kernels::{self, KernelRow, KernelSort, TableOptions};

#[derive(Debug, Clone)]
pub struct KernelsView {
    pub top: Option<usize>,
    pub sort: KernelSort,
    pub memory: bool,
    pub by_category: bool,
    pub cursor: usize,
    pub offset: usize,
    /// Shared, so the undo checkpoint a view command takes (a timeline zoom too) does
    /// not copy every row's instances (an index per GPU activity of the trace).
    pub rows: Arc<Vec<KernelRow>>,
    /// Each row's shown name, computed with the rows: short, and distinct where the
    /// kernels are (`gpu::short_names`).
    pub short: Arc<Vec<String>>,
    /// The short names cut to the name column's width (and ellipsis) so that names
    /// that differ still differ on screen (`present::distinct`): made for the first
    /// frame at a width, cleared with the rows.
    pub cuts: Memo<(usize, &'static str), Vec<String>>,
    /// The largest bar (of the sorted-by value), kept with the rows so that a frame
    /// reads only the rows on screen.
    pub bar_max: f64,
    /// The kernel whose call paths and instances are marked.
    pub selected: Option<String>,
    /// Characters of the full kernel names scrolled off to the left (`scroll table N`):
    /// 0 shows the short names, more shows the full names from there.
    pub hscroll: usize,
    /// The kernel categories of the app, for a table read from a low-memory summary
    /// (`gpu::lod`), which has no GPU model to carry them.
    pub categories: Option<crate::gpu::classify::Categories>,
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
            rows: Default::default(),
            short: Default::default(),
            cuts: Memo::default(),
            bar_max: 1.0,
            selected: None,
            hscroll: 0,
            categories: None,
        }
    }
}

impl App {
    /// Recomputes the kernel rows for the current options.
    pub(crate) fn refresh_kernels(&mut self) {
        let merged = self.ensemble_events() > 1;
        let k = &mut self.view.kernels;
        let opt = TableOptions {
            all: k.memory,
            by_category: k.by_category,
            sort: k.sort,
        };
        // An ensemble's merged events (its timeline's) are several traces': its kernel
        // table is the members' side by side.
        let events = self.profile.events.as_ref().filter(|_| !merged);
        let mut rows = match (events, &self.member_traces) {
            (Some(ev), _) => match (ev.lod.as_deref(), self.gpu.as_ref(), &k.categories) {
                (Some(lod), _, Some(cats)) => crate::gpu::lod::table(ev, lod, cats, &opt).0,
                (None, Some(g), _) => kernels::table(ev, &g.model, &opt),
                _ => return,
            },
            // An ensemble of traces: its members' tables side by side.
            (None, Some(members)) if !members.is_empty() => {
                let per: Vec<(String, Vec<KernelRow>)> = members
                    .iter()
                    .filter_map(|m| {
                        let ev = m.profile.events.as_ref()?;
                        Some((m.label.clone(), kernels::table(ev, &m.model, &opt)))
                    })
                    .collect();
                kernels::side_by_side(per, opt.sort)
            }
            _ => return,
        };
        if let Some(top) = k.top {
            kernels::top_kernels(&mut rows, top);
        }
        k.rows = Arc::new(rows);
        k.short = Arc::new(if k.by_category {
            k.rows.iter().map(|r| r.name.clone()).collect()
        } else {
            let names: Vec<&str> = k.rows.iter().map(|r| r.name.as_str()).collect();
            // Always with `…`: under ASCII the screen folds it to `~`.
            crate::gpu::short_names::distinct_short_names(&names, "…")
        });
        k.cuts.clear();
        k.cursor = k.cursor.min(k.rows.len().saturating_sub(1));
        let sort = k.sort;
        k.bar_max = k
            .rows
            .iter()
            .map(|r| bar_value(sort, r))
            .fold(0.0, f64::max)
            .max(1.0);
    }

    /// Marks the nodes of the current tree that ran the selected kernel, and their
    /// call paths.
    pub(crate) fn refresh_marks(&mut self) {
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
        self.kernel_marks = Some(Arc::new(crate::transform::with_ancestors(cct, &hits)));
    }

    /// The selected kernel instance: on the timeline, or the first instance of the
    /// kernel row under the cursor.
    pub fn selected_instance(&self) -> Option<u32> {
        if self.panel.is(&super::timeline::Timeline) {
            return self.timeline.selected;
        }
        self.kernels
            .rows
            .get(self.kernels.cursor)
            .and_then(|r| r.instances.first().copied())
            .or(self.timeline.selected)
    }

    pub(super) fn kernels_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        match cmd {
            Command::Kernels(spec) => {
                if self.lod().is_none() && self.members().is_empty() {
                    self.need_gpu()?;
                }
                let k = &mut self.view.kernels;
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
                if !self.members().is_empty() {
                    return Err(
                        "a selected kernel marks its call paths in one trace's tree: open that member alone to select it"
                            .into(),
                    );
                }
                let g = self.need_gpu()?;
                let name = match name {
                    Some(n) => n,
                    None => {
                        let ev = self.profile.events.as_ref().unwrap();
                        if self.panel.is(&super::timeline::Timeline) {
                            self.timeline
                                .selected
                                .map(|i| ev.name_of(i as usize).to_string())
                                .ok_or("no kernel is selected on the timeline")?
                        } else {
                            let r = self
                                .kernels
                                .rows
                                .get(self.kernels.cursor)
                                .ok_or("no kernel row")?;
                            if self.kernels.by_category {
                                return Err(
                                    "select a kernel in the per-name table (group name)".into()
                                );
                            }
                            r.name.clone()
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
            other => Err(format!("{other} is not a kernels command").into()),
        }
    }
}

impl KernelsView {
    /// The rows' shown names cut to `width` (the short names, made distinct after the
    /// cut): computed once per width, so a frame reads only the rows on screen.
    pub fn cut_names(&self, width: usize, ellipsis: &'static str) -> std::sync::Arc<Vec<String>> {
        self.cuts.get(&(width, ellipsis), || {
            let names: Vec<&str> = self
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| self.short.get(i).map(String::as_str).unwrap_or(&r.name))
                .collect();
            crate::present::heads::distinct_heads(&names, width, ellipsis)
        })
    }
}

/// The length of a row's bar: the value the table is sorted by.
pub fn bar_value(sort: KernelSort, r: &KernelRow) -> f64 {
    match sort {
        KernelSort::Total => r.total_ns as f64,
        KernelSort::Mean => r.mean_ns,
        KernelSort::Count => r.count as f64,
    }
}

/// The kernels panel: the kernel table, its state `ViewState::kernels`.
pub struct Kernels;

impl super::Panel for Kernels {
    fn usable(&self, app: &App) -> bool {
        app.gpu_activity().is_some() || app.events_pending() || !app.members().is_empty()
    }

    fn open(&self, app: &mut App) -> Result<(), CmdError> {
        // Low-memory mode: the table is drawn from the summary; an ensemble of traces
        // from its members'.
        if !app.events_pending() && app.members().is_empty() {
            app.need_gpu()?;
        }
        Ok(())
    }

    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        let k = &mut app.view.kernels;
        let n = k.rows.len();
        if n > 0 {
            k.cursor = (k.cursor as isize + delta).clamp(0, n as isize - 1) as usize;
        }
        true
    }

    /// The kernel table scrolls its names: the full names, from a column on.
    fn scroll_table(&self, app: &mut App, by: i64) -> bool {
        let k = &mut app.view.kernels;
        let longest = k
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0);
        k.hscroll = crate::app::commands::shifted(k.hscroll, by).min(longest.saturating_sub(8));
        true
    }

    /// The options start afresh; the kernel categories are the app's, not the view's.
    fn reset(&self, was: &mut super::ViewState, now: &mut super::ViewState) {
        now.kernels.categories = was.kernels.categories.take();
    }

    fn position(&self, app: &App) -> (usize, usize) {
        let n = app.kernels.rows.len();
        ((app.kernels.cursor + 1).min(n), n)
    }
}
