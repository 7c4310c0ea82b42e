//! `timeline mark`: the tree's selection on the timeline. The instances are found
//! once, when the mark is set (`gpu::marks`), never per frame.

use super::super::super::{App, CmdError};
use super::MarkArg;
use crate::gpu::marks::Marks;

impl App {
    /// Sets or clears the marks (`timeline mark`); what a replay does the same with.
    pub(super) fn mark(&mut self, arg: MarkArg) -> Result<MarkArg, CmdError> {
        let path = match arg {
            MarkArg::Off => {
                self.view.timeline.marks = None;
                return Ok(MarkArg::Off);
            }
            MarkArg::Path(p) => p,
            MarkArg::Toggle => {
                let n = self
                    .tree
                    .selected()
                    .ok_or("select a node in the tree first (panel 1)")?;
                let path = super::super::super::paths::path_of(&self.profile.cct, n);
                if self.timeline.marks.as_ref().is_some_and(|m| m.path == path) {
                    self.view.timeline.marks = None;
                    self.info("marks cleared".to_string());
                    return Ok(MarkArg::Off);
                }
                path
            }
        };
        let node = super::super::super::paths::resolve(self.original().0, &path)
            .map_err(|_| CmdError::plain(format!("{path} is not in the loaded tree")))?;
        let (Some(ev), Some(g)) = (self.profile.events.as_ref(), self.gpu.as_ref()) else {
            return Err("this profile has no events to mark".into());
        };
        let lanes = g.lanes.iter().chain(g.cpu(ev).lanes.iter().map(|(_, l)| l));
        let marks = Marks::find(path.clone(), node, lanes, |i| {
            ev.node.get(i as usize) == Some(&node)
        });
        if marks.count == 0 {
            return Err(CmdError::plain(format!(
                "no slice of {path} is on the timeline's lanes"
            )));
        }
        // CPU slices are on the CPU lanes: show them when the marks are there.
        let on_cpu = marks.lanes[g.lanes.len()..]
            .iter()
            .any(|l| l.rows.iter().any(|r| !r.is_empty()));
        let n = marks.count;
        self.view.timeline.marks = Some(std::sync::Arc::new(marks));
        if on_cpu && !self.timeline.show_cpu {
            self.timeline.show_cpu = true;
        }
        self.info(format!("{n} instances of {path} marked (m clears)"));
        Ok(MarkArg::Path(path))
    }

    /// The marks of lane `li` (in `lanes()` order), when the marks are on.
    pub fn lane_marks(&self, li: usize) -> Option<&crate::gpu::marks::LaneMarks> {
        self.timeline.marks.as_ref()?.lanes.get(li)
    }
}
