//! The stack chart's cursor and lanes: the `timeline` command (move between slices in
//! time, fit a step, collapse, hide and restore lanes, follow a kernel's launch link),
//! the rows on screen, and the links of the selected slice.

use std::fmt;

use super::super::super::command::{quote, Command, Input, ParseError};
use super::super::super::commands::Log;
use super::super::super::{App, CmdError};
use crate::model::events::NONE_U32;
use crate::model::EventKind;

/// What `timeline` does.
#[derive(Debug, Clone, PartialEq)]
pub enum TimelineCmd {
    /// The next (previous) slice on the cursor's row.
    Next,
    Prev,
    /// A lane (by label; the cursor's without one) to one row of density, or back
    /// to its stack. Logged with the label, so a replay acts on the same lane.
    Collapse(Option<String>),
    /// A lane (by label; the cursor's without one) off the screen until `restore`.
    Hide(Option<String>),
    /// Every lane shown and expanded.
    Restore,
    /// The window fitted to `ProfilerStep#N`.
    Step(u64),
    /// The cursor to the slice linked with the selection: a kernel's launch, or the
    /// first kernel a runtime call launched.
    Link,
    /// Every instance of a tree node marked on the lanes, or the marks cleared.
    Mark(MarkArg),
}

/// What `timeline mark` marks.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkArg {
    /// The tree's selection; the marks cleared when they are already its. Logged as
    /// the path it marked (or `off`), so a replay marks the same node.
    Toggle,
    /// The node at this path of the loaded tree.
    Path(String),
    Off,
}

pub fn parse(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected next, prev, collapse, hide, restore, step N, link or mark";
    let c = match i.args {
        [] => return Err(i.missing(MSG)),
        [w, lane] if w.text == "collapse" => TimelineCmd::Collapse(Some(lane.text.clone())),
        [w, lane] if w.text == "hide" => TimelineCmd::Hide(Some(lane.text.clone())),
        [w, p] if w.text == "mark" => TimelineCmd::Mark(match p.text.as_str() {
            "off" => MarkArg::Off,
            path => MarkArg::Path(path.to_string()),
        }),
        [w, n] if w.text == "step" => TimelineCmd::Step(
            n.text
                .trim_start_matches("ProfilerStep#")
                .parse()
                .map_err(|_| Input::at(n, "expected a step number such as 3"))?,
        ),
        [w] if w.text == "step" => return Err(i.missing("expected a step number")),
        [w] => match w.text.as_str() {
            "next" => TimelineCmd::Next,
            "prev" => TimelineCmd::Prev,
            "collapse" => TimelineCmd::Collapse(None),
            "hide" => TimelineCmd::Hide(None),
            "restore" => TimelineCmd::Restore,
            "link" => TimelineCmd::Link,
            "mark" => TimelineCmd::Mark(MarkArg::Toggle),
            _ => return Err(Input::at(w, MSG)),
        },
        [_, t, ..] => return Err(Input::too_many(t)),
    };
    Ok(Command::Timeline(c))
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let Command::Timeline(t) = c else {
        return Ok(());
    };
    match t {
        TimelineCmd::Next => f.write_str("timeline next"),
        TimelineCmd::Prev => f.write_str("timeline prev"),
        TimelineCmd::Collapse(None) => f.write_str("timeline collapse"),
        TimelineCmd::Collapse(Some(l)) => write!(f, "timeline collapse {}", quote(l)),
        TimelineCmd::Hide(None) => f.write_str("timeline hide"),
        TimelineCmd::Hide(Some(l)) => write!(f, "timeline hide {}", quote(l)),
        TimelineCmd::Restore => f.write_str("timeline restore"),
        TimelineCmd::Step(n) => write!(f, "timeline step {n}"),
        TimelineCmd::Link => f.write_str("timeline link"),
        TimelineCmd::Mark(MarkArg::Toggle) => f.write_str("timeline mark"),
        TimelineCmd::Mark(MarkArg::Off) => f.write_str("timeline mark off"),
        TimelineCmd::Mark(MarkArg::Path(p)) => write!(f, "timeline mark {}", quote(p)),
    }
}

/// Moving the cursor is navigation; what changes the lanes or the window is a view.
pub fn log(c: &Command) -> Log {
    match c {
        Command::Timeline(TimelineCmd::Next | TimelineCmd::Prev | TimelineCmd::Link) => Log::Nav,
        _ => Log::View,
    }
}

/// One row on screen: an ensemble member's header, or a lane (its index in `lanes()`)
/// and its stack row, `None` for a collapsed lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenRow {
    Group(u16),
    Lane(usize, Option<usize>),
}

impl App {
    /// The rows on screen, top to bottom: each shown lane's stack rows, or one row
    /// when it is collapsed; an ensemble's lanes under a header per member, in member
    /// order. O(members × lanes + rows), not a pass over events.
    pub fn timeline_rows(&self) -> Vec<ScreenRow> {
        let tl = &self.timeline;
        let lanes = self.lanes();
        let mut out = Vec::new();
        let push = |li: usize, out: &mut Vec<ScreenRow>| {
            if tl.hidden.contains(&li) {
                return;
            }
            let depth = lanes[li].index.stack.depth();
            if tl.collapsed.contains(&li) || depth == 0 {
                out.push(ScreenRow::Lane(li, None));
            } else {
                out.extend((0..depth).map(|r| ScreenRow::Lane(li, Some(r))));
            }
        };
        let groups = self.timeline_groups().len() as u16;
        if groups == 0 {
            (0..lanes.len()).for_each(|li| push(li, &mut out));
            return out;
        }
        for m in 0..groups {
            out.push(ScreenRow::Group(m));
            if !tl.collapsed_groups.contains(&m) {
                let mine = (0..lanes.len()).filter(|&li| lanes[li].member == m);
                mine.for_each(|li| push(li, &mut out));
            }
        }
        out
    }

    /// The cursor's place in `timeline_rows`: its group's header when it is on one or
    /// its lane's group is collapsed.
    pub fn timeline_cursor_row(&self, rows: &[ScreenRow]) -> usize {
        let tl = &self.timeline;
        let member = self.lanes().get(tl.lane).map(|l| l.member);
        let header = |m: Option<u16>| {
            rows.iter()
                .position(|&r| m.is_some() && r == ScreenRow::Group(m.unwrap_or(0)))
        };
        if tl.group.is_some() {
            if let Some(k) = header(tl.group) {
                return k;
            }
        }
        rows.iter()
            .position(|&r| {
                matches!(r, ScreenRow::Lane(l, row)
                    if l == tl.lane && row.is_none_or(|row| row == tl.row))
            })
            .or_else(|| header(member))
            .or_else(|| {
                rows.iter()
                    .position(|&r| matches!(r, ScreenRow::Lane(l, _) if l >= tl.lane))
            })
            .unwrap_or(0)
    }

    /// Moves the cursor `delta` rows and selects the slice under (or nearest) its time.
    pub fn timeline_move_rows(&mut self, delta: isize) {
        let rows = self.timeline_rows();
        if rows.is_empty() {
            return;
        }
        let at = self.timeline_cursor_row(&rows) as isize;
        let (lane, row) = match rows[(at + delta).clamp(0, rows.len() as isize - 1) as usize] {
            ScreenRow::Group(m) => {
                self.timeline.group = Some(m);
                return;
            }
            ScreenRow::Lane(l, r) => (l, r),
        };
        self.timeline.group = None;
        self.timeline.lane = lane;
        self.timeline.row = row.unwrap_or(0);
        let Some(row) = row else { return };
        let t = self.timeline.cursor_t;
        let lanes = self.lanes();
        let ix = lanes[lane].index;
        if let Some(p) = ix.stack.at_or_near(row, &ix.times, t) {
            let i = ix.events[p as usize];
            drop(lanes);
            self.select_slice(i);
        }
    }

    /// Selects event `i` and works out its links (a kernel's launch, a runtime call's
    /// kernels: one pass over the GPU activities, at selection, never per frame).
    pub(crate) fn select_slice(&mut self, i: u32) {
        self.timeline.selected = Some(i);
        let mut linked = Vec::new();
        if let (Some(ev), Some(g)) = (self.profile.events.as_ref(), self.gpu.as_ref()) {
            let iu = i as usize;
            if ev.kind[iu].is_gpu_activity() {
                let l = ev.launch.get(iu).copied().unwrap_or(NONE_U32);
                if l != NONE_U32 {
                    linked.push(l);
                }
            } else if ev.kind[iu] == EventKind::Runtime {
                let acts = &g.model.activities;
                let pairs = self.timeline.launched.get(&acts.len(), || {
                    let mut p: Vec<(u32, u32)> = acts
                        .iter()
                        .filter_map(|&k| {
                            let l = ev.launch.get(k as usize).copied()?;
                            (l != NONE_U32).then_some((l, k))
                        })
                        .collect();
                    // Stable: a call's activities stay in start order.
                    p.sort_by_key(|x| x.0);
                    p.shrink_to_fit();
                    p
                });
                let lo = pairs.partition_point(|x| x.0 < i);
                linked.extend(pairs[lo..].iter().take_while(|x| x.0 == i).map(|x| x.1));
            }
        }
        self.timeline.linked = linked;
    }

    /// Keeps `t` in the window, moving it by whole window widths' halves.
    fn show_time(&mut self, t: i64) {
        let (a, b) = self.timeline.window;
        if t < a || t >= b {
            let w = b - a;
            self.timeline.window = (t - w / 2, t - w / 2 + w);
        }
    }

    /// The ensemble member named `label`, or the one whose header the cursor is on
    /// (without a label).
    fn group_named(&self, label: Option<&str>) -> Option<u16> {
        match label {
            None => self.timeline.group,
            Some(l) => self
                .timeline_groups()
                .iter()
                .position(|g| g == l)
                .map(|m| m as u16),
        }
    }

    /// The lane named `label`, or the cursor's.
    fn lane_named(&self, label: Option<&str>) -> Result<usize, CmdError> {
        let Some(label) = label else {
            return Ok(self.timeline.lane);
        };
        let lanes = self.lanes();
        lanes.iter().position(|l| l.label == label).ok_or_else(|| {
            let names: Vec<&str> = lanes.iter().map(|l| l.label.as_str()).collect();
            CmdError::plain(format!("no lane {label:?} (lanes: {})", names.join(", ")))
        })
    }

    pub(super) fn timeline_nav(&mut self, cmd: TimelineCmd) -> Result<Option<Command>, CmdError> {
        self.need_timeline()?;
        let mut logged = Command::Timeline(cmd.clone());
        let n = self.lanes().len();
        match cmd {
            TimelineCmd::Collapse(label) => {
                if let Some(m) = self.group_named(label.as_deref()) {
                    let tl = &mut self.view.timeline;
                    if let Some(k) = tl.collapsed_groups.iter().position(|&g| g == m) {
                        tl.collapsed_groups.remove(k);
                    } else {
                        tl.collapsed_groups.push(m);
                    }
                    let label = self.timeline_groups()[m as usize].clone();
                    return Ok(Some(Command::Timeline(TimelineCmd::Collapse(Some(label)))));
                }
                let lane = self.lane_named(label.as_deref())?;
                logged = Command::Timeline(TimelineCmd::Collapse(Some(
                    self.lanes()[lane].label.clone(),
                )));
                let tl = &mut self.view.timeline;
                if let Some(k) = tl.collapsed.iter().position(|&l| l == lane) {
                    tl.collapsed.remove(k);
                } else {
                    tl.collapsed.push(lane);
                    if tl.lane == lane {
                        tl.row = 0;
                    }
                }
            }
            TimelineCmd::Hide(label) => {
                if self.group_named(label.as_deref()).is_some() {
                    return Err("a member's header is not hidden: collapse it (z)".into());
                }
                let lane = self.lane_named(label.as_deref())?;
                logged =
                    Command::Timeline(TimelineCmd::Hide(Some(self.lanes()[lane].label.clone())));
                let tl = &mut self.view.timeline;
                if n <= tl.hidden.len() + 1 {
                    return Err("the last lane shown cannot be hidden".into());
                }
                if !tl.hidden.contains(&lane) {
                    tl.hidden.push(lane);
                }
                if tl.lane == lane {
                    tl.lane = (lane..n)
                        .chain((0..lane).rev())
                        .find(|l| !tl.hidden.contains(l))
                        .unwrap_or(0);
                    tl.row = 0;
                }
            }
            TimelineCmd::Restore => {
                let tl = &mut self.view.timeline;
                tl.hidden.clear();
                tl.collapsed.clear();
                tl.collapsed_groups.clear();
            }
            TimelineCmd::Step(s) => {
                let (a, b) = self.step_span(s)?;
                let pad = (b - a) / 50;
                self.timeline.cursor_t = a;
                self.set_window(a - pad, b + pad);
            }
            TimelineCmd::Next | TimelineCmd::Prev => {
                let forward = cmd == TimelineCmd::Next;
                let i = self.slice_step(forward).ok_or(if forward {
                    "no slice after the cursor on this row"
                } else {
                    "no slice before the cursor on this row"
                })?;
                self.go_to_slice(i);
            }
            TimelineCmd::Mark(arg) => {
                logged = Command::Timeline(TimelineCmd::Mark(self.mark(arg)?))
            }
            TimelineCmd::Link => {
                let i = *self
                    .timeline
                    .linked
                    .first()
                    .ok_or("the selection has no linked slice (select a kernel or a runtime call that launched one)")?;
                let from = self.timeline.selected;
                self.go_to_slice(i);
                // The way back: the slice we came from stays linked.
                if let Some(f) = from {
                    if !self.timeline.linked.contains(&f) {
                        self.timeline.linked.insert(0, f);
                    }
                }
            }
        }
        Ok(Some(logged))
    }

    /// The next or previous slice on the cursor's row (or lane, when collapsed).
    fn slice_step(&self, forward: bool) -> Option<u32> {
        let tl = &self.timeline;
        let lanes = self.lanes();
        let ix = lanes.get(tl.lane)?.index;
        let t = tl.cursor_t;
        if tl.collapsed.contains(&tl.lane) {
            return ix.neighbour(t, forward);
        }
        let p = ix.stack.step(tl.row, &ix.times, t, forward)?;
        Some(ix.events[p as usize])
    }

    /// Puts the cursor on event `i`: its lane, row and start, in the window.
    pub(crate) fn go_to_slice(&mut self, i: u32) {
        let Some(ev) = self.profile.events.as_ref() else {
            return;
        };
        let ts = ev.ts[i as usize];
        let place = self.lanes().iter().enumerate().find_map(|(li, l)| {
            let p = l.index.pos_of(i, ts)?;
            Some((li, l.index.stack.row_of(p).unwrap_or(0)))
        });
        if let Some((lane, row)) = place {
            let member = self.lanes()[lane].member;
            let tl = &mut self.view.timeline;
            tl.lane = lane;
            tl.row = row;
            tl.group = None;
            tl.hidden.retain(|&l| l != lane);
            tl.collapsed_groups.retain(|&m| m != member);
        }
        self.timeline.cursor_t = ts;
        self.show_time(ts);
        self.select_slice(i);
    }

    /// Hides every lane `keep(label, gpu)` refuses (the headless `--lanes`); an error
    /// when none is left.
    pub fn keep_lanes(&mut self, keep: impl Fn(&str, bool) -> bool) -> Result<(), CmdError> {
        let hidden: Vec<usize> = self
            .lanes()
            .iter()
            .enumerate()
            .filter(|(_, l)| !keep(&l.label, l.gpu))
            .map(|(i, _)| i)
            .collect();
        let n = self.lanes().len();
        if hidden.len() >= n {
            let names: Vec<String> = self.lanes().iter().map(|l| l.label.clone()).collect();
            return Err(CmdError::plain(format!(
                "no lane left to draw (lanes: {})",
                names.join(", ")
            )));
        }
        let tl = &mut self.view.timeline;
        tl.lane = (0..n).find(|l| !hidden.contains(l)).unwrap_or(0);
        tl.row = 0;
        tl.hidden = hidden;
        Ok(())
    }

    /// First start and last end of the slices named `ProfilerStep#N`.
    fn step_span(&self, n: u64) -> Result<(i64, i64), CmdError> {
        let ev = self.profile.events.as_ref().ok_or("no events")?;
        let name = format!("ProfilerStep#{n}");
        let mut span: Option<(i64, i64)> = None;
        for i in 0..ev.len() {
            if ev.kind[i] == EventKind::Cpu && ev.name_of(i) == name {
                let (s, e) = (ev.ts[i], ev.ts[i] + ev.dur[i].max(1));
                span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            }
        }
        span.ok_or_else(|| CmdError::plain(format!("no slice named {name} in this trace")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip() {
        for t in [
            "timeline next",
            "timeline prev",
            "timeline collapse",
            "timeline collapse \"GPU0 s7\"",
            "timeline hide",
            "timeline hide \"CPU t12\"",
            "timeline restore",
            "timeline step 3",
            "timeline link",
            "timeline mark",
            "timeline mark off",
            "timeline mark main/aten::mm",
            "timeline mark \"main/my op\"",
        ] {
            assert_eq!(Command::parse(t).unwrap().to_string(), t);
        }
        assert_eq!(
            Command::parse("timeline step ProfilerStep#7")
                .unwrap()
                .to_string(),
            "timeline step 7"
        );
        assert!(Command::parse("timeline step x").is_err());
        assert!(Command::parse("timeline sideways").is_err());
    }
}
