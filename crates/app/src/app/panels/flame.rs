//! The flame graph panel: an icicle of the current tree (roots on top, as the tree
//! reads; `flame flip` puts them at the bottom, the classic flame graph). One row per
//! depth; a frame is as wide as its share of the primary inclusive metric over the
//! zoom root (or the focused subtree, or all roots), so the widths of the first row
//! add up to the panel's width. Frames narrower than a cell are merged into shaded
//! cells, and their subtrees are never visited.
//!
//! The layout is derived once per change of its inputs (the tree's pre-order, the
//! width column, zoom, focus, width; `clear` for hide and prune) and kept in a `Memo`,
//! so a frame costs the cells on screen. The selection is the tree's cursor: moving
//! here moves it there, so switching panels keeps the node.

use std::collections::HashMap;
use std::sync::Arc;

use super::super::command::{Command, FlameCmd};
use super::super::{paths, App, CmdError};
use super::memo::Memo;
use crate::ensemble;
use crate::model::{PreOrder, NO_NODE};

/// One frame of a row: cells `x .. x + w`, and its node (`NO_NODE` for a run of
/// frames narrower than a cell, drawn shaded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub x: u16,
    pub w: u16,
    pub node: u32,
}

impl Frame {
    pub fn merged(&self) -> bool {
        self.node == NO_NODE
    }
}

/// The frames of every row, the first row being the zoom root (or the roots).
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The zoom root, when zoomed.
    pub zoom: Option<u32>,
    /// The zoom root's ancestors, outermost first (the breadcrumb row).
    pub crumbs: Vec<u32>,
    pub rows: Vec<Vec<Frame>>,
    /// The value the width stands for (the first row's sum).
    pub total: f64,
    /// The depth (in the pre-order) of the first row.
    pub depth0: u16,
    pub width: u16,
}

impl Layout {
    /// The row and frame of `node`, when it is drawn as a frame of its own.
    pub fn find(&self, po: &PreOrder, node: u32) -> Option<(usize, usize)> {
        let pos = *po.pos.get(node as usize)?;
        let d = po.depth.get(pos as usize)?.checked_sub(self.depth0)? as usize;
        let row = self.rows.get(d)?;
        row.iter().position(|f| f.node == node).map(|i| (d, i))
    }

    /// Where the selection shows: its own frame, or the shaded cell that holds it
    /// (under its deepest ancestor that has a frame).
    pub fn locate(&self, po: &PreOrder, node: u32) -> Option<(usize, usize)> {
        if let Some(at) = self.find(po, node) {
            return Some(at);
        }
        let mut p = *po.pos.get(node as usize)?;
        loop {
            p = po.parent(p);
            if p == NO_NODE {
                return None;
            }
            if let Some((d, i)) = self.find(po, po.node[p as usize]) {
                let f = self.rows[d][i];
                let row = self.rows.get(d + 1)?;
                return row
                    .iter()
                    .position(|g| g.merged() && g.x >= f.x && g.x < f.x + f.w)
                    .map(|j| (d + 1, j));
            }
        }
    }
}

/// What the layout depends on, besides hide and prune (which clear it).
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutKey {
    po: usize,
    column: String,
    zoom: Option<String>,
    focus: Option<u32>,
    width: u16,
}

#[derive(Debug, Clone, Default)]
pub struct FlameView {
    /// Zoom roots by path, innermost last (`flame out` pops one).
    pub zoom: Vec<String>,
    /// Roots at the bottom (the classic flame graph) instead of on top.
    pub flipped: bool,
    /// What a frame's colour says (`flame colour`).
    pub colour: Colour,
    layout: Memo<LayoutKey, Layout>,
    /// The category colours of `colour kind|module`, per tree, colouring and metric.
    palette: Memo<(usize, Colour, String), Palette>,
    /// The share of the total that the search's matches hold, keyed by the search
    /// text, the pre-order and the column.
    share: Memo<(String, usize, String), f64>,
}

impl FlameView {
    /// Forgets the derived layout (the rows' rules or the metrics changed).
    pub fn clear(&self) {
        self.layout.clear();
        self.share.clear();
        self.palette.clear();
    }
}

/// What a frame's colour says: its heat (the default; after `diff`, the signed
/// difference), or a category of the frame as the Firefox Profiler and speedscope colour
/// theirs: its kind (function, cpu_op, kernel, python_function, …) or its module (the
/// library or file, `PLACE_ATTRS`), each value on a slot of the theme's categorical
/// palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Colour {
    #[default]
    Heat,
    Kind,
    Module,
}

impl Colour {
    pub const ALL: [Colour; 3] = [Colour::Heat, Colour::Kind, Colour::Module];

    pub fn name(self) -> &'static str {
        match self {
            Colour::Heat => "heat",
            Colour::Kind => "kind",
            Colour::Module => "module",
        }
    }
}

/// The categories of the frames (kinds or modules) and the palette slot of each: the
/// nine heaviest by the metric's exclusive value over the tree's shown nodes get slots
/// 1–9, every other one slot 0 (the theme's grey "other"), so the colours that can be
/// told apart go to what holds the time.
#[derive(Debug, Default)]
pub struct Palette {
    slots: HashMap<Arc<str>, u8>,
    /// (category, slot, exclusive value), heaviest first.
    pub legend: Vec<(Arc<str>, u8, f64)>,
}

/// A module-less frame's category.
pub const NO_MODULE: &str = "(no module)";

impl Palette {
    pub fn slot(&self, key: &str) -> u8 {
        self.slots.get(key).copied().unwrap_or(0)
    }
}

/// A frame's category under a colouring (None for heat).
pub fn category(frame: &crate::model::Frame, by: Colour) -> Option<&str> {
    match by {
        Colour::Heat => None,
        Colour::Kind => Some(&frame.kind),
        Colour::Module => Some(
            crate::transform::functions::PLACE_ATTRS
                .iter()
                .find_map(|k| frame.attr(k))
                .unwrap_or(NO_MODULE),
        ),
    }
}

/// Lays out the frames under `tops` (positions, in order), `width` cells for `total`.
/// Only frames at least a cell wide are descended into, so the work is the children
/// of the frames drawn.
pub fn layout_rows(
    po: &PreOrder,
    weight: &dyn Fn(u32) -> f64,
    skip: &dyn Fn(u32) -> bool,
    merge: &dyn Fn(u32) -> bool,
    tops: &[u32],
    width: u16,
) -> (Vec<Vec<Frame>>, f64) {
    let total: f64 = tops.iter().map(|&p| weight(po.node[p as usize])).sum();
    let mut rows = Vec::new();
    if total <= 0.0 || width == 0 {
        return (rows, total);
    }
    let scale = width as f64 / total;
    // (position, start, end) of the frames of the row being laid out, in cells.
    let mut wide: Vec<(u32, f64, f64)> = Vec::new();
    let mut row = Vec::new();
    place(
        po,
        weight,
        skip,
        merge,
        tops.iter().copied(),
        (0.0, width as f64),
        scale,
        &mut row,
        &mut wide,
    );
    rows.push(row);
    // A chain deeper than this is not drawn (no screen is this tall).
    const MAX_ROWS: usize = 4096;
    while !wide.is_empty() && rows.len() < MAX_ROWS {
        let mut next = Vec::new();
        let mut row = Vec::new();
        for &(p, s, e) in &wide {
            place(
                po,
                weight,
                skip,
                merge,
                po.child_positions(p),
                (s, e),
                scale,
                &mut row,
                &mut next,
            );
        }
        if row.is_empty() {
            break;
        }
        rows.push(row);
        wide = next;
    }
    (rows, total)
}

/// Places siblings left to right from `span.0`, each as wide as its value (clipped to
/// `span`): a frame at least a cell wide gets its own frame (and goes on to `wide`),
/// runs of narrower ones one shaded frame.
#[allow(clippy::too_many_arguments)]
fn place(
    po: &PreOrder,
    weight: &dyn Fn(u32) -> f64,
    skip: &dyn Fn(u32) -> bool,
    merge: &dyn Fn(u32) -> bool,
    sibs: impl Iterator<Item = u32>,
    span: (f64, f64),
    scale: f64,
    row: &mut Vec<Frame>,
    wide: &mut Vec<(u32, f64, f64)>,
) {
    let mut at = span.0;
    let mut run: Option<f64> = None;
    let flush = |run: &mut Option<f64>, end: f64, row: &mut Vec<Frame>| {
        if let Some(s) = run.take() {
            let (a, b) = (s.round(), end.round());
            if b > a {
                row.push(Frame {
                    x: a as u16,
                    w: (b - a) as u16,
                    node: NO_NODE,
                });
            }
        }
    };
    for p in sibs {
        if at >= span.1 {
            break;
        }
        let n = po.node[p as usize];
        if skip(n) {
            continue;
        }
        let s = at;
        let e = (at + weight(n) * scale).min(span.1);
        at = e;
        let (a, b) = (s.round(), e.round());
        // At least a whole cell wide (so at least one cell once rounded): a frame of
        // 0.4 cells may round to one cell, but is merged like its neighbours.
        if e - s >= 1.0 && !merge(n) {
            flush(&mut run, s, row);
            row.push(Frame {
                x: a as u16,
                w: (b - a) as u16,
                node: n,
            });
            wide.push((p, s, e));
        } else if e > s {
            run.get_or_insert(s);
        }
    }
    flush(&mut run, at, row);
}

impl App {
    /// The metric column the widths come from: the primary inclusive metric, or after
    /// `diff A B` the newer side's (A's) inclusive column.
    pub fn flame_width_column(&self) -> String {
        let m = &self.profile.metrics;
        if let (Some((a, _)), Some(base)) = (&self.diff, &self.diff_base) {
            if ensemble::base_metric(&self.metric) == "diff" {
                let c = m.inclusive_of(&ensemble::column(base, a));
                if m.has(&c) {
                    return c;
                }
            }
        }
        self.inclusive_column()
    }

    /// Whether the flame graph shows a difference (colour from `diff (inc)`).
    pub fn flame_is_diff(&self) -> bool {
        self.diff.is_some()
            && self.diff_base.is_some()
            && ensemble::base_metric(&self.metric) == "diff"
    }

    /// The category colours of the frames, unless they are coloured by heat.
    pub fn flame_palette(&self) -> Option<Arc<Palette>> {
        let by = self.flame.colour;
        if by == Colour::Heat {
            return None;
        }
        let key = (Arc::as_ptr(&self.tree.po) as usize, by, self.metric.clone());
        Some(self.flame.palette.get(&key, || {
            let cct = &self.profile.cct;
            let vals = self.profile.metrics.values(&self.metric).unwrap_or(&[]);
            let hidden = &self.tree.rules.hidden;
            let mut sums: HashMap<Arc<str>, f64> = HashMap::new();
            for n in 0..cct.len() as u32 {
                if hidden.get(n as usize).copied().unwrap_or(false) {
                    continue;
                }
                let Some(c) = category(cct.frame(n), by) else {
                    continue;
                };
                let v = vals.get(n as usize).copied().unwrap_or(0.0);
                let v = if v.is_finite() && v > 0.0 { v } else { 0.0 };
                match sums.get_mut(c) {
                    Some(s) => *s += v,
                    None => {
                        sums.insert(Arc::from(c), v);
                    }
                }
            }
            let mut legend: Vec<(Arc<str>, u8, f64)> =
                sums.into_iter().map(|(k, v)| (k, 0, v)).collect();
            legend.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
            let mut slots = HashMap::new();
            for (i, e) in legend.iter_mut().enumerate() {
                e.1 = if i < 9 { i as u8 + 1 } else { 0 };
                slots.insert(e.0.clone(), e.1);
            }
            Palette { slots, legend }
        }))
    }

    /// The flame graph's layout for `width` cells (derived once per change).
    pub fn flame_layout(&self, width: u16) -> Arc<Layout> {
        let key = LayoutKey {
            po: Arc::as_ptr(&self.tree.po) as usize,
            column: self.flame_width_column(),
            zoom: self.flame.zoom.last().cloned(),
            focus: self.tree.rules.focus,
            width,
        };
        self.flame.layout.get(&key, || self.make_layout(&key))
    }

    fn make_layout(&self, key: &LayoutKey) -> Layout {
        let po = &self.tree.po;
        let cct = &self.profile.cct;
        let vals = self.profile.metrics.values(&key.column).unwrap_or(&[]);
        let weight = |n: u32| {
            let v = vals.get(n as usize).copied().unwrap_or(0.0);
            if v.is_finite() && v > 0.0 {
                v
            } else {
                0.0
            }
        };
        let rules = &self.tree.rules;
        let skip = |n: u32| rules.hidden.get(n as usize).copied().unwrap_or(false);
        let merge = |n: u32| {
            rules
                .below
                .as_ref()
                .is_some_and(|b| b.get(n as usize).copied().unwrap_or(false))
        };
        let zoom = key
            .zoom
            .as_ref()
            .and_then(|p| paths::resolve(cct, p).ok())
            .filter(|&z| !skip(z));
        let top = zoom.or(key.focus);
        let tops: Vec<u32> = match top {
            Some(n) => vec![po.pos[n as usize]],
            None => po.root_positions().collect(),
        };
        let (rows, total) = layout_rows(po, &weight, &skip, &merge, &tops, key.width);
        let mut crumbs = Vec::new();
        if let Some(z) = zoom {
            let mut p = po.parent(po.pos[z as usize]);
            while p != NO_NODE {
                crumbs.push(po.node[p as usize]);
                p = po.parent(p);
            }
            crumbs.reverse();
        }
        Layout {
            zoom,
            crumbs,
            rows,
            total,
            depth0: tops.first().map(|&p| po.depth[p as usize]).unwrap_or(0),
            width: key.width,
        }
    }

    /// The share of the total that the search's matches hold (a match under another
    /// match counted once), on the width column.
    pub fn flame_search_share(&self) -> Option<f64> {
        let s = self.search.as_ref()?;
        let column = self.flame_width_column();
        let key = (
            s.text.clone(),
            Arc::as_ptr(&self.tree.po) as usize,
            column.clone(),
        );
        Some(*self.flame.share.get(&key, || {
            let po = &self.tree.po;
            let vals = self.profile.metrics.values(&column).unwrap_or(&[]);
            let w = |n: u32| vals.get(n as usize).copied().filter(|v| v.is_finite());
            let total: f64 = po
                .root_positions()
                .filter_map(|p| w(po.node[p as usize]))
                .sum();
            // Outermost matches only: a pass over the matches' positions in pre-order,
            // skipping those inside the last counted one.
            let mut at: Vec<u32> = s.matches.iter().map(|&n| po.pos[n as usize]).collect();
            at.sort_unstable();
            let mut end = 0;
            let mut held = 0.0;
            for p in at {
                if p >= end {
                    held += w(po.node[p as usize]).unwrap_or(0.0);
                    end = po.end[p as usize];
                }
            }
            if total > 0.0 {
                held / total
            } else {
                0.0
            }
        }))
    }

    /// The first row's node of the selection's branch: the zoom root, the focus, or
    /// the root the selection is under.
    fn flame_top(&self) -> Option<u32> {
        self.flame_zoom_node().or(self.tree.rules.focus)
    }

    /// The zoom root, when zoomed (and its path still names a shown node).
    pub fn flame_zoom_node(&self) -> Option<u32> {
        self.flame
            .zoom
            .last()
            .and_then(|p| paths::resolve(&self.profile.cct, p).ok())
            .filter(|&z| !self.flame_skip(z))
    }

    /// Whether `node` is drawn under the flame graph's first row.
    fn flame_inside(&self, node: u32) -> bool {
        let po = &self.tree.po;
        match self.flame_top() {
            Some(t) => {
                let (tp, np) = (po.pos[t as usize], po.pos[node as usize]);
                np >= tp && np < po.end[tp as usize]
            }
            None => true,
        }
    }

    fn flame_skip(&self, n: u32) -> bool {
        self.tree
            .rules
            .hidden
            .get(n as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The node one step from `from`: its parent (`-1`), its first shown child (`+1`),
    /// or its previous/next shown sibling (`'<'`, `'>'`), within the first row's
    /// subtree.
    fn flame_step(&self, from: u32, dir: i8) -> Option<u32> {
        let po = &self.tree.po;
        let top = self.flame_top();
        let p = po.pos[from as usize];
        match dir {
            -1 => {
                if Some(from) == top {
                    return None;
                }
                match po.parent(p) {
                    NO_NODE => None,
                    q => Some(po.node[q as usize]),
                }
            }
            1 => po
                .child_positions(p)
                .map(|c| po.node[c as usize])
                .find(|&n| !self.flame_skip(n)),
            _ => {
                if Some(from) == top {
                    return None;
                }
                let sibs: Vec<u32> = match po.parent(p) {
                    NO_NODE => po.root_positions().collect(),
                    q => po.child_positions(q).collect(),
                };
                let i = sibs.iter().position(|&s| s == p)?;
                let shown = |s: &&u32| !self.flame_skip(po.node[**s as usize]);
                let found = if dir == 2 {
                    sibs[i + 1..].iter().find(shown)
                } else {
                    sibs[..i].iter().rev().find(shown)
                };
                found.map(|&s| po.node[s as usize])
            }
        }
    }

    /// Moves the shared selection (the tree's cursor) to `node`.
    fn flame_select(&mut self, node: u32) {
        self.tree.reveal(node);
    }

    /// The selection, when it is inside the flame graph; else the first row's node.
    fn flame_cursor(&self) -> Option<u32> {
        match self.tree.selected() {
            Some(n) if self.flame_inside(n) => Some(n),
            _ => self.flame_top().or_else(|| {
                self.tree
                    .po
                    .root_positions()
                    .map(|p| self.tree.po.node[p as usize])
                    .find(|&n| !self.flame_skip(n))
            }),
        }
    }

    /// `steps` moves towards the leaves (> 0) or the roots (< 0).
    fn flame_walk(&mut self, steps: isize) {
        let Some(mut n) = self.flame_cursor() else {
            return;
        };
        let dir = if steps > 0 { 1 } else { -1 };
        for _ in 0..steps.unsigned_abs().min(1 << 16) {
            match self.flame_step(n, dir) {
                Some(m) => n = m,
                None => break,
            }
        }
        self.flame_select(n);
    }

    pub(crate) fn flame_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let Command::Flame(f) = cmd else {
            return Err(format!("{cmd} is not a flame command").into());
        };
        match f {
            FlameCmd::Zoom(path) => {
                let node = match &path {
                    Some(_) => self.target(&path)?,
                    None => self.flame_cursor().ok_or("the tree is empty")?,
                };
                if self.flame_skip(node) {
                    return Err("that node is hidden".into());
                }
                let p = self.path_of(node);
                if self.flame.zoom.last() != Some(&p) {
                    self.flame.zoom.push(p.clone());
                }
                self.flame_select(node);
                Ok(Some(Command::Flame(FlameCmd::Zoom(Some(p)))))
            }
            FlameCmd::Out => {
                if self.flame.zoom.pop().is_none() {
                    return Err(
                        "the flame graph is not zoomed (pop-filter drops the latest filter)".into(),
                    );
                }
                Ok(Some(Command::Flame(FlameCmd::Out)))
            }
            FlameCmd::Flip => {
                self.flame.flipped = !self.flame.flipped;
                Ok(Some(Command::Flame(FlameCmd::Flip)))
            }
            FlameCmd::Colour(by) => {
                let now = self.flame.colour;
                let to = match by.as_str() {
                    "next" => {
                        let i = Colour::ALL.iter().position(|c| *c == now).unwrap_or(0);
                        Colour::ALL[(i + 1) % Colour::ALL.len()]
                    }
                    s => *Colour::ALL
                        .iter()
                        .find(|c| c.name() == s)
                        .ok_or_else(|| format!("unknown colouring {s:?}"))?,
                };
                self.view.flame.colour = to;
                Ok(Some(Command::Flame(FlameCmd::Colour(
                    to.name().to_string(),
                ))))
            }
            FlameCmd::Left | FlameCmd::Right => {
                let dir = if f == FlameCmd::Right { 2 } else { -2 };
                if let Some(n) = self.flame_cursor() {
                    let to = self.flame_step(n, dir).unwrap_or(n);
                    self.flame_select(to);
                }
                Ok(Some(Command::Flame(f)))
            }
        }
    }
}

/// The flame graph panel: its state `ViewState::flame`; up and down go to the parent
/// and the first child (on screen: the classic flame graph has the roots at the
/// bottom, so there up goes to the child).
pub struct Flame;

impl super::Panel for Flame {
    fn usable(&self, _: &App) -> bool {
        true
    }

    fn open(&self, _: &mut App) -> Result<(), CmdError> {
        Ok(())
    }

    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        let towards_leaves = if app.flame.flipped { -delta } else { delta };
        app.flame_walk(towards_leaves);
        true
    }

    fn scroll_table(&self, _: &mut App, _: i64) -> bool {
        false
    }

    /// Zoom and orientation are view state: a replay starts them afresh.
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cct, Frame as Node};

    /// A root of 100 with children of 50, 30, 18.8 and three of 0.4, at 100 cells:
    /// boundaries are the rounded cumulative sums, and the three small ones are one
    /// shaded cell whose subtrees are not visited.
    #[test]
    fn widths_round_from_cumulative_sums_and_small_frames_merge() {
        let mut cct = Cct::default();
        let root = cct.add_node(None, Node::new("root", "function"));
        let mut value = vec![100.0];
        for (name, v) in [
            ("a", 50.0),
            ("b", 30.0),
            ("c", 18.8),
            ("d", 0.4),
            ("e", 0.4),
            ("f", 0.4),
        ] {
            cct.add_node(Some(root), Node::new(name, "function"));
            value.push(v);
        }
        // A grandchild under the small `d`: never laid out.
        cct.add_node(Some(4), Node::new("deep", "function"));
        value.push(0.4);
        let po = PreOrder::build(&cct, |v| v.sort_unstable());
        let weight = |n: u32| value[n as usize];
        let tops: Vec<u32> = po.root_positions().collect();
        let (rows, total) = layout_rows(&po, &weight, &|_| false, &|_| false, &tops, 100);
        assert_eq!(total, 100.0);
        assert_eq!(rows.len(), 2);
        let f = |x, w, node| Frame { x, w, node };
        assert_eq!(rows[0], vec![f(0, 100, root)]);
        assert_eq!(
            rows[1],
            vec![f(0, 50, 1), f(50, 30, 2), f(80, 19, 3), f(99, 1, NO_NODE)]
        );
        // Hidden `b` leaves its cells empty; pruned `a` becomes a shaded run.
        let (rows, _) = layout_rows(&po, &weight, &|n| n == 2, &|n| n == 1, &tops, 100);
        assert_eq!(
            rows[1],
            vec![f(0, 50, NO_NODE), f(50, 19, 3), f(69, 1, NO_NODE)]
        );
    }
}
