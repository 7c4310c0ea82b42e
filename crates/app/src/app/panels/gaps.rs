//! Idle gaps on the timeline: stepping to the next/previous gap of the cursor's lane,
//! the list of the longest gaps per GPU stream (an overlay, `Mode::Gaps`) and the jump
//! from one of its rows. The gaps themselves are computed once per lane with the GPU
//! state (`GpuState::gaps`); this file only searches and formats them.

use super::super::command::{format_time, Command, GapSpec};
use super::super::{paths, App, CmdError, Mode};
use crate::gpu::gaps::{self, Gap};
use crate::model::events::NONE_U32;
use crate::model::NO_NODE;

/// `gap next|prev` without a length skips gaps shorter than this: HTA's default
/// `consecutive_kernel_delay`, below which a gap is launch latency, not idleness.
pub const DEFAULT_MIN_NS: i64 = 30_000;

/// One row of the `gaps` list.
#[derive(Debug, Clone, PartialEq)]
pub struct GapRow {
    pub lane: String,
    /// Absolute ns.
    pub start: i64,
    pub len: i64,
    /// The call path of the CPU slice open at the gap's start on the thread that
    /// launched the kernel after the gap (or before it); `-` when none was open or
    /// the launch is not in the trace.
    pub cpu: String,
}

impl App {
    pub(super) fn gap_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let span = self.need_timeline()?.span;
        if self.timeline.window.1 <= self.timeline.window.0 {
            self.set_window(span.0, span.1);
        }
        match cmd {
            Command::Gap(GapSpec::Step(forward, min)) => {
                let min = min.or(self.timeline.gap_min).unwrap_or(DEFAULT_MIN_NS);
                let lane = self.timeline.lane;
                let label = self.lanes().get(lane).ok_or("no lane")?.label.clone();
                self.need_timeline()?;
                let list = self.lane_gaps(lane);
                let Some(gap) = gaps::step(list, self.timeline.cursor_t, forward, min).copied()
                else {
                    return Err(CmdError::plain(format!(
                        "no idle gap of at least {} {} the cursor on {label}",
                        format_time(min),
                        if forward { "after" } else { "before" }
                    )));
                };
                self.timeline.gap_min = Some(min);
                self.show_gap(lane, &label, gap);
                Ok(Some(Command::Gap(GapSpec::Step(forward, Some(min)))))
            }
            Command::Gap(GapSpec::At(label, t)) => {
                let origin = self.need_timeline()?.origin;
                let lane = self
                    .lanes()
                    .iter()
                    .position(|l| l.label == label)
                    .ok_or_else(|| {
                        CmdError::plain(format!("no lane {label:?} (lanes all shows CPU threads)"))
                    })?;
                let gap = gaps::at(self.lane_gaps(lane), origin + t)
                    .copied()
                    .ok_or_else(|| {
                        CmdError::plain(format!("no idle gap at {} on {label}", format_time(t)))
                    })?;
                self.show_gap(lane, &label, gap);
                Ok(Some(Command::Gap(GapSpec::At(label, gap.start - origin))))
            }
            Command::Gaps { n, min } => {
                let rows = self.gap_rows(n, min.unwrap_or(0))?;
                if rows.is_empty() {
                    let on = match self.gpu.as_ref().is_some_and(|g| g.model.lanes.is_empty()) {
                        // A rank's outermost region spans its whole run.
                        true => "the CPU threads",
                        false => "the GPU streams",
                    };
                    return Err(format!("no idle gaps on {on}").into());
                }
                self.mode = Mode::Gaps { rows, selected: 0 };
                Ok(None)
            }
            other => Err(format!("{other} is not a gap command").into()),
        }
    }

    /// The timeline zoomed to a gap (a quarter of its length either side), the cursor
    /// on its lane at its start and the kernel after it selected.
    fn show_gap(&mut self, lane: usize, label: &str, gap: Gap) {
        let pad = (gap.len() / 4).max(1);
        self.view.panel = super::PanelId::of(&super::timeline::Timeline);
        self.timeline.lane = lane;
        self.timeline.cursor_t = gap.start;
        self.timeline.selected = Some(gap.after);
        self.set_window(gap.start - pad, gap.end + pad);
        let cpu = self.cpu_path_at(&gap);
        let mut text = format!(
            "idle {} on {label} at {}",
            format_time(gap.len()),
            self.origin_label(gap.start)
        );
        if !cpu.is_empty() {
            text.push_str(&format!("; CPU in {cpu}"));
        }
        self.info(text);
    }

    /// The `n` longest gaps of at least `min` ns of each GPU stream, stream by stream;
    /// of each CPU thread (an MPI rank of an OTF2 trace) when the trace has no GPU lanes.
    fn gap_rows(&self, n: usize, min: i64) -> Result<Vec<GapRow>, CmdError> {
        let g = self.need_timeline()?;
        let mut rows = Vec::new();
        let lanes: Vec<(usize, String)> = match self.profile.events.as_ref() {
            // Lanes count the GPU lanes first, then the CPU lanes.
            Some(ev) if g.model.lanes.is_empty() => (g.cpu(ev).lanes.iter().enumerate())
                .map(|(i, (label, _))| (g.lanes.len() + i, label.clone()))
                .collect(),
            _ => g
                .model
                .lanes
                .iter()
                .map(|l| l.label())
                .enumerate()
                .collect(),
        };
        for (li, label) in lanes {
            for gap in gaps::longest(self.lane_gaps(li), n, min) {
                rows.push(GapRow {
                    lane: label.clone(),
                    start: gap.start,
                    len: gap.len(),
                    cpu: Some(self.cpu_path_at(&gap))
                        .filter(|p| !p.is_empty())
                        .unwrap_or_else(|| "-".into()),
                });
            }
        }
        Ok(rows)
    }

    /// What the CPU was doing when a gap began: the innermost slice open then on the
    /// thread that launched the kernel after the gap (else the one before), as a path.
    fn cpu_path_at(&self, gap: &Gap) -> String {
        let (Some(g), Some(ev)) = (&self.gpu, self.profile.events.as_ref()) else {
            return String::new();
        };
        for k in [gap.after, gap.before] {
            let r = ev.launch.get(k as usize).copied().unwrap_or(NONE_U32);
            if r == NONE_U32 {
                continue;
            }
            let key = (ev.pid[r as usize], ev.tid[r as usize]);
            let cpu = g.cpu(ev);
            let Some(ci) = cpu.keys.iter().position(|&c| c == key) else {
                continue;
            };
            let Some(e) = gaps::open_slice(&cpu.lanes[ci].1, gap.start) else {
                continue;
            };
            let node = ev.node.get(e as usize).copied().unwrap_or(NO_NODE);
            if node != NO_NODE {
                return paths::path_of(self.original().0, node);
            }
        }
        String::new()
    }

    /// The idle gaps of lane `li` in `lanes()` order (none without a timeline).
    fn lane_gaps(&self, li: usize) -> &[Gap] {
        match (&self.gpu, self.profile.events.as_ref()) {
            (Some(g), Some(ev)) => g.gaps_of(li, ev),
            (Some(g), None) => g.gaps.get(li).map(Vec::as_slice).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The `gaps` list as text (the overlay's headless twin); None when it is not open.
    pub fn gaps_text(&self) -> Option<String> {
        let Mode::Gaps { rows, .. } = &self.mode else {
            return None;
        };
        let mut out = String::from("lane\tstart\tlength\tcpu call path\n");
        for r in rows {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                r.lane,
                self.origin_label(r.start),
                format_time(r.len),
                r.cpu
            ));
        }
        Some(out)
    }

    /// The command a row of the `gaps` list runs.
    pub fn gap_row_command(&self, row: &GapRow) -> Command {
        let origin = self.gpu.as_ref().map(|g| g.origin).unwrap_or(0);
        Command::Gap(GapSpec::At(row.lane.clone(), row.start - origin))
    }
}
